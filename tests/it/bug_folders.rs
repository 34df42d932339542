//! What a campaign's bug folder hands a maintainer: the program reduced as IR with the
//! real llvm-reduce, where the bug fires, where it is, and a draft report.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common;
use common::ctos;

/// A one-iteration campaign over `programs` and `sequences`, one job at a time; the folder of
/// its one bug. With two jobs llvm-reduce tests chunks side by side and throws away what a
/// smaller winner makes moot, and a time-bound step (localization) keeps two children busy:
/// the crash test took 37 CPU-s with two, 29 with one (26 and 29 s alone), and the suite runs
/// several tests on two cores. The out-of-time test keeps two jobs, for its candidates that race
/// to be kept as the smallest.
fn campaign_with_one_bug(work: &Path, programs: &Path, sequences: &str, extra: &[&str]) -> PathBuf {
    campaign_with_one_bug_in_jobs(work, programs, sequences, "1", extra)
}

fn campaign_with_one_bug_in_jobs(work: &Path, programs: &Path, sequences: &str, jobs: &str, extra: &[&str]) -> PathBuf {
    let seq_file = work.join("sequences.txt");
    std::fs::write(&seq_file, sequences).unwrap();
    let out = work.join("campaign");
    let mut args = vec!["fuzz", "--out", out.to_str().unwrap(), "--programs", programs.to_str().unwrap()];
    args.extend_from_slice(&["--sequences", seq_file.to_str().unwrap(), "--iterations", "1", "-j", jobs]);
    args.extend_from_slice(extra);
    // A temporary folder of its own: what the campaign leaves there is seen.
    let tmp = work.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_ctos")).args(&args).env("TMPDIR", &tmp).output().expect("run ctos");
    assert_eq!(run.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.stderr));
    let (code, stdout, stderr) = ctos(&["report", out.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let bugs: Vec<Value> =
        stdout.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).filter(|r| r["type"] == "bug").collect();
    assert_eq!(bugs.len(), 1, "{stdout}");
    out.join(bugs[0]["dir"].as_str().unwrap())
}

fn outcome(folder: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(folder.join("outcome.json")).unwrap()).unwrap()
}

/// The first `sh` block of the README: the command it leads with.
fn first_command(folder: &Path) -> Vec<String> {
    let readme = std::fs::read_to_string(folder.join("README.md")).unwrap();
    let block = readme.split("```sh\n").nth(1).expect("a sh block").split("```").next().unwrap();
    block.lines().map(str::to_string).collect()
}

/// Run one README line with `sh` in the bug folder.
fn sh(folder: &Path, line: &str) -> std::process::Output {
    Command::new("sh").arg("-c").arg(line).current_dir(folder).output().unwrap()
}

/// A program on which loop-extract crashes on LLVM 19 and 22: one function of csmith
/// seed 2646955483, 1,000 lines of IR (tests/data/loop-extract-crash.ll says how it was cut).
fn loop_extract_program(work: &Path) -> PathBuf {
    programs_of_test_data(work, "loop-extract-crash.ll")
}

/// A `programs/` folder in `work` holding `tests/data/NAME`.
fn programs_of_test_data(work: &Path, name: &str) -> PathBuf {
    let programs = work.join("programs");
    std::fs::create_dir_all(&programs).unwrap();
    std::fs::copy(common::root().join("tests/data").join(name), programs.join(name)).unwrap();
    programs
}

const LOOP_EXTRACT: &str = "loop-extract,function(instcombine<no-verify-fixpoint>,simplifycfg),loop-extract\n";

