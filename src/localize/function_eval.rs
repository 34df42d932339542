//! `locseq eval` at the function level: where the functions a fix changed rank under each
//! function rule, and which rule a leave-one-out over the bench chooses.

use serde::Serialize;

use super::eval_classes::{FixClass, TopN};
use super::functions::{best_fix_rank, rank_functions, FunctionKey, FunctionRank, FunctionRule};
use super::isolate::Isolation;

/// Where one isolation ranks the fix functions.
#[derive(Debug, Clone, Serialize)]
pub struct FunctionRanks {
    /// Per rule of [`FunctionRule::all`], the best rank of a fix function (None: none of
    /// them among the failing run's functions).
    pub by_rule: Vec<Option<usize>>,
    /// The same in the listing before functions were ranked: the three best-scoring
    /// functions of each file, files in their ranking's order.
    pub listed: Option<usize>,
}

/// The fix functions' ranks in `isolation`; None when the bench names no fix function.
pub fn function_ranks(isolation: &Isolation, fix: &[(String, Vec<String>)]) -> Option<FunctionRanks> {
    if fix.is_empty() {
        return None;
    }
    let candidates = &isolation.function_evidence;
    let by_rule = FunctionRule::all().into_iter().map(|rule| best_fix_rank(&rank_functions(candidates, rule), fix));
    let by_score =
        rank_functions(candidates, FunctionRule { stack_first: false, by_file: true, key: FunctionKey::Best });
    Some(FunctionRanks { by_rule: by_rule.collect(), listed: best_fix_rank(&listed(&by_score, 3), fix) })
}

/// The first `per_file` functions of each file of `ranking`, numbered anew.
fn listed(ranking: &[FunctionRank], per_file: usize) -> Vec<FunctionRank> {
    let mut shown: Vec<FunctionRank> = Vec::new();
    for f in ranking {
        if shown.iter().filter(|s| s.evidence.file == f.evidence.file).count() < per_file {
            shown.push(FunctionRank { rank: shown.len() + 1, evidence: f.evidence.clone() });
        }
    }
    shown
}

/// One bug's function ranks, the median over its isolations.
#[derive(Debug, Clone, Serialize)]
pub struct BugFunctions {
    pub bug: String,
    pub class: FixClass,
    pub by_rule: Vec<Option<usize>>,
    pub listed: Option<usize>,
}

impl BugFunctions {
    /// The median of each rank over `attempts` (a fix function not found counts as worst).
    pub fn median(bug: &str, class: FixClass, attempts: &[&FunctionRanks]) -> BugFunctions {
        let median = |of: &dyn Fn(&FunctionRanks) -> Option<usize>| {
            let mut r: Vec<usize> = attempts.iter().map(|a| of(a).unwrap_or(usize::MAX)).collect();
            r.sort_unstable();
            r.get(r.len() / 2).copied().filter(|&m| m != usize::MAX)
        };
        let rules = attempts.first().map_or(0, |a| a.by_rule.len());
        BugFunctions {
            bug: bug.to_string(),
            class,
            by_rule: (0..rules).map(|i| median(&|a| a.by_rule[i])).collect(),
            listed: median(&|a| a.listed),
        }
    }
}

/// How one rule does over the bugs.
#[derive(Debug, Clone, Serialize)]
pub struct RuleScore {
    pub rule: String,
    pub top: TopN,
    /// The same per class, in the order of [`FixClass::ALL`].
    pub by_class: Vec<TopN>,
    /// The bugs whose fix function it ranks within 5: what the rule rests on.
    pub top5_bugs: Vec<String>,
}

/// One class's function-level figures.
#[derive(Debug, Clone, Serialize)]
pub struct FunctionClassSummary {
    pub class: FixClass,
    /// By [`FunctionRule::DEFAULT`], the rule `locseq isolate` ranks by.
    pub ranking: TopN,
    /// By the rule the leave-one-out chose without each bug.
    pub leave_one_out: TopN,
    /// The listing before functions were ranked.
    pub listed: TopN,
}

#[derive(Debug, Clone, Serialize)]
pub struct FunctionSummary {
    pub bugs: Vec<BugFunctions>,
    pub rules: Vec<RuleScore>,
    /// The rule the leave-one-out chooses on every bug.
    pub chosen: String,
    /// Per bug, the rule chosen without it.
    pub chosen_without: Vec<(String, String)>,
    pub by_class: Vec<FunctionClassSummary>,
}

