//! After a bug is known: reduce its program as IR, re-run it on every LLVM the campaign
//! knows, localize it briefly, and write what a maintainer reads. Each step records its
//! result in the folder's `outcome.json` as it ends, so an interrupted campaign resumes
//! with the steps still to do.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result};

use crate::fuzz::bug::bugs;
use crate::fuzz::bug::bugs::reduce_while_failing;
use crate::fuzz::bug::fires::{fires_on_each, FiresOn, Reproducer};
use crate::fuzz::bug::interesting::{Baseline, Interesting, FILLS};
use crate::fuzz::bug::issue::{
    issue_text, lead_readme_with, outside_production, readme_section, Bisected, Findings, UndefinedFrom,
};
use crate::fuzz::bug::lit_test;
use crate::fuzz::bug::reduce_ir::{llvm_reduce_for, reduce_ir, IrReduction};
use crate::fuzz::bug::stale_loop::StaleLoop;
use crate::fuzz::bug::suspects::localize;
use crate::fuzz::bug::DRIVER;
use crate::fuzz::campaign::Campaign;
use crate::fuzz::folder::store::BugRow;
use crate::llvm::IrModule;
use crate::oracle::pass_runs::{first_failing_run, LimitedRun};
use crate::oracle::{Failure, FailureKind, Oracle};
use crate::program::driver::{first_observed, has_generated_driver};
use crate::program::{reference_execution_filled, Subject, SubjectSpec};
use crate::sandbox::agent::ExternalOpt;
use crate::sandbox::{ExecMode, JobSpec, Llvm};
use crate::seq::{render_with, Sequence};

/// Finish every bug whose folder lacks a step (all of them after an interruption).
pub(in crate::fuzz) fn finish_all(c: &mut Campaign) -> Result<()> {
    for bug in c.store.bugs()? {
        finish_bug(c, &bug)?;
    }
    Ok(())
}

/// The steps `bug`'s folder lacks, each saved as it ends.
pub(in crate::fuzz) fn finish_bug(c: &mut Campaign, bug: &BugRow) -> Result<()> {
    let folder = c.dir.join(&bug.dir);
    let outcome: serde_json::Value = serde_json::from_str(
        &crate::files::read_regular_text(&folder.join("outcome.json"))
            .with_context(|| format!("{}: no outcome.json", bug.dir))?,
    )?;
    let program = outcome["program_file"].as_str().unwrap_or("program.ll").to_string();
    let mut findings = Findings::read(&folder);
    let before = serde_json::to_value(&findings)?;
    let kind = FailureKind::parse(&bug.kind).unwrap_or(FailureKind::Crash);
    if findings.reduced_ir.is_none() && c.config.reduce_ir_seconds > 0.0 {
        c.stats.tick(&c.dir, &c.store, c.started, "reducing the program with llvm-reduce")?;
        findings.reduced_ir = Some(reduce_program_ir(c, bug, kind, &folder, &program));
        findings.write(&folder)?;
    }
    // What every step below runs: the reduced program once the reduction has run.
    let file = folder.join(findings.reproducer(&program));
    if findings.fires_on.is_none() {
        c.stats.tick(&c.dir, &c.store, c.started, "re-running the bug on each LLVM")?;
        findings.fires_on = Some(fires_on(c, bug, kind, &file, findings.pipeline(bug), findings.culprit(bug)));
        findings.write(&folder)?;
    }
    // Not hangs (each attempt would wait for the timeout) nor code generation (the limit
    // counts its passes too).
    let bisectable =
        matches!(kind, FailureKind::Crash | FailureKind::Fatal | FailureKind::InvalidIr | FailureKind::WrongCode);
    if findings.bisected.is_none() && bisectable {
        c.stats.tick(&c.dir, &c.store, c.started, "bisecting its pass runs")?;
        let bisected = bisect(c, bug, kind, &file, findings.pipeline(bug), findings.culprit(bug));
        findings.bisected = Some(bisected.unwrap_or_else(|e| Bisected::unnamed(format!("{e:#}"))));
        findings.write(&folder)?;
    }
    if findings.unoptimized.is_none() && kind == FailureKind::WrongCode {
        let unoptimized = reproducer_subject(c, bug, &file).and_then(|mut s| Baseline::of(&mut s.pool, &mut s.module));
        // Left unrecorded on failure (the report says so); a resumed campaign tries again.
        findings.unoptimized = unoptimized.ok();
        findings.write(&folder)?;
    }
    if findings.stale_loop.is_none() && crate::oracle::stale_analysis(&bug.signature) == Some("ScalarEvolution") {
        let stale = stale_loop(c, bug, &file, findings.pipeline(bug));
        findings.stale_loop = Some(stale.unwrap_or_else(|e| StaleLoop::unread(format!("{e:#}"))));
        findings.write(&folder)?;
    }
    if findings.suspects.is_none() && c.config.localize_seconds > 0.0 {
        c.stats.tick(&c.dir, &c.store, c.started, "localizing the bug")?;
        let budget = Duration::from_secs_f64(c.config.localize_seconds);
        let opt = c.llvm.external().map(|o| o.opt.as_path());
        findings.suspects = Some(localize(&folder, budget, c.jobs, c.config.seed, opt));
        findings.write(&folder)?;
    }
    findings.production_only = outside_production(c, findings.pipeline(bug)).map(|o| o.is_empty());
    if serde_json::to_value(&findings)? != before || !folder.join("ISSUE.md").is_file() {
        findings.write(&folder)?;
        write_lit_test(c, bug, kind, &folder, &file, findings.pipeline(bug), findings.culprit(bug))?;
        let title = format!("# {} in `{}`", bug.kind, findings.culprit(bug));
        lead_readme_with(&folder, &title, &readme_section(c, bug, &findings, &program))?;
        std::fs::write(folder.join("ISSUE.md"), issue_text(c, bug, &findings, &folder, &program))?;
    }
    Ok(())
}

