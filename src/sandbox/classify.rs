//! How a child ended, turned into a [`Run`]: what the optimizer did, and what the
//! program did when it was executed.

use super::symbols;
use super::wire::Phase;
use super::{signal_name, Crash, ExecStatus, Execution, Limits, OptDone, Outcome, Run, Timing};

/// A crash as the child's signal handler reported it: signal, fault address, raw trace.
pub(super) struct RawCrash {
    pub phase: Phase,
    pub signal: i32,
    pub fault: u64,
    pub trace: Vec<u64>,
}

/// Everything the parent learned about one child, in arrival order.
#[derive(Default)]
pub(super) struct Ending {
    pub phase: Phase,
    pub opt_done: Option<OptDone>,
    pub opt_millis: Option<f64>,
    pub pipeline_error: Option<String>,
    pub fatal: Option<(Phase, String)>,
    pub invalid_ir: Option<String>,
    pub crash: Option<RawCrash>,
    pub oom_in: Option<Phase>,
    pub exit_code: Option<i32>,
    pub exec_error: Option<String>,
    /// Set when the parent killed the child at a deadline, with the phase it was in.
    pub killed_in: Option<Phase>,
    pub wait_status: Option<i32>,
}

/// Allocation failures surface as one of these on stderr, whichever allocator failed.
fn says_out_of_memory(stderr: &str) -> bool {
    ["out of memory", "std::bad_alloc", "memory allocation of", "Allocation failed", "Cannot allocate memory"]
        .iter()
        .any(|m| stderr.contains(m))
}

fn crash_of(signal: i32, fault: u64, trace: &[u64]) -> Crash {
    Crash { signal, fault_addr: fault, frames: symbols::llvm_frames(trace) }
}

fn describe_crash(crash: &Crash) -> String {
    match crash.frames.first() {
        Some(top) => format!("{} in {}", signal_name(crash.signal), top),
        None => signal_name(crash.signal),
    }
}

/// The verifier's own lines from stderr (with verify-each it prints them, then LLVM
/// reports the fatal error that names the pass).
fn verifier_text(stderr: &str, fatal: &str) -> String {
    let lines: Vec<&str> =
        stderr.lines().filter(|l| !l.starts_with("LLVM ERROR") && !l.trim().is_empty()).take(4).collect();
    if lines.is_empty() {
        fatal.to_string()
    } else {
        format!("{} [{}]", lines.join(" | "), fatal)
    }
}

pub(super) fn classify(
    e: Ending,
    limits: &Limits,
    stderr: String,
    stdout: String,
    total_millis: f64,
    exec_millis: Option<f64>,
) -> Run {
    let status = e.wait_status.unwrap_or(0);
    let signaled = libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status));
    let mut run = Run {
        outcome: Outcome::Ok,
        message: None,
        crash: None,
        ir_hash: e.opt_done.as_ref().map(|d| d.ir_hash),
        instructions: e.opt_done.as_ref().map(|d| d.instructions),
        ir: e.opt_done.as_ref().and_then(|d| d.ir.clone()),
        execution: None,
        stderr: String::new(),
        opt_millis: e.opt_millis.unwrap_or(total_millis),
        trace: None,
        timing: e.opt_done.as_ref().map(|d| Timing {
            passes: d.pass_millis,
            verify: d.verify_millis,
            hash: d.hash_millis,
        }),
    };

    if let Some(message) = e.pipeline_error {
        run.outcome = Outcome::Rejected;
        run.message = Some(message);
    } else if e.opt_done.is_none() {
        let (outcome, message) = if e.killed_in.is_some() {
            (Outcome::Timeout, format!("optimization did not finish within {:?}", limits.opt_timeout))
        } else if e.oom_in.is_some() || (e.fatal.is_some() || e.crash.is_some()) && says_out_of_memory(&stderr) {
            (Outcome::Oom, format!("out of memory (limit {} MiB)", limits.memory_bytes >> 20))
        } else if let Some((_, fatal)) = &e.fatal {
            if fatal.contains("Broken module found") || fatal.contains("Broken function found") {
                (Outcome::InvalidIr, verifier_text(&stderr, fatal))
            } else {
                (Outcome::Fatal, fatal.clone())
            }
        } else if let Some(message) = e.invalid_ir {
            (Outcome::InvalidIr, message.trim().lines().take(4).collect::<Vec<_>>().join(" | "))
        } else if let Some(RawCrash { signal, fault, trace, .. }) = &e.crash {
            let crash = crash_of(*signal, *fault, trace);
            let message = describe_crash(&crash);
            run.crash = Some(crash);
            (Outcome::Crash, message)
        } else if let Some(signal) = signaled {
            // SIGKILL we did not send is the kernel's OOM killer.
            if signal == libc::SIGKILL {
                (Outcome::Oom, "killed by SIGKILL (out of memory?)".to_string())
            } else {
                run.crash = Some(Crash { signal, fault_addr: 0, frames: Vec::new() });
                (Outcome::Crash, signal_name(signal))
            }
        } else {
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").to_string();
            let code = libc::WEXITSTATUS(status);
            (Outcome::Fatal, if last.is_empty() { format!("the optimizer exited with status {code}") } else { last })
        };
        run.outcome = outcome;
        run.message = Some(message);
    } else if e.exec_started_or_requested() {
        let status = if let Some(code) = e.exit_code {
            ExecStatus::Exited(code)
        } else if e.killed_in.is_some_and(|p| p.is_execution()) {
            ExecStatus::Timeout
        } else if let Some(message) = e.exec_error {
            ExecStatus::CodegenError(message)
        } else if e.oom_in.is_some_and(|p| p.is_execution()) || says_out_of_memory(&stderr) && signaled.is_some() {
            ExecStatus::Oom
        } else if let Some((Phase::Codegen, message)) = &e.fatal {
            ExecStatus::CodegenError(message.clone())
        } else if let Some(RawCrash { phase: Phase::Codegen, signal, fault, trace }) = &e.crash {
            ExecStatus::CodegenError(describe_crash(&crash_of(*signal, *fault, trace)))
        } else if let Some(crash) = e.crash.as_ref().filter(|c| c.phase == Phase::Executing) {
            // The handler reports the program's own signal before the child dies of it.
            ExecStatus::Signal(crash.signal)
        } else if let Some(signal) = signaled {
            ExecStatus::Signal(signal)
        } else {
            ExecStatus::Exited(libc::WEXITSTATUS(status))
        };
        run.execution = Some(Execution { status, stdout, millis: exec_millis.unwrap_or(0.0), codegen_millis: 0.0 });
    }
    run.stderr = tail(&stderr, 8 * 1024);
    run
}

impl Ending {
    /// Whether the child went on to execute (or was told to): only then is there an
    /// execution result to report.
    fn exec_started_or_requested(&self) -> bool {
        self.phase.is_execution() || self.exit_code.is_some() || self.exec_error.is_some()
    }
}

fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("[… {} bytes cut …]\n{}", start, &text[start..])
}
