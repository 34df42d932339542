//! `locseq isolate`: from one failing (program, sequence) to ranked LLVM source files.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::configs::ConfigSpace;
use super::culprit::{find_culprit, Culprit, CulpritMethod};
use super::evidence::FailingEvidence;
use super::files::FileFilter;
use super::functions::{
    function_evidence, rank_functions, step_functions, FunctionEvidence, FunctionRank, FunctionRule,
};
use super::ga::{GaParams, GeneTable};
use super::history::SearchHistory;
use super::rank::{culprit_files, rank, DirectEvidence, FileRank};
use super::record::{Budget, RecordSettings, Recorder, SearchStats, Witness};
use super::runner::Runner;
use super::sbfl::{Aggregate, Formula};
use super::sequence_search::{hang_limit_after, search, SearchSetup, Strategy};
use super::similarity::SimilarityFormula;
use super::transformation::{find_transformation, step_traces, Transformation};
use super::witness_programs::{search_programs, Evaluator, Guidance, ProgramInput, ProgramSearch};
use crate::coverage::{self, Coverage, Granularity, Sites, Spectrum};
use crate::llvm::{print_pipeline_passes, IrModule};
use crate::oracle::{observe, Failure, FailureKind, Observation, Oracle, ScriptOracle, Verdict};
use crate::program::{reference_execution, Screen};
use crate::sandbox::{Crash, ExecCache, ExecMode, JobSpec, Llvm, Outcome, Pool, Run};
use crate::seq::reduce::reduce;
use crate::seq::{Catalog, Pass, RenderOptions, Sequence};

/// How the failure under study is recognized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OracleMode {
    /// Whatever the buggy sequence shows, with its signature.
    Auto,
    Crash,
    InvalidIr,
    WrongCode,
    /// The optimizer does not end (a timeout).
    Hang,
    /// `SCRIPT OPT PIPELINE` exits 0 when the bug fires (the bench's `oracle.sh`).
    Script(PathBuf),
}

impl FromStr for OracleMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "auto" => OracleMode::Auto,
            "crash" => OracleMode::Crash,
            "invalid-ir" => OracleMode::InvalidIr,
            "wrong-code" => OracleMode::WrongCode,
            "hang" => OracleMode::Hang,
            _ => match s.strip_prefix("script:") {
                Some(path) if !path.is_empty() => OracleMode::Script(PathBuf::from(path)),
                _ => {
                    return Err(format!(
                        "unknown oracle '{s}' (auto, crash, invalid-ir, wrong-code, hang or script:PATH)"
                    ))
                }
            },
        })
    }
}

/// What part of a run its coverage trace records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum TraceScope {
    /// `culprit`, except for wrong code whose culprit is only the pass after which the
    /// wrong output first shows, with passes before it: `pipeline`, so that an earlier
    /// pass whose work the culprit exposed can rank.
    #[default]
    Auto,
    /// Only while the culprit pass runs: its run in the failing pipeline, every run of it
    /// in a candidate (candidates without it record nothing).
    Culprit,
    /// The whole pipeline (LocSeq).
    Pipeline,
}

#[derive(Debug, Clone)]
pub struct IsolateOptions {
    pub oracle: OracleMode,
    /// A regular expression the failure's message must match.
    pub pattern: Option<String>,
    pub reduce: bool,
    pub strategy: Strategy,
    pub ga: GaParams,
    pub budget: Budget,
    pub seed: u64,
    pub granularity: Granularity,
    pub trace: TraceScope,
    /// Mix configurations of the culprit pass into sequence searches.
    pub configs: bool,
    /// Count a crash's stack as evidence (see [`DirectEvidence::new`]).
    pub stack: bool,
    pub formula: Formula,
    pub aggregate: Aggregate,
    pub similarity: SimilarityFormula,
    pub evidence: FailingEvidence,
    pub near: f64,
    pub cut_error_reporting: bool,
    pub file_prefixes: Vec<String>,
    pub cpp_only: bool,
    pub render: RenderOptions,
    /// Catalog set new genes come from.
    pub candidates: String,
}

impl Default for IsolateOptions {
    fn default() -> Self {
        IsolateOptions {
            oracle: OracleMode::Auto,
            pattern: None,
            reduce: true,
            strategy: Strategy::Cga,
            ga: GaParams::default(),
            budget: Budget { time: Some(std::time::Duration::from_secs(120)), max_evals: None },
            seed: 1,
            granularity: Granularity::Blocks,
            trace: TraceScope::default(),
            configs: true,
            stack: true,
            formula: Formula::Ochiai,
            aggregate: Aggregate::Sum,
            similarity: SimilarityFormula::Product,
            evidence: FailingEvidence::One,
            near: 0.0,
            cut_error_reporting: true,
            file_prefixes: vec!["llvm/lib/".into()],
            cpp_only: true,
            render: RenderOptions::default(),
            candidates: "locseq".into(),
        }
    }
}

/// What checking [`IsolateOptions`] builds: the `--pattern` and the user's script.
pub struct CheckedOptions {
    pub pattern: Option<regex::Regex>,
    pub script: Option<ScriptOracle>,
}

