//! From failures to unique bugs: reduce the sequence while the same failure fires, key the
//! bug, and give each new one a folder with everything needed to reproduce it.

use std::time::Duration;

use anyhow::{Context as _, Result};

use crate::fuzz::bug::cross;
use crate::fuzz::bug::cvise;
use crate::fuzz::bug::failure::{detail_of, FailureDetail};
use crate::fuzz::bug::interesting;
use crate::fuzz::bug::DRIVER;
use crate::fuzz::campaign::Campaign;
use crate::fuzz::folder::store::{now, BugRow, FailureRow, ProgramRow, VariantRow, ELSEWHERE};
use crate::fuzz::folder::sync::{Cause, SyncDir};
use crate::fuzz::programs::origin;
use crate::fuzz::programs::seeds;
use crate::fuzz::programs::stored::{self, load};
use crate::llvm::{IrModule, VerifyEach};
use crate::oracle::{bug_key, key_before_reduction, Failure, FailureKind, Oracle, Verdict};
use crate::output::shell_quote;
use crate::program::Subject;
use crate::sandbox::{run_batch_cached, BatchItem, ExecCache, ExecMode, JobSpec, Llvm, Run};
use crate::seq::random::{contains_ordered, with_preconditions};
use crate::seq::reduce::reduce_batched;
use crate::seq::{render_with, through_element, Sequence};

/// Reduction tests per failure: enough for 200-pass sequences, bounded for slow ones.
const MAX_TESTS: usize = 400;

/// Wall time one failure's reduction may take once the failure reproduced, as a multiple of
/// the optimizer timeout (at least two minutes): a hang costs a whole timeout per candidate
/// that still hangs, and an llvm-stress hang in a 100-pass sequence kept a campaign reducing
/// for over ten minutes. Out of time, the smallest sequence that failed so far is kept.
const REDUCTION_TIMEOUTS: f64 = 10.0;

fn reduction_budget(c: &Campaign) -> Duration {
    Duration::from_secs_f64((REDUCTION_TIMEOUTS * c.config.opt_timeout).max(120.0))
}

struct Loaded {
    program: ProgramRow,
    subject: Subject,
    /// None for programs without `main`: only the optimizer is judged.
    reference: Option<crate::sandbox::Execution>,
}

impl Loaded {
    fn new(c: &Campaign, program: i64) -> Result<Loaded> {
        Loaded::of(c, c.store.program(program)?)
    }

    /// A program outside the store (another shard's, by its absolute path).
    fn of_file(c: &Campaign, path: &std::path::Path) -> Result<Loaded> {
        let ir = path.display().to_string();
        let row = ProgramRow {
            id: 0,
            iteration: 0,
            name: ir.clone(),
            origin: "{}".into(),
            source: None,
            ir,
            status: String::new(),
        };
        Loaded::of(c, row)
    }

    fn of(c: &Campaign, program: ProgramRow) -> Result<Loaded> {
        // A hang found with the campaign's timeout is confirmed faster with a shorter one.
        let mut limits = c.config.limits();
        limits.exec_timeout = limits.exec_timeout.min(Duration::from_secs(5));
        let mut subject = load(c, &program, limits)?;
        let reference = if subject.module.can_execute() { Some(subject.reference()?) } else { None };
        // An optimized program that does not end is one that runs far longer than the
        // unoptimized one. Slower code is not wrong: the JIT compiles without optimizing,
        // and a loop structurizecfg rewrote ran 4.6 times as long (1.3 s against 6.2 s,
        // so past the 5 s above) and ended with the same output; after reg2mem, gvn and
        // others, one printed every call's line and still ran past ten times.
        let floor = reference.as_ref().map(|r| Duration::from_secs_f64(r.millis * HANG_RATIO / 1000.0));
        if let Some(floor) = floor.filter(|&f| f > limits.exec_timeout) {
            limits.exec_timeout = floor;
            subject = load(c, &program, limits)?;
        }
        Ok(Loaded { program, subject, reference })
    }
}

/// How many times the unoptimized program's time an optimized run must go on for to count
/// as not ending, when confirming a failure.
const HANG_RATIO: f64 = 30.0;

