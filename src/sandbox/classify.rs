//! How a child ended, turned into a [`Run`]: what the optimizer did, and what the
//! program did when it was executed.

use super::job::Limits;
use super::run::{signal_name, Crash, ExecStatus, Execution, OptDone, Outcome, PassRun, Run, Timing};
use super::symbols::{self, Symbolizer};
use super::wire::Phase;

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
    /// The last top-level element of the pipeline that started.
    pub element: Option<usize>,
    pub focus_class: Option<String>,
    pub pass_runs: Option<u32>,
    pub nth_pass_run: Option<PassRun>,
    pub step_counts: Option<std::collections::BTreeMap<String, u64>>,
}

/// Allocation failures surface as one of these on stderr, whichever allocator failed.
fn says_out_of_memory(stderr: &str) -> bool {
    ["out of memory", "std::bad_alloc", "memory allocation of", "Allocation failed", "Cannot allocate memory"]
        .iter()
        .any(|m| stderr.contains(m))
}

fn crash_of(signal: i32, fault: u64, trace: &[u64], objects: &[&Symbolizer], stderr: &str) -> Crash {
    Crash {
        signal,
        fault_addr: fault,
        frames: symbols::llvm_frames(objects, trace),
        assertion: (signal == libc::SIGABRT).then(|| failed_assertion(stderr)).flatten(),
        stack: trace.to_vec(),
    }
}

/// glibc's `opt: File.cpp:12: void f(): Assertion `x' failed.`, without the program name.
fn failed_assertion(stderr: &str) -> Option<String> {
    let line = stderr.lines().find(|l| l.contains(": Assertion `") && l.trim_end().ends_with("' failed."))?;
    let text = line.split_once(": ").map_or(line, |(program, rest)| if program.contains(' ') { line } else { rest });
    Some(text.trim().to_string())
}

fn describe_crash(crash: &Crash) -> String {
    match (&crash.assertion, crash.frames.first()) {
        (Some(assertion), _) => assertion.clone(),
        (None, Some(top)) => format!("{} in {}", signal_name(crash.signal), top),
        (None, None) => signal_name(crash.signal),
    }
}

