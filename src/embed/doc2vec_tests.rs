use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::doc2vec::{doc_vectors, Doc2VecParams};

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>();
    dot(a, b) / (dot(a, a).sqrt() * dot(b, b).sqrt())
}

/// Every sequence of 1 to 5 passes over the paper's 5 passes: 5 + 5² + … + 5⁵ = 3,905.
fn all_sequences(passes: &[&str]) -> Vec<Vec<String>> {
    let mut all: Vec<Vec<String>> = vec![vec![]];
    let mut out = Vec::new();
    for _ in 0..5 {
        all = all.iter().flat_map(|s| passes.iter().map(move |p| [s.clone(), vec![p.to_string()]].concat())).collect();
        out.extend(all.iter().cloned());
    }
    out
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

/// The paper's example (spec §2.3) on the paper's example space: every sequence of up to
/// 5 of its 5 passes. Down-sampling is off: with a 5-word vocabulary each word is 20% of
/// the corpus and `sample = 1e-3` keeps 7.5% of the tokens, too few to learn from (the
/// real 114-pass vocabulary keeps about 45%). Measured with it on: 5 of 20 seeds here,
/// 6 of 10 with Gensim 4.4 (10 of 10 with it off, as here).
#[test]
fn same_order_is_nearer_than_a_reordering() {
    let passes = ["function-attrs", "loop-rotate", "sroa", "gvn", "loop-vectorize"];
    let docs = all_sequences(&passes);
    let params = Doc2VecParams { sample: 0.0, ..Doc2VecParams::sequences() };
    assert_eq!(docs.len(), 3905);
    let find = |s: &str| docs.iter().position(|d| *d == words(s)).unwrap();
    let a = find("function-attrs loop-rotate sroa gvn loop-vectorize");
    let b = find("function-attrs sroa loop-vectorize loop-rotate gvn");
    let c = find("loop-rotate sroa gvn loop-vectorize");
    let mut wins = 0;
    let mut margin = 0.0;
    for seed in 0..5 {
        let v = doc_vectors(&docs, &params, seed);
        let (ac, ab) = (cosine(&v[a], &v[c]), cosine(&v[a], &v[b]));
        eprintln!("seed {seed}: sim(a,c) = {ac:.3}, sim(a,b) = {ab:.3}");
        wins += usize::from(ac > ab);
        margin += ac - ab;
    }
    assert!(wins >= 4 && margin > 0.0, "sim(a,c) > sim(a,b) in only {wins} of 5 seeds");
}

#[test]
fn deterministic_from_the_seed() {
    let docs: Vec<Vec<String>> = (0..50).map(|i| words(&format!("a b c{} d e{} a", i % 3, i % 7))).collect();
    let p = Doc2VecParams { min_count: 1, ..Doc2VecParams::sequences() };
    let first = doc_vectors(&docs, &p, 7);
    assert_eq!(first.len(), 50);
    assert!(first.iter().all(|v| v.len() == 100 && v.iter().all(|x| x.is_finite())));
    assert_eq!(first, doc_vectors(&docs, &p, 7));
    assert_ne!(first, doc_vectors(&docs, &p, 8));
}

/// Training must pull a document towards its exact copy: without it, vectors stay at
/// their random start and a twin is no nearer than any other document. Down-sampling is
/// off for the same reason as above (Gensim 4.4 finds 1–3 of 20 twins with it, 20 without).
#[test]
fn a_duplicate_document_is_the_nearest_neighbour() {
    use rand::RngExt;
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut docs: Vec<Vec<String>> = (0..300)
        .map(|_| (0..rng.random_range(20..40)).map(|_| format!("w{}", rng.random_range(0..50))).collect())
        .collect();
    docs.extend(docs[..20].to_vec());
    let v = doc_vectors(&docs, &Doc2VecParams { sample: 0.0, ..Doc2VecParams::sequences() }, 11);
    let nearest = |i: usize| {
        (0..v.len()).filter(|&j| j != i).max_by(|&x, &y| cosine(&v[i], &v[x]).total_cmp(&cosine(&v[i], &v[y]))).unwrap()
    };
    let found = (0..20).filter(|&i| nearest(i) == 300 + i).count();
    assert!(found >= 18, "only {found} of 20 documents have their copy as nearest neighbour");
}

/// Spec scale check: 3,000 documents × 125 tokens × 20 epochs (time printed with `--nocapture`).
#[test]
fn training_at_the_spec_scale() {
    use rand::RngExt;
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let docs: Vec<Vec<String>> =
        (0..3000).map(|_| (0..125).map(|_| format!("pass{}", rng.random_range(0..114))).collect()).collect();
    for (name, params) in [("window 3", Doc2VecParams::sequences()), ("window 5", Doc2VecParams::instructions())] {
        let start = std::time::Instant::now();
        let v = doc_vectors(&docs, &params, 1);
        eprintln!("{name}: {} docs in {:.2?}", v.len(), start.elapsed());
        assert_eq!(v.len(), docs.len());
        assert!(v.iter().all(|d| d.len() == 100 && d.iter().all(|x| x.is_finite())));
    }
}
