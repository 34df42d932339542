//! `locseq eval`: localization accuracy on a bench of real bugs, per strategy.

use anyhow::{Context as _, Result};
use serde::Serialize;

use super::bug_folder::BenchBug;
pub use super::eval_classes::{FixClass, TopN};
use super::function_eval::{function_ranks, summarize_functions, BugFunctions, FunctionRanks, FunctionSummary};
use super::isolate::{isolate, Inapplicable, IsolateOptions, Isolation, Progress};
use super::sbfl::{metrics, Metrics};
use super::sequence_search::Strategy;
use super::witness_programs::ProgramInput;
use crate::llvm::CFrontend;
use crate::program::{Subject, SubjectSpec};
use crate::sandbox::Limits;
use crate::sandbox::Llvm;
use crate::seq::{Catalog, Sequence};

/// One isolation of one bug with one strategy.
#[derive(Debug, Clone, Serialize)]
pub struct Attempt {
    pub seed: u64,
    /// Rank of each fix file (None: the failing run did not cover it).
    pub ranks: Vec<Option<usize>>,
    /// Score of each fix file, and the best score of any other file: how clearly the
    /// ranking separates them, which ranks alone do not show.
    pub scores: Vec<Option<f64>>,
    pub best_other_score: Option<f64>,
    pub files_ranked: usize,
    /// The culprit pass, as `locseq isolate` reports it.
    pub culprit: Option<String>,
    /// Ranks of the fix files by the spectrum alone (LocSeq's ranking, the crash stack
    /// included): what the culprit and failure-only evidence changed.
    pub spectrum_ranks: Vec<Option<usize>>,
    /// Ranks of the fix files when only the culprit pass's own file is ranked (first) and
    /// every other file ties behind it: the baseline an engineer gets at a glance.
    pub culprit_file_ranks: Vec<Option<usize>>,
    pub evaluations: usize,
    pub passing: usize,
    pub seconds: f64,
    pub search_seconds: f64,
    pub reduced: String,
    /// Why some of the LLVM's code has no source file, if it has not.
    pub unattributed: Option<String>,
    /// Whether a fix file is one of the culprit pass's files.
    pub fix_class: FixClass,
    /// Where the fix functions rank, when the bench names them.
    pub functions: Option<FunctionRanks>,
}

/// One class's bugs under the ranking, the spectrum alone and the culprit-file baseline.
#[derive(Debug, Clone, Serialize)]
pub struct ClassSummary {
    pub class: FixClass,
    pub ranking: TopN,
    pub spectrum_only: TopN,
    pub culprit_file_baseline: TopN,
}

#[derive(Debug, Clone)]
pub enum BugOutcome {
    Ranked {
        attempts: Vec<Attempt>,
    },
    /// The bug does not apply to this LLVM or strategy (it does not fire, say).
    Skipped {
        reason: String,
    },
    /// The isolation failed: the bug folder or the tool is at fault, not the ranking.
    Error {
        reason: String,
    },
}

/// `{"status": "ranked"|"skipped"|"error", "attempts": […]|null, "reason": null|"…"}`: the
/// same keys either way, as the `--json` convention wants.
impl Serialize for BugOutcome {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let (status, attempts, reason) = match self {
            BugOutcome::Ranked { attempts } => ("ranked", Some(attempts), None),
            BugOutcome::Skipped { reason } => ("skipped", None, Some(reason)),
            BugOutcome::Error { reason } => ("error", None, Some(reason)),
        };
        let mut s = serializer.serialize_struct("BugOutcome", 3)?;
        s.serialize_field("status", status)?;
        s.serialize_field("attempts", &attempts)?;
        s.serialize_field("reason", &reason)?;
        s.end()
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct BugResult {
    pub bug: String,
    pub kind: String,
    pub strategy: Strategy,
    pub fix_files: Vec<String>,
    pub outcome: BugOutcome,
}

/// Per fix file its median rank (None: uncovered), and the rank uncovered files count as.
pub type MedianRanks = (Vec<Option<usize>>, usize);

impl BugResult {
    /// Per fix file, the median rank over the attempts (uncovered counts as the worst).
    pub fn median_ranks(&self) -> Option<MedianRanks> {
        self.median_of(|a| &a.ranks)
    }

    /// The same for the culprit-file baseline.
    pub fn median_baseline_ranks(&self) -> Option<MedianRanks> {
        self.median_of(|a| &a.culprit_file_ranks)
    }

