//! The witness search of LocSeq: sequences close to the failing one that do not fail,
//! each evaluated in the sandbox with coverage, a generation at a time.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::configs::ConfigSpace;
use super::ga::{self, GaParams, GeneTable, Individual};
use super::record::{Budget, Made, Recorder, SearchStats};
use crate::coverage::Coverage;
use crate::llvm::IrModule;
use crate::oracle::{Oracle, Verdict};
use crate::sandbox::{run_batch_cached, BatchItem, ExecCache, ExecMode, Focus, JobSpec, Pool, Run};
use crate::seq::{render_with, Catalog, Pass, RenderOptions, Sequence};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// The constrained genetic algorithm (LocSeq).
    #[default]
    Cga,
    /// Random sequences that keep the constraint (LocSeq_r).
    Random,
    /// The genetic algorithm without the constraint (LocSeq_wc).
    CgaWc,
    /// Random sequences from the pooled passes, no constraint (LocSeq_rwc).
    RandomWc,
    /// Only configurations of the failing sequence: its culprit pass with other
    /// parameters or knob values.
    Configs,
    /// Witness programs: DiWi's 132 local mutation rules, Metropolis–Hastings selection.
    Diwi,
    /// Witness programs: RecBi's local and structural rules, an A2C agent, a quality filter.
    Recbi,
    /// LocSeq's sequences (cga) for half the budget, RecBi's programs for the other half,
    /// in one spectrum.
    Mixed,
}

impl Strategy {
    /// The name `--strategy` takes.
    pub fn name(self) -> String {
        clap::ValueEnum::to_possible_value(&self).map_or_else(String::new, |v| v.get_name().to_string())
    }

    /// Whether the strategy searches sequences (all but DiWi and RecBi; half of mixed).
    pub fn varies_sequences(self) -> bool {
        !matches!(self, Strategy::Diwi | Strategy::Recbi)
    }

    pub fn constrained(self) -> bool {
        matches!(self, Strategy::Cga | Strategy::Random | Strategy::Configs)
    }

    /// Whether the strategy mutates the program (DiWi, RecBi, and half of mixed).
    pub fn mutates_programs(self) -> bool {
        matches!(self, Strategy::Diwi | Strategy::Recbi | Strategy::Mixed)
    }

    pub fn evolves(self) -> bool {
        matches!(self, Strategy::Cga | Strategy::CgaWc)
    }
}

/// How long a run may take before it counts as hanging, for a hang bug: five times what
/// a run that did not hang took (`millis`).
pub fn hang_limit_after(millis: f64) -> Duration {
    Duration::from_secs_f64(millis * 5.0 / 1000.0)
}

/// Every batch of sequences is followed by 1/CONFIG_SHARE as many configurations.
const CONFIG_SHARE: usize = 4;

/// A fresh batch joins the GA's best after this many generations without its best
/// fitness rising by `STALL_GAIN`. Its survivors are the best of parents and children, so
/// it settles in the first basin it finds: 135182's search ended in one of three, and in
/// the one that ranks its fix file first 5 times in 12 at 3,000 evaluations. Drawn afresh
/// from scratch after 5 stalled generations: 32 in 34, and the two it lost had found the
/// close witnesses, but a whole fresh population's far runs outnumbered them twenty to
/// one, so their code no longer counted as failure-specific. With the 5 best kept: 20 in
/// 20. Every witness found before stays evidence.
const STALL_GENERATIONS: usize = 5;
const STALL_GAIN: f64 = 1e-3;
/// Of a stalled population, this many of the best stay beside the fresh ones.
const ELITE: usize = 5;

pub struct SearchSetup<'a> {
    pub pool: &'a mut Pool,
    pub module: &'a mut IrModule,
    pub coverage: Coverage,
    pub oracle: &'a Oracle,
    pub catalog: &'a Catalog,
    pub render: RenderOptions,
    /// Record candidates' coverage only while this pass runs.
    pub focus: Option<Focus>,
    /// Configurations of the culprit pass to try (`Strategy::Configs`, or mixed in).
    pub configs: Option<&'a ConfigSpace>,
    /// A hang under study: candidates run under a limit derived from the runs (see
    /// `isolate`), raised to five times the slowest bug-free run, up to this.
    pub hang_limit_cap: Option<Duration>,
    /// Runs of the failing sequence to evaluate first, with their LLVM options: the run one
    /// transformation short of the failure is the nearest witness there is.
    pub first: Vec<(String, Vec<String>)>,
}

/// One run to evaluate: a pipeline and the LLVM options of its child.
struct Candidate {
    pipeline: String,
    llvm_args: Vec<String>,
    /// A configuration of the failing sequence (else a sequence of the search).
    config: bool,
}

