//! Compiler coverage against the real LLVM. Breakpoints are process-wide, so the tests
//! take turns (one lock) instead of running in parallel threads.

use std::path::PathBuf;
use std::sync::Mutex;

use ctos::coverage::{Coverage, Granularity, Spectrum};
use ctos::llvm::{CFrontend, Heap, IrModule, TargetSpec, VerifyEach};
use ctos::sandbox::{ExecMode, Focus, HeapPolicy, JobSpec, Limits, Outcome, Pool, Run};

use crate::common;

use common::{data, many_functions_ir, one_heap, ENDINGS, ENDINGS_OUTCOMES};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The turn of one test; a failed test does not take the others down with it.
fn turn() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn csmith() -> IrModule {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/csmith-12345.c");
    IrModule::load(&path, &CFrontend::default(), &TargetSpec::default()).unwrap()
}

fn covered(coverage: &Coverage, module: &mut IrModule, pipeline: &str) -> (Run, Spectrum) {
    covered_in(coverage, module, pipeline, None)
}

fn covered_in(coverage: &Coverage, module: &mut IrModule, pipeline: &str, focus: Option<Focus>) -> (Run, Spectrum) {
    let mut pool = Pool::new(1, Limits::default(), Vec::new()).unwrap();
    pool.set_observer(coverage.observer());
    let run = pool.run_one(module, &JobSpec { observe: true, focus, ..JobSpec::optimize(pipeline) }).unwrap();
    let spectrum = coverage.spectrum(run.trace.as_deref().expect("observed runs carry a trace"));
    (run, spectrum)
}

fn covers(coverage: &Coverage, spectrum: &Spectrum, path: &str) -> bool {
    spectrum.file_ids().any(|f| coverage.sites.attribution.files[f as usize] == path)
}

#[test]
fn a_pipeline_with_licm_covers_licm_cpp_and_one_without_does_not() {
    let _turn = turn();
    let coverage = Coverage::arm(Granularity::Functions);
    let mut module = csmith();
    let (run, with) = covered(&coverage, &mut module, "function(sroa,loop-mssa(licm),gvn)");
    assert_eq!(run.outcome, Outcome::Ok);
    let (_, without) = covered(&coverage, &mut module, "function(sroa,gvn)");
    let licm = "llvm/lib/Transforms/Scalar/LICM.cpp";
    assert!(covers(&coverage, &with, licm));
    assert!(!covers(&coverage, &without, licm));
    assert!(covers(&coverage, &without, "llvm/lib/Transforms/Scalar/GVN.cpp"));
    assert!(covers(&coverage, &without, "llvm/lib/Transforms/Scalar/SROA.cpp"));
}

#[test]
fn a_focused_trace_covers_the_second_passs_file_only_when_it_is_the_focus() {
    let _turn = turn();
    let coverage = Coverage::arm(Granularity::Functions);
    let mut module = csmith();
    let pipeline = "function(sroa),function(gvn)";
    let focus = |pass: &str, element| Some(Focus { pass: pass.into(), element });
    let (run, on_gvn) = covered_in(&coverage, &mut module, pipeline, focus("gvn", Some(1)));
    assert_eq!(run.outcome, Outcome::Ok);
    assert_eq!(run.focus_class.as_deref(), Some("GVNPass"));
    let (_, on_sroa) = covered_in(&coverage, &mut module, pipeline, focus("sroa", None));
    let (_, nowhere) = covered_in(&coverage, &mut module, pipeline, focus("gvn", Some(0)));
    let (_, whole) = covered(&coverage, &mut module, pipeline);
    let (gvn, sroa) = ("llvm/lib/Transforms/Scalar/GVN.cpp", "llvm/lib/Transforms/Scalar/SROA.cpp");
    assert!(covers(&coverage, &on_gvn, gvn) && !covers(&coverage, &on_gvn, sroa));
    assert!(covers(&coverage, &on_sroa, sroa) && !covers(&coverage, &on_sroa, gvn));
    assert!(nowhere.is_empty(), "gvn does not run in element 0: {} elements recorded", nowhere.len());
    assert!(covers(&coverage, &whole, gvn) && covers(&coverage, &whole, sroa));
    assert!(on_gvn.len() < whole.len() && on_sroa.len() < whole.len());
}

