//! Programs beyond csmith: llvm-stress, IR mutants, and mixes of generators, in real
//! campaigns on the linked LLVM.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common;
use common::ctos;

use common::root;

/// One iteration (unless `extra` says how many) on `sequences` (one pipeline per line), two
/// workers, no bug-folder steps.
fn campaign(out: &Path, sequences: &str, extra: &[&str]) -> (i32, String, String) {
    let file = out.with_extension("txt");
    std::fs::write(&file, sequences).unwrap();
    let mut args = vec!["fuzz", "--out", out.to_str().unwrap(), "--sequences", file.to_str().unwrap()];
    if !extra.contains(&"--iterations") {
        args.extend_from_slice(&["--iterations", "1"]);
    }
    args.extend_from_slice(&["-j", "2", "--reduce-ir-time", "0", "--localize-time", "0"]);
    args.extend_from_slice(extra);
    ctos(&args)
}

struct ProgramRow {
    name: String,
    status: String,
    origin: Value,
    ir: String,
    /// The unoptimized run's record, when the program was executed.
    reference: Option<String>,
}

fn programs(dir: &Path) -> Vec<ProgramRow> {
    let db = rusqlite::Connection::open(dir.join("campaign.sqlite")).unwrap();
    let mut statement = db.prepare("SELECT name, status, origin, ir, reference FROM programs ORDER BY id").unwrap();
    let rows = statement
        .query_map([], |r| {
            Ok(ProgramRow {
                name: r.get(0)?,
                status: r.get(1)?,
                origin: serde_json::from_str(&r.get::<_, String>(2)?).unwrap(),
                ir: r.get(3)?,
                reference: r.get(4)?,
            })
        })
        .unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

fn stats(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("stats.json")).unwrap()).unwrap()
}

/// The plain `opt` of the linked LLVM's version.
fn opt() -> String {
    format!("opt-{}", if cfg!(feature = "llvm19") { 19 } else { 22 })
}

/// What the C program at `source` prints, built by the linked LLVM's clang at -O0.
fn output_of(source: &Path, scratch: &Path) -> String {
    let binary = scratch.join("seed-binary");
    let clang = opt().replace("opt", "clang");
    let built = Command::new(clang)
        .arg("-O0")
        .arg("-w")
        .arg("-I/usr/include/csmith")
        .arg(source)
        .arg("-o")
        .arg(&binary)
        .status();
    assert!(built.unwrap().success(), "cannot build {}", source.display());
    String::from_utf8(Command::new(&binary).output().unwrap().stdout).unwrap()
}

/// Every llvm-stress function with an out-of-range `extractelement` index, which nearly all
/// have, crashes `scalarizer` on LLVM 19 and 22 (fixed in 23): the campaign must find it,
/// judging the optimizer alone (the functions have no `main`).
#[test]
fn an_llvm_stress_campaign_judges_the_optimizer_and_finds_the_scalarizer_crash() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("stress");
    let sizes = ["--generator", "llvm-stress", "--prog-pool", "4", "--prog-select", "4", "--seed", "5"];
    let (code, stdout, stderr) = campaign(&out, "sroa,gvn\nfunction(scalarizer)\n", &sizes);
    assert_eq!(code, 0, "{stderr}");
    let rows = programs(&out);
    assert_eq!(rows.len(), 4);
    for p in &rows {
        assert_eq!(p.origin["generator"], "llvm-stress", "{}", p.name);
        assert!(p.origin["command"].as_str().unwrap().contains("-seed="), "{}", p.origin);
        assert!(p.ir.ends_with(".ll"), "{}", p.ir);
        assert_eq!((p.status.as_str(), &p.reference), ("tested", &None), "{}: never executed", p.name);
    }
    let s = stats(&out);
    assert_eq!(s["pairs"], 8);
    assert_eq!(s["by_generator"]["llvm-stress"]["pairs"], 8, "{s}");
    let bugs: Vec<_> = std::fs::read_dir(out.join("bugs")).unwrap().map(|e| e.unwrap().path()).collect();
    let bug =
        bugs.iter().find(|b| b.to_string_lossy().ends_with("-crash-scalarizer")).unwrap_or_else(|| panic!("{stdout}"));
    let readme = std::fs::read_to_string(bug.join("README.md")).unwrap();
    assert!(readme.contains("The program is llvm-stress output"), "{readme}");
    let crashed = Command::new(opt())
        .args(["-passes=function(scalarizer)", "-disable-output"])
        .arg(bug.join("program.ll"))
        .output()
        .unwrap();
    assert!(!crashed.status.success(), "plain opt does not crash on {}", bug.display());
}

