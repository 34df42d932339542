//! Every pipeline run and every execution happens in a forked child: LLVM's fatal errors
//! and crashes end the child, never the tool. The parent gets a [`Run`].
//!
//! The parent must stay single-threaded while forking (a lock held by another thread at
//! fork time would deadlock the child): no progress-bar ticker threads, no thread pools.

pub mod agent;
mod batch;
mod check;
mod child;
mod classify;
mod pool;
pub mod strict_heap;
pub mod symbols;
mod which_llvm;
mod wire;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use batch::{run_batch, run_batch_cached, run_each, BatchItem, ExecCache};
pub use check::{check_pipelines, llvm_args_rejected, Rejection};
pub use child::{in_child, recording_flags};
pub(crate) use pool::memfd;
pub use pool::{Event, JobId, Pool};
pub use which_llvm::Llvm;
pub use wire::Phase;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall clock for optimizing and verifying.
    pub opt_timeout: Duration,
    /// Wall clock for code generation and running `main`.
    pub exec_timeout: Duration,
    /// Address-space cap of the child (`RLIMIT_AS`).
    pub memory_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { opt_timeout: Duration::from_secs(60), exec_timeout: Duration::from_secs(10), memory_bytes: 4 << 30 }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExecMode {
    Never,
    Always,
    /// Stop after optimizing and let the parent decide (it skips modules whose IR hash it
    /// has executed already); see [`Event::Optimized`].
    AskParent,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobSpec {
    pub pipeline: String,
    pub verify_each: crate::llvm::VerifyEach,
    pub emit_ir: bool,
    pub exec: ExecMode,
    /// Let the pool's [`Observer`] watch this child (compiler coverage).
    pub observe: bool,
    /// Record coverage only while this pass runs (with `observe`).
    pub focus: Option<Focus>,
    /// LLVM options for this child only, after the pool's (`-slp-max-vf=2`).
    pub llvm_args: Vec<String>,
    /// Before `main` runs, fill the stack it will use and every block `malloc` hands out
    /// with this byte (glibc's M_PERTURB), so that a program reading memory it never
    /// wrote shows it: its output then depends on the byte. In-process children only; heap
    /// blocks that glibc's per-thread cache hands back escape the fill.
    pub fill_memory: Option<u8>,
    /// On an empty module instead of the program (checking pipelines and flags): what an
    /// agent, whose program is fixed when it starts, needs told; in-process children run
    /// the module they are given.
    pub empty_module: bool,
    /// Count the runs of passes that may be skipped, as `-opt-bisect-limit` counts them
    /// ([`Run::pass_runs`]): 0, run them all; N > 0, skip those after the Nth
    /// ([`Run::nth_pass_run`]). None: no counting.
    #[serde(default)]
    pub pass_runs: Option<u32>,
}

/// One pass of a pipeline, for recording coverage while it alone runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Focus {
    /// Its pipeline name, without parameters (`slp-vectorizer`).
    pub pass: String,
    /// Only its run inside this top-level element of the pipeline (0-based); None: every
    /// run of it.
    pub element: Option<usize>,
}

impl JobSpec {
    /// Optimize only: no execution, no IR text, no observer.
    pub fn optimize(pipeline: impl Into<String>) -> JobSpec {
        JobSpec {
            pipeline: pipeline.into(),
            verify_each: Default::default(),
            emit_ir: false,
            exec: ExecMode::Never,
            observe: false,
            focus: None,
            llvm_args: Vec::new(),
            fill_memory: None,
            empty_module: false,
            pass_runs: None,
        }
    }
}

/// Watches children: prepares per-child state before the fork, sets it up in the child,
/// and reads what the child recorded after it ended, however it ended (a crashing run's
/// record is often the one wanted most). Compiler coverage is one.
pub trait Observer {
    /// Parent, just before forking; returns a slot the other two calls name.
    fn before_fork(&mut self) -> usize;
    /// Child, right after the fork.
    fn in_child(&mut self, slot: usize);
    /// The file a child forked elsewhere (by the agent in an external `opt`) records
    /// into, for `slot`; observers that need no file say None.
    fn record_fd(&self, _slot: usize) -> Option<std::os::fd::RawFd> {
        None
    }
    /// Parent, after a job ended: what its child recorded for it, in order. The slot
    /// stays the child's.
    fn read(&mut self, slot: usize) -> Vec<u32>;
    /// Parent, after the child ended: the slot may serve another.
    fn release(&mut self, slot: usize);
    /// Parent, after the child ended: what it recorded, in order; the slot is released.
    fn collect(&mut self, slot: usize) -> Vec<u32> {
        let record = self.read(slot);
        self.release(slot);
        record
    }
    /// Child that runs many jobs (see [`Pool`]), before each job after its first: record
    /// it afresh into the same slot, as if the child had just been forked.
    fn next_job_in_child(&mut self, _slot: usize) {}
    /// Changes whenever what children find set up (armed sites) changes: a child forked
    /// under another value must serve no more jobs.
    fn epoch(&self) -> u64 {
        0
    }
}

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
    /// The last run a limited job let run (see [`JobSpec::pass_runs`]), when it started.
    pub nth_pass_run: Option<PassRun>,
}

/// One run of a pass inside a pipeline, as counted for [`JobSpec::pass_runs`].
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