/// The target's subtargets are built once by the process that forks the runs; a run that
/// sets LLVM options builds its own under them (LLVM reads some as it builds one).
#[test]
fn a_run_builds_the_targets_lowering_only_when_it_sets_llvm_options() {
    let _turn = turn();
    let coverage = Coverage::arm(Granularity::Functions);
    let mut module = csmith();
    let mut spectrum_with = |llvm_args: Vec<String>| {
        let mut pool = Pool::new(1, Limits::default(), Vec::new()).unwrap();
        pool.set_observer(coverage.observer());
        let job = JobSpec { observe: true, llvm_args, ..JobSpec::optimize("function(sroa)") };
        let run = pool.run_one(&mut module, &job).unwrap();
        assert_eq!(run.outcome, Outcome::Ok);
        coverage.spectrum(run.trace.as_deref().unwrap())
    };
    let builds_lowering = |spectrum: &Spectrum| {
        let functions = &coverage.sites.attribution.functions;
        spectrum.elements.iter().any(|&e| {
            functions[coverage.sites.function[e as usize] as usize].mangled.starts_with("_ZN4llvm17X86TargetLoweringC")
        })
    };
    let plain = spectrum_with(Vec::new());
    let with_option = spectrum_with(vec!["-slp-threshold=0".into()]);
    let plain_again = spectrum_with(Vec::new());
    assert!(builds_lowering(&with_option), "a run with an option builds its own subtarget");
    assert!(!builds_lowering(&plain) && !builds_lowering(&plain_again), "the parent's subtarget serves plain runs");
    ctos::coverage::disarm();
}

#[test]
fn functions_are_attributed_to_the_files_llvm_names() {
    let _turn = turn();
    let coverage = Coverage::arm(Granularity::Functions);
    let attribution = &coverage.sites.attribution;
    let file_of = |needle: &str| {
        let i = attribution.functions.iter().position(|f| f.mangled.contains(needle)).expect(needle);
        attribution.file_of(i).map(str::to_string)
    };
    assert_eq!(file_of("N4llvm8LICMPass3run").as_deref(), Some("llvm/lib/Transforms/Scalar/LICM.cpp"));
    assert_eq!(
        file_of("InstCombinerImpl8visitAdd").as_deref(),
        Some("llvm/lib/Transforms/InstCombine/InstCombineAddSub.cpp")
    );
    assert_eq!(
        file_of("SLPVectorizerPass7runImpl").as_deref(),
        Some("llvm/lib/Transforms/Vectorize/SLPVectorizer.cpp")
    );
    assert_eq!(file_of("N4llvm12VerifierPass3run").as_deref(), Some("llvm/lib/IR/Verifier.cpp"));
    // Our own Rust code is not LLVM's and gets no breakpoint.
    assert!(attribution.functions.iter().all(|f| !f.mangled.contains("4ctos")));
    // Every library whose code is attributed has a known source directory.
    let unknown: Vec<&String> = attribution.files.iter().filter(|f| f.starts_with("unknown-library/")).collect();
    assert!(unknown.is_empty(), "add these libraries to data/llvm-lib-dirs.tsv: {unknown:?}");
}

#[test]
fn crashing_and_fatal_runs_still_return_their_coverage() {
    let _turn = turn();
    let coverage = Coverage::arm(Granularity::Functions);
    let mut module = csmith();
    let (run, crash) = covered(&coverage, &mut module, "function(sroa,trigger-crash-function)");
    assert_eq!(run.outcome, Outcome::Crash);
    assert!(covers(&coverage, &crash, "llvm/lib/Transforms/Scalar/SROA.cpp"), "what ran before the crash");
    let (run, fatal) = covered(&coverage, &mut module, "function(loop(licm))");
    assert_eq!(run.outcome, Outcome::Fatal);
    assert!(covers(&coverage, &fatal, "llvm/lib/Transforms/Scalar/LICM.cpp"));
    // The error reporting itself is in the full trace; the cut trace leaves it out.
    let trace = run.trace.unwrap();
    let reporting = |s: &Spectrum| s.elements.iter().any(|&e| coverage.sites.is_error_reporting(e));
    assert!(reporting(&fatal));
    let cut = Spectrum::from_failing_trace(&trace, coverage.sites, true);
    assert!(!reporting(&cut) && cut.len() < fatal.len());
    assert!(cut.len() > fatal.len() / 2, "the cut keeps what ran before the error");
}