impl Candidate {
    fn key(&self) -> String {
        let mut key = self.pipeline.clone();
        for a in &self.llvm_args {
            key.push(' ');
            key.push_str(a);
        }
        key
    }
}

struct Searcher<'a, 'b, 'r> {
    s: &'b mut SearchSetup<'a>,
    recorder: &'b mut Recorder<'r>,
    genes: Vec<Pass>,
    memo: HashMap<String, f64>,
    exec_cache: ExecCache,
    started: Instant,
    /// Evaluations recorded before this search (mixed: none, it comes first).
    evaluations_before: usize,
    budget: Budget,
}

impl Searcher<'_, '_, '_> {
    fn evaluations(&self) -> usize {
        self.recorder.stats.evaluations - self.evaluations_before
    }

    fn exhausted(&self) -> bool {
        self.budget.time.is_some_and(|t| self.started.elapsed() >= t)
            || self.budget.max_evals.is_some_and(|m| self.evaluations() >= m)
    }

    fn pipeline(&self, individual: &[u16]) -> String {
        let seq = Sequence::flat(individual.iter().map(|&g| self.genes[g as usize].clone()));
        render_with(&seq, self.s.catalog, &self.s.render).expect("genes render")
    }

    /// Fitness of each individual (0 for any failure).
    fn evaluate_individuals(&mut self, individuals: &[Individual]) -> anyhow::Result<Vec<f64>> {
        let candidates: Vec<Candidate> = individuals
            .iter()
            .map(|i| Candidate { pipeline: self.pipeline(i), llvm_args: Vec::new(), config: false })
            .collect();
        self.evaluate(&candidates)
    }

    /// `n` random individuals, each with its fitness.
    fn random_batch<R: Rng + ?Sized>(
        &mut self,
        rng: &mut R,
        table: &GeneTable,
        params: &GaParams,
        n: usize,
    ) -> anyhow::Result<Vec<(Individual, f64)>> {
        let individuals: Vec<Individual> = (0..n).map(|_| ga::random_individual(rng, table, params)).collect();
        let fitness = self.evaluate_individuals(&individuals)?;
        Ok(individuals.into_iter().zip(fitness).collect())
    }

    /// Evaluate `n` configurations of the culprit pass.
    fn evaluate_configs<R: Rng + ?Sized>(&mut self, n: usize, rng: &mut R) -> anyhow::Result<()> {
        let Some(space) = self.s.configs else { return Ok(()) };
        let render = self.s.render.per_pass();
        let candidates: Vec<Candidate> = (0..n)
            .filter_map(|_| space.sample(rng))
            .map(|c| Candidate {
                pipeline: render_with(&c.sequence, self.s.catalog, &render).expect("configs render"),
                llvm_args: c.llvm_args,
                config: true,
            })
            .collect();
        self.evaluate(&candidates)?;
        Ok(())
    }

    /// Fitness of each candidate (0 for any failure); unseen ones run in one batch.
    fn evaluate(&mut self, candidates: &[Candidate]) -> anyhow::Result<Vec<f64>> {
        let keys: Vec<String> = candidates.iter().map(Candidate::key).collect();
        let mut seen = std::collections::HashSet::new();
        let mut fresh: Vec<(&Candidate, &String)> = Vec::new();
        for (c, key) in candidates.iter().zip(&keys) {
            if !self.memo.contains_key(key) && seen.insert(key) {
                fresh.push((c, key));
            }
        }
        if let Some(max) = self.budget.max_evals {
            fresh.truncate(max.saturating_sub(self.evaluations()));
        }
        let exec = if self.s.oracle.needs_execution() { ExecMode::Always } else { ExecMode::Never };
        // In pieces, so that a budget runs out inside a batch whose runs are slow (a hang
        // bug's candidates run to their time limit).
        let piece = self.s.pool.jobs() * 8;
        for chunk in fresh.chunks(piece) {
            if self.budget.time.is_some_and(|t| self.started.elapsed() >= t) {
                break;
            }
            let items = chunk.iter().enumerate().map(|(index, (c, _))| BatchItem {
                index,
                job: JobSpec {
                    exec,
                    observe: true,
                    focus: self.s.focus.clone(),
                    verify_each: self.s.oracle.verify_each(),
                    llvm_args: c.llvm_args.clone(),
                    ..JobSpec::optimize(c.pipeline.clone())
                },
            });
            let mut results = vec![None; chunk.len()];
            run_batch_cached(self.s.pool, self.s.module, items, &mut self.exec_cache, |i, run| results[i] = Some(run))?;
            for ((candidate, key), run) in chunk.iter().zip(results) {
                let run = run.expect("every job finishes");
                let fitness = self.judge(candidate, &run)?;
                self.memo.insert((*key).clone(), fitness);
            }
        }
        // Candidates beyond the budget get no credit.
        Ok(keys.iter().map(|k| self.memo.get(k).copied().unwrap_or(0.0)).collect())
    }

    /// Count one run as evidence; its fitness.
    fn judge(&mut self, candidate: &Candidate, run: &Run) -> anyhow::Result<f64> {
        let verdict = self.s.oracle.judge(run, &candidate.pipeline)?;
        let trace = run.trace.as_deref().unwrap_or(&[]);
        Ok(match verdict {
            Verdict::Passes => {
                if let Some(cap) = self.s.hang_limit_cap {
                    // A bug-free run near the limit: slower candidates may be slow, not hung.
                    let wanted = hang_limit_after(run.opt_millis).min(cap);
                    if wanted > self.s.pool.limits().opt_timeout {
                        self.s.pool.set_opt_timeout(wanted);
                    }
                }
                let spectrum = self.recorder.passing_spectrum(trace);
                let made = Made {
                    pipeline: candidate.pipeline.clone(),
                    llvm_args: candidate.llvm_args.clone(),
                    configuration: candidate.config,
                    mutation: None,
                };
                self.recorder.passing(&spectrum, made)
            }
            Verdict::Same => {
                self.recorder.failing_same(trace);
                0.0
            }
            Verdict::Other(failure) => {
                self.recorder.other_failure(&failure);
                0.0
            }
            Verdict::Rejected => {
                self.recorder.refused();
                0.0
            }
        })
    }
}

