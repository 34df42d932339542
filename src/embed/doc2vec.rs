//! Doc2Vec PV-DM with negative sampling (spec §2.3), written by hand: no maintained Rust
//! crate trains paragraph vectors, and the loop is small. It follows Gensim's
//! `train_document_dm` (word2vec.c's CBOW with the paragraph vector as one more context
//! vector), single-threaded and deterministic from a seed.
//!
//! Storage is flat `f32` rows (words, documents, output weights); a document is interned
//! token ids in one shared buffer, so training allocates nothing per token.

use std::collections::HashMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Debug, Clone, PartialEq)]
pub struct Doc2VecParams {
    pub vector_size: usize,
    /// Largest context distance; each position shrinks it by a random amount (Gensim's
    /// `shrink_windows`).
    pub window: usize,
    pub alpha: f32,
    pub min_alpha: f32,
    pub epochs: usize,
    /// Noise words drawn per predicted word.
    pub negative: usize,
    pub ns_exponent: f64,
    /// Words seen fewer times in the corpus are dropped from every document.
    pub min_count: u64,
    /// Down-sampling threshold for frequent words; 0 keeps every token.
    pub sample: f64,
    /// Average (true) or sum (false) the document and context vectors.
    pub dm_mean: bool,
}

impl Default for Doc2VecParams {
    /// The sequence model of the paper: window 3, everything else Gensim's default.
    fn default() -> Self {
        Doc2VecParams {
            vector_size: 100,
            window: 3,
            alpha: 0.05,
            min_alpha: 0.0001,
            epochs: 20,
            negative: 5,
            ns_exponent: 0.75,
            min_count: 5,
            sample: 1e-3,
            // [AMBIGUITY] mean, not sum: it is the paper's formula, and also what Gensim's
            // Doc2Vec does when dm_mean is left unset (it keeps Word2Vec's cbow_mean=1).
            dm_mean: true,
        }
    }
}

impl Doc2VecParams {
    /// Pass sequences as documents (spec §2.3).
    pub fn sequences() -> Self {
        Doc2VecParams::default()
    }

    /// Edge documents of IR instructions (spec §2.5.2).
    pub fn instructions() -> Self {
        Doc2VecParams { window: 5, ..Doc2VecParams::default() }
    }
}

/// Documents as interned token ids in one buffer.
#[derive(Debug, Default, Clone)]
pub struct Corpus {
    ids: HashMap<String, u32>,
    counts: Vec<u64>,
    tokens: Vec<u32>,
    ends: Vec<usize>,
}

impl Corpus {
    pub fn new() -> Self {
        Corpus::default()
    }

    /// Append one document; returns its index (the row of its vector after training).
    pub fn push<S: AsRef<str>>(&mut self, doc: impl IntoIterator<Item = S>) -> usize {
        for token in doc {
            let token = token.as_ref();
            let id = match self.ids.get(token) {
                Some(&id) => id,
                None => {
                    let id = self.counts.len() as u32;
                    self.ids.insert(token.to_string(), id);
                    self.counts.push(0);
                    id
                }
            };
            self.counts[id as usize] += 1;
            self.tokens.push(id);
        }
        self.ends.push(self.tokens.len());
        self.ends.len() - 1
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn doc(&self, i: usize) -> &[u32] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.tokens[start..self.ends[i]]
    }
}

/// One trained paragraph vector per document, as rows of a flat matrix.
#[derive(Debug, Clone)]
pub struct DocVectors {
    dim: usize,
    data: Vec<f32>,
}

impl DocVectors {
    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn get(&self, doc: usize) -> &[f32] {
        &self.data[doc * self.dim..(doc + 1) * self.dim]
    }

    pub fn into_rows(self) -> Vec<Vec<f32>> {
        self.data.chunks_exact(self.dim.max(1)).map(<[f32]>::to_vec).collect()
    }
}

/// Train on `docs` (token lists) and return one vector per document.
pub fn doc_vectors<S: AsRef<str>>(docs: &[Vec<S>], params: &Doc2VecParams, seed: u64) -> Vec<Vec<f32>> {
    let mut corpus = Corpus::new();
    for doc in docs {
        corpus.push(doc);
    }
    train(&corpus, params, seed).into_rows()
}

/// word2vec.c's logistic table: sigmoid on [-MAX_EXP, MAX_EXP], saturated outside.
const MAX_EXP: f32 = 6.0;
const EXP_TABLE_SIZE: usize = 1000;

fn sigmoid_table() -> Vec<f32> {
    (0..EXP_TABLE_SIZE)
        .map(|i| {
            let x = (i as f32 / EXP_TABLE_SIZE as f32 * 2.0 - 1.0) * MAX_EXP;
            1.0 / (1.0 + (-x).exp())
        })
        .collect()
}

/// The trained model's parameters plus the per-corpus tables that drive sampling.
struct Model {
    dim: usize,
    words: Vec<f32>,
    docs: Vec<f32>,
    out: Vec<f32>,
    /// Corpus token id → row in `words`/`out`, or `None` below `min_count`.
    row: Vec<Option<u32>>,
    /// Per row: keep a token when a random u32 is below this (2^32 keeps always).
    keep: Vec<u64>,
    /// Cumulative count^ns_exponent per row, for drawing noise words.
    noise: Vec<u64>,
    sigmoid: Vec<f32>,
}

