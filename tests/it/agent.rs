//! `--opt PATH`: pipelines run inside an external `opt` through the agent give what the
//! in-process engine gives. Each build tests Debian's `opt` of its own LLVM version, so
//! that the two engines run the same LLVM, and the LLVM 23 that scripts/setup.sh installs
//! (newer than either, built with libc++) where no in-process engine can follow.

use std::process::Command;

use serde_json::Value;

use crate::common;

use common::{bug, csmith, many_functions_ir, root, ENDINGS, ENDINGS_OUTCOMES};

const MAJOR: u32 = if cfg!(feature = "llvm19") { 19 } else { 22 };

fn opt() -> String {
    format!("/usr/lib/llvm-{MAJOR}/bin/opt")
}

fn opt23() -> String {
    let path = root().join("llvm-23/bin/opt");
    assert!(path.exists(), "{} is missing: run scripts/setup.sh", path.display());
    path.display().to_string()
}

#[cfg_attr(feature = "llvm19", allow(dead_code))]
fn bug_llvm_args(id: &str) -> Vec<String> {
    let meta: Value = serde_json::from_str(&std::fs::read_to_string(bug(id, "meta.json")).unwrap()).unwrap();
    meta["extra_opt_args"].as_str().unwrap_or("").split_whitespace().map(|a| format!("--llvm-arg={a}")).collect()
}

/// `ctos run --json ARGS`: the begin record and the runs.
fn run_json(args: &[String]) -> (Value, Vec<Value>) {
    let out = Command::new(env!("CARGO_BIN_EXE_ctos")).arg("run").arg("--json").args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let runs: Vec<Value> = lines.iter().filter(|l| l["type"] == "run").cloned().collect();
    // 1 exactly when the compiler failed on a pipeline.
    let failed = runs.iter().any(|r| r["outcome"] != "ok" || r["matches_reference"] == false);
    assert_eq!(out.status.code(), Some(i32::from(failed)), "ctos run {args:?}: {stderr}");
    (lines[0].clone(), runs)
}

fn with_opt(args: &[String], opt: &str) -> Vec<String> {
    args.iter().cloned().chain(["--opt".to_string(), opt.to_string()]).collect()
}

/// `ctos run --json ARGS` in-process and with `--opt` of the same LLVM version.
fn both(args: &[String]) -> [(Value, Vec<Value>); 2] {
    [run_json(args), run_json(&with_opt(args, &opt()))]
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

#[test]
fn the_begin_record_names_the_external_opt_and_its_version() {
    let [(inside, _), (outside, _)] = both(&strings(&[&csmith(), "-p", "sroa"]));
    assert_eq!(inside["opt"], Value::Null);
    let expected = std::fs::canonicalize(opt()).unwrap().display().to_string();
    assert_eq!(outside["opt"], Value::from(expected));
    assert!(outside["llvm_version"].as_str().unwrap().starts_with(&format!("{MAJOR}.")), "{outside}");
}

#[test]
fn a_fatal_error_and_a_good_pipeline_end_alike_inside_and_outside() {
    let args = strings(&[&csmith(), "-p", "function(loop(licm))", "-p", "sroa,licm,gvn"]);
    let [(_, inside), (_, outside)] = both(&args);
    let (begin, newer) = run_json(&with_opt(&args, &opt23()));
    assert!(begin["llvm_version"].as_str().unwrap().starts_with("23."), "{begin}");
    for runs in [&inside, &outside, &newer] {
        assert_eq!(runs[0]["outcome"], "fatal", "{}", runs[0]);
        assert!(runs[0]["message"].as_str().unwrap().contains("LICM requires MemorySSA"), "{}", runs[0]);
        assert_eq!(runs[1]["outcome"], "ok", "{}", runs[1]);
    }
    assert_eq!(inside[1]["instructions"], outside[1]["instructions"]);
}

#[test]
fn a_pipeline_the_external_llvm_rejects_is_an_input_error() {
    // A parameter LLVM does not know: the catalog passes it, the pass builder refuses it.
    for opt in [opt(), opt23()] {
        let out = Command::new(env!("CARGO_BIN_EXE_ctos"))
            .args(["run", &csmith(), "-p", "loop-unroll<no-such-parameter>", "--opt", &opt])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{opt}: {stderr}");
        assert!(stderr.contains("LLVM rejects the pipeline"), "{opt}: {stderr}");
        // One line of error (a first use may also say that it builds the agent).
        assert_eq!(stderr.lines().filter(|l| !l.starts_with("ctos: building the agent")).count(), 1, "{opt}: {stderr}");
    }
}

#[test]
fn the_ir_hash_is_that_of_opt_printing_the_same_pipeline() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("prog.ll");
    let out = Command::new(format!("/usr/lib/llvm-{MAJOR}/bin/clang"))
        .args(["-O0", "-Xclang", "-disable-O0-optnone", "-S", "-emit-llvm", "-w", "-I/usr/include/csmith", "-o"])
        .arg(&program)
        .arg(csmith())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let pipeline = "function(sroa,instcombine<no-verify-fixpoint>,gvn)";
    for opt in [opt(), opt23()] {
        let (_, runs) = run_json(&with_opt(&strings(&[program.to_str().unwrap(), "-p", pipeline]), &opt));
        // opt names the module after the path it is given: the bare name, as the agent does.
        let printed = Command::new(&opt)
            .current_dir(dir.path())
            .args([&format!("-passes={pipeline}"), "-S", "prog.ll", "-o", "-"])
            .output()
            .unwrap();
        assert!(printed.status.success());
        let hash = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&printed.stdout));
        assert_eq!(runs[0]["ir_hash"], Value::from(hash), "{opt}: {}", runs[0]);
    }
}

