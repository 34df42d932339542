//! Testing an iteration: each program (of this shard) against every selected sequence,
//! in the sandbox, `jobs` at a time, optimized modules with equal IR executed once.

use std::cell::Cell;
use std::collections::HashSet;
use std::time::{Duration, Instant};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::fuzz::bug::failure::{detail_of, FailureDetail};
use crate::fuzz::campaign::Campaign;
use crate::fuzz::folder::store;
use crate::fuzz::folder::store::ProgramRow;
use crate::fuzz::programs::hermes;
use crate::fuzz::programs::origin;
use crate::fuzz::programs::seeds;
use crate::fuzz::programs::stored::{driver_path, load, with_generated_driver};
use crate::oracle::{
    distinct_modules, execution_failure, observe, vote, Ballot, FailureKind, Observation, Vote, MAJORITY_MODULES,
};
use crate::program::{screen, Screen, Screening, Subject};
use crate::sandbox::{run_batch_cached, BatchItem, ExecCache, ExecMode, ExecStatus, Execution, JobSpec, Run};

/// How the status of a program with wrong code starts; what judged it follows.
pub(in crate::fuzz) const TESTED_WITH_WRONG_CODE: &str = "tested: ";

/// How often the status line follows the pairs.
const TICK: Duration = Duration::from_millis(500);

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
fn reference_of(c: &Campaign, program: &ProgramRow, subject: &mut Subject) -> Result<Option<Execution>, String> {
    let generated_driver = driver_path(c, program).is_file();
    if !subject.module.can_execute() || !(generated_driver || origin::executes(&program.origin)) {
        return Ok(None);
    }
    if let Ok(Some(json)) = c.store.reference(program.id) {
        if let Ok(record) = serde_json::from_str::<ExecRecord>(&json) {
            return Ok(Some(record.execution()));
        }
    }
    match subject.reference() {
        Ok(e) if hermes::expected_output(&program.origin).is_some_and(|x| x != e.stdout) => {
            Err(hermes::MISMATCH.to_string())
        }
        Ok(e) if e.status == ExecStatus::Exited(0) => Ok(Some(e)),
        Ok(e) => Err(format!("skipped: the unoptimized program {}", e.status.describe())),
        Err(e) => Err(format!("skipped: {e}")),
    }
}

