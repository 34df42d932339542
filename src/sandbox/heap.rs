//! Which heap the optimizer runs on. Plain `opt` has glibc's: a pass that reads freed or
//! never-written memory sees what happens to be there, and crashes or not by that luck.
//! The strict heap (`heap.c`, `pipeline.h`) puts poison there, so that most such reads
//! fault inside the pass that made them (dev bug 179880 crashes in every child, where
//! `opt-22` aborts or not by its stack's luck). But poison also changes what a dangling
//! read decides, and so can hide a crash plain `opt` shows (dev bug 219885: GVN reads an
//! instruction it freed; poisoned, its kind is no instruction's and GVN passes over it
//! where `opt-22` crashes every time). No fill shows every failure. So a job runs on both
//! ([`super::Pool`]): on the strict heap, optimizing only, and when that shows nothing, on
//! the plain heap, as `opt` would run it, which then decides (and executes the program).
//! A run that fails on either heap fails: the strict heap only adds failures. When both
//! would fail, the strict heap's is the one named: it stops at the bad read or the value
//! destroyed while used, where the plain heap faults later, elsewhere or not at all (dev
//! bugs 173357 and 166356: with the plain heap first, locseq's runs of 166356 ended in
//! seven other ways, and 173357's stack no longer named the code that destroyed the value).

/// The heaps a pool's jobs run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeapPolicy {
    Plain,
    Strict,
    /// The strict heap, then the plain one when the strict run's optimizer ended well.
    Both,
}

/// Names the environment may give the policy (`CTOS_HEAP`), to compare or to measure.
const NAMES: [(&str, HeapPolicy); 3] =
    [("plain", HeapPolicy::Plain), ("strict", HeapPolicy::Strict), ("both", HeapPolicy::Both)];

impl HeapPolicy {
    /// `CTOS_HEAP=plain|strict|both`; both when unset.
    pub fn from_env() -> Result<HeapPolicy, String> {
        let Some(value) = std::env::var_os("CTOS_HEAP") else { return Ok(HeapPolicy::Both) };
        NAMES.iter().find(|(name, _)| value == *name).map(|(_, policy)| *policy).ok_or_else(|| {
            format!("CTOS_HEAP={}: the heap is plain, strict or both (the default)", value.to_string_lossy())
        })
    }

    pub fn as_str(self) -> &'static str {
        NAMES.iter().find(|(_, p)| *p == self).map_or("both", |(name, _)| name)
    }
}

extern "C" {
    // heap.c
    fn ctos_heap_fill(byte: std::ffi::c_int);
}

/// Fill every block the allocator hands out with `!byte` and every block given back with
/// `byte` from now on in this process (None: stop), as glibc's `M_PERTURB` does, the blocks
/// of its per-thread cache included.
pub(super) fn fill(byte: Option<u8>) {
    // Safety: sets one integer; the children that call it are single-threaded.
    unsafe { ctos_heap_fill(byte.map_or(-1, std::ffi::c_int::from)) }
}

#[cfg(test)]
mod tests {
    use super::fill;

    /// What the allocator gives back and hands out is filled while a byte is set, and
    /// only then (freed memory is read through a raw pointer on purpose).
    #[test]
    fn blocks_are_filled_while_a_byte_is_set_and_left_alone_otherwise() {
        let status = match unsafe { libc::fork() } {
            0 => {
                let fresh = |size: usize| unsafe {
                    let p = libc::malloc(size).cast::<u8>();
                    let bytes = std::slice::from_raw_parts(p, size).to_vec();
                    (p, bytes)
                };
                fill(Some(0xa5));
                let (p, bytes) = fresh(64);
                let handed_out = bytes.iter().all(|&b| b == 0x5a);
                unsafe { libc::free(p.cast()) };
                // Past the allocator's own 16 bytes of bookkeeping in a freed block.
                let given_back = unsafe { std::slice::from_raw_parts(p.add(16), 48) }.iter().all(|&b| b == 0xa5);
                let (q, _) = fresh(64);
                let big = unsafe { libc::realloc(q.cast(), 4096).cast::<u8>() };
                let grown = unsafe { std::slice::from_raw_parts(big.add(64), 4096 - 64) }.iter().all(|&b| b == 0x5a);
                unsafe { libc::free(big.cast()) };
                fill(None);
                let (r, bytes) = fresh(64);
                unsafe { r.write_bytes(7, 64) };
                let plain = !bytes.iter().all(|&b| b == 0x5a);
                unsafe { libc::free(r.cast()) };
                let kept = unsafe { std::slice::from_raw_parts(r.add(16), 48) }.iter().all(|&b| b == 7);
                let failed = [handed_out, given_back, grown, plain, kept].iter().position(|ok| !ok);
                unsafe { libc::_exit(failed.map_or(0, |i| 10 + i as i32)) }
            }
            pid => {
                let mut status = 0;
                unsafe { libc::waitpid(pid, &mut status, 0) };
                status
            }
        };
        assert!(libc::WIFEXITED(status), "{status}");
        assert_eq!(libc::WEXITSTATUS(status), 0, "10 handed out, 11 given back, 12 grown, 13 plain, 14 kept");
    }
}
