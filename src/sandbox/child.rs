//! What a forked child does: limit itself, install handlers that report LLVM's fatal
//! errors and crashes to the parent, optimize, verify, hash, and maybe execute `main`.
//! Every path ends in `_exit`, so no destructor or atexit handler of the parent's state
//! runs in the child.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU8, Ordering};

use super::io::HANG_SIGNAL;
use super::job::{ExecMode, JobSpec, Limits, PoisonTracking};
use super::run::OptDone;
use super::wire::{self, Phase};
use crate::llvm::{self, IrModule, PipelineStop};

static MSG_FD: AtomicI32 = AtomicI32::new(-1);
static IN_CHILD: AtomicBool = AtomicBool::new(false);
static PHASE: AtomicU8 = AtomicU8::new(0);
/// Whether coverage is recorded in the optimizer's phase: closed outside the focus pass.
static GATE: AtomicI32 = AtomicI32::new(1);

/// File descriptors a child inherits for its job.
pub(super) struct ChildIo {
    pub msg: RawFd,
    pub cmd: RawFd,
    pub stdout: RawFd,
    pub stderr: RawFd,
}

/// A message to the parent, after what LLVM printed so far: the parent reads stderr when
/// a message says a job ended, and must find all of it there.
fn send(tag: u8, payload: &[u8]) {
    llvm::flush_llvm_errors();
    wire::send_raw(MSG_FD.load(Ordering::Relaxed), tag, payload);
}

pub(super) fn set_phase(phase: Phase) {
    PHASE.store(phase as u8, Ordering::Relaxed);
    send(wire::PHASE, &[phase as u8]);
}

/// Whether this process is a sandboxed child (which must end in `_exit`, never unwind).
pub fn in_child() -> bool {
    IN_CHILD.load(Ordering::Relaxed)
}

/// Where a child says whether coverage is recorded now, for the coverage sites' recorder:
/// the phase (recorded while it is the second value, the optimizer's: verification,
/// hashing and execution are the oracle's work) and the focus gate (recorded while
/// non-zero: inside the focus pass, if the job has one).
pub fn recording_flags() -> (*const u8, u8, *const i32) {
    (PHASE.as_ptr(), Phase::Optimizing as u8, GATE.as_ptr())
}

extern "C" fn on_element(index: i32) {
    send(wire::ELEMENT, &(index as u32).to_le_bytes());
}

extern "C" fn on_pass_runs(count: i32) {
    send(wire::PASS_RUNS, &(count as u32).to_le_bytes());
}

extern "C" fn on_pass_run(index: i32, element: i32, name: *const c_char, len: usize) {
    let name = unsafe { std::slice::from_raw_parts(name.cast::<u8>(), len) };
    send(wire::PASS_RUN, &[&(index as u32).to_le_bytes()[..], &(element as u32).to_le_bytes(), name].concat());
}

extern "C" fn on_focus_opened(name: *const c_char, len: usize) {
    send(wire::FOCUS, unsafe { std::slice::from_raw_parts(name.cast::<u8>(), len) });
}

extern "C" fn on_fatal(reason: *const c_char) {
    let text = if reason.is_null() { &b"(no message)"[..] } else { unsafe { CStr::from_ptr(reason) }.to_bytes() };
    send(wire::FATAL, text);
    unsafe { libc::_exit(77) }
}

static FLUSHING_AFTER_CRASH: AtomicBool = AtomicBool::new(false);

extern "C" fn on_crash(signal: c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
    if FLUSHING_AFTER_CRASH.load(Ordering::Relaxed) {
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
            libc::_exit(128 + signal)
        }
    }
    let mut frames = [0usize; 64];
    let n = unsafe { libc::backtrace(frames.as_mut_ptr().cast(), frames.len() as c_int) }.max(0) as usize;
    let pc = unsafe { (*(context as *const libc::ucontext_t)).uc_mcontext.gregs[libc::REG_RIP as usize] as usize };
    // The unwinder lists this handler and the signal trampoline before the faulting frame;
    // start at the faulting PC when it is there.
    let start = frames[..n].iter().position(|&f| f == pc).unwrap_or(0);
    let mut trace = [0usize; 65];
    trace[0] = pc;
    let mut len = 1;
    for &f in &frames[start..n] {
        if f != pc || len > 1 {
            trace[len] = f;
            len += 1;
        }
    }
    // Asked where it hangs while in the coverage stubs, which have no unwind tables: the
    // parent asks again (the handler stays installed for it).
    if signal == HANG_SIGNAL && len == 1 {
        return;
    }
    let fault = unsafe { (*info).si_addr() } as u64;
    let mut buf = [0u8; 12 + 65 * 8];
    let used = wire::encode_crash(&mut buf, signal, fault, &trace[..len]);
    wire::send_raw(MSG_FD.load(Ordering::Relaxed), wire::CRASH, &buf[..used]);
    // The parent asked where a hanging optimizer is, and ends the child itself.
    if signal == HANG_SIGNAL {
        unsafe { libc::_exit(128 + signal) }
    }
    // What LLVM printed before the crash; after the stack, as flushing faults again when
    // the crash was in LLVM's output stream (the handler then only ends the child).
    FLUSHING_AFTER_CRASH.store(true, Ordering::Relaxed);
    llvm::flush_llvm_errors();
    // SA_RESETHAND restored the default action, but the signal stays blocked while its
    // handler runs: unblock it, then re-raise, so the parent sees the signal itself.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(signal);
        libc::_exit(128 + signal)
    }
}

