//! The paper's Algorithm 3 (spec §2.6): one representative per X-means cluster, then
//! greedily the instance farthest from both the global mean ("the Sun") and everything
//! already selected (distance to the mean × distance to the nearest selected one).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::xmeans::{mean, sq_dist, xmeans, XMeansParams};

/// Cluster `points` with X-means and select `k` of them; indices in selection order.
pub fn select_representatives(points: &[Vec<f32>], k: usize, xmeans_params: &XMeansParams, seed: u64) -> Vec<usize> {
    centroid_select(points, &xmeans(points, xmeans_params, seed).clusters, k)
}

/// Algorithm 3 on given clusters (non-empty lists of point indices). Returns at most `k`
/// distinct indices in selection order; fewer when every remaining point scores 0 (an
/// exact copy of a selected one, or exactly on the global mean).
pub fn centroid_select(points: &[Vec<f32>], clusters: &[Vec<usize>], k: usize) -> Vec<usize> {
    if points.is_empty() {
        return Vec::new();
    }
    // Cluster means are not instances: each cluster is represented by its nearest member.
    // With fewer slots than clusters, the first clusters get them.
    let mut selected: Vec<usize> = clusters
        .iter()
        .map(|members| {
            let center = mean(points, members);
            *members
                .iter()
                .min_by(|&&a, &&b| sq_dist(&points[a], &center).total_cmp(&sq_dist(&points[b], &center)))
                .unwrap()
        })
        .take(k)
        .collect();
    let all: Vec<usize> = (0..points.len()).collect();
    let sun = mean(points, &all);
    let d0: Vec<f64> = points.iter().map(|x| sq_dist(x, &sun).sqrt()).collect();
    let mut md = vec![f32::INFINITY; points.len()];
    let mut best = None;
    for &s in &selected {
        best = fold_in(points, s, &d0, &mut md);
    }
    while selected.len() < k {
        let Some((_, next)) = best else { break };
        selected.push(next);
        best = fold_in(points, next, &d0, &mut md);
    }
    selected
}

/// Below this many coordinates one thread is faster than starting more.
const PARALLEL_WORK: usize = 1 << 20;

/// The incremental step: lower every point's distance to the selection by its distance
/// to `chosen`, and return the highest score `d0 · md` above 0 (the lowest index among
/// equals). Selected points have md = 0, so they never come back. The points are split
/// over scoped threads, all joined before returning: the caller may fork afterwards.
fn fold_in(points: &[Vec<f32>], chosen: usize, d0: &[f64], md: &mut [f32]) -> Option<(f64, usize)> {
    let work = points.len() * points[chosen].len();
    let threads = if work < PARALLEL_WORK { 1 } else { std::thread::available_parallelism().map_or(1, |n| n.get()) };
    let chunk = md.len().div_ceil(threads).max(1);
    let scan = |start: usize, part: &mut [f32]| -> Option<(f64, usize)> {
        let mut best: Option<(f64, usize)> = None;
        for (offset, m) in part.iter_mut().enumerate() {
            let i = start + offset;
            *m = m.min(distance(&points[i], &points[chosen]));
            let score = d0[i] * f64::from(*m);
            if score > 0.0 && best.is_none_or(|(b, _)| score > b) {
                best = Some((score, i));
            }
        }
        best
    };
    let per_chunk: Vec<Option<(f64, usize)>> = if threads == 1 {
        vec![scan(0, md)]
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> =
                md.chunks_mut(chunk).enumerate().map(|(t, part)| s.spawn(move || scan(t * chunk, part))).collect();
            handles.into_iter().map(|h| h.join().expect("selection thread panicked")).collect()
        })
    };
    per_chunk.into_iter().flatten().fold(None, |best, (score, i)| match best {
        Some((b, _)) if b >= score => best,
        _ => Some((score, i)),
    })
}

/// Euclidean distance with eight independent sums, so it vectorizes without fast-math.
fn distance(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let split = a.len() / 8 * 8;
    for (x, y) in a[..split].chunks_exact(8).zip(b[..split].chunks_exact(8)) {
        for k in 0..8 {
            let d = x[k] - y[k];
            acc[k] += d * d;
        }
    }
    let tail: f32 = a[split..].iter().zip(&b[split..]).map(|(x, y)| (x - y) * (x - y)).sum();
    (acc.iter().sum::<f32>() + tail).sqrt()
}

/// `k` distinct indices below `n` drawn uniformly (the `--selection random` baseline),
/// all of them when `k ≥ n`.
pub fn random_select(n: usize, k: usize, seed: u64) -> Vec<usize> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut pool: Vec<usize> = (0..n).collect();
    let k = k.min(n);
    // A partial Fisher–Yates shuffle: the first k slots are the sample.
    for i in 0..k {
        let j = i + (rng.next_u64() % (n - i) as u64) as usize;
        pool.swap(i, j);
    }
    pool.truncate(k);
    pool
}
