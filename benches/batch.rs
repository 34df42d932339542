//! An engineer's batch, start-up included: `ctos run PROGRAM --seq-file F -j 1` (in-process,
//! and inside Debian's `opt` with `--opt`) against spawning that `opt` once per pipeline,
//! wall time for the whole batch.
//!
//!     cargo bench --bench batch
//!     CTOS_BENCH_PIPELINES=30 CTOS_BENCH_ROUNDS=5 CTOS_BENCH_PROGRAM=p.c cargo bench --bench batch
//!     CTOS_BENCH_BASELINE=../base/target/release/ctos cargo bench --bench batch   # and an older ctos
//!
//! Same program (compiled once to bitcode, which every side reads), same random 20-pass
//! pipelines; the three sides take turns within each round, in an order that rotates.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

mod common;

use common::{batch, median, Batch};

fn seconds(mut command: Command) -> f64 {
    let t = Instant::now();
    let status = command.stdout(Stdio::null()).stderr(Stdio::null()).status().expect("run");
    assert!(status.success(), "{command:?}: {status}");
    t.elapsed().as_secs_f64()
}

fn spawn_opt_each(opt: &str, program: &Path, pipelines: &[String], out: &Path) -> f64 {
    let t = Instant::now();
    for p in pipelines {
        // Failing pipelines count as they come: the batch is the same for every side.
        let _ = Command::new(opt)
            .arg(format!("-passes={p}"))
            .arg(program)
            .arg("-o")
            .arg(out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    t.elapsed().as_secs_f64()
}

fn main() {
    let Batch { program, bitcode, pipelines, file, opt, ctos, rounds, dir } = batch();
    let n = pipelines.len();
    // To time one side by hand (perf, strace) on the very same files.
    if std::env::var_os("CTOS_BENCH_KEEP").is_some() {
        eprintln!("keeping {}", dir.path().display());
    }
    let baseline = std::env::var("CTOS_BENCH_BASELINE").ok().filter(|b| !b.is_empty()).map(PathBuf::from);
    let run_with = |ctos: &Path, external: bool| {
        let mut c = Command::new(ctos);
        c.arg("run").arg(&bitcode).arg("--seq-file").arg(&file).args(["-j", "1"]);
        if external {
            c.args(["--opt", &opt]);
        }
        c
    };
    let mut sides: Vec<(String, Box<dyn Fn() -> f64>)> = vec![
        ("ctos run (in-process)".into(), Box::new(|| seconds(run_with(&ctos, false)))),
        (format!("ctos run --opt {opt}"), Box::new(|| seconds(run_with(&ctos, true)))),
        (
            format!("{opt} once per pipeline"),
            Box::new(|| spawn_opt_each(&opt, &bitcode, &pipelines, &dir.path().join("out.bc"))),
        ),
    ];
    if let Some(base) = &baseline {
        sides.push((format!("{} run (in-process)", base.display()), Box::new(|| seconds(run_with(base, false)))));
        sides.push((format!("{} run --opt", base.display()), Box::new(|| seconds(run_with(base, true)))));
    }
    // Agents are built once, before anything is timed.
    for (name, side) in &sides {
        if name.contains("--opt") {
            side();
        }
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); sides.len()];
    for round in 0..rounds {
        for k in 0..sides.len() {
            let side = (k + round) % sides.len();
            times[side].push((sides[side].1)());
        }
    }
    let medians: Vec<f64> = times.into_iter().map(median).collect();

    let spawned = medians[2];
    println!("{n} random 20-pass pipelines on {}, one at a time, {rounds} rounds, medians", program.display());
    println!("{:<60} {:>8} {:>12}", "", "seconds", "vs spawning");
    for ((name, _), t) in sides.iter().zip(&medians) {
        println!("{name:<60} {t:>8.2} {:>11.2}x", spawned / t);
    }
    drop(sides);
    if std::env::var_os("CTOS_BENCH_KEEP").is_some() {
        let _ = dir.keep();
    }
}
