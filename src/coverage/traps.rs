//! One-shot coverage sites, armed once in the parent: src/coverage/traps.h, shared with
//! the agent, does the arming and the first arrivals (a patched jump into a recorder, or
//! an `int3`); this side gives it the sites and each child's shared-memory record, which
//! the parent reads after the child ends, crash or not. Only the optimizer's phase is
//! recorded: verification, hashing and JIT execution are the oracle's work.

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};

use super::sites::Sites;
use crate::sandbox::{recording_flags, Observer};

extern "C" {
    // src/coverage/traps.cpp
    fn ctos_traps_arm(addrs: *const u64, flags: *const u8, n: usize) -> *const std::ffi::c_char;
    fn ctos_traps_disarm();
    fn ctos_traps_rearm();
    fn ctos_traps_enter_child(record: *mut u8, phase: *const u8, optimizing: u8, gate: *const i32);
    fn ctos_traps_patched() -> usize;
}

/// Arm every site of `sites` (disarming whatever was armed).
pub(super) fn arm(sites: &'static Sites) {
    arm_these(&sites.addrs, &sites.patch_flags());
}

/// How many times this process armed or disarmed sites: a child forked before the last
/// time has other sites armed.
static ARMINGS: AtomicU64 = AtomicU64::new(0);

/// Arm these sites alone, with their patch flags (disarming whatever was armed).
pub(super) fn arm_these(addrs: &[u64], flags: &[u8]) {
    assert_eq!(addrs.len(), flags.len());
    ARMINGS.fetch_add(1, Ordering::Relaxed);
    let why = unsafe { ctos_traps_arm(addrs.as_ptr(), flags.as_ptr(), addrs.len()) };
    if !why.is_null() {
        panic!("cannot arm coverage: {}", unsafe { std::ffi::CStr::from_ptr(why) }.to_string_lossy());
    }
}

/// Put every original byte back.
pub(super) fn disarm() {
    ARMINGS.fetch_add(1, Ordering::Relaxed);
    unsafe { ctos_traps_disarm() }
}

/// How many armed sites are patched jumps (the rest are `int3`s).
pub fn patched() -> usize {
    unsafe { ctos_traps_patched() }
}

/// A shared-memory record per concurrent child: a memory file, so that an agent inside
/// an external `opt` can map it into its children too.
pub struct TrapObserver {
    capacity: usize,
    /// When a subset is armed: per armed site, its index in the table spectra count.
    index: Option<Vec<u32>>,
    records: Vec<(std::fs::File, *mut u8)>,
    free: Vec<usize>,
}

impl TrapObserver {
    /// An observer of `capacity` sites; `index` maps an armed subset's sites to theirs.
    pub(super) fn new(capacity: usize, index: Option<Vec<u32>>) -> TrapObserver {
        TrapObserver { capacity, index, records: Vec::new(), free: Vec::new() }
    }

    fn bytes(&self) -> usize {
        8 + 4 * self.capacity
    }
}

impl Observer for TrapObserver {
    fn before_fork(&mut self) -> usize {
        unsafe { ctos_traps_rearm() };
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
        let (phase, optimizing, gate) = recording_flags();
        unsafe { ctos_traps_enter_child(self.records[slot].1, phase, optimizing, gate) };
    }

    fn read(&mut self, slot: usize) -> Vec<u32> {
        let record = self.records[slot].1;
        let n = unsafe { std::ptr::read_volatile(record as *const u64) } as usize;
        let n = n.min(self.capacity);
        let hits = unsafe { std::slice::from_raw_parts(record.add(8) as *const u32, n) };
        match &self.index {
            // An index out of range is a record the child scribbled over: dropped, not trusted.
            Some(index) => hits.iter().filter_map(|&h| index.get(h as usize).copied()).collect(),
            None => hits.to_vec(),
        }
    }

    fn release(&mut self, slot: usize) {
        self.free.push(slot);
    }

    fn next_job_in_child(&mut self, slot: usize) {
        unsafe {
            ctos_traps_rearm();
            std::ptr::write_volatile(self.records[slot].1 as *mut u64, 0);
        }
    }

    fn epoch(&self) -> u64 {
        ARMINGS.load(Ordering::Relaxed)
    }
}

impl Drop for TrapObserver {
    fn drop(&mut self) {
        for (_, r) in &self.records {
            unsafe { libc::munmap(*r as *mut libc::c_void, self.bytes()) };
        }
    }
}

#[cfg(test)]
mod tests;