extern "C" fn on_out_of_memory() {
    send(wire::OOM, b"");
    unsafe { libc::_exit(78) }
}

/// `exit` as the JIT-compiled program sees it: report the code without running the
/// parent's atexit handlers and static destructors in this child.
extern "C" fn program_exit(code: c_int) {
    unsafe { libc::fflush(std::ptr::null_mut()) };
    send(wire::EXEC_DONE, &code.to_le_bytes());
    unsafe { libc::_exit(0) }
}

extern "C" {
    #[link_name = "_ZSt15set_new_handlerPFvvE"]
    fn set_new_handler(handler: Option<extern "C" fn()>) -> Option<extern "C" fn()>;
    static mut stdout: *mut libc::FILE;
}

unsafe fn install_crash_handlers() {
    let stack_size = 256 * 1024;
    let stack = libc::mmap(
        std::ptr::null_mut(),
        stack_size,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
        -1,
        0,
    );
    if stack != libc::MAP_FAILED {
        let ss = libc::stack_t { ss_sp: stack, ss_flags: 0, ss_size: stack_size };
        libc::sigaltstack(&ss, std::ptr::null_mut());
    }
    let mut action: libc::sigaction = std::mem::zeroed();
    action.sa_sigaction = on_crash as *const () as usize;
    action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESETHAND;
    libc::sigemptyset(&mut action.sa_mask);
    let signals = [libc::SIGSEGV, libc::SIGBUS, libc::SIGILL, libc::SIGFPE, libc::SIGABRT, libc::SIGSYS];
    for signal in signals {
        libc::sigaction(signal, &action, std::ptr::null_mut());
    }
    action.sa_flags &= !libc::SA_RESETHAND;
    libc::sigaction(HANG_SIGNAL, &action, std::ptr::null_mut());
    // backtrace() loads the unwinder on first use, allocating: not inside a handler that
    // may have interrupted malloc.
    let mut warm = [std::ptr::null_mut::<c_void>(); 1];
    libc::backtrace(warm.as_mut_ptr(), 1);
}

unsafe fn limit_and_redirect(io: &ChildIo, limits: &Limits) {
    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    let limit = libc::rlimit { rlim_cur: limits.memory_bytes, rlim_max: limits.memory_bytes };
    libc::setrlimit(libc::RLIMIT_AS, &limit);
    let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
    libc::dup2(null, 0);
    libc::dup2(io.stdout, 1);
    libc::dup2(io.stderr, 2);
    llvm::buffer_llvm_errors();
    // Keep the JIT-compiled program's output up to a crash, line by line.
    libc::setvbuf(stdout, std::ptr::null_mut(), libc::_IOLBF, 0);
}

fn wait_for_command(fd: RawFd) -> u8 {
    let mut byte = [0u8];
    if read_exact(fd, &mut byte) {
        byte[0]
    } else {
        b'q'
    }
}

fn read_exact(fd: RawFd, buf: &mut [u8]) -> bool {
    let mut done = 0;
    while done < buf.len() {
        let n = unsafe { libc::read(fd, buf[done..].as_mut_ptr().cast(), buf.len() - done) };
        if n > 0 {
            done += n as usize;
        } else if n == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return false;
        }
    }
    true
}

/// Run `work` in this freshly forked child and end it: status 0 if `work` returned; LLVM's
/// fatal errors and crashes end it otherwise. Its output is discarded.
pub(super) fn probe(work: impl FnOnce()) -> ! {
    IN_CHILD.store(true, Ordering::Relaxed);
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY);
        libc::dup2(null, 1);
        libc::dup2(null, 2);
    }
    llvm::install_fatal_error_handler(on_fatal);
    work();
    unsafe { libc::_exit(0) }
}

/// The process's address space, as its memory limit (RLIMIT_AS) counts it.
fn address_space_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().next().and_then(|p| p.parse().ok()).unwrap_or(0);
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64
}