/// IR mutants of the user's programs: each verifies and differs from its seed; those whose
/// edits keep the program's behaviour are executed, the others judged on the optimizer; a
/// second iteration also mutates the first one's bug reproducer.
#[test]
fn ir_mutants_verify_and_only_behaviour_keeping_ones_are_run() {
    let work = tempfile::tempdir().unwrap();
    let seeds = work.path().join("seeds");
    std::fs::create_dir(&seeds).unwrap();
    std::fs::copy(root().join("examples/sum.c"), seeds.join("sum.c")).unwrap();
    std::fs::copy(root().join("tests/data/csmith-12345.c"), seeds.join("csmith.c")).unwrap();
    let out = work.path().join("mutants");
    let args = ["--generator", "ir-mutate", "--programs", seeds.to_str().unwrap(), "--iterations", "2"];
    let sizes = ["--prog-pool", "8", "--prog-select", "8", "--seed", "4"];
    let (code, _, stderr) = campaign(&out, "sroa,gvn\ntrigger-crash-function\n", &[&args[..], &sizes[..]].concat());
    assert_eq!(code, 0, "{stderr}");
    let rows = programs(&out);
    assert!(rows.len() >= 12, "{} mutants", rows.len());
    let (mut run, mut not_run, mut of_reproducers) = (0, 0, 0);
    for p in &rows {
        let o = &p.origin;
        assert_eq!(o["generator"], "ir-mutate");
        assert!(!o["edits"].as_array().unwrap().is_empty(), "{o}");
        let file = out.join(&p.ir);
        let verified = Command::new(opt()).args(["-passes=verify", "-disable-output"]).arg(&file).output().unwrap();
        assert!(verified.status.success(), "{}: {}", p.name, String::from_utf8_lossy(&verified.stderr));
        let seed = o["seed_program"].as_str().unwrap();
        if seed.starts_with("bugs/") {
            of_reproducers += 1;
        } else {
            assert!(seed.ends_with("sum.c") || seed.ends_with("csmith.c"), "{seed}");
        }
        match (o["execute"].as_bool().unwrap(), &p.reference) {
            (true, Some(_)) if p.status == "tested" => run += 1,
            (false, None) => not_run += 1,
            other => panic!("{}: execute and reference disagree: {other:?} ({})", p.name, p.status),
        }
    }
    assert!(
        run > 0 && not_run > 0 && of_reproducers > 0,
        "run {run}, not run {not_run}, of reproducers {of_reproducers}"
    );
    // What a behaviour-keeping mutant printed unoptimized is what its seed prints.
    for seed in ["sum.c", "csmith.c"] {
        let expected = output_of(&seeds.join(seed), work.path());
        for p in rows
            .iter()
            .filter(|p| p.origin["execute"] == true && p.origin["seed_program"].as_str().unwrap().ends_with(seed))
        {
            let reference: Value = serde_json::from_str(p.reference.as_deref().unwrap()).unwrap();
            assert_eq!(reference["stdout"].as_str().unwrap(), expected, "{}: {}", p.name, p.origin["edits"]);
        }
    }
}

/// A mix shares the pool: each generator's programs are tested and counted apart.
#[test]
fn a_mix_of_generators_tests_each_and_says_what_each_gave() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("mix");
    let mix = ["--generator", "csmith,llvm-stress,ir-mutate", "--min-size", "20000"];
    let sizes = ["--prog-pool", "6", "--prog-select", "6", "--seed", "2"];
    let (code, stdout, stderr) = campaign(&out, "sroa,gvn\ninstcombine\n", &[&mix[..], &sizes[..]].concat());
    assert_eq!(code, 0, "{stderr}");
    let by = stats(&out)["by_generator"].clone();
    let mut pairs = 0;
    for generator in ["csmith", "llvm-stress", "ir-mutate"] {
        let n = &by[generator];
        assert!(n["programs_tested"].as_i64().unwrap() >= 1, "{generator}: {by}");
        assert_eq!(n["pairs"].as_i64().unwrap(), 2 * n["programs_tested"].as_i64().unwrap(), "{generator}: {by}");
        pairs += n["pairs"].as_i64().unwrap();
        assert!(stdout.contains(&format!("  {generator:<12} ")), "{stdout}");
    }
    assert_eq!(stats(&out)["pairs"], pairs);
    let names: Vec<String> = programs(&out).into_iter().map(|p| p.name).collect();
    assert!(
        names.iter().any(|n| n.contains("-llvm-stress-s")) && names.iter().any(|n| n.contains("-ir-mutate-m")),
        "{names:?}"
    );
}

