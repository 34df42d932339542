//! What a bug folder's IR reduction costs at the size of a real campaign program: a crash
//! (loop-extract on csmith seed 2646955483, about 13,600 lines of IR) and a miscompilation
//! (bench bug 180456's function run after a whole csmith program, about 2,000 lines; LLVM 22
//! only, like the bug), each
//! found by a one-iteration campaign and reduced with the real llvm-reduce and `ctos
//! interesting` as its test. The test suite checks the same folders on small programs
//! (tests/it/bug_folders.rs); this reports the seconds, the CPU and the lines at full size.
//!
//!     cargo bench --bench reduce
//!     CTOS_BENCH_ROUNDS=3 CTOS_BENCH_CASES=wrong-code cargo bench --bench reduce
//!
//! Per case, medians over rounds of: wall seconds of the campaign, the reduction's own
//! seconds (outcome.json), CPU seconds of all processes, and the reduced program's lines
//! (a folder a maintainer reads wants under 100).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

mod common;

use common::{children_cpu, env_or, median};

struct Case {
    name: &'static str,
    /// Writes the case's program into the `programs/` folder it is given.
    program: fn(programs: &Path, root: &Path, work: &Path),
    sequences: &'static str,
    extra: &'static [&'static str],
}

const CASES: [Case; 2] = [
    Case {
        name: "crash",
        program: csmith_loop_extract,
        sequences: "loop-extract,function(instcombine<no-verify-fixpoint>,simplifycfg),loop-extract\n",
        extra: &["--localize-time", "0"],
    },
    Case {
        name: "wrong-code",
        program: csmith_then_180456,
        // Pipelines that leave the program alone outvote the miscompiling one.
        sequences: "function(slp-vectorizer)\nfunction(sroa)\nfunction(dce)\nfunction(early-cse)\n",
        extra: &["--llvm-arg=-slp-threshold=-50", "--localize-time", "0", "--reduce-ir-time", "300"],
    },
];

