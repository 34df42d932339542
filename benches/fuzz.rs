//! Pairs per second of the campaign's testing against a CTOS-style baseline that spawns
//! `opt -verify-each`, `clang -O0` and the executable for every (program, sequence) pair.
//!
//!     cargo bench --bench fuzz
//!     CTOS_BENCH_PROGRAMS=6 CTOS_BENCH_SEQUENCES=40 CTOS_BENCH_JOBS=2 cargo bench --bench fuzz
//!     CTOS_BENCH_CAMPAIGN=DIR CTOS_BENCH_PROGRAMS=12 CTOS_BENCH_SEQUENCES=10 cargo bench --bench fuzz
//!
//! Same csmith programs (screened for undefined behaviour), same random 50–200-pass
//! sequences from the `ctos` set, same number of parallel workers, in one run; ctos also on
//! glibc's heap alone, to show what the strict heap's runs cost, and without poison
//! tracking (the program's run instrumented by src/llvm/poison_checks.cpp), for its cost. Also reports where ctos's
//! time goes: pass work, verification, hashing, JIT, the program.
//!
//! With CTOS_BENCH_CAMPAIGN, the pairs are a campaign's own: its first tested programs, each
//! with the first sequences of its iteration. Pair cost grows steeply with program size (one
//! 300 KB csmith bitcode takes the baseline seconds a pair), and a campaign's selection picks
//! its own programs, so this is the baseline to hold the campaign's end-to-end rate against.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ctos::llvm::{CFrontend, IrModule, TargetSpec, VerifyEach};
use ctos::program::{generate_many, screen_many, GenConfig, Screen, Screening};
use ctos::sandbox::{
    run_batch_cached, BatchItem, ExecCache, ExecMode, ExecStatus, HeapPolicy, JobSpec, Limits, PoisonTracking, Pool,
};
use ctos::seq::random::{random_flat_between, with_preconditions};
use ctos::seq::Catalog;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

mod common;

use common::{ctos_passes, env_or};

/// One pair of the baseline: three processes in a row.
struct Pair {
    program: usize,
    pipeline: String,
    step: usize,
    child: Child,
    started: Instant,
    dir: PathBuf,
}

fn start_step(bc: &Path, pipeline: &str, step: usize, dir: &Path, major: u32) -> Child {
    let mut cmd = match step {
        0 => {
            let mut c = Command::new(format!("/usr/lib/llvm-{major}/bin/opt"));
            c.arg("-verify-each").arg(format!("-passes={pipeline}")).arg(bc).arg("-o").arg(dir.join("out.bc"));
            c
        }
        1 => {
            let mut c = Command::new(format!("/usr/lib/llvm-{major}/bin/clang"));
            c.args(["-O0", "-w"]).arg(dir.join("out.bc")).arg("-o").arg(dir.join("exe"));
            c
        }
        _ => Command::new(dir.join("exe")),
    };
    cmd.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("spawn")
}

/// Programs (bitcode) and the pipelines each is tested with.
struct Workload {
    bitcode: Vec<PathBuf>,
    pipelines: Vec<Vec<String>>,
    /// The campaign's own end-to-end pairs per second, when the pairs are a campaign's.
    campaign_rate: Option<f64>,
}

