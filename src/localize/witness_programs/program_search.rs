//! The witness-program loop shared by DiWi and RecBi (spec diwi.md §5.5, recbi.md §2):
//! mutate the failing program (or, when a whole phase finds no witness, its still-failing
//! mutants: one mutation order higher), judge the mutants a pool-width at a time, and keep
//! passing ones whose coverage no witness has and that the guide accepts.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use super::diwi::Diwi;
use super::quality::{CovSet, Guide, WitnessSet};
use super::recbi::Recbi;
use super::stats::{Guidance, ProgramStats};
use super::{Evaluator, Judged};
use crate::localize::record::{Budget, Made, Recorder, SearchStats};
use crate::mutate::witness::Mutator;
use anyhow::Result;
use rand::{Rng, RngExt};

/// DiWi's and RecBi's cap on the witness set.
pub const MAX_WITNESSES: usize = 500;
/// RecBi's cap on witnesses from one structural operator at one line (spec §5.4 [C]).
const PER_LINE: u32 = 2;
/// Still-failing mutants kept as seeds for the next order.
const MAX_SEEDS: usize = 1000;

pub struct ProgramSearch<'a> {
    pub evaluator: Evaluator<'a>,
    pub mutator: &'a dyn Mutator,
    pub guidance: Guidance,
    pub budget: Budget,
}

struct Tried {
    rule: usize,
    mutant: crate::mutate::witness::Mutant,
}

/// Search for witness programs, into `recorder` (after a sequence search, for mixed).
pub fn search_programs(
    s: &mut ProgramSearch,
    recorder: &mut Recorder,
    rng: &mut dyn Rng,
    progress: &mut dyn FnMut(&SearchStats),
) -> Result<()> {
    let started = Instant::now();
    let (evaluations_before, seconds_before) = (recorder.stats.evaluations, recorder.stats.seconds);
    let failing = recorder.settings.failing;
    let rules = s.mutator.rules().to_vec();
    let mut guide: Box<dyn Guide> = match s.guidance {
        Guidance::Diwi => Box::new(Diwi::new(rules.len())),
        Guidance::Recbi => Box::new(Recbi::new(&rules, rng)),
    };
    let original = s.evaluator.input.text.clone();
    let mut program = ProgramStats { guidance: Some(s.guidance), order: 1, ..Default::default() };
    let mut set = WitnessSet::new(failing);
    let mut witnesses = 0;
    let mut seen: HashSet<u64> = HashSet::from([xxhash_rust::xxh3::xxh3_64(original.as_bytes())]);
    let mut seeds: Vec<String> = vec![original];
    let mut next_seeds: Vec<String> = Vec::new();
    let mut per_line: HashMap<(usize, usize), u32> = HashMap::new();
    let width = s.evaluator.pool.jobs();
    // Without a witness by the end of a phase, the next order starts (spec §5.1); a phase
    // is half of the time still left, so a fixed budget holds several orders.
    let mut phase_end = s.budget.time.map(|t| t / 2);
    let mut idle = 0;
    let exhausted = |stats: &SearchStats| {
        s.budget.time.is_some_and(|t| started.elapsed() >= t)
            || s.budget.max_evals.is_some_and(|m| stats.evaluations - evaluations_before >= m)
    };
    while !exhausted(&recorder.stats) && witnesses < MAX_WITNESSES && idle < 50 {
        if let Some(end) = phase_end.filter(|&e| started.elapsed() >= e) {
            if witnesses == 0 && !next_seeds.is_empty() {
                seeds = std::mem::take(&mut next_seeds);
                program.order += 1;
            }
            let left = s.budget.time.unwrap_or_default().saturating_sub(end);
            phase_end = Some(end + left / 2);
        }
        let mutating = Instant::now();
        let mut batch: Vec<Tried> = Vec::new();
        for _ in 0..width * 8 {
            if batch.len() == width {
                break;
            }
            let rule = guide.next_rule(rng);
            program.attempts += 1;
            let seed = &seeds[rng.random_range(0..seeds.len())];
            match s.mutator.mutate(seed, rule, rng)? {
                None => {
                    program.not_applicable += 1;
                    guide.missed(rule);
                }
                Some(m) if m.touches_output => {
                    program.touches_output += 1;
                    guide.missed(rule);
                }
                Some(m) if !seen.insert(xxhash_rust::xxh3::xxh3_64(m.text.as_bytes())) => {
                    program.duplicates += 1;
                    guide.missed(rule);
                }
                Some(mutant) => batch.push(Tried { rule, mutant }),
            }
        }
        *program.seconds_by_phase.entry("mutate").or_default() += mutating.elapsed().as_secs_f64();
        if batch.is_empty() {
            idle += 1;
            // A small program's mutants of one order run out long before the budget: the
            // next order then starts early, witnesses or not.
            if idle >= 10 && !next_seeds.is_empty() {
                seeds = std::mem::take(&mut next_seeds);
                program.order += 1;
                idle = 0;
            }
            continue;
        }
        idle = 0;
        let texts: Vec<String> = batch.iter().map(|t| t.mutant.text.clone()).collect();
        let judged = s.evaluator.judge_all(&texts)?;
        for (tried, judged) in batch.into_iter().zip(judged) {
            let rule = tried.rule;
            let trace = match judged {
                Judged::Passes(trace) => trace,
                Judged::Fails(trace) => {
                    recorder.failing_same(&trace);
                    if next_seeds.len() < MAX_SEEDS {
                        next_seeds.push(tried.mutant.text);
                    }
                    guide.missed(rule);
                    continue;
                }
                Judged::Other(failure) => {
                    recorder.other_failure(&failure);
                    guide.missed(rule);
                    continue;
                }
                Judged::Invalid(r) => {
                    // Counted by reason, apart from LLVM's refusals of sequences.
                    recorder.evaluated();
                    *program.refused.entry(r).or_default() += 1;
                    guide.missed(rule);
                    continue;
                }
            };
            let spectrum = recorder.passing_spectrum(&trace);
            let cov = CovSet::of(&spectrum, failing);
            if set.contains(&cov) {
                program.duplicates += 1;
                guide.missed(rule);
                recorder.evaluated();
                continue;
            }
            let class = rules[rule].class;
            let line = per_line.entry((rule, tried.mutant.line)).or_default();
            let capped = s.guidance == Guidance::Recbi && class.is_structural() && *line >= PER_LINE;
            if capped || !guide.consider(rule, &cov, &set) {
                program.turned_away += 1;
                recorder.evaluated();
                continue;
            }
            *line += 1;
            *program.witnesses_by_class.entry(format!("{class:?}")).or_default() += 1;
            set.add(cov);
            witnesses += 1;
            let made = Made {
                pipeline: s.evaluator.pipeline.clone(),
                llvm_args: Vec::new(),
                configuration: false,
                mutation: Some(tried.mutant.description),
            };
            recorder.passing(&spectrum, made);
        }
        recorder.stats.generations += 1;
        recorder.stats.seconds = seconds_before + started.elapsed().as_secs_f64();
        progress(&recorder.stats);
    }
    recorder.stats.seconds = seconds_before + started.elapsed().as_secs_f64();
    program.updates = guide.updates();
    program.seconds_by_phase.extend(s.evaluator.seconds.iter().map(|(k, v)| (*k, *v)));
    recorder.stats.programs = Some(program);
    Ok(())
}
