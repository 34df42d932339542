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

/// An engineer's batch for `ctos run --seq-file`: a program compiled once to bitcode and
/// random 20-pass pipelines, one per line, in a folder of their own.
pub struct Batch {
    /// The C program (`CTOS_BENCH_PROGRAM`, else the csmith program of tests/data).
    pub program: std::path::PathBuf,
    pub bitcode: std::path::PathBuf,
    pub pipelines: Vec<String>,
    /// The pipelines, one per line.
    pub file: std::path::PathBuf,
    /// Debian's `opt` of the linked LLVM.
    pub opt: String,
    /// The release build's `ctos`.
    pub ctos: std::path::PathBuf,
    /// `CTOS_BENCH_ROUNDS`, 5 unless set.
    pub rounds: usize,
    pub dir: tempfile::TempDir,
}

/// `CTOS_BENCH_PIPELINES` (30 unless set) pipelines on `CTOS_BENCH_PROGRAM`.
pub fn batch() -> Batch {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let program = std::env::var("CTOS_BENCH_PROGRAM")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| root.join("tests/data/csmith-12345.c"));
    let major = ctos::llvm::version().0;
    let ctos = root.join("target/release/ctos");
    assert!(ctos.is_file(), "build it first: cargo build --release");
    let dir = tempfile::tempdir().unwrap();
    let bitcode = dir.path().join("program.bc");
    std::fs::write(&bitcode, ctos::llvm::CFrontend::default().compile(&program).unwrap()).unwrap();
    let pipelines = random_pipelines(&Catalog::for_llvm(major).unwrap(), env_or("CTOS_BENCH_PIPELINES", 30), 20);
    let file = dir.path().join("pipelines.txt");
    std::fs::write(&file, pipelines.join("\n")).unwrap();
    let opt = format!("/usr/lib/llvm-{major}/bin/opt");
    Batch { program, bitcode, pipelines, file, opt, ctos, rounds: env_or("CTOS_BENCH_ROUNDS", 5), dir }
}