/// Random 20-pass pipelines over two programs, and ones that crash or stop: the outcome and
/// the optimized IR are the same with sites armed at either granularity as without.
#[test]
fn coverage_changes_no_outcome_and_no_optimized_ir() {
    use rand::SeedableRng;
    let _turn = turn();
    let catalog = ctos::seq::Catalog::for_llvm(ctos::llvm::version().0).unwrap();
    let passes: Vec<_> = (catalog.set("ctos").unwrap().into_iter())
        .filter(|p| catalog.unsafe_reason(&p.name).is_none() && p.name != "require")
        .collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(31);
    let mut pipelines: Vec<String> =
        (0..12).map(|_| ctos::seq::random::random_flat(&mut rng, &passes, 20).render(&catalog).unwrap()).collect();
    pipelines
        .extend(["default<O2>", "function(sroa,trigger-crash-function)", "function(loop(licm))"].map(String::from));
    let slp = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/bugs/191714/repro.ll");
    let mut programs = vec![csmith(), IrModule::load(&slp, &CFrontend::default(), &TargetSpec::default()).unwrap()];
    let seen = |r: &Run| (r.outcome, r.ir_hash);
    ctos::coverage::disarm();
    let mut plain = Pool::new(1, Limits::default(), Vec::new()).unwrap();
    let mut expected = Vec::new();
    for module in &mut programs {
        for pipeline in &pipelines {
            expected.push(seen(&plain.run_one(module, &JobSpec::optimize(pipeline.as_str())).unwrap()));
        }
    }
    let outcomes: std::collections::BTreeSet<String> = expected.iter().map(|(o, _)| format!("{o:?}")).collect();
    assert!(outcomes.len() >= 3, "ok, crash and fatal runs: {outcomes:?}");
    // Blocks armed in every other file only: patches then cover sites left out.
    for (granularity, narrowed) in
        [(Granularity::Functions, false), (Granularity::Blocks, false), (Granularity::Blocks, true)]
    {
        let coverage = Coverage::arm(granularity);
        let mut pool = Pool::new(1, Limits::default(), Vec::new()).unwrap();
        pool.set_observer(coverage.observer());
        if narrowed {
            coverage.narrow_for(&mut pool, |s| coverage.sites.file(s).is_some_and(|f| f % 2 == 0)).unwrap();
        }
        let mut expected = expected.iter();
        for module in &mut programs {
            for pipeline in &pipelines {
                let covered_run =
                    pool.run_one(module, &JobSpec { observe: true, ..JobSpec::optimize(pipeline) }).unwrap();
                let what = format!("{granularity:?}{} {pipeline}", if narrowed { " narrowed" } else { "" });
                assert_eq!(&seen(&covered_run), expected.next().unwrap(), "{what}");
                assert!(!covered_run.trace.unwrap().is_empty(), "{what}");
            }
        }
    }
}

