//! X-means (Pelleg & Moore, 2000) as PyClustering runs it with its defaults (spec §2.6):
//! k-means from 2 k-means++ centers, then each cluster tries a split into two, kept when
//! the children's BIC beats the parent's and fewer than `kmax` centers exist, until no
//! cluster splits; a last k-means settles the centers.
//!
//! The k-means is our own, not linfa's: linfa 0.8 takes its generator from rand 0.8, so it
//! cannot be driven by this crate's seeded rand 0.10 `ChaCha8Rng`; its k-means++ lacks
//! PyClustering's candidate rule; and its assignment step runs on a rayon pool whose
//! threads would outlive the call in a process that forks its sandboxes afterwards.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Debug, Clone, PartialEq)]
pub struct XMeansParams {
    /// At most this many clusters.
    pub kmax: usize,
    /// k-means stops once no center moves by more than this squared distance.
    /// [AMBIGUITY] PyClustering 0.10.1's default (older releases used 0.025).
    pub tolerance: f64,
    pub max_iterations: usize,
}

/// k-means++ draws this many candidates per new center and keeps the farthest:
/// PyClustering's default for the starting centers, and what its split attempts use.
const INITIAL_CANDIDATES: usize = 3;
const SPLIT_CANDIDATES: usize = 5;

impl Default for XMeansParams {
    fn default() -> Self {
        XMeansParams { kmax: 20, tolerance: 0.001, max_iterations: 200 }
    }
}

/// Clusters as lists of point indices, none empty, with their centers (member means).
#[derive(Debug, Clone, PartialEq)]
pub struct Clustering {
    pub clusters: Vec<Vec<usize>>,
    pub centers: Vec<Vec<f64>>,
}

pub fn xmeans(points: &[Vec<f32>], params: &XMeansParams, seed: u64) -> Clustering {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let all: Vec<usize> = (0..points.len()).collect();
    if all.is_empty() {
        return Clustering { clusters: Vec::new(), centers: Vec::new() };
    }
    let mut centers = kmeans_plus_plus(points, &all, 2.min(params.kmax), INITIAL_CANDIDATES, &mut rng);
    loop {
        let clustering = kmeans(points, &all, centers, params);
        let allocated = improve_structure(points, &clustering, params, &mut rng);
        centers = clustering.centers;
        if allocated.len() == centers.len() {
            break;
        }
        centers = allocated;
    }
    kmeans(points, &all, centers, params)
}

/// One round of split attempts; returns the new list of centers.
fn improve_structure(points: &[Vec<f32>], c: &Clustering, p: &XMeansParams, rng: &mut ChaCha8Rng) -> Vec<Vec<f64>> {
    let mut free = p.kmax.saturating_sub(c.centers.len());
    let mut allocated = Vec::new();
    for (members, center) in c.clusters.iter().zip(&c.centers) {
        if members.len() > 1 {
            let start = kmeans_plus_plus(points, members, 2, SPLIT_CANDIDATES, rng);
            let children = kmeans(points, members, start, p);
            let parent = bic(points, std::slice::from_ref(members), std::slice::from_ref(center));
            if children.clusters.len() > 1 && parent < bic(points, &children.clusters, &children.centers) && free > 0 {
                allocated.extend(children.centers);
                free -= 1;
                continue;
            }
        }
        allocated.push(center.clone());
    }
    allocated
}

/// PyClustering's Bayesian information criterion of a set of clusters (spec §2.6); +∞
/// when the variance cannot be estimated (no more points than clusters, or all on their
/// centers).
fn bic(points: &[Vec<f32>], clusters: &[Vec<usize>], centers: &[Vec<f64>]) -> f64 {
    let d = centers[0].len() as f64;
    let k = clusters.len() as f64;
    let n: f64 = clusters.iter().map(|c| c.len() as f64).sum();
    if n - k <= 0.0 {
        return f64::INFINITY;
    }
    let squared: f64 = clusters
        .iter()
        .zip(centers)
        .map(|(c, center)| c.iter().map(|&i| sq_dist(&points[i], center)).sum::<f64>())
        .sum();
    let sigma2 = squared / (n - k);
    let params = (k - 1.0) + d * k + 1.0;
    let sigma_term = if sigma2 <= 0.0 { f64::NEG_INFINITY } else { d * 0.5 * sigma2.ln() };
    clusters
        .iter()
        .map(|c| {
            let nj = c.len() as f64;
            let log_likelihood = nj * nj.ln()
                - nj * n.ln()
                - nj * 0.5 * (2.0 * std::f64::consts::PI).ln()
                - nj * sigma_term
                - (nj - k) * 0.5;
            log_likelihood - params * 0.5 * n.ln()
        })
        .sum()
}