#[cfg(not(feature = "llvm19"))]
#[test]
fn invalid_ir_from_the_slp_vectorizer_is_invalid_ir_inside_and_outside() {
    let mut args = strings(&[&bug("191714", "repro.ll"), "--seq-file", &bug("191714", "seq.txt")]);
    args.extend(bug_llvm_args("191714"));
    let [(_, inside), (_, outside)] = both(&args);
    assert_eq!(inside[0]["outcome"], "invalid-ir", "{}", inside[0]);
    assert_eq!(outside[0]["outcome"], "invalid-ir", "{}", outside[0]);
    assert_eq!(inside[0]["message"], outside[0]["message"]);
}

#[cfg(not(feature = "llvm19"))]
#[test]
fn wrong_code_from_the_slp_vectorizer_differs_from_the_reference_inside_and_outside() {
    let mut args = strings(&[
        &bug("180456", "repro.ll"),
        "--driver",
        &bug("180456", "driver.ll"),
        "-p",
        std::fs::read_to_string(bug("180456", "seq.txt")).unwrap().trim(),
        "-p",
        "sroa",
        "--exec",
    ]);
    args.extend(bug_llvm_args("180456"));
    let [(_, inside), (_, outside)] = both(&args);
    for runs in [&inside, &outside] {
        assert_eq!(runs[0]["matches_reference"], false, "{}", runs[0]);
        assert_eq!(runs[0]["stdout"], "0 5 2 3\n", "{}", runs[0]);
        assert_eq!(runs[1]["matches_reference"], true, "{}", runs[1]);
    }
}

/// GVN reads an instruction it freed, and plain opt-22 segfaults every time: the agent runs
/// each job on glibc's heap first, as the in-process engine does, so the crash shows inside
/// opt-22 too (ctos-heap.so, preloaded, fills blocks only for the strict heap's runs).
#[cfg(not(feature = "llvm19"))]
#[test]
fn a_crash_on_a_freed_instruction_that_plain_opt_shows_shows_inside_and_outside() {
    let program = common::data("gvn-invariant-group-219885.ll");
    let [(_, inside), (_, outside)] = both(&strings(&[&program, "-p", "gvn"]));
    for runs in [&inside, &outside] {
        assert_eq!((&runs[0]["outcome"], &runs[0]["heap"]), (&"crash".into(), &"plain".into()), "{}", runs[0]);
    }
}

/// The scalarizer reads past a vector on its stack: the agent paints the stack of its
/// children as the in-process engine does, so the read faults inside opt-22 too.
#[cfg(not(feature = "llvm19"))]
#[test]
fn a_pass_reading_past_a_stack_vector_crashes_inside_and_outside() {
    let [(_, inside), (_, outside)] =
        both(&strings(&[&bug("179880", "repro.ll"), "-p", "function(scalarizer<load-store>,dce)"]));
    assert_eq!(inside[0]["outcome"], "crash", "{}", inside[0]);
    assert_eq!(outside[0]["outcome"], "crash", "{}", outside[0]);
}