/// What a search arms (the sites of the files it ranks) records what arming every site
/// records of those sites, and nothing else; arming again takes every site back.
#[test]
fn a_narrowed_arming_records_what_the_whole_one_records_of_the_kept_sites() {
    let _turn = turn();
    let mut module = csmith();
    let pipeline = "default<O2>";
    ctos::coverage::disarm();
    let coverage = Coverage::arm(Granularity::Blocks);
    let sites = coverage.sites;
    let keep = |s: u32| sites.file(s).is_some_and(|f| f % 2 == 0);
    let kept = |s: &Spectrum| Spectrum::from_elements(s.elements.iter().copied().filter(|&e| keep(e)).collect(), sites);
    let whole: Vec<Spectrum> = (0..2).map(|_| covered(&coverage, &mut module, pipeline).1).collect();
    let mut pool = Pool::new(1, Limits::default(), Vec::new()).unwrap();
    // Each run in a child of its own, as the whole ones: a worker's later jobs run on
    // fresh copies, whose allocation addresses vary a little more from job to job.
    pool.set_worker_jobs(1);
    coverage.narrow_for(&mut pool, keep).unwrap();
    let narrowed: Vec<Spectrum> = (0..2)
        .map(|_| {
            let run = pool.run_one(&mut module, &JobSpec { observe: true, ..JobSpec::optimize(pipeline) }).unwrap();
            coverage.spectrum(&run.trace.unwrap())
        })
        .collect();
    let within = kept(&whole[0]).jaccard(&kept(&whole[1]));
    for n in &narrowed {
        assert!(n.elements.iter().all(|&e| keep(e)), "a site left out was recorded");
        let across = kept(&whole[0]).jaccard(n);
        assert!(across > 0.995, "narrowed vs whole on the kept sites: jaccard {across} (two whole runs: {within})");
    }
    assert!(narrowed[0].len() < whole[0].len(), "{} of {}", narrowed[0].len(), whole[0].len());
    let again = Coverage::arm(Granularity::Blocks);
    let after = covered(&again, &mut module, pipeline).1;
    assert!(after.jaccard(&whole[0]) > 0.995, "armed again: jaccard {}", after.jaccard(&whole[0]));
    ctos::coverage::disarm();
}

/// Nearly every site is a patched jump (no signal); the rest are `int3`s. A patched hit
/// records what an `int3` hit records: spectra of one pipeline under each agree as closely
/// as two runs under one (LLVM's own paths vary a little with allocation addresses).
#[test]
fn patched_sites_record_what_int3_sites_record() {
    let _turn = turn();
    let mut module = csmith();
    for granularity in [Granularity::Functions, Granularity::Blocks] {
        ctos::coverage::disarm();
        let coverage = Coverage::arm(granularity);
        let patched = ctos::coverage::patched_sites();
        println!("{granularity:?}: {patched} of {} sites are patched jumps", coverage.sites.len());
        assert!(patched * 100 > coverage.sites.len() * 85, "{granularity:?}: {patched} of {}", coverage.sites.len());
        let with_patches: Vec<Spectrum> = (0..3).map(|_| covered(&coverage, &mut module, "default<O2>").1).collect();
        ctos::coverage::disarm();
        std::env::set_var("CTOS_COVERAGE_TRAPS", "int3");
        let coverage = Coverage::arm(granularity);
        std::env::remove_var("CTOS_COVERAGE_TRAPS");
        assert_eq!(ctos::coverage::patched_sites(), 0);
        let with_int3: Vec<Spectrum> = (0..3).map(|_| covered(&coverage, &mut module, "default<O2>").1).collect();
        ctos::coverage::disarm();
        let within = with_patches[0].jaccard(&with_patches[1]).min(with_int3[0].jaccard(&with_int3[1]));
        for (a, b) in with_patches.iter().zip(&with_int3) {
            let across = a.jaccard(b);
            assert!(across > 0.995, "{granularity:?}: patched vs int3 jaccard {across} (within one mode {within})");
        }
    }
}

#[test]
fn blocks_cover_more_elements_than_functions_in_the_same_files() {
    let _turn = turn();
    let mut module = csmith();
    let pipeline = "function(sroa,loop-mssa(licm),gvn)";
    let (_, functions) = covered(&Coverage::arm(Granularity::Functions), &mut module, pipeline);
    let blocks_coverage = Coverage::arm(Granularity::Blocks);
    let (_, blocks) = covered(&blocks_coverage, &mut module, pipeline);
    assert!(blocks.len() > 3 * functions.len(), "{} blocks, {} functions", blocks.len(), functions.len());
    assert!(covers(&blocks_coverage, &blocks, "llvm/lib/Transforms/Scalar/LICM.cpp"));
    assert!(blocks.files.len().abs_diff(functions.files.len()) <= 2);
}

