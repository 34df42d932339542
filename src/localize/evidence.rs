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
}

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
        Evidence { elements: failing.elements.clone(), ef: vec![1; n], ep: vec![0; n], failing: 1, passing: 0 }
    }

    pub fn add_passing(&mut self, spectrum: &Spectrum) {
        count_into(&self.elements, spectrum, &mut self.ep);
        self.passing += 1;
    }

    pub fn add_failing(&mut self, spectrum: &Spectrum) {
        count_into(&self.elements, spectrum, &mut self.ef);
        self.failing += 1;
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