    /// The same for the spectrum alone.
    pub fn median_spectrum_ranks(&self) -> Option<MedianRanks> {
        self.median_of(|a| &a.spectrum_ranks)
    }

    fn median_of(&self, ranks_of: impl Fn(&Attempt) -> &Vec<Option<usize>>) -> Option<MedianRanks> {
        let BugOutcome::Ranked { attempts } = &self.outcome else { return None };
        let worst = attempts.iter().map(|a| a.files_ranked + 1).max().unwrap_or(1);
        let ranks = (0..self.fix_files.len())
            .map(|i| {
                let mut r: Vec<usize> = attempts.iter().map(|a| ranks_of(a)[i].unwrap_or(worst)).collect();
                r.sort_unstable();
                let m = r[r.len() / 2];
                (m < worst).then_some(m)
            })
            .collect();
        Some((ranks, worst))
    }
}

#[derive(Debug, Serialize)]
pub struct StrategySummary {
    pub strategy: Strategy,
    #[serde(flatten)]
    pub metrics: Metrics,
    /// The same bugs ranked by the culprit-file baseline.
    pub culprit_file_baseline: Metrics,
    /// The same isolations ranked by the spectrum alone.
    pub spectrum_only: Metrics,
    pub evaluations_per_second: f64,
    /// Passing runs kept as evidence (bug-free sequences, witness programs) per hour of
    /// search.
    pub witnesses_per_hour: f64,
    pub median_seconds_to_ranking: f64,
    /// Bugs that do not apply to this LLVM or strategy.
    pub skipped: usize,
    /// Bugs whose isolation failed (each `bug` record says why).
    pub errors: usize,
    /// The same ranks split by where the fix is, against the culprit pass.
    pub by_class: Vec<ClassSummary>,
    /// The fix functions' ranks, of the bugs that name them.
    pub functions: Option<FunctionSummary>,
}

pub fn summarize(strategy: Strategy, results: &[BugResult]) -> StrategySummary {
    let mine: Vec<&BugResult> = results.iter().filter(|r| r.strategy == strategy).collect();
    let metrics_of = |median: fn(&BugResult) -> Option<MedianRanks>| {
        let (ranks, worst): (Vec<_>, Vec<_>) = mine.iter().filter_map(|r| median(r)).unzip();
        metrics(&ranks, &worst)
    };
    let culprit_file_baseline = metrics_of(BugResult::median_baseline_ranks);
    let spectrum_only = metrics_of(BugResult::median_spectrum_ranks);
    let metrics = metrics_of(BugResult::median_ranks);
    let attempts: Vec<&Attempt> = mine
        .iter()
        .filter_map(|r| match &r.outcome {
            BugOutcome::Ranked { attempts } => Some(attempts),
            _ => None,
        })
        .flatten()
        .collect();
    let count = |status: fn(&BugOutcome) -> bool| mine.iter().filter(|r| status(&r.outcome)).count();
    let evals: usize = attempts.iter().map(|a| a.evaluations).sum();
    let witnesses: usize = attempts.iter().map(|a| a.passing).sum();
    let secs: f64 = attempts.iter().map(|a| a.search_seconds).sum();
    let mut totals: Vec<f64> = attempts.iter().map(|a| a.seconds).collect();
    totals.sort_by(f64::total_cmp);
    StrategySummary {
        strategy,
        metrics,
        culprit_file_baseline,
        spectrum_only,
        evaluations_per_second: if secs > 0.0 { evals as f64 / secs } else { 0.0 },
        witnesses_per_hour: if secs > 0.0 { witnesses as f64 * 3600.0 / secs } else { 0.0 },
        median_seconds_to_ranking: totals.get(totals.len() / 2).copied().unwrap_or(0.0),
        skipped: count(|o| matches!(o, BugOutcome::Skipped { .. })),
        errors: count(|o| matches!(o, BugOutcome::Error { .. })),
        by_class: FixClass::ALL.iter().map(|&class| summarize_class(class, &mine)).collect(),
        functions: summarize_functions(mine.iter().filter_map(|r| bug_functions(r)).collect()),
    }
}

/// A bug's function ranks over its isolations, when the bench names its fix functions.
fn bug_functions(result: &BugResult) -> Option<BugFunctions> {
    let BugOutcome::Ranked { attempts } = &result.outcome else { return None };
    let ranks: Vec<&FunctionRanks> = attempts.iter().filter_map(|a| a.functions.as_ref()).collect();
    (!ranks.is_empty()).then(|| BugFunctions::median(&result.bug, attempts[0].fix_class, &ranks))
}

/// A bug's class is its first isolation's; its rank under each ranking the best median
/// rank of its fix files.
fn summarize_class(class: FixClass, results: &[&BugResult]) -> ClassSummary {
    let of_class: Vec<&BugResult> = results
        .iter()
        .copied()
        .filter(|r| matches!(&r.outcome, BugOutcome::Ranked { attempts } if attempts[0].fix_class == class))
        .collect();
    let best = |median: fn(&BugResult) -> Option<MedianRanks>| {
        TopN::of(of_class.iter().filter_map(|r| median(r)).map(|(ranks, _)| ranks.into_iter().flatten().min()))
    };
    ClassSummary {
        class,
        ranking: best(BugResult::median_ranks),
        spectrum_only: best(BugResult::median_spectrum_ranks),
        culprit_file_baseline: best(BugResult::median_baseline_ranks),
    }
}

/// The class of a bug whose fix changed `fix_files`, against the culprit `isolation` named.
fn fix_class_of(fix_files: &[String], isolation: &Isolation) -> FixClass {
    let culprits = isolation.ranking.iter().filter(|r| r.evidence.culprit).map(|r| r.path.as_str());
    let mut culprit_files: Vec<&str> = culprits.chain(isolation.culprit_file.as_deref()).collect();
    culprit_files.dedup();
    match fix_files.iter().any(|f| culprit_files.contains(&f.as_str())) {
        true => FixClass::InCulprit,
        false => FixClass::Elsewhere,
    }
}

/// The culprit-file baseline's rank of each fix file: 1 for the culprit pass's file, the
/// last rank for the other files the failing run covered, None for files it did not.
fn culprit_file_ranks(fix_files: &[String], culprit_file: Option<&str>, ranked: &[&str]) -> Vec<Option<usize>> {
    fix_files
        .iter()
        .map(|f| match culprit_file {
            Some(c) if c == f => Some(1),
            _ if ranked.contains(&f.as_str()) => Some(ranked.len()),
            _ => None,
        })
        .collect()
}

/// What every isolation of an evaluation shares.
pub struct EvalSetup<'a> {
    pub base: IsolateOptions,
    pub repeat: usize,
    pub jobs: usize,
    pub limits: Limits,
    pub catalog: &'a Catalog,
    /// The LLVM the bugs run on.
    pub llvm: Llvm,
    /// Where to keep each isolation's whole ranking (see [`keep_ranking`]).
    pub rankings: Option<std::path::PathBuf>,
}