/// The baseline over all pairs with `jobs` pairs in flight; returns (seconds, wrong outputs).
fn baseline(work_load: &Workload, references: &[String], jobs: usize, major: u32) -> (f64, usize) {
    let bitcode = &work_load.bitcode;
    let work = tempfile::tempdir().unwrap();
    let mut queue: Vec<(usize, String)> = (work_load.pipelines.iter().enumerate())
        .flat_map(|(p, pipelines)| pipelines.iter().map(move |s| (p, s.clone())))
        .collect();
    queue.reverse();
    let mut running: Vec<Pair> = Vec::new();
    let mut differing = 0;
    let t = Instant::now();
    let mut slot = 0;
    while !queue.is_empty() || !running.is_empty() {
        while running.len() < jobs {
            let Some((program, pipeline)) = queue.pop() else { break };
            slot += 1;
            let dir = work.path().join(slot.to_string());
            std::fs::create_dir_all(&dir).unwrap();
            let child = start_step(&bitcode[program], &pipeline, 0, &dir, major);
            running.push(Pair { program, pipeline, step: 0, child, started: Instant::now(), dir });
        }
        let mut i = 0;
        while i < running.len() {
            let p = &mut running[i];
            let limit = if p.step == 0 { 30 } else { 10 };
            let status = p.child.try_wait().unwrap();
            if status.is_none() && p.started.elapsed() < Duration::from_secs(limit) {
                i += 1;
                continue;
            }
            if status.is_none() {
                let _ = p.child.kill();
            }
            let output = running[i].child.wait_with_output_ref();
            let p = &mut running[i];
            let ok = status.is_some_and(|s| s.success());
            if p.step == 2 || !ok {
                if p.step == 2 && output != references[p.program] {
                    differing += 1;
                }
                running.swap_remove(i);
                continue;
            }
            p.step += 1;
            p.child = start_step(&bitcode[p.program], &p.pipeline, p.step, &p.dir, major);
            p.started = Instant::now();
            i += 1;
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    (t.elapsed().as_secs_f64(), differing)
}

trait OutputRef {
    fn wait_with_output_ref(&mut self) -> String;
}

impl OutputRef for Child {
    fn wait_with_output_ref(&mut self) -> String {
        use std::io::Read;
        let mut s = String::new();
        if let Some(out) = self.stdout.as_mut() {
            let _ = out.read_to_string(&mut s);
        }
        let _ = self.wait();
        s
    }
}

/// Csmith programs with its defaults, at least 80 KB, free of undefined behaviour, each with
/// the same random 50–200-pass pipelines.
fn generated(n_programs: usize, n_sequences: usize, jobs: usize, catalog: &Catalog, work: &Path) -> Workload {
    let seeds: Vec<u64> = (1..=(3 * n_programs as u64)).collect();
    let generated = generate_many(&seeds, &GenConfig::default(), jobs);
    let mut sources = Vec::new();
    for g in generated.into_iter().flatten() {
        let path = work.join(format!("p{}.c", g.seed));
        std::fs::write(&path, &g.source).unwrap();
        sources.push(path);
    }
    let clean: Vec<PathBuf> = sources
        .iter()
        .zip(screen_many(&sources, &Screen::default(), jobs))
        .filter(|(_, s)| matches!(s, Screening::Clean { .. }))
        .map(|(p, _)| p.clone())
        .take(n_programs)
        .collect();
    let frontend = CFrontend::default();
    let bitcode: Vec<PathBuf> = clean
        .iter()
        .map(|c| {
            let bc = c.with_extension("bc");
            std::fs::write(&bc, frontend.compile(c).unwrap()).unwrap();
            bc
        })
        .collect();
    let pool_passes = ctos_passes(catalog);
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let pipelines: Vec<String> = (0..n_sequences)
        .map(|_| {
            with_preconditions(&random_flat_between(&mut rng, &pool_passes, 50, 200), catalog).render(catalog).unwrap()
        })
        .collect();
    Workload { pipelines: vec![pipelines; bitcode.len()], bitcode, campaign_rate: None }
}

/// A campaign's first `n_programs` tested programs, each with the first `n_sequences`
/// sequences of its iteration.
fn from_campaign(dir: &Path, n_programs: usize, n_sequences: usize) -> Workload {
    let store = ctos::fuzz::store::Store::open_read_only(&dir.join("campaign.sqlite")).unwrap();
    let mut workload = Workload { bitcode: Vec::new(), pipelines: Vec::new(), campaign_rate: None };
    for iteration in 0..store.iterations().unwrap() {
        let sequences: Vec<String> =
            store.sequences(iteration).unwrap().into_iter().map(|(_, s)| s).take(n_sequences).collect();
        for program in store.programs(iteration).unwrap().into_iter().filter(|p| p.status == "tested") {
            if workload.bitcode.len() < n_programs {
                workload.bitcode.push(dir.join(&program.ir));
                workload.pipelines.push(sequences.clone());
            }
        }
    }
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("stats.json")).unwrap()).unwrap();
    workload.campaign_rate = stats["pairs_per_second"].as_f64();
    workload
}