/// A loop for the loop vectorizer.
const VECTORIZABLE: &str = "define void @add1(ptr %a, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %p = getelementptr inbounds i32, ptr %a, i64 %i
  %v = load i32, ptr %p, align 4
  %w = add i32 %v, 1
  store i32 %w, ptr %p, align 4
  %i.next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
";

/// Lit tests as seeds: each runs its RUN line's pipeline (and variants of it) under its
/// RUN line's options, which its mutants keep; a seed LLVM cannot parse, or whose target
/// it lacks, is counted and left out, one whose options LLVM refuses is skipped, and none
/// stops the campaign.
#[test]
fn a_seeds_campaign_runs_each_seeds_own_pipeline_under_its_options() {
    let work = tempfile::tempdir().unwrap();
    let seeds = work.path().join("seeds");
    std::fs::create_dir(&seeds).unwrap();
    let seed =
        |name: &str, run: &str, module: &str| std::fs::write(seeds.join(name), format!("{run}\n{module}")).unwrap();
    let run = "; RUN: opt -passes=loop-vectorize -S < %s | FileCheck %s";
    seed("plain.ll", run, VECTORIZABLE);
    let riscv = "; RUN: opt -passes=loop-vectorize \\\n; RUN:   -mtriple=riscv64-unknown-linux-gnu -mattr=+v -S < %s | FileCheck %s";
    seed("riscv.ll", riscv, VECTORIZABLE);
    seed("refused.ll", &run.replace(" -S ", " -no-such-flag -S "), VECTORIZABLE);
    seed("broken.ll", run, "define void @f( {\n");
    seed("alien.ll", &run.replace(" -S ", " -mtriple=nosucharch-unknown-linux -S "), VECTORIZABLE);
    let out = work.path().join("camp");
    let extra = ["--seeds", seeds.to_str().unwrap(), "--generator", "seeds,ir-mutate", "--prog-pool", "6"];
    let (code, stdout, stderr) = campaign(&out, "sroa\n", &[&extra[..], &["--prog-select", "6"]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("3 files usable") && stderr.contains("2 left out"), "{stderr}");
    assert!(stderr.contains("1 needs a target this LLVM lacks"), "{stderr}");
    assert!(
        stdout.contains("seed programs skipped when tested: 1 have an option the LLVM under test refuses"),
        "{stdout}"
    );

    let db = rusqlite::Connection::open(out.join("campaign.sqlite")).unwrap();
    let file_of = |p: &ProgramRow| p.origin["file"].as_str().map(|f| f.rsplit('/').next().unwrap().to_string());
    let all = programs(&out);
    let id_of = |file: &str| -> i64 {
        let name = &all.iter().find(|p| file_of(p).as_deref() == Some(file)).expect(file).name;
        db.query_row("SELECT id FROM programs WHERE name = ?1", [name], |r| r.get(0)).unwrap()
    };
    // (pipeline, optimized IR hash) of each sequence a program ran.
    let ran = |program: i64| -> Vec<(String, String)> {
        let mut st = db
            .prepare("SELECT pipeline, ir_hash FROM pairs JOIN sequences ON sequences.id = sequence WHERE program = ?1")
            .unwrap();
        st.query_map([program], |r| Ok((r.get(0)?, r.get::<_, Option<String>>(1)?.unwrap_or_default())))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let own: String = db
        .query_row(
            "SELECT pipeline FROM sequences JOIN own_sequences ON sequence = id WHERE program = ?1 ORDER BY id",
            [id_of("riscv.ll")],
            |r| r.get(0),
        )
        .unwrap();
    assert!(own.contains("loop-vectorize"), "{own}");
    let options = &all.iter().find(|p| file_of(p).as_deref() == Some("riscv.ll")).unwrap().origin["llvm_args"];
    assert_eq!(options, &serde_json::json!(["-mtriple=riscv64-unknown-linux-gnu", "-mattr=+v"]));
    let (plain, riscv) = (ran(id_of("plain.ll")), ran(id_of("riscv.ll")));
    // Its RUN pipeline, at least one variant of it, and the campaign's sequence.
    assert!(riscv.len() >= 3 && riscv.iter().any(|(p, _)| p.contains("sroa")), "{riscv:?}");
    assert!(riscv.iter().any(|(p, _)| *p == own) && !plain.is_empty(), "{riscv:?}");
    let refused = all.iter().find(|p| file_of(p).as_deref() == Some("refused.ll")).unwrap();
    assert!(refused.status.contains("--llvm-arg"), "{}", refused.status);
    // Mutants run under their seed's options and pipelines.
    let mutants: Vec<&ProgramRow> = all.iter().filter(|p| p.origin["generator"] == "ir-mutate").collect();
    assert!(!mutants.is_empty());
    for m in mutants {
        let seed = m.origin["seed_program"].as_str().unwrap();
        let options = m.origin["llvm_args"].as_array().unwrap();
        assert_eq!(seed.ends_with("riscv.ll"), options.iter().any(|o| o == "-mattr=+v"), "{}", m.origin);
        assert!(m.origin["pipelines"][0].as_str().unwrap().contains("loop-vectorize"), "{}", m.origin);
    }
}

/// LLVM's test of mutually recursive coroutines runs `cgscc(coro-split)` alone, written for
/// an LLVM that allowed it; LLVM 23's verifier rejects a coroutine split before CoroEarly,
/// on purpose. As a seed on LLVM 23, its own pipeline runs with `coro-early` added (and the
/// change counted), and the same pipeline given as a campaign's sequence, as written, is a
/// mistake of the pipeline's: no bug either way. `ctos run` says which is which.
#[test]
fn a_seed_whose_pipeline_breaks_a_pass_order_llvm_23_checks_runs_with_the_pass_and_gives_no_bug() {
    let opt23 = root().join("llvm-23/bin/opt");
    assert!(opt23.exists(), "{} is missing: run scripts/setup.sh", opt23.display());
    let opt23 = opt23.to_str().unwrap();
    let work = tempfile::tempdir().unwrap();
    let seeds = work.path().join("seeds");
    std::fs::create_dir(&seeds).unwrap();
    let seed = seeds.join("coro-split.ll");
    std::fs::copy(root().join("tests/data/seed-coro-split.ll"), &seed).unwrap();
    let out = work.path().join("camp");
    let extra = ["--opt", opt23, "--seeds", seeds.to_str().unwrap(), "--generator", "seeds"];
    let (code, stdout, stderr) = campaign(&out, "cgscc(coro-split)\n", &extra);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("0 failures, 0 unique bugs"), "{stdout}");
    let said = format!("{stdout}{stderr}");
    assert!(said.contains("1 pipelines with coro-early added before coro-split, which LLVM 23 requires"), "{said}");
    let db = rusqlite::Connection::open(out.join("campaign.sqlite")).unwrap();
    let own: String = db
        .query_row("SELECT pipeline FROM sequences JOIN own_sequences ON sequence = id ORDER BY id", [], |r| r.get(0))
        .unwrap();
    assert_eq!(own, "coro-early,cgscc(coro-split)");
    let stats: Value = serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["misuse_pairs"], 1, "{stats}");

    let (code, records, stderr) = ctos(&[
        "run",
        seed.to_str().unwrap(),
        "--opt",
        opt23,
        "--json",
        "--passes",
        "cgscc(coro-split)",
        "--passes",
        "coro-early,cgscc(coro-split)",
    ]);
    // The first pipeline broke the IR: the compiler failed.
    assert_eq!(code, 1, "{stderr}");
    let runs: Vec<Value> =
        records.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).filter(|r| r["type"] == "run").collect();
    assert_eq!(runs[0]["outcome"], "invalid-ir", "{records}");
    assert!(
        runs[0]["pipeline_mistake"].as_str().is_some_and(|m| m.contains("coro-early must run before")),
        "{records}"
    );
    assert_eq!((&runs[1]["outcome"], &runs[1]["pipeline_mistake"]), (&Value::from("ok"), &Value::Null), "{records}");
}