pub(in crate::fuzz) fn process_pending(c: &mut Campaign) -> Result<()> {
    let pending = c.store.pending_failures()?;
    let mut loaded: Option<Loaded> = None;
    for f in pending {
        if loaded.as_ref().is_none_or(|l| l.program.id != f.program) {
            loaded = Some(Loaded::new(c, f.program)?);
        }
        c.stats.tick(&c.dir, &c.store, c.started, "reducing")?;
        process_failure(c, loaded.as_mut().unwrap(), &f)?;
    }
    Ok(())
}

/// A job of the campaign's kind: executing the program when it has a reference run.
fn job(c: &Campaign, execute: bool, pipeline: &str) -> JobSpec {
    let exec = if execute { ExecMode::Always } else { ExecMode::Never };
    JobSpec { verify_each: c.config.verify_each, exec, ..JobSpec::optimize(pipeline) }
}

fn run(c: &Campaign, l: &mut Loaded, pipeline: &str) -> Result<Run> {
    let job = job(c, l.reference.is_some(), pipeline);
    Ok(l.subject.pool.run_one(&mut l.subject.module, &job)?)
}

/// `seq` reduced while `oracle` finds each candidate failing the same way on `subject`
/// (executed when `execute`); None when `seq` itself no longer fails (wrong code can be
/// flaky). Candidates run `jobs` at a time, so reduction keeps the workers as busy as
/// testing.
pub(in crate::fuzz) fn reduce_while_failing(
    c: &Campaign,
    subject: &mut Subject,
    execute: bool,
    oracle: &Oracle,
    seq: &Sequence,
) -> Option<Sequence> {
    let render = c.config.render();
    // The elements after the one the optimizer stopped in never ran: they go before any
    // candidate runs. Each candidate of a hang costs its time limit, and the budget ran
    // out before reduction dropped a newgvn hang's tail (its folder said
    // `canonicalize-aliases`, the last pass, which never started).
    let stopped = stopped_run(c, subject, execute, oracle, seq);
    let seq = stopped.as_ref().and_then(|s| s.ran.as_ref()).unwrap_or(seq);
    // A sequence of the user's (`--sequences`) may run a pass without its preconditions:
    // its candidates do too, or they would fail otherwise than it did.
    let with_them = with_preconditions(seq, &c.catalog) == *seq;
    let preconditioned = |s: &Sequence| match with_them {
        true => with_preconditions(s, &c.catalog),
        false => s.clone(),
    };
    let mut tests = 0;
    let stop: std::cell::Cell<Option<std::time::Instant>> = std::cell::Cell::new(None);
    let mut cache = ExecCache::default();
    let mut fails_each = |candidates: &[Sequence]| -> Vec<bool> {
        let texts: Vec<Option<String>> = candidates
            .iter()
            .map(|candidate| {
                tests += 1;
                // Reduction must not strip a pass its precondition (lower-switch before structurizecfg).
                let candidate = preconditioned(candidate);
                let open = tests <= MAX_TESTS && stop.get().is_none_or(|at| std::time::Instant::now() < at);
                open.then(|| render_with(&candidate, &c.catalog, &render).ok()).flatten()
            })
            .collect();
        let items: Vec<BatchItem> = texts
            .iter()
            .enumerate()
            .filter_map(|(index, text)| Some(BatchItem { index, job: job(c, execute, text.as_deref()?) }))
            .collect();
        let mut verdicts = vec![false; candidates.len()];
        let judged = run_batch_cached(&mut subject.pool, &mut subject.module, items, &mut cache, |i, r| {
            let text = texts[i].as_deref().unwrap_or_default();
            verdicts[i] = oracle.judge(&r, text).is_ok_and(|v| v == Verdict::Same);
        });
        if judged.is_err() {
            verdicts.fill(false);
        }
        verdicts
    };
    // What stopped the way under study needs no second run to say that it fails.
    if !stopped.as_ref().is_some_and(|s| s.same) && !fails_each(std::slice::from_ref(seq))[0] {
        return None;
    }
    stop.set(Some(std::time::Instant::now() + reduction_budget(c)));
    let mut reduced = preconditioned(&reduce_batched(seq, c.jobs, &mut fails_each));
    if oracle.expected.kind == FailureKind::WrongCode {
        // What the program does depends on the optimized module alone: a pass at the end
        // that leaves it as it is was kept by a judgement near a time limit, and would be
        // blamed (a campaign on LLVM 23 named a "program does not end" bug `verify`).
        reduced = reduced.without_inert_tail();
    }
    // Reduction drops a precondition whenever the pass it precedes stays (it comes back
    // with that pass), so a failure inside a precondition ended blamed on the pass after
    // it (unify-loop-exits crashed; the folder said structurizecfg). The tail goes while
    // the failure stays without it, and what is left is reduced again.
    let mut trimmed = false;
    while reduced.passes().len() > 1 {
        let last = reduced.passes().len() - 1;
        let shorter = reduced.retain_passes(|i| i < last);
        if !fails_each(std::slice::from_ref(&shorter))[0] {
            break;
        }
        (reduced, trimmed) = (shorter, true);
    }
    if trimmed {
        reduced = preconditioned(&reduce_batched(&reduced, c.jobs, &mut fails_each));
    }
    Some(reduced)
}