/// Runs of one pipeline differ by a few elements: code paths that depend on pointer values
/// (DenseMap probing and growth vary with allocation addresses). Printed with `--nocapture`.
#[test]
fn the_same_pipeline_twice_gives_almost_the_same_spectrum() {
    let _turn = turn();
    let mut module = csmith();
    for granularity in [Granularity::Functions, Granularity::Blocks] {
        let coverage = Coverage::arm(granularity);
        let runs: Vec<Spectrum> = (0..5).map(|_| covered(&coverage, &mut module, "default<O2>").1).collect();
        for (i, other) in runs.iter().enumerate().skip(1) {
            let jaccard = runs[0].jaccard(other);
            let only_first = runs[0].difference(other);
            let only_other = other.difference(&runs[0]);
            let name =
                |site: &u32| coverage.sites.attribution.name_of(coverage.sites.function[*site as usize] as usize);
            println!(
                "{granularity:?} run 0 vs {i}: {} vs {} elements, jaccard {jaccard:.5}; only in 0: {:?}; only in {i}: {:?}",
                runs[0].len(),
                other.len(),
                only_first.iter().map(name).collect::<Vec<_>>(),
                only_other.iter().map(name).collect::<Vec<_>>()
            );
            assert!(jaccard > 0.995, "{granularity:?}: jaccard {jaccard}");
        }
    }
}

/// Observed jobs run in workers: one child runs job after job, each on a fresh copy of the
/// module, with what its last job restored armed again, and executes each program in a
/// child of its own. Each job gives the outcome, IR hash and execution a child per job
/// gives, and nearly its trace; LLVM options a job sets apply to it alone; IR broken after
/// a pass ends the job and not the worker, a crash ends the worker, and the next job gets
/// a new one.
#[test]
fn a_worker_gives_each_job_what_a_child_per_job_gives() {
    let _turn = turn();
    let mut module = csmith();
    let coverage = Coverage::arm(Granularity::Blocks);
    let options: &[&str] = &["-inline-threshold=-1000", "-unroll-threshold=0"];
    let pipelines = [
        ("default<O2>", &[][..]),
        ("default<O2>", options),
        ("function(sroa,loop-mssa(licm),gvn)", &[]),
        ("function(sroa,trigger-verifier-error,instcombine)", &[]),
        ("default<O2>", &[]),
        ("function(sroa,trigger-crash-function)", &[]),
        ("function(instcombine<no-verify-fixpoint>,simplifycfg)", &[]),
        ("default<O2>", &[]),
    ];
    let runs = |worker_jobs: usize, module: &mut IrModule| {
        let mut pool = one_heap(Pool::new(1, Limits::default(), Vec::new()).unwrap());
        pool.set_worker_jobs(worker_jobs);
        pool.set_observer(coverage.observer());
        let runs: Vec<Run> = pipelines
            .iter()
            .map(|(p, options)| {
                let job = JobSpec {
                    observe: true,
                    exec: ExecMode::Always,
                    verify_each: VerifyEach::Changed,
                    llvm_args: options.iter().map(|o| o.to_string()).collect(),
                    ..JobSpec::optimize(*p)
                };
                pool.run_one(module, &job).unwrap()
            })
            .collect();
        (runs, pool.forks())
    };
    let (each, each_forks) = runs(1, &mut module);
    let (worked, worker_forks) = runs(100, &mut module);
    // The crash runs again with each verification where its pass ran (the rerun that
    // tells IR broken earlier from a crash of its own).
    assert_eq!(each_forks, pipelines.len() as u64 + 1);
    assert_eq!(worker_forks, 3, "the broken IR ends a job; the crash, and its rerun, a worker each");
    let spectrum = |r: &Run| coverage.spectrum(r.trace.as_deref().unwrap());
    let within = spectrum(&each[0]).jaccard(&spectrum(&each[4]));
    for (((pipeline, _), a), b) in pipelines.iter().zip(&each).zip(&worked) {
        assert_eq!((a.outcome, a.ir_hash, &a.message), (b.outcome, b.ir_hash, &b.message), "{pipeline}");
        let executed = |r: &Run| r.execution.as_ref().map(|e| (e.status.clone(), e.stdout.clone()));
        assert_eq!(executed(a), executed(b), "{pipeline}");
        let across = spectrum(a).jaccard(&spectrum(b));
        // A fresh copy's types and constants are new to their context: the caches a parent's
        // module had filled (a struct type's "sized" bit) are filled again, a few sites more.
        assert!(across > 0.98, "{pipeline}: child per job vs worker: jaccard {across} (two children: {within})");
    }
    assert_ne!(worked[1].ir_hash, worked[0].ir_hash, "the options change what default<O2> makes");
    assert_eq!(worked[3].outcome, Outcome::InvalidIr);
    assert!(
        worked[3].message.as_deref().is_some_and(|m| m.contains("TriggerVerifierErrorPass")),
        "{:?}",
        worked[3].message
    );
    assert_eq!(worked[5].outcome, Outcome::Crash);
    let checksum = |r: &Run| r.execution.as_ref().is_some_and(|e| e.stdout.contains("checksum = "));
    assert!(
        worked.iter().filter(|r| r.outcome == Outcome::Ok).all(checksum),
        "every optimized program ran in the worker's own child"
    );
}