#[test]
fn a_crash_gets_a_small_reduced_program_plain_opt_crashes_on_with_where_and_a_draft_report() {
    let work = tempfile::tempdir().unwrap();
    let programs = loop_extract_program(work.path());
    // Five seconds of localization: the test asks for ranked files, not for the best ranking.
    let folder = campaign_with_one_bug(work.path(), &programs, LOOP_EXTRACT, &["--localize-time", "5"]);
    let o = outcome(&folder);
    let reduced = &o["reduced_ir"];
    assert_eq!(reduced["file"], "reduced.ll", "{o}");
    let lines = std::fs::read_to_string(folder.join("reduced.ll")).unwrap().lines().count();
    assert!(lines < 100, "{lines} lines");
    assert_eq!(reduced["lines"], lines);
    assert!(reduced["lines_before"].as_u64().unwrap() > 1000, "{reduced}");
    // The README leads with a plain opt command on reduced.ll, and opt crashes on it.
    let command = first_command(&folder);
    assert_eq!(command.len(), 1, "{command:?}");
    let major = o["llvm_version"].as_str().unwrap().split('.').next().unwrap().to_string();
    assert!(
        command[0].starts_with(&format!("opt-{major} -passes=")) && command[0].contains(" reduced.ll"),
        "{command:?}"
    );
    let out = sh(&folder, &command[0]);
    assert_eq!(out.status.code(), Some(139), "plain opt did not crash: {}", String::from_utf8_lossy(&out.stderr));
    // The pass run it first shows after, as plain opt's -opt-bisect-limit counts them.
    let limit = o["bisected"]["limit"].as_u64().unwrap_or_else(|| panic!("{o}"));
    let bisected = |n: u64| sh(&folder, &format!("{} -opt-bisect-limit={n}", command[0])).status.code();
    assert_eq!((bisected(limit), bisected(limit - 1)), (Some(139), Some(0)), "{}", o["bisected"]);
    assert_eq!(o["bisected"]["pass"], "loop-extract", "{o}");
    // Where it fires: the linked LLVM at least, and the line says so.
    let fires = o["fires_on"].as_array().unwrap();
    let linked = fires.iter().find(|f| f["opt"].is_null()).expect("the linked LLVM");
    assert_eq!(linked["fires"], true, "{linked}");
    let readme = std::fs::read_to_string(folder.join("README.md")).unwrap();
    assert!(readme.contains("Fires on: ") && readme.contains(&format!("{major} ✔")), "{readme}");
    // Plain opt runs clean with one run fewer (above); the text claims so only from run 2 on.
    let bisect_line = format!("With `-opt-bisect-limit={limit}` added, the command fails as above");
    assert!(readme.contains(&bisect_line) && readme.contains("`loop-extract`, "), "{readme}");
    // Where it is, and the draft.
    let suspects = &o["suspects"];
    assert_eq!(suspects["culprit"], "loop-extract", "{suspects}");
    let files = suspects["files"].as_array().unwrap();
    assert!(!files.is_empty() && files.len() <= 3, "{suspects}");
    let issue = std::fs::read_to_string(folder.join("ISSUE.md")).unwrap();
    assert!(issue.contains("# [LoopExtractor] crash: "), "{issue}");
    assert!(issue.contains(&std::fs::read_to_string(folder.join("reduced.ll")).unwrap().trim_end().to_string()));
    // The README's command, with opt named as the tracker's reader has it.
    let for_anyone = command[0].replacen(&format!("opt-{major} "), "opt ", 1);
    assert!(issue.contains(&format!("# LLVM {major}.")) && issue.contains(&for_anyone), "{issue}");
    assert!(issue.contains(&bisect_line), "{issue}");
    assert!(issue.contains(files[0].as_str().unwrap()), "{issue}");
    let sequence_note = issue.split("## The pass sequence").nth(1).expect("the pass sequence section");
    assert!(sequence_note.contains("run none of its passes: `loop-extract`"), "{issue}");
    assert_eq!(o["production_only"], false, "{o}");
    // ctos report and the campaign page show the same.
    let campaign = folder.parent().unwrap().parent().unwrap();
    let (_, table, _) = ctos(&["report", campaign.to_str().unwrap()]);
    assert!(table.contains(&format!("reduced: reduced.ll, {lines} lines")), "{table}");
    assert!(table.contains("fires on: ") && table.contains(&format!("{major} ✔")), "{table}");
    assert!(table.contains("culprit: loop-extract; suspected: "), "{table}");
    let page = campaign.join("campaign.html");
    let (code, _, stderr) = ctos(&["report", campaign.to_str().unwrap(), "--html", page.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(&format!("reduced: reduced.ll, {lines} lines")), "no findings on the page");
    assert!(html.contains("/ISSUE.md\">ISSUE.md</a>"), "no link to ISSUE.md on the page");
}

#[test]
fn a_reduction_out_of_time_keeps_the_smallest_program_that_still_crashes() {
    let work = tempfile::tempdir().unwrap();
    let programs = loop_extract_program(work.path());
    let extra = ["--reduce-ir-time", "8", "--localize-time", "0"];
    let folder = campaign_with_one_bug_in_jobs(work.path(), &programs, LOOP_EXTRACT, "2", &extra);
    let reduced = &outcome(&folder)["reduced_ir"];
    assert_eq!(reduced["finished"], false, "{reduced}");
    let lines = std::fs::read_to_string(folder.join("reduced.ll")).expect("reduced.ll").lines().count();
    assert!(lines < reduced["lines_before"].as_u64().unwrap() as usize, "{reduced}");
    let out = sh(&folder, &first_command(&folder)[0]);
    assert_eq!(out.status.code(), Some(139), "{}", String::from_utf8_lossy(&out.stderr));
    // llvm-reduce, stopped at its time limit, removed none of its files: they were in
    // ctos's work folder, which is gone.
    let left: Vec<_> = std::fs::read_dir(work.path().join("tmp")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");

    // A fifo where the folder's outcome.json was: the report goes on without its
    // findings, and does not wait for a writer that never comes.
    std::fs::remove_file(folder.join("outcome.json")).unwrap();
    let fifo = std::ffi::CString::new(folder.join("outcome.json").to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let campaign = folder.parent().unwrap().parent().unwrap();
    let mut report = Command::new(env!("CARGO_BIN_EXE_ctos"))
        .arg("report")
        .arg(campaign)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let guard = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while report.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > guard {
            report.kill().unwrap();
            panic!("ctos report waits on a fifo as outcome.json");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(report.wait().unwrap().code(), Some(0));
}

/// A campaign on the LLVM 23 that setup installs, through `--opt`, of a program given as
/// bitcode (as a C program's is kept): LLVM 23 ships no llvm-reduce, so the linked LLVM's
/// reduces the program's text, and LLVM 23's opt crashes on the result with the README's
/// first command.
#[cfg(feature = "llvm22")]
#[test]
fn a_newer_opt_without_llvm_reduce_gets_a_reduced_text_program_from_the_linked_one() {
    let work = tempfile::tempdir().unwrap();
    let programs = loop_extract_program(work.path());
    let text = programs.join("loop-extract-crash.ll");
    let assembled = Command::new("llvm-as-22").arg(&text).arg("-o").arg(text.with_extension("bc")).status().unwrap();
    assert!(assembled.success());
    std::fs::remove_file(&text).unwrap();
    let opt23 = common::root().join("llvm-23/bin/opt");
    assert!(!opt23.with_file_name("llvm-reduce").exists(), "this LLVM 23 has an llvm-reduce now");
    // Eight seconds, as the out-of-time test below: it asks for a smaller program, not the
    // smallest (20 s ran out as well, and took 22 of the test's 23 s).
    let extra = ["--opt", opt23.to_str().unwrap(), "--reduce-ir-time", "8", "--localize-time", "0"];
    let folder = campaign_with_one_bug(work.path(), &programs, LOOP_EXTRACT, &extra);
    let o = outcome(&folder);
    assert_eq!(o["program_file"], "program.bc", "{o}");
    let reduced = &o["reduced_ir"];
    assert_eq!(reduced["file"], "reduced.ll", "{reduced}");
    let text = std::fs::read_to_string(folder.join("reduced.ll")).expect("reduced.ll is text");
    assert!(text.lines().count() < reduced["lines_before"].as_u64().unwrap() as usize, "{reduced}");
    let command = &first_command(&folder)[0];
    assert!(command.starts_with(opt23.to_str().unwrap()) && command.contains(" reduced.ll"), "{command}");
    let out = sh(&folder, command);
    assert_eq!(out.status.code(), Some(139), "{}", String::from_utf8_lossy(&out.stderr));
    // The draft for LLVM's tracker names opt as its reader has it, the version on a line of
    // its own; nothing of this machine's paths.
    let issue = std::fs::read_to_string(folder.join("ISSUE.md")).unwrap();
    assert!(issue.contains("```sh\n# LLVM 23.1.4 (opt --version)\nopt -passes="), "{issue}");
    for path in [common::root().display().to_string(), "llvm-23/bin".to_string(), work.path().display().to_string()] {
        assert!(!issue.contains(&path), "ISSUE.md names {path}: {issue}");
    }
}

/// LLVM 22's SLP vectorizer miscompile (bench bug 180456), its function linked with its
/// own driver. The reduction finishes well inside its time with a smaller program that
/// plain opt + lli still show the difference on: unoptimized it ends as the original did
/// (its output may differ, as C-Reduce's wrong-code tests allow), reads no memory it never
/// wrote and keeps the types of `main` and of what it calls. The same bug inside a csmith
/// program (2,000 lines of IR, minutes to reduce) is `cargo bench --bench reduce`.
#[cfg(feature = "llvm22")]
#[test]
fn a_wrong_code_bug_reduces_to_a_smaller_program_that_opt_and_lli_show() {
    use common::bug;
    let work = tempfile::tempdir().unwrap();
    let programs = work.path().join("programs");
    std::fs::create_dir(&programs).unwrap();
    let linked = Command::new("llvm-link-22")
        .args(["-S", &bug("180456", "repro.ll"), &bug("180456", "driver.ll"), "-o"])
        .arg(programs.join("slp.ll"))
        .status()
        .unwrap();
    assert!(linked.success());
    // Pipelines that leave the program alone outvote the miscompiling one (a program most
    // pipelines disagree on is taken for undefined behaviour).
    let sequences = "function(slp-vectorizer)\nfunction(sroa)\nfunction(dce)\nfunction(early-cse)\n";
    let extra = ["--llvm-arg=-slp-threshold=-50", "--localize-time", "0", "--reduce-ir-time", "300"];
    let folder = campaign_with_one_bug(work.path(), &programs, sequences, &extra);
    let o = outcome(&folder);
    assert_eq!(o["kind"], "wrong-code");
    let reduced = &o["reduced_ir"];
    assert_eq!(
        (&reduced["file"], &reduced["finished"]),
        (&serde_json::json!("reduced.ll"), &serde_json::json!(true)),
        "{o}"
    );
    let lines = std::fs::read_to_string(folder.join("reduced.ll")).unwrap().lines().count();
    assert!(lines < reduced["lines_before"].as_u64().unwrap() as usize, "{lines} lines: {reduced}");
    let lli = |file: &str| {
        let out = sh(&folder, &format!("lli-22 {file}"));
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let command = first_command(&folder);
    assert_eq!(command.len(), 3, "{command:?}");
    assert!(sh(&folder, &command[0]).status.success(), "{command:?}");
    assert_ne!(lli("optimized.bc"), lli("reduced.ll"), "the reduced program no longer shows the bug");
    // The pass run after which the output first differs, as plain opt's -opt-bisect-limit
    // counts them: with that limit lli prints something else, with one less (when that
    // still runs a pass) what the unoptimized program prints.
    let limit = o["bisected"]["limit"].as_u64().unwrap_or_else(|| panic!("{o}"));
    assert_eq!(o["bisected"]["pass"], "slp-vectorizer", "{o}");
    let printed_at = |n: u64| {
        assert!(sh(&folder, &format!("{} -opt-bisect-limit={n}", command[0])).status.success());
        lli("optimized.bc")
    };
    assert_ne!(printed_at(limit), lli("reduced.ll"), "{}", o["bisected"]);
    if limit > 1 {
        assert_eq!(printed_at(limit - 1), lli("reduced.ll"), "{}", o["bisected"]);
    }
    let issue = std::fs::read_to_string(folder.join("ISSUE.md")).unwrap();
    assert!(issue.contains("miscompile: output differs"), "{issue}");
    assert!(issue.contains(&format!("`-opt-bisect-limit={limit}` added")), "{issue}");
    // What was checked to rule out undefined behaviour, as recorded for the reproducer.
    let unoptimized = &o["unoptimized"];
    assert_eq!(unoptimized["fill_stable"], true, "{o}");
    assert!(unoptimized["interface"].as_array().unwrap().contains(&serde_json::json!("i32 @main()")), "{o}");
    // Still the miscompilation the campaign found: the same culprit.
    assert!(!issue.contains("it may be another bug"), "{issue}");
    let checked = issue.split("## Undefined behaviour: what was checked").nth(1).unwrap_or_else(|| panic!("{issue}"));
    assert!(checked.contains("Unoptimized, it prints the same whether"), "{issue}");
    let lint = format!("`lint` pass reports {} findings", unoptimized["lint_findings"]);
    assert!(checked.contains(&lint) && checked.contains("Not checked: "), "{issue}");
    assert!(issue.contains(&lli("reduced.ll")), "{issue}");
}

/// The check a wrong-code reduction relies on: a program that prints stack memory it never
/// wrote prints something else when fresh stack holds other bytes. (The heap is not
/// tested: glibc's per-thread cache hands back freed blocks without M_PERTURB's fill.)
#[test]
fn a_program_reading_memory_it_never_wrote_is_told_apart_by_its_fills() {
    use ctos::fuzz::interesting::Baseline;
    let header = "@fmt = constant [4 x i8] c\"%d\\0A\\00\"\ndeclare i32 @printf(ptr, ...)\ndeclare ptr @malloc(i64)\n";
    let program = |body: &str| {
        format!("{header}define i32 @main() {{\n{body}  %r = call i32 (ptr, ...) @printf(ptr @fmt, i32 %v)\n  ret i32 0\n}}\n")
    };
    let cases = [
        ("written stack", "  %a = alloca i32\n  store i32 7, ptr %a\n  %v = load i32, ptr %a\n", true),
        // An array: a frame of one slot is made by pushing a register, which no fill reaches.
        (
            "unwritten stack",
            "  %a = alloca [16 x i32]\n  %e = getelementptr i32, ptr %a, i64 5\n  %v = load volatile i32, ptr %e\n",
            false,
        ),
    ];
    ctos::llvm::init();
    for (what, body, stable) in cases {
        let module = ctos::llvm::IrModule::from_bytes(program(body).as_bytes(), what, &Default::default());
        let mut module = module.unwrap();
        let mut pool = ctos::sandbox::Pool::new(1, Default::default(), Vec::new()).unwrap();
        let baseline = Baseline::of(&mut pool, &mut module).unwrap();
        assert_eq!(baseline.fill_stable, stable, "{what}: {baseline:?}");
        assert_eq!(baseline.undefined_values, 0, "{what}");
    }
}

/// irce leaves a division in the entry block that gvn then uses (tests/data/irce-udiv.ll).
/// Unused, the backend drops it, and the machine does not trap until gvn uses it: before
/// poison tracking the bug was gvn's. But the division runs, by zero, right after irce, and
/// the optimized run's tracking says so: the bug is irce's, reduced to it alone, and
/// opt-bisect and the tracking run on each pass run's output name its first run. Through
/// `--opt` too (LLVM 23): the agent tracks poison in its children as ctos does.
#[test]
fn the_pass_that_makes_the_program_undefined_is_the_culprit_though_the_machine_does_not_trap() {
    let work = tempfile::tempdir().unwrap();
    let programs = programs_of_test_data(work.path(), "irce-udiv.ll");
    let opt23 = common::root().join("llvm-23/bin/opt");
    let mut llvms = vec![vec![]];
    if cfg!(feature = "llvm22") {
        llvms.push(vec!["--opt", opt23.to_str().unwrap()]);
    }
    for (i, llvm) in llvms.into_iter().enumerate() {
        let work = work.path().join(format!("llvm{i}"));
        std::fs::create_dir(&work).unwrap();
        let mut extra = vec!["--reduce-ir-time", "0", "--localize-time", "0"];
        extra.extend(llvm);
        let folder = campaign_with_one_bug(&work, &programs, "function(irce,gvn)\n", &extra);
        let o = outcome(&folder);
        assert_eq!((o["kind"].as_str(), o["pass"].as_str()), (Some("wrong-code"), Some("irce")), "{o}");
        assert_eq!(o["signature"], "undefined behaviour: a division by zero", "{o}");
        assert_eq!(o["reduced"], "function(irce)", "{o}");
        let bisected = &o["bisected"];
        assert_eq!((bisected["limit"].as_u64(), bisected["pass"].as_str()), (Some(1), Some("irce")), "{o}");
        let undefined = &bisected["undefined"];
        assert_eq!((undefined["limit"].as_u64(), undefined["pass"].as_str()), (Some(1), Some("irce")), "{o}");
        let rule = undefined["rule"].as_str().unwrap_or("");
        assert!(rule.starts_with("call 0 `") && rule.contains("a division by zero (at @f: `"), "{o}");
        assert_eq!(o["unoptimized"]["checked_clean"], true, "{o}");
        let readme = std::fs::read_to_string(folder.join("README.md")).unwrap();
        assert!(
            readme.contains("behaves undefinedly after pass run 1 (call 0 `@f(i64 0)`: a division by zero"),
            "{readme}"
        );
        let issue = std::fs::read_to_string(folder.join("ISSUE.md")).unwrap();
        assert!(issue.contains("ctos-poison: call 0: kind 3: @f: `%0 = udiv i64 42, %n`"), "{issue}");
        assert!(issue.contains("may print the same under plain `lli`: what differs is undefined behaviour"), "{issue}");
    }
}

/// A loop pass's adaptor runs LCSSA before it, and LCSSA breaks tests/data/lcssa-token.ll
/// (a PHI of a type that cannot have one): the bug is LCSSA's, one folder with the
/// sequence `function(lcssa)`, whichever loop passes the failing sequences run (a
/// campaign on LLVM 23 made one folder per loop pass, thirteen). LLVM 19's verifier
/// allows the PHI.
#[cfg(feature = "llvm22")]
#[test]
fn ir_broken_by_a_loop_adaptors_lcssa_is_one_lcssa_bug_whatever_the_loop_pass() {
    let work = tempfile::tempdir().unwrap();
    let programs = programs_of_test_data(work.path(), "lcssa-token.ll");
    let sequences = "function(loop(loop-rotate))\nfunction(loop(indvars))\nfunction(loop-mssa(licm))\n";
    let folder =
        campaign_with_one_bug(work.path(), &programs, sequences, &["--reduce-ir-time", "0", "--localize-time", "0"]);
    let o = outcome(&folder);
    assert_eq!((o["kind"].as_str(), o["pass"].as_str()), (Some("invalid-ir"), Some("lcssa")), "{o}");
    assert_eq!(o["reduced"], "function(lcssa)", "{o}");
    assert!(folder.ends_with("0001-invalid-ir-lcssa"), "{}", folder.display());
}