/// One run of a sequence the optimizer stops in (a crash, a fatal error, a hang): whether
/// it stopped the way under study, and the part of the sequence that ran when passes were
/// left to run (the elements after the one it stopped in never started).
struct Stopped {
    same: bool,
    ran: Option<Sequence>,
}

/// None for wrong code (the optimizer finishes) or when the run could not be made.
fn stopped_run(c: &Campaign, subject: &mut Subject, execute: bool, oracle: &Oracle, seq: &Sequence) -> Option<Stopped> {
    if oracle.expected.kind == FailureKind::WrongCode {
        return None;
    }
    let render = c.config.render();
    let text = render_with(seq, &c.catalog, &render).ok()?;
    let run = subject.pool.run_one(&mut subject.module, &job(c, execute, &text)).ok()?;
    let same = oracle.judge(&run, &text).is_ok_and(|v| v == Verdict::Same);
    let ran = run.failed_in_element.filter(|_| same).and_then(|e| through_element(seq, e, &c.catalog, &render));
    Some(Stopped { same, ran })
}

fn process_failure(c: &mut Campaign, l: &mut Loaded, f: &FailureRow) -> Result<()> {
    let render = c.config.render();
    let original = c.store.sequence(f.sequence)?;
    let seq = Sequence::parse_with(&original, &c.catalog, &render)?;
    let kind =
        FailureKind::parse(&f.kind).with_context(|| format!("the store names an unknown failure kind '{}'", f.kind))?;
    let failure = Failure { kind, signature: f.signature.clone() };
    // A known bug whose reduced sequence this one contains, failing alike: no need to reduce.
    let contains = |kind: &str, signature: &str, reduced: &str| -> Result<bool> {
        let reduced = Sequence::parse_with(reduced, &c.catalog, &render)?;
        let tokens: Vec<String> = reduced.passes().iter().map(|p| p.to_string()).collect();
        let tokens: Vec<&str> = tokens.iter().map(String::as_str).collect();
        Ok(kind == f.kind && signature == f.signature && contains_ordered(&seq, &tokens))
    };
    for bug in c.store.bugs()? {
        if contains(&bug.kind, &bug.signature, &bug.reduced)? {
            return c.store.resolve_failure(f.id, "duplicate", Some(bug.id));
        }
    }
    for cause in c.sync.as_ref().map(SyncDir::causes).transpose()?.unwrap_or_default() {
        if contains(&cause.kind, &cause.signature, &cause.reduced)? {
            return c.store.resolve_failure(f.id, ELSEWHERE, None);
        }
    }
    // A failure keyed without its sequence, under a known key, is a duplicate unreduced.
    let frames = serde_json::from_str::<FailureDetail>(&f.detail).map(|d| d.frames).unwrap_or_default();
    if let Some(key) = key_before_reduction(&failure, &frames) {
        if let Some(bug) = c.store.bug_by_key(&key)? {
            return c.store.resolve_failure(f.id, "duplicate", Some(bug.id));
        }
        if c.sync.as_ref().is_some_and(|s| s.known(&key).is_some()) {
            return c.store.resolve_failure(f.id, ELSEWHERE, None);
        }
    }
    let mut oracle = Oracle::of(failure.clone(), l.reference.clone());
    oracle.fault_in = crate::oracle::fault_pass(&failure, &frames);
    let Some(reduced) = reduce_while_failing(c, &mut l.subject, l.reference.is_some(), &oracle, &seq) else {
        return c.store.resolve_failure(f.id, "not-reproduced", None);
    };
    let text = render_with(&reduced, &c.catalog, &render)?;
    let last = run(c, l, &text)?;
    let (reduced, text, last) = match adaptor_pass_alone(c, l, &oracle, &last)? {
        Some(alone) => alone,
        None => (reduced, text, last),
    };
    let detail = detail_of(&last);
    let frames = if detail.frames.is_empty() { frames } else { detail.frames.clone() };
    let (key, pass) = bug_key(&failure, &reduced, &frames);
    if let Some(bug) = c.store.bug_by_key(&key)? {
        return c.store.resolve_failure(f.id, "duplicate", Some(bug.id));
    }
    if c.sync.as_ref().is_some_and(|s| s.known(&key).is_some()) {
        return c.store.resolve_failure(f.id, ELSEWHERE, None);
    }
    if let Some(bug) = same_cause(c, l, kind, &pass, &text)? {
        add_variant(c, l, &bug, key, &failure, &text)?;
        return c.store.resolve_failure(f.id, "same-cause", Some(bug.id));
    }
    let deciding = c.sync.as_ref().map(|s| s.lock(kind.as_str(), &pass)).transpose()?;
    if same_cause_elsewhere(c, l, kind, &pass, &text)? {
        return c.store.resolve_failure(f.id, ELSEWHERE, None);
    }
    let id = c.store.bugs()?.len() + 1;
    let dir = format!("bugs/{id:04}-{}-{}", failure.kind.as_str(), sanitize(&pass));
    let row = BugRow {
        id: 0,
        key,
        kind: failure.kind.as_str().to_string(),
        pass,
        signature: failure.signature.clone(),
        reduced: text.clone(),
        program: l.program.id,
        first_seen: now(),
        count: 0,
        dir: dir.clone(),
    };
    if !claim(c, l, &row)? {
        return c.store.resolve_failure(f.id, ELSEWHERE, None);
    }
    drop(deciding);
    write_bug_folder(c, l, &row, &original, &failure, &last, &frames)?;
    if c.config.reduce_programs && l.program.source.is_some() {
        c.stats.tick(&c.dir, &c.store, c.started, "reducing the program with cvise")?;
        reduce_program(c, &row, &failure)?;
    }
    let bug = c.store.add_bug(&row)?;
    c.store.resolve_failure(f.id, "reduced", Some(bug))
}

