//! Coverage overhead: uncovered vs `functions` vs `blocks`, same program, same random
//! 20-pass pipelines, sandboxed, one child at a time.
//!
//!     cargo bench --bench coverage
//!
//! Breakpoints are process-wide, so the three modes cannot interleave per pipeline;
//! instead each round runs every pipeline in every mode, and the order of the modes
//! rotates from round to round so that drift in machine speed spreads over all three.
//! Per pipeline we keep the median over rounds, then report medians and ratios.

use std::path::PathBuf;
use std::time::Instant;

use ctos::coverage::{disarm, Coverage, Granularity};
use ctos::llvm::{CFrontend, IrModule, TargetSpec};
use ctos::sandbox::{JobSpec, Limits, Pool};
use ctos::seq::Catalog;

mod common;

use common::{env_or, median, random_pipelines};

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let program = std::env::var("CTOS_BENCH_PROGRAM")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("tests/data/csmith-12345.c"));
    let n_pipelines = env_or("CTOS_BENCH_PIPELINES", 40);
    let rounds = env_or("CTOS_BENCH_ROUNDS", 3);
    let major = ctos::llvm::version().0;
    let mut module = IrModule::load(&program, &CFrontend::default(), &TargetSpec::default()).unwrap();
    let catalog = Catalog::for_llvm(major).unwrap();
    let pipelines = random_pipelines(&catalog, n_pipelines, 20);

    let modes = [None, Some(Granularity::Functions), Some(Granularity::Blocks)];
    let mut times = vec![vec![Vec::new(); n_pipelines]; modes.len()];
    let mut elements = vec![vec![0usize; n_pipelines]; modes.len()];
    let mut arm_ms = [0.0f64; 3];
    for round in 0..rounds {
        for k in 0..modes.len() {
            let m = (k + round) % modes.len();
            let mut pool = Pool::new(1, Limits::default(), Vec::new()).unwrap();
            let t = Instant::now();
            match modes[m] {
                None => disarm(),
                Some(g) => pool.set_observer(Coverage::arm(g).observer()),
            }
            if round == 0 {
                arm_ms[m] = t.elapsed().as_secs_f64() * 1e3;
            }
            for (i, p) in pipelines.iter().enumerate() {
                let job = JobSpec { observe: modes[m].is_some(), ..JobSpec::optimize(p.clone()) };
                let t = Instant::now();
                let run = pool.run_one(&mut module, &job).unwrap();
                times[m][i].push(t.elapsed().as_secs_f64() * 1e3);
                elements[m][i] = run.trace.map_or(0, |t| t.len());
            }
        }
    }
    let per: Vec<Vec<f64>> = times.iter().map(|m| m.iter().map(|r| median(r.clone())).collect()).collect();
    println!(
        "program: {} ({} instructions), LLVM {}",
        program.display(),
        module.instruction_count(),
        ctos::llvm::version_string()
    );
    println!("{n_pipelines} random 20-pass pipelines, {rounds} rounds, median per pipeline, sandboxed, -j 1");
    println!(
        "{:<12} {:>10} {:>10} {:>12} {:>14} {:>10}",
        "mode", "arm ms", "median ms", "ratio", "ratio median", "elements"
    );
    for (m, name) in ["uncovered", "functions", "blocks"].iter().enumerate() {
        let ratios: Vec<f64> = per[m].iter().zip(&per[0]).map(|(a, b)| a / b).collect();
        let els = median(elements[m].iter().map(|&e| e as f64).collect());
        println!(
            "{name:<12} {:>10.1} {:>10.2} {:>11.2}x {:>13.2}x {:>10.0}",
            arm_ms[m],
            median(per[m].clone()),
            median(per[m].clone()) / median(per[0].clone()),
            median(ratios),
            els
        );
    }
}
