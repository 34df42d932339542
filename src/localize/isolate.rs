//! `locseq isolate`: from one failing (program, sequence) to ranked LLVM source files.

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::evidence::FailingEvidence;
use super::files::FileFilter;
use super::ga::{GaParams, GeneTable};
use super::rank::{rank, FileRank};
use super::sbfl::{Aggregate, Formula};
use super::search::{search, Budget, SearchSetup, SearchStats, Strategy, Witness};
use super::similarity::SimilarityFormula;
use crate::coverage::{self, Coverage, Granularity, Spectrum};
use crate::llvm::{print_pipeline_passes, IrModule};
use crate::oracle::{observe, Failure, FailureKind, Observation, Oracle, ScriptOracle, Verdict};
use crate::program::reference_execution;
use crate::sandbox::{run_batch_cached, BatchItem, ExecCache, ExecMode, JobSpec, Pool, Run};
use crate::seq::reduce::reduce;
use crate::seq::{render_with, Catalog, Pass, RenderOptions, Sequence};

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
            granularity: Granularity::Functions,
            formula: Formula::Ochiai,
            aggregate: Aggregate::Mean,
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
    pub notes: Vec<String>,
    pub failing_elements: usize,
    pub failing_files: usize,
    /// Printed as records of their own (`file`, `witness`), not in the summary.
    #[serde(skip)]
    pub ranking: Vec<FileRank>,
    #[serde(skip)]
    pub witnesses: Vec<Witness>,
    pub stats: SearchStats,
    pub seconds_reproduce_and_reduce: f64,
    pub seconds_total: f64,
}

/// What `isolate` reports while it works.
pub trait Progress {
    fn phase(&mut self, message: &str);
    fn search(&mut self, stats: &SearchStats);
}

struct Runner<'a> {
    pool: &'a mut Pool,
    module: &'a mut IrModule,
    catalog: &'a Catalog,
    render: RenderOptions,
    exec: ExecMode,
    cache: ExecCache,
    tests: usize,
}

impl Runner<'_> {
    fn text(&self, seq: &Sequence) -> Result<String> {
        Ok(render_with(seq, self.catalog, &self.render)?)
    }

    fn run(&mut self, pipeline: &str, observe: bool) -> Result<Run> {
        self.tests += 1;
        let job = JobSpec { exec: self.exec, observe, ..JobSpec::optimize(pipeline) };
        let mut out = None;
        run_batch_cached(self.pool, self.module, [BatchItem { index: 0, job }], &mut self.cache, |_, r| out = Some(r))?;
        Ok(out.expect("one run"))
    }
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
            bail!("the failure does not reproduce: {} says the bug does not fire on {buggy}", script.script.display());
        }
        runner.exec = ExecMode::Never;
    }
    let expected = match (&opts.oracle, failure) {
        (OracleMode::Script(_), f) => {
            f.unwrap_or(Failure { kind: FailureKind::WrongCode, signature: "the interestingness test fires".into() })
        }
        (_, None) => bail!(
            "the failure does not reproduce: '{buggy}' runs cleanly{}",
            if wants_execution { " and the program prints what the unoptimized one prints" } else { "" }
        ),
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
        bail!("the failure does not reproduce: the run does not match --pattern");
    }
    Ok(oracle)
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

pub fn isolate(
    pool: &mut Pool,
    module: &mut IrModule,
    buggy: &Sequence,
    catalog: &Catalog,
    opts: &IsolateOptions,
    progress: &mut dyn Progress,
) -> Result<Isolation> {
    let started = Instant::now();
    let checked = opts.check(catalog)?;
    // Reproduction and reduction need no coverage: run them without breakpoints.
    coverage::disarm();
    let mut runner = Runner {
        pool,
        module,
        catalog,
        render: opts.render,
        exec: ExecMode::Never,
        cache: ExecCache::default(),
        tests: 0,
    };
    let original = runner.text(buggy)?;
    progress.phase(&format!("reproducing the failure of {original}"));
    let oracle = establish_oracle(&mut runner, &original, opts, checked)?;
    let mut notes = Vec::new();
    let mut current = buggy.clone();

    let expanded = buggy.expand_pipelines(catalog, &mut |p| print_pipeline_passes(p)).map_err(anyhow::Error::msg)?;
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
    let seconds_reproduce_and_reduce = started.elapsed().as_secs_f64();

    progress.phase("recording the failing run's coverage");
    let coverage = Coverage::arm(opts.granularity);
    runner.pool.set_observer(coverage.observer());
    let sites = coverage.sites;
    let filter = FileFilter::new(sites, &opts.file_prefixes, opts.cpp_only);
    let mut failing_trace = None;
    // A nondeterministic failure may need a few tries to show again.
    for _ in 0..3 {
        let run = runner.run(&reduced, true)?;
        if oracle.judge(&run, &reduced)? == Verdict::Same {
            failing_trace = run.trace;
            break;
        }
    }
    let trace = failing_trace.context("the reduced sequence stopped failing when run with coverage")?;
    let full = if opts.cut_error_reporting {
        Spectrum::from_trace_until_error_reporting(&trace, sites)
    } else {
        Spectrum::from_trace(&trace, sites)
    };
    let failing = filter.restrict(&full, sites);

    let (genes, table) = genes_and_table(&current, catalog, &opts.candidates)?;
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
    };
    progress.phase(&format!("searching ({:?}, {} genes)", opts.strategy, genes.len()));
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let result =
        search(&mut setup, genes, &table, opts.strategy, opts.ga, opts.budget, &mut rng, &mut |s| progress.search(s))?;
    let ranking = rank(&result.evidence, sites, opts.formula, opts.aggregate);
    if result.stats.passing == 0 {
        notes.push(format!(
            "no bug-free sequence found, so every file the failing run covers ties; {}",
            if opts.strategy.constrained() {
                "every candidate keeps the failing passes: try --strategy cga-wc, which drops that constraint"
            } else {
                "try a longer --time"
            }
        ));
    }
    let mut witnesses = result.witnesses;
    witnesses.sort_by(|a, b| b.similarity.total_cmp(&a.similarity));
    Ok(Isolation {
        failure: oracle.expected.clone(),
        original,
        reduced_passes: current.len(),
        reduced,
        reduction_tests,
        notes,
        failing_elements: failing.len(),
        failing_files: failing.files.len(),
        ranking,
        witnesses,
        stats: result.stats,
        seconds_reproduce_and_reduce,
        seconds_total: started.elapsed().as_secs_f64(),
    })
}