/// A module of another target, with -mattr: both engines write the features on its
/// functions as opt does, and optimize under that target's cost model.
#[test]
fn a_module_of_another_target_gives_one_ir_inside_and_outside() {
    let program = root().join("tests/data/targets/riscv64.ll").display().to_string();
    let [(_, inside), (_, outside)] = both(&strings(&[&program, "-p", "loop-vectorize", "--llvm-arg=-mattr=+v"]));
    assert_eq!(inside[0]["outcome"], "ok", "{}", inside[0]);
    assert_eq!(inside[0]["ir_hash"], outside[0]["ir_hash"], "{} | {}", inside[0], outside[0]);
}

#[cfg(feature = "llvm19")]
#[test]
fn a_crash_in_loop_simplifycfg_is_a_crash_with_frames_inside_and_outside() {
    let [(_, inside), (_, outside)] = both(&strings(&[&bug("147869", "repro.ll"), "-p", "loop-simplifycfg"]));
    for runs in [&inside, &outside] {
        assert_eq!(runs[0]["outcome"], "crash", "{}", runs[0]);
        assert_eq!(runs[0]["signal"], "SIGSEGV", "{}", runs[0]);
        let frames = runs[0]["crash_frames"].as_array().unwrap();
        // Debian's libLLVM.so exports the pass's run method but not its local helpers.
        assert!(frames.iter().any(|f| f.as_str().unwrap().contains("LoopSimplifyCFG")), "{frames:?}");
    }
}

#[test]
fn an_opt_that_is_not_one_is_an_input_error() {
    for (path, says) in [("/no/such/opt", "no such file"), ("/bin/true", "not an LLVM opt")] {
        let out = Command::new(env!("CARGO_BIN_EXE_ctos"))
            .args(["run", &csmith(), "-p", "sroa", "--opt", path])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
}

#[test]
fn the_passes_are_those_of_the_external_llvm() {
    // `drop-type-tests` is new in LLVM 23: known through --opt, unknown to the linked LLVM.
    let (_, runs) = run_json(&with_opt(&strings(&[&csmith(), "-p", "drop-type-tests"]), &opt23()));
    assert_eq!(runs[0]["outcome"], "ok", "{}", runs[0]);
    let out =
        Command::new(env!("CARGO_BIN_EXE_ctos")).args(["run", &csmith(), "-p", "drop-type-tests"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("unknown pass 'drop-type-tests'"), "{stderr}");
    let listed = Command::new(env!("CARGO_BIN_EXE_ctos")).args(["passes", "--opt", &opt23()]).output().unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).lines().any(|l| l.starts_with("drop-type-tests ")));
}