fn test_program(c: &mut Campaign, program: &ProgramRow, shared: &[(i64, String)]) -> Result<bool> {
    let mut subject = match load(c, program, c.config.limits()) {
        Ok(s) => s,
        // A seed (or its mutant) may name a target or flag the LLVM under test lacks.
        Err(e) if seeds::from_seed(&program.origin) => {
            c.store.set_program_status(program.id, &format!("skipped: {e:#}"), None)?;
            return Ok(true);
        }
        Err(e) => return Err(e),
    };
    let own = c.store.own_sequences(program.id)?;
    if !own.is_empty() {
        // LLVM decides what a seed's options and pipelines mean: one it refuses is left out,
        // not taken for a bug of every pair.
        let pipelines: Vec<String> = own.iter().map(|(_, p)| p.clone()).collect();
        if let Err(rejection) = subject.check(&pipelines) {
            c.store.set_program_status(program.id, &format!("skipped: {rejection}"), None)?;
            return Ok(true);
        }
    }
    let mut subject = with_generated_driver(c, program, subject)?;
    let sequences: Vec<(i64, String)> = own.into_iter().chain(shared.iter().cloned()).collect();
    let sequences = &sequences[..];
    let reference = match reference_of(c, program, &mut subject) {
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
    // Items are drawn as workers free up, so no worker waits for a slow pair of another;
    // the time limit stops the drawing, and every finished pair is committed as it arrives.
    let deadline = c.deadline;
    let out_of_time = Cell::new(false);
    let verify_each = c.config.verify_each;
    let job = |pipeline: &str| JobSpec { verify_each, exec, ..JobSpec::optimize(pipeline) };
    let items = todo.iter().enumerate().map_while(|(index, (_, pipeline))| {
        out_of_time.set(deadline.is_some_and(|d| Instant::now() >= d));
        (!out_of_time.get()).then(|| BatchItem { index, job: job(pipeline) })
    });
    let mut error = None;
    let Campaign { store, stats, dir, started, .. } = &mut *c;
    let mut ticked = Instant::now();
    run_batch_cached(&mut subject.pool, &mut subject.module, items, &mut cache, |i, run| {
        let result = record_pair(store, program.id, todo[i].0, &run, reference.as_ref()).and_then(|()| {
            if ticked.elapsed() < TICK {
                return Ok(());
            }
            ticked = Instant::now();
            stats.tick(dir, store, *started, "testing")
        });
        if let Err(e) = result {
            error.get_or_insert(e);
        }
    })?;
    if let Some(e) = error {
        return Err(e);
    }
    if out_of_time.get() {
        return Ok(false);
    }
    match &reference {
        Some(r) => vote_on(c, program.id, r)?,
        None => c.store.set_program_status(program.id, "tested", None)?,
    }
    Ok(true)
}

fn record_pair(
    store: &store::Store,
    program: i64,
    sequence: i64,
    run: &Run,
    reference: Option<&Execution>,
) -> Result<()> {
    let exec = run.execution.as_ref().map(|e| serde_json::to_string(&ExecRecord::of(e))).transpose()?;
    let millis = run.opt_millis + run.execution.as_ref().map_or(0.0, |e| e.millis);
    let hash = run.ir_hash.map(|h| format!("{h:016x}"));
    let observed = observe(run, reference);
    let outcome = match observed {
        Observation::Misuse(_) => store::MISUSE,
        _ => run.outcome.as_str(),
    };
    store.save_pair(program, sequence, outcome, hash.as_deref(), exec.as_deref(), millis)?;
    match observed {
        // Wrong code waits for the vote over all of the program's pairs.
        Observation::Fails(f) if f.kind != FailureKind::WrongCode => store.add_failure(
            program,
            sequence,
            f.kind.as_str(),
            &f.signature,
            &serde_json::to_string(&detail_of(run))?,
        ),
        // Pipelines are checked before a campaign starts, so LLVM refusing one here is a
        // bug of ours: the pair is kept with outcome `rejected`, counted in stats.json
        // (`rejected_pairs`), and is neither a failure nor a vote. One that broke a pass's
        // precondition (a seed's own, say) is kept as `misuse` (`misuse_pairs`), likewise.
        _ => Ok(()),
    }
}

/// Whether a program's wrong-code verdicts count: `Err` with why not (the first undefined
/// behaviour UBSan or ASan reports in its unoptimized C build; for an IR mutant that keeps
/// its seed's behaviour, the seed's), `Ok` with what was checked. A generated program that
/// cannot be screened does not count either; the user's own (or IR, which has no C to
/// screen) is taken as given.
fn screened(c: &mut Campaign, program: i64) -> Result<Result<String, String>> {
    let row = c.store.program(program)?;
    let origin = serde_json::from_str::<serde_json::Value>(&row.origin).unwrap_or_default();
    let seed_source = origin.get("seed_source").and_then(|s| s.as_str()).map(str::to_string);
    let Some(source) = row.source.or(seed_source) else {
        return Ok(Ok("no C source to screen for undefined behaviour".into()));
    };
    let generated = origin.get("generator").is_some();
    let t = Instant::now();
    c.stats.tick(&c.dir, &c.store, c.started, "screening a program for undefined behaviour")?;
    let verdict = screen(&c.dir.join(source), &Screen::default());
    c.stats.spent_within("UB screening", t, "testing");
    Ok(match verdict {
        Screening::Clean { .. } => Ok("its C source runs clean under UBSan and ASan".into()),
        Screening::Undefined(report) => Err(format!("undefined behaviour: {report}")),
        other if generated => Err(format!("not screened for undefined behaviour: {other:?}")),
        other => Ok(format!("its C source could not be screened for undefined behaviour ({other:?})")),
    })
}

/// The oracle's majority vote over the program's executions decides its wrong code, when
/// there are enough of them to say anything (see [`MAJORITY_MODULES`]); the status of a
/// program with wrong code says what judged it.
fn vote_on(c: &mut Campaign, program: i64, reference: &Execution) -> Result<()> {
    let (sequences, ballots): (Vec<i64>, Vec<Ballot>) = c
        .store
        .pair_results(program)?
        .into_iter()
        .filter_map(|pair| {
            let execution = serde_json::from_str::<ExecRecord>(pair.exec.as_deref()?).ok()?.execution();
            let module = pair.ir_hash.and_then(|h| u64::from_str_radix(&h, 16).ok());
            Some((pair.sequence, Ballot { execution, module }))
        })
        .unzip();
    // A generated driver's calls were checked free of undefined behaviour and of reads of
    // unwritten memory, which is what a majority against the reference stands for
    // otherwise; and a seed made for one pass meets it in most pipelines.
    let checked = driver_path(c, &c.store.program(program)?).is_file();
    let verdict = match checked {
        true => Vote::WrongCode(
            ballots
                .iter()
                .enumerate()
                .filter_map(|(i, b)| execution_failure(&b.execution, reference).map(|f| (i, f)))
                .collect(),
        ),
        false => vote(&ballots, reference),
    };
    let runs = ballots.len();
    let modules = distinct_modules(&ballots);
    match verdict {
        Vote::Suspect { runs: agreeing, modules: agreeing_modules } => c.store.set_program_status(
            program,
            &format!(
                "suspect: {agreeing} of {runs} optimized runs, {agreeing_modules} different optimized programs, \
                 agree with each other against the unoptimized one"
            ),
            None,
        ),
        Vote::WrongCode(failures) if failures.is_empty() => c.store.set_program_status(program, "tested", None),
        Vote::WrongCode(failures) => {
            let screening = match screened(c, program)? {
                Ok(checked) => checked,
                Err(why) => return c.store.set_program_status(program, &format!("skipped: {why}"), None),
            };
            for (i, f) in failures {
                let stdout = Some(ballots[i].execution.stdout.clone());
                let detail = serde_json::to_string(&FailureDetail { stdout, ..FailureDetail::default() })?;
                c.store.add_failure(program, sequences[i], f.kind.as_str(), &f.signature, &detail)?;
            }
            let vote = match (checked, modules >= MAJORITY_MODULES) {
                (true, _) => "its generated driver calls only what runs free of undefined behaviour".to_string(),
                (false, true) => format!(
                    "{runs} optimized runs, {modules} different optimized programs: no {MAJORITY_MODULES} or more \
                     of them agree against the unoptimized one, as they would if it were undefined"
                ),
                (false, false) => format!(
                    "{runs} optimized run{}, {modules} different optimized program{}: too few for a majority \
                     of them to say whether the program is undefined, so the oracle alone judged it",
                    if runs == 1 { "" } else { "s" },
                    if modules == 1 { "" } else { "s" }
                ),
            };
            c.store.set_program_status(program, &format!("{TESTED_WITH_WRONG_CODE}{vote}; {screening}"), None)
        }
    }
}