/// `reduced.ll` beside `program` (text or bitcode) in `folder`. The bug stands without a
/// smaller program: a reduction that cannot run says why.
fn reduce_program_ir(c: &Campaign, bug: &BugRow, kind: FailureKind, folder: &Path, program: &str) -> IrReduction {
    let path = folder.join(program);
    let out = folder.join("reduced.ll");
    let budget = Duration::from_secs_f64(c.config.reduce_ir_seconds);
    let reduction = llvm_reduce_for(&c.llvm).and_then(|tool| {
        let check = interesting(c, bug, kind, &path)?;
        let mut reduction = reduce_ir(&tool, &path, &out, &check, budget, c.jobs)?;
        if let Some((pipeline, culprit)) =
            reduction.file.as_ref().map(|_| shorter_pipeline(c, bug, &check, &out)).transpose()?.flatten()
        {
            reduction.pipeline = Some(pipeline);
            reduction.culprit = Some(culprit);
        }
        Ok(reduction)
    });
    reduction.unwrap_or_else(|e| IrReduction::not_reduced(&path, 0.0, false, format!("{e:#}")))
}

/// The campaign's reduced sequence reduced again, on the reduced program: passes that
/// the whole program needed to fail may be needless now; with its last pass, the
/// culprit under it. None when none can go.
fn shorter_pipeline(
    c: &Campaign,
    bug: &BugRow,
    check: &Interesting,
    reduced: &Path,
) -> Result<Option<(String, String)>> {
    let mut spec = SubjectSpec::new(reduced, &bugs::bug_options(c, bug)).with_llvm(&c.llvm)?;
    spec.driver = check.driver.clone();
    let mut subject = Subject::load(&spec, c.jobs, check.limits)?;
    let mut oracle = Oracle::of(check.failure.clone(), None);
    oracle.crash_in = Some(bug.pass.clone());
    if oracle.needs_execution() {
        oracle.reference = Some(subject.reference()?);
    }
    let render = c.config.render();
    let seq = Sequence::parse_with(&bug.reduced, &c.catalog, &render)?;
    let execute = oracle.reference.is_some();
    Ok(match reduce_while_failing(c, &mut subject, execute, &oracle, &seq) {
        Some(shorter) if shorter.passes().len() < seq.passes().len() => {
            let culprit = shorter.passes().last().map_or_else(|| bug.pass.clone(), |p| p.name.clone());
            Some((render_with(&shorter, &c.catalog, &render)?, culprit))
        }
        _ => None,
    })
}

