//! The sites' mechanism on hand-written machine code, in a forked process (the trap
//! handler and the armed code are process-wide): what a first arrival records, how the
//! code looks after it, and jumps into the middle of a patch.

use super::*;
use crate::coverage::sites::{FALLS_IN, FOLLOWS, MAY_PATCH, STARTS_AFTER, TARGET};

/// Where the test's code goes: far from anything mapped, so that its patches' mirror
/// slots (800 MiB below) are free too.
const BASE: u64 = 0x2000_0000_0000;
/// `f`: xor eax,eax; add eax,1; ret — returns 1. `f + 2` starts an instruction.
const F: u64 = BASE;
const F_CODE: [u8; 6] = [0x31, 0xC0, 0x83, 0xC0, 0x01, 0xC3];
/// `g`: mov eax,7; jmp f+2 — returns 8, entering `f` in the middle of its patch.
const G: u64 = BASE + 16;
/// `h`: mov eax,5; ret — returns 5.
const H: u64 = BASE + 32;
/// `k`: xor eax,eax; add rax,1; ret — returns 1, with a 4-byte block at `k + 2`.
const K: u64 = BASE + 48;
const K_CODE: [u8; 7] = [0x31, 0xC0, 0x48, 0x83, 0xC0, 0x01, 0xC3];
/// `m`: xor eax,eax; inc eax; ret — returns 1, a 4-byte block of two instructions.
const M: u64 = BASE + 64;
const M_CODE: [u8; 5] = [0x31, 0xC0, 0xFF, 0xC0, 0xC3];
/// `n`: mov eax,7; jmp m+2 — returns 8, entering `m`'s block at its second instruction.
const N: u64 = BASE + 80;