/// A worker puts a job's LLVM options back to their defaults; when that is not the value
/// the option had before the job (the whole pool set it), the worker ends after the job,
/// and the next job finds the pool's value in a new one.
#[test]
fn a_worker_ends_after_a_job_whose_options_it_cannot_put_back() {
    let _turn = turn();
    let mut module = csmith();
    let coverage = Coverage::arm(Granularity::Functions);
    let jobs =
        [("default<O2>", vec!["-unroll-threshold=0".to_string()]), ("default<O2>", vec![]), ("default<O2>", vec![])];
    let runs = |worker_jobs: usize, module: &mut IrModule| {
        let mut pool = one_heap(Pool::new(1, Limits::default(), vec!["-unroll-threshold=1000".to_string()]).unwrap());
        pool.set_worker_jobs(worker_jobs);
        pool.set_observer(coverage.observer());
        let hashes: Vec<Option<u64>> = jobs
            .iter()
            .map(|(p, options)| {
                let job = JobSpec { observe: true, llvm_args: options.clone(), ..JobSpec::optimize(*p) };
                pool.run_one(module, &job).unwrap().ir_hash
            })
            .collect();
        (hashes, pool.forks())
    };
    let (each, _) = runs(1, &mut module);
    let (worked, forks) = runs(100, &mut module);
    assert_eq!(worked, each);
    assert_ne!(each[0], each[1], "the job's option changes what default<O2> makes");
    assert_eq!(forks, 2, "the first worker ends after the job that set the pool's option");
}

/// Jobs that only optimize, unobserved, share a worker from a program's second job on, each
/// after the worker's first on a fresh copy: every job ends as in a child of its own, with
/// the same IR. LLVM's fatal error and a crash end the worker. A program too large to copy
/// cheaply gets a child per job.
#[test]
fn unobserved_jobs_of_a_small_program_share_a_worker() {
    let _turn = turn();
    let pipelines = ENDINGS;
    let runs = |worker_jobs: usize, module: &mut IrModule, pipelines: &[&str]| {
        let mut pool = one_heap(Pool::new(1, Limits::default(), Vec::new()).unwrap());
        pool.set_worker_jobs(worker_jobs);
        let runs: Vec<Run> = pipelines
            .iter()
            .map(|p| pool.run_one(module, &JobSpec { verify_each: VerifyEach::Off, ..JobSpec::optimize(*p) }).unwrap())
            .collect();
        (runs, pool.forks())
    };
    let mut module = csmith();
    let (each, each_forks) = runs(1, &mut module, &pipelines);
    let (worked, worker_forks) = runs(100, &mut module, &pipelines);
    assert_eq!(each_forks, pipelines.len() as u64);
    assert_eq!(worker_forks, 4, "the first job in a child of its own; the fatal error and the crash end a worker each");
    for ((pipeline, a), b) in pipelines.iter().zip(&each).zip(&worked) {
        assert_eq!((a.outcome, a.ir_hash, &a.message), (b.outcome, b.ir_hash, &b.message), "{pipeline}");
    }
    let outcomes: Vec<&str> = worked.iter().map(|r| r.outcome.as_str()).collect();
    assert_eq!(outcomes, ENDINGS_OUTCOMES);

    // Thousands of functions: its bitcode is over the size a worker copies.
    let mut large = IrModule::from_bytes(many_functions_ir().as_bytes(), "large", &TargetSpec::default()).unwrap();
    let (_, forks) = runs(100, &mut large, &["instcombine", "instcombine", "instcombine"]);
    assert_eq!(forks, 3);
}