/// The optimizer failure of `file` under `pipeline` bisected over its pass runs, as
/// `-opt-bisect-limit` would be (wrong code by executing each limited run).
fn bisect(
    c: &Campaign,
    bug: &BugRow,
    kind: FailureKind,
    file: &Path,
    pipeline: &str,
    culprit: &str,
) -> Result<Bisected> {
    let mut subject = reproducer_subject(c, bug, file)?;
    // Wrong code shows in what the program does: each limited run executes it, with its
    // fresh memory filled as the unoptimized reference's was.
    let fill = (kind == FailureKind::WrongCode).then_some(FILLS[0]);
    let reference = match fill {
        Some(fill) => Some(reference_execution_filled(&mut subject.pool, &mut subject.module, Some(fill))?),
        None => None,
    };
    let exec = if fill.is_some() { ExecMode::Always } else { ExecMode::Never };
    let mut oracle = Oracle::of(Failure { kind, signature: bug.signature.clone() }, reference);
    oracle.crash_in = Some(culprit.to_string());
    let attempt = |limit: u32| -> Result<LimitedRun> {
        let job = JobSpec {
            pass_runs: Some(limit),
            verify_each: c.config.verify_each,
            exec,
            fill_memory: fill,
            ..JobSpec::optimize(pipeline)
        };
        let run = subject.pool.run_one(&mut subject.module, &job)?;
        LimitedRun::judged(run, &oracle, pipeline)
    };
    Ok(match first_failing_run(attempt)? {
        Some(run) => {
            let undefined = match fill {
                // Not checked (the linked LLVM cannot read a newer opt's IR, say): no claim.
                Some(fill) => undefined_from(c, &mut subject, file, pipeline, run.index, fill).ok().flatten(),
                None => None,
            };
            Bisected { limit: Some(run.index), pass: Some(run.name), note: None, undefined }
        }
        None => Bisected::unnamed("it needs every pass run, or one of a pass that cannot be skipped".into()),
    })
}

/// Pass runs a wrong-code bisection checks for undefined behaviour at most, one by one.
const UNDEFINED_SCAN: u32 = 200;

/// The first of the pass runs 1..=`upto` after which a call of `file`'s generated driver
/// observes poison or behaves undefinedly (under poison tracking); None when none does, or
/// the program has no generated driver. A pass that hoists a division out of the loop guarding
/// it makes the program undefined, and the backend drops the unused division again: the
/// wrong output shows only after a later pass uses it, and opt-bisect names that one.
fn undefined_from(
    c: &Campaign,
    subject: &mut Subject,
    file: &Path,
    pipeline: &str,
    upto: u32,
    fill: u8,
) -> Result<Option<UndefinedFrom>> {
    let Some(driver) = driver_beside(file).filter(|_| has_generated_driver(&subject.module)) else {
        return Ok(None);
    };
    let driver = std::fs::read(&driver).with_context(|| format!("cannot read {}", driver.display()))?;
    for limit in 1..=upto.min(UNDEFINED_SCAN) {
        let job = JobSpec {
            pass_runs: Some(limit),
            emit_ir: true,
            verify_each: c.config.verify_each,
            ..JobSpec::optimize(pipeline)
        };
        let run = subject.pool.run_one(&mut subject.module, &job)?;
        let (Some(ir), Some(last)) = (run.ir, run.nth_pass_run) else { continue };
        let mut optimized = IrModule::from_bytes(ir.as_bytes(), "optimized", &subject.target)
            .map_err(|e| anyhow::anyhow!("the linked LLVM cannot read the optimized IR: {e}"))?;
        optimized.set_driver_bytes(&driver, DRIVER)?;
        if let Some(Some(rule)) =
            first_observed(&mut subject.pool, &optimized, fill, &String::from_utf8_lossy(&driver))?
        {
            return Ok(Some(UndefinedFrom { limit, pass: last.name, rule }));
        }
    }
    Ok(None)
}

/// The loop whose kept trip count the reproducer leaves stale, as ScalarEvolution's
/// verifier prints it when the reproducer fails.
fn stale_loop(c: &Campaign, bug: &BugRow, file: &Path, pipeline: &str) -> Result<StaleLoop> {
    let mut subject = reproducer_subject(c, bug, file)?;
    let job = JobSpec { verify_each: c.config.verify_each, ..JobSpec::optimize(pipeline) };
    let run = subject.pool.run_one(&mut subject.module, &job)?;
    StaleLoop::from_verifier(&run.stderr)
        .with_context(|| format!("the reproducer's run printed no trip count of ScalarEvolution's ({:?})", run.outcome))
}

/// `file` loaded with the bug's options on the campaign's LLVM, with one child.
fn reproducer_subject(c: &Campaign, bug: &BugRow, file: &Path) -> Result<Subject> {
    let mut spec = SubjectSpec::new(file, &bugs::bug_options(c, bug)).with_llvm(&c.llvm)?;
    spec.driver = driver_beside(file);
    Subject::load(&spec, 1, c.config.limits())
}