/// A worker's next job, as [`super::pool`] sends it (`j`, length, JSON); None: end.
fn wait_for_job(fd: RawFd) -> Option<JobSpec> {
    let mut head = [0u8; 5];
    if !read_exact(fd, &mut head) || head[0] != b'j' {
        return None;
    }
    let mut json = vec![0u8; u32::from_le_bytes(head[1..].try_into().unwrap()) as usize];
    if !read_exact(fd, &mut json) {
        return None;
    }
    serde_json::from_slice(&json).ok()
}

/// The whole life of a child. Never returns. With `next_job`, the child is a worker: after
/// each job that ends without ending it, it says so and runs the parent's next job on a
/// fresh copy of the module (calling `next_job` first, once the copy is made), until the
/// parent sends none.
pub(super) fn run(
    module: &mut IrModule,
    job: &JobSpec,
    llvm_args: &[String],
    io: &ChildIo,
    limits: &Limits,
    next_job: Option<&mut dyn FnMut()>,
) -> ! {
    IN_CHILD.store(true, Ordering::Relaxed);
    MSG_FD.store(io.msg, Ordering::Relaxed);
    unsafe {
        limit_and_redirect(io, limits);
        install_crash_handlers();
        set_new_handler(Some(on_out_of_memory));
    }
    llvm::install_fatal_error_handler(on_fatal);
    let Some(next_job) = next_job else {
        llvm::reset_debug_counters(job.count_steps, false);
        let all_args: Vec<String> = llvm_args.iter().chain(&job.llvm_args).cloned().collect();
        set_options(module, &all_args);
        run_job(module, job, io, false);
        unsafe { libc::_exit(0) }
    };
    set_options(module, llvm_args);
    let start_size = address_space_bytes();
    let mut copy: Option<IrModule> = None;
    let mut job = job.clone();
    let mut first = true;
    loop {
        let reusable = run_worker_job(module, &mut copy, &job, llvm_args, first, io, next_job);
        first = false;
        // Abandoned modules and a fragmented heap grow a worker; a job in it must not meet
        // the memory limit much sooner than in a child of its own.
        let grown = address_space_bytes().saturating_sub(start_size) > limits.memory_bytes / 16;
        if !reusable || grown {
            send(wire::JOB_END, &[wire::LAST_JOB]);
            unsafe { libc::_exit(0) }
        }
        send(wire::JOB_END, b"");
        match wait_for_job(io.cmd) {
            Some(next) => job = next,
            None => unsafe { libc::_exit(0) },
        }
    }
}

/// Set LLVM options for the rest of this child's life, or end it if LLVM refuses them.
fn set_options(module: &mut IrModule, args: &[String]) {
    if !llvm::parse_llvm_args(args) {
        send(wire::ARGS_REJECTED, b"");
        unsafe { libc::_exit(77) }
    }
    if !args.is_empty() {
        module.own_subtargets_under_new_options();
    }
}

/// One job of a worker: its first on the module it inherited, unless the job sets LLVM
/// options (they need a target machine of its own), the others on a fresh copy. The job's
/// options are put back after it. `false`: the worker cannot take another job, as an
/// option could not be put back.
fn run_worker_job(
    module: &mut IrModule,
    copy: &mut Option<IrModule>,
    job: &JobSpec,
    pool_args: &[String],
    first: bool,
    io: &ChildIo,
    next_job: &mut dyn FnMut(),
) -> bool {
    drop(copy.take());
    unsafe {
        for fd in [1, 2] {
            libc::ftruncate(fd, 0);
            libc::lseek(fd, 0, libc::SEEK_SET);
        }
    }
    GATE.store(1, Ordering::Relaxed);
    let on_copy = !(first && job.llvm_args.is_empty());
    if on_copy {
        match module.fresh_copy() {
            Ok(fresh) => *copy = Some(fresh),
            Err(message) => {
                send(wire::FATAL, format!("cannot copy the module for the next job: {message}").as_bytes());
                unsafe { libc::_exit(77) }
            }
        }
    }
    let target = copy.as_mut().unwrap_or(module);
    let saved = llvm::SavedOptions::of(&job.llvm_args);
    llvm::reset_debug_counters(job.count_steps, false);
    let parsed = llvm::parse_llvm_args(&job.llvm_args);
    if parsed && !job.llvm_args.is_empty() {
        target.own_subtargets_under_new_options();
    }
    // After the copy is made and the options are parsed: the sites that hit are armed
    // again for the job.
    if on_copy {
        next_job();
    }
    match parsed {
        true => run_job(target, job, io, true),
        false => send(wire::ARGS_REJECTED, b""),
    }
    // The pool's own limits (a worker parsed them when it started) hold again after a job's.
    if !llvm::debug_counter_limits(&job.llvm_args).is_empty() {
        llvm::reset_debug_counters(false, true);
        if !llvm::parse_llvm_args(&llvm::debug_counter_limits(pool_args)) {
            return false;
        }
    }
    saved.is_some_and(|s| s.restore())
}