/// The rule that does best on `bugs`: most fix functions within 5, then within 1, 3 and
/// 10; the first of [`FunctionRule::all`] among equals.
fn choose(bugs: &[&BugFunctions], rules: usize) -> usize {
    let score = |i: usize| {
        let t = TopN::of(bugs.iter().map(|b| b.by_rule[i]));
        (t.top5, t.top1, t.top3, t.top10)
    };
    (0..rules).rev().max_by_key(|&i| score(i)).unwrap_or(0)
}

/// The function-level figures of `bugs`; None without any.
pub fn summarize_functions(bugs: Vec<BugFunctions>) -> Option<FunctionSummary> {
    let rules = FunctionRule::all();
    if bugs.is_empty() {
        return None;
    }
    let all: Vec<&BugFunctions> = bugs.iter().collect();
    let default = rules.iter().position(|r| *r == FunctionRule::DEFAULT).expect("the default is a rule");
    let held_out: Vec<usize> = (0..bugs.len())
        .map(|i| {
            let others: Vec<&BugFunctions> = all.iter().enumerate().filter(|&(j, _)| j != i).map(|(_, b)| *b).collect();
            choose(&others, rules.len())
        })
        .collect();
    let rule_scores = rules
        .iter()
        .enumerate()
        .map(|(i, rule)| RuleScore {
            rule: rule.name(),
            top: TopN::of(bugs.iter().map(|b| b.by_rule[i])),
            by_class: FixClass::ALL
                .iter()
                .map(|&c| TopN::of(bugs.iter().filter(|b| b.class == c).map(|b| b.by_rule[i])))
                .collect(),
            top5_bugs: bugs.iter().filter(|b| b.by_rule[i].is_some_and(|r| r <= 5)).map(|b| b.bug.clone()).collect(),
        })
        .collect();
    let by_class = FixClass::ALL
        .iter()
        .map(|&class| {
            let mine = || bugs.iter().enumerate().filter(move |(_, b)| b.class == class);
            FunctionClassSummary {
                class,
                ranking: TopN::of(mine().map(|(_, b)| b.by_rule[default])),
                leave_one_out: TopN::of(mine().map(|(i, b)| b.by_rule[held_out[i]])),
                listed: TopN::of(mine().map(|(_, b)| b.listed)),
            }
        })
        .collect();
    Some(FunctionSummary {
        chosen: rules[choose(&all, rules.len())].name(),
        chosen_without: bugs.iter().zip(&held_out).map(|(b, &i)| (b.bug.clone(), rules[i].name())).collect(),
        rules: rule_scores,
        by_class,
        bugs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bug(name: &str, by_rule: Vec<Option<usize>>) -> BugFunctions {
        BugFunctions { bug: name.into(), class: FixClass::InCulprit, by_rule, listed: None }
    }

    #[test]
    fn the_leave_one_out_judges_each_bug_by_the_rule_the_others_choose() {
        let n = FunctionRule::all().len();
        let ranks = |first: usize, second: usize| {
            let mut r = vec![None; n];
            (r[0], r[1]) = (Some(first), Some(second));
            r
        };
        // Rule 0 ranks the fix within 5 for a and b, rule 1 for c alone, which rule 0 misses.
        let bugs = vec![bug("a", ranks(1, 9)), bug("b", ranks(2, 8)), bug("c", ranks(7, 1))];
        let s = summarize_functions(bugs).unwrap();
        assert_eq!(s.chosen, FunctionRule::all()[0].name());
        assert_eq!(s.rules[1].top5_bugs, ["c"]);
        // Without a, rules 0 and 1 tie on top-5 (1 each) and rule 1 has the better top-1.
        let without: Vec<&str> = s.chosen_without.iter().map(|(_, r)| r.as_str()).collect();
        assert_eq!(
            without,
            [FunctionRule::all()[1].name(), FunctionRule::all()[0].name(), FunctionRule::all()[0].name()]
        );
        let class = &s.by_class[0];
        // Held out, a is judged by rule 1 (9: missed), b and c by rule 0 (2 and 7).
        assert_eq!((class.leave_one_out.bugs, class.leave_one_out.top5, class.leave_one_out.top10), (3, 1, 3));
    }

    #[test]
    fn a_bugs_rank_is_the_median_of_its_isolations_and_a_missing_function_counts_as_worst() {
        let a = FunctionRanks { by_rule: vec![Some(1), None], listed: Some(4) };
        let b = FunctionRanks { by_rule: vec![Some(3), Some(2)], listed: None };
        let c = FunctionRanks { by_rule: vec![Some(2), None], listed: None };
        let m = BugFunctions::median("x", FixClass::Elsewhere, &[&a, &b, &c]);
        assert_eq!((m.by_rule, m.listed), (vec![Some(2), None], None));
    }
}