/// The pass a loop adaptor runs unnamed (LCSSA, LoopSimplify) alone, with its run, when
/// the verifier says it broke the IR in `last` and it alone fails the same way: such a bug
/// shows under every loop pass, and a campaign on LLVM 23 made one folder of an LCSSA
/// bug per loop pass its sequences ended in (thirteen).
fn adaptor_pass_alone(
    c: &Campaign,
    l: &mut Loaded,
    oracle: &Oracle,
    last: &Run,
) -> Result<Option<(Sequence, String, Run)>> {
    let Some(pass) = last.message.as_deref().and_then(crate::oracle::adaptor_pass_that_broke) else {
        return Ok(None);
    };
    let alone = format!("function({pass})");
    let run = run(c, l, &alone)?;
    if oracle.judge(&run, &alone)? != Verdict::Same {
        return Ok(None);
    }
    Ok(Some((Sequence::parse_with(&alone, &c.catalog, &c.config.render())?, alone, run)))
}

/// A known bug of the same kind and culprit pass (the last of the reduced sequence) that
/// cross-reproduces with this failure: its reduced sequence fails the same kind of way, in
/// its culprit, on this program, or this reduced sequence so on its program. Frames and
/// messages differ between faces of one cause (another top frame, another verifier
/// message); a minimal sequence that fails on the other's program does not. One direction
/// is enough: reduction ends in a local minimum, and one program's minimum may carry passes
/// the other program needs (seen on two loop-extract crashes of LLVM 22).
fn same_cause(c: &Campaign, l: &mut Loaded, kind: FailureKind, pass: &str, reduced: &str) -> Result<Option<BugRow>> {
    let candidates = c.store.bugs()?.into_iter().filter(|b| b.kind == kind.as_str() && b.pass == pass);
    for bug in candidates {
        if fails_as(c, l, &bug.reduced, kind, pass)?
            || fails_as(c, &mut Loaded::new(c, bug.program)?, reduced, kind, pass)?
        {
            return Ok(Some(bug));
        }
    }
    Ok(None)
}

