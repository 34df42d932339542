//! What a localization costs the machine: user and system seconds, and evaluations per CPU
//! second, of `locseq isolate` as it is (sites as patched jumps, code and data in huge
//! pages, observed jobs in workers) against every site an `int3` (`CTOS_COVERAGE_TRAPS=int3`,
//! the mechanism before), against 4 KiB pages (`CTOS_COVERAGE_SMALL_PAGES=1`) and against a
//! child forked per job (`CTOS_WORKER_JOBS=1`), side by side.
//!
//!     cargo bench --bench isolate
//!     CTOS_BENCH_BUGS=191714,180456 CTOS_BENCH_TIME=30 CTOS_BENCH_ROUNDS=3 cargo bench --bench isolate
//!     CTOS_BENCH_OPT=/usr/lib/llvm-22/bin/opt cargo bench --bench isolate   # inside that opt
//!     CTOS_BENCH_BASELINE=../base/target/release/locseq cargo bench --bench isolate   # and an older one
//!     CTOS_BENCH_BASELINE=before=../a/locseq,issue=../b/locseq CTOS_BENCH_MODES=current,before,issue \
//!         cargo bench --bench isolate   # several older ones, named; only these modes
//!
//! Each round runs every bug in both modes, the order of the modes alternating from round
//! to round; per bug and mode we report medians over rounds. Ranks of the bug's fix files
//! come along, so that a faster search is seen not to rank worse.

use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod common;

use common::{children_cpu, env_or, median};

struct Measured {
    user: f64,
    sys: f64,
    evaluations: f64,
    /// Best rank of a fix file (0: not ranked).
    rank: usize,
}

fn isolate(locseq: &Path, bug: &Path, seconds: usize, env: &[(&str, &str)], opt: Option<&str>) -> Measured {
    let mut command = Command::new(locseq);
    command.arg("isolate").arg(bug).args(["--time", &seconds.to_string(), "-j", "2", "--json"]);
    if let Some(opt) = opt {
        command.args(["--opt", opt]);
    }
    command.envs(env.iter().copied());
    let (user0, sys0) = children_cpu();
    let out = command.stderr(Stdio::null()).output().expect("run locseq");
    let (user1, sys1) = children_cpu();
    assert!(out.status.success(), "locseq isolate {} failed: {:?}", bug.display(), out.status.into_raw());
    let fix_files: Vec<String> = {
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(bug.join("meta.json")).unwrap()).unwrap();
        meta["fix_files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_string()).collect()
    };
    let mut evaluations = 0.0;
    let mut rank = 0;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        if record["type"] == "summary" {
            evaluations = record["stats"]["evaluations"].as_f64().unwrap();
        }
        if record["type"] == "file" && rank == 0 && fix_files.iter().any(|f| record["path"] == f.as_str()) {
            rank = record["rank"].as_u64().unwrap() as usize;
        }
    }
    Measured { user: user1 - user0, sys: sys1 - sys0, evaluations, rank }
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let locseq = root.join("target/release/locseq");
    assert!(locseq.is_file(), "build it first: cargo build --release");
    let bench = root.join("../shared/bench/bugs");
    let bugs = std::env::var("CTOS_BENCH_BUGS").unwrap_or_else(|_| "191714,180456".into());
    let seconds = env_or("CTOS_BENCH_TIME", 30);
    let rounds = env_or("CTOS_BENCH_ROUNDS", 3);
    let opt = std::env::var("CTOS_BENCH_OPT").ok().filter(|o| !o.is_empty());
    // `PATH` or `NAME=PATH,…`: older binaries to run beside this one.
    let baselines: Vec<(String, PathBuf)> = std::env::var("CTOS_BENCH_BASELINE")
        .unwrap_or_default()
        .split(',')
        .filter(|b| !b.is_empty())
        .map(|b| match b.split_once('=') {
            Some((name, path)) => (name.to_string(), PathBuf::from(path)),
            None => ("baseline".to_string(), PathBuf::from(b)),
        })
        .collect();
    let chosen = std::env::var("CTOS_BENCH_MODES").ok().filter(|m| !m.is_empty());
    println!(
        "locseq isolate --time {seconds} -j 2{}, {rounds} rounds, medians",
        opt.as_ref().map(|o| format!(" --opt {o}")).unwrap_or_default()
    );
    println!(
        "{:<8} {:<9} {:>7} {:>7} {:>6} {:>6} {:>9} {:>6}",
        "bug", "mode", "user s", "sys s", "sys %", "evals", "evals/cpu", "rank"
    );
    for bug in bugs.split(',') {
        let dir = bench.join(bug);
        let mut modes: Vec<(&str, &Path, &[(&str, &str)])> = vec![
            ("current", &locseq, &[]),
            ("int3", &locseq, &[("CTOS_COVERAGE_TRAPS", "int3")]),
            ("4k pages", &locseq, &[("CTOS_COVERAGE_SMALL_PAGES", "1")]),
            ("child per job", &locseq, &[("CTOS_WORKER_JOBS", "1")]),
        ];
        modes.extend(baselines.iter().map(|(name, path)| (name.as_str(), path.as_path(), &[] as &[(&str, &str)])));
        if let Some(chosen) = &chosen {
            modes.retain(|(name, ..)| *name == "current" || chosen.split(',').any(|c| c == *name));
        }
        let mut by_mode: Vec<Vec<Measured>> = modes.iter().map(|_| Vec::new()).collect();
        for round in 0..rounds {
            for k in 0..modes.len() {
                let mode = (k + round) % modes.len();
                let (_, binary, env) = &modes[mode];
                by_mode[mode].push(isolate(binary, &dir, seconds, env, opt.as_deref()));
            }
        }
        let mut rates = vec![0.0; modes.len()];
        for (mode, runs) in by_mode.iter().enumerate() {
            let user = median(runs.iter().map(|m| m.user).collect());
            let sys = median(runs.iter().map(|m| m.sys).collect());
            let evals = median(runs.iter().map(|m| m.evaluations).collect());
            rates[mode] = median(runs.iter().map(|m| m.evaluations / (m.user + m.sys)).collect());
            let ranks: Vec<String> = runs.iter().map(|m| m.rank.to_string()).collect();
            println!(
                "{bug:<8} {:<9} {user:>7.1} {sys:>7.1} {:>6.0} {evals:>6.0} {:>9.1} {:>6}",
                modes[mode].0,
                100.0 * sys / (user + sys),
                rates[mode],
                ranks.join(",")
            );
        }
        for (k, (name, ..)) in modes.iter().enumerate().skip(1) {
            println!("{bug:<8} evaluations per CPU second, current / {name}: {:.2}x", rates[0] / rates[k]);
        }
    }
}
