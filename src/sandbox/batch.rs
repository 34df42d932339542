//! Many pipelines on one module, `jobs` children at a time, executing each distinct
//! optimized module once: pipelines that produce the same IR hash share one execution,
//! within a batch and, through an [`ExecCache`], across batches of the same module.

use std::collections::HashMap;

use super::job::{ExecMode, JobSpec};
use super::pool::{Event, JobId, Pool};
use super::run::{Execution, Run};
use crate::llvm::{IrModule, VerifyEach};

pub struct BatchItem {
    pub index: usize,
    pub job: JobSpec,
}

enum ExecState {
    Running,
    Finished(Option<Execution>),
}

/// Executions by optimized-IR hash, for one module (and one driver).
#[derive(Default)]
pub struct ExecCache {
    executions: HashMap<u64, ExecState>,
}

impl ExecCache {
    pub fn len(&self) -> usize {
        self.executions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.executions.is_empty()
    }
}

/// Run every item; `on_done(index, run)` is called as runs finish (not in index order).
pub fn run_batch(
    pool: &mut Pool,
    module: &mut IrModule,
    items: impl IntoIterator<Item = BatchItem>,
    on_done: impl FnMut(usize, Run),
) -> std::io::Result<()> {
    run_batch_cached(pool, module, items, &mut ExecCache::default(), on_done)
}

/// [`run_batch`], reusing and extending `cache`, which must belong to `module`.
pub fn run_batch_cached(
    pool: &mut Pool,
    module: &mut IrModule,
    items: impl IntoIterator<Item = BatchItem>,
    cache: &mut ExecCache,
    mut on_done: impl FnMut(usize, Run),
) -> std::io::Result<()> {
    let mut queue = items.into_iter();
    let mut index_of: HashMap<JobId, usize> = HashMap::new();
    let mut hash_of: HashMap<usize, u64> = HashMap::new();
    let mut executor_of: HashMap<u64, usize> = HashMap::new();
    let executions = &mut cache.executions;
    // Runs whose module is being executed by another job: finished once it is.
    let mut waiting: HashMap<u64, Vec<(usize, Run)>> = HashMap::new();
    let mut exhausted = false;
    loop {
        while pool.has_capacity() && !exhausted {
            match queue.next() {
                Some(mut item) => {
                    if item.job.exec == ExecMode::Always {
                        item.job.exec = ExecMode::AskParent;
                    }
                    let id = pool.submit(module, &item.job)?;
                    index_of.insert(id, item.index);
                }
                None => exhausted = true,
            }
        }
        let Some(event) = pool.next_event(module) else { break };
        match event {
            Event::Optimized { id, ir_hash } => {
                let index = index_of[&id];
                hash_of.insert(index, ir_hash);
                let first = !executions.contains_key(&ir_hash);
                if first {
                    executions.insert(ir_hash, ExecState::Running);
                    executor_of.insert(ir_hash, index);
                }
                pool.decide(id, first);
            }
            Event::Done { id, mut run } => {
                let index = index_of.remove(&id).expect("known job");
                let Some(hash) = hash_of.remove(&index) else {
                    on_done(index, run);
                    continue;
                };
                if executor_of.get(&hash) == Some(&index) {
                    executor_of.remove(&hash);
                    executions.insert(hash, ExecState::Finished(run.execution.clone()));
                    for (other, mut other_run) in waiting.remove(&hash).unwrap_or_default() {
                        other_run.execution = run.execution.clone();
                        on_done(other, other_run);
                    }
                    on_done(index, run);
                } else {
                    match executions.get(&hash) {
                        Some(ExecState::Finished(execution)) => {
                            run.execution = execution.clone();
                            on_done(index, run);
                        }
                        _ => waiting.entry(hash).or_default().push((index, run)),
                    }
                }
            }
        }
    }
    // A job that died while executing leaves its hash Running: forget it, so a later
    // batch executes that module again instead of waiting for nothing.
    executions.retain(|_, state| matches!(state, ExecState::Finished(_)));
    Ok(())
}

/// Run each job on its own module, up to the pool's width at once; the runs in order.
/// Verification is exact (each unit checked as it changes): a deferred check that fails
/// reruns its job, and a rerun needs the job's module, which only `run_batch`'s one-module
/// batches can give.
pub fn run_each(pool: &mut Pool, work: &mut [(IrModule, JobSpec)]) -> std::io::Result<Vec<Run>> {
    let mut out: Vec<Option<Run>> = vec![None; work.len()];
    let mut index_of: HashMap<JobId, usize> = HashMap::new();
    let mut next = 0;
    loop {
        while pool.has_capacity() && next < work.len() {
            let (module, job) = &mut work[next];
            let mut job = job.clone();
            if job.verify_each == VerifyEach::Changed {
                job.verify_each = VerifyEach::ChangedEachUnit;
            }
            if job.exec == ExecMode::AskParent {
                job.exec = ExecMode::Always;
            }
            index_of.insert(pool.submit(module, &job)?, next);
            next += 1;
        }
        if index_of.is_empty() {
            break;
        }
        let Some((module, _)) = work.first_mut() else { break };
        match pool.next_event(module) {
            Some(Event::Done { id, run }) => {
                if let Some(i) = index_of.remove(&id) {
                    out[i] = Some(run);
                }
            }
            Some(Event::Optimized { .. }) => {}
            None => break,
        }
    }
    Ok(out.into_iter().map(|r| r.expect("every job finishes")).collect())
}
