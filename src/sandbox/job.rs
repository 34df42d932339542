//! What the parent asks of a child: the job, its limits, and an observer that watches it.

use std::time::Duration;

use serde::{Deserialize, Serialize};

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
    /// Before `main` runs, fill the stack it will use with this byte, and every block
    /// `malloc` hands out with its complement (as glibc's M_PERTURB), so that a program
    /// reading memory it never wrote shows it: its output then depends on the byte.
    /// In-process children only.
    pub fill_memory: Option<u8>,
    /// On an empty module instead of the program (checking pipelines and flags): what an
    /// agent, whose program is fixed when it starts, needs told; in-process children run
    /// the module they are given.
    pub empty_module: bool,
    /// Count the runs of passes that may be skipped, as `-opt-bisect-limit` counts them
    /// ([`super::Run::pass_runs`]): 0, run them all; N > 0, skip those after the Nth
    /// ([`super::Run::nth_pass_run`]). None: no counting.
    #[serde(default)]
    pub pass_runs: Option<u32>,
    /// The heap the passes run on: the pool sets it by its [`super::HeapPolicy`].
    #[serde(default)]
    pub heap: crate::llvm::Heap,
    /// Only how the optimizer ends matters: no IR printed and hashed (the strict heap's
    /// run before the plain heap's, which hashes the IR it keeps).
    #[serde(default)]
    pub skip_hash: bool,
    /// Which programs' runs track poison (src/llvm/poison_checks.cpp): a call that observes
    /// poison, or behaves undefinedly, stops and says so.
    #[serde(default)]
    pub track_poison: PoisonTracking,
    /// Report how many steps each of LLVM's debug counters counted in the pipeline
    /// ([`super::Run::step_counts`]); limit them with `llvm_args` (`-debug-counter=…`).
    /// In-process children of an LLVM whose release build has counters (22; not 19).
    #[serde(default)]
    pub count_steps: bool,
}

/// Which programs' runs track poison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum PoisonTracking {
    Off,
    /// Programs a driver ctos generated runs: their functions are a test's, small, and the
    /// tracking costs little.
    #[default]
    Drivers,
    /// Programs with their own `main` too (C programs, bug reports' drivers): tracking
    /// their whole code costs their run 2 to 4 times (a csmith program's JIT and run).
    All,
}

/// Names the environment may give it (`CTOS_POISON`), to compare or to measure.
const TRACKING: [(&str, PoisonTracking); 3] =
    [("off", PoisonTracking::Off), ("drivers", PoisonTracking::Drivers), ("all", PoisonTracking::All)];

/// What the front door chose when the environment says nothing ([`set_poison_tracking`]).
static CHOSEN: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(1);

/// The tracking of jobs made from now on in this process, unless `CTOS_POISON` says
/// otherwise: `ctos run` and `locseq`, which run one program, track all; a campaign tracks
/// the programs of generated drivers (csmith's would halve its pairs per second).
pub fn set_poison_tracking(tracking: PoisonTracking) {
    let index = TRACKING.iter().position(|(_, t)| *t == tracking).unwrap_or(1);
    CHOSEN.store(index as u8, std::sync::atomic::Ordering::Relaxed);
}

/// `CTOS_POISON=off|drivers|all`, else what the front door chose.
pub fn poison_tracking() -> Result<PoisonTracking, String> {
    let chosen = TRACKING[CHOSEN.load(std::sync::atomic::Ordering::Relaxed) as usize].1;
    let Some(value) = std::env::var_os("CTOS_POISON") else { return Ok(chosen) };
    TRACKING
        .iter()
        .find(|(name, _)| value == *name)
        .map(|(_, t)| *t)
        .ok_or_else(|| format!("CTOS_POISON={}: poison tracking is off, drivers or all", value.to_string_lossy()))
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
            heap: Default::default(),
            skip_hash: false,
            track_poison: poison_tracking().unwrap_or_default(),
            count_steps: false,
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
