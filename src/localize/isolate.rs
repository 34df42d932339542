//! `locseq isolate`: from one failing (program, sequence) to ranked LLVM source files.

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::configs::ConfigSpace;
use super::culprit::{find_culprit, Culprit};
use super::evidence::Evidence;
use super::evidence::FailingEvidence;
use super::files::FileFilter;
use super::ga::{GaParams, GeneTable};
use super::history::SearchHistory;
use super::programs::{search_programs, Evaluator, Guidance, ProgramInput, ProgramSearch};
use super::rank::{rank, stack_evidence, FileRank};
use super::runner::Runner;
use super::sbfl::{Aggregate, Formula};
use super::search::{search, Budget, SearchResult, SearchSetup, SearchStats, Strategy, Witness};
use super::similarity::SimilarityFormula;
use crate::coverage::{self, Coverage, Granularity, Spectrum};
use crate::llvm::{print_pipeline_passes, IrModule};
use crate::oracle::{observe, Failure, FailureKind, Observation, Oracle, ScriptOracle, Verdict};
use crate::program::{reference_execution, Screen};
use crate::sandbox::{ExecCache, ExecMode, JobSpec, Pool, Run};
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
            _ => match s.strip_prefix("script:") {
                Some(path) if !path.is_empty() => OracleMode::Script(PathBuf::from(path)),
                _ => return Err(format!("unknown oracle '{s}' (auto, crash, invalid-ir, wrong-code or script:PATH)")),
            },
        })
    }
}

/// What part of a run its coverage trace records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum TraceScope {
    /// Only while the culprit pass runs: its run in the failing pipeline, every run of it
    /// in a candidate (candidates without it record nothing).
    #[default]
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
    /// Count a crash's stack as evidence (see [`super::rank::stack_evidence`]).
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
    /// an executable oracle script. Cheap: call it before any work.
    pub fn check(&self, catalog: &Catalog) -> Result<CheckedOptions> {
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
            OracleMode::Script(path) => Some(ScriptOracle::new(path.clone()).map_err(anyhow::Error::msg)?),
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
    /// The file of the culprit pass's `run` method: a ranking on its own (see `locseq eval`).
    pub culprit_file: Option<String>,
    pub notes: Vec<String>,
    /// Why some of the LLVM's code has no source file (inside an external `opt` without
    /// DWARF or a matching symbol table): those elements rank no file.
    pub unattributed: Option<String>,
    pub failing_elements: usize,
    pub failing_files: usize,
    /// Printed as records of their own (`file`, `witness`), not in the summary.
    #[serde(skip)]
    pub ranking: Vec<FileRank>,
    #[serde(skip)]
    pub witnesses: Vec<Witness>,
    pub stats: SearchStats,
    /// The search's counts over time, and the final top files' scores as evidence grew.
    pub history: SearchHistory,
    pub seconds_reproduce_and_reduce: f64,
    pub seconds_total: f64,
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

/// The oracle for the failure `buggy` shows, or an error saying why there is none.
fn establish_oracle(
    runner: &mut Runner,
    buggy: &str,
    opts: &IsolateOptions,
    checked: CheckedOptions,
) -> Result<Oracle> {
    let can_execute = runner.module.has_main();
    let wants_execution = matches!(opts.oracle, OracleMode::Auto | OracleMode::WrongCode) && can_execute;
    if opts.oracle == OracleMode::WrongCode && !can_execute {
        bail!("a wrong-code oracle needs a main function: give one with --driver FILE.ll");
    }
    let reference = if wants_execution { Some(reference_execution(runner.pool, runner.module)?) } else { None };
    runner.exec = if wants_execution { ExecMode::Always } else { ExecMode::Never };
    let run = runner.run(buggy, false)?;
    let failure = match observe(&run, reference.as_ref()) {
        Observation::Rejected => bail!("LLVM rejects the pipeline '{buggy}': {}", run.message.unwrap_or_default()),
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
                _ => FailureKind::WrongCode,
            };
            if f.kind != wanted {
                bail!("expected a {} failure, but the run shows {f}", wanted.as_str());
            }
            f
        }
    };
    let oracle = Oracle { expected, reference, pattern, script };
    if oracle.judge(&run, buggy)? != Verdict::Same {
        bail!(Inapplicable("the failure does not reproduce: the run does not match --pattern".into()));
    }
    Ok(oracle)
}

