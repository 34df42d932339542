//! The engine against the real LLVM, through the `ctos run` front door.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::common;

use common::{bug, csmith};

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn ctos(args: &[&str]) -> Out {
    let out = Command::new(env!("CARGO_BIN_EXE_ctos")).args(args).output().expect("run ctos");
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The records of `ctos run --json …`, by type.
struct Records {
    reference: Option<Value>,
    runs: Vec<Value>,
}

fn run_records(args: &[&str]) -> Records {
    let mut all = vec!["run", "--json"];
    all.extend_from_slice(args);
    let out = ctos(&all);
    assert!(matches!(out.code, 0 | 1), "ctos {all:?} failed: {}", out.stderr);
    let lines: Vec<Value> = out.stdout.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    assert_eq!(lines.first().map(|l| &l["type"]), Some(&Value::from("begin")), "{}", out.stdout);
    assert_eq!(lines.last().map(|l| &l["type"]), Some(&Value::from("summary")), "{}", out.stdout);
    let of = |kind: &str| lines.iter().filter(|l| l["type"] == kind).cloned().collect::<Vec<_>>();
    let runs = of("run");
    for (i, l) in runs.iter().enumerate() {
        assert_eq!(l["index"], i, "input order");
    }
    assert_eq!(lines.last().unwrap()["pipelines"], runs.len());
    // 1 exactly when the compiler failed on a pipeline (lit's `not` and scripts read it).
    let failed = runs.iter().any(|r| r["outcome"] != "ok" || r["matches_reference"] == false);
    assert_eq!(out.code, i32::from(failed), "ctos {all:?}: {}", out.stdout);
    Records { reference: of("reference").pop(), runs }
}

/// `ctos run --json …`: the `run` records, one per pipeline, in input order.
fn run_json(args: &[&str]) -> Vec<Value> {
    run_records(args).runs
}

fn write_temp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ctos-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn an_aborting_pipeline_is_fatal_and_the_next_one_still_runs() {
    let lines = run_json(&[&csmith(), "-p", "function(loop(licm))", "-p", "sroa,licm,gvn"]);
    assert_eq!(lines[0]["outcome"], "fatal");
    assert!(lines[0]["message"].as_str().unwrap().contains("LICM requires MemorySSA"), "{}", lines[0]);
    assert_eq!(lines[1]["outcome"], "ok");
    assert_eq!(lines[1]["pipeline"], "function(sroa,loop-mssa(licm),gvn)");
    assert!(lines[1]["ir_hash"].as_str().unwrap().len() == 16);
}

#[test]
fn a_pipeline_over_its_time_limit_is_a_timeout() {
    // default<O3> on this program takes tens of milliseconds; 5 ms cannot suffice.
    let lines = run_json(&[&csmith(), "-p", "default<O3>", "--opt-timeout", "0.005"]);
    assert_eq!(lines[0]["outcome"], "timeout", "{}", lines[0]);
}

/// With coverage, the runs are a worker's jobs, and each program runs in a child of the
/// worker's: its end is reported as a child per job's would be.
const WITH_AND_WITHOUT_WORKERS: [&[&str]; 2] = [&[], &["--coverage", "functions"]];

/// A hanging optimizer is asked for its stack before it is killed: where it loops. (A
/// child still loading the program at its deadline is killed without asking: the limit
/// leaves a loaded machine time to reach the optimizer.)
#[test]
fn a_hang_reports_where_the_optimizer_was_when_stopped() {
    let program = common::root().join("tests/data/unroll-hang.ll");
    let lines = run_json(&[
        program.to_str().unwrap(),
        "-p",
        "loop-unroll",
        "--llvm-arg=-unroll-threshold=1000000000",
        "--llvm-arg=-unroll-full-max-count=100000000",
        "--opt-timeout",
        "5",
    ]);
    let l = &lines[0];
    assert_eq!(l["outcome"], "timeout", "{l}");
    assert_eq!(l["signal"], Value::Null, "a hang has no signal of its own: {l}");
    let frames: Vec<&str> =
        l["crash_frames"].as_array().expect("crash frames").iter().map(|f| f.as_str().unwrap()).collect();
    assert!(frames.iter().any(|f| f.contains("LoopUnroll") || f.contains("UnrollLoop")), "{frames:?}");
}

#[test]
fn a_program_killed_by_a_signal_reports_the_signal_not_an_exit_code() {
    let c = write_temp("fpe.c", "int main(void) { volatile int z = 0; return 7 / z; }\n");
    for extra in WITH_AND_WITHOUT_WORKERS {
        let r = run_records(&[&[c.to_str().unwrap(), "-p", "sroa", "-p", "instcombine", "--exec"], extra].concat());
        for l in [r.reference.as_ref().expect("a reference record"), &r.runs[0], &r.runs[1]] {
            assert_eq!(l["exec_status"], "signal", "{extra:?} {l}");
            assert_eq!(l["signal"], "SIGFPE", "{extra:?} {l}");
            assert_eq!(l["exit_code"], Value::Null, "{extra:?} {l}");
        }
    }
}

/// SIGTERM is no crash the child's handlers report: only how the process ended tells.
#[test]
fn a_program_ended_by_a_signal_no_handler_reports_still_reports_it() {
    let c = write_temp("term.c", "#include <signal.h>\nint main(void) { raise(SIGTERM); return 3; }\n");
    for extra in WITH_AND_WITHOUT_WORKERS {
        let r = run_records(&[&[c.to_str().unwrap(), "-p", "sroa", "--exec"], extra].concat());
        assert_eq!(r.runs[0]["exec_status"], "signal", "{extra:?} {}", r.runs[0]);
        assert_eq!(r.runs[0]["signal"], "SIGTERM", "{extra:?} {}", r.runs[0]);
    }
}

#[test]
fn a_program_that_never_ends_is_an_execution_timeout() {
    let c = write_temp("spin.c", "int main(void) { volatile int x = 1; while (x) {} return 0; }\n");
    for extra in WITH_AND_WITHOUT_WORKERS {
        let args = [&[c.to_str().unwrap(), "-p", "sroa", "-p", "gvn", "--exec", "--exec-timeout", "0.5"], extra];
        let lines = run_json(&args.concat());
        for l in &lines[..2] {
            assert_eq!(l["outcome"], "ok", "{extra:?} {l}");
            assert_eq!(l["exec_status"], "timeout", "{extra:?} {l}");
        }
    }
}

#[test]
fn a_child_over_its_memory_cap_is_oom() {
    // Fully unrolling three million iterations needs gigabytes; the cap is 256 MiB.
    let c = write_temp(
        "unroll.c",
        "int a[64];\nint main(void) { for (int i = 0; i < 3000000; i++) a[i & 63] += i; return a[5] & 1; }\n",
    );
    let lines = run_json(&[
        c.to_str().unwrap(),
        "-p",
        "sroa,loop-unroll<full-unroll-max=100000000>",
        "--llvm-arg=-unroll-threshold=2000000000",
        "--llvm-arg=-unroll-max-iteration-count-to-analyze=0",
        "--memory",
        "256",
    ]);
    assert_eq!(lines[0]["outcome"], "oom", "{}", lines[0]);
}

#[test]
fn a_crash_reports_its_signal_and_llvm_frames() {
    let lines = run_json(&[&csmith(), "-p", "trigger-crash-function", "-p", "sroa"]);
    assert_eq!(lines[0]["outcome"], "crash");
    assert_eq!(lines[0]["signal"], "SIGABRT");
    let frames = lines[0]["crash_frames"].as_array().unwrap();
    assert!(frames.iter().any(|f| f.as_str().unwrap().contains("TriggerCrashFunctionPass")), "{frames:?}");
    assert_eq!(lines[1]["outcome"], "ok");
}

#[test]
fn a_pass_that_breaks_the_ir_is_invalid_ir_with_and_without_verify_each() {
    for extra in [None, Some("--verify-each"), Some("--verify-each=every")] {
        let mut args = vec![csmith(), "-p".into(), "trigger-verifier-error".into()];
        args.extend(extra.map(String::from));
        let lines = run_json(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(lines[0]["outcome"], "invalid-ir", "{}", lines[0]);
    }
}

#[test]
fn legacy_flags_and_their_new_pm_rendering_give_the_same_ir_hash() {
    let lines = run_json(&[
        &csmith(),
        "-p",
        "-sroa -loop-rotate -licm -loop-unswitch -gvn -instcombine",
        "-p",
        "function(sroa,loop(loop-rotate),loop-mssa(licm),loop(simple-loop-unswitch<nontrivial>),gvn,instcombine<no-verify-fixpoint>)",
        "-p",
        "sroa",
    ]);
    assert_eq!(lines[0]["pipeline"], lines[1]["pipeline"]);
    assert_eq!(lines[0]["ir_hash"], lines[1]["ir_hash"]);
    assert_ne!(lines[0]["ir_hash"], lines[2]["ir_hash"]);
}

#[test]
fn optimized_ir_is_what_opt_produces_for_the_same_pipeline() {
    let dir = std::env::temp_dir().join(format!("ctos-emit-{}", std::process::id()));
    let bc = write_temp("csmith.bc", "");
    let major = ctos::llvm::version().0;
    let clang = format!("/usr/lib/llvm-{major}/bin/clang");
    let status = Command::new(&clang)
        .args([
            "-O0",
            "-Xclang",
            "-disable-O0-optnone",
            "-emit-llvm",
            "-c",
            "-w",
            "-I/usr/include/csmith",
            &csmith(),
            "-o",
        ])
        .arg(&bc)
        .status()
        .unwrap();
    assert!(status.success());
    let pipeline = "default<O2>";
    let lines = run_json(&[bc.to_str().unwrap(), "-p", pipeline, "--emit-ir", dir.to_str().unwrap()]);
    assert_eq!(lines[0]["outcome"], "ok");
    let ours = std::fs::read_to_string(dir.join("0000.ll")).unwrap();
    let opt = Command::new(format!("/usr/lib/llvm-{major}/bin/opt"))
        .args([&format!("-passes={pipeline}"), "-S", "-o", "-"])
        .arg(&bc)
        .output()
        .unwrap();
    let theirs = String::from_utf8(opt.stdout).unwrap();
    let body = |s: &str| s.lines().filter(|l| !l.starts_with("; ModuleID")).collect::<Vec<_>>().join("\n");
    assert!(body(&ours) == body(&theirs), "ctos and opt-{major} disagree on {pipeline}");
}

#[test]
fn identical_optimized_modules_share_one_execution_and_all_report_it() {
    let r = run_records(&[&csmith(), "-p", "sroa", "-p", "sroa", "-p", "default<O1>", "--exec", "-j", "2"]);
    let reference = r.reference.expect("a reference record");
    let lines = r.runs;
    for l in &lines {
        assert_eq!(l["exec_status"], "exited", "{l}");
        assert_eq!(l["stdout"], reference["stdout"]);
        assert_eq!(l["matches_reference"], true);
        assert!(l["stdout"].as_str().unwrap().starts_with("checksum = "));
    }
    assert_eq!(lines[0]["ir_hash"], lines[1]["ir_hash"]);
}

#[test]
fn parallel_and_serial_runs_agree() {
    let file = write_temp(
        "seqs.txt",
        "# a few pipelines\nsroa\ndefault<O2>\nfunction(loop(licm))\n-gvn -licm\ntrigger-crash-module\n",
    );
    let serial = run_json(&[&csmith(), "--seq-file", file.to_str().unwrap(), "-j", "1"]);
    let parallel = run_json(&[&csmith(), "--seq-file", file.to_str().unwrap(), "-j", "2"]);
    assert_eq!(serial.len(), 5);
    for (a, b) in serial.iter().zip(&parallel) {
        assert_eq!((&a["outcome"], &a["ir_hash"]), (&b["outcome"], &b["ir_hash"]));
    }
}

#[test]
fn the_table_is_readable_without_json() {
    let out = ctos(&["run", &csmith(), "-p", "sroa", "-p", "function(loop(licm))"]);
    // The second pipeline breaks LICM's precondition: the compiler failed, the tool did not.
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stdout.lines().next().unwrap().contains("outcome"));
    assert!(out.stdout.contains("function(sroa)") && out.stdout.contains("LICM requires MemorySSA"));
}

/// The reader of our output closed its end before we wrote (`ctos passes | head -0`).
#[test]
fn a_closed_output_pipe_ends_quietly() {
    for args in [vec!["passes".to_string()], vec!["run".into(), csmith(), "-p".into(), "sroa".into()]] {
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_ctos")).args(&args).stdout(writer).output().expect("run ctos");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    }
}

#[test]
fn coverage_lines_list_llvm_source_files_with_hits() {
    for granularity in ["functions", "blocks"] {
        let lines = run_json(&[&csmith(), "-p", "sroa,licm,gvn", "-p", "sroa", "--coverage", granularity]);
        let hits = |l: &Value, path: &str| {
            l["coverage"]["files"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["path"] == path)
                .map(|f| f["hits"].as_u64().unwrap())
        };
        assert_eq!(lines[0]["coverage"]["granularity"], granularity);
        assert!(hits(&lines[0], "llvm/lib/Transforms/Scalar/LICM.cpp").unwrap() > 0, "{granularity}");
        assert_eq!(hits(&lines[1], "llvm/lib/Transforms/Scalar/LICM.cpp"), None);
        assert!(
            lines[0]["coverage"]["elements"].as_u64().unwrap() > lines[1]["coverage"]["elements"].as_u64().unwrap()
        );
    }
}

#[test]
fn an_unknown_coverage_granularity_is_a_clear_error() {
    let out = ctos(&["run", &csmith(), "-p", "sroa", "--coverage", "lines"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("invalid value 'lines'") && out.stderr.contains("functions"), "{}", out.stderr);
}

/// `--exec` on a module without `main` generates a driver and compares each call: irce
/// leaves `udiv 42, %n` in the entry block of tests/data/irce-udiv.ll, which divides by
/// zero for n = 0 though nothing uses it (the machine does not trap: the backend drops it);
/// gvn alone changes nothing the calls see.
#[test]
fn exec_on_a_module_without_main_compares_each_call_of_a_generated_driver() {
    let program = common::data("irce-udiv.ll");
    let r = run_records(&[&program, "-p", "function(irce)", "-p", "gvn", "--exec"]);
    let (irce, gvn) = (&r.runs[0], &r.runs[1]);
    assert_eq!((&irce["outcome"], &irce["matches_reference"]), (&"ok".into(), &false.into()), "{irce}");
    let differ = irce["calls"]["differ"].as_array().unwrap();
    assert_eq!(differ.len(), 1, "{irce}");
    assert!(differ[0].as_str().unwrap().starts_with("call 0 `@f(i64 0)`: a division by zero (at @f: `"), "{irce}");
    assert!(differ[0].as_str().unwrap().ends_with("= udiv i64 42, %n`); unoptimized: `-> 1 mem=8e268b8f4574a325`"));
    assert!(gvn["calls"]["agree"].as_u64().unwrap() >= 5 && gvn["calls"]["differ"] == serde_json::json!([]), "{gvn}");
    let table = ctos(&["run", &program, "-p", "function(irce)", "--exec"]);
    assert!(table.stdout.contains("DIFF") && table.stdout.contains("calls: 8 agree, 1 differs"), "{}", table.stdout);
    assert!(table.stderr.contains("defines no main: a generated driver makes 9 calls"), "{}", table.stderr);
    let none = write_temp("no-callable.ll", "define { i32, i32 } @f() {\n  ret { i32, i32 } zeroinitializer\n}\n");
    let out = ctos(&["run", none.to_str().unwrap(), "-p", "sroa", "--exec"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("no function a driver can call (@f: "), "{}", out.stderr);
}

/// Every target Debian's `opt` has is linked and initialized: a module for another target
/// is optimized under that target's cost models, with `-mattr=` written on its functions as
/// `opt` writes it, and comes out as `opt`'s does (and unlike the same module for x86).
#[test]
fn modules_for_other_targets_give_the_ir_opt_gives() {
    let major = ctos::llvm::version().0;
    let cases = [
        ("riscv64.ll", "loop-vectorize", Some("-mattr=+v")),
        ("aarch64.ll", "loop-vectorize", None),
        ("nvptx64.ll", "infer-address-spaces", None),
    ];
    let body = |s: &str| s.lines().filter(|l| !l.starts_with("; ModuleID")).collect::<Vec<_>>().join("\n");
    for (file, pipeline, flag) in cases {
        let program = common::root().join("tests/data/targets").join(file);
        let opt_ir = |extra: &[&str]| {
            let out = Command::new(format!("/usr/lib/llvm-{major}/bin/opt"))
                .args(flag)
                .args(extra)
                .arg(format!("-passes={pipeline}"))
                .args(["-S", "-o", "-"])
                .arg(&program)
                .output()
                .unwrap();
            assert!(out.status.success(), "opt-{major} on {file}: {}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8(out.stdout).unwrap()
        };
        let dir = std::env::temp_dir().join(format!("ctos-targets-{}-{file}", std::process::id()));
        let mut args = vec![program.to_str().unwrap(), "-p", pipeline, "--emit-ir", dir.to_str().unwrap()];
        let arg = flag.map(|f| format!("--llvm-arg={f}"));
        args.extend(arg.as_deref());
        let lines = run_json(&args);
        assert_eq!(lines[0]["outcome"], "ok", "{file}: {}", lines[0]);
        let ours = std::fs::read_to_string(dir.join("0000.ll")).unwrap();
        assert!(body(&ours) == body(&opt_ir(&[])), "ctos and opt-{major} disagree on {file}:\n{ours}");
        let for_x86 = opt_ir(&["-mtriple=x86_64-unknown-linux-gnu"]);
        assert!(body(&ours) != body(&for_x86), "{pipeline} does the same to {file} for x86: the test shows nothing");
    }
}

#[test]
fn programs_of_another_target_are_not_executed_here() {
    let program = write_temp(
        "riscv-main.ll",
        "target triple = \"riscv64-unknown-linux-gnu\"\ndefine i32 @main() {\n  ret i32 3\n}\n",
    );
    let out = ctos(&["run", program.to_str().unwrap(), "-p", "instcombine", "--exec"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("on this host") && out.stderr.contains("riscv64"), "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    let lines = run_json(&[program.to_str().unwrap(), "-p", "instcombine"]);
    assert_eq!(lines[0]["outcome"], "ok");
}

#[cfg(feature = "llvm22")]
mod llvm22_bugs {
    use super::*;

    #[test]
    fn bug_191714_slp_vectorizer_breaks_the_ir() {
        let lines = run_json(&[&bug("191714", "repro.ll"), "-p", "slp-vectorizer", "--llvm-arg=-slp-threshold=-99999"]);
        assert_eq!(lines[0]["outcome"], "invalid-ir");
        assert!(lines[0]["message"].as_str().unwrap().contains("Instruction does not dominate all uses"));
        let without_flag = run_json(&[&bug("191714", "repro.ll"), "-p", "slp-vectorizer"]);
        assert_eq!(without_flag[0]["outcome"], "ok");
    }

    #[test]
    fn verifying_after_changing_passes_catches_what_verifying_after_every_pass_does() {
        let mut messages = Vec::new();
        for mode in ["--verify-each=changed", "--verify-each=every"] {
            let lines = run_json(&[
                &bug("191714", "repro.ll"),
                "-p",
                "lower-expect,slp-vectorizer,instcombine,simplifycfg",
                "--llvm-arg=-slp-threshold=-99999",
                mode,
            ]);
            assert_eq!(lines[0]["outcome"], "invalid-ir", "{mode}: {}", lines[0]);
            messages.push(lines[0]["message"].as_str().unwrap().to_string());
        }
        assert_eq!(messages[0], messages[1]);
        assert!(messages[0].contains("after pass \"SLPVectorizerPass\""), "{}", messages[0]);
    }

    /// The scalarizer reads 800 bytes past a vector on the stack and uses what it finds
    /// as a value; plain opt-22 aborts or not by the luck of its stack. On the strict heap a
    /// child paints its stack with poison before the passes run, so the read value faults
    /// every time; the table says when only the strict heap showed it.
    #[test]
    fn bug_179880_scalarizer_reading_past_a_stack_vector_crashes_every_time() {
        let program = common::root().join("tests/data/scalarizer-179880.ll");
        let args = [program.to_str().unwrap(), "-p", "function(scalarizer<load-store>,dce)"];
        for _ in 0..3 {
            let lines = run_json(&args);
            assert_eq!(lines[0]["outcome"], "crash", "{}", lines[0]);
            let table = ctos(&[&["run"][..], &args].concat());
            let said = table.stdout.contains("on ctos's strict heap (poison in freed and fresh memory)");
            assert_eq!(said, lines[0]["heap"] == "strict", "{} | {}", lines[0], table.stdout);
        }
    }

    /// GVN reads an instruction it freed, and plain opt-22 segfaults on it every time. The
    /// pipeline runs on glibc's heap first, as opt runs it, so the crash shows, though the
    /// strict heap alone hides it (the poisoned instruction reads as no load); the strict
    /// heap's own failures come on top (`CTOS_HEAP` chooses one heap, to compare).
    #[test]
    fn bug_219885_gvn_reading_a_freed_instruction_crashes_as_in_plain_opt() {
        let program = common::root().join("tests/data/gvn-invariant-group-219885.ll");
        let run = |heap: Option<&str>| {
            let mut c = Command::new(env!("CARGO_BIN_EXE_ctos"));
            c.args(["run", "--json", "-p", "gvn"]).arg(&program);
            if let Some(heap) = heap {
                c.env("CTOS_HEAP", heap);
            }
            let out = c.output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).find(|l| l["type"] == "run").unwrap()
        };
        for _ in 0..3 {
            let plain_first = run(None);
            assert_eq!(
                (&plain_first["outcome"], &plain_first["heap"]),
                (&"crash".into(), &"plain".into()),
                "{plain_first}"
            );
        }
        assert_eq!(run(Some("strict"))["outcome"], "ok");
        let bad = Command::new(env!("CARGO_BIN_EXE_ctos"))
            .args(["run", "-p", "gvn"])
            .arg(&program)
            .env("CTOS_HEAP", "poisoned")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&bad.stderr);
        assert_eq!(bad.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("CTOS_HEAP=poisoned: the heap is plain, strict or both"), "{stderr}");
    }

    #[test]
    fn bug_180456_slp_vectorizer_miscompiles() {
        let r = run_records(&[
            &bug("180456", "repro.ll"),
            "--driver",
            &bug("180456", "driver.ll"),
            "-p",
            "slp-vectorizer",
            "--llvm-arg=-slp-threshold=-50",
            "--exec",
        ]);
        let (l, reference) = (&r.runs[0], r.reference.unwrap());
        assert_eq!(l["outcome"], "ok");
        assert_eq!(reference["stdout"], "7 5 2 3\n");
        assert_ne!(l["stdout"], reference["stdout"], "{l}");
        assert_eq!(l["matches_reference"], false);
    }
}

#[cfg(feature = "llvm19")]
mod llvm19_bugs {
    use super::*;

    #[test]
    fn bug_147869_loop_simplifycfg_segfaults() {
        let lines = run_json(&[&bug("147869", "repro.ll"), "-p", "loop-simplifycfg"]);
        let l = &lines[0];
        assert_eq!(l["outcome"], "crash", "{l}");
        assert_eq!(l["signal"], "SIGSEGV");
        let frames = l["crash_frames"].as_array().unwrap();
        assert!(frames.iter().any(|f| f.as_str().unwrap().contains("LoopSimplifyCFG")), "{frames:?}");
    }

    #[test]
    fn bug_121584_instcombine_miscompiles() {
        let r = run_records(&[
            &bug("121584", "repro.ll"),
            "--driver",
            &bug("121584", "driver.ll"),
            "-p",
            "instcombine",
            "--exec",
        ]);
        let (l, reference) = (&r.runs[0], r.reference.unwrap());
        assert_eq!(reference["stdout"], "-1\n");
        assert_ne!(l["stdout"], reference["stdout"], "{l}");
    }
}

/// `--verify-each changed` verifies a function that loop passes changed once per loop
/// adaptor, and a module that CGSCC passes changed once per CGSCC adaptor; verifying after
/// each loop and SCC instead must not change any outcome or optimized module.
#[test]
fn deferred_verification_gives_the_outcomes_and_ir_of_verifying_each_unit() {
    use ctos::llvm::{CFrontend, IrModule, TargetSpec, VerifyEach};
    use ctos::sandbox::{run_batch, BatchItem, JobSpec, Limits, Pool};
    use ctos::seq::random::{random_flat_between, with_preconditions};
    use rand::SeedableRng;

    let catalog = ctos::seq::Catalog::for_llvm(ctos::llvm::version().0).unwrap();
    let passes: Vec<_> = catalog
        .set("ctos")
        .unwrap()
        .into_iter()
        .filter(|p| catalog.unsafe_reason(&p.name).is_none() && p.name != "require")
        .collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let pipelines: Vec<String> = (0..12)
        .map(|_| {
            with_preconditions(&random_flat_between(&mut rng, &passes, 50, 200), &catalog).render(&catalog).unwrap()
        })
        .collect();
    let mut module = IrModule::load(csmith().as_ref(), &CFrontend::default(), &TargetSpec::default()).unwrap();
    let mut pool = Pool::new(2, Limits::default(), Vec::new()).unwrap();
    let mut results = Vec::new();
    for verify_each in [VerifyEach::Changed, VerifyEach::ChangedEachUnit] {
        let items = pipelines
            .iter()
            .enumerate()
            .map(|(index, p)| BatchItem { index, job: JobSpec { verify_each, ..JobSpec::optimize(p.clone()) } });
        let mut runs = vec![None; pipelines.len()];
        run_batch(&mut pool, &mut module, items, |i, run| runs[i] = Some((run.outcome, run.ir_hash))).unwrap();
        results.push(runs);
    }
    assert_eq!(results[0], results[1]);
    assert!(results[0].iter().all(|r| r.is_some_and(|(_, hash)| hash.is_some())), "{:?}", results[0]);
}

#[test]
fn main_runs_with_argc_1_and_a_program_name_as_from_a_shell() {
    let program = write_temp(
        "argc.c",
        "#include <stdio.h>\nint main(int argc, char **argv) { printf(\"%d %s\\n\", argc, argv[0] ? \"named\" : \"null\"); return 0; }\n",
    );
    let r = run_records(&[program.to_str().unwrap(), "-p", "instsimplify", "--exec"]);
    assert_eq!(r.reference.unwrap()["stdout"], "1 named\n");
    assert_eq!(r.runs[0]["stdout"], "1 named\n");
}

/// A child buffers LLVM's stderr (a printer pass made a system call per token): what LLVM
/// printed still reaches the run whether the job ends, crashes after printing, or is one
/// of a worker's several.
#[test]
fn what_llvm_prints_reaches_the_run_when_a_job_ends_or_crashes() {
    use ctos::llvm::{CFrontend, IrModule, TargetSpec};
    use ctos::sandbox::{JobSpec, Limits, Outcome, Pool};
    let sum = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/sum.c");
    let mut module = IrModule::load(&sum, &CFrontend::default(), &TargetSpec::default()).unwrap();
    let mut pool = Pool::new(1, Limits::default(), Vec::new()).unwrap();
    let printed = "DominatorTree for function: main";
    for (pipeline, outcome) in [
        ("function(print<domtree>)", Outcome::Ok),
        ("function(print<domtree>)", Outcome::Ok),
        ("function(print<domtree>,trigger-crash-function)", Outcome::Crash),
        ("function(print<domtree>)", Outcome::Ok),
    ] {
        let run = pool.run_one(&mut module, &JobSpec::optimize(pipeline)).unwrap();
        assert_eq!(run.outcome, outcome, "{pipeline}: {:?}", run.message);
        assert_eq!(run.stderr.matches(printed).count(), 1, "{pipeline}: {}", run.stderr);
    }
}

/// LLVM's debug counters count across a process: a worker that runs many jobs starts each
/// from zero, and a counter one job limits runs every step again in the next.
#[cfg(feature = "llvm22")]
#[test]
fn a_jobs_debug_counter_limit_and_counts_end_with_the_job_in_a_worker() {
    use ctos::llvm::{IrModule, TargetSpec};
    use ctos::sandbox::{JobSpec, Limits, Pool};
    let text =
        "define i32 @f(i32 %x) {\n  %a = add i32 %x, 0\n  %b = mul i32 %a, 2\n  %c = shl i32 %b, 1\n  ret i32 %c\n}\n";
    let mut module = IrModule::from_bytes(text.as_bytes(), "counted", &TargetSpec::default()).unwrap();
    let mut pool = common::one_heap(Pool::new(1, Limits::default(), Vec::new()).unwrap());
    pool.set_worker_jobs(100);
    let full = JobSpec { count_steps: true, ..JobSpec::optimize("function(instcombine<no-verify-fixpoint>)") };
    let limited = JobSpec { llvm_args: vec!["-debug-counter=instcombine-visit=0".into()], ..full.clone() };
    let runs: Vec<_> = [&full, &limited, &full, &full].iter().map(|j| pool.run_one(&mut module, j).unwrap()).collect();
    let visits = |i: usize| runs[i].step_counts.as_ref().and_then(|c| c.get("instcombine-visit").copied());
    assert!(visits(0).is_some_and(|n| n >= 4), "{:?}", runs[0].step_counts);
    assert_ne!(runs[1].ir_hash, runs[0].ir_hash, "one visit leaves the mul and the shl apart");
    assert_eq!((runs[2].ir_hash, runs[3].ir_hash), (runs[0].ir_hash, runs[0].ir_hash));
    assert_eq!((visits(2), visits(3)), (visits(0), visits(0)), "each job counts from zero");
}