/// The bug folder's generated driver, beside its program `file`.
fn driver_beside(file: &Path) -> Option<PathBuf> {
    Some(file.with_file_name(DRIVER)).filter(|d| d.is_file())
}

/// The bug's reproducer (`file` under `pipeline`, whose culprit is `culprit`) judged on
/// every LLVM the campaign knows.
fn fires_on(c: &Campaign, bug: &BugRow, kind: FailureKind, file: &Path, pipeline: &str, culprit: &str) -> Vec<FiresOn> {
    let source = &file.with_file_name("program.c");
    let driver = driver_beside(file);
    let reproducer = Reproducer {
        program: file,
        driver: driver.as_deref(),
        pipeline,
        kind,
        culprit,
        llvm_args: &bugs::bug_options(c, bug),
        verify_each: c.config.verify_each,
        limits: c.config.limits(),
        source: Some((source.as_path(), bug.reduced.as_str())).filter(|(s, _)| s.is_file()),
    };
    let (llvms, missing) = llvms(c);
    let mut fires = fires_on_each(&reproducer, &llvms);
    fires.extend(missing.into_iter().map(|(path, why)| FiresOn::unknown(path, why)));
    fires
}

/// The judge llvm-reduce calls: this failure under the reduced sequence, a crash
/// anywhere in the culprit counting, and for wrong code the program's own behaviour kept.
fn interesting(c: &Campaign, bug: &BugRow, kind: FailureKind, program: &Path) -> Result<Interesting> {
    let mut limits = c.config.limits();
    limits.exec_timeout = limits.exec_timeout.min(Duration::from_secs(5));
    let driver = driver_beside(program);
    let baseline = match kind {
        FailureKind::WrongCode => {
            let mut spec = SubjectSpec::new(program, &bugs::bug_options(c, bug)).with_llvm(&c.llvm)?;
            spec.driver = driver.clone();
            let mut subject = Subject::load(&spec, 1, limits)?;
            Some(Baseline::of(&mut subject.pool, &mut subject.module)?)
        }
        _ => None,
    };
    if let Some(b) = &baseline {
        limits.exec_timeout = b.exec_timeout(limits.exec_timeout);
    }
    Ok(Interesting {
        failure: Failure { kind, signature: bug.signature.clone() },
        pipeline: bug.reduced.clone(),
        verify_each: c.config.verify_each,
        llvm_args: bugs::bug_options(c, bug),
        limits,
        llvm: c.llvm.clone(),
        culprit: Some(bug.pass.clone()),
        baseline,
        keep_smallest: None,
        driver,
    })
}

/// Every LLVM the campaign knows: the one under test, the linked one, each --also-opt of
/// another version (Debian's opt-22 beside the linked 22 would say the same again); and
/// the --also-opts that cannot be run any more (uninstalled since), with why.
fn llvms(c: &Campaign) -> (Vec<Llvm>, Vec<(PathBuf, String)>) {
    let mut all = vec![Llvm::Linked];
    if c.llvm.external().is_some() {
        all.push(c.llvm.clone());
    }
    let mut missing = Vec::new();
    for path in &c.config.also_opt {
        match locate_also(path) {
            Ok(opt) if !all.iter().any(|o| o.version() == opt.version) => all.push(Llvm::External(opt)),
            Ok(_) => {}
            Err(e) => missing.push((path.clone(), format!("{e:#}"))),
        }
    }
    (all, missing)
}

/// An `--also-opt`, its errors named so.
pub(in crate::fuzz) fn locate_also(path: &Path) -> Result<ExternalOpt> {
    ExternalOpt::locate(path).map_err(|e| anyhow::anyhow!("{}", format!("{e:#}").replacen("--opt ", "--also-opt ", 1)))
}

/// `test.ll` and `lit.cfg` in `folder`, from the reproducer `file` when it is text IR.
fn write_lit_test(
    c: &Campaign,
    bug: &BugRow,
    kind: FailureKind,
    folder: &Path,
    file: &Path,
    pipeline: &str,
    culprit: &str,
) -> Result<()> {
    let Ok(ir) = std::fs::read_to_string(file) else { return Ok(()) };
    let what = format!("ctos bug {}: {} in {culprit} ({})", bug.dir, bug.kind, bug.signature);
    let header = lit_test::run_lines(kind, &what, &bugs::opt_line(c, bug, pipeline), bugs::has_driver(c, bug));
    let opt = match c.llvm.external() {
        Some(o) => o.opt.clone(),
        None => crate::llvm::linked_opt(),
    };
    lit_test::write(folder, header, &ir, &opt)
}
