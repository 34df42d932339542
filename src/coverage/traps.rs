//! One-shot `int3` breakpoints at every site, armed once in the parent.
//!
//! A child inherits the armed code. Its first arrival at a site traps; the handler puts
//! the original byte back (in the child's own copy-on-write page: the parent stays
//! armed), rewinds the instruction pointer and appends the site to a shared-memory record
//! that the parent reads after the child ends, crash or not. Only the optimizer's phase
//! is recorded: verification, hashing and JIT execution are the oracle's work.
//!
//! The parent runs LLVM code too (loading modules); it restores what it hits and re-arms
//! those sites before the next fork.

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

use super::sites::Sites;
use crate::sandbox::{recording, Observer};

const INT3: u8 = 0xCC;

static SITES: AtomicPtr<u64> = AtomicPtr::new(std::ptr::null_mut());
static N_SITES: AtomicUsize = AtomicUsize::new(0);
static ORIGINAL: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
/// The parent's restored sites, to re-arm before the next fork.
static RESTORED: AtomicPtr<u32> = AtomicPtr::new(std::ptr::null_mut());
static N_RESTORED: AtomicUsize = AtomicUsize::new(0);
static RESTORED_CAPACITY: AtomicUsize = AtomicUsize::new(0);
/// The child's record: `[count: u64][site: u32; count]`, in shared memory.
static RECORD: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static IN_CHILD: AtomicBool = AtomicBool::new(false);

extern "C" fn on_trap(signal: libc::c_int, _info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    unsafe {
        let uc = context as *mut libc::ucontext_t;
        let pc = (*uc).uc_mcontext.gregs[libc::REG_RIP as usize] as u64 - 1;
        let sites = std::slice::from_raw_parts(SITES.load(Ordering::Relaxed), N_SITES.load(Ordering::Relaxed));
        let Ok(i) = sites.binary_search(&pc) else {
            // Not our breakpoint (a trap compiled into the code): die as it would have.
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
            return;
        };
        *(pc as *mut u8) = *ORIGINAL.load(Ordering::Relaxed).add(i);
        (*uc).uc_mcontext.gregs[libc::REG_RIP as usize] = pc as i64;
        if IN_CHILD.load(Ordering::Relaxed) {
            let record = RECORD.load(Ordering::Relaxed);
            if !record.is_null() && recording() {
                let count = record as *mut u64;
                let n = std::ptr::read_volatile(count);
                std::ptr::write_volatile((record.add(8) as *mut u32).add(n as usize), i as u32);
                std::ptr::write_volatile(count, n + 1);
            }
        } else {
            let n = N_RESTORED.load(Ordering::Relaxed);
            *RESTORED.load(Ordering::Relaxed).add(n) = i as u32;
            N_RESTORED.store(n + 1, Ordering::Relaxed);
        }
    }
}

/// Arm every site of `sites` (disarming whatever was armed).
pub(super) fn arm(sites: &'static Sites) {
    disarm();
    if sites.is_empty() {
        return;
    }
    let page = 4096u64;
    let start = sites.addrs[0] & !(page - 1);
    let end = (sites.addrs[sites.len() - 1] + page) & !(page - 1);
    unsafe {
        let rc = libc::mprotect(
            start as *mut libc::c_void,
            (end - start) as usize,
            libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC,
        );
        assert_eq!(rc, 0, "cannot make LLVM's code writable: {}", std::io::Error::last_os_error());
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_trap as *const () as usize;
        // A trap's signal frame (a few KiB with the FPU state) goes on the child's signal
        // stack, as in the agent: on the optimizer's own stack it would make a deep
        // recursion overflow at another frame than without coverage (another crash face).
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGTRAP, &action, std::ptr::null_mut());
    }
    // The restore list only ever grows to the largest site table armed.
    if RESTORED_CAPACITY.load(Ordering::Relaxed) < sites.len() {
        let buffer: &'static mut [u32] = Box::leak(vec![0u32; sites.len()].into_boxed_slice());
        RESTORED.store(buffer.as_mut_ptr(), Ordering::Relaxed);
        RESTORED_CAPACITY.store(sites.len(), Ordering::Relaxed);
    }
    N_RESTORED.store(0, Ordering::Relaxed);
    ORIGINAL.store(sites.original.as_ptr() as *mut u8, Ordering::Relaxed);
    SITES.store(sites.addrs.as_ptr() as *mut u64, Ordering::Relaxed);
    N_SITES.store(sites.len(), Ordering::Relaxed);
    for &a in &sites.addrs {
        unsafe { *(a as *mut u8) = INT3 };
    }
}

/// Put every original byte back.
pub(super) fn disarm() {
    let n = N_SITES.swap(0, Ordering::Relaxed);
    let sites = SITES.load(Ordering::Relaxed);
    let original = ORIGINAL.load(Ordering::Relaxed);
    for i in 0..n {
        unsafe { *(*sites.add(i) as *mut u8) = *original.add(i) };
    }
}

/// Re-arm what the parent's own LLVM calls restored.
fn rearm_parent() {
    let n = N_RESTORED.swap(0, Ordering::Relaxed);
    let restored = RESTORED.load(Ordering::Relaxed);
    let sites = SITES.load(Ordering::Relaxed);
    for k in 0..n {
        unsafe { *(*sites.add(*restored.add(k) as usize) as *mut u8) = INT3 };
    }
}

/// A shared-memory record per concurrent child: a memory file, so that an agent inside
/// an external `opt` can map it into its children too.
pub struct TrapObserver {
    capacity: usize,
    records: Vec<(std::fs::File, *mut u8)>,
    free: Vec<usize>,
}

impl TrapObserver {
    pub(super) fn new(capacity: usize) -> TrapObserver {
        TrapObserver { capacity, records: Vec::new(), free: Vec::new() }
    }

    fn bytes(&self) -> usize {
        8 + 4 * self.capacity
    }
}

impl Observer for TrapObserver {
    fn before_fork(&mut self) -> usize {
        rearm_parent();
        let slot = self.free.pop().unwrap_or_else(|| {
            // Untouched pages cost nothing: the record is sized for every site once.
            let file = crate::sandbox::memfd(c"ctos-coverage").expect("cannot make a coverage record");
            file.set_len(self.bytes() as u64).expect("cannot size a coverage record");
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    self.bytes(),
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED | libc::MAP_NORESERVE,
                    file.as_raw_fd(),
                    0,
                )
            };
            assert_ne!(p, libc::MAP_FAILED, "cannot map a coverage record");
            self.records.push((file, p as *mut u8));
            self.records.len() - 1
        });
        unsafe { std::ptr::write_volatile(self.records[slot].1 as *mut u64, 0) };
        slot
    }

    fn record_fd(&self, slot: usize) -> Option<std::os::fd::RawFd> {
        Some(self.records[slot].0.as_raw_fd())
    }

    fn in_child(&mut self, slot: usize) {
        RECORD.store(self.records[slot].1, Ordering::Relaxed);
        IN_CHILD.store(true, Ordering::Relaxed);
    }

    fn collect(&mut self, slot: usize) -> Vec<u32> {
        let record = self.records[slot].1;
        let n = unsafe { std::ptr::read_volatile(record as *const u64) } as usize;
        let n = n.min(self.capacity);
        let hits = unsafe { std::slice::from_raw_parts(record.add(8) as *const u32, n) }.to_vec();
        self.free.push(slot);
        hits
    }
}

impl Drop for TrapObserver {
    fn drop(&mut self) {
        for (_, r) in &self.records {
            unsafe { libc::munmap(*r as *mut libc::c_void, self.bytes()) };
        }
    }
}
