//! LocSeq's constrained genetic algorithm (spec §2.6): the operators on pass sequences.
//!
//! Genes are indices into a gene table the caller owns; nothing here knows what a pass is,
//! so the operators can be tested without LLVM.

use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, RngExt};

pub type Individual = Vec<u16>;

/// What the operators may use. `buggy` is the buggy sequence O_b as a list (order and
/// repeats kept); `required` its distinct genes (sorted); `candidates` O_c (distinct
/// genes new material is drawn from); `pooled` = O_b ∪ O_c (distinct, sorted), for the
/// unconstrained variants.
#[derive(Debug, Clone)]
pub struct GeneTable {
    pub buggy: Vec<u16>,
    pub required: Vec<u16>,
    pub candidates: Vec<u16>,
    pub pooled: Vec<u16>,
}

impl GeneTable {
    pub fn new(buggy: Vec<u16>, candidates: Vec<u16>) -> GeneTable {
        let mut required = buggy.clone();
        required.sort_unstable();
        required.dedup();
        let mut candidates = candidates;
        candidates.sort_unstable();
        candidates.dedup();
        let mut pooled: Vec<u16> = required.iter().chain(&candidates).copied().collect();
        pooled.sort_unstable();
        pooled.dedup();
        GeneTable { buggy, required, candidates, pooled }
    }

