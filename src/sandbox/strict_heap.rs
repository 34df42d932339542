//! A child must show heap misuse at least as plainly as plain `opt` does. While passes run,
//! glibc fills every block it hands out or takes back (`M_PERTURB`, set in pipeline.h for
//! both engines), so a pass that reads freed or fresh memory meets poison and faults inside
//! itself. glibc's per-thread cache escapes that: it hands freed blocks back unfilled and
//! unchecked, so a use after free reads whatever the block held, which differs between a
//! fresh child and a worker's later job (dev bug 166356 crashed in three places, or printed
//! broken IR, by the job). The cache's size is a tunable that glibc reads once, as a process
//! starts: so a front door starts itself again, before any constructor runs, with the cache
//! off; then its `main` puts the environment back as the user had it, for the programs it
//! starts (clang, llvm-reduce), which need none of this. An external `opt` is started with
//! the cache off ([`tunables_with_cache_off`]). `CTOS_POISON=0` turns all of it off.

use std::ffi::{c_char, c_int, CStr, CString, OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

const TUNABLES: &str = "GLIBC_TUNABLES";
const CACHE_OFF: &str = "glibc.malloc.tcache_count=0";
/// Set in a restarted process: the user's `GLIBC_TUNABLES`, after `=`, or `unset`.
const WERE: &str = "CTOS_GLIBC_TUNABLES_WERE";

/// Whether `CTOS_POISON=0` turned the poisoning off (see pipeline.h).
fn poison_off(value: Option<&[u8]>) -> bool {
    value == Some(b"0")
}

/// Whether this process's environment turns poisoning off.
fn poison_off_here() -> bool {
    poison_off(std::env::var_os("CTOS_POISON").as_deref().map(OsStr::as_bytes))
}

/// `GLIBC_TUNABLES` with the thread cache off, from what it is now; None when it already
/// says how large the cache is (the user's choice stands) or poisoning is off.
pub fn tunables_with_cache_off(current: Option<&OsStr>) -> Option<OsString> {
    if poison_off_here() {
        return None;
    }
    with_cache_off(current.map(OsStr::as_bytes)).map(OsString::from_vec)
}

fn with_cache_off(current: Option<&[u8]>) -> Option<Vec<u8>> {
    match current {
        Some(t) if t.windows(25).any(|w| w == b"glibc.malloc.tcache_count") => None,
        Some(t) if !t.is_empty() => Some([t, b":", CACHE_OFF.as_bytes()].concat()),
        _ => Some(CACHE_OFF.as_bytes().to_vec()),
    }
}

/// What a restart sets, from this process's environment: the variables to give a front door
/// started many times (a reducer's test of each candidate), so that it starts once, not
/// twice (about a fifth of a crash test's cost). Empty when no restart would happen.
pub fn restarted_environment() -> Vec<(&'static str, OsString)> {
    if poison_off_here() {
        return Vec::new();
    }
    let were = std::env::var_os(TUNABLES);
    restart_settings(were.as_deref().map(OsStr::as_bytes))
        .into_iter()
        .flatten()
        .map(|(name, value)| (name, OsString::from_vec(value)))
        .collect()
}

/// The variables a restart adds, given the user's `GLIBC_TUNABLES`: the tunables with the
/// cache off, and what they were (`=value`, or `unset`). None when the user set the size.
fn restart_settings(were: Option<&[u8]>) -> Option<[(&'static str, Vec<u8>); 2]> {
    let tunables = with_cache_off(were)?;
    let were_value = match were {
        Some(w) => [b"=", w].concat(),
        None => b"unset".to_vec(),
    };
    Some([(TUNABLES, tunables), (WERE, were_value)])
}

/// The value of `name` in a C environment block.
unsafe fn lookup<'a>(envp: *const *const c_char, name: &str) -> Option<&'a [u8]> {
    let mut p = envp;
    while !p.is_null() && !(*p).is_null() {
        let entry = CStr::from_ptr(*p).to_bytes();
        if let Some(value) = entry.strip_prefix(name.as_bytes()).and_then(|r| r.strip_prefix(b"=")) {
            return Some(value);
        }
        p = p.add(1);
    }
    None
}

/// For a front door's `.preinit_array` (it runs before every constructor, LLVM's
/// included): start this program again with the thread cache off, unless it is off, the
/// user set its size, or poisoning is off. Returns when it does not restart.
///
/// # Safety
/// Only as glibc calls a `.preinit_array` function: with the process's `argv` and `envp`.
pub unsafe extern "C" fn restart_with_thread_cache_off(
    _argc: c_int,
    argv: *const *const c_char,
    envp: *const *const c_char,
) {
    if argv.is_null() || envp.is_null() || poison_off(lookup(envp, "CTOS_POISON")) || lookup(envp, WERE).is_some() {
        return;
    }
    let Some(settings) = restart_settings(lookup(envp, TUNABLES)) else { return };
    let mut entries: Vec<CString> = Vec::new();
    let mut p = envp;
    while !(*p).is_null() {
        let entry = CStr::from_ptr(*p);
        if !entry.to_bytes().starts_with(format!("{TUNABLES}=").as_bytes()) {
            entries.push(entry.to_owned());
        }
        p = p.add(1);
    }
    for (name, value) in settings {
        if let Ok(entry) = CString::new([name.as_bytes(), b"=", &value].concat()) {
            entries.push(entry);
        }
    }
    let mut block: Vec<*const c_char> = entries.iter().map(|e| e.as_ptr()).collect();
    block.push(std::ptr::null());
    // On failure (no /proc), this process goes on with the cache on.
    libc::execve(c"/proc/self/exe".as_ptr(), argv, block.as_ptr());
}

/// In a front door's `main`, first: the environment as the user gave it, for the
/// programs this one starts. The restart's settings stay in effect in this process.
pub fn restore_environment() {
    let Some(were) = std::env::var_os(WERE) else { return };
    // Main's first call, before any thread exists.
    match were.as_bytes().strip_prefix(b"=") {
        Some(value) => std::env::set_var(TUNABLES, OsStr::from_bytes(value)),
        None => std::env::remove_var(TUNABLES),
    }
    std::env::remove_var(WERE);
}

#[cfg(test)]
mod tests {
    use super::with_cache_off;

    #[test]
    fn the_cache_goes_off_after_the_users_tunables_and_a_size_they_set_stands() {
        assert_eq!(with_cache_off(None).unwrap(), b"glibc.malloc.tcache_count=0");
        assert_eq!(with_cache_off(Some(b"")).unwrap(), b"glibc.malloc.tcache_count=0");
        assert_eq!(
            with_cache_off(Some(b"glibc.malloc.perturb=7")).unwrap(),
            b"glibc.malloc.perturb=7:glibc.malloc.tcache_count=0"
        );
        assert_eq!(with_cache_off(Some(b"glibc.malloc.tcache_count=3")), None);
    }

    #[test]
    fn a_restart_records_the_users_tunables_or_that_there_were_none() {
        let [(_, tunables), (_, were)] = super::restart_settings(Some(b"glibc.malloc.perturb=7")).unwrap();
        assert_eq!(
            (&tunables[..], &were[..]),
            (&b"glibc.malloc.perturb=7:glibc.malloc.tcache_count=0"[..], &b"=glibc.malloc.perturb=7"[..])
        );
        let [_, (_, were)] = super::restart_settings(None).unwrap();
        assert_eq!(were, b"unset");
        assert!(super::restart_settings(Some(b"glibc.malloc.tcache_count=3")).is_none());
    }
}
