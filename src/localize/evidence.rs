//! Spectrum counts over the failing run's elements, accumulated run by run, so that a
//! search of thousands of runs keeps counters instead of spectra.

use serde::{Deserialize, Serialize};

use super::sbfl::{self, Counts, Formula};
use crate::coverage::Spectrum;

/// Which failing runs count as evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum FailingEvidence {
    /// The one failing run of the buggy sequence (LocSeq): ef = 1 for all its elements.
    #[default]
    One,
    /// Also every candidate that fails the same way (shared/notes/localization-lessons.md:
    /// raised the fix file's score from 0.08 to 0.78 on a development bug).
    All,
}

pub struct Evidence {
    /// The failing run's elements (restricted), sorted; the counters are indexed alike.
    pub elements: Vec<u32>,
    ef: Vec<u32>,
    ep: Vec<u32>,
    pub failing: u32,
    pub passing: u32,
    /// The counters as they were after some of the runs, for the search's progress: taken
    /// at geometrically spaced run counts, so a search of any length keeps about a hundred.
    pub history: Vec<Snapshot>,
    started: std::time::Instant,
    next_snapshot: u32,
}

/// The evidence after `failing + passing` runs, `seconds` into the search.
#[derive(Clone)]
pub struct Snapshot {
    pub seconds: f64,
    ef: Vec<u32>,
    ep: Vec<u32>,
    pub failing: u32,
    pub passing: u32,
}

/// Run counts between snapshots grow by this factor.
const SNAPSHOT_GROWTH: f64 = 1.12;

/// Add 1 to `counts[i]` for every `elements[i]` that `spectrum` covers (both sorted).
fn count_into(elements: &[u32], spectrum: &Spectrum, counts: &mut [u32]) {
    let (mut i, mut j) = (0, 0);
    let other = &spectrum.elements;
    while i < elements.len() && j < other.len() {
        match elements[i].cmp(&other[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                counts[i] += 1;
                i += 1;
                j += 1;
            }
        }
    }
}

impl Evidence {
    /// Evidence holding the buggy sequence's failing run.
    pub fn new(failing: &Spectrum) -> Evidence {
        let n = failing.elements.len();
        let mut evidence = Evidence {
            elements: failing.elements.clone(),
            ef: vec![1; n],
            ep: vec![0; n],
            failing: 1,
            passing: 0,
            history: Vec::new(),
            started: std::time::Instant::now(),
            next_snapshot: 1,
        };
        evidence.note();
        evidence
    }

    pub fn add_passing(&mut self, spectrum: &Spectrum) {
        count_into(&self.elements, spectrum, &mut self.ep);
        self.passing += 1;
        self.note();
    }

    pub fn add_failing(&mut self, spectrum: &Spectrum) {
        count_into(&self.elements, spectrum, &mut self.ef);
        self.failing += 1;
        self.note();
    }

    fn note(&mut self) {
        let runs = self.failing + self.passing;
        if runs < self.next_snapshot {
            return;
        }
        self.next_snapshot = (runs + 1).max((runs as f64 * SNAPSHOT_GROWTH) as u32);
        self.snapshot();
    }

    /// Keep the counters as they are now (the last snapshot of a search).
    pub fn snapshot(&mut self) {
        let runs = self.failing + self.passing;
        if self.history.last().is_some_and(|s| s.failing + s.passing == runs) {
            return;
        }
        self.history.push(Snapshot {
            seconds: self.started.elapsed().as_secs_f64(),
            ef: self.ef.clone(),
            ep: self.ep.clone(),
            failing: self.failing,
            passing: self.passing,
        });
    }

    /// The evidence as it was at `snapshot` (without history of its own).
    pub fn as_of(&self, snapshot: &Snapshot) -> Evidence {
        Evidence {
            elements: self.elements.clone(),
            ef: snapshot.ef.clone(),
            ep: snapshot.ep.clone(),
            failing: snapshot.failing,
            passing: snapshot.passing,
            history: Vec::new(),
            started: self.started,
            next_snapshot: u32::MAX,
        }
    }

    /// Whether each element (in the order of `elements`) is covered by failing runs and by
    /// at most `share` of the passing runs (none, when there are fewer than 1/`share` of
    /// them; 0: failure-only).
    pub fn failure_specific(&self, share: f64) -> Vec<bool> {
        let most = share * f64::from(self.passing);
        self.ef.iter().zip(&self.ep).map(|(&ef, &ep)| ef > 0 && f64::from(ep) <= most).collect()
    }

    /// The score of each element, in the order of `elements`.
    pub fn scores(&self, formula: Formula) -> Vec<f64> {
        (0..self.elements.len())
            .map(|i| {
                let counts = Counts {
                    ef: self.ef[i],
                    nf: self.failing - self.ef[i],
                    ep: self.ep[i],
                    np: self.passing - self.ep[i],
                };
                sbfl::score(formula, counts)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spectrum(elements: &[u32]) -> Spectrum {
        Spectrum { elements: elements.to_vec(), ..Spectrum::default() }
    }

    #[test]
    fn snapshots_are_sparse_over_a_long_search_and_give_back_the_counts_of_their_time() {
        let mut evidence = Evidence::new(&spectrum(&[1, 2, 3]));
        for i in 0..10_000 {
            if i % 2 == 0 {
                evidence.add_passing(&spectrum(&[1]));
            } else {
                evidence.add_failing(&spectrum(&[2]));
            }
        }
        let runs: Vec<u32> = evidence.history.iter().map(|s| s.failing + s.passing).collect();
        assert!(runs.len() < 100, "{} snapshots of 10,001 runs", runs.len());
        assert_eq!(&runs[..4], &[1, 2, 3, 4], "every early run is kept");
        assert!(runs.windows(2).all(|w| w[0] < w[1]));
        let at = evidence.history.iter().find(|s| s.failing + s.passing >= 101).unwrap();
        let then = evidence.as_of(at);
        let (passing, failing) = (then.passing, then.failing);
        // Element 1 was in every passing run, element 2 in every failing one (plus the first).
        let formula = Formula::Ochiai;
        let scores = then.scores(formula);
        assert_eq!(passing + failing, at.failing + at.passing);
        let expect = |ef: u32, ep: u32| sbfl::score(formula, Counts { ef, nf: failing - ef, ep, np: passing - ep });
        assert_eq!(scores, vec![expect(1, passing), expect(failing, 0), expect(1, 0)]);
    }
}
