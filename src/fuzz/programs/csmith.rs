//! csmith's programs, for the generators whose programs are csmith's or made from them.

use std::time::Instant;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::fuzz::campaign::Campaign;
use crate::program::{generate_many, GenConfig, Generated, Generator};

/// `count` csmith programs of `generator`'s kind from `seed`, numbered by position; the
/// ones csmith could not make are left out.
pub fn csmith(c: &mut Campaign, generator: Generator, seed: u64, count: usize) -> Vec<(usize, Generated)> {
    let t = Instant::now();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let seeds: Vec<u64> = (0..count).map(|_| rng.random_range(0..u32::MAX as u64)).collect();
    let gen = GenConfig { generator, min_size: c.config.min_size, ..GenConfig::default() };
    let generated = generate_many(&seeds, &gen, c.jobs);
    c.stats.spent("program generation (csmith)", t);
    generated.into_iter().enumerate().filter_map(|(k, g)| Some((k, g.ok()?))).collect()
}