/// Search for bug-free sequences near the failing one, into `recorder`. `genes` is the
/// gene table's pass list (indices in `table` point into it). `progress` is called after
/// every batch.
#[allow(clippy::too_many_arguments)]
pub fn search<R: Rng + ?Sized>(
    setup: &mut SearchSetup,
    recorder: &mut Recorder,
    genes: Vec<Pass>,
    table: &GeneTable,
    strategy: Strategy,
    mut params: GaParams,
    budget: Budget,
    rng: &mut R,
    progress: &mut dyn FnMut(&SearchStats),
) -> anyhow::Result<()> {
    params.constrained = strategy.constrained();
    let seconds_before = recorder.stats.seconds;
    let mut s = Searcher {
        s: setup,
        evaluations_before: recorder.stats.evaluations,
        recorder,
        genes,
        memo: HashMap::new(),
        exec_cache: ExecCache::default(),
        started: Instant::now(),
        budget,
    };
    let first: Vec<Candidate> =
        s.s.first.iter().map(|(p, a)| Candidate { pipeline: p.clone(), llvm_args: a.clone(), config: true }).collect();
    s.evaluate(&first)?;
    let batch = params.population.max(2);
    let mut population: Vec<(Individual, f64)> = Vec::new();
    // A search space this small gets exhausted: stop when batches bring nothing new.
    let mut idle_batches = 0;
    let (mut best_so_far, mut stalled) = (0.0, 0);
    while !s.exhausted() && idle_batches < 20 {
        let before = s.evaluations();
        if strategy == Strategy::Configs {
            s.evaluate_configs(batch, rng)?;
        } else if strategy.evolves() && !population.is_empty() {
            let parents: Vec<Individual> = population.iter().map(|(i, _)| i.clone()).collect();
            let children = ga::offspring(rng, &parents, table, &params);
            let fitness = s.evaluate_individuals(&children)?;
            let mut scored = std::mem::take(&mut population);
            scored.extend(children.into_iter().zip(fitness));
            population = ga::survivors(scored, params.population);
            let best = population.first().map_or(0.0, |(_, f)| *f);
            if best > best_so_far + STALL_GAIN {
                (best_so_far, stalled) = (best, 0);
            } else {
                stalled += 1;
            }
            if stalled >= STALL_GENERATIONS {
                population.truncate(ELITE);
                population.extend(s.random_batch(rng, table, &params, batch)?);
                stalled = 0;
                s.recorder.stats.restarts += 1;
            }
        } else {
            let scored = s.random_batch(rng, table, &params, batch)?;
            if strategy.evolves() {
                population = scored;
            }
        }
        if strategy != Strategy::Configs {
            // A share of every batch tries configurations: the only witnesses there are
            // when every sequence with the culprit pass fails.
            s.evaluate_configs(batch / CONFIG_SHARE, rng)?;
        }
        s.recorder.stats.generations += 1;
        s.recorder.stats.seconds = seconds_before + s.started.elapsed().as_secs_f64();
        idle_batches = if s.evaluations() == before { idle_batches + 1 } else { 0 };
        progress(&s.recorder.stats);
    }
    s.recorder.stats.seconds = seconds_before + s.started.elapsed().as_secs_f64();
    Ok(())
}
