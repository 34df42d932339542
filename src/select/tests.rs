use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;

/// `per_blob` points around each center, standard normal noise in every coordinate.
fn blobs(centers: &[Vec<f32>], per_blob: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut normal = move || {
        // Box–Muller; 1 - u keeps the logarithm finite.
        let u = 1.0 - (rng.next_u32() >> 8) as f64 / (1u32 << 24) as f64;
        let v = (rng.next_u32() >> 8) as f64 / (1u32 << 24) as f64;
        ((-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()) as f32
    };
    centers
        .iter()
        .flat_map(|c| (0..per_blob).map(|_| c.iter().map(|&x| x + normal()).collect::<Vec<_>>()).collect::<Vec<_>>())
        .collect()
}

/// Centers `spacing` apart along distinct axes of a 5-dimensional space (and diagonals).
fn corners(count: usize, spacing: f32) -> Vec<Vec<f32>> {
    (0..count).map(|i| (0..5).map(|d| if (i >> d) & 1 == 1 { spacing } else { 0.0 }).collect()).collect()
}

#[test]
fn four_separated_blobs_make_four_clusters() {
    let points = blobs(&corners(4, 20.0), 100, 1);
    for seed in 0..3 {
        let c = xmeans(&points, &XMeansParams::default(), seed);
        assert_eq!(c.clusters.len(), 4, "seed {seed}: {} clusters", c.clusters.len());
        // Each cluster is exactly one blob.
        let mut blob_of: Vec<usize> = c.clusters.iter().map(|m| m[0] / 100).collect();
        assert!(c.clusters.iter().zip(&blob_of).all(|(m, &b)| m.len() == 100 && m.iter().all(|&i| i / 100 == b)));
        blob_of.sort();
        assert_eq!(blob_of, [0, 1, 2, 3]);
    }
}

#[test]
fn one_blob_is_not_cut_into_many() {
    let points = blobs(&[vec![3.0; 5]], 400, 2);
    for seed in 0..3 {
        let c = xmeans(&points, &XMeansParams::default(), seed);
        // X-means never merges, so the two starting centers can survive.
        assert!(c.clusters.len() <= 2, "seed {seed}: {} clusters", c.clusters.len());
    }
}

/// `count` centers `spacing` apart on a line. (Blobs on the corners of a cube do not do:
/// a split resolves one axis at a time, and PyClustering's BIC, whose variance sums all
/// dimensions, finds that not worth it; PyClustering 0.10.1 stops at 2 clusters there too.)
fn on_a_line(count: usize, spacing: f32) -> Vec<Vec<f32>> {
    (0..count).map(|i| vec![i as f32 * spacing, 0.0, 0.0, 0.0, 0.0]).collect()
}

#[test]
fn no_more_than_kmax_clusters() {
    // 30 blobs; PyClustering 0.10.1 finds 6 and 20 clusters here as well.
    let points = blobs(&on_a_line(30, 30.0), 20, 3);
    let capped = xmeans(&points, &XMeansParams { kmax: 6, ..XMeansParams::default() }, 4);
    assert_eq!(capped.clusters.len(), 6);
    let full = xmeans(&points, &XMeansParams::default(), 4);
    assert_eq!(full.clusters.len(), 20);
    let mut all: Vec<usize> = full.clusters.concat();
    all.sort();
    assert_eq!(all, (0..points.len()).collect::<Vec<_>>(), "every point in exactly one cluster");
}

#[test]
fn xmeans_is_deterministic_from_the_seed() {
    let points = blobs(&corners(8, 6.0), 30, 5);
    let p = XMeansParams::default();
    assert_eq!(xmeans(&points, &p, 9), xmeans(&points, &p, 9));
}

fn line(xs: &[f32]) -> Vec<Vec<f32>> {
    xs.iter().map(|&x| vec![x]).collect()
}

#[test]
fn greedy_order_worked_by_hand() {
    // Mean 4.8: the representative is 2 (value 2). Scores d0·md then pick 11 (6.2·9),
    // 0 (4.8·2), 10 (5.2·1) and 1 (3.8·1).
    let points = line(&[0.0, 1.0, 2.0, 10.0, 11.0]);
    assert_eq!(centroid_select(&points, &[vec![0, 1, 2, 3, 4]], 5), [2, 4, 0, 3, 1]);
    assert_eq!(centroid_select(&points, &[vec![0, 1, 2, 3, 4]], 3), [2, 4, 0]);
}

#[test]
fn one_representative_per_cluster_comes_first() {
    // Three plus-shaped clusters; each one's middle point is its mean.
    let plus = |cx: f32, cy: f32| {
        vec![vec![cx + 1.0, cy], vec![cx, cy], vec![cx - 1.0, cy], vec![cx, cy + 1.0], vec![cx, cy - 1.0]]
    };
    let points: Vec<Vec<f32>> = [plus(0.0, 0.0), plus(50.0, 0.0), plus(0.0, 80.0)].concat();
    let clusters: Vec<Vec<usize>> = (0..3).map(|c| (5 * c..5 * c + 5).collect()).collect();
    let selected = centroid_select(&points, &clusters, 9);
    assert_eq!(selected[..3], [1, 6, 11]);
    assert_eq!(selected.len(), 9);
    let mut unique = selected.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 9, "no index twice: {selected:?}");
}

