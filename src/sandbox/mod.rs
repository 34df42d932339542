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
mod heap;
mod io;
mod job;
mod pool;
mod run;
pub mod symbols;
mod which_llvm;
mod wire;

pub use batch::{run_batch, run_batch_cached, run_each, BatchItem, ExecCache};
pub use check::{check_pipelines, llvm_args_rejected, Rejection};
pub use child::{in_child, recording_flags};
pub use heap::HeapPolicy;
pub(crate) use io::memfd;
pub use job::{poison_tracking, set_poison_tracking, ExecMode, Focus, JobSpec, Limits, Observer, PoisonTracking};
pub use pool::{Event, JobId, Pool};
pub use run::{signal_name, Crash, ExecStatus, Execution, OptDone, Outcome, PassRun, Run, Timing};
pub use which_llvm::Llvm;
pub use wire::Phase;