/// Lloyd's iterations over `members` from `centers`, PyClustering-style: clusters that
/// lose all members disappear, and the result's centers are the means of its clusters.
fn kmeans(points: &[Vec<f32>], members: &[usize], mut centers: Vec<Vec<f64>>, p: &XMeansParams) -> Clustering {
    let mut clusters = Vec::new();
    for _ in 0..p.max_iterations {
        let mut groups = vec![Vec::new(); centers.len()];
        for &i in members {
            groups[nearest(&points[i], &centers)].push(i);
        }
        groups.retain(|g| !g.is_empty());
        let means: Vec<Vec<f64>> = groups.iter().map(|g| mean(points, g)).collect();
        let moved = if means.len() == centers.len() {
            means.iter().zip(&centers).map(|(a, b)| sq_dist_f64(a, b)).fold(0.0, f64::max)
        } else {
            f64::INFINITY
        };
        clusters = groups;
        centers = means;
        if moved <= p.tolerance {
            break;
        }
    }
    Clustering { clusters, centers }
}

/// k-means++ seeding over `members`: the first center uniformly, each next one the
/// farthest of `candidates` draws proportional to the squared distance to the nearest
/// center so far (PyClustering's rule).
fn kmeans_plus_plus(
    points: &[Vec<f32>],
    members: &[usize],
    k: usize,
    candidates: usize,
    rng: &mut ChaCha8Rng,
) -> Vec<Vec<f64>> {
    let first = members[rng.next_u64() as usize % members.len()];
    let mut centers = vec![to_f64(&points[first])];
    let mut d2: Vec<f64> = members.iter().map(|&i| sq_dist(&points[i], &centers[0])).collect();
    while centers.len() < k.min(members.len()) {
        let cumulative: Vec<f64> = d2
            .iter()
            .scan(0.0, |acc, &x| {
                *acc += x;
                Some(*acc)
            })
            .collect();
        let total = *cumulative.last().unwrap();
        // All points sit on centers already: PyClustering takes the first point.
        let chosen = if total <= 0.0 {
            0
        } else {
            (0..candidates.max(1))
                .map(|_| {
                    let r = unit_f64(rng) * total;
                    cumulative.partition_point(|&c| c <= r).min(members.len() - 1)
                })
                .fold(None, |best: Option<usize>, j| match best {
                    Some(b) if d2[b] >= d2[j] => Some(b),
                    _ => Some(j),
                })
                .unwrap()
        };
        let center = to_f64(&points[members[chosen]]);
        for (d, &i) in d2.iter_mut().zip(members) {
            *d = d.min(sq_dist(&points[i], &center));
        }
        centers.push(center);
    }
    centers
}

fn unit_f64(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Index of the nearest center; ties go to the first.
pub(super) fn nearest(x: &[f32], centers: &[Vec<f64>]) -> usize {
    let mut best = (f64::INFINITY, 0);
    for (j, c) in centers.iter().enumerate() {
        let d = sq_dist(x, c);
        if d < best.0 {
            best = (d, j);
        }
    }
    best.1
}

pub(super) fn mean(points: &[Vec<f32>], members: &[usize]) -> Vec<f64> {
    let mut sum = vec![0.0f64; points[members[0]].len()];
    for &i in members {
        sum.iter_mut().zip(&points[i]).for_each(|(s, &x)| *s += f64::from(x));
    }
    sum.iter_mut().for_each(|s| *s /= members.len() as f64);
    sum
}

pub(super) fn sq_dist(x: &[f32], c: &[f64]) -> f64 {
    x.iter().zip(c).map(|(&a, &b)| (f64::from(a) - b) * (f64::from(a) - b)).sum()
}

fn sq_dist_f64(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

fn to_f64(x: &[f32]) -> Vec<f64> {
    x.iter().map(|&v| f64::from(v)).collect()
}
