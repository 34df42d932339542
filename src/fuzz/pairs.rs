//! Testing an iteration: each program (of this shard) against every selected sequence,
//! in the sandbox, `jobs` at a time, optimized modules with equal IR executed once.

use std::collections::{HashMap, HashSet};

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};

use super::store::ProgramRow;
use super::Campaign;
use crate::cli::split_target_flags;
use crate::llvm::{CFrontend, IrModule};
use crate::oracle::{Failure, FailureKind};
use crate::sandbox::{run_batch_cached, BatchItem, ExecCache, ExecMode, ExecStatus, Execution, JobSpec, Pool, Run};

/// What a pair's execution is remembered by (full output is tiny for csmith programs).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct ExecRecord {
    pub status: ExecStatus,
    pub stdout: String,
}

impl ExecRecord {
    fn of(e: &Execution) -> ExecRecord {
        let mut stdout = e.stdout.clone();
        stdout.truncate(4096);
        ExecRecord { status: e.status.clone(), stdout }
    }

    fn execution(&self) -> Execution {
        Execution { status: self.status.clone(), stdout: self.stdout.clone(), millis: 0.0, codegen_millis: 0.0 }
    }
}

/// What a failure's report needs later: LLVM's message, crash frames, the output.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct FailureDetail {
    pub message: Option<String>,
    pub frames: Vec<String>,
    pub stdout: Option<String>,
}

pub(super) fn detail_of(run: &Run) -> FailureDetail {
    FailureDetail {
        message: run.message.clone(),
        frames: run.crash.as_ref().map(|c| c.frames.clone()).unwrap_or_default(),
        stdout: run.execution.as_ref().map(|e| e.stdout.clone()),
    }
}

/// The program and a pool set up with the campaign's LLVM flags.
pub(super) fn load(c: &Campaign, program: &ProgramRow, limits: crate::sandbox::Limits) -> Result<(IrModule, Pool)> {
    let (target, llvm_args) = split_target_flags(&c.config.llvm_args);
    let module = IrModule::load(&c.dir.join(&program.ir), &CFrontend::default(), &target)
        .with_context(|| format!("loading {}", program.ir))?;
    Ok((module, Pool::new(c.jobs, limits, llvm_args)?))
}

pub(super) fn reference_run(pool: &mut Pool, module: &mut IrModule) -> Result<Execution> {
    let run = pool.run_one(module, &JobSpec { exec: ExecMode::Always, ..JobSpec::optimize("") })?;
    run.execution.with_context(|| format!("the unoptimized program does not run: {}", run.message.unwrap_or_default()))
}