fn main() {
    let n_programs = env_or("CTOS_BENCH_PROGRAMS", 4);
    let n_sequences = env_or("CTOS_BENCH_SEQUENCES", 30);
    let jobs = env_or("CTOS_BENCH_JOBS", 2);
    let major = ctos::llvm::version().0;
    let catalog = Catalog::for_llvm(major).unwrap();
    let work = tempfile::tempdir().unwrap();
    let workload = match std::env::var_os("CTOS_BENCH_CAMPAIGN") {
        Some(dir) => from_campaign(Path::new(&dir), n_programs, n_sequences),
        None => generated(n_programs, n_sequences, jobs, &catalog, work.path()),
    };
    let frontend = CFrontend::default();

    // ctos: the campaign's testing path (reference run, then every sequence, -j jobs),
    // once with its default verification, once verifying after every pass as the
    // baseline's opt -verify-each does, and once on glibc's heap alone (without the strict
    // heap's run after each plain run that ended well: what both heaps cost).
    let limits = Limits { opt_timeout: Duration::from_secs(30), ..Limits::default() };
    let mut references = Vec::new();
    let mut every_seconds = 0.0;
    let mut plain_seconds = 0.0;
    let mut untracked_seconds = 0.0;
    let mut breakdown = Breakdown::default();
    let mut ours = 0.0;
    let (both, plain) = (HeapPolicy::Both, HeapPolicy::Plain);
    let (tracked, untracked) = (PoisonTracking::All, PoisonTracking::Off);
    for (verify, heap, track_poison) in [
        (VerifyEach::Changed, both, tracked),
        (VerifyEach::Every, both, tracked),
        (VerifyEach::Changed, plain, tracked),
        (VerifyEach::Changed, both, untracked),
    ] {
        let t = Instant::now();
        let mut b = Breakdown::default();
        for (p, (bc, pipelines)) in workload.bitcode.iter().zip(&workload.pipelines).enumerate() {
            let mut module = IrModule::load(bc, &frontend, &TargetSpec::default()).unwrap();
            let mut pool = Pool::new(jobs, limits, Vec::new()).unwrap();
            pool.set_heap_policy(heap);
            let reference = pool
                .run_one(&mut module, &JobSpec { exec: ExecMode::Always, track_poison, ..JobSpec::optimize("") })
                .unwrap()
                .execution
                .unwrap();
            if verify == VerifyEach::Changed && heap == HeapPolicy::Both && track_poison == tracked {
                references.push(reference.stdout.clone());
            }
            let items = pipelines.iter().enumerate().map(|(index, s)| BatchItem {
                index,
                job: JobSpec {
                    verify_each: verify,
                    exec: ExecMode::Always,
                    track_poison,
                    ..JobSpec::optimize(s.clone())
                },
            });
            run_batch_cached(&mut pool, &mut module, items, &mut ExecCache::default(), |_, run| {
                b.add(p, &run, &reference)
            })
            .unwrap();
        }
        match (verify, heap, track_poison) {
            (VerifyEach::Changed, HeapPolicy::Both, PoisonTracking::All) => {
                ours = t.elapsed().as_secs_f64();
                breakdown = b;
            }
            (VerifyEach::Changed, HeapPolicy::Both, _) => untracked_seconds = t.elapsed().as_secs_f64(),
            (VerifyEach::Changed, _, _) => plain_seconds = t.elapsed().as_secs_f64(),
            _ => every_seconds = t.elapsed().as_secs_f64(),
        }
    }
    let Breakdown { passes, verify, hash, codegen, running_ms, executed, pairs, differing } = breakdown;
    let (theirs, baseline_differing) = baseline(&workload, &references, jobs, major);

    let source = match std::env::var("CTOS_BENCH_CAMPAIGN") {
        Ok(dir) => format!("programs of campaign {dir}"),
        Err(_) => "csmith programs".to_string(),
    };
    println!(
        "LLVM {}, {} {source} x {} sequences (50-200 passes), {jobs} workers each",
        ctos::llvm::version_string(),
        workload.bitcode.len(),
        n_sequences
    );
    println!("{:<44} {:>8} {:>10} {:>10}", "", "pairs", "seconds", "pairs/s");
    println!(
        "{:<44} {:>8} {:>10.1} {:>10.2}",
        "ctos, poison tracked (CTOS_POISON=all)",
        pairs,
        ours,
        pairs as f64 / ours
    );
    println!(
        "{:<44} {:>8} {:>10.1} {:>10.2}",
        "ctos, glibc's heap alone (CTOS_HEAP=plain)",
        pairs,
        plain_seconds,
        pairs as f64 / plain_seconds
    );
    println!(
        "{:<44} {:>8} {:>10.1} {:>10.2}",
        "ctos, no poison tracking (campaign default)",
        pairs,
        untracked_seconds,
        pairs as f64 / untracked_seconds
    );
    println!(
        "{:<44} {:>8} {:>10.1} {:>10.2}",
        "ctos (verify after every pass, as opt)",
        pairs,
        every_seconds,
        pairs as f64 / every_seconds
    );
    println!(
        "{:<44} {:>8} {:>10.1} {:>10.2}",
        "baseline (opt -verify-each, clang, exe)",
        pairs,
        theirs,
        pairs as f64 / theirs
    );
    println!(
        "speed-up: {:.2}x; outputs differing from the reference: ctos {differing}, baseline {baseline_differing}",
        theirs / ours
    );
    if let Some(rate) = workload.campaign_rate {
        let base = pairs as f64 / theirs;
        println!("the campaign end to end: {rate:.2} pairs/s, {:.2}x this baseline", rate / base);
    }
    let capacity = ours * 1e3 * jobs as f64;
    println!("where ctos's worker time goes ({:.0} ms of {jobs} workers x {:.1} s):", capacity, ours);
    for (what, ms) in [
        ("passes (incl. verify after each)", passes),
        ("final verification", verify),
        ("printing + hashing the IR", hash),
        ("JIT code generation (distinct modules)", codegen),
        ("running the programs", running_ms),
        ("strict-heap runs, fork, pipes, parent, idle", capacity - passes - verify - hash - codegen - running_ms),
    ] {
        println!("  {what:<40} {:>8.0} ms {:>5.1}%", ms, 100.0 * ms / capacity);
    }
    println!("  executions: {} distinct optimized modules for {pairs} pairs", executed.len());
}

/// Where the children's time went, summed over runs.
#[derive(Default)]
struct Breakdown {
    passes: f64,
    verify: f64,
    hash: f64,
    codegen: f64,
    running_ms: f64,
    executed: HashSet<(usize, Option<u64>)>,
    pairs: usize,
    differing: usize,
}

impl Breakdown {
    fn add(&mut self, program: usize, run: &ctos::sandbox::Run, reference: &ctos::sandbox::Execution) {
        self.pairs += 1;
        if let Some(timing) = run.timing {
            self.passes += timing.passes;
            self.verify += timing.verify;
            self.hash += timing.hash;
        }
        if let Some(e) = &run.execution {
            if self.executed.insert((program, run.ir_hash)) {
                self.codegen += e.codegen_millis;
                self.running_ms += e.millis - e.codegen_millis;
            }
            if e.stdout != reference.stdout || e.status != ExecStatus::Exited(0) {
                self.differing += 1;
            }
        }
    }
}
