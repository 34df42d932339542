//! Coverage overhead: uncovered vs `functions` vs `blocks` (armed in the program's own
//! back end and the target-independent code, as `ctos run --coverage` arms them) vs
//! `functions` and `blocks` armed in every back end (as before), same program, same random
//! 20-pass pipelines, sandboxed, one child at a time.
//!
//!     cargo bench --bench coverage
//!     CTOS_BENCH_OPT=llvm-23/bin/opt cargo bench --bench coverage   # inside that opt
//!
//! With `CTOS_BENCH_OPT` the children are forked by the agent inside that `opt`, which
//! arms the breakpoints over its own code (`--opt PATH`).
//! Breakpoints are process-wide, so the three modes cannot interleave per pipeline;
//! instead each round runs every pipeline in every mode, and the order of the modes
//! rotates from round to round so that drift in machine speed spreads over all three.
//! Per pipeline we keep the median over rounds, then report medians and ratios.

use std::path::PathBuf;
use std::time::Instant;

use ctos::coverage::{disarm_for, Coverage, Granularity};
use ctos::llvm::{IrModule, TargetSpec};
use ctos::program::catalog_for;
use ctos::sandbox::agent::AgentProgram;
use ctos::sandbox::Llvm;
use ctos::sandbox::{JobSpec, Limits, Pool};

mod common;

use common::{env_or, median, random_pipelines};

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let program = std::env::var("CTOS_BENCH_PROGRAM")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("tests/data/csmith-12345.c"));
    let n_pipelines = env_or("CTOS_BENCH_PIPELINES", 40);
    let rounds = env_or("CTOS_BENCH_ROUNDS", 3);
    let opt = std::env::var("CTOS_BENCH_OPT").ok().filter(|p| !p.is_empty());
    let llvm = Llvm::from_opt(opt.as_deref().map(std::path::Path::new)).unwrap();
    let external = llvm.external();
    let frontend = llvm.frontend().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let bitcode = dir.path().join("program.bc");
    std::fs::write(&bitcode, frontend.compile(&program).unwrap()).unwrap();
    // The agent's opt reads the program itself; our module only stands in for it.
    let mut module = match external {
        None => IrModule::load(&bitcode, &frontend, &TargetSpec::default()).unwrap(),
        Some(_) => IrModule::from_bytes(b"", "empty", &TargetSpec::default()).unwrap(),
    };
    let catalog = catalog_for(&llvm).unwrap();
    let pipelines = random_pipelines(&catalog, n_pipelines, 20);
    let agent_program = AgentProgram { ir: bitcode.clone(), ..Default::default() };
    let new_pool = || match external {
        None => Pool::new(1, Limits::default(), Vec::new()).unwrap(),
        Some(opt) => Pool::external(1, Limits::default(), Vec::new(), opt, &agent_program).unwrap(),
    };

    let triple = module.triple();
    // (granularity, only the program's back end)
    let modes = [
        None,
        Some((Granularity::Functions, true)),
        Some((Granularity::Blocks, true)),
        Some((Granularity::Functions, false)),
        Some((Granularity::Blocks, false)),
    ];
    let mut times = vec![vec![Vec::new(); n_pipelines]; modes.len()];
    let mut elements = vec![vec![0usize; n_pipelines]; modes.len()];
    // Per mode, each round's arming (the first also builds the site tables: the median
    // leaves that out from three rounds on).
    let mut arm_ms = vec![Vec::new(); modes.len()];
    for round in 0..rounds {
        for k in 0..modes.len() {
            let m = (k + round) % modes.len();
            let mut pool = new_pool();
            let t = Instant::now();
            match modes[m] {
                None => disarm_for(&mut pool).unwrap(),
                Some((g, own)) => {
                    Coverage::arm_for(&mut pool, g, Some(triple.as_str()).filter(|_| own)).unwrap();
                }
            }
            arm_ms[m].push(t.elapsed().as_secs_f64() * 1e3);
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
    let llvm = match external {
        None => format!("LLVM {} in-process", llvm.version()),
        Some(o) => format!("LLVM {} inside {} (agent)", o.version, o.opt.display()),
    };
    println!("program: {}, {llvm}", program.display());
    println!("{n_pipelines} random 20-pass pipelines, {rounds} rounds, median per pipeline, sandboxed, -j 1");
    println!(
        "{:<24} {:>10} {:>10} {:>12} {:>14} {:>10}",
        "mode", "arm ms", "median ms", "ratio", "ratio median", "elements"
    );
    for (m, name) in
        ["uncovered", "functions", "blocks", "functions, all back ends", "blocks, all back ends"].iter().enumerate()
    {
        let ratios: Vec<f64> = per[m].iter().zip(&per[0]).map(|(a, b)| a / b).collect();
        let els = median(elements[m].iter().map(|&e| e as f64).collect());
        println!(
            "{name:<24} {:>10.1} {:>10.2} {:>11.2}x {:>13.2}x {:>10.0}",
            median(arm_ms[m].clone()),
            median(per[m].clone()),
            median(per[m].clone()) / median(per[0].clone()),
            median(ratios),
            els
        );
    }
}