fn write_code() {
    let page = unsafe {
        libc::mmap(
            BASE as *mut libc::c_void,
            4096,
            libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    assert_eq!(page as u64, BASE, "cannot map the test's code");
    let jump = (F + 2).wrapping_sub(G + 10) as u32;
    let mut g = vec![0xB8, 7, 0, 0, 0, 0xE9];
    g.extend_from_slice(&jump.to_le_bytes());
    unsafe {
        std::ptr::copy_nonoverlapping(F_CODE.as_ptr(), F as *mut u8, F_CODE.len());
        std::ptr::copy_nonoverlapping(g.as_ptr(), G as *mut u8, g.len());
        std::ptr::copy_nonoverlapping([0xB8, 5, 0, 0, 0, 0xC3].as_ptr(), H as *mut u8, 6);
        std::ptr::copy_nonoverlapping(K_CODE.as_ptr(), K as *mut u8, K_CODE.len());
        std::ptr::copy_nonoverlapping(M_CODE.as_ptr(), M as *mut u8, M_CODE.len());
        let mut n = vec![0xB8, 7, 0, 0, 0, 0xE9];
        n.extend_from_slice(&((M + 2).wrapping_sub(N + 10) as u32).to_le_bytes());
        std::ptr::copy_nonoverlapping(n.as_ptr(), N as *mut u8, n.len());
    }
}

fn call(at: u64) -> i32 {
    let f: extern "C" fn() -> i32 = unsafe { std::mem::transmute(at as usize) };
    f()
}

fn bytes(at: u64, n: usize) -> Vec<u8> {
    unsafe { std::slice::from_raw_parts(at as *const u8, n) }.to_vec()
}

/// A child's record and the flags that open it, as a sandboxed child has them.
struct Child {
    record: Vec<u64>,
    phase: u8,
    gate: i32,
}

impl Child {
    fn enter(sites: usize) -> Box<Child> {
        let mut child = Box::new(Child { record: vec![0; 1 + sites], phase: 1, gate: 1 });
        let (record, phase, gate) = (child.record.as_mut_ptr() as *mut u8, &child.phase as *const u8, &child.gate);
        unsafe { ctos_traps_enter_child(record, phase, 1, gate) };
        child
    }

    /// The addresses recorded so far, in order.
    fn recorded(&self, sites: &[u64]) -> Vec<u64> {
        let n = unsafe { std::ptr::read_volatile(self.record.as_ptr()) } as usize;
        let hits = unsafe { std::slice::from_raw_parts(self.record.as_ptr().add(1) as *const u32, n) };
        hits.iter().map(|&i| sites[i as usize]).collect()
    }
}

fn arm_sites(sites: &[u64]) {
    arm_flagged(sites, &vec![MAY_PATCH; sites.len()]);
}

fn arm_flagged(sites: &[u64], flags: &[u8]) {
    let why = unsafe { ctos_traps_arm(sites.as_ptr(), flags.as_ptr(), sites.len()) };
    assert!(why.is_null(), "{}", unsafe { std::ffi::CStr::from_ptr(why) }.to_string_lossy());
}

static TRAPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static mut HANDLER: usize = 0;

extern "C" fn counting(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    TRAPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
        unsafe { std::mem::transmute(HANDLER) };
    handler(signal, info, context);
}

/// The signals counted since [`count_traps`].
fn traps() -> usize {
    TRAPS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Count the signals the armed sites take from now on.
fn count_traps() {
    unsafe {
        let mut ours: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGTRAP, std::ptr::null(), &mut ours);
        HANDLER = ours.sa_sigaction;
        let mut action = ours;
        action.sa_sigaction = counting as *const () as usize;
        libc::sigaction(libc::SIGTRAP, &action, std::ptr::null_mut());
    }
}

/// Run `scenario` in a forked child; its panic message is the test's failure.
fn in_fork(scenario: fn()) {
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let ok = std::panic::catch_unwind(scenario).is_ok();
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let mut status = 0;
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the scenario failed (status {status:#x})");
}

#[test]
fn a_patched_site_records_its_first_arrival_once_and_leaves_its_code_as_it_was() {
    in_fork(|| {
        write_code();
        let sites = [F, G, H];
        arm_sites(&sites);
        assert_eq!(patched(), 3);
        assert_eq!(bytes(F, 5), [0xE9, 0xCC, 0xCC, 0xCC, 0xCC], "a jump whose displacement bytes are int3s");
        let child = Child::enter(sites.len());
        assert_eq!((call(H), call(F), call(H), call(F)), (5, 1, 5, 1));
        assert_eq!(child.recorded(&sites), [H, F]);
        assert_eq!(bytes(F, 6), F_CODE);
    });
}

#[test]
fn a_jump_into_a_patch_runs_the_code_as_written_and_the_patched_site_still_counts_later() {
    in_fork(|| {
        write_code();
        let sites = [F, G];
        arm_sites(&sites);
        let child = Child::enter(sites.len());
        assert_eq!(call(G), 8, "g enters f at f+2, inside f's patch");
        assert_eq!(child.recorded(&sites), [G], "f's own start did not run");
        assert_eq!(call(F), 1);
        assert_eq!(child.recorded(&sites), [G, F]);
        assert_eq!((call(F), call(G)), (1, 8));
        assert_eq!(child.recorded(&sites), [G, F]);
        assert_eq!(bytes(F, 6), F_CODE);
    });
}

#[test]
fn a_site_inside_a_pun_is_recorded_whether_reached_through_it_or_by_a_jump() {
    in_fork(|| {
        write_code();
        let sites = [F, F + 2, G];
        arm_sites(&sites);
        assert_eq!(patched(), 3, "f + 2 and g patched, f a pun on f + 2's patch");
        let child = Child::enter(sites.len());
        assert_eq!(call(F), 1);
        assert_eq!(child.recorded(&sites), [F, F + 2], "f runs on into f + 2");
        assert_eq!(call(G), 8);
        assert_eq!(child.recorded(&sites), [F, F + 2, G]);
    });
    in_fork(|| {
        write_code();
        let sites = [F, F + 2, G];
        arm_sites(&sites);
        let child = Child::enter(sites.len());
        assert_eq!(call(G), 8);
        assert_eq!(child.recorded(&sites), [G, F + 2]);
        assert_eq!(call(F), 1);
        assert_eq!(child.recorded(&sites), [G, F + 2, F]);
        assert_eq!(bytes(F, 6), F_CODE);
    });
}

#[test]
fn nothing_is_recorded_with_the_gate_closed_or_outside_the_optimizer_and_the_parent_rearms() {
    in_fork(|| {
        write_code();
        let sites = [F, G, H];
        arm_sites(&sites);
        let mut child = Child::enter(sites.len());
        child.gate = 0;
        assert_eq!(call(F), 1);
        child.phase = 2;
        child.gate = 1;
        assert_eq!(call(H), 5);
        assert_eq!(child.recorded(&sites), Vec::<u64>::new());
    });
    in_fork(|| {
        // As the parent (no child record): what its own calls restore is put back by rearm.
        write_code();
        let sites = [F, G, H];
        arm_sites(&sites);
        assert_eq!((call(F), call(G), call(H)), (1, 8, 5));
        assert_eq!(bytes(H, 6), [0xB8, 5, 0, 0, 0, 0xC3]);
        unsafe { ctos_traps_rearm() };
        for site in sites {
            assert_eq!(bytes(site, 5), [0xE9, 0xCC, 0xCC, 0xCC, 0xCC], "{site:#x}");
        }
        disarm();
        assert_eq!(bytes(F, 6), F_CODE);
    });
}

#[test]
fn a_site_the_patched_one_runs_into_is_recorded_with_it_without_a_signal() {
    in_fork(|| {
        write_code();
        let sites = [F, F + 2, G];
        // `xor eax,eax` runs into `add eax,1`: f + 2 follows f.
        arm_flagged(&sites, &[MAY_PATCH, MAY_PATCH | FOLLOWS, MAY_PATCH]);
        count_traps();
        let child = Child::enter(sites.len());
        assert_eq!(call(F), 1);
        assert_eq!(child.recorded(&sites), [F, F + 2]);
        assert_eq!(traps(), 0, "no signal");
        assert_eq!(bytes(F, 6), F_CODE);
    });
    in_fork(|| {
        // Without the flag, f + 2 is patched itself and f is a pun on it: each stub
        // records its own site, still without a signal.
        write_code();
        let sites = [F, F + 2, G];
        arm_sites(&sites);
        assert_eq!(bytes(F + 2, 1), [0xE9]);
        count_traps();
        let child = Child::enter(sites.len());
        assert_eq!(call(F), 1);
        assert_eq!(child.recorded(&sites), [F, F + 2]);
        assert_eq!(traps(), 0);
    });
    in_fork(|| {
        // A jump no decoder found enters the patch in the middle (g's, unflagged): it
        // counts f + 2 alone; f counts when it runs.
        write_code();
        let sites = [F, F + 2, G];
        arm_flagged(&sites, &[MAY_PATCH, MAY_PATCH | FOLLOWS, MAY_PATCH]);
        let child = Child::enter(sites.len());
        assert_eq!((call(G), call(F)), (8, 1));
        assert_eq!(child.recorded(&sites), [G, F + 2, F]);
        assert_eq!(bytes(F, 6), F_CODE);
    });
}

/// f + 2 is a jump's target, so f's patch may not cover it: f + 2 is patched, and f, two
/// bytes before it, is a pun whose displacement is `0xCC` (free) and f + 2's patch.
const TARGET_FLAGS: [u8; 3] = [MAY_PATCH | TARGET, MAY_PATCH | FOLLOWS | TARGET, MAY_PATCH | TARGET];

#[test]
fn a_site_a_jump_reaches_is_patched_itself_and_the_short_block_before_it_is_a_pun_on_it() {
    in_fork(|| {
        write_code();
        let sites = [F, F + 2, G];
        arm_flagged(&sites, &TARGET_FLAGS);
        assert_eq!(patched(), 3);
        assert_eq!(bytes(F, 7), [0xE9, 0xCC, 0xE9, 0xCC, 0xCC, 0xCC, 0xCC]);
        count_traps();
        let child = Child::enter(sites.len());
        assert_eq!(call(F), 1, "f's pun, then f + 2's patch");
        assert_eq!(child.recorded(&sites), [F, F + 2]);
        assert_eq!(call(G), 8);
        assert_eq!(child.recorded(&sites), [F, F + 2, G]);
        assert_eq!(traps(), 0);
        assert_eq!(bytes(F, 6), F_CODE);
    });
}

#[test]
fn a_jump_to_the_site_under_a_pun_first_leaves_an_int3_at_the_pun_and_the_parent_rearms_both() {
    in_fork(|| {
        write_code();
        let sites = [F, F + 2, G];
        arm_flagged(&sites, &TARGET_FLAGS);
        count_traps();
        let child = Child::enter(sites.len());
        assert_eq!(call(G), 8);
        assert_eq!(child.recorded(&sites), [G, F + 2]);
        assert_eq!(traps(), 0, "g jumps into f + 2's own patch");
        assert_eq!(bytes(F, 2), [0xCC, 0xC0], "f + 2 restored: the pun would jump elsewhere now");
        assert_eq!(call(F), 1);
        assert_eq!(child.recorded(&sites), [G, F + 2, F]);
        assert_eq!(traps(), 1, "f's int3");
        assert_eq!(bytes(F, 6), F_CODE);
    });
    in_fork(|| {
        // As the parent: g's call takes out f + 2's patch and f's pun; rearm puts both back.
        write_code();
        let sites = [F, F + 2, G];
        arm_flagged(&sites, &TARGET_FLAGS);
        assert_eq!(call(G), 8);
        assert_eq!(bytes(F, 6), [0xCC, 0xC0, 0x83, 0xC0, 0x01, 0xC3]);
        unsafe { ctos_traps_rearm() };
        assert_eq!(bytes(F, 7), [0xE9, 0xCC, 0xE9, 0xCC, 0xCC, 0xCC, 0xCC]);
        let child = Child::enter(sites.len());
        assert_eq!(call(F), 1);
        assert_eq!(child.recorded(&sites), [F, F + 2]);
        disarm();
        assert_eq!(bytes(F, 6), F_CODE);
    });
}

#[test]
fn a_fall_through_block_inside_a_patch_is_an_int3_there_and_a_jump_target_is_not_covered() {
    in_fork(|| {
        // f + 2 as the block after a branch: f is patched over it, and f + 2 stays an int3
        // that signals only when the code goes on into it.
        write_code();
        let sites = [F, F + 2, G];
        arm_flagged(&sites, &[MAY_PATCH, MAY_PATCH | FALLS_IN, MAY_PATCH]);
        assert_eq!(patched(), 2, "f and g; f + 2 is inside f's patch");
        assert_eq!(bytes(F, 5), [0xE9, 0xCC, 0xCC, 0xCC, 0xCC]);
        count_traps();
        let child = Child::enter(sites.len());
        assert_eq!(call(F), 1);
        assert_eq!(child.recorded(&sites), [F, F + 2]);
        assert_eq!(traps(), 1, "f + 2's int3 alone");
        assert_eq!(bytes(F, 6), F_CODE);
    });
    in_fork(|| {
        // Reached by a jump too: no patch at f, for a jump would land inside it; f + 2
        // is patched itself, and f is a pun on it.
        write_code();
        let sites = [F, F + 2, G];
        arm_flagged(&sites, &[MAY_PATCH, MAY_PATCH | FALLS_IN | TARGET, MAY_PATCH]);
        assert_eq!(bytes(F, 3), [0xE9, 0xCC, 0xE9]);
    });
}

#[test]
fn a_four_byte_block_before_a_patch_is_a_pun_and_the_block_before_a_pun_an_int3() {
    in_fork(|| {
        // k + 6 (`ret`) is a jump's target: k + 2's patch may not cover it, so k + 6 is
        // patched and k + 2 a pun on it, whose jump lands in the pun mirror; k, before a
        // pun, is an int3.
        write_code();
        let sites = [K, K + 2, K + 6];
        arm_flagged(&sites, &[MAY_PATCH, MAY_PATCH | FOLLOWS | TARGET, MAY_PATCH | FOLLOWS | TARGET]);
        assert_eq!(patched(), 2);
        assert_eq!(bytes(K, 11), [0xCC, 0xC0, 0xE9, 0xCC, 0xCC, 0xCC, 0xE9, 0xCC, 0xCC, 0xCC, 0xCC]);
        count_traps();
        let child = Child::enter(sites.len());
        assert_eq!(call(K), 1);
        assert_eq!(child.recorded(&sites), [K, K + 2, K + 6]);
        assert_eq!(traps(), 1, "k's int3 alone");
        assert_eq!(bytes(K, 7), K_CODE);
    });
}

#[test]
fn a_jump_no_decoder_found_into_a_pun_traps_at_its_instruction_and_runs_the_code_as_written() {
    in_fork(|| {
        write_code();
        let sites = [M, M + 4, N];
        // m + 4 (`ret`) is a jump's target; `inc eax` starts 2 bytes after m.
        let flags = [MAY_PATCH | STARTS_AFTER << 1, MAY_PATCH | FOLLOWS | TARGET, MAY_PATCH | TARGET];
        arm_flagged(&sites, &flags);
        assert_eq!(bytes(M, 5), [0xE9, 0xCC, 0xCC, 0xCC, 0xE9], "an int3 where `inc eax` starts");
        count_traps();
        let child = Child::enter(sites.len());
        assert_eq!(call(N), 8, "n enters m's pun at `inc eax`");
        assert_eq!(child.recorded(&sites), [N, M + 4]);
        assert_eq!(traps(), 1);
        assert_eq!(call(M), 1);
        assert_eq!(child.recorded(&sites), [N, M + 4, M], "m still counts, at its int3");
        assert_eq!(traps(), 2);
        assert_eq!(bytes(M, 5), M_CODE);
    });
}
