//! Process-wide LLVM state: the fatal-error hook, cl::opt flags, JIT symbol overrides.

use std::ffi::{c_char, c_void, CStr, CString};

use inkwell::llvm_sys;

/// Called with LLVM's message when it reports a fatal error. It must not return
/// (LLVM would `exit(1)` after it): the sandbox's handler records the message and `_exit`s.
pub type FatalHandler = extern "C" fn(reason: *const c_char);

pub fn install_fatal_error_handler(handler: FatalHandler) {
    unsafe { llvm_sys::error_handling::LLVMInstallFatalErrorHandler(Some(handler)) }
}

extern "C" {
    fn ctos_buffer_errs();
    fn ctos_flush_errs();
}

/// Buffer LLVM's `errs()` (unbuffered by default) from now on in this process: for a
/// sandboxed child, whose stderr only its parent reads, and only after a message says
/// the output so far counts ([`flush_llvm_errors`] before each).
pub fn buffer_llvm_errors() {
    unsafe { ctos_buffer_errs() }
}

pub fn flush_llvm_errors() {
    unsafe { ctos_flush_errs() }
}

// The C API's LLVMParseCommandLineOptions sends errors to nulls() and drops the result,
// so a mistyped flag would be ignored silently. The C++ entry point takes an error stream.
extern "C" {
    #[link_name = "_ZN4llvm4errsEv"]
    fn llvm_errs() -> *mut c_void;
}
#[cfg(not(feature = "llvm19"))]
extern "C" {
    #[link_name = "_ZN4llvm2cl23ParseCommandLineOptionsEiPKPKcNS_9StringRefEPNS_11raw_ostreamEPNS_3vfs10FileSystemES2_b"]
    fn cl_parse(
        argc: i32,
        argv: *const *const c_char,
        overview: *const c_char,
        overview_len: usize,
        errs: *mut c_void,
        vfs: *mut c_void,
        env_var: *const c_char,
        long_options_use_double_dash: bool,
    ) -> bool;
}
#[cfg(feature = "llvm19")]
extern "C" {
    #[link_name = "_ZN4llvm2cl23ParseCommandLineOptionsEiPKPKcNS_9StringRefEPNS_11raw_ostreamES2_b"]
    fn cl_parse(
        argc: i32,
        argv: *const *const c_char,
        overview: *const c_char,
        overview_len: usize,
        errs: *mut c_void,
        env_var: *const c_char,
        long_options_use_double_dash: bool,
    ) -> bool;
}

/// Set LLVM's cl::opt flags (`-slp-threshold=-50`) for this process. LLVM prints what is
/// wrong with them on stderr; `false` means it rejected them.
pub fn parse_llvm_args(args: &[String]) -> bool {
    if args.is_empty() {
        return true;
    }
    let Ok(owned) = std::iter::once("ctos".to_string())
        .chain(args.iter().cloned())
        .map(CString::new)
        .collect::<Result<Vec<_>, _>>()
    else {
        eprintln!("ctos: an LLVM flag contains a NUL character");
        return false;
    };
    let argv: Vec<*const c_char> = owned.iter().map(|a| a.as_ptr()).collect();
    let overview = b"ctos";
    let argc = argv.len() as i32;
    unsafe {
        #[cfg(not(feature = "llvm19"))]
        let ok = cl_parse(
            argc,
            argv.as_ptr(),
            overview.as_ptr().cast(),
            overview.len(),
            llvm_errs(),
            std::ptr::null_mut(),
            std::ptr::null(),
            false,
        );
        #[cfg(feature = "llvm19")]
        let ok = cl_parse(
            argc,
            argv.as_ptr(),
            overview.as_ptr().cast(),
            overview.len(),
            llvm_errs(),
            std::ptr::null(),
            false,
        );
        ok
    }
}

/// Make JIT-compiled code call `address` for the external symbol `name` (e.g. `exit`).
///
/// # Safety
/// `address` must be a function with the C signature the program expects of `name`.
pub unsafe fn override_symbol(name: &str, address: *mut c_void) {
    let name = CString::new(name).expect("no NUL in symbol names");
    unsafe { llvm_sys::support::LLVMAddSymbol(name.as_ptr(), address) }
}

extern "C" {
    // src/llvm/shim.cpp
    fn ctos_option_value(name: *const c_char) -> *mut c_char;
    fn ctos_reset_option(name: *const c_char) -> bool;
    fn ctos_counters_reset(count: bool, release: bool) -> bool;
    fn ctos_counter_counts() -> *mut c_char;
}

/// LLVM's debug counters as a fresh process has them, before a job: counts at zero and,
/// with `release`, counters an earlier job limited let every step run again; with `count`,
/// every counter counts its steps (`debug_counter_counts`). False: this LLVM's release
/// build has none.
pub fn reset_debug_counters(count: bool, release: bool) -> bool {
    unsafe { ctos_counters_reset(count, release) }
}

/// The arguments of `args` that limit debug counters (`-debug-counter=…`): a worker
/// releases a job's after it, and sets the pool's again.
pub fn debug_counter_limits(args: &[String]) -> Vec<String> {
    args.iter().filter(|a| option_name(a) == "debug-counter").cloned().collect()
}

/// Each debug counter's steps since the last reset (those counting, others at 0), as
/// "name count" lines: [`parse_counter_counts`] reads them.
pub fn debug_counter_counts() -> String {
    let text = unsafe { ctos_counter_counts() };
    let owned = unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned();
    unsafe { libc::free(text.cast()) };
    owned
}

pub fn parse_counter_counts(text: &str) -> std::collections::BTreeMap<String, u64> {
    let count = |l: &str| l.rsplit_once(' ').and_then(|(name, n)| Some((name.to_string(), n.parse().ok()?)));
    text.lines().filter_map(count).collect()
}

/// The option a command-line argument names: `slp-threshold` for `-slp-threshold=-50`.
pub fn option_name(arg: &str) -> &str {
    let bare = arg.trim_start_matches('-');
    bare.split('=').next().unwrap_or(bare)
}

/// LLVM options as they were before a job set some, to put back after it: a worker runs
/// jobs that set different options one after another.
pub struct SavedOptions(Vec<(CString, String)>);

impl SavedOptions {
    /// The options `args` set (`-name=value`, `--name`), as they print now. None when an
    /// argument names no option LLVM has by that name (a positional argument, a value
    /// given as an argument of its own), or a value cannot be read: it could not be put
    /// back.
    pub fn of(args: &[String]) -> Option<SavedOptions> {
        let options = args.iter().map(|arg| {
            let name = CString::new(option_name(arg)).ok().filter(|_| arg.starts_with('-'))?;
            let value = printed_value(&name)?;
            Some((name, value))
        });
        options.collect::<Option<Vec<_>>>().map(SavedOptions)
    }

    /// Put each option back to its default, as if never given; true if each prints as it
    /// did when saved (false: its value then was not its default, e.g. set by an option
    /// the whole process was given).
    pub fn restore(&self) -> bool {
        self.0.iter().all(|(name, _)| unsafe { ctos_reset_option(name.as_ptr()) })
            && self.0.iter().all(|(name, value)| printed_value(name).as_ref() == Some(value))
    }
}

fn printed_value(name: &CStr) -> Option<String> {
    let text = unsafe { ctos_option_value(name.as_ptr()) };
    if text.is_null() {
        return None;
    }
    let value = unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned();
    unsafe { libc::free(text.cast()) };
    Some(value)
}
