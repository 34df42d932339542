//! Spectrum-based fault localization at file level (spec §2.7) and the evaluation metrics of
//! §3.1. Elements (functions, blocks, lines) are scored from their spectrum counts, and the
//! scores of a file's elements are combined into the file's score.

use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Formula {
    Ochiai,
    Tarantula,
    Dstar,
}

/// How element scores become a file score. LocSeq uses the mean (eq. 8); the mean buries
/// large files and the max ties many. The sum, a file's total suspiciousness, ranked best
/// on the development bugs once traces cover the culprit pass alone (there the files the
/// culprit runs most of its own code in are the pass's and its helpers').
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Aggregate {
    Mean,
    Max,
    Sum,
}

/// Spectrum counts of one element: failing runs covering it (ef) / not (nf), passing
/// covering (ep) / not (np).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    pub ef: u32,
    pub nf: u32,
    pub ep: u32,
    pub np: u32,
}

/// The suspiciousness of one element; never NaN. With one failing run that covers the
/// element, Ochiai is LocSeq's `1/sqrt(1+ep)` (eq. 7).
pub fn score(formula: Formula, c: Counts) -> f64 {
    let (ef, nf, ep, np) = (f64::from(c.ef), f64::from(c.nf), f64::from(c.ep), f64::from(c.np));
    if c.ef == 0 {
        return 0.0;
    }
    match formula {
        // ef > 0 makes both factors of the denominator positive.
        Formula::Ochiai => ef / ((ef + nf) * (ef + ep)).sqrt(),
        Formula::Tarantula => {
            let passing = if c.ep == 0 { 0.0 } else { ep / (ep + np) };
            let failing = ef / (ef + nf);
            failing / (failing + passing)
        }
        // Star = 2. Covered by every failing run and no passing run: as suspicious as it gets.
        Formula::Dstar if c.ep == 0 && c.nf == 0 => f64::INFINITY,
        Formula::Dstar => ef * ef / (ep + nf),
    }
}

/// Per-file scores from per-element scores. `elements[i] = (file, score)` for every element
/// the failing run covered that belongs to a file.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RankedFile {
    pub file: u32,
    pub score: f64,
    pub elements: usize,
    pub rank: usize,
}

/// Sorted by score descending; `rank` is the worst position of its tie group (1-based): with
/// scores [0.9, 0.5, 0.5, 0.1] ranks are [1, 3, 3, 4]. Ties are listed by file id.
pub fn rank_files(elements: &[(u32, f64)], aggregate: Aggregate) -> Vec<RankedFile> {
    let mut per_file: BTreeMap<u32, (f64, f64, usize)> = BTreeMap::new();
    for &(file, s) in elements {
        let (sum, max, n) = per_file.entry(file).or_insert((0.0, f64::NEG_INFINITY, 0));
        *sum += s;
        *max = max.max(s);
        *n += 1;
    }
    let ranked: Vec<RankedFile> = per_file
        .into_iter()
        .map(|(file, (sum, max, n))| {
            let score = match aggregate {
                Aggregate::Mean => sum / n as f64,
                Aggregate::Max => max,
                Aggregate::Sum => sum,
            };
            RankedFile { file, score, elements: n, rank: 0 }
        })
        .collect();
    sorted_with_ranks(ranked)
}

/// `ranked` by score descending (equal scores by file id), each with the worst position of
/// its tie group as its rank.
pub fn sorted_with_ranks(mut ranked: Vec<RankedFile>) -> Vec<RankedFile> {
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.file.cmp(&b.file)));
    // Exact equality defines a tie: scores are computed the same way for every file, and a
    // tolerance would make ties non-transitive.
    let mut start = 0;
    while start < ranked.len() {
        let end = start + ranked[start..].iter().take_while(|f| f.score == ranked[start].score).count();
        for f in &mut ranked[start..end] {
            f.rank = end;
        }
        start = end;
    }
    ranked
}

/// The rank of `file`, None when the failing run did not cover it.
pub fn rank_of(ranking: &[RankedFile], file: u32) -> Option<usize> {
    ranking.iter().find(|f| f.file == file).map(|f| f.rank)
}

/// Evaluation metrics over bugs (spec §3.1). Lower MFR/MAR is better.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Metrics {
    pub top1: usize,
    pub top5: usize,
    pub top10: usize,
    pub top20: usize,
    pub mfr: f64,
    pub mar: f64,
    pub bugs: usize,
}

