//! DiWi's rule selection (spec diwi.md §5.2–5.3): rules ranked by a score that rewards
//! producing witnesses far from the ones already found, sampled by Metropolis–Hastings
//! with a geometric target over ranking positions.

use rand::{Rng, RngExt};

use super::quality::{CovSet, Guide, WitnessSet};

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
    /// 1-based position of each rule in the ranking by score.
    position: Vec<usize>,
    current: Option<usize>,
}

impl Diwi {
    pub fn new(rules: usize) -> Diwi {
        Diwi {
            score: vec![0.0; rules],
            last_distance: vec![0.0; rules],
            selected: vec![0; rules],
            succeeded: vec![0; rules],
            position: (1..=rules).collect(),
            current: None,
        }
    }

    fn rescore(&mut self, rule: usize) {
        let rate = f64::from(self.succeeded[rule]) / f64::from(self.selected[rule].max(1));
        self.score[rule] = self.last_distance[rule] * rate;
        // Positions in the descending ranking, ties in rule order (a stable sort).
        let mut order: Vec<usize> = (0..self.score.len()).collect();
        order.sort_by(|&a, &b| self.score[b].total_cmp(&self.score[a]));
        for (k, r) in order.into_iter().enumerate() {
            self.position[r] = k + 1;
        }
    }
}

impl Guide for Diwi {
    fn next_rule(&mut self, rng: &mut dyn Rng) -> usize {
        let n = self.score.len();
        let chosen = match self.current {
            None => rng.random_range(0..n),
            Some(a) => {
                let k_a = self.position[a] as i32;
                loop {
                    let b = rng.random_range(0..n);
                    let k_b = self.position[b] as i32;
                    let f: f64 = rng.random_range(0.0..1.0);
                    // A better or equally scored rule is always taken (spec §5.3 [C]).
                    if k_b <= k_a || self.score[b] == self.score[a] || f < (1.0 - P).powi(k_b - k_a) {
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

    /// Rule r finds a witness with probability r/131: the chain's draws follow the
    /// geometric target over the ranking, so the best rules are drawn far more often.
    #[test]
    fn rules_that_find_witnesses_are_drawn_far_more_often() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut diwi = Diwi::new(132);
        let failing = crate::coverage::Spectrum { elements: (0..64).collect(), files: Vec::new(), unattributed: 0 };
        let set = WitnessSet::new(&failing);
        let cov = CovSet::of(&failing, &failing);
        let mut draws = vec![0; 132];
        for _ in 0..40_000 {
            let r = diwi.next_rule(&mut rng);
            draws[r] += 1;
            if rng.random_bool(r as f64 / 131.0) {
                diwi.consider(r, &cov, &set);
            } else {
                diwi.missed(r);
            }
        }
        let (bottom, top): (u32, u32) = (draws[..10].iter().sum(), draws[122..].iter().sum());
        // The target gives the ten best positions about 21% of draws, the ten worst 1.3%.
        assert!(top > 5 * bottom, "top ten {top}, bottom ten {bottom}");
        assert!(top > 40_000 / 10, "top ten {top}");
    }
}