impl IsolateOptions {
    /// Everything the options name must exist: the candidate set, a pattern that compiles,
    /// an executable oracle script (which will be given `llvm`'s `opt`). Cheap: call it
    /// before any work.
    pub fn check(&self, catalog: &Catalog, llvm: &Llvm) -> Result<CheckedOptions> {
        catalog.set(&self.candidates).context("--candidates")?;
        if self.strategy.mutates_programs() && matches!(self.oracle, OracleMode::Script(_)) {
            bail!(Inapplicable(format!(
                "--strategy {} mutates the program, but a script oracle tests its own program, not the mutants: \
                 use --oracle auto, crash, invalid-ir or wrong-code",
                self.strategy.name()
            )));
        }
        let pattern = match &self.pattern {
            Some(p) => {
                Some(regex::Regex::new(p).with_context(|| format!("--pattern '{p}' is not a regular expression"))?)
            }
            None => None,
        };
        let script = match &self.oracle {
            OracleMode::Script(path) => {
                Some(ScriptOracle::new(path.clone(), llvm.opt_path()).map_err(anyhow::Error::msg)?)
            }
            _ => None,
        };
        Ok(CheckedOptions { pattern, script })
    }
}

#[derive(Debug, Serialize)]
pub struct Isolation {
    pub failure: Failure,
    pub original: String,
    pub reduced: String,
    pub reduced_passes: usize,
    pub reduction_tests: usize,
    pub culprit: Option<Culprit>,
    /// The step of a debug counter inside the culprit's run after which it first fails.
    pub transformation: Option<Transformation>,
    /// The file of the culprit pass's `run` method: a ranking on its own (see `locseq eval`).
    pub culprit_file: Option<String>,
    pub notes: Vec<String>,
    /// Why some of the LLVM's code has no source file (inside an external `opt` without
    /// DWARF or a matching symbol table): those elements rank no file.
    pub unattributed: Option<String>,
    pub failing_elements: usize,
    pub failing_files: usize,
    /// Bug-free runs counted as passing evidence: the witnesses `--near` keeps.
    pub passing_evidence: u32,
    /// Printed as records of their own (`file`, `witness`), not in the summary.
    #[serde(skip)]
    pub ranking: Vec<FileRank>,
    /// Functions of the ranked files in one list, by [`FunctionRule::DEFAULT`] (printed
    /// as `function` records).
    #[serde(skip)]
    pub functions: Vec<FunctionRank>,
    /// Every covered function's evidence, for `locseq eval` to judge other rules on.
    #[serde(skip)]
    pub function_evidence: Vec<FunctionEvidence>,
    #[serde(skip)]
    pub witnesses: Vec<Witness>,
    pub stats: SearchStats,
    /// The search's counts over time, and the final top files' scores as evidence grew.
    pub history: SearchHistory,
    /// Wall seconds of each phase: reproduce, reduce, culprit, failing-trace, search, rank
    /// (a JSON object in that order).
    #[serde(serialize_with = "in_order")]
    pub seconds_by_phase: Vec<(&'static str, f64)>,
    pub seconds_total: f64,
    /// The driver ctos generated for a program without `main` (its wrong code shows only
    /// through one): every run of the isolation linked it; the front door keeps it.
    #[serde(skip)]
    pub generated_driver: Option<String>,
}

fn in_order<S: serde::Serializer>(pairs: &[(&'static str, f64)], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

impl Isolation {
    /// The seconds spent before the search: reproducing, reducing, finding the culprit
    /// and recording the failing trace.
    pub fn seconds_before_search(&self) -> f64 {
        self.seconds_by_phase.iter().take_while(|(p, _)| *p != "search").map(|(_, s)| s).sum()
    }
}

/// Why an isolation cannot be done on this input at all (the failure does not fire, the
/// strategy has nothing to vary): `locseq eval` skips such bugs with the reason.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Inapplicable(pub String);

/// What `isolate` reports while it works.
pub trait Progress {
    fn phase(&mut self, message: &str);
    fn search(&mut self, stats: &SearchStats);
}

/// The oracle for the failure `buggy` shows, or an error saying why there is none; the
/// top-level element the optimizer stopped in, if it stopped; and the driver generated for
/// a program without `main` whose failure is wrong code.
fn establish_oracle(
    runner: &mut Runner,
    buggy: &str,
    opts: &IsolateOptions,
    checked: CheckedOptions,
) -> Result<(Oracle, Option<usize>, Option<String>)> {
    let mut generated = None;
    if opts.oracle == OracleMode::WrongCode && !runner.module.has_main() && runner.module.for_host() {
        let text = generated_driver(runner, opts.seed).map_err(|why| {
            anyhow::anyhow!("a wrong-code oracle needs a main function ({why}): give one with --driver FILE.ll")
        })?;
        generated = Some(text);
    }
    let (oracle, element) = oracle_from_runs(runner, buggy, opts, checked, &mut generated)?;
    Ok((oracle, element, generated))
}

/// A driver generated for the runner's module (which has no `main`), from `seed`, set as
/// its driver; its text, or why there is none. Not for an external opt, whose agent holds
/// the program it started with.
fn generated_driver(runner: &mut Runner, seed: u64) -> std::result::Result<String, String> {
    if runner.pool.external_opt().is_some() {
        return Err("a driver generated now cannot reach an external opt: give one with --driver".into());
    }
    let (args, limits) = (runner.pool.llvm_args().to_vec(), *runner.pool.limits());
    let outcome = crate::program::driver::generate(runner.module, &args, limits, seed, crate::program::driver::FILLS)
        .map_err(|e| format!("{e:#}"))?;
    let driver = outcome.driver.map_err(|why| format!("ctos cannot generate a driver for it: {why}"))?;
    runner.module.set_driver_bytes(driver.text.as_bytes(), "driver.ll").map_err(|e| e.to_string())?;
    Ok(driver.text)
}

fn oracle_from_runs(
    runner: &mut Runner,
    buggy: &str,
    opts: &IsolateOptions,
    checked: CheckedOptions,
    generated: &mut Option<String>,
) -> Result<(Oracle, Option<usize>)> {
    let can_execute = runner.module.can_execute();
    let wants_execution = matches!(opts.oracle, OracleMode::Auto | OracleMode::WrongCode) && can_execute;
    if opts.oracle == OracleMode::WrongCode && !runner.module.has_main() {
        bail!("a wrong-code oracle needs a main function: give one with --driver FILE.ll");
    }
    if opts.oracle == OracleMode::WrongCode && !can_execute {
        bail!(
            "a wrong-code oracle runs the program, and programs execute on this host only ({}); this one is for {}",
            crate::llvm::host_triple(),
            runner.module.triple()
        );
    }
    let reference = if wants_execution { Some(reference_execution(runner.pool, runner.module)?) } else { None };
    runner.exec = if wants_execution { ExecMode::Always } else { ExecMode::Never };
    let run = runner.run(buggy, false)?;
    let failure = match observe(&run, reference.as_ref()) {
        Observation::Rejected => bail!("LLVM rejects the pipeline '{buggy}': {}", run.message.unwrap_or_default()),
        Observation::Misuse(needed) => bail!(Inapplicable(format!(
            "not a bug: LLVM says the pipeline '{buggy}' is wrong ({}): {needed}",
            run.message.unwrap_or_default()
        ))),
        Observation::Clean => None,
        Observation::Fails(f) => Some(f),
    };
    let CheckedOptions { pattern, script } = checked;
    if let Some(script) = &script {
        if !script.fires(buggy)? {
            bail!(Inapplicable(format!(
                "the failure does not reproduce: {} says the bug does not fire on {buggy}",
                script.script.display()
            )));
        }
        runner.exec = ExecMode::Never;
    }
    let expected = match (&opts.oracle, failure) {
        (OracleMode::Script(_), f) => {
            f.unwrap_or(Failure { kind: FailureKind::WrongCode, signature: "the interestingness test fires".into() })
        }
        // IR without `main` whose optimizer runs cleanly: its bug may be wrong code, which
        // a generated driver shows.
        (OracleMode::Auto, None)
            if generated.is_none() && !runner.module.has_main() && runner.module.for_host() && script.is_none() =>
        {
            if let Ok(text) = generated_driver(runner, opts.seed) {
                *generated = Some(text);
                let checked = CheckedOptions { pattern, script };
                return oracle_from_runs(runner, buggy, opts, checked, generated);
            }
            bail!(Inapplicable(format!("the failure does not reproduce: '{buggy}' runs cleanly")))
        }
        (_, None) => {
            bail!(Inapplicable(format!(
                "the failure does not reproduce: '{buggy}' runs cleanly{}",
                if wants_execution { " and the program prints what the unoptimized one prints" } else { "" }
            )))
        }
        (OracleMode::Auto, Some(f)) => f,
        (mode, Some(f)) => {
            let wanted = match mode {
                OracleMode::Crash => FailureKind::Crash,
                OracleMode::InvalidIr => FailureKind::InvalidIr,
                OracleMode::Hang => FailureKind::Timeout,
                _ => FailureKind::WrongCode,
            };
            // A pattern says which failure is meant, whatever its kind: users call an
            // `LLVM ERROR` a crash, and a bug folder of type crash may name one.
            let named = pattern.as_ref().is_some_and(|re| crate::oracle::pattern_matches(re, &run));
            if f.kind != wanted && !named {
                let hint = match &pattern {
                    Some(_) => " (nor does it match the pattern)",
                    None => "",
                };
                bail!("expected a {} failure, but the run shows {f}{hint}", wanted.as_str());
            }
            f
        }
    };
    let oracle = Oracle { expected, reference, pattern, script, crash_in: None, fault_in: None };
    if oracle.judge(&run, buggy)? != Verdict::Same {
        bail!(Inapplicable("the failure does not reproduce: the run does not match --pattern".into()));
    }
    Ok((oracle, run.failed_in_element))
}

/// What the sequence search and the program search may each spend: mixed halves the
/// budget, the others give it all to one.
fn split_budget(strategy: Strategy, budget: Budget) -> (Option<Budget>, Option<Budget>) {
    match (strategy.varies_sequences(), strategy.mutates_programs()) {
        (false, _) => (None, Some(budget)),
        (true, true) => {
            let half = Budget { time: budget.time.map(|t| t / 2), max_evals: budget.max_evals.map(|m| m.div_ceil(2)) };
            (Some(half), Some(half))
        }
        (true, false) => (Some(budget), None),
    }
}

/// `job`'s run when it fails as expected. A nondeterministic failure may need a few tries
/// to show again.
fn failing_run(runner: &mut Runner, oracle: &Oracle, job: JobSpec) -> Result<Option<Run>> {
    for _ in 0..3 {
        let run = runner.run_all(vec![job.clone()])?.pop().expect("one run");
        if oracle.judge(&run, &job.pipeline)? == Verdict::Same {
            return Ok(Some(run));
        }
    }
    Ok(None)
}

fn genes_and_table(reduced: &Sequence, catalog: &Catalog, candidates: &str) -> Result<(Vec<Pass>, GeneTable)> {
    let mut genes: Vec<Pass> = Vec::new();
    let index = |p: &Pass, genes: &mut Vec<Pass>| -> u16 {
        match genes.iter().position(|g| g == p) {
            Some(i) => i as u16,
            None => {
                genes.push(p.clone());
                (genes.len() - 1) as u16
            }
        }
    };
    let buggy: Vec<u16> = reduced.passes().into_iter().map(|p| index(p, &mut genes)).collect();
    let candidate_passes = catalog.set(candidates)?;
    let candidates: Vec<u16> = candidate_passes.iter().map(|p| index(p, &mut genes)).collect();
    Ok((genes, GeneTable::new(buggy, candidates)))
}

/// Wall seconds per phase, in the order the phases ran.
struct Clock {
    started: Instant,
    phases: Vec<(&'static str, f64)>,
    since: Instant,
}

impl Clock {
    fn start() -> Clock {
        let now = Instant::now();
        Clock { started: now, phases: Vec::new(), since: now }
    }

    fn lap(&mut self, phase: &'static str) {
        let now = Instant::now();
        self.phases.push((phase, now.duration_since(self.since).as_secs_f64()));
        self.since = now;
    }
}

/// A timeout failure (the optimizer hangs): how long a candidate may run before it counts
/// as hanging. Five times what the failing sequence takes without the element that hung,
/// at least a second, at most the pool's limit; the pool's limit is what a run takes when
/// it hangs, and a search whose every candidate hangs that long learns nothing in time.
fn hang_limit(runner: &mut Runner, failing: &str, hung_in: Option<usize>) -> Result<Option<Duration>> {
    let elements = crate::seq::top_level_elements(failing);
    let Some(hung) = hung_in.filter(|&e| e < elements.len()) else { return Ok(None) };
    let rest: Vec<&str> = elements.iter().enumerate().filter(|&(i, _)| i != hung).map(|(_, e)| *e).collect();
    // One element of many passes (default<O2>, function(a,b,c)): the rest cannot be
    // measured apart from the pass that hung; the culprit's per-pass pipeline can.
    let element = elements[hung];
    if rest.is_empty() && (element.contains(',') || ["default<", "lto"].iter().any(|p| element.contains(p))) {
        return Ok(None);
    }
    let run = runner.run(&rest.join(","), false)?;
    if run.outcome != Outcome::Ok {
        return Ok(None);
    }
    let limit = hang_limit_after(run.opt_millis).max(Duration::from_secs(1));
    Ok(Some(limit.min(runner.pool.limits().opt_timeout)))
}

/// Cut candidates of a hang bug at [`hang_limit`], when it can be measured; the limit.
fn limit_hangs(
    runner: &mut Runner,
    failing: &str,
    hung_in: Option<usize>,
    notes: &mut Vec<String>,
) -> Result<Option<Duration>> {
    let Some(limit) = hang_limit(runner, failing, hung_in)? else { return Ok(None) };
    runner.pool.set_opt_timeout(limit);
    notes.retain(|n| !n.starts_with(HANG_NOTE));
    notes.push(format!(
        "{HANG_NOTE} {:.1} s counts as hanging (5 times the sequence without the pass that hung; raised to 5 \
         times the slowest bug-free run)",
        limit.as_secs_f64()
    ));
    Ok(Some(limit))
}

/// Where the failing run loops, innermost first, as the child reported when asked at its
/// limit: the first thing an engineer looks at, and the stack evidence of the ranking.
fn hang_stack_note(crash: Option<&Crash>) -> String {
    match crash.filter(|c| !c.frames.is_empty()) {
        Some(c) => format!(
            "the failing run was stopped in {}",
            c.frames.iter().take(6).cloned().collect::<Vec<_>>().join(" ← ")
        ),
        None => "the failing run reported no LLVM frame of its stack when stopped: no file ranks by the stack".into(),
    }
}

const HANG_NOTE: &str = "the optimizer hangs: a candidate that runs longer than";

/// The limit of the first run of the failing sequence when the failure may be a hang (the
/// oracle is `auto` or `hang`): a sixth of the time budget, at least 2 s, at most the
/// pool's limit; None when the pool's limit is already that short or there is no budget.
fn first_run_cap(opts: &IsolateOptions, pool_limit: Duration) -> Option<Duration> {
    if !matches!(opts.oracle, OracleMode::Auto | OracleMode::Hang) {
        return None;
    }
    let cap = (opts.budget.time? / 6).max(Duration::from_secs(2));
    (cap < pool_limit).then_some(cap)
}

/// Expand `default<Ox>` and remove passes while the failure stays, until `deadline`.
fn reduce_sequence(
    runner: &mut Runner,
    oracle: &Oracle,
    buggy: &Sequence,
    opt: &Path,
    opts: &IsolateOptions,
    deadline: Option<Instant>,
    notes: &mut Vec<String>,
) -> Result<Sequence> {
    let catalog = runner.catalog;
    let mut current = buggy.clone();
    let expanded =
        buggy.expand_pipelines(catalog, &mut |p| print_pipeline_passes(opt, p)).map_err(anyhow::Error::msg)?;
    if expanded != *buggy {
        let text = runner.text(&expanded)?;
        let run = runner.run(&text, false)?;
        if oracle.judge(&run, &text)? == Verdict::Same {
            current = expanded;
        } else {
            notes.push("the expanded pipeline does not fail the same way; kept it unexpanded".into());
        }
    }
    if opts.reduce {
        let mut broken: Option<anyhow::Error> = None;
        let mut out_of_time = false;
        let mut fails = |candidate: &Sequence| -> bool {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                out_of_time = true;
                return false;
            }
            let Ok(text) = runner.text(candidate) else { return false };
            let verdict = runner.run(&text, false).and_then(|run| oracle.judge(&run, &text));
            match verdict {
                Ok(v) => v == Verdict::Same,
                Err(e) => {
                    broken.get_or_insert(e);
                    false
                }
            }
        };
        current = reduce(&current, &mut fails);
        let flat = current.flattened();
        if flat != current && fails(&flat) {
            current = flat;
        }
        if let Some(e) = broken {
            return Err(e.context("reducing the failing sequence"));
        }
        if out_of_time {
            notes.push(format!(
                "reduction stopped at half of --time with {} passes left, to leave the search the other half",
                current.len()
            ));
        }
    }
    if !current.is_flat() {
        notes.push("the reduced sequence needs its adaptors; candidates render its passes flat".into());
    }
    Ok(current)
}

/// The failing run's coverage and what the ranking takes from it.
struct FailingTrace {
    coverage: Coverage,
    filter: FileFilter,
    /// Restricted to the files ranked.
    spectrum: Spectrum,
    direct: DirectEvidence,
    /// The file of the culprit's `run` method.
    culprit_file: Option<String>,
    /// Whether traces record the culprit pass alone (else whole pipelines).
    focused: bool,
}

fn record_failing_trace(
    runner: &mut Runner,
    oracle: &Oracle,
    culprit: Option<&Culprit>,
    transformation: Option<&Transformation>,
    reduced: &str,
    opts: &IsolateOptions,
    notes: &mut Vec<String>,
) -> Result<FailingTrace> {
    let triple = runner.module.triple();
    let coverage = Coverage::arm_for(runner.pool, opts.granularity, Some(&triple))?;
    let sites = coverage.sites;
    let filter = FileFilter::new(sites, &opts.file_prefixes, opts.cpp_only);
    let culprit_file = culprit.and_then(|c| c.class.as_deref()).and_then(|c| sites.attribution.file_of_pass(c));
    let exposed_only = culprit.is_some_and(|c| c.method == CulpritMethod::Prefixes && c.position > 1);
    let mut focus = culprit.filter(|_| match opts.trace {
        TraceScope::Culprit => true,
        TraceScope::Auto => !exposed_only,
        TraceScope::Pipeline => false,
    });
    if let (TraceScope::Auto, Some(c), true) = (opts.trace, culprit, exposed_only) {
        notes.push(format!(
            "the wrong output first shows after {}, and {} passes ran before it: traces cover whole pipelines, so \
             that an earlier pass's code can rank",
            c.pass,
            c.position - 1
        ));
    }
    let mut run = None;
    if let Some(c) = focus {
        let job = JobSpec { observe: true, focus: Some(c.focus_here()), ..runner.job(&c.pipeline) };
        run = failing_run(runner, oracle, job)?.filter(|r| r.trace.as_ref().is_some_and(|t| !t.is_empty()));
        if run.is_none() {
            notes.push(format!("no coverage recorded while {} ran; traces cover whole pipelines", c.name));
            focus = None;
        }
    }
    if run.is_none() {
        let job = JobSpec { observe: true, ..runner.job(reduced) };
        run = failing_run(runner, oracle, job)?;
    }
    let run = run.context("the reduced sequence stopped failing when run with coverage")?;
    let trace = run.trace.as_deref().unwrap_or_default();
    let full = Spectrum::from_failing_trace(trace, sites, opts.cut_error_reporting);
    let spectrum = filter.restrict(&full, sites);
    if run.outcome == Outcome::Timeout {
        notes.push(hang_stack_note(run.crash.as_ref()));
    }
    let stack = match (&run.crash, opts.stack) {
        (Some(crash), true) => crash.stack.as_slice(),
        _ => &[],
    };
    let class = culprit.and_then(|c| c.class.as_deref());
    let culprits = culprit_files(class, culprit_file.as_deref(), &spectrum, sites);
    let mut direct = DirectEvidence::new(culprits, stack, sites, &spectrum);
    direct.wrong_output = oracle.expected.kind == FailureKind::WrongCode;
    if let Some(t) = transformation {
        let focus = focus.map(Culprit::focus_here);
        direct.step = step_elements(runner, oracle, t, focus, sites, &filter, opts.cut_error_reporting)?;
        if direct.step.is_none() {
            notes.push(format!("no coverage of {t} alone: its run and the one a step short did not end as before"));
        }
    }
    // From here on only the sites that can change what the searches compute stay armed.
    let every_element = opts.similarity == SimilarityFormula::Jaccard;
    let counted = filter.sites_that_count(sites, &spectrum, every_element, opts.cut_error_reporting);
    coverage.narrow_for(runner.pool, |s| counted[s as usize])?;
    Ok(FailingTrace { coverage, filter, spectrum, direct, culprit_file, focused: focus.is_some() })
}

/// Functions of the failing step's code a report names.
const STEP_FUNCTIONS: usize = 5;

/// The restricted elements of the step's run that the run one step short did not cover.
fn step_elements(
    runner: &mut Runner,
    oracle: &Oracle,
    t: &Transformation,
    focus: Option<crate::sandbox::Focus>,
    sites: &Sites,
    filter: &FileFilter,
    cut_error_reporting: bool,
) -> Result<Option<Vec<u32>>> {
    let Some((with, without)) = step_traces(runner, oracle, t, focus)? else { return Ok(None) };
    let with = filter.restrict(&Spectrum::from_failing_trace(&with, sites, cut_error_reporting), sites);
    let without = filter.restrict(&Spectrum::from_trace(&without, sites), sites);
    Ok(Some(with.elements.into_iter().filter(|e| without.elements.binary_search(e).is_err()).collect()))
}

/// `program` is the failing program as written (C or IR): the witness-program strategies
/// mutate it. `opts.budget.time` bounds the whole isolation: reduction stops at half of
/// it, and the search takes what is left.
#[allow(clippy::too_many_arguments)]
pub fn isolate(
    pool: &mut Pool,
    module: &mut IrModule,
    program: Option<&ProgramInput>,
    buggy: &Sequence,
    catalog: &Catalog,
    opts: &IsolateOptions,
    progress: &mut dyn Progress,
) -> Result<Isolation> {
    let mut clock = Clock::start();
    let llvm = pool.llvm();
    let checked = opts.check(catalog, &llvm)?;
    if opts.strategy.mutates_programs() && program.is_none() {
        bail!("--strategy {} mutates the program, and none was given", opts.strategy.name());
    }
    // The agent in an external opt reads its one program when it starts: a mutant would
    // not reach it.
    if opts.strategy.mutates_programs() && pool.external_opt().is_some() {
        bail!(Inapplicable(format!(
            "--strategy {} runs mutants of the program, which an external opt (--opt) cannot be given yet: \
             use the linked LLVM, or a sequence strategy",
            opts.strategy.name()
        )));
    }
    // Reproduction and reduction need no coverage: run them without breakpoints.
    coverage::disarm_for(pool)?;
    let pool_limit = pool.limits().opt_timeout;
    let mut runner = Runner {
        pool,
        module,
        catalog,
        render: opts.render,
        exec: ExecMode::Never,
        verify: Default::default(),
        cache: ExecCache::default(),
        tests: 0,
    };
    let original = runner.text(buggy)?;
    progress.phase(&format!("reproducing the failure of {original}"));
    // A hang would spend the pool's whole limit on this one run: first cut it where the
    // budget can afford it (see hang_limit), when the failure may be a hang.
    let first_cap = first_run_cap(opts, pool_limit);
    if let Some(cap) = first_cap {
        runner.pool.set_opt_timeout(cap);
    }
    let (mut oracle, hung_in, generated_driver) = establish_oracle(&mut runner, &original, opts, checked)?;
    runner.pool.set_opt_timeout(pool_limit);
    runner.verify = oracle.verify_each();
    let mut notes = Vec::new();
    if oracle.expected.kind == FailureKind::Timeout {
        let measured = limit_hangs(&mut runner, &original, hung_in, &mut notes)?;
        match (first_cap, measured) {
            // Cut before what counts as hanging: it must hang that long too.
            (Some(cap), Some(limit)) if limit > cap => {
                let run = runner.run(&original, false)?;
                if oracle.judge(&run, &original)? != Verdict::Same {
                    bail!(Inapplicable(format!(
                        "the failure does not reproduce: '{original}' ends within {:.1} s, 5 times the sequence \
                         without the pass that was running",
                        limit.as_secs_f64()
                    )));
                }
            }
            // Not measurable yet (one element of many passes): the culprit's pipeline will be.
            (Some(cap), None) => {
                runner.pool.set_opt_timeout(cap);
            }
            _ => {}
        }
    }
    clock.lap("reproduce");
    let cap = (oracle.expected.kind == FailureKind::Timeout).then_some(pool_limit);
    let result =
        isolate_reproduced(&mut runner, &mut oracle, program, buggy, &original, opts, progress, notes, &mut clock, cap);
    // The pool outlives this isolation (locseq eval runs several on one).
    runner.pool.set_opt_timeout(pool_limit);
    let mut isolation = result?;
    isolation.generated_driver = generated_driver;
    isolation.seconds_by_phase = clock.phases;
    isolation.seconds_total = clock.started.elapsed().as_secs_f64();
    Ok(isolation)
}

/// Everything after the failure is reproduced, each phase lapped on `clock`.
#[allow(clippy::too_many_arguments)]
fn isolate_reproduced(
    runner: &mut Runner,
    oracle: &mut Oracle,
    program: Option<&ProgramInput>,
    buggy: &Sequence,
    original: &str,
    opts: &IsolateOptions,
    progress: &mut dyn Progress,
    mut notes: Vec<String>,
    clock: &mut Clock,
    hang_limit_cap: Option<Duration>,
) -> Result<Isolation> {
    let opt = runner.pool.llvm().opt_path();
    let deadline = opts.budget.time.map(|t| clock.started + t);
    let reduce_until = opts.budget.time.map(|t| clock.started + t / 2);
    progress.phase(&format!("reducing {} passes", buggy.len()));
    let current = reduce_sequence(runner, oracle, buggy, &opt, opts, reduce_until, &mut notes)?;
    let reduced = runner.text(&current)?;
    let reduction_tests = runner.tests;
    clock.lap("reduce");

    progress.phase("finding the culprit pass");
    let culprit = match find_culprit(runner, oracle, &current)? {
        Ok(c) => {
            oracle.crash_in = Some(c.name.clone());
            // A hang whose limit the failing pipeline could not tell: the per-pass one can.
            if hang_limit_cap.is_some() && !notes.iter().any(|n| n.starts_with(HANG_NOTE)) {
                limit_hangs(runner, &c.pipeline, Some(c.element), &mut notes)?;
            }
            Some(c)
        }
        Err(why) => {
            notes.push(format!("no culprit pass: {why}"));
            None
        }
    };
    clock.lap("culprit");

    let mut transformation = None;
    // Each run of a hang or a memory blow-up burns its limit, and a counter bisection is
    // tens of runs: the time budget is the search's.
    let exhausts = matches!(oracle.expected.kind, FailureKind::Timeout | FailureKind::Oom);
    if exhausts && culprit.is_some() {
        notes.push("no transformation named: each run of this failure takes its whole limit".into());
    }
    if let Some(c) = culprit.as_ref().filter(|_| !exhausts) {
        progress.phase("bisecting the culprit's debug counters");
        match find_transformation(runner, oracle, c)? {
            Ok(t) => transformation = Some(t),
            Err(why) => notes.push(format!("no transformation named: {why}")),
        }
        clock.lap("transformation");
    }

    progress.phase("recording the failing run's coverage");
    let trace =
        record_failing_trace(runner, oracle, culprit.as_ref(), transformation.as_ref(), &reduced, opts, &mut notes)?;
    clock.lap("failing-trace");

    let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
    let budget = Budget { time: left, max_evals: opts.budget.max_evals };
    let (mut result, mut history) = search_witnesses(
        runner,
        oracle,
        program,
        &current,
        &reduced,
        culprit.as_ref(),
        transformation.as_ref(),
        &trace,
        opts,
        budget,
        hang_limit_cap,
        progress,
        &mut notes,
    )?;
    clock.lap("search");

    let sites = trace.coverage.sites;
    let mut ranking = rank(&result.evidence, sites, opts.formula, opts.aggregate, &trace.direct);
    let function_evidence = function_evidence(&result.evidence, sites, opts.formula, &ranking, &trace.direct);
    let functions = rank_functions(&function_evidence, FunctionRule::DEFAULT);
    if let Some(t) = transformation.as_mut() {
        let ran = step_functions(&function_evidence).into_iter().take(STEP_FUNCTIONS);
        t.code = ran.map(|f| (f.name.clone(), f.in_step.unwrap_or(0))).collect();
    }
    for file in &mut ranking {
        let of_file = functions.iter().filter(|f| f.evidence.file == file.path);
        file.top_functions = of_file.take(3).map(|f| f.evidence.name.clone()).collect();
    }
    history.finish(&result.stats);
    result.evidence.snapshot();
    history.follow_scores(&result.evidence, &ranking, sites, opts.formula, opts.aggregate, &trace.direct);
    notes.extend(witness_notes(opts.strategy, &result.stats));
    let mut witnesses = result.witnesses;
    witnesses.sort_by(|a, b| b.similarity.total_cmp(&a.similarity));
    clock.lap("rank");
    Ok(Isolation {
        failure: oracle.expected.clone(),
        original: original.to_string(),
        reduced_passes: current.len(),
        reduced,
        reduction_tests,
        culprit,
        transformation,
        culprit_file: trace.culprit_file.clone(),
        notes,
        unattributed: sites.attribution.unattributed_note.clone(),
        failing_elements: trace.spectrum.len(),
        failing_files: trace.spectrum.files.len(),
        passing_evidence: result.evidence.passing,
        ranking,
        functions,
        function_evidence,
        witnesses,
        stats: result.stats,
        history,
        seconds_by_phase: Vec::new(),
        seconds_total: 0.0,
        generated_driver: None,
    })
}

/// What the ranking rests on when the search found no witness of the kind it looked for.
fn witness_notes(strategy: Strategy, stats: &SearchStats) -> Option<String> {
    let sequences = strategy.varies_sequences();
    if stats.passing == stats.passing_configs && strategy != Strategy::Configs && sequences {
        let ties = if stats.passing == 0 {
            "the culprit pass's files rank first and the others by how much of the failing run they cover"
        } else {
            "only configurations of the culprit are witnesses"
        };
        return Some(format!(
            "no bug-free sequence found, so {ties}; {}",
            if strategy.constrained() {
                "every candidate keeps the failing passes: try --strategy cga-wc, which drops that constraint"
            } else {
                "try a longer --time"
            }
        ));
    }
    (!sequences && stats.passing == 0).then(|| {
        "no bug-free mutant found, so files rank by how much of the failing run they cover; try a longer --time, \
         or --strategy mixed to add sequence witnesses"
            .to_string()
    })
}

/// The sequence search, the program search, or both (mixed), into one spectrum.
#[allow(clippy::too_many_arguments)]
fn search_witnesses<'t>(
    runner: &mut Runner,
    oracle: &Oracle,
    program: Option<&ProgramInput>,
    current: &Sequence,
    reduced: &str,
    culprit: Option<&Culprit>,
    transformation: Option<&Transformation>,
    trace: &'t FailingTrace,
    opts: &IsolateOptions,
    budget: Budget,
    hang_limit_cap: Option<Duration>,
    progress: &mut dyn Progress,
    notes: &mut Vec<String>,
) -> Result<(Recorder<'t>, SearchHistory)> {
    let catalog = runner.catalog;
    let focus = culprit.filter(|_| trace.focused);
    let sites = trace.coverage.sites;
    let (genes, table) = genes_and_table(current, catalog, &opts.candidates)?;
    let sequences = opts.strategy.varies_sequences();
    let space = match culprit {
        Some(c) if sequences && (opts.configs || opts.strategy == Strategy::Configs) => {
            match crate::llvm::opt_hidden_options(&runner.pool.llvm().opt_path()) {
                Ok(help) => Some(ConfigSpace::new(current, c, catalog, &help, runner.pool.llvm_args())),
                Err(e) => {
                    notes.push(format!("no configurations: {e}"));
                    None
                }
            }
        }
        _ => None,
    };
    if opts.strategy == Strategy::Configs && space.as_ref().is_none_or(|s| s.dimensions() == 0) {
        bail!(Inapplicable(
            "--strategy configs needs a culprit pass with parameters or knobs to vary, and there is none".into(),
        ));
    }
    let mut setup = SearchSetup {
        pool: runner.pool,
        module: runner.module,
        coverage: trace.coverage,
        oracle,
        catalog,
        render: opts.render,
        focus: focus.map(Culprit::focus_anywhere),
        configs: space.as_ref(),
        hang_limit_cap,
        first: transformation.map(Transformation::one_short).into_iter().collect(),
    };
    let mut recorder = Recorder::new(RecordSettings {
        sites,
        filter: &trace.filter,
        failing: &trace.spectrum,
        similarity: opts.similarity,
        evidence: opts.evidence,
        near: opts.near,
        cut_error_reporting: opts.cut_error_reporting,
    });
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let (sequence_budget, program_budget) = split_budget(opts.strategy, budget);
    let strategy_name = if opts.strategy == Strategy::Mixed { Strategy::Cga } else { opts.strategy };
    if sequence_budget.is_some() {
        progress.phase(&format!("searching ({strategy_name:?}, {} genes)", genes.len()));
    }
    // About a hundred points over the budget; a search bounded by evaluations only, one a second.
    let gap = budget.time.map_or(1.0, |t| (t.as_secs_f64() / 100.0).clamp(0.05, 60.0));
    let mut history = SearchHistory::default();
    let mut report = |s: &SearchStats, progress: &mut dyn Progress| {
        history.record(s, gap);
        progress.search(s);
    };
    if let Some(budget) = sequence_budget {
        report(&SearchStats::default(), progress);
        let r = &mut recorder;
        search(&mut setup, r, genes, &table, strategy_name, opts.ga, budget, &mut rng, &mut |s| report(s, progress))?;
    }
    if let (Some(budget), Some(program)) = (program_budget, program) {
        let guidance = if opts.strategy == Strategy::Diwi { Guidance::Diwi } else { Guidance::Recbi };
        progress.phase(&format!("mutating the program ({guidance:?})"));
        let mutator = program.mutator(guidance == Guidance::Recbi)?;
        let (pipeline, focus) = match focus {
            Some(c) => (c.pipeline.clone(), Some(c.focus_here())),
            None => (reduced.to_string(), None),
        };
        let mut search = ProgramSearch {
            evaluator: Evaluator {
                pool: setup.pool,
                input: program,
                pipeline,
                focus,
                oracle,
                screen: Screen { clang: program.frontend.clang.clone(), ..Screen::default() },
                scratch: tempfile::Builder::new().prefix("ctos-mutants-").tempdir()?,
                seconds: Default::default(),
            },
            mutator: mutator.as_ref(),
            guidance,
            budget,
        };
        search_programs(&mut search, &mut recorder, &mut rng, &mut |s| report(s, progress))?;
    }
    Ok((recorder, history))
}