/// Under both heaps (the default), a job runs on the strict heap first, optimizing only,
/// and when that shows nothing, on glibc's heap, as plain `opt` runs it, which executes the
/// program and decides. On LLVM 22, GVN's crash on a freed instruction shows on the plain
/// heap and not on the strict one (the poisoned instruction reads as no load, and GVN
/// passes over it); the scalarizer's read past its stack vector shows on the strict heap
/// every time, and on the plain one by the luck of what the stack held.
#[test]
fn a_job_runs_on_the_plain_heap_when_the_strict_heap_shows_nothing_and_each_heap_adds_its_failures() {
    let _turn = turn();
    let load = |file: &str| {
        let bytes = std::fs::read(data(file)).unwrap();
        IrModule::from_bytes(&bytes, file, &TargetSpec::default()).unwrap()
    };
    let (crash, ok) = (Some(Outcome::Crash), Some(Outcome::Ok));
    let cases = [
        ("gvn-invariant-group-219885.ll", "function(gvn)", [crash, crash, ok]),
        ("scalarizer-179880.ll", "function(scalarizer<load-store>,dce)", [crash, None, crash]),
    ];
    // Both are LLVM 22's bugs (LLVM 19's GVN and scalarizer do not have them).
    for (file, pipeline, outcomes) in cases.iter().filter(|_| cfg!(feature = "llvm22")) {
        let mut module = load(file);
        let policies = [HeapPolicy::Both, HeapPolicy::Plain, HeapPolicy::Strict];
        for (policy, expected) in policies.into_iter().zip(outcomes) {
            let mut pool = Pool::new(1, Limits::default(), Vec::new()).unwrap();
            pool.set_worker_jobs(1);
            pool.set_heap_policy(policy);
            let run = pool.run_one(&mut module, &JobSpec::optimize(*pipeline)).unwrap();
            if let Some(expected) = expected {
                assert_eq!(run.outcome, *expected, "{file} on the {} heap: {:?}", policy.as_str(), run.message);
            }
            // Under both, the plain heap's run follows the strict heap's when that ended well.
            let heap = match (policy, pool.forks()) {
                (HeapPolicy::Both, 1) | (HeapPolicy::Strict, _) => Heap::Strict,
                _ => Heap::Plain,
            };
            assert_eq!(run.heap, heap, "{file}, {}", policy.as_str());
        }
    }
    let mut module = csmith();
    let mut pool = Pool::new(1, Limits::default(), Vec::new()).unwrap();
    pool.set_worker_jobs(1);
    let job = JobSpec { exec: ExecMode::Always, ..JobSpec::optimize("function(sroa,gvn)") };
    let run = pool.run_one(&mut module, &job).unwrap();
    assert_eq!((run.outcome, run.heap, pool.forks()), (Outcome::Ok, Heap::Plain, 2));
    assert!(run.execution.is_some_and(|e| e.stdout.contains("checksum")), "the plain run's program ran");
    let run = pool.run_one(&mut module, &JobSpec::optimize("trigger-crash-function")).unwrap();
    assert_eq!((run.outcome, run.heap, pool.forks()), (Outcome::Crash, Heap::Strict, 3), "a failure is not run again");
    // A watched job's strict run is not watched; when it fails, a watched one records the
    // failure (the failing run's record is the one wanted most); when it does not, the
    // plain heap's run records.
    let coverage = Coverage::arm(Granularity::Functions);
    let mut pool = Pool::new(1, Limits::default(), Vec::new()).unwrap();
    pool.set_worker_jobs(1);
    pool.set_observer(coverage.observer());
    let watched = |p: &str| JobSpec { observe: true, ..JobSpec::optimize(p) };
    let crashed = pool.run_one(&mut module, &watched("function(sroa),trigger-crash-function")).unwrap();
    assert_eq!((crashed.outcome, crashed.heap, pool.forks()), (Outcome::Crash, Heap::Strict, 2));
    let crashed = coverage.spectrum(crashed.trace.as_deref().expect("the failing run's record"));
    assert!(covers(&coverage, &crashed, "llvm/lib/Transforms/Scalar/SROA.cpp"));
    let fine = pool.run_one(&mut module, &watched("function(sroa)")).unwrap();
    assert_eq!((fine.outcome, fine.heap, pool.forks()), (Outcome::Ok, Heap::Plain, 4));
    assert!(covers(
        &coverage,
        &coverage.spectrum(fine.trace.as_deref().unwrap()),
        "llvm/lib/Transforms/Scalar/SROA.cpp"
    ));
}