/// Each ranked file with all its evidence, the culprit and the fix files of one isolation,
/// as `DIR/BUG-STRATEGY-SEED.json`: what a ranking rule can be judged on afterwards.
fn keep_ranking(
    dir: &std::path::Path,
    bug: &BenchBug,
    strategy: Strategy,
    seed: u64,
    isolation: &Isolation,
) -> Result<()> {
    let record = serde_json::json!({
        "bug": bug.id,
        "fix_files": bug.fix_files,
        "failure": isolation.failure,
        "culprit": isolation.culprit,
        "culprit_file": isolation.culprit_file,
        "stats": isolation.stats,
        "ranking": isolation.ranking,
        "fix_functions": bug.fix_functions,
        "functions": isolation.function_evidence,
    });
    let path = dir.join(format!("{}-{}-{seed}.json", bug.id, strategy.name()));
    std::fs::write(&path, serde_json::to_vec_pretty(&record)?)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Isolate `bug` `repeat` times (seeds 1..=repeat) with `strategy`; skip it, with the
/// reason, when it does not fire on the LLVM under test; an isolation that fails is the
/// bug's outcome (`Error`, with the reason), so that one broken bug folder costs an
/// evaluation nothing but its own row.
pub fn evaluate_bug(bug: &BenchBug, strategy: Strategy, setup: &EvalSetup, progress: &mut dyn Progress) -> BugResult {
    let outcome = attempts(bug, strategy, setup, progress).unwrap_or_else(|e| match e.downcast::<Inapplicable>() {
        Ok(why) => BugOutcome::Skipped { reason: why.0 },
        Err(e) => BugOutcome::Error { reason: format!("{e:#}") },
    });
    BugResult { bug: bug.id.clone(), kind: bug.kind.clone(), strategy, fix_files: bug.fix_files.clone(), outcome }
}

fn attempts(bug: &BenchBug, strategy: Strategy, setup: &EvalSetup, progress: &mut dyn Progress) -> Result<BugOutcome> {
    let EvalSetup { base, repeat, jobs, limits, catalog, llvm, rankings } = setup;
    let (repeat, jobs, limits, catalog) = (*repeat, *jobs, *limits, *catalog);
    let major = llvm.major();
    if !bug.versions.is_empty() && !bug.versions.contains(&major) {
        let fires: Vec<String> = bug.versions.iter().map(u32::to_string).collect();
        return Ok(BugOutcome::Skipped { reason: format!("fires on LLVM {}, not on {major}", fires.join(", ")) });
    }
    let program = bug.program_for(strategy);
    let mut spec =
        SubjectSpec { driver: bug.driver.clone(), ..SubjectSpec::new(program, &bug.llvm_args) }.with_llvm(llvm)?;
    if bug.clang_args.is_some() {
        spec.frontend = CFrontend::with_flags(Some(spec.frontend.clang), bug.clang_args.as_deref());
    }
    let mut subject = Subject::load(&spec, jobs, limits)?;
    let input = ProgramInput::read(program, &spec.frontend, bug.driver.as_deref(), &subject.target)?;
    let buggy = Sequence::parse(&bug.pipeline, catalog).context("seq.txt")?;
    let mut attempts = Vec::new();
    for seed in 1..=repeat as u64 {
        let opts =
            IsolateOptions { oracle: bug.oracle.clone(), pattern: bug.pattern.clone(), strategy, seed, ..base.clone() };
        let isolation =
            isolate(&mut subject.pool, &mut subject.module, Some(&input), &buggy, catalog, &opts, progress)?;
        if let Some(dir) = rankings {
            keep_ranking(dir, bug, strategy, seed, &isolation)?;
        }
        let of_fix = |f: &String| isolation.ranking.iter().find(|r| &r.path == f);
        let ranks = bug.fix_files.iter().map(|f| of_fix(f).map(|r| r.rank)).collect();
        let spectrum_ranks = bug.fix_files.iter().map(|f| of_fix(f).map(|r| r.evidence.spectrum_rank)).collect();
        let scores = bug.fix_files.iter().map(|f| of_fix(f).map(|r| r.score)).collect();
        let best_other_score = isolation.ranking.iter().find(|r| !bug.fix_files.contains(&r.path)).map(|r| r.score);
        let ranked: Vec<&str> = isolation.ranking.iter().map(|r| r.path.as_str()).collect();
        let culprit_file_ranks = culprit_file_ranks(&bug.fix_files, isolation.culprit_file.as_deref(), &ranked);
        attempts.push(Attempt {
            seed,
            ranks,
            scores,
            best_other_score,
            files_ranked: isolation.ranking.len(),
            culprit: isolation.culprit.as_ref().map(|c| c.to_string()),
            culprit_file_ranks,
            spectrum_ranks,
            evaluations: isolation.stats.evaluations,
            passing: isolation.stats.passing,
            seconds: isolation.seconds_total,
            search_seconds: isolation.stats.seconds,
            fix_class: fix_class_of(&bug.fix_files, &isolation),
            functions: function_ranks(&isolation, &bug.fix_functions),
            reduced: isolation.reduced,
            unattributed: isolation.unattributed,
        });
    }
    Ok(BugOutcome::Ranked { attempts })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_culprit_file_ranks_first_and_every_other_covered_file_ties_last() {
        let fix = vec!["a.cpp".to_string(), "b.cpp".to_string(), "gone.cpp".to_string()];
        let ranked = ["c.cpp", "b.cpp", "a.cpp", "d.cpp"];
        assert_eq!(culprit_file_ranks(&fix, Some("a.cpp"), &ranked), [Some(1), Some(4), None]);
        assert_eq!(culprit_file_ranks(&fix, None, &ranked), [Some(4), Some(4), None]);
        // A culprit file the failing run did not cover still ranks first: it is named.
        assert_eq!(culprit_file_ranks(&fix, Some("gone.cpp"), &ranked), [Some(4), Some(4), Some(1)]);
    }
}
