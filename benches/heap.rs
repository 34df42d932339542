//! What the two heaps cost: `ctos run PROGRAM --seq-file F -j 1` with each job on the plain
//! heap only (`CTOS_HEAP=plain`, as `opt` runs), on the strict heap only (`strict`, the
//! policy before both were run), and on both (`both`, the default: the strict heap's run
//! added to every plain run whose optimizer ended well), optimizing only and with `--exec`,
//! in-process and inside Debian's `opt` (`--opt`).
//!
//!     cargo bench --bench heap
//!     CTOS_BENCH_PIPELINES=30 CTOS_BENCH_ROUNDS=5 CTOS_BENCH_PROGRAM=p.c cargo bench --bench heap
//!
//! Same program (compiled once to bitcode), same random 20-pass pipelines; the sides take
//! turns within each round, in an order that rotates. Wall time and the CPU of the children.

use std::process::{Command, Stdio};
use std::time::Instant;

mod common;

use common::{batch, children_cpu, median, Batch};

/// Wall and CPU seconds of one command.
fn measure(mut command: Command) -> (f64, f64) {
    let cpu = children_cpu();
    let t = Instant::now();
    let status = command.stdout(Stdio::null()).stderr(Stdio::null()).status().expect("run");
    assert!(status.success(), "{command:?}: {status}");
    let after = children_cpu();
    (t.elapsed().as_secs_f64(), (after.0 + after.1) - (cpu.0 + cpu.1))
}

fn main() {
    // The folder holds the files the sides read: it lives as long as they run.
    let Batch { program, bitcode, pipelines, file, opt, ctos, rounds, dir: _dir } = batch();
    let n = pipelines.len();
    let command = |heap: &str, exec: bool, external: bool| {
        let mut c = Command::new(&ctos);
        c.env("CTOS_HEAP", heap).arg("run").arg(&bitcode).arg("--seq-file").arg(&file).args(["-j", "1"]);
        if exec {
            c.arg("--exec");
        }
        if external {
            c.args(["--opt", &opt]);
        }
        c
    };
    let mut sides: Vec<(String, Command)> = Vec::new();
    for external in [false, true] {
        for exec in [false, true] {
            for heap in ["plain", "strict", "both"] {
                let name = format!(
                    "{heap:<6} {}{}",
                    if external { "--opt" } else { "in-process" },
                    if exec { ", --exec" } else { "" }
                );
                sides.push((name, command(heap, exec, external)));
            }
        }
    }
    // The agent is built once, before anything is timed.
    measure(command("both", false, true));
    let mut walls: Vec<Vec<f64>> = vec![Vec::new(); sides.len()];
    let mut cpus: Vec<Vec<f64>> = vec![Vec::new(); sides.len()];
    for round in 0..rounds {
        for k in 0..sides.len() {
            let side = (k + round) % sides.len();
            let (wall, cpu) = measure(clone(&sides[side].1));
            walls[side].push(wall);
            cpus[side].push(cpu);
        }
    }
    println!("{n} random 20-pass pipelines on {}, -j 1, {rounds} rounds, medians", program.display());
    println!("{:<32} {:>8} {:>8} {:>14}", "heap, where", "wall s", "CPU s", "wall vs plain");
    for (i, (name, _)) in sides.iter().enumerate() {
        let plain = median(walls[i - i % 3].clone());
        let wall = median(walls[i].clone());
        println!("{name:<32} {wall:>8.2} {:>8.2} {:>13.2}x", median(cpus[i].clone()), wall / plain);
    }
}

/// The same command again (a `Command` runs once per value).
fn clone(command: &Command) -> Command {
    let mut c = Command::new(command.get_program());
    c.args(command.get_args());
    for (name, value) in command.get_envs() {
        if let Some(value) = value {
            c.env(name, value);
        }
    }
    c
}