/// A folder of lit tests comes from anywhere: its RUN lines are input, not commands. Each
/// seed here names a place outside the campaign (or a program to start) through an option
/// whose value LLVM takes as free text, or runs a pass that writes files or starts a viewer:
/// the options and passes are left out, counted with their reasons, the rest of each seed
/// runs, and nothing reaches the place, in-process and inside opt. (With them kept, this
/// campaign wrote cfg.f.dot, bisect.ll and dump/ there and ran the script.)
#[test]
fn seeds_that_name_files_or_programs_outside_the_campaign_run_without_them() {
    let work = tempfile::tempdir().unwrap();
    let outside = work.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let at = |name: &str| outside.join(name).display().to_string();
    let script = work.path().join("marker.sh");
    std::fs::write(&script, format!("#!/bin/sh\ntouch {}\n", at("exec-ran"))).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let seeds = work.path().join("seeds");
    std::fs::create_dir(&seeds).unwrap();
    let module = "define i32 @f(i32 %x) {\nentry:\n  %a = add i32 %x, 0\n  %b = mul i32 %a, 2\n  ret i32 %b\n}\n";
    let cases = [
        ("cfg", "-passes='dot-cfg,instcombine'".to_string(), "dot-cfg (writes .dot files)"),
        (
            "cfg-prefix",
            format!("-passes=instcombine -cfg-dot-filename-prefix={}", at("cfg")),
            "-cfg-dot-filename-prefix=<string>",
        ),
        (
            "info",
            format!("-passes=instcombine -info-output-file={} -time-passes", at("info")),
            "-info-output-file=<filename>",
        ),
        ("trace", format!("-passes=instcombine -time-trace-file={}", at("trace.json")), "-time-trace-file=<filename>"),
        (
            "remarks",
            format!("-passes=instcombine -pass-remarks-output={}", at("remarks.yaml")),
            "-pass-remarks-output=<filename>",
        ),
        (
            "dots",
            format!("-passes=instcombine -print-changed=dot-cfg -dot-cfg-dir={}", at("dots")),
            "-dot-cfg-dir=<string>",
        ),
        ("exec", format!("-passes=instcombine -exec-on-ir-change={}", script.display()), "-exec-on-ir-change=<string>"),
        (
            "dump",
            format!("-passes=instcombine -ir-dump-directory={} -print-after=instcombine", at("dump")),
            "-ir-dump-directory=<filename>",
        ),
        (
            "bisect",
            format!("-passes=instcombine -opt-bisect-limit=1 -opt-bisect-print-ir-path={}", at("b.ll")),
            "-opt-bisect-print-ir-path=<string>",
        ),
        ("view", "-passes='view-cfg,instcombine'".to_string(), "view-cfg (starts a graph viewer)"),
        (
            "gcov",
            "-passes='insert-gcov-profiling,instcombine'".to_string(),
            "insert-gcov-profiling (writes .gcno files)",
        ),
    ];
    for (name, run, _) in &cases {
        std::fs::write(seeds.join(format!("{name}.ll")), format!("; RUN: opt {run} -S < %s\n{module}")).unwrap();
    }
    std::fs::write(seeds.join("only-dots.ll"), format!("; RUN: opt -passes=dot-cfg -S < %s\n{module}")).unwrap();
    let major = if cfg!(feature = "llvm19") { 19 } else { 22 };
    let opt = format!("/usr/lib/llvm-{major}/bin/opt");
    for llvm in [vec![], vec!["--opt", opt.as_str()]] {
        let out = work.path().join(format!("camp{}", llvm.len()));
        let mut extra = vec![
            "--seeds",
            seeds.to_str().unwrap(),
            "--generator",
            "seeds",
            "--prog-pool",
            "20",
            "--prog-select",
            "20",
        ];
        extra.extend(&llvm);
        let (code, stdout, stderr) = campaign(&out, "sroa\n", &extra);
        assert_eq!(code, 0, "{llvm:?}: {stderr}");
        let left: Vec<_> = std::fs::read_dir(&outside).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(left.is_empty(), "{llvm:?}: the seeds wrote {left:?} outside the campaign");
        let tested = programs(&out).iter().filter(|p| p.status.starts_with("tested")).count();
        assert!(tested >= 9, "{llvm:?}: only {tested} seeds ran: {stdout}");
        assert!(
            stdout.contains("1 left out: 1 a pipeline only of passes that write files or start programs"),
            "{stdout}"
        );
        let mut counts = std::collections::BTreeMap::new();
        for (_, _, left_out) in &cases {
            *counts.entry(*left_out).or_insert(0) += 1;
        }
        for (left_out, n) in counts {
            let what = match left_out.starts_with('-') {
                true => "an option that may name a file or a program",
                false => "a pass that writes files or starts a program",
            };
            let line = format!("{n} {what} left out: {left_out}");
            assert!(stdout.contains(&line), "{llvm:?}: no '{line}' in {stdout}");
        }
    }
}

