//! Checking user input with LLVM itself before long work starts: the LLVM flags and every
//! pipeline run once on an empty module, so that a typo fails in a second, not an hour in.

use std::collections::BTreeMap;

use super::batch::{run_batch, BatchItem};
use super::job::JobSpec;
use super::pool::Pool;
use super::run::{Outcome, Run, LLVM_ARGS_REJECTED};
use crate::llvm::{IrModule, TargetSpec};

/// Why LLVM refuses the input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    #[error("{0}")]
    Target(String),
    #[error("LLVM rejects an --llvm-arg: {0}")]
    LlvmArg(String),
    /// `index` is the pipeline's position in the list checked.
    #[error("LLVM rejects the pipeline '{pipeline}': {message}")]
    Pipeline { index: usize, pipeline: String, message: String },
}

impl Rejection {
    /// As an error that says where a rejected pipeline came from (`FILE:LINE`, `--passes`):
    /// `origin` maps the pipeline's index in the list checked to that place.
    pub fn located(self, origin: impl Fn(usize) -> String) -> anyhow::Error {
        match &self {
            Rejection::Pipeline { index, .. } => {
                let at = origin(*index);
                anyhow::Error::new(self).context(at)
            }
            _ => self.into(),
        }
    }
}

/// LLVM's complaint, when a run's `--llvm-arg` flags were refused (whatever the program).
pub fn llvm_args_rejected(run: &Run) -> Option<String> {
    let message = run.message.as_deref().unwrap_or("");
    if !message.starts_with(LLVM_ARGS_REJECTED) {
        return None;
    }
    let line = run.stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or(message).trim();
    Some(line.split("  Try:").next().unwrap_or(line).trim_start_matches("ctos: ").to_string())
}

/// Check the pool's LLVM flags, the target and each pipeline; the first problem, in the
/// order given (flags first).
pub fn check_pipelines(pool: &mut Pool, target: &TargetSpec, pipelines: &[String]) -> Result<(), Rejection> {
    let mut empty = IrModule::from_bytes(b"", "validation", target).map_err(|e| Rejection::Target(e.to_string()))?;
    // Each distinct text once, remembering where it first stands.
    let mut first_index: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, p) in pipelines.iter().enumerate() {
        first_index.entry(p.as_str()).or_insert(i);
    }
    let distinct: Vec<(&str, usize)> = first_index.into_iter().collect();
    // Usually all is well: one child runs them all, one after the other, on the empty
    // module (a child per pipeline was half of a short batch's forks). Only when that one
    // does not end cleanly is each looked at on its own, to say which.
    if distinct.len() > 1 {
        let all: Vec<&str> = distinct.iter().map(|(p, _)| *p).collect();
        let job = JobSpec { empty_module: true, ..JobSpec::optimize(all.join(",")) };
        let run = pool
            .run_one(&mut empty, &job)
            .map_err(|e| Rejection::Target(format!("cannot start a sandboxed child: {e}")))?;
        if run.outcome == Outcome::Ok {
            return Ok(());
        }
    }
    // Item 0 is the empty pipeline: it checks the flags alone.
    let items = std::iter::once("").chain(distinct.iter().map(|(p, _)| *p)).enumerate().map(|(index, pipeline)| {
        BatchItem { index, job: JobSpec { empty_module: true, ..JobSpec::optimize(pipeline) } }
    });
    let mut problems: BTreeMap<usize, Rejection> = BTreeMap::new();
    run_batch(pool, &mut empty, items, |item, run| {
        let message = run.message.as_deref().unwrap_or("");
        if let Some(line) = llvm_args_rejected(&run) {
            problems.insert(0, Rejection::LlvmArg(line));
        } else if run.outcome == Outcome::Rejected && item > 0 {
            let (pipeline, index) = distinct[item - 1];
            problems.insert(
                index + 1,
                Rejection::Pipeline { index, pipeline: pipeline.to_string(), message: message.to_string() },
            );
        }
    })
    .map_err(|e| Rejection::Target(format!("cannot start a sandboxed child: {e}")))?;
    match problems.into_values().next() {
        Some(problem) => Err(problem),
        None => Ok(()),
    }
}
