//! What poison tracking costs a campaign's pairs: `ctos run SEED --exec --seq-file F -j 1`
//! on seeds of LLVM's tests that get a generated driver, with the same random pipelines,
//! tracking off (`CTOS_POISON=off`) and on for the driver's program (`drivers`, a
//! campaign's default); the sides take turns within each round.
//!
//!     cargo bench --bench poison
//!     CTOS_BENCH_SEEDS=20 CTOS_BENCH_PIPELINES=20 CTOS_BENCH_ROUNDS=3 cargo bench --bench poison
//!
//! Seeds are read as a campaign reads them (`ctos::fuzz::usable_seeds`, ../shared/seeds/
//! llvm-tests or CTOS_RECALL_SEEDS); the first that get a driver on this host are used.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

mod common;

use common::{env_or, median, random_pipelines};

fn ctos_run(ctos: &Path, poison: &str, seed: &ctos::fuzz::SeedEntry, pipelines: &Path) -> bool {
    let mut c = Command::new(ctos);
    c.env("CTOS_POISON", poison).args(["run", &seed.file, "--exec", "-j", "1", "--seq-file"]).arg(pipelines);
    for o in &seed.options {
        c.arg(format!("--llvm-arg={o}"));
    }
    c.stdout(Stdio::null()).stderr(Stdio::null()).status().expect("run ctos").success()
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::var("CTOS_RECALL_SEEDS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("../shared/seeds/llvm-tests"));
    let (n_seeds, n_pipelines, rounds) =
        (env_or("CTOS_BENCH_SEEDS", 20), env_or("CTOS_BENCH_PIPELINES", 20), env_or("CTOS_BENCH_ROUNDS", 3));
    let ctos = PathBuf::from(env!("CARGO_BIN_EXE_ctos"));
    let linked = ctos::sandbox::Llvm::Linked;
    let catalog = ctos::cli::catalog_for(&linked).expect("catalog");
    let (entries, _) = ctos::fuzz::usable_seeds(&[dir], &catalog, &Default::default(), &linked).expect("seeds");
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("pipelines.txt");
    std::fs::write(&file, random_pipelines(&catalog, n_pipelines, 20).join("\n")).unwrap();
    // The seeds whose run succeeds (a driver was generated, the target is this host's) in
    // under two seconds: a call that runs to the execution time limit (seed-0024 takes 40 s
    // for 3 pipelines) would time the limit, not the tracking.
    let quick = |e: &&ctos::fuzz::SeedEntry| {
        let t = Instant::now();
        ctos_run(&ctos, "off", e, &file) && t.elapsed().as_secs_f64() < 2.0
    };
    let seeds: Vec<_> = entries.iter().filter(quick).take(n_seeds).collect();
    let pairs = seeds.len() * n_pipelines;
    let sides = ["off", "drivers"];
    let mut walls = vec![Vec::new(); sides.len()];
    for round in 0..rounds {
        for k in 0..sides.len() {
            let side = (round + k) % sides.len();
            let t = Instant::now();
            for seed in &seeds {
                ctos_run(&ctos, sides[side], seed, &file);
            }
            walls[side].push(t.elapsed().as_secs_f64());
        }
    }
    println!(
        "LLVM {}, {} seeds with generated drivers x {n_pipelines} random 20-pass pipelines, -j 1, {rounds} rounds",
        ctos::llvm::version_string(),
        seeds.len()
    );
    println!("{:<34} {:>8} {:>10} {:>10}", "", "pairs", "median s", "pairs/s");
    let base = median(walls[0].clone());
    for (side, w) in sides.iter().zip(&walls) {
        let m = median(w.clone());
        println!(
            "{:<34} {pairs:>8} {m:>10.2} {:>10.2}  ({:.2}x)",
            format!("CTOS_POISON={side}"),
            pairs as f64 / m,
            m / base
        );
    }
}