/// Dev bug 121584's function alone, as a lit test without a driver (LLVM 19): the
/// campaign generates a driver for it, finds the miscompilation by running the function on
/// the driver's inputs, and the bug folder carries the driver, whose README commands show
/// the difference with plain opt, llvm-link and lli.
#[cfg(feature = "llvm19")]
#[test]
fn a_seed_without_main_is_run_by_a_generated_driver_that_shows_its_wrong_code_with_plain_tools() {
    let work = tempfile::tempdir().unwrap();
    let seeds = work.path().join("seeds");
    std::fs::create_dir(&seeds).unwrap();
    let function = std::fs::read_to_string(common::bug("121584", "repro.ll")).unwrap();
    // A second function, which the reduction should take out.
    let other = "define i32 @other(i32 %a, i32 %b) {\n  %s = sub i32 %a, %b\n  %m = mul i32 %s, 3\n  ret i32 %m\n}\n";
    let seed = format!("; RUN: opt -passes=instcombine -S < %s\n{function}{other}");
    std::fs::write(seeds.join("srem.ll"), seed).unwrap();
    let out = work.path().join("camp");
    let sequences = work.path().join("sequences.txt");
    std::fs::write(&sequences, "sroa\n").unwrap();
    let (code, _, stderr) = ctos(&[
        "fuzz",
        "--out",
        out.to_str().unwrap(),
        "--sequences",
        sequences.to_str().unwrap(),
        "--iterations",
        "1",
        // One job: with two, llvm-reduce tests chunks side by side and throws one away.
        "-j",
        "1",
        "--localize-time",
        "0",
        "--reduce-ir-time",
        "60",
        "--also-opt",
        "/usr/lib/llvm-22/bin/opt",
        "--seeds",
        seeds.to_str().unwrap(),
        "--generator",
        "seeds",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let program =
        programs(&out).into_iter().find(|p| p.origin["file"].as_str().is_some_and(|f| f.ends_with("srem.ll")));
    assert!(program.expect("the seed").reference.is_some(), "the seed was not executed");
    let stats: Value = serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["programs_with_drivers"], 1, "{stats}");
    // `shl nsw X, 7` overflows for most inputs: those calls are counted as dropped, by rule.
    let drivers = &stats["drivers"];
    assert!(drivers["calls"].as_u64().is_some_and(|n| n > 0), "{stats}");
    assert!(
        drivers["calls_dropped"]["an nsw or nuw operation that overflows"].as_u64().is_some_and(|n| n > 0),
        "{stats}"
    );
    let folders: Vec<_> = std::fs::read_dir(out.join("bugs")).unwrap().map(|e| e.unwrap().path()).collect();
    let folder = folders.iter().find(|f| f.join("driver.ll").is_file()).expect("a bug folder with the driver");
    let outcome: Value = serde_json::from_str(&std::fs::read_to_string(folder.join("outcome.json")).unwrap()).unwrap();
    assert_eq!(outcome["kind"], "wrong-code", "{outcome}");
    assert_eq!(outcome["pass"], "instcombine", "{outcome}");
    let readme = std::fs::read_to_string(folder.join("README.md")).unwrap();
    // Judged with the driver on each LLVM: fixed in 22.
    assert!(readme.contains("Fires on: 19 ✔ 22 ✘ (fixed in LLVM 22"), "{readme}");
    // Reduced with the driver and its checks: the other function's body goes, the types the
    // driver calls it with stay, and the miscompiled function is whole.
    let reduced = std::fs::read_to_string(folder.join("reduced.ll")).expect("a reduced program");
    assert!(reduced.contains("@other(i32 %a, i32 %b)") && !reduced.contains("%m = mul"), "{reduced}");
    assert!(reduced.contains("%r = srem i8 %BO1, %BO0"), "{reduced}");
    let commands: Vec<&str> =
        readme.lines().filter(|l| l.starts_with("opt-19 ") || l.starts_with("llvm-link-19 ")).collect();
    // The reduced reproducer's three lines come first (the original program's follow).
    assert!(commands.len() >= 3 && commands[0].contains("reduced.ll"), "{readme}");
    let run = |line: &str| {
        let line = line.split("   #").next().unwrap();
        let out = Command::new("bash").arg("-c").arg(line).current_dir(folder).output().unwrap();
        assert!(out.status.success(), "{line}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    run(commands[0]);
    let (optimized, unoptimized) = (run(commands[1]), run(commands[2]));
    assert_ne!(optimized, unoptimized);
    assert!(unoptimized.contains("(i8 -1)"), "{unoptimized}");
}
