//! Random flat sequences, as CTOS draws them: passes i.i.d. from a pool, with repeats.

use rand::seq::IndexedRandom;
use rand::{Rng, RngExt};

use super::{Pass, Sequence};

/// `len` passes drawn uniformly, with replacement, from `pool` (which must not be empty).
pub fn random_flat<R: Rng + ?Sized>(rng: &mut R, pool: &[Pass], len: usize) -> Sequence {
    assert!(!pool.is_empty(), "random_flat needs a non-empty pool");
    Sequence::flat((0..len).map(|_| pool.choose(rng).expect("non-empty").clone()))
}

/// A length drawn uniformly from `min..=max`, then `random_flat`.
pub fn random_flat_between<R: Rng + ?Sized>(rng: &mut R, pool: &[Pass], min: usize, max: usize) -> Sequence {
    let len = rng.random_range(min..=max);
    random_flat(rng, pool, len)
}