impl Model {
    fn new(corpus: &Corpus, p: &Doc2VecParams, rng: &mut ChaCha8Rng) -> Model {
        let mut row = vec![None; corpus.counts.len()];
        let mut kept_counts = Vec::new();
        for (id, &count) in corpus.counts.iter().enumerate() {
            if count >= p.min_count {
                row[id] = Some(kept_counts.len() as u32);
                kept_counts.push(count);
            }
        }
        let total: u64 = kept_counts.iter().sum();
        let threshold = p.sample * total as f64;
        let keep = kept_counts
            .iter()
            .map(|&c| {
                let c = c as f64;
                let prob = if p.sample > 0.0 { ((c / threshold).sqrt() + 1.0) * threshold / c } else { 1.0 };
                (prob.min(1.0) * 4294967296.0) as u64
            })
            .collect();
        let mut acc = 0.0f64;
        let weights: Vec<f64> = kept_counts.iter().map(|&c| (c as f64).powf(p.ns_exponent)).collect();
        let weight_sum: f64 = weights.iter().sum();
        // Gensim's domain: cumulative weights scaled to 2^31 - 1.
        let noise = weights
            .iter()
            .map(|w| {
                acc += w;
                (acc / weight_sum * 2147483647.0).round() as u64
            })
            .collect();
        let dim = p.vector_size;
        let mut uniform =
            |n: usize| -> Vec<f32> { (0..n).map(|_| (unit_f32(rng.next_u32()) - 0.5) / dim as f32).collect() };
        let words = uniform(kept_counts.len() * dim);
        let docs = uniform(corpus.len() * dim);
        Model { dim, words, docs, out: vec![0.0; kept_counts.len() * dim], row, keep, noise, sigmoid: sigmoid_table() }
    }

    fn noise_word(&self, rng: &mut ChaCha8Rng) -> usize {
        let r = u64::from(rng.next_u32()) % self.noise.last().copied().unwrap_or(1).max(1);
        self.noise.partition_point(|&c| c <= r).min(self.noise.len() - 1)
    }

    fn sigmoid(&self, f: f32) -> f32 {
        if f >= MAX_EXP {
            1.0
        } else if f <= -MAX_EXP {
            0.0
        } else {
            self.sigmoid[((f + MAX_EXP) * (EXP_TABLE_SIZE as f32 / MAX_EXP / 2.0)) as usize]
        }
    }
}

fn unit_f32(bits: u32) -> f32 {
    (bits >> 8) as f32 / (1u32 << 24) as f32
}

/// Train a fresh model on `corpus` and return its paragraph vectors.
pub fn train(corpus: &Corpus, p: &Doc2VecParams, seed: u64) -> DocVectors {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut m = Model::new(corpus, p, &mut rng);
    let dim = m.dim;
    if m.noise.is_empty() {
        return DocVectors { dim, data: m.docs };
    }
    let mut kept: Vec<u32> = Vec::new();
    let mut neu1 = vec![0.0f32; dim];
    let mut work = vec![0.0f32; dim];
    let total_docs = (p.epochs * corpus.len()).max(1) as f32;
    let mut done = 0usize;
    for _ in 0..p.epochs {
        for t in 0..corpus.len() {
            let lr = p.alpha - (p.alpha - p.min_alpha) * (done as f32 / total_docs);
            done += 1;
            kept.clear();
            for &id in corpus.doc(t) {
                if let Some(r) = m.row[id as usize] {
                    if u64::from(rng.next_u32()) < m.keep[r as usize] {
                        kept.push(r);
                    }
                }
            }
            let n = kept.len();
            for i in 0..n {
                let b = if p.window > 0 { rng.next_u32() as usize % p.window } else { 0 };
                let start = i.saturating_sub(p.window - b);
                let end = (i + p.window + 1 - b).min(n);
                neu1.copy_from_slice(&m.docs[t * dim..(t + 1) * dim]);
                for (j, &c) in kept[start..end].iter().enumerate() {
                    if start + j != i {
                        add_scaled(&mut neu1, 1.0, row(&m.words, c as usize, dim));
                    }
                }
                let inv_count = 1.0 / (end - start) as f32;
                if p.dm_mean {
                    neu1.iter_mut().for_each(|x| *x *= inv_count);
                }
                work.fill(0.0);
                let target = kept[i] as usize;
                for d in 0..=p.negative {
                    let (u, label) = if d == 0 {
                        (target, 1.0)
                    } else {
                        let u = m.noise_word(&mut rng);
                        if u == target {
                            continue;
                        }
                        (u, 0.0)
                    };
                    let g = (label - m.sigmoid(dot(&neu1, row(&m.out, u, dim)))) * lr;
                    let out_row = &mut m.out[u * dim..(u + 1) * dim];
                    add_scaled(&mut work, g, out_row);
                    add_scaled(out_row, g, &neu1);
                }
                if !p.dm_mean {
                    work.iter_mut().for_each(|x| *x *= inv_count);
                }
                add_scaled(&mut m.docs[t * dim..(t + 1) * dim], 1.0, &work);
                for (j, &c) in kept[start..end].iter().enumerate() {
                    if start + j != i {
                        let c = c as usize;
                        add_scaled(&mut m.words[c * dim..(c + 1) * dim], 1.0, &work);
                    }
                }
            }
        }
    }
    DocVectors { dim, data: m.docs }
}

fn row(matrix: &[f32], r: usize, dim: usize) -> &[f32] {
    &matrix[r * dim..(r + 1) * dim]
}

/// Eight independent accumulators so the reduction vectorizes without fast-math.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (a8, a_rest) = a.split_at(a.len() / 8 * 8);
    let (b8, b_rest) = b.split_at(a8.len());
    for (x, y) in a8.chunks_exact(8).zip(b8.chunks_exact(8)) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    acc.iter().sum::<f32>() + a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum::<f32>()
}

fn add_scaled(dst: &mut [f32], g: f32, src: &[f32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d += g * s;
    }
}
