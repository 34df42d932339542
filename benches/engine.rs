//! Sandboxed in-process pipeline runs, and runs through the agent inside Debian's `opt`
//! (`--opt`), against spawning that `opt` once per pipeline.
//!
//!     cargo bench --bench engine                 # 60 pipelines x 3 rounds
//!     CTOS_BENCH_PIPELINES=100 CTOS_BENCH_PROGRAM=p.c cargo bench --bench engine
//!
//! Same program, same random 20-pass pipelines (seeded), measured interleaved in one run
//! so machine noise hits both sides alike. Per pipeline we keep the median of the rounds,
//! then report the median over pipelines and the ratio of total times.
//! (A plain harness rather than criterion: the figure of merit is a ratio over many
//! different pipelines, not the distribution of one closure's time.)

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use ctos::llvm::{CFrontend, IrModule, TargetSpec};
use ctos::sandbox::agent::{AgentProgram, ExternalOpt};
use ctos::sandbox::{JobSpec, Limits, Outcome, Pool};
use ctos::seq::Catalog;

mod common;

use common::{env_or, median, random_pipelines};

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let program = std::env::var("CTOS_BENCH_PROGRAM")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("tests/data/csmith-12345.c"));
    let n_pipelines = env_or("CTOS_BENCH_PIPELINES", 60);
    let rounds = env_or("CTOS_BENCH_ROUNDS", 3);
    let major = ctos::llvm::version().0;
    let opt = format!("/usr/lib/llvm-{major}/bin/opt");

    let frontend = CFrontend::default();
    let dir = tempfile::tempdir().unwrap();
    let bitcode = dir.path().join("program.bc");
    std::fs::write(&bitcode, frontend.compile(&program).unwrap()).unwrap();
    let mut module = IrModule::load(&bitcode, &frontend, &TargetSpec::default()).unwrap();

    let catalog = Catalog::for_llvm(major).unwrap();
    let pipelines = random_pipelines(&catalog, n_pipelines, 20);

    let mut pool = Pool::new(1, Limits::default(), Vec::new()).unwrap();
    let external = ExternalOpt::locate(std::path::Path::new(&opt)).unwrap();
    let agent_program = AgentProgram { ir: bitcode.clone(), ..Default::default() };
    let mut agent_pool = Pool::external(1, Limits::default(), Vec::new(), &external, &agent_program).unwrap();
    let mut agent = vec![Vec::new(); n_pipelines];
    let out_bc = dir.path().join("out.bc");
    let mut ours = vec![Vec::new(); n_pipelines];
    let mut opt_out = vec![Vec::new(); n_pipelines];
    let mut opt_disable = vec![Vec::new(); n_pipelines];
    let mut outcomes = std::collections::BTreeMap::new();
    for round in 0..rounds {
        for (i, p) in pipelines.iter().enumerate() {
            let job = JobSpec::optimize(p.clone());
            let t = Instant::now();
            let run = pool.run_one(&mut module, &job).unwrap();
            ours[i].push(t.elapsed().as_secs_f64() * 1e3);
            if round == 0 {
                *outcomes.entry(run.outcome.as_str()).or_insert(0) += 1;
                if run.outcome == Outcome::Rejected {
                    panic!("pipeline rejected: {p}: {:?}", run.message);
                }
                if run.outcome != Outcome::Ok {
                    eprintln!("pipeline {i}: {}: {}", run.outcome.as_str(), run.message.unwrap_or_default());
                }
            }
            let t = Instant::now();
            let through_agent = agent_pool.run_one(&mut module, &job).unwrap();
            agent[i].push(t.elapsed().as_secs_f64() * 1e3);
            assert_eq!(through_agent.outcome, run.outcome, "{p}: the agent and the in-process engine disagree");
            for (times, output) in [(&mut opt_out, Some(&out_bc)), (&mut opt_disable, None)] {
                let mut cmd = Command::new(&opt);
                cmd.arg(format!("-passes={p}")).arg(&bitcode);
                match output {
                    Some(o) => cmd.arg("-o").arg(o),
                    None => cmd.arg("-disable-output"),
                };
                let t = Instant::now();
                let _ = cmd.output().unwrap();
                times[i].push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    let per = |v: &Vec<Vec<f64>>| v.iter().map(|r| median(r.clone())).collect::<Vec<f64>>();
    let (ours, agent, opt_out, opt_disable) = (per(&ours), per(&agent), per(&opt_out), per(&opt_disable));
    let total = |v: &[f64]| v.iter().sum::<f64>();
    let ratios: Vec<f64> = ours.iter().zip(&opt_out).map(|(a, b)| b / a).collect();
    println!(
        "program: {} ({} instructions), LLVM {}",
        program.display(),
        module.instruction_count(),
        ctos::llvm::version_string()
    );
    println!("{n_pipelines} random 20-pass pipelines from the ctos set, {rounds} rounds, medians per pipeline");
    println!("outcomes of the in-process runs: {outcomes:?}");
    println!("{:<44} {:>10} {:>12}", "", "median ms", "total ms");
    println!("{:<44} {:>10.2} {:>12.1}", "ctos sandbox (fork, run, verify, hash)", median(ours.clone()), total(&ours));
    println!(
        "{:<44} {:>10.2} {:>12.1}",
        format!("agent in opt-{major} (fork, run, verify, hash)"),
        median(agent.clone()),
        total(&agent)
    );
    println!(
        "{:<44} {:>10.2} {:>12.1}",
        format!("opt-{major} -o out.bc (spawned)"),
        median(opt_out.clone()),
        total(&opt_out)
    );
    println!(
        "{:<44} {:>10.2} {:>12.1}",
        format!("opt-{major} -disable-output (spawned)"),
        median(opt_disable.clone()),
        total(&opt_disable)
    );
    println!(
        "speed-up vs opt -o: {:.2}x on totals, {:.2}x median per-pipeline ratio; vs -disable-output: {:.2}x on totals",
        total(&opt_out) / total(&ours),
        median(ratios),
        total(&opt_disable) / total(&ours)
    );
    let agent_ratios: Vec<f64> = agent.iter().zip(&opt_out).map(|(a, b)| b / a).collect();
    println!(
        "agent vs opt -o: {:.2}x on totals, {:.2}x median per-pipeline ratio; vs -disable-output: {:.2}x on totals",
        total(&opt_out) / total(&agent),
        median(agent_ratios),
        total(&opt_disable) / total(&agent)
    );
}
