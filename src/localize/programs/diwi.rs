//! DiWi's rule selection (spec diwi.md §5.2–5.3): rules ranked by a score that rewards
//! producing witnesses far from the ones already found, sampled by Metropolis–Hastings
//! with a geometric target over ranking positions.

use rand::{Rng, RngExt};

use super::quality::{CovSet, WitnessSet};
use super::search::Guide;

/// The geometric target's parameter: ≥ 95% of its mass on 132 positions, the worst rule
/// rarely drawn (spec §5.3).
pub const P: f64 = 0.023;

pub struct Diwi {
    score: Vec<f64>,
    /// The mean-distance factor of each rule's last witness (spec §5.2 [I]: the score is
    /// that factor times the current success rate, not the old score times it).
    last_distance: Vec<f64>,
    selected: Vec<u32>,
    succeeded: Vec<u32>,
    current: Option<usize>,
}

impl Diwi {
    pub fn new(rules: usize) -> Diwi {
        Diwi {
            score: vec![0.0; rules],
            last_distance: vec![0.0; rules],
            selected: vec![0; rules],
            succeeded: vec![0; rules],
            current: None,
        }
    }

    /// 1 + the number of rules scored strictly higher: tied rules share a position, so a
    /// move between them is always accepted.
    fn position(&self, rule: usize) -> usize {
        1 + self.score.iter().filter(|&&s| s > self.score[rule]).count()
    }

    fn rescore(&mut self, rule: usize) {
        let rate = f64::from(self.succeeded[rule]) / f64::from(self.selected[rule].max(1));
        self.score[rule] = self.last_distance[rule] * rate;
    }
}

impl Guide for Diwi {
    fn next_rule(&mut self, rng: &mut dyn Rng) -> usize {
        let n = self.score.len();
        let chosen = match self.current {
            None => rng.random_range(0..n),
            Some(a) => {
                let k_a = self.position(a) as i32;
                loop {
                    let b = rng.random_range(0..n);
                    let k_b = self.position(b) as i32;
                    let f: f64 = rng.random_range(0.0..1.0);
                    if k_b <= k_a || f < (1.0 - P).powi(k_b - k_a) {
                        break b;
                    }
                }
            }
        };
        self.selected[chosen] += 1;
        self.current = Some(chosen);
        chosen
    }

    fn consider(&mut self, rule: usize, candidate: &CovSet, set: &WitnessSet) -> bool {
        self.succeeded[rule] += 1;
        self.last_distance[rule] = if set.is_empty() { 1.0 } else { set.mean_distance(candidate) };
        self.rescore(rule);
        true
    }

    fn missed(&mut self, rule: usize) {
        self.rescore(rule);
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;

    #[test]
    fn the_truncated_geometric_keeps_95_percent_of_its_mass_on_132_rules() {
        let mass: f64 = (1..=132).map(|k| (1.0 - P).powi(k - 1) * P).sum();
        assert!((0.95..=1.0).contains(&mass), "{mass}");
        assert!((1.0 - P).powi(131) * P < 0.0012);
    }

    #[test]
    fn a_rule_that_finds_witnesses_is_drawn_far_more_often() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut diwi = Diwi::new(132);
        let failing = crate::coverage::Spectrum { elements: (0..64).collect(), files: Vec::new(), unattributed: 0 };
        let set = WitnessSet::new(&failing);
        let cov = CovSet::of(&failing, &failing);
        let mut draws = vec![0; 132];
        for _ in 0..20_000 {
            let r = diwi.next_rule(&mut rng);
            draws[r] += 1;
            if r == 17 {
                diwi.consider(r, &cov, &set);
            } else {
                diwi.missed(r);
            }
        }
        // Uniform would give about 150 draws each.
        assert!(draws[17] > 5_000, "rule 17 drawn {} times", draws[17]);
        let others = draws.iter().enumerate().filter(|(i, _)| *i != 17).map(|(_, d)| *d).max().unwrap();
        assert!(others < draws[17] / 10, "{others}");
    }
}
