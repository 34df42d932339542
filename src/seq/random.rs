//! Random flat sequences, as CTOS draws them: passes i.i.d. from a pool, with repeats.

use rand::seq::IndexedRandom;
use rand::{Rng, RngExt};

use super::{Catalog, Item, Pass, Sequence};

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

/// `seq` with every pass that has preconditions (`structurizecfg`) preceded by the passes
/// it needs (`lower-switch,fix-irreducible,unify-loop-exits`), unless they are right
/// before it already.
pub fn with_preconditions(seq: &Sequence, catalog: &Catalog) -> Sequence {
    let mut out: Vec<Item> = Vec::with_capacity(seq.items.len());
    for item in &seq.items {
        if let Item::Pass(p) = item {
            let needed = catalog.preconditions(&p.name);
            let tail = out.len().saturating_sub(needed.len());
            let present = out.len() >= needed.len()
                && out[tail..].iter().zip(needed).all(|(i, n)| matches!(i, Item::Pass(q) if q.name == n.name));
            if !present {
                out.extend(needed.iter().cloned().map(Item::Pass));
            }
        }
        out.push(item.clone());
    }
    Sequence { items: out }
}

/// Whether the passes of `pattern` occur in `seq` in this order, not necessarily next to
/// each other. A pattern token without parameters matches any parameters (`gvn` matches
/// `gvn<>` but not `newgvn`: tokens match whole names, not substrings).
pub fn contains_ordered(seq: &Sequence, pattern: &[&str]) -> bool {
    let mut want = pattern.iter().peekable();
    for pass in seq.passes() {
        let Some(&&token) = want.peek() else { break };
        let full = pass.to_string();
        if token == full || (!token.contains('<') && token == pass.name) {
            want.next();
        }
    }
    want.peek().is_none()
}
