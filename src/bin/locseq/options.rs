//! Search and ranking options shared by `isolate` and `eval`.

use std::time::Duration;

use anyhow::{bail, Result};
use ctos::cli::{bounded, parse_duration};
use ctos::coverage::Granularity;
use ctos::localize::evidence::FailingEvidence;
use ctos::localize::ga::GaParams;
use ctos::localize::isolate::{IsolateOptions, TraceScope};
use ctos::localize::record::Budget;
use ctos::localize::sbfl::{Aggregate, Formula};
use ctos::localize::similarity::SimilarityFormula;
use ctos::seq::{Nesting, RenderOptions};

#[derive(clap::Args, Debug, Clone)]
pub struct SearchArgs {
    /// Time the whole isolation may take per bug (90, 90s, 2m): reduction takes at most half
    /// of it, the search what is left.
    #[arg(long, value_name = "TIME", default_value = "120", value_parser = parse_duration, allow_hyphen_values = true)]
    pub time: Duration,
    /// Stop after this many evaluations (whichever limit comes first).
    #[arg(long, value_name = "N", value_parser = |s: &str| bounded(s, 1usize, 1_000_000_000))]
    pub max_evals: Option<usize>,
    /// Coverage elements: basic blocks, or functions (coarser, about 3x faster).
    #[arg(long, value_enum, default_value_t = Granularity::Blocks)]
    pub granularity: Granularity,
    /// What a coverage trace records: culprit (only while the culprit pass runs: its run in
    /// the failing pipeline, every run of it in a candidate), pipeline (the whole pipeline,
    /// as LocSeq), or auto (culprit, but pipeline for wrong code that first shows after a
    /// culprit with passes before it, so that their code can rank).
    #[arg(long, value_enum, default_value_t = TraceScope::Auto)]
    pub trace: TraceScope,
    /// Do not mix configurations of the culprit pass (other parameters, other values of
    /// its knobs) into the sequence search (`--strategy configs` tries only those).
    #[arg(long)]
    pub no_configs: bool,
    /// Do not count a crash's stack as evidence (by default each file on it ranks as if it
    /// had one more element, scored 1/(1+depth of its innermost frame)).
    #[arg(long)]
    pub no_stack: bool,
    /// Suspiciousness formula.
    #[arg(long, value_enum, default_value_t = Formula::Ochiai)]
    pub formula: Formula,
    /// How element scores make a file score: sum (the file's total suspiciousness), mean
    /// (LocSeq's eq. 8) or max.
    #[arg(long, value_enum, default_value_t = Aggregate::Sum)]
    pub aggregate: Aggregate,
    /// Fitness: how Sim_s and Sim_f combine (LocSeq eq. 3; see the spec).
    #[arg(long, value_enum, default_value_t = SimilarityFormula::Product)]
    pub similarity: SimilarityFormula,
    /// Failing runs used as evidence: the buggy one (LocSeq) or all that fail the same way.
    #[arg(long, value_enum, default_value_t = FailingEvidence::One)]
    pub evidence: FailingEvidence,
    /// Count a passing run as evidence only if its file-level Jaccard with the failing
    /// run reaches this (0: all, as LocSeq).
    #[arg(long, value_name = "J", default_value_t = 0.0)]
    pub near: f64,
    /// Keep LLVM's error-reporting code in the failing trace (by default the trace is cut
    /// where it starts: no passing run covers it, so it would outrank the fault).
    #[arg(long)]
    pub keep_error_reporting: bool,
    /// Rank only files under this path prefix (repeatable) [default: llvm/lib/].
    #[arg(long = "files", value_name = "PREFIX")]
    pub file_prefixes: Vec<String>,
    /// Rank every attributed file, headers and other trees included.
    #[arg(long, conflicts_with = "file_prefixes")]
    pub all_files: bool,
    /// Catalog set new genes come from.
    #[arg(long, value_name = "SET", default_value = "locseq")]
    pub candidates: String,
    /// Population size.
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = |s: &str| bounded(s, 2usize, 100_000))]
    pub population: usize,
    /// Crossover probability.
    #[arg(long, value_name = "P", default_value_t = 0.5)]
    pub crossover: f64,
    /// Mutation probability (per individual).
    #[arg(long, value_name = "P", default_value_t = 0.3)]
    pub mutation: f64,
    /// Longest initial individual.
    #[arg(long, value_name = "N", default_value_t = 15, value_parser = |s: &str| bounded(s, 1usize, 10_000))]
    pub max_size: usize,
    /// Do not reduce the failing sequence first.
    #[arg(long)]
    pub no_reduce: bool,
}

impl SearchArgs {
    /// The options, with their numbers checked ([`IsolateOptions::check`] does the rest).
    pub fn options(&self) -> Result<IsolateOptions> {
        for (name, p) in [("--crossover", self.crossover), ("--mutation", self.mutation), ("--near", self.near)] {
            if !(0.0..=1.0).contains(&p) {
                bail!("{name} must be between 0 and 1, not {p}");
            }
        }
        let file_prefixes = if self.all_files {
            Vec::new()
        } else if self.file_prefixes.is_empty() {
            vec!["llvm/lib/".to_string()]
        } else {
            self.file_prefixes.clone()
        };
        Ok(IsolateOptions {
            reduce: !self.no_reduce,
            ga: GaParams {
                population: self.population,
                crossover: self.crossover,
                mutation: self.mutation,
                max_size: self.max_size,
                constrained: true,
            },
            budget: Budget { time: Some(self.time), max_evals: self.max_evals },
            granularity: self.granularity,
            trace: self.trace,
            configs: !self.no_configs,
            stack: !self.no_stack,
            formula: self.formula,
            aggregate: self.aggregate,
            similarity: self.similarity,
            evidence: self.evidence,
            near: self.near,
            cut_error_reporting: !self.keep_error_reporting,
            cpp_only: !self.all_files,
            file_prefixes,
            render: RenderOptions { nesting: Nesting::Grouped, verify_fixpoint: false },
            candidates: self.candidates.clone(),
            ..IsolateOptions::default()
        })
    }
}