    /// Where new genes come from: only O_c under the constraint (passes outside O_c survive
    /// only through the constraint), the whole pool without it (LocSeq_wc, LocSeq_rwc).
    fn material(&self, constrained: bool) -> &[u16] {
        if constrained {
            &self.candidates
        } else {
            &self.pooled
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct GaParams {
    pub population: usize,
    pub crossover: f64,
    pub mutation: f64,
    pub max_size: usize,
    pub constrained: bool,
}

impl Default for GaParams {
    /// The paper's defaults (spec §2.6).
    fn default() -> GaParams {
        GaParams { population: 50, crossover: 0.5, mutation: 0.3, max_size: 15, constrained: true }
    }
}

/// Set containment, not multiset: the paper writes `O_b ⊆ set(Sol)` ([AMBIGUITY] §2.2).
pub fn satisfies_constraint(ind: &[u16], table: &GeneTable) -> bool {
    table.required.iter().all(|g| ind.contains(g))
}

/// Alg. 2 when constrained (buggy list + uniform extra genes from candidates up to a size in
/// num+1..=max_size, shuffled; guard when num+1 > max_size); unconstrained: size uniform in
/// num+1..=max_size (same guard), genes uniform from `pooled`.
///
/// Panics when there is no gene to build an individual from.
pub fn random_individual<R: Rng + ?Sized>(rng: &mut R, table: &GeneTable, params: &GaParams) -> Individual {
    let num = table.buggy.len();
    // Guard of §2.6.2: a buggy sequence longer than MAX_SIZE raises the cap to num+1.
    let size = rng.random_range(num + 1..=params.max_size.max(num + 1));
    let material = table.material(params.constrained);
    let mut ind = if params.constrained { table.buggy.clone() } else { Vec::with_capacity(size) };
    if material.is_empty() {
        // Without candidates the buggy passes are all there is; an empty pool is a caller bug.
        assert!(!ind.is_empty(), "random_individual: the gene table has no genes");
    } else {
        while ind.len() < size {
            ind.push(*material.choose(rng).expect("non-empty"));
        }
    }
    ind.shuffle(rng);
    ind
}

/// Alg. 3 single-point crossover; when constrained a child that breaks the constraint is
/// replaced by a clone of its parent (`o1` of `p1`, `o2` of `p2`).
pub fn crossover<R: Rng + ?Sized>(
    rng: &mut R,
    p1: &[u16],
    p2: &[u16],
    table: &GeneTable,
    constrained: bool,
) -> (Individual, Individual) {
    let size = p1.len().min(p2.len());
    assert!(size > 0, "crossover needs non-empty parents");
    let cut = rng.random_range(1..=size);
    let mut o1: Individual = p1[..cut].iter().chain(&p2[cut..]).copied().collect();
    let mut o2: Individual = p2[..cut].iter().chain(&p1[cut..]).copied().collect();
    if constrained {
        // [PAPER ERROR] Alg. 3 line 8 says "b_1 = clone of p_1"; it means o1.
        if !satisfies_constraint(&o1, table) {
            o1 = p1.to_vec();
        }
        if !satisfies_constraint(&o2, table) {
            o2 = p2.to_vec();
        }
    }
    (o1, o2)
}

/// Alg. 4: per-position probability 1/size0, uniform over Delete/Replace/Swap/Insert
/// (left/right), new genes from candidates (constrained) or pooled (not); when constrained
/// undo a change that breaks the constraint; never delete the last gene; swap needs len ≥ 2.
pub fn mutate<R: Rng + ?Sized>(rng: &mut R, ind: &mut Individual, table: &GeneTable, constrained: bool) {
    let material = table.material(constrained);
    // Only the loss of a required gene's last copy can break the constraint (Delete, Replace).
    let breaks =
        |ind: &[u16], lost: u16| constrained && table.required.binary_search(&lost).is_ok() && !ind.contains(&lost);
    let rate = 1.0 / ind.len() as f64;
    // The iteration scheme recommended in §2.6.4: a kept Delete revisits i, a kept Insert
    // skips the new gene so it is not mutated in the same call.
    let mut i = 0;
    while i < ind.len() {
        if rng.random::<f64>() >= rate {
            i += 1;
            continue;
        }
        match rng.random_range(0..4) {
            0 if ind.len() > 1 => {
                let lost = ind.remove(i);
                if !breaks(ind, lost) {
                    continue;
                }
                ind.insert(i, lost);
            }
            1 if !material.is_empty() => {
                let new = *material.choose(rng).expect("non-empty");
                let lost = std::mem::replace(&mut ind[i], new);
                if breaks(ind, lost) {
                    ind[i] = lost;
                }
            }
            2 if ind.len() > 1 => {
                let mut j = rng.random_range(0..ind.len() - 1);
                if j >= i {
                    j += 1;
                }
                ind.swap(i, j);
            }
            3 if !material.is_empty() => {
                let new = *material.choose(rng).expect("non-empty");
                // [PAPER ERROR] Alg. 4's left insert at idx−1 means "right before o": index i.
                let at = if rng.random::<f64>() < 0.5 { i } else { i + 1 };
                ind.insert(at, new);
                i += 2;
                continue;
            }
            // An operator whose guard fails (last gene, nothing to draw from) leaves o as is.
            _ => {}
        }
        i += 1;
    }
}

/// One generation's offspring (cleaned-up Alg. 1 inner loop): until ≥ population offspring:
/// two distinct parents uniformly without replacement from `parents`, clone, crossover with
/// probability params.crossover; then each offspring mutated with probability
/// params.mutation. (If parents.len() < 2 use the single parent twice; no parents, no offspring.)
pub fn offspring<R: Rng + ?Sized>(
    rng: &mut R,
    parents: &[Individual],
    table: &GeneTable,
    params: &GaParams,
) -> Vec<Individual> {
    if parents.is_empty() {
        return Vec::new();
    }
    // An odd population gives population+1 offspring, as §2.6.1 allows.
    let mut out = Vec::with_capacity(params.population + 1);
    while out.len() < params.population {
        // [AMBIGUITY] parent selection is unspecified: uniform without replacement, as DEAP does.
        let (a, b) = if parents.len() < 2 {
            (0, 0)
        } else {
            let a = rng.random_range(0..parents.len());
            let b = rng.random_range(0..parents.len() - 1);
            (a, if b >= a { b + 1 } else { b })
        };
        if rng.random::<f64>() < params.crossover {
            let (c1, c2) = crossover(rng, &parents[a], &parents[b], table, params.constrained);
            out.push(c1);
            out.push(c2);
        } else {
            out.push(parents[a].clone());
            out.push(parents[b].clone());
        }
    }
    for child in &mut out {
        if rng.random::<f64>() < params.mutation {
            mutate(rng, child, table, params.constrained);
        }
    }
    out
}

/// (μ+λ) truncation: the n best by fitness, stable (earlier entries win ties: pass the old
/// population first).
pub fn survivors(mut scored: Vec<(Individual, f64)>, n: usize) -> Vec<(Individual, f64)> {
    // NaN ranks last so a broken fitness can never crowd out a real one.
    let key = |f: f64| if f.is_nan() { f64::NEG_INFINITY } else { f };
    scored.sort_by(|a, b| key(b.1).partial_cmp(&key(a.1)).expect("NaN mapped away"));
    scored.truncate(n);
    scored
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// Tables shaped like LocSeq's: a short buggy list with repeats, possibly using genes
    /// outside O_c (40..48), and a candidate list with duplicates that overlaps it.
    fn table() -> impl Strategy<Value = GeneTable> {
        (prop::collection::vec(0u16..48, 0..8), prop::collection::vec(0u16..40, 1..34))
            .prop_map(|(buggy, candidates)| GeneTable::new(buggy, candidates))
    }

    /// Any individual that satisfies the constraint: every required gene, then extras from
    /// the pool (repeats of required genes included), in random order.
    fn valid_individual(rng: &mut ChaCha8Rng, t: &GeneTable) -> Individual {
        let mut ind = t.required.clone();
        let extra = rng.random_range(usize::from(ind.is_empty())..20);
        for _ in 0..extra {
            ind.push(*t.pooled.choose(rng).unwrap());
        }
        ind.shuffle(rng);
        ind
    }

    /// What the unconstrained variants work on: any non-empty list from the pool.
    fn any_individual(rng: &mut ChaCha8Rng, t: &GeneTable) -> Individual {
        let len = rng.random_range(1..20);
        (0..len).map(|_| *t.pooled.choose(rng).unwrap()).collect()
    }

    fn parent(rng: &mut ChaCha8Rng, t: &GeneTable, constrained: bool) -> Individual {
        if constrained {
            valid_individual(rng, t)
        } else {
            any_individual(rng, t)
        }
    }

    fn check(ind: &[u16], t: &GeneTable, constrained: bool) -> Result<(), TestCaseError> {
        prop_assert!(!ind.is_empty());
        let allowed = |g: &u16| {
            if constrained {
                t.candidates.contains(g) || t.required.contains(g)
            } else {
                t.pooled.contains(g)
            }
        };
        prop_assert!(ind.iter().all(allowed), "gene outside the allowed set: {ind:?}");
        if constrained {
            prop_assert!(satisfies_constraint(ind, t), "constraint broken: {ind:?}");
        }
        Ok(())
    }

    fn count(ind: &[u16], g: u16) -> usize {
        ind.iter().filter(|&&x| x == g).count()
    }

    proptest! {
        #[test]
        fn random_individuals_are_valid(t in table(), seed: u64, max_size in 0usize..20, constrained: bool) {
            let params = GaParams { max_size, constrained, ..GaParams::default() };
            let ind = random_individual(&mut ChaCha8Rng::seed_from_u64(seed), &t, &params);
            check(&ind, &t, constrained)?;
            let num = t.buggy.len();
            prop_assert!((num + 1..=max_size.max(num + 1)).contains(&ind.len()), "length {} for num {num}", ind.len());
            if constrained {
                // Alg. 2 starts from a copy of the buggy list, so its repeats survive too.
                prop_assert!(t.buggy.iter().all(|&g| count(&ind, g) >= count(&t.buggy, g)));
            }
        }

        #[test]
        fn crossover_children_are_valid_splices(t in table(), seed: u64, constrained: bool) {
            let rng = &mut ChaCha8Rng::seed_from_u64(seed);
            let (p1, p2) = (parent(rng, &t, constrained), parent(rng, &t, constrained));
            let (c1, c2) = crossover(rng, &p1, &p2, &t, constrained);
            check(&c1, &t, constrained)?;
            check(&c2, &t, constrained)?;
            let fallback = |child: &Individual, p: &Individual| constrained && child == p;
            prop_assert!(c1.len() == p2.len() || fallback(&c1, &p1));
            prop_assert!(c2.len() == p1.len() || fallback(&c2, &p2));
            let splice = |a: &[u16], b: &[u16], cut: usize| -> Individual { a[..cut].iter().chain(&b[cut..]).copied().collect() };
            let explained = (1..=p1.len().min(p2.len())).any(|cut| {
                let (o1, o2) = (splice(&p1, &p2, cut), splice(&p2, &p1, cut));
                (c1 == o1 || fallback(&c1, &p1) && !satisfies_constraint(&o1, &t))
                    && (c2 == o2 || fallback(&c2, &p2) && !satisfies_constraint(&o2, &t))
            });
            prop_assert!(explained, "{c1:?}, {c2:?} are no single-point crossover of {p1:?} and {p2:?}");
        }

        #[test]
        fn mutation_keeps_individuals_valid(t in table(), seed: u64, constrained: bool) {
            let rng = &mut ChaCha8Rng::seed_from_u64(seed);
            let mut ind = parent(rng, &t, constrained);
            mutate(rng, &mut ind, &t, constrained);
            check(&ind, &t, constrained)?;
        }

        #[test]
        fn offspring_are_valid_and_enough(
            t in table(),
            seed: u64,
            constrained: bool,
            population in 1usize..60,
            parents in 1usize..8,
            crossover in 0.0..=1.0f64,
            mutation in 0.0..=1.0f64,
        ) {
            let rng = &mut ChaCha8Rng::seed_from_u64(seed);
            let params = GaParams { population, crossover, mutation, constrained, ..GaParams::default() };
            let parents: Vec<Individual> = (0..parents).map(|_| parent(rng, &t, constrained)).collect();
            let children = offspring(rng, &parents, &t, &params);
            prop_assert!((population..=population + 1).contains(&children.len()));
            for child in &children {
                check(child, &t, constrained)?;
            }
        }
    }

    fn small_table() -> GeneTable {
        GeneTable::new(vec![2, 0, 2], (0..10).collect())
    }

    #[test]
    fn gene_table_derives_required_and_pooled() {
        let t = GeneTable::new(vec![41, 3, 41, 7], vec![9, 3, 9, 1]);
        assert_eq!(t.buggy, [41, 3, 41, 7]);
        assert_eq!(t.required, [3, 7, 41]);
        assert_eq!(t.candidates, [1, 3, 9]);
        assert_eq!(t.pooled, [1, 3, 7, 9, 41]);
    }

    #[test]
    fn a_buggy_list_longer_than_max_size_raises_the_cap() {
        let t = GeneTable::new((0..20).collect(), vec![30]);
        let params = GaParams { max_size: 15, ..GaParams::default() };
        let ind = random_individual(&mut ChaCha8Rng::seed_from_u64(1), &t, &params);
        assert_eq!(ind.len(), 21);
        assert_eq!(count(&ind, 30), 1);
    }

    #[test]
    fn without_candidates_only_the_buggy_passes_move() {
        let t = GeneTable::new(vec![1, 2, 1], vec![]);
        let rng = &mut ChaCha8Rng::seed_from_u64(5);
        for _ in 0..50 {
            let mut ind = random_individual(rng, &t, &GaParams::default());
            mutate(rng, &mut ind, &t, true);
            // Deleting the repeated 1 is allowed: the constraint is on the set.
            assert!(ind.len() <= 3, "{ind:?}");
            ind.sort_unstable();
            ind.dedup();
            assert_eq!(ind, [1, 2]);
        }
    }

    #[test]
    fn unconstrained_mutation_can_break_the_constraint() {
        let t = small_table();
        let broken = (0..1000u64).find(|&seed| {
            let mut ind = vec![0, 2];
            mutate(&mut ChaCha8Rng::seed_from_u64(seed), &mut ind, &t, false);
            !satisfies_constraint(&ind, &t)
        });
        assert!(broken.is_some(), "no seed in 0..1000 lost a required gene without the constraint");
    }

    #[test]
    fn mutation_grows_shrinks_and_rewrites() {
        let t = small_table();
        let start = vec![0, 2, 5, 7, 9, 2];
        let (mut grew, mut shrank, mut rewrote) = (false, false, false);
        for seed in 0..500 {
            let mut ind = start.clone();
            mutate(&mut ChaCha8Rng::seed_from_u64(seed), &mut ind, &t, true);
            grew |= ind.len() > start.len();
            shrank |= ind.len() < start.len();
            rewrote |= ind.len() == start.len() && ind != start;
        }
        assert!(grew && shrank && rewrote, "grew {grew}, shrank {shrank}, rewrote {rewrote}");
    }

    #[test]
    fn without_variation_offspring_are_pairs_of_distinct_parents() {
        let t = small_table();
        let parents = vec![vec![0, 2, 1], vec![2, 0, 3, 4]];
        let params = GaParams { population: 40, crossover: 0.0, mutation: 0.0, ..GaParams::default() };
        let children = offspring(&mut ChaCha8Rng::seed_from_u64(3), &parents, &t, &params);
        assert_eq!(children.len(), 40);
        for pair in children.chunks(2) {
            assert!(pair[0] != pair[1] && parents.contains(&pair[0]) && parents.contains(&pair[1]), "{pair:?}");
        }
    }

    #[test]
    fn full_crossover_makes_new_sequences() {
        let t = small_table();
        let parents = vec![vec![0, 2, 1, 1, 1], vec![3, 3, 3, 2, 0]];
        let params = GaParams { population: 40, crossover: 1.0, mutation: 0.0, ..GaParams::default() };
        let children = offspring(&mut ChaCha8Rng::seed_from_u64(3), &parents, &t, &params);
        assert!(children.iter().any(|c| !parents.contains(c)));
    }

    #[test]
    fn a_single_parent_is_used_twice() {
        let t = small_table();
        let parents = vec![vec![0, 2, 1]];
        let params = GaParams { population: 5, crossover: 1.0, mutation: 0.0, ..GaParams::default() };
        let children = offspring(&mut ChaCha8Rng::seed_from_u64(0), &parents, &t, &params);
        assert_eq!(children, vec![parents[0].clone(); 6]);
    }

    #[test]
    fn survivors_keep_the_best_n_and_older_entries_win_ties() {
        let scored =
            vec![(vec![1], 0.2), (vec![2], 0.7), (vec![3], f64::NAN), (vec![4], 0.7), (vec![5], 0.9), (vec![6], 0.2)];
        let ids = |s: &[(Individual, f64)]| s.iter().map(|(ind, _)| ind[0]).collect::<Vec<_>>();
        assert_eq!(ids(&survivors(scored.clone(), 4)), [5, 2, 4, 1]);
        assert_eq!(ids(&survivors(scored.clone(), 10)), [5, 2, 4, 1, 6, 3]);
        assert!(survivors(scored, 0).is_empty());
    }

    /// A few generations of the whole loop, fitness = share of distinct genes.
    fn evolve(seed: u64) -> Vec<(Individual, f64)> {
        let t = GeneTable::new(vec![40, 3, 3], (0..32).collect());
        let params = GaParams { population: 20, ..GaParams::default() };
        let rng = &mut ChaCha8Rng::seed_from_u64(seed);
        let fitness = |ind: &Individual| {
            let mut distinct = ind.clone();
            distinct.sort_unstable();
            distinct.dedup();
            distinct.len() as f64 / ind.len() as f64
        };
        let score = |inds: Vec<Individual>| inds.into_iter().map(|i| (i.clone(), fitness(&i))).collect::<Vec<_>>();
        let mut population = score((0..params.population).map(|_| random_individual(rng, &t, &params)).collect());
        for _ in 0..5 {
            let parents: Vec<Individual> = population.iter().map(|(i, _)| i.clone()).collect();
            population.extend(score(offspring(rng, &parents, &t, &params)));
            population = survivors(population, params.population);
        }
        population
    }

    #[test]
    fn same_seed_same_result() {
        assert_eq!(evolve(7), evolve(7));
        assert_ne!(evolve(7), evolve(8));
    }
}
