//! Coverage of witnesses as the failing run's elements they cover (a bitset over those
//! elements: DiWi and RecBi restrict every set to FailCov), Jaccard distances, and RecBi's
//! quality Q of a witness set (spec recbi.md §6) kept up to date in O(n) per witness.

use rand::Rng;

use crate::coverage::Spectrum;

/// How the next rule is chosen and which passing programs are kept.
pub trait Guide {
    fn next_rule(&mut self, rng: &mut dyn Rng) -> usize;
    /// A new passing program made by `rule`: whether it joins the witnesses.
    fn consider(&mut self, rule: usize, candidate: &CovSet, set: &WitnessSet) -> bool;
    /// An attempt with `rule` that gave no new passing program.
    fn missed(&mut self, rule: usize);
    /// Updates of a learned policy so far.
    fn updates(&self) -> usize {
        0
    }
}

/// RecBi's diversity weight α (similarity gets 1 − α).
pub const ALPHA: f64 = 0.8;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CovSet {
    bits: Vec<u64>,
    len: u32,
}

impl CovSet {
    /// The elements of `failing` (sorted) that `run` (sorted) covers.
    pub fn of(run: &Spectrum, failing: &Spectrum) -> CovSet {
        let n = failing.elements.len();
        let mut bits = vec![0u64; n.div_ceil(64)];
        let (mut i, mut j, mut len) = (0, 0, 0);
        let (a, b) = (&failing.elements, &run.elements);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    bits[i / 64] |= 1 << (i % 64);
                    len += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
        CovSet { bits, len }
    }

    #[cfg(test)]
    fn len(&self) -> u32 {
        self.len
    }

    /// 1 − |A ∩ B| / |A ∪ B| (0 for two empty sets).
    pub fn distance(&self, other: &CovSet) -> f64 {
        let common: u32 = self.bits.iter().zip(&other.bits).map(|(a, b)| (a & b).count_ones()).sum();
        let union = self.len + other.len - common;
        if union == 0 {
            0.0
        } else {
            1.0 - f64::from(common) / f64::from(union)
        }
    }
}

/// The accepted witnesses' coverage with the sums Q needs.
pub struct WitnessSet {
    sets: Vec<CovSet>,
    failing_len: u32,
    similarity_sum: f64,
    /// Σ over pairs of their distance.
    distance_sum: f64,
}

impl WitnessSet {
    pub fn new(failing: &Spectrum) -> WitnessSet {
        WitnessSet { sets: Vec::new(), failing_len: failing.len() as u32, similarity_sum: 0.0, distance_sum: 0.0 }
    }

    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// DiWi's duplicate test: a witness must add coverage no witness has exactly.
    pub fn contains(&self, c: &CovSet) -> bool {
        self.sets.iter().any(|s| s == c)
    }

    /// 1 − dist(c, failing run): with c inside FailCov, |c| / |FailCov|.
    fn similarity(&self, c: &CovSet) -> f64 {
        if self.failing_len == 0 {
            1.0
        } else {
            f64::from(c.len) / f64::from(self.failing_len)
        }
    }

    /// Σ dist(c, p) over the witnesses p.
    fn distance_to_all(&self, c: &CovSet) -> f64 {
        self.sets.iter().map(|s| s.distance(c)).sum()
    }

    /// The mean distance from `c` to the witnesses (DiWi's score factor).
    pub fn mean_distance(&self, c: &CovSet) -> f64 {
        if self.sets.is_empty() {
            1.0
        } else {
            self.distance_to_all(c) / self.sets.len() as f64
        }
    }

    fn q_of(n: usize, similarity_sum: f64, distance_sum: f64) -> f64 {
        if n == 0 {
            return 0.0;
        }
        let nf = n as f64;
        let diversity = if n < 2 { 0.0 } else { distance_sum / (nf * (nf - 1.0) / 2.0) };
        nf * (ALPHA * diversity + (1.0 - ALPHA) * similarity_sum / nf)
    }

    pub fn q(&self) -> f64 {
        Self::q_of(self.sets.len(), self.similarity_sum, self.distance_sum)
    }

    /// Q with `c` added, minus Q now.
    pub fn delta_q(&self, c: &CovSet) -> f64 {
        let with = Self::q_of(
            self.sets.len() + 1,
            self.similarity_sum + self.similarity(c),
            self.distance_sum + self.distance_to_all(c),
        );
        with - self.q()
    }

    pub fn add(&mut self, c: CovSet) {
        self.similarity_sum += self.similarity(&c);
        self.distance_sum += self.distance_to_all(&c);
        self.sets.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spectrum(elements: &[u32]) -> Spectrum {
        Spectrum { elements: elements.to_vec(), files: Vec::new(), unattributed: 0 }
    }

    #[test]
    fn sets_are_restricted_to_the_failing_run_and_q_follows_its_definition() {
        let failing = spectrum(&[1, 2, 3, 4, 5, 6, 7, 8]);
        let a = CovSet::of(&spectrum(&[1, 2, 3, 4, 9, 10]), &failing);
        let b = CovSet::of(&spectrum(&[3, 4, 5, 6]), &failing);
        assert_eq!((a.len(), b.len()), (4, 4));
        assert!((a.distance(&b) - (1.0 - 2.0 / 6.0)).abs() < 1e-12);
        let mut set = WitnessSet::new(&failing);
        assert!((set.delta_q(&a) - 0.2 * 0.5).abs() < 1e-12, "n=1: (1-α)·sim");
        set.add(a.clone());
        // n=2: 2·(α·d(a,b) + (1-α)·mean sim).
        let expected = 2.0 * (ALPHA * (2.0 / 3.0) + (1.0 - ALPHA) * 0.5) - 0.1;
        assert!((set.delta_q(&b) - expected).abs() < 1e-12);
        assert!(set.contains(&a) && !set.contains(&b));
        assert!((set.mean_distance(&b) - 2.0 / 3.0).abs() < 1e-12);
    }
}
