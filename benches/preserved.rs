//! What `--check-preserved` costs and catches: the same csmith programs and random 50–200-pass
//! sequences optimized with no check, with each analysis check alone, and with all three.
//!
//!     cargo bench --bench preserved
//!     CTOS_BENCH_PROGRAMS=6 CTOS_BENCH_SEQUENCES=40 CTOS_BENCH_SET=production cargo bench --bench preserved
//!
//! The conditions take turns per program (each program starts with a different one) so that
//! the machine's drift spreads over all of them. "caught" counts pairs that fail only with
//! the check, and names what the check said.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use ctos::llvm::{CFrontend, CheckedAnalysis, IrModule, TargetSpec};
use ctos::program::{generate_many, GenConfig};
use ctos::sandbox::{run_batch, BatchItem, JobSpec, Limits, Outcome, Pool};
use ctos::seq::random::{random_flat_between, with_preconditions};
use ctos::seq::Catalog;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

mod common;

use common::{env_or, median, set_passes};

const CONDITIONS: &[(&str, &[CheckedAnalysis])] = &[
    ("none", &[]),
    ("scev", &[CheckedAnalysis::Scev]),
    ("domtree", &[CheckedAnalysis::Domtree]),
    ("loops", &[CheckedAnalysis::Loops]),
    ("scev,domtree,loops", &[CheckedAnalysis::Scev, CheckedAnalysis::Domtree, CheckedAnalysis::Loops]),
];

#[derive(Default)]
struct Tally {
    seconds: f64,
    /// Per pair: optimizer milliseconds (fork to end of optimization).
    opt_ms: Vec<f64>,
    /// Per (program, sequence): whether it failed, and how.
    failed: BTreeMap<(usize, usize), String>,
}

fn main() {
    let n_programs = env_or("CTOS_BENCH_PROGRAMS", 4);
    let n_sequences = env_or("CTOS_BENCH_SEQUENCES", 30);
    let jobs = env_or("CTOS_BENCH_JOBS", 2);
    let set = std::env::var("CTOS_BENCH_SET").unwrap_or_else(|_| "ctos".into());
    let major = ctos::llvm::version().0;
    let catalog = Catalog::for_llvm(major).unwrap();
    let work = tempfile::tempdir().unwrap();

    let seeds: Vec<u64> = (1..=n_programs as u64).collect();
    let frontend = CFrontend::default();
    let bitcode: Vec<PathBuf> = generate_many(&seeds, &GenConfig::default(), jobs)
        .into_iter()
        .flatten()
        .map(|g| {
            let c = work.path().join(format!("p{}.c", g.seed));
            std::fs::write(&c, &g.source).unwrap();
            let bc = c.with_extension("bc");
            std::fs::write(&bc, frontend.compile(&c).unwrap()).unwrap();
            bc
        })
        .collect();
    let passes = set_passes(&catalog, &set);
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let pipelines: Vec<String> = (0..n_sequences)
        .map(|_| {
            with_preconditions(&random_flat_between(&mut rng, &passes, 50, 200), &catalog).render(&catalog).unwrap()
        })
        .collect();

    let limits = Limits { opt_timeout: Duration::from_secs(30), ..Limits::default() };
    let mut tallies: Vec<Tally> = CONDITIONS.iter().map(|_| Tally::default()).collect();
    for (p, bc) in bitcode.iter().enumerate() {
        for turn in 0..CONDITIONS.len() {
            let c = (p + turn) % CONDITIONS.len();
            let flag = CheckedAnalysis::llvm_flag(CONDITIONS[c].1);
            let mut pool = Pool::new(jobs, limits, flag.into_iter().collect()).unwrap();
            let mut module = IrModule::load(bc, &frontend, &TargetSpec::default()).unwrap();
            let items =
                pipelines.iter().enumerate().map(|(index, s)| BatchItem { index, job: JobSpec::optimize(s.clone()) });
            let tally = &mut tallies[c];
            let t = Instant::now();
            run_batch(&mut pool, &mut module, items, |index, run| {
                tally.opt_ms.push(run.opt_millis);
                if run.outcome != Outcome::Ok {
                    let frame = run.crash.as_ref().and_then(|c| c.frames.first().cloned());
                    let what = frame.or(run.message.clone()).unwrap_or_default();
                    let first = what.lines().next().unwrap_or("").chars().take(100).collect::<String>();
                    tally.failed.insert((p, index), format!("{:?}: {first}", run.outcome));
                }
            })
            .unwrap();
            tally.seconds += t.elapsed().as_secs_f64();
        }
    }

    println!(
        "LLVM {}, {} csmith programs x {n_sequences} sequences (50-200 passes, {set} set), {jobs} workers",
        ctos::llvm::version_string(),
        bitcode.len()
    );
    println!(
        "{:<20} {:>9} {:>8} {:>14} {:>9} {:>7}",
        "check", "seconds", "x none", "median opt ms", "failures", "caught"
    );
    let none_seconds = tallies[0].seconds;
    for ((name, _), t) in CONDITIONS.iter().zip(&tallies) {
        let caught: Vec<&String> =
            t.failed.iter().filter(|(pair, _)| !tallies[0].failed.contains_key(pair)).map(|(_, what)| what).collect();
        println!(
            "{name:<20} {:>9.1} {:>8.2} {:>14.1} {:>9} {:>7}",
            t.seconds,
            t.seconds / none_seconds,
            median(t.opt_ms.clone()),
            t.failed.len(),
            caught.len()
        );
        let mut kinds: BTreeMap<&String, usize> = BTreeMap::new();
        for what in caught {
            *kinds.entry(what).or_default() += 1;
        }
        for (what, n) in kinds {
            println!("    {n:>4} x {what}");
        }
    }
}