/// Armed for the program's target, a run records that back end's code and the
/// target-independent code; the other back ends stay unarmed, and armed they record
/// nothing of such a run either.
#[test]
fn arming_for_the_programs_target_leaves_only_the_other_back_ends_out() {
    let _turn = turn();
    let ir = "define void @f(ptr %a, ptr %b, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %pa = getelementptr inbounds i32, ptr %a, i64 %i
  %pb = getelementptr inbounds i32, ptr %b, i64 %i
  %x = load i32, ptr %pb, align 4
  %y = mul i32 %x, 3
  store i32 %y, ptr %pa, align 4
  %i.next = add nuw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
";
    let pipeline = "function(sroa,instcombine,loop-vectorize,slp-vectorizer)";
    for (triple, own, other) in
        [("x86_64-unknown-linux-gnu", "X86", "AArch64"), ("aarch64-unknown-linux-gnu", "AArch64", "X86")]
    {
        let target = TargetSpec { triple: Some(triple.into()), ..TargetSpec::default() };
        let mut module = IrModule::from_bytes(ir.as_bytes(), "loop.ll", &target).unwrap();
        let mut pool = Pool::new(1, Limits::default(), Vec::new()).unwrap();
        let mut spectrum_of = |coverage: &Coverage, pool: &mut Pool| {
            let run = pool.run_one(&mut module, &JobSpec { observe: true, ..JobSpec::optimize(pipeline) }).unwrap();
            assert_eq!(run.outcome, Outcome::Ok);
            coverage.spectrum(run.trace.as_deref().unwrap())
        };
        let backends = |coverage: &Coverage, spectrum: &Spectrum| -> Vec<String> {
            let files = &coverage.sites.attribution.files;
            let mut dirs: Vec<String> = spectrum
                .file_ids()
                .filter_map(|f| files[f as usize].strip_prefix("llvm/lib/Target/"))
                .filter_map(|rest| rest.split_once('/').map(|(dir, _)| dir.to_string()))
                .collect();
            dirs.sort();
            dirs.dedup();
            dirs
        };
        let coverage = Coverage::arm_for(&mut pool, Granularity::Functions, Some(triple)).unwrap();
        let ours = spectrum_of(&coverage, &mut pool);
        assert_eq!(backends(&coverage, &ours), [own], "{triple}");
        assert!(covers(&coverage, &ours, "llvm/lib/Transforms/Vectorize/LoopVectorize.cpp"));
        let every = Coverage::arm_for(&mut pool, Granularity::Functions, None).unwrap();
        let all = spectrum_of(&every, &mut pool);
        assert!(!backends(&every, &all).contains(&other.to_string()), "{triple}: {:?}", backends(&every, &all));
    }
}
