//! How a localization got where it ended: the search's counts over time, and the scores
//! the finally top-ranked files had as the evidence grew (no fix file needed to read it).

use std::collections::HashMap;

use serde::Serialize;

use super::evidence::Evidence;
use super::rank::{rank, DirectEvidence, FileRank};
use super::record::SearchStats;
use super::sbfl::{Aggregate, Formula};
use crate::coverage::Sites;

/// Files whose scores are followed over time.
pub const FOLLOWED_FILES: usize = 5;

#[derive(Debug, Clone, Serialize)]
pub struct ProgressPoint {
    pub seconds: f64,
    pub evaluations: usize,
    /// Bug-free witnesses found so far.
    pub passing: usize,
    pub failing_same: usize,
    pub best_similarity: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ScorePoint {
    pub seconds: f64,
    /// Runs in the evidence then (the failing run included).
    pub runs: u32,
    /// The scores of [`SearchHistory::files`] then, in that order.
    pub scores: Vec<f64>,
    /// The file ranked first then.
    pub leader: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct SearchHistory {
    pub progress: Vec<ProgressPoint>,
    /// The files ranked first at the end, best first.
    pub files: Vec<String>,
    pub scores: Vec<ScorePoint>,
    /// What ranking every snapshot again cost, after the search.
    pub seconds_following: f64,
}

impl SearchHistory {
    /// Record the search's counts, at most every `min_gap` seconds (and always the first).
    pub fn record(&mut self, s: &SearchStats, min_gap: f64) {
        if self.progress.last().is_some_and(|p| s.seconds - p.seconds < min_gap) {
            return;
        }
        self.progress.push(ProgressPoint {
            seconds: s.seconds,
            evaluations: s.evaluations,
            passing: s.passing,
            failing_same: s.failing_same,
            best_similarity: s.best_similarity,
        });
    }

    /// The final counts, replacing a point recorded at the same time.
    pub fn finish(&mut self, s: &SearchStats) {
        if self.progress.last().is_some_and(|p| p.evaluations == s.evaluations) {
            self.progress.pop();
        }
        self.record(s, 0.0);
    }

    /// Rank the evidence as it stood at each of its snapshots, keeping the scores of the
    /// files that rank first at the end.
    pub fn follow_scores(
        &mut self,
        evidence: &Evidence,
        ranking: &[FileRank],
        sites: &Sites,
        formula: Formula,
        aggregate: Aggregate,
        direct: &DirectEvidence,
    ) {
        let started = std::time::Instant::now();
        self.files = ranking.iter().take(FOLLOWED_FILES).map(|f| f.path.clone()).collect();
        self.scores = evidence
            .history
            .iter()
            .map(|snapshot| {
                let then = rank(&evidence.as_of(snapshot), sites, formula, aggregate, direct);
                let score_of: HashMap<&str, f64> = then.iter().map(|f| (f.path.as_str(), f.score)).collect();
                ScorePoint {
                    seconds: snapshot.seconds,
                    runs: snapshot.failing + snapshot.passing,
                    scores: self.files.iter().map(|f| score_of.get(f.as_str()).copied().unwrap_or(0.0)).collect(),
                    leader: then.first().map(|f| f.path.clone()),
                }
            })
            .collect();
        self.seconds_following = started.elapsed().as_secs_f64();
    }
}
