//! What a child's end becomes: the run, its outcome, its crash and its program's execution.

use serde::{Deserialize, Serialize};

/// What a child says when LLVM's command-line parser refuses the flags; LLVM's own words
/// are on the child's stderr.
pub(super) const LLVM_ARGS_REJECTED: &str = "LLVM rejected the --llvm-arg flags";

/// How the optimizer's part of a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Ok,
    /// Killed by a signal (segfault, abort …).
    Crash,
    /// LLVM reported a fatal error (`LLVM ERROR: …`).
    Fatal,
    /// The verifier rejected the optimized IR (after the pipeline, or after a pass with
    /// verify-each).
    InvalidIr,
    Timeout,
    Oom,
    /// LLVM rejected the pipeline text. Front doors validate pipelines first, so this
    /// reaches users only as an input error.
    Rejected,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Crash => "crash",
            Outcome::Fatal => "fatal",
            Outcome::InvalidIr => "invalid-ir",
            Outcome::Timeout => "timeout",
            Outcome::Oom => "oom",
            Outcome::Rejected => "rejected",
        }
    }
}

/// What the child reports when optimization finished.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OptDone {
    pub ir_hash: u64,
    pub instructions: usize,
    pub ir: Option<String>,
    /// Time in `run_pipeline` (the passes, and the verifier after each with verify-each).
    pub pass_millis: f64,
    /// The final verification.
    pub verify_millis: f64,
    /// Printing and hashing the optimized IR.
    pub hash_millis: f64,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "status", content = "value")]
pub enum ExecStatus {
    Exited(i32),
    /// The program was killed by this signal (its own SIGFPE, SIGSEGV, abort …).
    Signal(i32),
    Timeout,
    Oom,
    /// Code generation failed (or crashed) on IR the verifier accepted.
    CodegenError(String),
}

impl ExecStatus {
    /// The kind of ending, as `--json` names it.
    pub fn as_str(&self) -> &'static str {
        match self {
            ExecStatus::Exited(_) => "exited",
            ExecStatus::Signal(_) => "signal",
            ExecStatus::Timeout => "timeout",
            ExecStatus::Oom => "oom",
            ExecStatus::CodegenError(_) => "codegen-error",
        }
    }

    /// How the program ended, to follow "the program …".
    pub fn describe(&self) -> String {
        match self {
            ExecStatus::Exited(code) => format!("exits with status {code}"),
            ExecStatus::Signal(s) => format!("is killed by {}", signal_name(*s)),
            ExecStatus::Timeout => "does not end within the execution time limit".into(),
            ExecStatus::Oom => "runs out of memory".into(),
            ExecStatus::CodegenError(m) => format!("cannot be compiled: {}", headline(m)),
        }
    }
}

/// A code generator's message as one line that names its kind: the first line, without
/// the heap addresses its DAG dumps carry (a driver's dropped calls are counted by it, and
/// "Cannot select: 0x55…" with the dump after it made a count of its own for every call).
fn headline(message: &str) -> String {
    static ADDRESS: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"0x[0-9a-fA-F]+").expect("a valid pattern"));
    let first = message.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    ADDRESS.replace_all(first, "0x…").into_owned()
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Execution {
    pub status: ExecStatus,
    pub stdout: String,
    /// Code generation plus running `main`.
    pub millis: f64,
    /// The JIT's code generation alone.
    pub codegen_millis: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Crash {
    pub signal: i32,
    pub fault_addr: u64,
    /// LLVM frames, innermost first, demangled without parameters: the crash signature.
    pub frames: Vec<String>,
    /// The failed assertion, as the C library reported it (`File.cpp:12: void f():
    /// Assertion `x' failed.`), for LLVM builds with assertions: the signature instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assertion: Option<String>,
    /// The raw stack, innermost first: the faulting PC, then return addresses (of this
    /// process, so not kept in reports).
    #[serde(skip)]
    pub stack: Vec<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    pub outcome: Outcome,
    pub message: Option<String>,
    pub crash: Option<Crash>,
    pub ir_hash: Option<u64>,
    pub instructions: Option<usize>,
    pub ir: Option<String>,
    pub execution: Option<Execution>,
    /// What LLVM printed (truncated), for reports.
    pub stderr: String,
    /// Fork to end of optimization (or of the child, when optimization did not finish).
    pub opt_millis: f64,
    /// What the observer recorded, when the job asked for it.
    pub trace: Option<Vec<u32>>,
    /// Where the child's time went (when optimization finished).
    pub timing: Option<Timing>,
    /// The top-level element of the pipeline (0-based) that was running when optimization
    /// ended without finishing: where a crash, fatal error or timeout happened.
    pub failed_in_element: Option<usize>,
    /// LLVM's class name of the focus pass (`SLPVectorizerPass`), when it ran.
    pub focus_class: Option<String>,
    /// How many runs of passes that may be skipped the pipeline made, when counted.
    pub pass_runs: Option<u32>,
    /// The last run a limited job let run (see [`super::JobSpec::pass_runs`]), when it started.
    pub nth_pass_run: Option<PassRun>,
    /// Steps each of LLVM's debug counters counted in the pipeline ([`super::JobSpec::count_steps`]).
    pub step_counts: Option<std::collections::BTreeMap<String, u64>>,
    /// The heap of the run that gave this verdict: under [`super::HeapPolicy::Both`], strict
    /// when the strict heap shows a failure (the plain heap, as `opt` runs, was not tried:
    /// it may show the failure otherwise, or not at all), plain otherwise.
    #[serde(default)]
    pub heap: crate::llvm::Heap,
}

/// One run of a pass inside a pipeline, as counted for [`super::JobSpec::pass_runs`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassRun {
    /// Its number, from 1, among the runs of passes that may be skipped.
    pub index: u32,
    /// The top-level element of the pipeline it ran in (0-based).
    pub element: usize,
    /// Its pipeline name (`loop-rotate`).
    pub name: String,
}

/// Milliseconds per phase of one child, for throughput analysis.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct Timing {
    pub passes: f64,
    pub verify: f64,
    pub hash: f64,
}

/// `SIGSEGV` for 11; `signal 64` for numbers without a name.
pub fn signal_name(signal: i32) -> String {
    nix::sys::signal::Signal::try_from(signal).map_or_else(|_| format!("signal {signal}"), |s| s.as_str().to_string())
}
