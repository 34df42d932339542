//! Where a bug's fix is against the culprit, and Top-n counts: what `locseq eval`'s file
//! and function figures share.

use serde::Serialize;

/// Where a bug's fix is, against the culprit pass the isolation named: the two classes on
/// which rankings fail differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FixClass {
    /// In the culprit pass's files: its `run` method's, or one defining its classes' members.
    InCulprit,
    /// Elsewhere: an analysis, a utility or helper it calls, a pass that ran before it.
    Elsewhere,
}

impl FixClass {
    pub const ALL: [FixClass; 2] = [FixClass::InCulprit, FixClass::Elsewhere];

    pub fn name(self) -> &'static str {
        match self {
            FixClass::InCulprit => "in-culprit",
            FixClass::Elsewhere => "elsewhere",
        }
    }
}

/// Top-1/3/5/10 of one ranking over the bugs of one class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TopN {
    pub bugs: usize,
    pub top1: usize,
    pub top3: usize,
    pub top5: usize,
    pub top10: usize,
}

impl TopN {
    pub fn of(best_ranks: impl Iterator<Item = Option<usize>>) -> TopN {
        let mut t = TopN::default();
        for best in best_ranks {
            t.bugs += 1;
            let within = |n: usize| usize::from(best.is_some_and(|r| r <= n));
            (t.top1, t.top3, t.top5, t.top10) =
                (t.top1 + within(1), t.top3 + within(3), t.top5 + within(5), t.top10 + within(10));
        }
        t
    }
}