fn run(command: &mut Command, what: &str) -> Vec<u8> {
    let out = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// csmith seed 2646955483, on which loop-extract crashes on LLVM 19 and 22.
fn csmith_loop_extract(programs: &Path, _root: &Path, _work: &Path) {
    let c = run(Command::new("csmith").args(["--seed", "2646955483"]), "csmith");
    std::fs::write(programs.join("p.c"), c).unwrap();
}

/// tests/data/csmith-12345.c at -O0 with its `main` renamed, linked with bench bug
/// 180456's function and a `main` that runs both.
fn csmith_then_180456(programs: &Path, root: &Path, work: &Path) {
    let major = ctos::llvm::version().0;
    let csmith_ir = work.join("csmith.ll");
    run(
        Command::new(format!("clang-{major}"))
            .args(["-O0", "-Xclang", "-disable-O0-optnone", "-emit-llvm", "-S", "-w", "-I/usr/include/csmith"])
            .arg(root.join("tests/data/csmith-12345.c"))
            .arg("-o")
            .arg(&csmith_ir),
        "clang",
    );
    let ir = std::fs::read_to_string(&csmith_ir).unwrap();
    std::fs::write(&csmith_ir, ir.replace("define dso_local i32 @main(", "define dso_local i32 @csmith_main("))
        .unwrap();
    let driver = work.join("driver.ll");
    std::fs::write(&driver, CSMITH_THEN_180456).unwrap();
    let repro = root.join("../shared/bench/bugs/180456/repro.ll");
    assert!(repro.exists(), "{} is missing: ../shared must sit beside the checkout", repro.display());
    run(
        Command::new(format!("llvm-link-{major}"))
            .arg("-S")
            .args([&csmith_ir, &repro, &driver])
            .arg("-o")
            .arg(programs.join("slp.ll")),
        "llvm-link",
    );
}

/// What one campaign of a case cost and left.
struct Measured {
    wall: f64,
    /// The reduction's own seconds, as outcome.json records them.
    reduction: f64,
    /// User and system seconds of every process.
    cpu: f64,
    lines_before: f64,
    lines: f64,
}

/// One campaign of `case`.
fn measure(case: &Case, ctos: &Path, root: &Path) -> Measured {
    let work = tempfile::tempdir().unwrap();
    let programs = work.path().join("programs");
    std::fs::create_dir_all(&programs).unwrap();
    (case.program)(&programs, root, work.path());
    let sequences = work.path().join("sequences.txt");
    std::fs::write(&sequences, case.sequences).unwrap();
    let out = work.path().join("campaign");
    let total = |(user, sys): (f64, f64)| user + sys;
    let (cpu_before, started) = (total(children_cpu()), Instant::now());
    run(
        Command::new(ctos)
            .args(["fuzz", "--iterations", "1", "-j", "2", "--out"])
            .arg(&out)
            .arg("--programs")
            .arg(&programs)
            .arg("--sequences")
            .arg(&sequences)
            .args(case.extra),
        "ctos fuzz",
    );
    let (wall, cpu) = (started.elapsed().as_secs_f64(), total(children_cpu()) - cpu_before);
    let folder = std::fs::read_dir(out.join("bugs")).unwrap().next().expect("a bug folder").unwrap().path();
    let outcome: Value = serde_json::from_slice(&std::fs::read(folder.join("outcome.json")).unwrap()).unwrap();
    let reduced = &outcome["reduced_ir"];
    let number =
        |key: &str| reduced[key].as_f64().unwrap_or_else(|| panic!("{case_name}: {reduced}", case_name = case.name));
    Measured { wall, reduction: number("seconds"), cpu, lines_before: number("lines_before"), lines: number("lines") }
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let ctos = root.join("target/release/ctos");
    assert!(ctos.is_file(), "build it first: cargo build --release");
    let rounds = env_or("CTOS_BENCH_ROUNDS", 1);
    let chosen = std::env::var("CTOS_BENCH_CASES").unwrap_or_else(|_| "crash,wrong-code".into());
    println!("case        campaign s  reduction s  CPU s   lines before  lines after");
    for case in CASES.iter().filter(|c| chosen.split(',').any(|n| n == c.name)) {
        let runs: Vec<_> = (0..rounds).map(|_| measure(case, &ctos, &root)).collect();
        let m = |f: fn(&Measured) -> f64| median(runs.iter().map(f).collect());
        let (before, after) = (m(|r| r.lines_before), m(|r| r.lines));
        println!(
            "{:<11} {:>10.1} {:>12.1} {:>6.1} {:>13} {:>12}{}",
            case.name,
            m(|r| r.wall),
            m(|r| r.reduction),
            m(|r| r.cpu),
            before,
            after,
            if after < 100.0 { "" } else { "  (not under 100 lines)" }
        );
    }
}

/// A `main` that runs a csmith program's (renamed `csmith_main`), then bench bug 180456's
/// `sub_mul` on four values, printing what it stored (as the bug's own driver does).
const CSMITH_THEN_180456: &str = r#"@p = global [4 x i16] [i16 7, i16 1, i16 1, i16 1]
@s = global [4 x i16] zeroinitializer
@.fmt = private constant [13 x i8] c"%d %d %d %d\0A\00"
declare i32 @printf(ptr, ...)
declare void @sub_mul(ptr, ptr)
declare i32 @csmith_main(i32, ptr)
define i32 @main() {
  %c = call i32 @csmith_main(i32 1, ptr null)
  call void @sub_mul(ptr @p, ptr @s)
  %a0 = load i16, ptr getelementptr ([4 x i16], ptr @s, i32 0, i32 0)
  %a1 = load i16, ptr getelementptr ([4 x i16], ptr @s, i32 0, i32 1)
  %a2 = load i16, ptr getelementptr ([4 x i16], ptr @s, i32 0, i32 2)
  %a3 = load i16, ptr getelementptr ([4 x i16], ptr @s, i32 0, i32 3)
  %b0 = sext i16 %a0 to i32
  %b1 = sext i16 %a1 to i32
  %b2 = sext i16 %a2 to i32
  %b3 = sext i16 %a3 to i32
  %r = call i32 (ptr, ...) @printf(ptr @.fmt, i32 %b0, i32 %b1, i32 %b2, i32 %b3)
  ret i32 0
}
"#;
