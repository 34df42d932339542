// Each benchmark uses its own part of this module.
#![allow(dead_code)]

//! What the benchmarks share: statistics, knobs, and the random pipelines they time.

use ctos::seq::random::random_flat;
use ctos::seq::{Catalog, Pass};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// CPU seconds of the children this process waited for so far: (user, system).
pub fn children_cpu() -> (f64, f64) {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}

pub fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The `ctos` set without unsafe passes and without analysis-only `require<…>` entries.
pub fn ctos_passes(catalog: &Catalog) -> Vec<Pass> {
    set_passes(catalog, "ctos")
}

/// A catalog set (`ctos`, `production`, …) without unsafe passes and without analysis-only
/// `require<…>` entries.
pub fn set_passes(catalog: &Catalog, set: &str) -> Vec<Pass> {
    catalog
        .set(set)
        .unwrap()
        .into_iter()
        .filter(|p| catalog.unsafe_reason(&p.name).is_none() && p.name != "require")
        .collect()
}

/// `n` random `len`-pass pipelines from the `ctos` set, the same in every run.
pub fn random_pipelines(catalog: &Catalog, n: usize, len: usize) -> Vec<String> {
    let pool = ctos_passes(catalog);
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    (0..n).map(|_| random_flat(&mut rng, &pool, len).render(catalog).unwrap()).collect()
}
