//! RecBi's operator selection (spec recbi.md §2, §7): an A2C agent picks an operator class,
//! a rule of the class is drawn uniformly, and each new passing program is one time step
//! whose reward is the running mean of ΔQ over the class's steps. A program is kept only
//! when it does not lower the set's quality Q (ΔQ ≥ 0).

use rand::{Rng, RngExt};

use super::a2c::{ActorCritic, Step};
use super::quality::{CovSet, Guide, WitnessSet};
use crate::mutate::witness::{RuleClass, RuleInfo};

/// Steps per update (u).
pub const U: usize = 5;
pub const GAMMA: f64 = 0.9;
pub const LEARNING_RATE: f64 = 0.01;

pub struct Recbi {
    net: ActorCritic,
    /// The rules of each class.
    by_class: Vec<Vec<usize>>,
    /// Passing programs each class produced, from 1 (spec §7.1).
    counts: Vec<f64>,
    /// Per class: steps and the mean ΔQ over them (Formula 6).
    reward: Vec<(u32, f64)>,
    buffer: Vec<Step>,
    class_of: Vec<usize>,
    pub updates: usize,
}

impl Recbi {
    pub fn new(rules: &[RuleInfo], rng: &mut dyn Rng) -> Recbi {
        let mut by_class = vec![Vec::new(); RuleClass::COUNT];
        for (i, r) in rules.iter().enumerate() {
            by_class[r.class.index()].push(i);
        }
        Recbi {
            net: ActorCritic::new(RuleClass::COUNT, LEARNING_RATE, GAMMA, rng),
            by_class,
            counts: vec![1.0; RuleClass::COUNT],
            reward: vec![(0, 0.0); RuleClass::COUNT],
            buffer: Vec::new(),
            class_of: rules.iter().map(|r| r.class.index()).collect(),
            updates: 0,
        }
    }

    /// The network's input: the counts as shares of their sum. The released code feeds the
    /// raw counts, which grow into the hundreds and saturate the softmax of a network
    /// initialised with N(0, 0.1) weights (spec §7.1 [I]).
    fn state(&self) -> Vec<f64> {
        let sum: f64 = self.counts.iter().sum();
        self.counts.iter().map(|c| c / sum).collect()
    }
}

impl Guide for Recbi {
    fn next_rule(&mut self, rng: &mut dyn Rng) -> usize {
        let policy = self.net.policy(&self.state());
        // Classes this backend has no rule for cannot be chosen.
        let weights: Vec<f64> =
            policy.iter().enumerate().map(|(c, p)| if self.by_class[c].is_empty() { 0.0 } else { *p }).collect();
        let total: f64 = weights.iter().sum();
        let mut x = rng.random_range(0.0..total);
        let class = weights.iter().position(|w| {
            x -= w;
            x < 0.0
        });
        let class = class.unwrap_or_else(|| self.by_class.iter().rposition(|r| !r.is_empty()).unwrap_or(0));
        let rules = &self.by_class[class];
        rules[rng.random_range(0..rules.len())]
    }

    fn consider(&mut self, rule: usize, candidate: &CovSet, set: &WitnessSet) -> bool {
        let class = self.class_of[rule];
        let dq = set.delta_q(candidate);
        let (n, mean) = &mut self.reward[class];
        *mean = (*mean * f64::from(*n) + dq) / f64::from(*n + 1);
        *n += 1;
        let reward = *mean;
        self.buffer.push(Step { state: self.state(), action: class, reward });
        self.counts[class] += 1.0;
        if self.buffer.len() == U {
            let next = self.state();
            self.net.update(&std::mem::take(&mut self.buffer), &next);
            self.updates += 1;
        }
        dq >= 0.0
    }

    fn missed(&mut self, _rule: usize) {}

    fn updates(&self) -> usize {
        self.updates
    }
}
