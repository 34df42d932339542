//! `ctos fuzz` campaigns end to end: the real LLVM, a real SQLite file.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use tempfile::TempDir;

use crate::common;
use common::ctos;

use common::root;

/// `ctos report --json`: the summary record, with the bug records as `bugs`.
fn report(dir: &Path) -> Value {
    let (code, out, err) = ctos(&["report", dir.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["type"], "begin");
    let mut summary = lines.last().unwrap().clone();
    assert_eq!(summary["type"], "summary");
    let bugs: Vec<Value> = lines.iter().filter(|l| l["type"] == "bug").cloned().collect();
    assert_eq!(summary["bugs"], bugs.len());
    summary["bugs"] = bugs.into();
    summary
}

fn pairs_in(dir: &Path) -> i64 {
    report(dir)["pairs"].as_i64().unwrap()
}

/// `--reduce-programs` runs the real cvise with `ctos interesting` as its test: the C
/// program shrinks and still fails the same way (LLVM's test hook crashes on any function).
/// One iteration of a campaign over the user's programs and pipelines, two workers; its
/// bugs are neither reduced as IR nor localized unless `extra` sets a time for it.
fn fuzz_fixed(out: &Path, programs: &Path, sequences: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["fuzz", "--out", out.to_str().unwrap(), "--programs", programs.to_str().unwrap()];
    args.extend_from_slice(&["--sequences", sequences.to_str().unwrap(), "--iterations", "1", "-j", "2"]);
    for step in ["--reduce-ir-time", "--localize-time"] {
        if !extra.iter().any(|a| a.starts_with(step)) {
            args.extend_from_slice(&[step, "0"]);
        }
    }
    args.extend_from_slice(extra);
    ctos(&args)
}

/// Bug-folder steps that tests of other things leave out (each costs a minute or more).
const NO_FOLDER_STEPS: [&str; 4] = ["--reduce-ir-time", "0", "--localize-time", "0"];

#[test]
fn reduce_programs_shrinks_the_c_program_with_cvise() {
    let work = tempfile::tempdir().unwrap();
    let programs = work.path().join("programs");
    std::fs::create_dir(&programs).unwrap();
    let original = root().join("examples/sum.c");
    std::fs::copy(&original, programs.join("sum.c")).unwrap();
    let sequences = work.path().join("sequences.txt");
    std::fs::write(&sequences, "trigger-crash-function\n").unwrap();
    let out = work.path().join("campaign");
    let (code, _, stderr) = ctos(&[
        "fuzz",
        "--out",
        out.to_str().unwrap(),
        "--programs",
        programs.to_str().unwrap(),
        "--sequences",
        sequences.to_str().unwrap(),
        "--reduce-programs",
        "--reduce-programs-time",
        // Far less than cvise takes to its fixpoint (156 s here, two tests at a time): what
        // it left by its limit is smaller already, still fails, and is what the folder keeps.
        // Alone, 2 s already left 361 of the 455 bytes. One job: cvise's time is on the
        // clock, and with two it kept both cores busy for all of it.
        "8",
        "--iterations",
        "1",
        "-j",
        "1",
        "--reduce-ir-time",
        "0",
        "--localize-time",
        "0",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let bugs = report(&out)["bugs"].as_array().unwrap().clone();
    assert_eq!(bugs.len(), 1, "{bugs:?}");
    let folder = out.join(bugs[0]["dir"].as_str().unwrap());
    let readme = std::fs::read_to_string(folder.join("README.md")).unwrap();
    assert!(!readme.contains("not reduced"), "{readme}");
    let reduced = std::fs::read_to_string(folder.join("program.reduced.c")).expect("program.reduced.c");
    assert!(reduced.len() < std::fs::metadata(&original).unwrap().len() as usize, "{reduced}");
    let (code, stdout, _) =
        ctos(&["run", folder.join("program.reduced.ll").to_str().unwrap(), "-p", "trigger-crash-function", "--json"]);
    // 1: the tool worked, and the compiler failed.
    assert_eq!(code, 1);
    assert!(stdout.contains("\"outcome\":\"crash\""), "{stdout}");
}

#[cfg(feature = "llvm22")]
#[test]
fn a_known_failure_is_found_reduced_to_its_pass_and_reported_once() {
    let work = tempfile::tempdir().unwrap();
    let programs = work.path().join("programs");
    std::fs::create_dir(&programs).unwrap();
    let bug = root().join("tests/data/bugs/191714/repro.ll");
    std::fs::copy(&bug, programs.join("slp.ll")).unwrap();
    std::fs::copy(root().join("examples/sum.c"), programs.join("sum.c")).unwrap();
    let sequences = work.path().join("sequences.txt");
    std::fs::write(
        &sequences,
        "forceattrs,lower-expect,slp-vectorizer,globaldce\n\
         slp-vectorizer,constmerge\n\
         lower-expect,slp-vectorizer\n\
         sroa,gvn\n\
         -mem2reg -licm -dce\n",
    )
    .unwrap();
    let out = work.path().join("campaign");
    let (code, stdout, stderr) = fuzz_fixed(&out, &programs, &sequences, &["--llvm-arg=-slp-threshold=-99999"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("1 unique bugs"), "{stdout}");
    let r = report(&out);
    assert_eq!(r["pairs"], 10, "2 programs x 5 sequences");
    let bugs = r["bugs"].as_array().unwrap();
    assert_eq!(bugs.len(), 1, "{bugs:?}");
    let b = &bugs[0];
    assert_eq!(b["kind"], "invalid-ir");
    assert_eq!(b["pass"], "slp-vectorizer");
    assert_eq!(b["reduced"], "function(slp-vectorizer)");
    assert_eq!(b["count"], 3, "three pairs trigger it, one bug");
    let folder = out.join(b["dir"].as_str().unwrap());
    for file in ["program.ll", "reduced.txt", "original.txt", "outcome.json", "README.md"] {
        assert!(folder.join(file).exists(), "{file} missing in {}", folder.display());
    }
    let readme = std::fs::read_to_string(folder.join("README.md")).unwrap();
    assert!(readme.contains("opt-22 -passes='function(slp-vectorizer)' -verify-each -slp-threshold=-99999 program.ll"));
    assert!(readme.contains(
        "ctos run program.ll --passes 'function(slp-vectorizer)' --verify-each --llvm-arg=-slp-threshold=-99999"
    ));
    // The README's own command reproduces the bug.
    let (code, stdout, _) = ctos(&[
        "run",
        folder.join("program.ll").to_str().unwrap(),
        "--passes",
        "function(slp-vectorizer)",
        "--llvm-arg=-slp-threshold=-99999",
        "--json",
    ]);
    assert_eq!(code, 1);
    assert!(stdout.contains("\"outcome\":\"invalid-ir\""), "{stdout}");
    // The folder is a lit test: expectedly failing while the bug fires, and unexpectedly
    // passing on an opt where it no longer does (LLVM 23 has the fix).
    let test = std::fs::read_to_string(folder.join("test.ll")).unwrap();
    let run = "; RUN: %opt -passes='function(slp-vectorizer)' -verify-each -slp-threshold=-99999 %s -disable-output";
    assert!(test.contains(run) && test.contains("; XFAIL: *"), "{test}");
    let lit = |extra: &[&str]| {
        let out = Command::new("/usr/lib/llvm-22/bin/lit").arg("-v").args(extra).arg(&folder).output();
        let out = out.expect("/usr/lib/llvm-22/bin/lit (Debian's llvm-22-tools: run scripts/setup.sh)");
        (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let (passed, text) = lit(&[]);
    assert!(passed && text.contains("XFAIL: ") && text.contains("test.ll"), "{text}");
    let opt23 = root().join("llvm-23/bin/opt");
    assert!(opt23.is_file(), "{} is missing: run scripts/setup.sh", opt23.display());
    // lit 22 says so and still exits 0.
    let (_, text) = lit(&[&format!("-Dopt={}", opt23.display())]);
    assert!(text.contains("XPASS: ") && text.contains("Unexpectedly Passed: 1"), "{text}");
    let issue = std::fs::read_to_string(folder.join("ISSUE.md")).unwrap();
    assert!(issue.contains("## Regression test") && issue.contains(run), "{issue}");
    let stats: Value = serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["pairs"], 10);
    assert_eq!(stats["bugs_by_kind"]["invalid-ir"], 1);
    assert_eq!(stats["rejected_pairs"], 0);
}

/// A failure inside a pass that runs only as another's precondition (unify-loop-exits
/// before structurizecfg) is that pass's: reduction drops a precondition whenever its pass
/// stays, so it ended blamed on structurizecfg. LLVM 22 (and 23.1.4): unify-loop-exits
/// crashes on a loop left by an invoke's unwind edge. Whether it crashes or leaves broken IR
/// depends on the heap around the invoke (the campaign's path length was enough to change
/// it): with no argument the reproduction gave broken IR for three of six path lengths in a
/// rebuilt ctos; with one argument, all 28 of 14 lengths in two builds crashed.
#[cfg(feature = "llvm22")]
#[test]
fn a_crash_inside_a_precondition_pass_is_blamed_on_that_pass() {
    let work = tempfile::tempdir().unwrap();
    let programs = work.path().join("programs");
    std::fs::create_dir(&programs).unwrap();
    let ir = "define void @wombat() personality ptr null {\nbb:\n  br label %bb2\n\nbb2:\n  \
              %invoke = invoke double null(i32 0)\n          to label %bb2 unwind label %bb3\n\nbb3:\n  \
              %landingpad = landingpad { ptr, i32 }\n          cleanup\n  ret void\n}\n";
    std::fs::write(programs.join("unwind.ll"), ir).unwrap();
    let sequences = work.path().join("sequences.txt");
    std::fs::write(&sequences, "sroa,lower-switch,fix-irreducible,unify-loop-exits,structurizecfg,dce\n").unwrap();
    let out = work.path().join("campaign");
    let (code, _, stderr) = fuzz_fixed(&out, &programs, &sequences, &[]);
    assert_eq!(code, 0, "{stderr}");
    let bugs = report(&out)["bugs"].as_array().unwrap().clone();
    assert_eq!(bugs.len(), 1, "{bugs:?}");
    assert_eq!(bugs[0]["kind"], "crash", "{bugs:?}");
    assert_eq!(bugs[0]["pass"], "unify-loop-exits", "{bugs:?}");
    assert_eq!(bugs[0]["reduced"], "function(unify-loop-exits)", "{bugs:?}");
}

/// The pairs committed to a campaign's store, read directly (the campaign may be running):
/// (program, sequence, outcome, IR hash, milliseconds). A pair run again gets a new time.
fn committed_pairs(dir: &Path) -> Vec<(i64, i64, String, Option<String>, f64)> {
    let open = || -> rusqlite::Result<Vec<_>> {
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
        let db = rusqlite::Connection::open_with_flags(dir.join("campaign.sqlite"), flags)?;
        db.busy_timeout(Duration::from_secs(10))?;
        let mut st =
            db.prepare("SELECT program, sequence, outcome, ir_hash, millis FROM pairs ORDER BY program, sequence")?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?;
        rows.collect()
    };
    open().unwrap_or_default()
}

#[test]
fn an_interrupted_campaign_resumes_without_losing_or_redoing_pairs() {
    let work = tempfile::tempdir().unwrap();
    let programs = work.path().join("programs");
    std::fs::create_dir(&programs).unwrap();
    std::fs::copy(root().join("tests/data/csmith-12345.c"), programs.join("p.c")).unwrap();
    let out = work.path().join("campaign");
    let campaign = |extra: &[&str]| {
        let mut args = vec!["fuzz", "--programs", programs.to_str().unwrap(), "-j", "2", "--seq-select", "24"];
        args.extend_from_slice(&["--seq-pool", "200", "--seq-len", "20..40", "--iterations", "1"]);
        args.extend_from_slice(&NO_FOLDER_STEPS);
        args.extend_from_slice(extra);
        args.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctos"))
        .args(campaign(&["--out", out.to_str().unwrap()]))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it (no chance to clean up) once some pairs, but not all, are committed.
    // Polled every 100 ms, at most 1200 times: a broken campaign must not hang the suite.
    for polls in 0.. {
        if committed_pairs(&out).len() >= 4 {
            break;
        }
        assert!(polls < 1200, "the campaign committed no 4 pairs");
        std::thread::sleep(Duration::from_millis(100));
        assert!(child.try_wait().unwrap().is_none(), "the campaign ended before it could be interrupted");
    }
    // Frozen where it is: a fast machine would otherwise finish the plan while the page is
    // made, and there would be nothing left to resume (its workers' results wait unread).
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGSTOP) }, 0);
    // Its page, while it runs: read-only, as of the last commit.
    let page = work.path().join("running.html");
    let (code, _, stderr) = ctos(&["report", out.to_str().unwrap(), "--html", page.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("running, or interrupted"), "{html}");
    child.kill().unwrap();
    child.wait().unwrap();
    let before = committed_pairs(&out);
    assert!(before.len() < 24, "killed too late to test anything ({} pairs)", before.len());
    let (code, _, stderr) = ctos(&["fuzz", "--resume", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    // The resumed run is a second line of throughput.
    let (code, _, stderr) = ctos(&["report", out.to_str().unwrap(), "--html", page.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("run 1") && html.contains("run 2") && html.contains("finished"), "{html}");
    let after = committed_pairs(&out);
    assert_eq!(after.len(), 24, "every pair of the plan is there");
    assert_eq!(pairs_in(&out), 24);
    for pair in &before {
        assert!(after.contains(pair), "pair {pair:?}, committed before the kill, was run again");
    }
    // Starting over in a campaign folder is refused, not silently mixed.
    let (code, _, stderr) =
        ctos(&campaign(&["--out", out.to_str().unwrap()]).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 2);
    assert!(stderr.contains("--resume"), "{stderr}");
}

/// A small campaign of user programs and pipelines that fails in two ways on every
/// program (LLVM's test hooks: trigger-verifier-error breaks the IR, trigger-crash-function
/// crashes).
fn small_campaign(work: &Path, out: &Path, extra: &[&str]) -> (i32, String, String) {
    let programs = work.join("programs");
    if !programs.exists() {
        std::fs::create_dir(&programs).unwrap();
        std::fs::copy(root().join("examples/sum.c"), programs.join("a-sum.c")).unwrap();
        std::fs::copy(root().join("tests/data/csmith-12345.c"), programs.join("b-csmith.c")).unwrap();
        std::fs::write(
            work.join("sequences.txt"),
            "sroa,gvn\ntrigger-verifier-error\ntrigger-crash-function\n# a comment\ninstcombine,simplifycfg\n",
        )
        .unwrap();
    }
    fuzz_fixed(out, &programs, &work.join("sequences.txt"), extra)
}

/// What must agree between campaigns on the same plan: the counts, and each bug's key
/// facts with the failing pairs it stands for.
fn essentials(report: &Value) -> (Value, Value, Value, Vec<String>) {
    let mut bugs: Vec<String> = report["bugs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| format!("{} | {} | {} | {} | {}", b["kind"], b["pass"], b["signature"], b["reduced"], b["count"]))
        .collect();
    bugs.sort();
    (report["pairs"].clone(), report["programs_tested"].clone(), report["failures"].clone(), bugs)
}

#[test]
fn two_shards_merged_equal_one_unsharded_campaign_on_the_same_plan() {
    let work = tempfile::tempdir().unwrap();
    let whole = work.path().join("whole");
    let shards = [work.path().join("s0"), work.path().join("s1")];
    for (out, shard) in [(&whole, "0/1"), (&shards[0], "0/2"), (&shards[1], "1/2")] {
        let (code, _, stderr) = small_campaign(work.path(), out, &["--shard", shard]);
        assert_eq!(code, 0, "shard {shard}: {stderr}");
    }
    let merged = work.path().join("merged");
    let (code, stdout, stderr) =
        ctos(&["merge", "--out", merged.to_str().unwrap(), shards[0].to_str().unwrap(), shards[1].to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("2 unique bugs"), "{stdout}");
    let (whole, merged_report) = (report(&whole), report(&merged));
    assert_eq!(whole["pairs"], 8, "2 programs x 4 pipelines");
    assert_eq!(whole["bugs"].as_array().unwrap().len(), 2, "{whole}");
    assert_eq!(essentials(&merged_report), essentials(&whole));
    // Each shard tested only its own program.
    assert_eq!(report(&shards[0])["programs_tested"], 1);
    assert_eq!(report(&shards[1])["pairs"], 4);
    // Every bug folder of the merged campaign is there.
    for b in merged_report["bugs"].as_array().unwrap() {
        assert!(merged.join(b["dir"].as_str().unwrap()).join("README.md").exists(), "{b}");
    }
    // Reading a campaign changes nothing in it, its page neither.
    let db = std::fs::read(merged.join("campaign.sqlite")).unwrap();
    report(&merged);
    let pages = [work.path().join("whole.html"), work.path().join("merged.html")];
    for (dir, page) in [(work.path().join("whole"), &pages[0]), (merged.clone(), &pages[1])] {
        let (code, _, stderr) = ctos(&["report", dir.to_str().unwrap(), "--html", page.to_str().unwrap()]);
        assert_eq!(code, 0, "{stderr}");
    }
    assert!(std::fs::read(merged.join("campaign.sqlite")).unwrap() == db, "ctos report changed the store");
    // The merged page counts the shards' failures by kind and pass as the whole campaign's does,
    // and draws each shard's throughput.
    let failures_table = |page: &Path| {
        let html = std::fs::read_to_string(page).unwrap();
        let start = html.find("<table id=\"failures\"").expect("a failures table");
        html[start..start + html[start..].find("</table>").unwrap()].to_string()
    };
    assert_eq!(failures_table(&pages[1]), failures_table(&pages[0]));
    let merged_html = std::fs::read_to_string(&pages[1]).unwrap();
    assert!(merged_html.contains("shard 0/2, run 1") && merged_html.contains("shard 1/2, run 1"), "{merged_html}");
    // A shard merged twice, or a folder merged into a used one, is refused.
    let again = work.path().join("again");
    let (code, _, stderr) =
        ctos(&["merge", "--out", again.to_str().unwrap(), shards[0].to_str().unwrap(), shards[0].to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("both shard 0/2"), "{stderr}");
    assert!(!again.exists(), "a refused merge left its folder behind");
}

#[test]
fn a_resumed_campaign_keeps_its_configuration_and_can_be_extended() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("campaign");
    let (code, _, stderr) = small_campaign(work.path(), &out, &["--seed", "3"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(pairs_in(&out), 8);
    let dir = out.to_str().unwrap();
    // A flag that would change the stored configuration is refused, naming what is stored.
    let (code, _, stderr) = ctos(&["fuzz", "--resume", dir, "--seed", "4", "--opt-timeout", "5m"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--seed (stored: 3)") && stderr.contains("--opt-timeout (stored: 30.0)"), "{stderr}");
    // The same values again are no change.
    let (code, _, stderr) = ctos(&["fuzz", "--resume", dir, "--seed", "3"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("has done its 1 iterations"), "{stderr}");
    assert_eq!(pairs_in(&out), 8, "a finished campaign given no more work does none");
    // --iterations extends a finished campaign by that many iterations.
    let (code, _, stderr) = ctos(&["fuzz", "--resume", dir, "--iterations", "1"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(pairs_in(&out), 16);
}

/// The pipelines a campaign planned for `iteration`, read from its store.
fn planned_sequences(dir: &Path, iteration: i64) -> Vec<String> {
    let db =
        rusqlite::Connection::open_with_flags(dir.join("campaign.sqlite"), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut st = db.prepare("SELECT pipeline FROM sequences WHERE iteration = ?1").unwrap();
    st.query_map([iteration], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

/// `--pass-set production` draws only passes, with their parameters, that a default or
/// LTO pipeline runs, and the sequences it draws run.
#[test]
fn a_production_campaign_draws_only_what_default_pipelines_run() {
    let work = tempfile::tempdir().unwrap();
    let programs = work.path().join("programs");
    std::fs::create_dir(&programs).unwrap();
    std::fs::copy(root().join("examples/sum.c"), programs.join("sum.c")).unwrap();
    let out = work.path().join("campaign");
    let mut args = vec!["fuzz", "--out", out.to_str().unwrap(), "--programs", programs.to_str().unwrap()];
    args.extend_from_slice(&["--pass-set", "production", "--seed", "5", "-j", "2", "--iterations", "1"]);
    args.extend_from_slice(&["--seq-pool", "40", "--seq-select", "8", "--seq-len", "20..30"]);
    args.extend_from_slice(&NO_FOLDER_STEPS);
    let (code, _, stderr) = ctos(&args);
    assert_eq!(code, 0, "{stderr}");
    let catalog = ctos::seq::Catalog::for_llvm(ctos::llvm::version().0).unwrap();
    let production: Vec<String> = catalog.set("production").unwrap().iter().map(|p| p.to_string()).collect();
    let sequences = planned_sequences(&out, 0);
    assert_eq!(sequences.len(), 8);
    let mut with_params = 0;
    for text in &sequences {
        let seq = ctos::seq::Sequence::parse(text, &catalog).unwrap();
        for pass in seq.passes() {
            assert!(production.contains(&pass.to_string()), "{pass} is no production pass: {text}");
            with_params += usize::from(pass.params.is_some());
        }
    }
    assert!(with_params > 0, "no pass with the parameters a default pipeline gives it: {sequences:?}");
    assert_eq!(report(&out)["pairs"], 8);
}

/// A bug found in iteration 0 leaves the generator of iteration 1 (unless --keep-known);
/// and the time breakdown in stats.json adds up to the run's wall time.
#[cfg(not(feature = "llvm19"))]
#[test]
fn a_known_cause_leaves_the_generator_and_the_time_breakdown_adds_up() {
    use common::bug;
    let work = tempfile::tempdir().unwrap();
    let programs = work.path().join("programs");
    std::fs::create_dir(&programs).unwrap();
    std::fs::copy(bug("191714", "repro.ll"), programs.join("slp.ll")).unwrap();
    let campaign = |name: &str, extra: &[&str]| {
        let out = work.path().join(name);
        let mut args = vec!["fuzz", "--out", out.to_str().unwrap(), "--programs", programs.to_str().unwrap()];
        args.extend_from_slice(&["--llvm-arg=-slp-threshold=-99999", "--seed", "2", "-j", "2"]);
        args.extend_from_slice(&["--seq-pool", "60", "--seq-select", "12", "--seq-len", "30..40", "--iterations", "2"]);
        args.extend_from_slice(&NO_FOLDER_STEPS);
        args.extend_from_slice(extra);
        let (code, _, stderr) = ctos(&args);
        assert_eq!(code, 0, "{stderr}");
        out
    };
    let has_slp = |seqs: &[String]| seqs.iter().filter(|s| s.contains("slp-vectorizer")).count();
    let out = campaign("default", &[]);
    let r = report(&out);
    let bugs = r["bugs"].as_array().unwrap();
    assert!(bugs.iter().any(|b| b["reduced"] == "function(slp-vectorizer)"), "{bugs:?}");
    assert!(has_slp(&planned_sequences(&out, 0)) > 0, "iteration 0 must find the bug to test anything");
    assert_eq!(has_slp(&planned_sequences(&out, 1)), 0, "{:?}", planned_sequences(&out, 1));
    let kept = campaign("keep", &["--keep-known"]);
    assert!(has_slp(&planned_sequences(&kept, 1)) > 0, "--keep-known keeps the pass");

    let stats: Value = serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap();
    let elapsed = stats["elapsed_seconds"].as_f64().unwrap();
    let phases = stats["seconds_by_phase"].as_object().unwrap();
    let accounted: f64 = phases.values().map(|v| v.as_f64().unwrap()).sum();
    assert!((accounted - elapsed).abs() <= 0.03 * elapsed, "{accounted} s of {elapsed} s: {phases:?}");
    for phase in ["testing", "compiling (clang)", "sequence generation", "sequence embedding (doc2vec)"] {
        assert!(phases.contains_key(phase), "{phase} missing: {phases:?}");
    }
}

/// Two csmith programs on which LLVM 22's loop-extract crashes with different top frames
/// (`LoopInfo::erase`, `LoopBase::removeBlockFromLoop`), and the sequences a seed-11
/// campaign reduced their failures to: two keys, one cause.
#[cfg(feature = "llvm22")]
#[test]
fn two_failures_of_one_cause_with_different_top_frames_are_one_bug_and_stay_one_when_merged() {
    let work = tempfile::tempdir().unwrap();
    let programs = work.path().join("programs");
    std::fs::create_dir(&programs).unwrap();
    for (name, seed) in [("a.c", "2229973549"), ("b.c", "2646955483")] {
        let out = Command::new("csmith").args(["--seed", seed]).output().unwrap();
        assert!(out.status.success());
        std::fs::write(programs.join(name), out.stdout).unwrap();
    }
    let sequences = work.path().join("sequences.txt");
    std::fs::write(
        &sequences,
        "function(lower-switch,fix-irreducible,unify-loop-exits,structurizecfg),loop-extract,\
         function(simplifycfg,instcombine<no-verify-fixpoint>,simplifycfg),loop-extract\n\
         loop-extract,function(instcombine<no-verify-fixpoint>,simplifycfg),loop-extract\n",
    )
    .unwrap();
    let out = work.path().join("campaign");
    let (code, stdout, stderr) = fuzz_fixed(&out, &programs, &sequences, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("3 failures, 1 unique bugs"), "{stdout}");
    let merged = work.path().join("merged");
    let (code, _, stderr) = ctos(&["merge", "--out", merged.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    for dir in [&out, &merged] {
        let bugs = report(dir)["bugs"].as_array().unwrap().clone();
        assert_eq!(bugs.len(), 1, "{bugs:?}");
        let (bug, variants) = (&bugs[0], bugs[0]["variants"].as_array().unwrap());
        assert_eq!((bug["kind"].as_str(), bug["pass"].as_str()), (Some("crash"), Some("loop-extract")));
        assert_eq!(bug["count"], 3);
        assert_eq!(variants.len(), 1, "{bug}");
        let signatures = [bug["signature"].as_str().unwrap(), variants[0]["signature"].as_str().unwrap()];
        assert!(signatures.contains(&"SIGSEGV in llvm::LoopInfo::erase"), "{signatures:?}");
        assert!(
            signatures.iter().any(|s| s.contains("removeBlockFromLoop") && !s.contains("LoopInfo::erase")),
            "{signatures:?}"
        );
        let folder = dir.join(variants[0]["dir"].as_str().unwrap());
        assert!(folder.starts_with(dir.join(bug["dir"].as_str().unwrap())), "{}", folder.display());
        for file in ["program.c", "reduced.txt"] {
            assert!(folder.join(file).exists(), "{file} missing in {}", folder.display());
        }
        let readme = std::fs::read_to_string(dir.join(bug["dir"].as_str().unwrap()).join("README.md")).unwrap();
        assert!(readme.contains("## Also seen as"), "{readme}");
    }
}

/// Programs are screened for undefined behaviour only when a wrong-code verdict depends on
/// it: this one's signed overflow makes instcombine's output differ from the unoptimized
/// run's, which is no compiler bug.
#[test]
fn a_wrong_code_verdict_on_a_program_with_undefined_behaviour_is_not_a_bug() {
    let work = tempfile::tempdir().unwrap();
    let programs = work.path().join("programs");
    std::fs::create_dir(&programs).unwrap();
    std::fs::write(
        programs.join("overflow.c"),
        "#include <stdio.h>\nint f(int x) { return x + 1 > x; }\n\
         int main(void) { volatile int v = 2147483647; printf(\"%d\\n\", f(v)); return 0; }\n",
    )
    .unwrap();
    let sequences = work.path().join("sequences.txt");
    std::fs::write(&sequences, "function(instcombine)\nfunction(sroa)\nfunction(dce)\nfunction(adce)\n").unwrap();
    let out = work.path().join("campaign");
    let (code, stdout, stderr) = fuzz_fixed(&out, &programs, &sequences, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("0 failures, 0 unique bugs"), "{stdout}");
    let db = rusqlite::Connection::open(out.join("campaign.sqlite")).unwrap();
    let status: String = db.query_row("SELECT status FROM programs", [], |r| r.get(0)).unwrap();
    assert!(
        status.starts_with("skipped: undefined behaviour:") && status.contains("signed integer overflow"),
        "{status}"
    );
    let outputs: Vec<String> = db
        .prepare("SELECT exec FROM pairs")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(outputs.iter().filter(|e| e.contains("\"stdout\":\"1\\n\"")).count(), 1, "{outputs:?}");
}

/// A campaign of `program` (of tests/data) under `sequence` alone, as a user reproducing a
/// bug they have runs it: its work folder, its folder and what it printed.
fn one_program_under_one_sequence(program: &str, sequence: &str, extra: &[&str]) -> (TempDir, PathBuf, String) {
    let work = tempfile::tempdir().unwrap();
    let programs = work.path().join("programs");
    std::fs::create_dir(&programs).unwrap();
    std::fs::copy(root().join("tests/data").join(program), programs.join(program)).unwrap();
    let sequences = work.path().join("sequences.txt");
    std::fs::write(&sequences, format!("{sequence}\n")).unwrap();
    let out = work.path().join("campaign");
    let (code, stdout, stderr) = fuzz_fixed(&out, &programs, &sequences, extra);
    assert_eq!(code, 0, "{stderr}");
    (work, out, stdout)
}

/// A user reproducing a bug they have runs one program under one sequence: one optimized
/// run is no majority, so its wrong code is judged by the oracle (and the C program's
/// screening) alone, reported, and the report says so.
#[test]
fn a_program_run_under_one_sequence_is_judged_by_the_oracle_alone_and_its_wrong_code_reported() {
    // A miscompilation of the linked LLVM's: the SLP vectorizer's on LLVM 22, indvars' on 19.
    let (program, sequence, extra): (&str, &str, &[&str]) = match ctos::llvm::version().0 {
        22 => ("slp-sub-mul-180456.ll", "slp-vectorizer", &["--llvm-arg=-slp-threshold=-50"]),
        _ => ("float-loop-166496.c", "default<O1>", &[]),
    };
    let (_work, out, stdout) = one_program_under_one_sequence(program, sequence, extra);
    let db = rusqlite::Connection::open(out.join("campaign.sqlite")).unwrap();
    let status: String = db.query_row("SELECT status FROM programs", [], |r| r.get(0)).unwrap();
    assert!(status.starts_with("tested: 1 optimized run, 1 different optimized program: too few"), "{status}");
    let bugs = report(&out)["bugs"].as_array().unwrap().clone();
    assert_eq!(bugs.len(), 1, "{stdout}");
    assert_eq!(bugs[0]["kind"], "wrong-code");
    let issue = std::fs::read_to_string(out.join(bugs[0]["dir"].as_str().unwrap()).join("ISSUE.md")).unwrap();
    assert!(issue.contains("too few for a majority of them to say whether the program is undefined"), "{issue}");
}

/// The scalarizer's read past its stack vector (dev bug 179880) faults on the strict heap:
/// the folder records the heap, and its README and draft say what plain opt may show.
#[cfg(feature = "llvm22")]
#[test]
fn a_failure_the_strict_heap_shows_says_what_plain_opt_may_show_of_it() {
    let (_work, out, _) =
        one_program_under_one_sequence("scalarizer-179880.ll", "function(scalarizer<load-store>,dce)", &[]);
    let bugs = report(&out)["bugs"].as_array().unwrap().clone();
    assert_eq!((bugs.len(), bugs[0]["kind"].as_str()), (1, Some("crash")), "{bugs:?}");
    let folder = out.join(bugs[0]["dir"].as_str().unwrap());
    let outcome: Value = serde_json::from_str(&std::fs::read_to_string(folder.join("outcome.json")).unwrap()).unwrap();
    assert_eq!(outcome["heap"], "strict", "{outcome}");
    for file in ["README.md", "ISSUE.md"] {
        let text = std::fs::read_to_string(folder.join(file)).unwrap();
        assert!(text.contains("(its strict heap)") && text.contains("may fail otherwise, or not at all"), "{text}");
    }
}

#[test]
fn ctos_emi_writes_the_same_variants_for_the_same_seed() {
    let work = tempfile::tempdir().unwrap();
    let program = root().join("tests/data/csmith-12345.c");
    let emi = |name: &str, seed: &str| {
        let out = work.path().join(name);
        let args =
            ["emi", program.to_str().unwrap(), "-n", "2", "--seed", seed, "--out", out.to_str().unwrap(), "--json"];
        let (code, stdout, stderr) = ctos(&args);
        assert_eq!(code, 0, "{stderr}");
        let variants: Vec<Value> = stdout
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|l| l["type"] == "variant")
            .collect();
        assert_eq!(variants.len(), 2);
        assert!(variants
            .iter()
            .all(|v| v["same_output"] == true && v["fcb"].as_u64().unwrap() + v["tcb"].as_u64().unwrap() > 0));
        (1..=2).map(|k| std::fs::read_to_string(out.join(format!("variant-{k:02}.c"))).unwrap()).collect::<Vec<_>>()
    };
    let first = emi("a", "5");
    assert_eq!(first, emi("b", "5"));
    assert_ne!(first, emi("c", "6"));
}

/// `--generator hermes`: the programs tested are EMI variants of a clean csmith program,
/// each unoptimized printing what its csmith program prints.
#[test]
fn a_hermes_campaign_tests_emi_variants_that_print_their_seeds_output() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("hermes");
    let args = ["fuzz", "--out", out.to_str().unwrap(), "--generator", "hermes", "--iterations", "1", "-j", "2"];
    let sizes = ["--prog-pool", "10", "--prog-select", "2", "--seq-select", "4", "--seq-len", "20..30", "--seed", "3"];
    let (code, _, stderr) = ctos(&[&args[..], &sizes[..], &NO_FOLDER_STEPS[..]].concat());
    assert_eq!(code, 0, "{stderr}");
    let db = rusqlite::Connection::open(out.join("campaign.sqlite")).unwrap();
    let rows: Vec<(String, String, String)> = db
        .prepare("SELECT name, status, origin FROM programs")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows.len(), 2);
    for (name, status, origin) in &rows {
        let origin: Value = serde_json::from_str(origin).unwrap();
        assert_eq!(origin["generator"], "hermes", "{name}");
        assert!(origin["variant"].as_u64().is_some_and(|v| (1..=10).contains(&v)), "{origin}");
        assert_eq!(status, "tested", "{name}");
    }
    let stats: Value = serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["emi_mismatches"], 0);
    assert_eq!(stats["pairs"], 8);

    // What a bug folder's README says makes the variant again: csmith, then ctos emi.
    let (name, _, origin) = &rows[0];
    let origin: Value = serde_json::from_str(origin).unwrap();
    let args: Vec<&str> = origin["csmith_args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    let csmith = Command::new("csmith").args(&args).output().unwrap();
    let seed = work.path().join("seed.c");
    std::fs::write(&seed, &csmith.stdout).unwrap();
    let (variant, emi_seed) = (origin["variant"].as_u64().unwrap(), origin["emi_seed"].as_u64().unwrap().to_string());
    let again = work.path().join("again");
    let n = variant.to_string();
    let (code, _, stderr) =
        ctos(&["emi", seed.to_str().unwrap(), "-n", &n, "--seed", &emi_seed, "--out", again.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let made = std::fs::read_to_string(again.join(format!("variant-{variant:02}.c"))).unwrap();
    assert_eq!(made, std::fs::read_to_string(out.join(format!("programs/{name}.c"))).unwrap());
}

/// A development bug of the linked LLVM for a campaign to find: its program, pipelines
/// that hit it, the LLVM options it needs, its oracle kind and its fix file.
struct DevBug {
    id: &'static str,
    sequences: &'static str,
    llvm_args: &'static [&'static str],
    oracle: &'static str,
    fix_file: &'static str,
}

#[cfg(feature = "llvm22")]
const DEV_BUG: DevBug = DevBug {
    id: "191714",
    sequences: "forceattrs,lower-expect,slp-vectorizer,globaldce\nslp-vectorizer,constmerge\nsroa,gvn\n",
    llvm_args: &["--llvm-arg=-slp-threshold=-99999"],
    oracle: "invalid-ir",
    fix_file: "llvm/lib/Transforms/Vectorize/SLPVectorizer.cpp",
};

#[cfg(feature = "llvm19")]
const DEV_BUG: DevBug = DevBug {
    id: "147869",
    sequences: "loop-simplifycfg\nsroa,loop-simplifycfg,gvn\nsroa,gvn\n",
    llvm_args: &[],
    oracle: "crash",
    fix_file: "llvm/lib/Transforms/Scalar/LoopSimplifyCFG.cpp",
};

fn locseq(args: &[&str]) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_locseq")).args(args).output().expect("run locseq");
    assert_eq!(out.status.code(), Some(0), "locseq {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn of_type<'a>(records: &'a [Value], kind: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["type"] == kind).collect()
}

fn assert_loads_cleanly(page: &Path, table: &str) {
    let loaded = common::load_in_chromium(page);
    assert!(loaded.console.is_empty(), "{}: {:?}", page.display(), loaded.console);
    assert!(loaded.dom.contains(&format!("id=\"{table}\"")), "{}: no table {table}", page.display());
    let html = std::fs::read_to_string(page).unwrap();
    // (SVG's xmlns names a namespace; nothing is fetched from it.)
    for outside in ["src=\"http", "href=\"http", "<script", "<link", "url(", "@import"] {
        assert!(!html.contains(outside), "{}: the page refers outside itself ({outside})", page.display());
    }
}

/// A real campaign's page holds what `ctos report --json` says and loads cleanly; its bug
/// folder goes straight into `locseq isolate`, which ranks as the long command does, and
/// the isolation's page holds what its `--json` says.
#[test]
fn a_campaign_and_its_bugs_localization_as_pages_and_the_bug_folder_handed_to_locseq() {
    use common::{bug, html_escaped};
    let work = tempfile::tempdir().unwrap();
    let programs = work.path().join("programs");
    std::fs::create_dir(&programs).unwrap();
    std::fs::copy(bug(DEV_BUG.id, "repro.ll"), programs.join("bug.ll")).unwrap();
    std::fs::copy(root().join("examples/sum.c"), programs.join("sum.c")).unwrap();
    let sequences = work.path().join("sequences.txt");
    std::fs::write(&sequences, DEV_BUG.sequences).unwrap();
    let out = work.path().join("campaign");
    let (code, _, stderr) = fuzz_fixed(&out, &programs, &sequences, DEV_BUG.llvm_args);
    assert_eq!(code, 0, "{stderr}");

    let page = work.path().join("campaign.html");
    let (code, _, stderr) = ctos(&["report", out.to_str().unwrap(), "--html", page.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let r = report(&out);
    let html = std::fs::read_to_string(&page).unwrap();
    for (label, key) in [("pairs", "pairs"), ("programs tested", "programs_tested"), ("failures", "failures")] {
        let cell = format!("<td>{label}</td><td class=\"num\">{}</td>", r[key]);
        assert!(html.contains(&cell), "{cell} missing");
    }
    let bugs = r["bugs"].as_array().unwrap();
    assert!(html.contains(&format!("<td>unique bugs</td><td class=\"num\">{}</td>", bugs.len())));
    assert_eq!(bugs.len(), 1, "{bugs:?}");
    for b in bugs {
        for key in ["reduced", "signature", "localize", "kind"] {
            let text = html_escaped(b[key].as_str().unwrap());
            assert!(html.contains(&text), "{key} {text} missing");
        }
        assert!(html.contains(&format!("<td class=\"num\">{}</td>", b["count"])), "count {} missing", b["count"]);
        assert!(html.contains(&format!("campaign/{}/\"", b["dir"].as_str().unwrap())), "no link to {}", b["dir"]);
    }
    assert!(html.matches("<svg").count() >= 4, "throughput, bugs, failures by pass and by kind");
    assert_loads_cleanly(&page, "bugs");
    // The check above can fail: a page with a script error is caught.
    let broken = work.path().join("broken.html");
    std::fs::write(&broken, "<html><body><table id=\"bugs\"></table><script>nope();</script></body></html>").unwrap();
    assert!(!common::load_in_chromium(&broken).console.is_empty(), "a console error went unseen");

    let folder = out.join(bugs[0]["dir"].as_str().unwrap());
    let readme = std::fs::read_to_string(folder.join("README.md")).unwrap();
    assert!(readme.contains("```sh\nlocseq isolate .\n```"), "{readme}");
    let budget = ["--max-evals", "150", "--time", "600", "-j", "2", "--json"];
    let isolation_page = work.path().join("isolation.html");
    let mut args = vec!["isolate", folder.to_str().unwrap(), "--html", isolation_page.to_str().unwrap()];
    args.extend_from_slice(&budget);
    let handed = locseq(&args);
    let reduced = folder.join("reduced.txt");
    let program = folder.join("program.ll");
    let mut args = vec!["isolate", reduced.to_str().unwrap(), program.to_str().unwrap(), "--oracle", DEV_BUG.oracle];
    args.extend_from_slice(DEV_BUG.llvm_args);
    args.extend_from_slice(&budget);
    let typed = locseq(&args);

    let (a, b) = (of_type(&handed, "summary")[0], of_type(&typed, "summary")[0]);
    for key in ["failure", "reduced"] {
        assert_eq!(a[key], b[key], "{key}");
    }
    assert_eq!(a["culprit"]["pass"], b["culprit"]["pass"]);
    let files = |records: &[Value]| -> Vec<String> {
        of_type(records, "file").iter().map(|f| f["path"].as_str().unwrap().to_string()).collect()
    };
    let (handed_files, typed_files) = (files(&handed), files(&typed));
    assert_eq!(handed_files[0], DEV_BUG.fix_file);
    assert_eq!(typed_files[0], DEV_BUG.fix_file);
    // Coverage of one run varies by a few elements in thousands between runs (LLVM's
    // pointer-keyed maps), so near-equal scores may swap: the same files lead, in nearly
    // the same order.
    for file in handed_files.iter().take(10) {
        assert!(typed_files.iter().take(20).any(|f| f == file), "{file}: {handed_files:?} vs {typed_files:?}");
    }

    let html = std::fs::read_to_string(&isolation_page).unwrap();
    let stats = &a["stats"];
    for (label, key) in [("evaluations", "evaluations"), ("bug-free (witnesses)", "passing")] {
        let cell = format!("<td>{label}</td><td class=\"num\">{}</td>", stats[key]);
        assert!(html.contains(&cell), "{cell} missing");
    }
    for f in of_type(&handed, "file").iter().take(20) {
        // Score, elements, what placed the file (its evidence cell starts with it), path.
        let start = format!(
            "{:.4}</span></td><td class=\"num\">{}</td><td><span class=\"nowrap\">{}",
            f["score"].as_f64().unwrap(),
            f["elements"],
            f["evidence"]["placed"].as_str().unwrap()
        );
        let at = html.find(&start).unwrap_or_else(|| panic!("{start} missing"));
        let row = &html[at..at + html[at..].find("</tr>").unwrap()];
        assert!(row.contains(&format!("</td><td>{}</td>", f["path"].as_str().unwrap())), "{row}");
    }
    let closest = of_type(&handed, "witness")[0]["similarity"].as_f64().unwrap();
    assert!(html.contains(&format!("{closest:.3}</span>")), "closest witness {closest:.3} missing");
    let history = &a["history"];
    assert_eq!(history["progress"].as_array().unwrap().last().unwrap()["evaluations"], stats["evaluations"]);
    assert_eq!(history["files"][0], DEV_BUG.fix_file);
    assert!(history["scores"].as_array().unwrap().len() >= 2, "scores over time: {history}");
    assert_loads_cleanly(&isolation_page, "ranking");
}