/// Optimize, verify, hash and maybe execute. Returns when the job ended and the process
/// need not: the pipeline text was rejected, the IR is broken, the module was optimized
/// and not executed, or (a worker) executed in a child of its own.
fn run_job(module: &mut IrModule, job: &JobSpec, io: &ChildIo, worker: bool) {
    let millis = |since: std::time::Instant| since.elapsed().as_secs_f64() * 1e3;
    // Closed before the phase opens recording: telling the parent the phase flushes LLVM's
    // error stream, code a worker's later job (sites armed again) would record.
    if job.focus.is_some() && !job.pipeline.is_empty() {
        GATE.store(0, Ordering::Relaxed);
    }
    set_phase(Phase::Optimizing);
    let t = std::time::Instant::now();
    // An empty pipeline is the reference run: the unoptimized module.
    if !job.pipeline.is_empty() {
        let watch = llvm::PassWatch {
            top_level: Some(on_element),
            focus_opened: Some(on_focus_opened),
            focus: job.focus.as_ref().map(|f| (f.pass.as_str(), f.element)),
            gate: &GATE,
            runs: job.pass_runs.map(|limit| llvm::PassRuns { limit, count: on_pass_runs, nth: on_pass_run }),
        };
        match module.run_pipeline(&job.pipeline, job.verify_each, job.heap, Some(&watch)) {
            Ok(()) => {}
            Err(PipelineStop::Rejected(message)) => return send(wire::PIPELINE_ERROR, message.as_bytes()),
            // As LLVM's fatal error would end it; a worker keeps going (the module, abandoned,
            // is never freed).
            Err(PipelineStop::Failed(message)) => {
                send(wire::FATAL, message.as_bytes());
                if !worker {
                    unsafe { libc::_exit(77) }
                }
                return;
            }
        }
    }
    let pass_millis = millis(t);
    if job.count_steps {
        send(wire::STEP_COUNTS, llvm::debug_counter_counts().as_bytes());
    }
    set_phase(Phase::Verifying);
    let t = std::time::Instant::now();
    if let Err(message) = module.verify() {
        send(wire::INVALID_IR, message.as_bytes());
        return;
    }
    let verify_millis = millis(t);
    let t = std::time::Instant::now();
    let ir_hash = if job.skip_hash { 0 } else { module.ir_hash() };
    let done = OptDone {
        ir_hash,
        instructions: module.instruction_count(),
        ir: job.emit_ir.then(|| module.ir_text()),
        pass_millis,
        verify_millis,
        hash_millis: millis(t),
    };
    send(wire::OPT_DONE, &serde_json::to_vec(&done).expect("serializable"));
    let execute = match job.exec {
        ExecMode::Never => false,
        ExecMode::Always => true,
        ExecMode::AskParent => {
            set_phase(Phase::Optimized);
            wait_for_command(io.cmd) == b'x'
        }
    };
    if !execute {
        return;
    }
    if worker {
        // The JIT takes the module and the program may take the process down: a child
        // does both, and the worker stays for its next job. The child's messages reach
        // the parent as the worker's would; its end is told as its own would be.
        let worker_pid = unsafe { libc::getpid() };
        match unsafe { libc::fork() } {
            0 => unsafe {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != worker_pid {
                    libc::_exit(0);
                }
            },
            -1 => {
                send(wire::FATAL, b"cannot fork to execute the program");
                return;
            }
            pid => {
                let mut status = 0;
                while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
                    && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
                {}
                send(wire::EXEC_STATUS, &status.to_le_bytes());
                return;
            }
        }
    }
    set_phase(Phase::Codegen);
    // Safety: program_exit has exit's C signature.
    unsafe { llvm::override_symbol("exit", program_exit as *mut c_void) };
    if job.track_poison != PoisonTracking::Off {
        if let Err(e) = module.track_poison_for_run(job.track_poison == PoisonTracking::All) {
            send(wire::EXEC_ERROR, e.to_string().as_bytes());
            unsafe { libc::_exit(0) }
        }
    }
    if job.fill_memory.is_some() {
        super::heap::fill(job.fill_memory);
    }
    // The module belongs to the JIT now: the process ends here, whatever happens.
    match module.jit_main(|| set_phase(Phase::Executing), job.fill_memory) {
        Ok(code) => program_exit(code),
        Err(message) => send(wire::EXEC_ERROR, message.as_bytes()),
    }
    unsafe { libc::_exit(0) }
}