/// A crash inside the IR verifier, as invalid IR with the verifier's last message: the
/// verifier met IR too broken to check or print, mostly an operand freed while still used
/// (the poisoned heap makes reading it fault at once). The pass before that verification
/// broke the IR. Where the read faults varies with what ran since (one structurizecfg bug
/// on LLVM 23 made three folders, each at another frame); the verifier's message does not.
fn crashed_verifying(crash: &Crash, stderr: &str) -> Option<String> {
    let verifying = crash
        .frames
        .iter()
        .any(|f| f.ends_with("Verifier::verify") || f == "llvm::verifyFunction" || f == "llvm::verifyModule");
    if !verifying || crash.assertion.is_some() {
        return None;
    }
    let said = stderr.lines().map(str::trim).rfind(|l| l.ends_with('!') || l.ends_with('.'));
    Some(format!(
        "{} [the IR verifier crashed reading it: {}]",
        said.unwrap_or("IR the verifier cannot read"),
        signal_name(crash.signal)
    ))
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

/// `objects`: the symbol tables of the process the child was forked from, asked for only
/// when a crash needs names (the first build of a table takes tens of milliseconds, a
/// large part of a short batch).
pub(super) fn classify<'a>(
    e: Ending,
    limits: &Limits,
    objects: &dyn Fn() -> Vec<&'a Symbolizer>,
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
        failed_in_element: if e.opt_done.is_none() && e.pipeline_error.is_none() { e.element } else { None },
        focus_class: e.focus_class.clone(),
        pass_runs: e.pass_runs,
        nth_pass_run: e.nth_pass_run.clone(),
        step_counts: e.step_counts.clone(),
        heap: Default::default(),
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
            // The stack the child reported when asked at its deadline: where it loops.
            run.crash = e.crash.as_ref().map(|c| crash_of(c.signal, c.fault, &c.trace, &objects(), &stderr));
            let top = run.crash.as_ref().and_then(|c| c.frames.first()).map(|f| format!(", in {f}"));
            (
                Outcome::Timeout,
                format!("optimization did not finish within {:?}{}", limits.opt_timeout, top.unwrap_or_default()),
            )
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
            let crash = crash_of(*signal, *fault, trace, &objects(), &stderr);
            let verifying = crashed_verifying(&crash, &stderr);
            let message = describe_crash(&crash);
            run.crash = Some(crash);
            match verifying {
                Some(said) => (Outcome::InvalidIr, said),
                None => (Outcome::Crash, message),
            }
        } else if let Some(signal) = signaled {
            // SIGKILL we did not send is the kernel's OOM killer.
            if signal == libc::SIGKILL {
                (Outcome::Oom, "killed by SIGKILL (out of memory?)".to_string())
            } else {
                run.crash =
                    Some(Crash { signal, fault_addr: 0, frames: Vec::new(), assertion: None, stack: Vec::new() });
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
            ExecStatus::CodegenError(describe_crash(&crash_of(*signal, *fault, trace, &objects(), &stderr)))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits { memory_bytes: 256 << 20, ..Limits::default() }
    }

    fn done() -> Option<OptDone> {
        Some(OptDone { ir_hash: 7, instructions: 3, ir: None, pass_millis: 1.0, verify_millis: 0.1, hash_millis: 0.1 })
    }

    fn exited(code: i32) -> Option<i32> {
        Some(code << 8)
    }

    fn killed(signal: i32) -> Option<i32> {
        Some(signal)
    }

    fn crash(phase: Phase, signal: i32) -> Option<RawCrash> {
        Some(RawCrash { phase, signal, fault: 0, trace: Vec::new() })
    }

    fn classify_with(e: Ending, stderr: &str) -> Run {
        classify(e, &limits(), &Vec::new, stderr.to_string(), "out\n".to_string(), 5.0, Some(2.0))
    }

    fn outcome(e: Ending, stderr: &str) -> (Outcome, String) {
        let r = classify_with(e, stderr);
        (r.outcome, r.message.unwrap_or_default())
    }

    #[test]
    fn a_code_generators_message_is_described_by_its_first_line_without_addresses() {
        let dump = "LLVM ERROR: Cannot select: 0x55d0c1a2b3c0: i64 = llvm.foo 0x55d0c1a2b4d0\n  0x55d0c1a2b4d0: i64 = Constant<1>\nIn function: f";
        let described = ExecStatus::CodegenError(dump.into()).describe();
        assert_eq!(described, "cannot be compiled: LLVM ERROR: Cannot select: 0x…: i64 = llvm.foo 0x…");
        let other_call = ExecStatus::CodegenError(dump.replace("55d0c1a2b", "7f0012345")).describe();
        assert_eq!(described, other_call, "two calls failing alike count as one reason");
    }

    #[test]
    fn a_failed_assertion_is_a_crash_named_by_its_text() {
        let stderr = "opt: /src/llvm/lib/Transforms/Scalar/LICM.cpp:1234: bool llvm::f(): Assertion `L && \"no loop\"' failed.\n";
        let e = Ending {
            crash: crash(Phase::Optimizing, libc::SIGABRT),
            wait_status: killed(libc::SIGABRT),
            ..Default::default()
        };
        let run = classify_with(e, stderr);
        assert_eq!(run.outcome, Outcome::Crash);
        let text =
            "/src/llvm/lib/Transforms/Scalar/LICM.cpp:1234: bool llvm::f(): Assertion `L && \"no loop\"' failed.";
        assert_eq!(run.message.as_deref(), Some(text));
        assert_eq!(run.crash.unwrap().assertion.as_deref(), Some(text));
        // Another signal with the same words on stderr is not an assertion.
        let e = Ending {
            crash: crash(Phase::Optimizing, libc::SIGSEGV),
            wait_status: killed(libc::SIGSEGV),
            ..Default::default()
        };
        assert_eq!(classify_with(e, stderr).crash.unwrap().assertion, None);
    }

    #[test]
    fn how_the_optimizer_ended() {
        let e = Ending {
            pipeline_error: Some("unknown pass name 'x'".into()),
            wait_status: exited(0),
            ..Default::default()
        };
        assert_eq!(outcome(e, ""), (Outcome::Rejected, "unknown pass name 'x'".into()));

        let e = Ending {
            phase: Phase::Optimizing,
            killed_in: Some(Phase::Optimizing),
            wait_status: killed(9),
            ..Default::default()
        };
        assert_eq!(outcome(e, "").0, Outcome::Timeout);

        let fatal = Some((Phase::Optimizing, "LICM requires MemorySSA".to_string()));
        let e = Ending { fatal, wait_status: exited(77), ..Default::default() };
        assert_eq!(outcome(e, ""), (Outcome::Fatal, "LICM requires MemorySSA".into()));

        // With verify-each the verifier's lines come first on stderr, then LLVM's fatal error.
        let fatal = Some((Phase::Optimizing, "Broken module found, compilation aborted!".to_string()));
        let e = Ending { fatal, wait_status: exited(77), ..Default::default() };
        let (o, m) = outcome(
            e,
            "Instruction does not dominate all uses!\n  %x = add i32 %y, 1\nLLVM ERROR: Broken module found\n",
        );
        assert_eq!(o, Outcome::InvalidIr);
        assert!(m.starts_with("Instruction does not dominate all uses! |"), "{m}");

        let e = Ending {
            phase: Phase::Verifying,
            invalid_ir: Some("PHI node entries\nbad\nmore\nlines\nfive".into()),
            wait_status: exited(0),
            ..Default::default()
        };
        assert_eq!(outcome(e, ""), (Outcome::InvalidIr, "PHI node entries | bad | more | lines".into()));

        let e = Ending {
            crash: crash(Phase::Optimizing, libc::SIGSEGV),
            wait_status: killed(libc::SIGSEGV),
            ..Default::default()
        };
        let r = classify_with(e, "");
        assert_eq!((r.outcome, r.crash.map(|c| c.signal)), (Outcome::Crash, Some(libc::SIGSEGV)));
    }

    #[test]
    fn running_out_of_memory_is_oom_however_it_shows() {
        let e = Ending { oom_in: Some(Phase::Optimizing), wait_status: exited(78), ..Default::default() };
        assert_eq!(outcome(e, "").0, Outcome::Oom);
        // An allocation failure LLVM reports as a fatal error, or that crashes.
        let fatal = Some((Phase::Optimizing, "out of memory".to_string()));
        let e = Ending { fatal, wait_status: exited(77), ..Default::default() };
        assert_eq!(outcome(e, "LLVM ERROR: out of memory\n").0, Outcome::Oom);
        let e = Ending { crash: crash(Phase::Optimizing, libc::SIGABRT), wait_status: killed(6), ..Default::default() };
        assert_eq!(outcome(e, "terminate called after throwing an instance of 'std::bad_alloc'").0, Outcome::Oom);
        // A SIGKILL the parent did not send is the kernel's OOM killer.
        let e = Ending { wait_status: killed(libc::SIGKILL), ..Default::default() };
        assert_eq!(outcome(e, "").0, Outcome::Oom);
    }

    #[test]
    fn a_child_that_exits_on_its_own_before_finishing_is_fatal_with_its_last_words() {
        let e = Ending { wait_status: exited(3), ..Default::default() };
        assert_eq!(outcome(e, "first\nsomething went wrong\n\n"), (Outcome::Fatal, "something went wrong".into()));
        let e = Ending { wait_status: exited(3), ..Default::default() };
        assert_eq!(outcome(e, "").1, "the optimizer exited with status 3");
    }

    fn execution(e: Ending) -> ExecStatus {
        let r = classify_with(Ending { opt_done: done(), ..e }, "");
        assert_eq!(r.outcome, Outcome::Ok);
        assert_eq!(r.ir_hash, Some(7));
        r.execution.expect("an execution").status
    }

    #[test]
    fn how_the_program_ended() {
        let e = Ending { phase: Phase::Executing, exit_code: Some(3), wait_status: exited(0), ..Default::default() };
        assert_eq!(execution(e), ExecStatus::Exited(3));
        // The program's own SIGFPE: reported by the handler before the child dies of it,
        // whether or not the wait status shows the signal.
        for status in [killed(libc::SIGFPE), exited(128 + libc::SIGFPE)] {
            let e = Ending {
                phase: Phase::Executing,
                crash: crash(Phase::Executing, libc::SIGFPE),
                wait_status: status,
                ..Default::default()
            };
            assert_eq!(execution(e), ExecStatus::Signal(libc::SIGFPE));
        }
        let e = Ending { phase: Phase::Executing, wait_status: killed(libc::SIGSEGV), ..Default::default() };
        assert_eq!(execution(e), ExecStatus::Signal(libc::SIGSEGV));
        let e = Ending {
            phase: Phase::Executing,
            killed_in: Some(Phase::Executing),
            wait_status: killed(9),
            ..Default::default()
        };
        assert_eq!(execution(e), ExecStatus::Timeout);
        let e = Ending {
            phase: Phase::Codegen,
            crash: crash(Phase::Codegen, libc::SIGSEGV),
            wait_status: killed(11),
            ..Default::default()
        };
        assert!(matches!(execution(e), ExecStatus::CodegenError(m) if m.starts_with("SIGSEGV")));
        let fatal = Some((Phase::Codegen, "Cannot select: intrinsic".to_string()));
        let e = Ending { phase: Phase::Codegen, fatal, wait_status: exited(77), ..Default::default() };
        assert_eq!(execution(e), ExecStatus::CodegenError("Cannot select: intrinsic".into()));
        let e = Ending {
            phase: Phase::Executing,
            oom_in: Some(Phase::Executing),
            wait_status: exited(78),
            ..Default::default()
        };
        assert_eq!(execution(e), ExecStatus::Oom);
    }

    #[test]
    fn a_module_that_was_not_executed_has_no_execution() {
        let e = Ending { phase: Phase::Optimized, opt_done: done(), wait_status: exited(0), ..Default::default() };
        let r = classify_with(e, "");
        assert_eq!(r.outcome, Outcome::Ok);
        assert!(r.execution.is_none());
    }

    #[test]
    fn long_stderr_keeps_its_end_and_never_splits_a_character() {
        let text = format!("{}é{}", "a".repeat(10), "é".repeat(8000));
        let cut = tail(&text, 8 * 1024);
        assert!(cut.starts_with("[… ") && cut.ends_with('é'));
        assert!(cut.len() < text.len());
        assert_eq!(tail("short", 100), "short");
    }

    /// A crash inside the verifier is the broken IR it was reading: the failure is the
    /// verifier's message, the same wherever the read faulted.
    #[test]
    fn a_crash_inside_the_ir_verifier_is_invalid_ir_named_by_the_verifiers_message() {
        let crash_at = |top: &str, below: &[&str]| Crash {
            signal: libc::SIGSEGV,
            fault_addr: 0xa5a5_a5a5_a5a5_a5a5,
            frames: std::iter::once(top).chain(below.iter().copied()).map(String::from).collect(),
            assertion: None,
            stack: Vec::new(),
        };
        let verifier = ["llvm::Value::print", "(anonymous namespace)::Verifier::verify", "llvm::verifyFunction"];
        let stderr = "CatchPadInst needs to be directly nested in a CatchSwitchInst.\n  %c = catchpad within ";
        let one = crashed_verifying(&crash_at("getModuleFromVal", &verifier), stderr);
        let other =
            crashed_verifying(&crash_at("(anonymous namespace)::AssemblyWriter::AssemblyWriter", &verifier), stderr);
        assert_eq!(one, other);
        assert_eq!(
            one.as_deref(),
            Some("CatchPadInst needs to be directly nested in a CatchSwitchInst. [the IR verifier crashed reading it: SIGSEGV]")
        );
        assert!(crashed_verifying(&crash_at("llvm::verifyModule", &[]), "")
            .unwrap()
            .starts_with("IR the verifier cannot read"));
        // A crash in a pass, or in an analysis's own verification, stays a crash.
        assert_eq!(
            crashed_verifying(&crash_at("llvm::InstCombinerImpl::run", &["llvm::InstCombinePass::run"]), stderr),
            None
        );
        assert_eq!(crashed_verifying(&crash_at("llvm::ScalarEvolution::verify", &[]), stderr), None);
    }
}