/// Test this shard's programs of `iteration`; false when time ran out first.
pub(super) fn test_iteration(c: &mut Campaign, iteration: i64) -> Result<bool> {
    let programs = c.store.programs(iteration)?;
    let sequences = c.store.sequences(iteration)?;
    let (shard, shards) = c.config.shard;
    for (k, program) in programs.iter().enumerate() {
        if k % shards != shard || !matches!(program.status.as_str(), "planned" | "testing") {
            continue;
        }
        if !test_program(c, program, &sequences)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The reference execution of `program` (from the store, or run now), or None when the
/// program has no `main`: then only the optimizer is judged. `Err` skips the program.
fn reference_of(
    c: &Campaign,
    program: &ProgramRow,
    module: &mut IrModule,
    pool: &mut Pool,
) -> Result<Option<Execution>, String> {
    if !module.has_main() {
        return Ok(None);
    }
    if let Ok(Some(json)) = c.store.reference(program.id) {
        if let Ok(record) = serde_json::from_str::<ExecRecord>(&json) {
            return Ok(Some(record.execution()));
        }
    }
    match reference_run(pool, module) {
        Ok(e) if e.status == ExecStatus::Exited(0) => Ok(Some(e)),
        Ok(e) => Err(format!("skipped: the unoptimized program ends with {:?}", e.status)),
        Err(e) => Err(format!("skipped: {e}")),
    }
}

fn test_program(c: &mut Campaign, program: &ProgramRow, sequences: &[(i64, String)]) -> Result<bool> {
    let (mut module, mut pool) = load(c, program, c.config.limits())?;
    let reference = match reference_of(c, program, &mut module, &mut pool) {
        Ok(r) => r,
        Err(reason) => {
            c.store.set_program_status(program.id, &reason, None)?;
            return Ok(true);
        }
    };
    let record = reference.as_ref().map(|e| serde_json::to_string(&ExecRecord::of(e))).transpose()?;
    c.store.set_program_status(program.id, "testing", record.as_deref())?;
    let exec = if reference.is_some() { ExecMode::Always } else { ExecMode::Never };
    let done: HashSet<i64> = c.store.done_sequences(program.id)?.into_iter().collect();
    let todo: Vec<&(i64, String)> = sequences.iter().filter(|(id, _)| !done.contains(id)).collect();
    let mut cache = ExecCache::default();
    // Small batches: the time limit is checked between them, and every finished pair is
    // committed as it arrives.
    for chunk in todo.chunks(4 * c.jobs) {
        if c.out_of_time() {
            return Ok(false);
        }
        let items = chunk.iter().enumerate().map(|(index, (_, pipeline))| BatchItem {
            index,
            job: JobSpec { verify_each: c.config.verify_each, exec, ..JobSpec::optimize(pipeline.clone()) },
        });
        let mut error = None;
        let store = &c.store;
        run_batch_cached(&mut pool, &mut module, items, &mut cache, |i, run| {
            let sequence = chunk[i].0;
            if let Err(e) = record_pair(store, program.id, sequence, &run, reference.as_ref()) {
                error.get_or_insert(e);
            }
        })?;
        if let Some(e) = error {
            return Err(e);
        }
        c.stats.tick(&c.dir, &c.store, c.started, "testing")?;
    }
    match &reference {
        Some(r) => vote(c, program.id, r)?,
        None => c.store.set_program_status(program.id, "tested", None)?,
    }
    Ok(true)
}

fn record_pair(
    store: &super::store::Store,
    program: i64,
    sequence: i64,
    run: &Run,
    reference: Option<&Execution>,
) -> Result<()> {
    let exec = run.execution.as_ref().map(|e| serde_json::to_string(&ExecRecord::of(e))).transpose()?;
    let millis = run.opt_millis + run.execution.as_ref().map_or(0.0, |e| e.millis);
    let hash = run.ir_hash.map(|h| format!("{h:016x}"));
    store.save_pair(program, sequence, run.outcome.as_str(), hash.as_deref(), exec.as_deref(), millis)?;
    // Wrong code waits for the vote over all of the program's pairs.
    if let Some(f) = Failure::of(run, reference).filter(|f| f.kind != FailureKind::WrongCode) {
        store.add_failure(
            program,
            sequence,
            f.kind.as_str(),
            &f.signature,
            &serde_json::to_string(&detail_of(run))?,
        )?;
    }
    Ok(())
}

/// Majority vote: if most executions agree with each other but not with the unoptimized
/// program, the program is suspect (undefined behaviour the screening missed) and none of
/// its differences is reported; otherwise every execution that differs is wrong code.
fn vote(c: &mut Campaign, program: i64, reference: &Execution) -> Result<()> {
    let results = c.store.pair_results(program)?;
    let executions: Vec<(i64, ExecRecord)> = results
        .into_iter()
        .filter_map(|(seq, json)| Some((seq, serde_json::from_str(json.as_deref()?).ok()?)))
        .collect();
    let mut counts: HashMap<(String, String), usize> = HashMap::new();
    for (_, e) in &executions {
        *counts.entry((format!("{:?}", e.status), e.stdout.clone())).or_default() += 1;
    }
    let reference_key = (format!("{:?}", reference.status), reference.stdout.clone());
    let plurality = counts.iter().max_by_key(|(_, n)| **n);
    if let Some((key, n)) = plurality {
        if *key != reference_key && 2 * n > executions.len() {
            c.store.set_program_status(
                program,
                "suspect: most optimized runs disagree with the unoptimized one",
                None,
            )?;
            return Ok(());
        }
    }
    for (sequence, e) in &executions {
        if let Some(f) = crate::oracle::execution_failure(&e.execution(), reference) {
            let detail = FailureDetail { stdout: Some(e.stdout.clone()), ..FailureDetail::default() };
            c.store.add_failure(program, *sequence, f.kind.as_str(), &f.signature, &serde_json::to_string(&detail)?)?;
        }
    }
    c.store.set_program_status(program, "tested", None)
}