#[cfg(not(feature = "llvm19"))]
#[test]
fn a_campaign_against_an_external_opt_writes_a_bug_folder_that_names_it() {
    let work = tempfile::tempdir().unwrap();
    let programs = work.path().join("programs");
    std::fs::create_dir(&programs).unwrap();
    std::fs::copy(bug("191714", "repro.ll"), programs.join("slp.ll")).unwrap();
    let sequences = work.path().join("sequences.txt");
    std::fs::write(&sequences, "forceattrs,lower-expect,slp-vectorizer,globaldce\nsroa,gvn\n").unwrap();
    let out = work.path().join("campaign");
    let status = Command::new(env!("CARGO_BIN_EXE_ctos"))
        .args(["fuzz", "--out", out.to_str().unwrap(), "--programs", programs.to_str().unwrap()])
        .args(["--sequences", sequences.to_str().unwrap(), "--iterations", "1", "-j", "2", "--opt", &opt()])
        .args(["--reduce-ir-time", "0", "--localize-time", "0"])
        .args(bug_llvm_args("191714"))
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let folders: Vec<std::path::PathBuf> =
        std::fs::read_dir(out.join("bugs")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(folders.len(), 1, "{folders:?}");
    let readme = std::fs::read_to_string(folders[0].join("README.md")).unwrap();
    let canonical = std::fs::canonicalize(opt()).unwrap().display().to_string();
    // The README's opt command, run as written, shows the bug in that opt.
    let command = readme.lines().find(|l| l.starts_with(&canonical)).unwrap_or_else(|| panic!("{readme}"));
    let shown = Command::new("sh").arg("-c").arg(command).current_dir(&folders[0]).output().unwrap();
    let stderr = String::from_utf8_lossy(&shown.stderr);
    assert!(stderr.contains("Instruction does not dominate all uses!"), "{command}: {stderr}");
    assert!(readme.contains(&format!("--opt {canonical}")), "{readme}");
}

/// The files `ctos run --coverage functions --json ARGS` names for its first run.
fn covered_files(args: &[String]) -> (Value, Vec<String>) {
    let mut args = args.to_vec();
    args.extend(strings(&["--coverage", "functions"]));
    let (_, runs) = run_json(&args);
    let coverage = runs[0]["coverage"].clone();
    let files = coverage["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap().to_string()).collect();
    (runs[0].clone(), files)
}

#[test]
fn coverage_of_licm_inside_llvm_23_names_licm_cpp_from_its_dwarf() {
    let licm = "llvm/lib/Transforms/Scalar/LICM.cpp";
    let (run, files) = covered_files(&strings(&[&csmith(), "-p", "function(loop-mssa(licm))", "--opt", &opt23()]));
    assert!(files.iter().any(|f| f == licm), "{run}");
    assert!(run["coverage"]["elements"].as_u64().unwrap() > 100, "{run}");
    let (run, files) = covered_files(&strings(&[&csmith(), "-p", "function(instcombine)", "--opt", &opt23()]));
    assert!(!files.iter().any(|f| f == licm), "{run}");
    assert!(files.iter().any(|f| f.contains("InstCombine")), "{run}");
}

/// Debian's libLLVM.so has only `.dynsym`: the linked LLVM's symbol table names the files.
#[test]
fn coverage_inside_debians_opt_names_the_files_the_in_process_engine_names() {
    let args = strings(&[&csmith(), "-p", "function(sroa)"]);
    let (_, inside) = covered_files(&args);
    let (run, outside) = covered_files(&with_opt(&args, &opt()));
    assert!(outside.iter().any(|f| f == "llvm/lib/Transforms/Scalar/SROA.cpp"), "{run}");
    let shared = outside.iter().filter(|f| inside.contains(f)).count();
    assert!(shared * 10 >= outside.len() * 9, "inside {inside:?}\noutside {outside:?}");
}

/// The record is shared memory: a child that crashes leaves what it covered.
#[test]
fn a_crashing_child_inside_opt_19_leaves_its_coverage() {
    let args = strings(&[&bug("147869", "repro.ll"), "-p", "loop-simplifycfg", "--opt", "/usr/lib/llvm-19/bin/opt"]);
    let mut with_coverage = args.clone();
    with_coverage.extend(strings(&["--coverage", "blocks"]));
    let (_, runs) = run_json(&with_coverage);
    assert_eq!(runs[0]["outcome"], "crash", "{}", runs[0]);
    assert!(runs[0]["coverage"]["elements"].as_u64().unwrap() > 50, "{}", runs[0]);
}

#[cfg(not(feature = "llvm19"))]
#[test]
fn locseq_isolate_inside_opt_22_ranks_the_slp_vectorizer_in_the_top_3() {
    let mut args = strings(&["isolate", &bug("191714", "seq.txt"), &bug("191714", "repro.ll"), "--opt", &opt()]);
    args.extend(bug_llvm_args("191714"));
    // A count of evaluations, not a time: the same evidence on a loaded machine.
    args.extend(strings(&["--max-evals", "150", "--time", "600", "--json"]));
    let out = Command::new(env!("CARGO_BIN_EXE_locseq")).args(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(lines[0]["opt"].as_str().unwrap().ends_with("opt"), "{}", lines[0]);
    let rank = lines
        .iter()
        .find(|l| l["type"] == "file" && l["path"] == "llvm/lib/Transforms/Vectorize/SLPVectorizer.cpp")
        .map(|l| l["rank"].as_u64().unwrap());
    assert!(rank.is_some_and(|r| r <= 3), "rank {rank:?}");
}

/// A bug folder from a campaign on an external `opt` names that LLVM: without `--opt`, it
/// is the LLVM the folder runs on, and the one the error's version note names.
#[cfg(not(feature = "llvm19"))]
#[test]
fn a_bug_folder_runs_on_the_opt_its_campaign_tested() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::copy(bug("191714", "repro.ll"), folder.path().join("program.ll")).unwrap();
    std::fs::write(folder.path().join("reduced.txt"), "sroa\n").unwrap();
    let outcome = serde_json::json!({
        "kind": "crash", "signature": "a crash the folder's LLVM 18 had", "program_file": "program.ll",
        "llvm_args": [], "opt": "/usr/lib/llvm-19/bin/opt", "llvm_version": "18.1.8",
    });
    std::fs::write(folder.path().join("outcome.json"), outcome.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_locseq"))
        .args(["isolate", folder.path().to_str().unwrap(), "--max-evals", "5"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("does not reproduce"), "{stderr}");
    assert!(stderr.contains("fires on LLVM 18, this is LLVM 19"), "{stderr}");
}

/// A worker inside `opt` runs each job after its first on a fresh copy of the program: every
/// job ends as in a child of its own, with the same IR, and the batch takes fewer children.
/// Broken IR found after the pipeline ends only the job; a fatal error or a crash ends the
/// worker, and the next job finds a new one.
#[test]
fn a_worker_inside_opt_gives_each_job_what_a_child_per_job_gives() {
    use ctos::llvm::{CFrontend, IrModule, TargetSpec, VerifyEach};
    use ctos::sandbox::agent::{AgentProgram, ExternalOpt};
    use ctos::sandbox::{JobSpec, Limits, Pool};

    let dir = tempfile::tempdir().unwrap();
    let bytes = CFrontend::default().compile(std::path::Path::new(&csmith())).unwrap();
    let program = dir.path().join("prog.bc");
    std::fs::write(&program, &bytes).unwrap();
    let mut module = IrModule::from_bytes(&bytes, "prog", &TargetSpec::default()).unwrap();
    let pipelines = ENDINGS;
    for opt in [opt(), opt23()] {
        let external = ExternalOpt::locate(std::path::Path::new(&opt)).unwrap();
        let agent_program = AgentProgram { ir: program.clone(), ..Default::default() };
        let mut runs = |worker_jobs: usize| {
            let mut pool =
                common::one_heap(Pool::external(1, Limits::default(), Vec::new(), &external, &agent_program).unwrap());
            pool.set_worker_jobs(worker_jobs);
            let runs: Vec<_> = pipelines
                .iter()
                .map(|p| {
                    let job = JobSpec { verify_each: VerifyEach::Off, ..JobSpec::optimize(*p) };
                    pool.run_one(&mut module, &job).unwrap()
                })
                .collect();
            (runs, pool.forks())
        };
        let (each, each_forks) = runs(1);
        let (worked, worker_forks) = runs(100);
        assert_eq!(each_forks, pipelines.len() as u64, "{opt}");
        assert_eq!(worker_forks, 3, "{opt}: the fatal error and the crash end a worker each");
        for ((pipeline, a), b) in pipelines.iter().zip(&each).zip(&worked) {
            assert_eq!((a.outcome, a.ir_hash, &a.message), (b.outcome, b.ir_hash, &b.message), "{opt}: {pipeline}");
        }
        let outcomes: Vec<&str> = worked.iter().map(|r| r.outcome.as_str()).collect();
        assert_eq!(outcomes, ENDINGS_OUTCOMES, "{opt}");
        assert_ne!(worked[0].ir_hash, worked[1].ir_hash, "{opt}");
        assert_eq!(worked[3].ir_hash, worked[6].ir_hash, "{opt}: default<O2> on the first copy and on a later one");

        // Thousands of functions: the agent finds its bitcode over the size a worker copies.
        let large = dir.path().join("large.ll");
        let text = many_functions_ir();
        std::fs::write(&large, &text).unwrap();
        let mut large_module = IrModule::from_bytes(text.as_bytes(), "large", &TargetSpec::default()).unwrap();
        let large_program = AgentProgram { ir: large, ..Default::default() };
        let mut pool =
            common::one_heap(Pool::external(1, Limits::default(), Vec::new(), &external, &large_program).unwrap());
        for _ in 0..3 {
            let run = pool.run_one(&mut large_module, &JobSpec::optimize("instcombine")).unwrap();
            assert_eq!(run.outcome.as_str(), "ok", "{opt}: {:?}", run.message);
        }
        assert_eq!(pool.forks(), 3, "{opt}: a child per job");
    }
}