/// [`same_cause`] against the causes other shards published (`--sync`).
fn same_cause_elsewhere(c: &Campaign, l: &mut Loaded, kind: FailureKind, pass: &str, reduced: &str) -> Result<bool> {
    let Some(sync) = &c.sync else { return Ok(false) };
    for cause in sync.causes()?.into_iter().filter(|b| b.kind == kind.as_str() && b.pass == pass) {
        if fails_as(c, l, &cause.reduced, kind, pass)?
            || fails_as(c, &mut Loaded::of_file(c, &sync.program(&cause))?, reduced, kind, pass)?
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Publish a new bug's cause for the other shards (`--sync`); false when one of them
/// published its key first.
fn claim(c: &Campaign, l: &Loaded, bug: &BugRow) -> Result<bool> {
    let Some(sync) = &c.sync else { return Ok(true) };
    let (i, n) = c.config.shard;
    let cause = Cause {
        key: bug.key.clone(),
        kind: bug.kind.clone(),
        pass: bug.pass.clone(),
        signature: bug.signature.clone(),
        reduced: bug.reduced.clone(),
        shard: format!("{i}/{n}"),
        campaign: sync.own().to_string(),
        folder: c.dir.join(&bug.dir).display().to_string(),
        program: String::new(),
    };
    sync.claim(cause, &c.dir.join(&l.program.ir))
}

/// Whether `pipeline` fails on `l`'s program with a failure of `kind`, whatever its text,
/// and, when the optimizer failed, in an element that runs `culprit`.
fn fails_as(c: &Campaign, l: &mut Loaded, pipeline: &str, kind: FailureKind, culprit: &str) -> Result<bool> {
    let run = run(c, l, pipeline)?;
    Ok(cross::fails_like(&run, l.reference.as_ref(), pipeline, kind, culprit))
}

/// A line for the `n`th other face of the bug in `folder` in its README's "Also seen as".
pub(in crate::fuzz) fn note_also_seen(
    folder: &std::path::Path,
    n: usize,
    signature: &str,
    reduced: &str,
    program: &str,
) -> Result<()> {
    let readme = folder.join("README.md");
    let mut text = std::fs::read_to_string(&readme)?;
    if !text.contains("\n## Also seen as\n") {
        text.push_str(
            "\n## Also seen as\n\nFailures with other signatures that cross-reproduce with this one (each \
             reduced sequence fails the same way on the other's program): one cause.\n\n",
        );
    }
    text.push_str(&format!("* `also-{n}/`: {signature} — `{reduced}` on also-{n}/{program}\n"));
    Ok(std::fs::write(&readme, text)?)
}

/// Record this failure as another face of `bug`: its own folder inside the bug's, a line
/// in the bug's README, and its key, so that the next failure like it is known at once.
fn add_variant(c: &Campaign, l: &Loaded, bug: &BugRow, key: String, failure: &Failure, reduced: &str) -> Result<()> {
    let n = c.store.variants()?.iter().filter(|v| v.bug == bug.id).count() + 1;
    let dir = format!("{}/also-{n}", bug.dir);
    let path = c.dir.join(&dir);
    std::fs::create_dir_all(&path).with_context(|| format!("cannot create {}", path.display()))?;
    if let Some(source) = &l.program.source {
        std::fs::copy(c.dir.join(source), path.join("program.c"))?;
    }
    let program = program_file(c, l, &path)?;
    std::fs::write(
        path.join("reduced.txt"),
        format!(
            "{reduced}
"
        ),
    )?;
    let outcome = serde_json::json!({ "kind": failure.kind, "signature": failure.signature, "pass": bug.pass });
    let outcome = with_handoff(outcome, c, stored::options_of(c, &l.program), program, reduced);
    std::fs::write(path.join("outcome.json"), serde_json::to_string_pretty(&outcome)?)?;
    note_also_seen(&c.dir.join(&bug.dir), n, &failure.signature, reduced, program)?;
    let variant = VariantRow {
        bug: bug.id,
        key,
        signature: failure.signature.clone(),
        reduced: reduced.to_string(),
        program: l.program.id,
        dir,
    };
    c.store.add_variant(&variant)
}

fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect()
}

fn write_bug_folder(
    c: &Campaign,
    l: &Loaded,
    bug: &BugRow,
    original: &str,
    failure: &Failure,
    last: &Run,
    frames: &[String],
) -> Result<()> {
    let dir = c.dir.join(&bug.dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    if let Some(source) = &l.program.source {
        std::fs::copy(c.dir.join(source), dir.join("program.c"))?;
    }
    let program = program_file(c, l, &dir)?;
    std::fs::write(dir.join("reduced.txt"), format!("{}\n", bug.reduced))?;
    std::fs::write(dir.join("original.txt"), format!("{original}\n"))?;
    let outcome = serde_json::json!({
        "kind": failure.kind,
        "signature": failure.signature,
        "pass": bug.pass,
        "message": last.message,
        "crash_frames": frames,
        "stdout": last.execution.as_ref().map(|e| &e.stdout),
        "reference_stdout": l.reference.as_ref().map(|e| &e.stdout),
        "program": l.program.name,
        "program_origin": serde_json::from_str::<serde_json::Value>(&l.program.origin).ok(),
        "heap": last.heap,
    });
    let outcome = with_handoff(outcome, c, stored::options_of(c, &l.program), program, &bug.reduced);
    std::fs::write(dir.join("outcome.json"), serde_json::to_string_pretty(&outcome)?)?;
    let mut text = readme(c, bug, failure, last, program);
    text.push_str(&origin::provenance(&l.program.origin).unwrap_or_default());
    std::fs::write(dir.join("README.md"), text)?;
    Ok(())
}

/// `outcome` with what `locseq isolate FOLDER` needs besides the folder's files: which
/// program file, the reduced sequence, and how the campaign ran LLVM.
fn with_handoff(
    mut outcome: serde_json::Value,
    c: &Campaign,
    options: Vec<String>,
    program: &str,
    reduced: &str,
) -> serde_json::Value {
    let facts = serde_json::json!({
        "program_file": program,
        "reduced": reduced,
        "llvm_args": options,
        "verify_each": c.config.verify_each,
        "opt": c.llvm.external().map(|o| o.opt.to_string_lossy()),
        "llvm_version": c.llvm.version(),
    });
    if let (Some(o), serde_json::Value::Object(f)) = (outcome.as_object_mut(), facts) {
        o.extend(f);
    }
    outcome
}

/// Write the IR the commands of a bug folder run into `dir`; returns its file name. With
/// an external opt: what that opt read, as its own clang made it (the linked LLVM's text
/// may be too new for an older opt).
fn program_file(c: &Campaign, l: &Loaded, dir: &std::path::Path) -> Result<&'static str> {
    let driver = stored::driver_path(c, &l.program);
    if driver.is_file() {
        std::fs::copy(&driver, dir.join(DRIVER))?;
    }
    Ok(match &c.llvm {
        Llvm::External(_) => {
            let name = if l.program.ir.ends_with(".ll") { "program.ll" } else { "program.bc" };
            std::fs::copy(c.dir.join(&l.program.ir), dir.join(name))?;
            name
        }
        Llvm::Linked => {
            std::fs::write(dir.join("program.ll"), l.subject.module.ir_text())?;
            "program.ll"
        }
    })
}

/// The LLVM under test's tools as a bug folder's commands name them (Debian's of the
/// linked version, or the --opt and its neighbours) and its version.
pub(in crate::fuzz) struct Tools {
    pub opt: String,
    pub lli: String,
    pub link: String,
    pub version: String,
}

impl Tools {
    /// The tools as a report for LLVM's tracker names them: as the reader has them, with
    /// the version said once ([`Tools::version_line`]), not by this machine's paths.
    pub(in crate::fuzz) fn as_anyone_has_them(c: &Campaign) -> Tools {
        Tools { opt: "opt".into(), lli: "lli".into(), link: "llvm-link".into(), version: c.llvm.version() }
    }

    /// A shell comment that says which LLVM the commands are for.
    pub(in crate::fuzz) fn version_line(&self) -> String {
        format!("# LLVM {} (opt --version)\n", self.version)
    }
}

pub(in crate::fuzz) fn tools(c: &Campaign) -> Tools {
    let version = c.llvm.version();
    match &c.llvm {
        Llvm::External(o) => {
            let beside = |tool: &str| {
                let path = o.bin_dir().join(tool);
                if path.is_file() {
                    shell_quote(&path.display().to_string())
                } else {
                    tool.to_string()
                }
            };
            Tools {
                opt: shell_quote(&o.opt.display().to_string()),
                lli: beside("lli"),
                link: beside("llvm-link"),
                version,
            }
        }
        Llvm::Linked => {
            let major = c.llvm.major();
            Tools {
                opt: format!("opt-{major}"),
                lli: format!("lli-{major}"),
                link: format!("llvm-link-{major}"),
                version,
            }
        }
    }
}

/// The shell lines that show `bug`'s kind of failure with plain `opt` (and `lli` for wrong
/// code) running `pipeline` on `program`, as the campaign ran LLVM, with `tools`.
pub(in crate::fuzz) fn opt_commands(
    c: &Campaign,
    tools: &Tools,
    bug: &BugRow,
    pipeline: &str,
    program: &str,
) -> String {
    let Tools { opt, lli, link, .. } = tools;
    let kind = FailureKind::parse(&bug.kind).unwrap_or(FailureKind::Crash);
    let OptLine { pipeline, verify, args } = opt_line(c, bug, pipeline);
    let driver = has_driver(c, bug);
    if kind == FailureKind::WrongCode && driver {
        format!(
            "{opt} -passes={pipeline}{args} {program} -o optimized.bc\n\
             {link} optimized.bc {DRIVER} -o optimized-run.bc && {lli} optimized-run.bc   # differs from:\n\
             {link} {program} {DRIVER} -o unoptimized-run.bc && {lli} unoptimized-run.bc\n"
        )
    } else if kind == FailureKind::WrongCode {
        format!("{opt} -passes={pipeline}{args} {program} -o optimized.bc\n{lli} optimized.bc   # differs from:\n{lli} {program}\n")
    } else {
        format!("{opt} -passes={pipeline}{verify}{args} {program} -disable-output\n")
    }
}

/// What plain `opt` needs beside the program to show `bug` as the campaign ran LLVM.
pub(in crate::fuzz) struct OptLine {
    /// `-passes=`'s value, quoted for a shell.
    pub pipeline: String,
    /// ` -verify-each` when the campaign verified after passes (its failures need it).
    pub verify: &'static str,
    /// The LLVM options, each after a space, quoted.
    pub args: String,
}

pub(in crate::fuzz) fn opt_line(c: &Campaign, bug: &BugRow, pipeline: &str) -> OptLine {
    let kind = FailureKind::parse(&bug.kind).unwrap_or(FailureKind::Crash);
    let args: String =
        c.config.llvm_args.iter().chain(&own_options(c, bug)).map(|a| format!(" {}", shell_quote(a))).collect();
    // Plain opt has no -ctos-check-preserved; its verify<scalar-evolution> pass does the same
    // check once, on what the pipeline leaves cached at its end (the domtree and loops
    // verifier passes are empty in release builds). Only a stale SCEV needs it.
    let scev = kind == FailureKind::Crash && bug.signature.contains(crate::oracle::SCEV_CHECK_FRAME);
    let pipeline = if scev { format!("{pipeline},function(verify<scalar-evolution>)") } else { pipeline.to_string() };
    let verify =
        if c.config.verify_each == VerifyEach::Off || kind == FailureKind::WrongCode { "" } else { " -verify-each" };
    OptLine { pipeline: shell_quote(&pipeline), verify, args }
}

/// Whether `bug`'s program runs with a driver ctos generated for it.
pub(in crate::fuzz) fn has_driver(c: &Campaign, bug: &BugRow) -> bool {
    c.store.program(bug.program).is_ok_and(|p| stored::driver_path(c, &p).is_file())
}

/// The LLVM options `bug`'s program runs with (the campaign's, then a seed's own).
pub(in crate::fuzz) fn bug_options(c: &Campaign, bug: &BugRow) -> Vec<String> {
    let mut options = c.config.llvm_options();
    options.extend(own_options(c, bug));
    options
}

/// The options of `bug`'s own program (a seed's RUN line), beyond the campaign's.
fn own_options(c: &Campaign, bug: &BugRow) -> Vec<String> {
    c.store.program(bug.program).map(|p| seeds::own_options(&p.origin)).unwrap_or_default()
}

/// `program`: the bug folder's IR file the commands run.
fn readme(c: &Campaign, bug: &BugRow, failure: &Failure, last: &Run, program: &str) -> String {
    let Tools { opt, version, .. } = tools(c);
    let mut ctos_args: String =
        bug_options(c, bug).iter().map(|a| format!(" {}", shell_quote(&format!("--llvm-arg={a}")))).collect();
    if c.llvm.external().is_some() {
        ctos_args.push_str(&format!(" --opt {opt}"));
    }
    let pipeline = shell_quote(&bug.reduced);
    let mut text = format!(
        "# {} in `{}`\n\n{}\n\nFound by `ctos fuzz` on LLVM {} (campaign seed {}, selection {:?}).\n\
         Reduced pass sequence ({} nesting, `instcombine<no-verify-fixpoint>`; keep this exact text, \
         the adaptors matter):\n\n    {}\n\n",
        failure.kind.as_str(),
        bug.pass,
        failure.signature,
        version,
        c.config.seed,
        c.config.selection,
        match c.config.nesting {
            crate::seq::Nesting::Grouped => "grouped",
            crate::seq::Nesting::PerPass => "per-pass",
        },
        bug.reduced
    );
    if let Some(m) = &last.message {
        text.push_str(&format!("LLVM says: `{m}`\n\n"));
    }
    text.push_str("## Reproduce\n\nWith opt:\n\n```sh\n");
    text.push_str(&opt_commands(c, &tools(c), bug, &bug.reduced, program));
    let exec = match (failure.kind == FailureKind::WrongCode, has_driver(c, bug)) {
        (true, true) => format!(" --exec --driver {DRIVER}"),
        (true, false) => " --exec".to_string(),
        (false, _) => String::new(),
    };
    let ctos_verify = match c.config.verify_each {
        VerifyEach::Off => "",
        VerifyEach::Changed | VerifyEach::ChangedEachUnit => " --verify-each",
        VerifyEach::Every => " --verify-each=every",
    };
    text.push_str(&format!(
        "```\n\nWith ctos:\n\n```sh\nctos run {program} --passes {pipeline}{ctos_verify}{exec}{ctos_args}\n```\n\n\
         `original.txt` is the failing sequence before reduction, `outcome.json` the failure as recorded.\n"
    ));
    let opt_path = c.llvm.external().map(|o| o.opt.as_path());
    text.push_str(&format!(
        "\n## Localize\n\nRank the LLVM source files to blame (program, reduced sequence, LLVM options and \
         oracle come from this folder):\n\n```sh\n{}\n```\n",
        localize_command(".", opt_path)
    ));
    text
}

/// The `locseq isolate` command that localizes the bug in `folder`.
pub(in crate::fuzz) fn localize_command(folder: &str, opt: Option<&std::path::Path>) -> String {
    let opt = opt.map(|o| format!(" --opt {}", shell_quote(&o.display().to_string()))).unwrap_or_default();
    format!("locseq isolate {}{opt}", shell_quote(folder))
}

/// Reduce the bug's C program with cvise and keep the result beside the original.
fn reduce_program(c: &Campaign, bug: &BugRow, failure: &Failure) -> Result<()> {
    let dir = c.dir.join(&bug.dir);
    let check = interesting::Interesting {
        failure: failure.clone(),
        pipeline: bug.reduced.clone(),
        verify_each: c.config.verify_each,
        llvm_args: bug_options(c, bug),
        limits: c.config.limits(),
        llvm: c.llvm.clone(),
        culprit: Some(bug.pass.clone()),
        baseline: None,
        keep_smallest: None,
        driver: None,
    };
    let budget = Duration::from_secs_f64(c.config.reduce_programs_seconds);
    let reduced = match cvise::reduce_program(&dir.join("program.c"), &check, budget, c.jobs) {
        Ok(reduced) => reduced,
        // The bug and its reproducer stand without the smaller program: say why, go on.
        Err(e) => {
            let mut readme = std::fs::read_to_string(dir.join("README.md"))?;
            readme.push_str(&format!("\nThe program was not reduced: {e:#}\n"));
            std::fs::write(dir.join("README.md"), readme)?;
            return Ok(());
        }
    };
    if let Some(reduced) = reduced {
        let module = IrModule::load(&reduced, &c.frontend, &Default::default())?;
        std::fs::write(dir.join("program.reduced.ll"), module.ir_text())?;
        let mut readme = std::fs::read_to_string(dir.join("README.md"))?;
        readme.push_str(
            "\n`program.reduced.c` / `program.reduced.ll`: the program reduced with cvise \
             (same failure, same reduced sequence); use them in the commands above.\n",
        );
        std::fs::write(dir.join("README.md"), readme)?;
    }
    Ok(())
}