/// What the sequence search and the program search may each spend: mixed halves the
/// budget, the others give it all to one.
fn split_budget(strategy: Strategy, budget: Budget) -> (Option<Budget>, Option<Budget>) {
    match strategy {
        Strategy::Diwi | Strategy::Recbi => (None, Some(budget)),
        Strategy::Mixed => {
            let half = Budget { time: budget.time.map(|t| t / 2), max_evals: budget.max_evals.map(|m| m.div_ceil(2)) };
            (Some(half), Some(half))
        }
        _ => (Some(budget), None),
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

/// `program` is the failing program as written (C or IR): the witness-program strategies
/// mutate it.
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
    let started = Instant::now();
    let mut checked = opts.check(catalog)?;
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
    let opt = pool.opt_path();
    if let Some(script) = checked.script.as_mut() {
        script.opt = opt.clone();
    }
    // Reproduction and reduction need no coverage: run them without breakpoints.
    coverage::disarm_for(pool)?;
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
    let oracle = establish_oracle(&mut runner, &original, opts, checked)?;
    runner.verify = oracle.verify_each();
    let mut notes = Vec::new();
    let mut current = buggy.clone();

    let expanded =
        buggy.expand_pipelines(catalog, &mut |p| print_pipeline_passes(&opt, p)).map_err(anyhow::Error::msg)?;
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
        progress.phase(&format!("reducing {} passes", current.len()));
        let mut broken: Option<anyhow::Error> = None;
        let mut fails = |candidate: &Sequence| -> bool {
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
    }
    if !current.is_flat() {
        notes.push("the reduced sequence needs its adaptors; candidates render its passes flat".into());
    }
    let reduced = runner.text(&current)?;
    let reduction_tests = runner.tests;
    progress.phase("finding the culprit pass");
    let culprit = match find_culprit(&mut runner, &oracle, &current)? {
        Ok(c) => Some(c),
        Err(why) => {
            notes.push(format!("no culprit pass: {why}"));
            None
        }
    };
    let seconds_reproduce_and_reduce = started.elapsed().as_secs_f64();

    progress.phase("recording the failing run's coverage");
    let coverage = Coverage::arm_for(runner.pool, opts.granularity)?;
    let sites = coverage.sites;
    let filter = FileFilter::new(sites, &opts.file_prefixes, opts.cpp_only);
    let culprit_file =
        culprit.as_ref().and_then(|c| c.class.as_deref()).and_then(|c| sites.attribution.file_of_pass(c));
    let mut focus = culprit.as_ref().filter(|_| opts.trace == TraceScope::Culprit);
    let mut run = None;
    if let Some(c) = focus {
        let job = JobSpec { observe: true, focus: Some(c.focus_here()), ..runner.job(&c.pipeline) };
        run = failing_run(&mut runner, &oracle, job)?.filter(|r| r.trace.as_ref().is_some_and(|t| !t.is_empty()));
        if run.is_none() {
            notes.push(format!("no coverage recorded while {} ran; traces cover whole pipelines", c.name));
            focus = None;
        }
    }
    if run.is_none() {
        let job = JobSpec { observe: true, ..runner.job(&reduced) };
        run = failing_run(&mut runner, &oracle, job)?;
    }
    let run = run.context("the reduced sequence stopped failing when run with coverage")?;
    let trace = run.trace.as_deref().unwrap_or_default();
    let full = Spectrum::from_failing_trace(trace, sites, opts.cut_error_reporting);
    let failing = filter.restrict(&full, sites);
    let stack = match (&run.crash, opts.stack) {
        (Some(crash), true) => stack_evidence(&crash.stack, sites, &failing),
        _ => Vec::new(),
    };

    let (genes, table) = genes_and_table(&current, catalog, &opts.candidates)?;
    let sequences = !matches!(opts.strategy, Strategy::Diwi | Strategy::Recbi);
    let space = match &culprit {
        Some(c) if sequences && (opts.configs || opts.strategy == Strategy::Configs) => {
            match crate::llvm::opt_hidden_options(&opt) {
                Ok(help) => Some(ConfigSpace::new(&current, c, catalog, &help, runner.pool.llvm_args())),
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
        coverage,
        oracle: &oracle,
        catalog,
        render: opts.render,
        filter: &filter,
        failing: &failing,
        similarity: opts.similarity,
        evidence: opts.evidence,
        near: opts.near,
        cut_error_reporting: opts.cut_error_reporting,
        focus: focus.map(Culprit::focus_anywhere),
        configs: space.as_ref(),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let (sequence_budget, program_budget) = split_budget(opts.strategy, opts.budget);
    let strategy_name = if opts.strategy == Strategy::Mixed { Strategy::Cga } else { opts.strategy };
    if sequence_budget.is_some() {
        progress.phase(&format!("searching ({strategy_name:?}, {} genes)", genes.len()));
    }
    // About a hundred points over the budget; a search bounded by evaluations only, one a second.
    let gap = opts.budget.time.map_or(1.0, |t| (t.as_secs_f64() / 100.0).clamp(0.05, 60.0));
    let mut history = SearchHistory::default();
    let mut report = |s: &SearchStats, progress: &mut dyn Progress| {
        history.record(s, gap);
        progress.search(s);
    };
    let mut result = match sequence_budget {
        Some(budget) => {
            report(&SearchStats::default(), progress);
            search(&mut setup, genes, &table, strategy_name, opts.ga, budget, &mut rng, &mut |s| report(s, progress))?
        }
        None => {
            SearchResult { evidence: Evidence::new(&failing), witnesses: Vec::new(), stats: SearchStats::default() }
        }
    };
    if let (Some(budget), Some(program)) = (program_budget, program) {
        let guidance = if opts.strategy == Strategy::Diwi { Guidance::Diwi } else { Guidance::Recbi };
        progress.phase(&format!("mutating the program ({guidance:?})"));
        let mutator = program.mutator(guidance == Guidance::Recbi)?;
        let (pipeline, focus) = match focus {
            Some(c) => (c.pipeline.clone(), Some(c.focus_here())),
            None => (reduced.clone(), None),
        };
        let mut search = ProgramSearch {
            evaluator: Evaluator {
                pool: setup.pool,
                input: program,
                pipeline,
                focus,
                oracle: &oracle,
                sites,
                filter: &filter,
                screen: Screen { clang: program.frontend.clang.clone(), ..Screen::default() },
                scratch: tempfile::Builder::new().prefix("ctos-mutants-").tempdir()?,
                seconds: Default::default(),
            },
            mutator: mutator.as_ref(),
            failing: &failing,
            similarity: opts.similarity,
            guidance,
            budget,
        };
        let before = result.stats.clone();
        let (witnesses, stats) =
            search_programs(&mut search, &mut result.evidence, &mut rng, &mut |s| report(&before.plus(s), progress))?;
        result.witnesses.extend(witnesses);
        result.stats = before.plus(&stats);
    }
    let ranking = rank(&result.evidence, sites, opts.formula, opts.aggregate, &stack);
    history.finish(&result.stats);
    result.evidence.snapshot();
    history.follow_scores(&result.evidence, &ranking, sites, opts.formula, opts.aggregate, &stack);
    if result.stats.passing == result.stats.passing_configs && opts.strategy != Strategy::Configs && sequences {
        let ties = if result.stats.passing == 0 {
            "every file the failing run covers ties"
        } else {
            "only configurations of the culprit are witnesses"
        };
        notes.push(format!(
            "no bug-free sequence found, so {ties}; {}",
            if opts.strategy.constrained() {
                "every candidate keeps the failing passes: try --strategy cga-wc, which drops that constraint"
            } else {
                "try a longer --time"
            }
        ));
    } else if !sequences && result.stats.passing == 0 {
        notes.push(
            "no bug-free mutant found, so files rank by how much of the failing run they cover; try a longer \
             --time, or --strategy mixed to add sequence witnesses"
                .into(),
        );
    }
    let mut witnesses = result.witnesses;
    witnesses.sort_by(|a, b| b.similarity.total_cmp(&a.similarity));
    Ok(Isolation {
        failure: oracle.expected.clone(),
        original,
        reduced_passes: current.len(),
        reduced,
        reduction_tests,
        culprit,
        culprit_file,
        notes,
        unattributed: sites.attribution.unattributed_note.clone(),
        failing_elements: failing.len(),
        failing_files: failing.files.len(),
        ranking,
        witnesses,
        stats: result.stats,
        history,
        seconds_reproduce_and_reduce,
        seconds_total: started.elapsed().as_secs_f64(),
    })
}
