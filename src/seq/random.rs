//! Random flat sequences, as CTOS draws them: passes i.i.d. from a pool, with repeats.

use rand::seq::IndexedRandom;
use rand::{Rng, RngExt};

use super::render::{body_level, can_run_in};
use super::{Adaptor, Catalog, Item, Level, Pass, Sequence};

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

/// `n` random sequences (lengths in `min..=max`, preconditions added) in none of which a
/// pattern of `exclude` occurs as an ordered sub-sequence (see [`contains_ordered`]), and
/// how many drawn sequences were dropped for one. A one-pass pattern takes its pass out of
/// the pool rather than rejecting most draws. `None` when the patterns reject nearly every
/// sequence (fewer than one in a hundred is kept).
pub fn random_pool_excluding<R: Rng + ?Sized>(
    rng: &mut R,
    pool: &[Pass],
    (min, max): (usize, usize),
    n: usize,
    exclude: &[Vec<String>],
    catalog: &Catalog,
) -> Option<(Vec<Sequence>, usize)> {
    let single: Vec<&str> = exclude.iter().filter(|p| p.len() == 1).map(|p| p[0].as_str()).collect();
    let pool: Vec<Pass> = pool.iter().filter(|p| !single.iter().any(|t| token_matches(t, p))).cloned().collect();
    if pool.is_empty() {
        return None;
    }
    let patterns: Vec<Vec<&str>> = exclude.iter().map(|p| p.iter().map(String::as_str).collect()).collect();
    let mut kept = Vec::with_capacity(n);
    let mut dropped = 0;
    while kept.len() < n {
        if dropped > 100 * n.max(1) {
            return None;
        }
        // Preconditions first: a pattern may name a pass they add.
        let seq = with_preconditions(&random_flat_between(rng, &pool, min, max), catalog);
        if patterns.iter().any(|p| contains_ordered(&seq, p)) {
            dropped += 1;
        } else {
            kept.push(seq);
        }
    }
    Some((kept, dropped))
}

/// `seq` with every pass that has preconditions (`structurizecfg`) preceded by the passes
/// it needs (`lower-switch,fix-irreducible,unify-loop-exits`), unless they are right
/// before it already. Inside an adaptor whose level they cannot run at (`coro-early` for
/// `cgscc(coro-split)`), they go right before the adaptor instead.
pub fn with_preconditions(seq: &Sequence, catalog: &Catalog) -> Sequence {
    let (items, _) = with_needs(&seq.items, Level::Module, catalog);
    Sequence { items }
}

/// `items`, run at `context`, with the preconditions that can run there added, and those
/// that cannot (for the caller to put before the adaptor that holds them).
fn with_needs(items: &[Item], context: Level, catalog: &Catalog) -> (Vec<Item>, Vec<Pass>) {
    let mut out: Vec<Item> = Vec::with_capacity(items.len());
    let mut outside = Vec::new();
    for item in items {
        let (item, needed) = match item {
            Item::Pass(p) => (item.clone(), catalog.preconditions(&p.name).to_vec()),
            Item::Adaptor(a) => {
                let (body, needed) = with_needs(&a.body, body_level(&a.name, context), catalog);
                (Item::Adaptor(Adaptor { body, ..a.clone() }), needed)
            }
        };
        let fit =
            context == Level::Module || needed.iter().all(|n| can_run_in(catalog, &Item::Pass(n.clone()), context));
        if !fit {
            outside.extend(needed);
        } else {
            let tail = out.len().saturating_sub(needed.len());
            let present = out.len() >= needed.len()
                && out[tail..].iter().zip(&needed).all(|(i, n)| matches!(i, Item::Pass(q) if q.name == n.name));
            if !present {
                out.extend(needed.into_iter().map(Item::Pass));
            }
        }
        out.push(item);
    }
    (out, outside)
}

/// Whether the passes of `pattern` occur in `seq` in this order, not necessarily next to
/// each other. A pattern token without parameters matches any parameters (`gvn` matches
/// `gvn<>` but not `newgvn`: tokens match whole names, not substrings).
pub fn contains_ordered(seq: &Sequence, pattern: &[&str]) -> bool {
    let mut want = pattern.iter().peekable();
    for pass in seq.passes() {
        let Some(&&token) = want.peek() else { break };
        if token_matches(token, pass) {
            want.next();
        }
    }
    want.peek().is_none()
}

fn token_matches(token: &str, pass: &Pass) -> bool {
    (!token.contains('<') && token == pass.name) || token == pass.to_string()
}