#[test]
fn exact_copies_are_never_selected() {
    // Three distinct points (none on the mean), five copies each.
    let points: Vec<Vec<f32>> = (0..15).map(|i| vec![[1.0, 4.0, 9.0][i % 3], 2.0]).collect();
    let selected = centroid_select(&points, &[(0..15).collect()], 10);
    let mut values: Vec<f32> = selected.iter().map(|&i| points[i][0]).collect();
    values.sort_by(f32::total_cmp);
    assert_eq!(values, [1.0, 4.0, 9.0], "stops after the distinct values: {selected:?}");
}

#[test]
fn parallel_scan_matches_the_sequential_order() {
    // Enough coordinates to go past PARALLEL_WORK and split the scan over threads.
    let points = blobs(&corners(6, 5.0), 3000, 6);
    assert!(points.len() * 5 < 1 << 20);
    let wide: Vec<Vec<f32>> = points.iter().map(|p| p.iter().cycle().take(400).copied().collect()).collect();
    let clusters: Vec<Vec<usize>> = (0..6).map(|c| (3000 * c..3000 * c + 3000).collect()).collect();
    let by_threads = centroid_select(&wide, &clusters, 40);
    let by_one: Vec<usize> = centroid_select(&points, &clusters, 40);
    // Repeating each coordinate 80 times scales every distance by √80: same order.
    assert_eq!(by_threads, by_one);
}

#[test]
fn select_representatives_covers_every_blob() {
    let points = blobs(&corners(4, 20.0), 50, 7);
    let selected = select_representatives(&points, 4, &XMeansParams::default(), 1);
    let mut blobs_hit: Vec<usize> = selected.iter().map(|&i| i / 50).collect();
    blobs_hit.sort();
    assert_eq!(blobs_hit, [0, 1, 2, 3]);
}

#[test]
fn random_selection_is_distinct_in_range_and_seeded() {
    let s = random_select(100, 30, 4);
    assert_eq!(s.len(), 30);
    assert!(s.iter().all(|&i| i < 100));
    let mut u = s.clone();
    u.sort();
    u.dedup();
    assert_eq!(u.len(), 30);
    assert_eq!(s, random_select(100, 30, 4));
    assert_ne!(s, random_select(100, 30, 5));
    let mut all = random_select(7, 50, 1);
    all.sort();
    assert_eq!(all, (0..7).collect::<Vec<_>>());
}

/// A tenth of the spec's sequence pool: 30,000 100-d points, X-means, then k = 300. The
/// time is printed (`--nocapture`); benches/ is where speed is judged.
#[test]
fn selection_at_a_tenth_of_the_spec_scale() {
    let centers: Vec<Vec<f32>> = (0..12).map(|c| (0..100).map(|d| ((c * 7 + d * 3) % 11) as f32).collect()).collect();
    let points = blobs(&centers, 2500, 8);
    let start = std::time::Instant::now();
    let clustering = xmeans(&points, &XMeansParams::default(), 1);
    let clustered = start.elapsed();
    let selected = centroid_select(&points, &clustering.clusters, 300);
    assert_eq!(selected.len(), 300);
    assert!(clustering.clusters.len() > 1, "X-means kept one cluster for 12 blobs");
    eprintln!(
        "{} points: X-means {clustered:.2?} ({} clusters), selection of {} {:.2?}",
        points.len(),
        clustering.clusters.len(),
        selected.len(),
        start.elapsed() - clustered
    );
}