/// `ranks[b]` = the ranks of bug b's fix files (None = not covered by the failing run, counted
/// as `uncovered_rank[b]`, which the caller sets to ranking.len()+1). Top-n counts bugs whose
/// best-ranked fix file has rank ≤ n; MFR = mean over bugs of the best rank; MAR = mean over
/// bugs of the mean rank of its fix files. With no bugs, MFR and MAR are NaN.
pub fn metrics(ranks: &[Vec<Option<usize>>], uncovered_rank: &[usize]) -> Metrics {
    assert_eq!(ranks.len(), uncovered_rank.len(), "metrics: one uncovered rank per bug");
    let mut m = Metrics { top1: 0, top5: 0, top10: 0, top20: 0, mfr: 0.0, mar: 0.0, bugs: ranks.len() };
    for (fix_files, &uncovered) in ranks.iter().zip(uncovered_rank) {
        // A bug without a known fix file cannot be localized: it counts as uncovered.
        let resolved: Vec<usize> = if fix_files.is_empty() {
            vec![uncovered]
        } else {
            fix_files.iter().map(|r| r.unwrap_or(uncovered)).collect()
        };
        let best = *resolved.iter().min().expect("non-empty");
        // Past the last rank is a miss however few files were ranked (none, when the LLVM's
        // code could not be attributed): only a covered fix file counts toward Top-n.
        let found = fix_files.iter().flatten().min().copied().unwrap_or(usize::MAX);
        m.top1 += usize::from(found <= 1);
        m.top5 += usize::from(found <= 5);
        m.top10 += usize::from(found <= 10);
        m.top20 += usize::from(found <= 20);
        m.mfr += best as f64;
        m.mar += resolved.iter().sum::<usize>() as f64 / resolved.len() as f64;
    }
    m.mfr /= m.bugs as f64;
    m.mar /= m.bugs as f64;
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(ef: u32, nf: u32, ep: u32, np: u32) -> Counts {
        Counts { ef, nf, ep, np }
    }

    fn assert_close(actual: f64, expected: f64) {
        assert!((actual - expected).abs() < 1e-12, "{actual} != {expected}");
    }

    #[test]
    fn ochiai_on_hand_computed_spectra() {
        // 1 / sqrt(1 · 4)
        assert_close(score(Formula::Ochiai, counts(1, 0, 3, 5)), 0.5);
        // 3 / sqrt(4 · 4)
        assert_close(score(Formula::Ochiai, counts(3, 1, 1, 9)), 0.75);
        // 2 / sqrt(2 · 2): covered by every failing run and no passing one
        assert_close(score(Formula::Ochiai, counts(2, 0, 0, 7)), 1.0);
        // denominators (0 · 0) and (1 · 0)
        assert_eq!(score(Formula::Ochiai, counts(0, 0, 0, 0)), 0.0);
        assert_eq!(score(Formula::Ochiai, counts(0, 1, 0, 3)), 0.0);
    }

    #[test]
    fn ochiai_with_one_failing_run_is_locseqs_eq_7() {
        for ep in 0..50 {
            assert_close(score(Formula::Ochiai, counts(1, 0, ep, 100 - ep)), 1.0 / (1.0 + f64::from(ep)).sqrt());
        }
    }

    #[test]
    fn tarantula_on_hand_computed_spectra() {
        // (1/1) / (1/1 + 1/4) = 1 / 1.25
        assert_close(score(Formula::Tarantula, counts(1, 0, 1, 3)), 0.8);
        // (2/4) / (2/4 + 0/4)
        assert_close(score(Formula::Tarantula, counts(2, 2, 0, 4)), 1.0);
        // (1/2) / (1/2 + 3/6) = 0.5
        assert_close(score(Formula::Tarantula, counts(1, 1, 3, 3)), 0.5);
        // no passing runs: ep/P = 0/0 taken as 0
        assert_close(score(Formula::Tarantula, counts(1, 0, 0, 0)), 1.0);
        // not covered by a failing run
        assert_eq!(score(Formula::Tarantula, counts(0, 3, 2, 2)), 0.0);
        assert_eq!(score(Formula::Tarantula, counts(0, 0, 0, 0)), 0.0);
    }

    #[test]
    fn dstar_on_hand_computed_spectra() {
        // 2² / (3 + 1)
        assert_close(score(Formula::Dstar, counts(2, 1, 3, 0)), 1.0);
        // 3² / (2 + 0)
        assert_close(score(Formula::Dstar, counts(3, 0, 2, 8)), 4.5);
        assert_eq!(score(Formula::Dstar, counts(1, 0, 0, 5)), f64::INFINITY);
        assert_eq!(score(Formula::Dstar, counts(0, 0, 0, 0)), 0.0);
        assert_eq!(score(Formula::Dstar, counts(0, 2, 4, 0)), 0.0);
    }

    /// File 1: one hot element among cold ones; file 2: a single warm element; file 3: many
    /// lukewarm elements. Mean 1: 1.25/3 ≈ 0.417, 2: 0.5, 3: 0.25; max 1: 1.0, 2: 0.5, 3: 0.25;
    /// sum 1: 1.25, 2: 0.5, 3: 1.5.
    fn crafted() -> Vec<(u32, f64)> {
        let mut elements = vec![(1, 1.0), (3, 0.25), (1, 0.125), (2, 0.5), (1, 0.125)];
        elements.extend([(3, 0.25); 5]);
        elements
    }

    fn order(ranking: &[RankedFile]) -> Vec<u32> {
        ranking.iter().map(|f| f.file).collect()
    }

    #[test]
    fn the_aggregate_decides_the_order() {
        let mean = rank_files(&crafted(), Aggregate::Mean);
        assert_eq!(order(&mean), [2, 1, 3]);
        assert_close(mean[1].score, 1.25 / 3.0);
        assert_eq!(mean.iter().map(|f| f.elements).collect::<Vec<_>>(), [1, 3, 6]);
        assert_eq!(order(&rank_files(&crafted(), Aggregate::Max)), [1, 2, 3]);
        let sum = rank_files(&crafted(), Aggregate::Sum);
        assert_eq!(order(&sum), [3, 1, 2]);
        assert_close(sum[0].score, 1.5);
        assert_eq!(sum.iter().map(|f| f.rank).collect::<Vec<_>>(), [1, 2, 3]);
    }

    #[test]
    fn ties_take_the_worst_rank_and_list_by_file_id() {
        let elements = [(9, 0.1), (5, 0.5), (7, 0.9), (3, 0.5)];
        let ranking = rank_files(&elements, Aggregate::Max);
        assert_eq!(order(&ranking), [7, 3, 5, 9]);
        assert_eq!(ranking.iter().map(|f| f.rank).collect::<Vec<_>>(), [1, 3, 3, 4]);
        assert_eq!(rank_of(&ranking, 5), Some(3));
        assert_eq!(rank_of(&ranking, 9), Some(4));
        assert_eq!(rank_of(&ranking, 4), None);
    }

    #[test]
    fn with_no_passing_runs_every_file_ties_last() {
        // §2.7: an empty S_free scores every element 1, so all files share the worst rank.
        let one = score(Formula::Ochiai, counts(1, 0, 0, 0));
        let elements: Vec<(u32, f64)> = [4, 2, 4, 8, 2, 2].iter().map(|&f| (f, one)).collect();
        let ranking = rank_files(&elements, Aggregate::Mean);
        assert_eq!(order(&ranking), [2, 4, 8]);
        assert!(ranking.iter().all(|f| f.rank == 3 && f.score == 1.0));
    }

    #[test]
    fn metrics_over_three_bugs() {
        // bug 0: fix file first                  → best 1,  mean 1
        // bug 1: fix files at 4 and 12           → best 4,  mean 8
        // bug 2: one uncovered (51), one at 15   → best 15, mean 33
        let ranks = vec![vec![Some(1)], vec![Some(12), Some(4)], vec![None, Some(15)]];
        let m = metrics(&ranks, &[30, 40, 51]);
        assert_eq!((m.top1, m.top5, m.top10, m.top20, m.bugs), (1, 2, 2, 3, 3));
        assert_close(m.mfr, (1.0 + 4.0 + 15.0) / 3.0);
        assert_close(m.mar, (1.0 + 8.0 + 33.0) / 3.0);
    }

    #[test]
    fn an_uncovered_fix_file_counts_as_past_the_last_rank() {
        let m = metrics(&[vec![None], vec![Some(20), Some(21)]], &[101, 60]);
        assert_eq!((m.top10, m.top20), (0, 1));
        // best ranks 101 and 20; mean ranks 101 and 20.5
        assert_close(m.mfr, 60.5);
        assert_close(m.mar, 60.75);
    }

    #[test]
    fn an_uncovered_fix_file_is_no_top_n_hit_when_few_files_are_ranked() {
        // Nothing ranked: "one past the last rank" is 1, yet nothing was found.
        let m = metrics(&[vec![None], vec![None, Some(3)]], &[1, 4]);
        assert_eq!((m.top1, m.top5, m.top10), (0, 1, 1));
        assert_close(m.mfr, 2.0);
    }
}
