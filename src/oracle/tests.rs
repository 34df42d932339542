use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::sandbox::Crash;
use crate::seq::Catalog;

fn run(outcome: Outcome, message: &str) -> Run {
    Run {
        outcome,
        message: (!message.is_empty()).then(|| message.to_string()),
        crash: None,
        ir_hash: None,
        instructions: None,
        ir: None,
        execution: None,
        stderr: String::new(),
        opt_millis: 1.0,
        trace: None,
        timing: None,
        failed_in_element: None,
        focus_class: None,
        pass_runs: None,
        nth_pass_run: None,
        step_counts: None,
        heap: Default::default(),
    }
}

fn exec(status: ExecStatus, stdout: &str) -> Execution {
    Execution { status, stdout: stdout.to_string(), millis: 1.0, codegen_millis: 0.5 }
}

fn executed(status: ExecStatus, stdout: &str) -> Run {
    Run { execution: Some(exec(status, stdout)), ..run(Outcome::Ok, "") }
}

fn crashed(signal: i32, frames: &[&str]) -> Run {
    let crash = Crash {
        signal,
        fault_addr: 0,
        frames: frames.iter().map(|f| f.to_string()).collect(),
        assertion: None,
        stack: Vec::new(),
    };
    Run { crash: Some(crash), ..run(Outcome::Crash, "") }
}

fn fails(observation: Observation) -> Failure {
    match observation {
        Observation::Fails(f) => f,
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn every_optimizer_outcome_has_its_failure_kind() {
    let reference = exec(ExecStatus::Exited(0), "ok\n");
    let cases = [
        (
            run(Outcome::Fatal, "Instruction Combining on main did not reach a fixpoint after 1 iterations"),
            FailureKind::Fatal,
        ),
        (run(Outcome::InvalidIr, "Instruction does not dominate all uses!"), FailureKind::InvalidIr),
        (run(Outcome::Timeout, "optimization did not finish within 5s"), FailureKind::Timeout),
        (run(Outcome::Oom, "out of memory (limit 256 MiB)"), FailureKind::Oom),
        (crashed(libc::SIGSEGV, &["llvm::LoopInfo::erase"]), FailureKind::Crash),
    ];
    for (r, kind) in cases {
        // The optimizer's failure wins whatever the reference says.
        assert_eq!(fails(observe(&r, Some(&reference))).kind, kind, "{:?}", r.outcome);
        assert_eq!(fails(observe(&r, None)).kind, kind);
    }
}

#[test]
fn a_rejected_pipeline_is_neither_a_pass_nor_a_failure() {
    let rejected = run(Outcome::Rejected, "unknown pass name 'bogus'");
    assert_eq!(observe(&rejected, None), Observation::Rejected);
    let oracle = Oracle::of(Failure { kind: FailureKind::Crash, signature: "SIGSEGV".into() }, None);
    assert_eq!(oracle.judge(&rejected, "bogus").unwrap(), Verdict::Rejected);
}

/// LLVM's messages that say the pipeline broke a pass's precondition (passes/misuse.tsv),
/// whether as a fatal error or as the verifier's complaint, are the pipeline's mistake.
#[test]
fn a_pipeline_that_breaks_a_passs_precondition_is_neither_a_pass_nor_a_failure() {
    let cases = [
        (run(Outcome::Fatal, "LICM requires MemorySSA (loop-mssa)"), "loop-mssa"),
        (run(Outcome::InvalidIr, "cannot run CoroSplit before CoroEarly"), "coro-early must run before coro-split"),
    ];
    let oracle =
        Oracle::of(Failure { kind: FailureKind::Fatal, signature: "LICM requires MemorySSA (loop-mssa)".into() }, None);
    for (r, needed) in cases {
        assert!(matches!(observe(&r, None), Observation::Misuse(n) if n.contains(needed)), "{:?}", r.message);
        assert_eq!(oracle.judge(&r, "p").unwrap(), Verdict::Rejected);
    }
    // The same words in a run that ended well mean nothing.
    assert_eq!(observe(&run(Outcome::Ok, "cannot run CoroSplit before CoroEarly"), None), Observation::Clean);
}

#[test]
fn clean_runs_are_clean_with_or_without_a_reference() {
    assert_eq!(observe(&run(Outcome::Ok, ""), None), Observation::Clean);
    let same = executed(ExecStatus::Exited(0), "42\n");
    assert_eq!(observe(&same, Some(&exec(ExecStatus::Exited(0), "42\n"))), Observation::Clean);
    // Without a reference there is nothing to compare the output with.
    assert_eq!(observe(&executed(ExecStatus::Exited(3), "7\n"), None), Observation::Clean);
}

#[test]
fn wrong_code_signatures_say_how_the_execution_differs() {
    let reference = exec(ExecStatus::Exited(0), "42\n");
    let signature = |r: Run| {
        let f = fails(observe(&r, Some(&reference)));
        assert_eq!(f.kind, if f.signature.starts_with("LLVM") { FailureKind::Codegen } else { FailureKind::WrongCode });
        f.signature
    };
    assert_eq!(signature(executed(ExecStatus::Exited(0), "41\n")), "output differs");
    assert_eq!(signature(executed(ExecStatus::Exited(1), "42\n")), "exit code 1");
    assert_eq!(signature(executed(ExecStatus::Signal(libc::SIGFPE), "")), "program killed by SIGFPE");
    let mut stopped = executed(ExecStatus::Timeout, "42\n");
    stopped.execution.as_mut().unwrap().millis = 10_000.0;
    assert_eq!(signature(stopped.clone()), "program does not end");
    // Stopped at twice the unoptimized program's time: no verdict.
    stopped.execution.as_mut().unwrap().millis = 2.0;
    assert_eq!(observe(&stopped, Some(&reference)), Observation::Clean);
    assert_eq!(signature(executed(ExecStatus::Oom, "")), "program out of memory");
    let codegen = fails(observe(&executed(ExecStatus::CodegenError("LLVM ERROR: 12 bad".into()), ""), None));
    assert_eq!((codegen.kind, codegen.signature.as_str()), (FailureKind::Codegen, "LLVM ERROR: N bad"));
}

#[test]
fn signatures_drop_numbers_and_everything_after_the_first_line() {
    let f = fails(observe(&run(Outcome::Fatal, "after 12 iterations: %34 is bad | detail 5\nmore 6"), None));
    assert_eq!(f.signature, "after N iterations: %N is bad");
    let crash = fails(observe(&crashed(libc::SIGSEGV, &["llvm::A::b", "llvm::C::d"]), None));
    assert_eq!(crash.signature, "SIGSEGV in llvm::A::b");
    assert_eq!(fails(observe(&crashed(libc::SIGABRT, &[]), None)).signature, "SIGABRT");
}

/// The verdict classify.rs appends to a lone complaint depends on whether the verifier
/// ran after each pass: a campaign with -verify-each and locseq's coverage run without it
/// must name one failure alike, and a folder written with the verdict still matches.
#[test]
fn an_invalid_ir_signature_is_the_complaint_with_or_without_the_verifiers_verdict() {
    let complaint = "calls to experimental_deoptimize must be followed by a return";
    let with_verdict =
        format!("{complaint} [Broken function found after pass \"UnifyFunctionExitNodesPass\", compilation aborted!]");
    let each = fails(observe(&run(Outcome::InvalidIr, &with_verdict), None));
    let at_end = fails(observe(&run(Outcome::InvalidIr, complaint), None));
    assert_eq!(each.signature, complaint);
    assert_eq!(each, at_end);
    let stored = Failure { kind: FailureKind::InvalidIr, signature: with_verdict.clone() };
    assert!(stored.matches(&at_end) && at_end.matches(&stored));
    let module = fails(observe(
        &run(Outcome::InvalidIr, "PHI nodes cannot have token type! [Broken module found, compilation aborted!]"),
        None,
    ));
    assert_eq!(module.signature, "PHI nodes cannot have token type!");
    let other =
        Failure { kind: FailureKind::InvalidIr, signature: "PHI node entries do not match predecessors!".into() };
    assert!(!stored.matches(&other));
}

#[test]
fn wrong_code_matches_by_kind_other_failures_by_signature_too() {
    let wrong = |s: &str| Failure { kind: FailureKind::WrongCode, signature: s.into() };
    let fatal = |s: &str| Failure { kind: FailureKind::Fatal, signature: s.into() };
    assert!(wrong("output differs").matches(&wrong("program killed by SIGSEGV")));
    assert!(fatal("a").matches(&fatal("a")));
    assert!(!fatal("a").matches(&fatal("b")));
    assert!(!fatal("a").matches(&Failure { kind: FailureKind::InvalidIr, signature: "a".into() }));
}

#[test]
fn the_verdict_separates_the_failure_under_study_from_others() {
    let expected =
        Failure { kind: FailureKind::InvalidIr, signature: "Instruction does not dominate all uses!".into() };
    let mut oracle = Oracle::of(expected, None);
    let same = run(Outcome::InvalidIr, "Instruction does not dominate all uses!");
    let other = run(Outcome::InvalidIr, "PHI node entries do not match predecessors!");
    assert_eq!(oracle.judge(&same, "p").unwrap(), Verdict::Same);
    assert!(matches!(oracle.judge(&other, "p").unwrap(), Verdict::Other(f) if f.kind == FailureKind::InvalidIr));
    assert_eq!(oracle.judge(&run(Outcome::Ok, ""), "p").unwrap(), Verdict::Passes);
    oracle.pattern = Some(regex::Regex::new("does not dominate .* uses").unwrap());
    assert_eq!(oracle.judge(&same, "p").unwrap(), Verdict::Same);
    oracle.pattern = Some(regex::Regex::new("PHI").unwrap());
    assert!(matches!(oracle.judge(&same, "p").unwrap(), Verdict::Other(_)));
}

#[test]
fn wrong_code_oracles_need_executions() {
    let wrong = Oracle::of(Failure { kind: FailureKind::WrongCode, signature: "output differs".into() }, None);
    let crash = Oracle::of(Failure { kind: FailureKind::Crash, signature: "SIGSEGV".into() }, None);
    assert!(wrong.needs_execution());
    assert!(!crash.needs_execution());
}

fn script(dir: &std::path::Path, name: &str, body: &str, mode: u32) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

#[test]
fn a_script_oracle_decides_and_a_broken_one_is_an_error_not_a_no() {
    let dir = tempfile::tempdir().unwrap();
    // Fires when the pipeline (argument 2) mentions gvn.
    let fires = script(dir.path(), "fires.sh", "case \"$2\" in *gvn*) exit 0;; *) exit 1;; esac", 0o755);
    let oracle = Oracle {
        script: Some(ScriptOracle::new(fires, crate::llvm::linked_opt()).unwrap()),
        ..Oracle::of(Failure { kind: FailureKind::WrongCode, signature: String::new() }, None)
    };
    assert_eq!(oracle.judge(&run(Outcome::Ok, ""), "function(gvn)").unwrap(), Verdict::Same);
    assert_eq!(oracle.judge(&run(Outcome::Ok, ""), "function(sroa)").unwrap(), Verdict::Passes);
    assert!(matches!(oracle.judge(&run(Outcome::Fatal, "x"), "function(sroa)").unwrap(), Verdict::Other(_)));

    let missing_tool = script(dir.path(), "missing.sh", "no-such-command-anywhere \"$1\"", 0o755);
    let e = ScriptOracle::new(missing_tool, crate::llvm::linked_opt()).unwrap().fires("sroa").unwrap_err().to_string();
    assert!(e.contains("127"), "{e}");
    let not_executable = script(dir.path(), "plain.sh", "exit 0", 0o644);
    assert!(ScriptOracle::new(not_executable, crate::llvm::linked_opt()).err().unwrap().contains("not executable"));
    assert!(ScriptOracle::new(dir.path().join("absent.sh"), crate::llvm::linked_opt())
        .err()
        .unwrap()
        .contains("absent.sh"));
    assert!(ScriptOracle::new(dir.path().to_path_buf(), crate::llvm::linked_opt())
        .err()
        .unwrap()
        .contains("not a file"));
}

#[test]
fn the_vote_reports_what_differs_unless_most_runs_of_enough_optimized_programs_agree_against_the_reference() {
    let reference = exec(ExecStatus::Exited(0), "1\n");
    let ballot = |status: ExecStatus, stdout: &str, module: u64| Ballot {
        execution: exec(status, stdout),
        module: Some(module),
    };
    let good = |m| ballot(ExecStatus::Exited(0), "1\n", m);
    let bad = |m| ballot(ExecStatus::Exited(0), "2\n", m);
    let killed = |m| ballot(ExecStatus::Signal(libc::SIGSEGV), "", m);
    // Two of five differ: both are wrong code, in order.
    let v = vote(&[good(1), bad(2), good(1), killed(3), good(4)], &reference);
    let Vote::WrongCode(failures) = v else { panic!("{v:?}") };
    assert_eq!(failures.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [1, 3]);
    assert_eq!(failures[1].1.signature, "program killed by SIGSEGV");
    // Three of five, three different optimized programs, agree against the reference: the
    // program is suspect.
    assert_eq!(vote(&[bad(1), bad(2), good(9), bad(3), good(9)], &reference), Vote::Suspect { runs: 3, modules: 3 });
    // One run is no majority of anything: a single sequence's crash is wrong code.
    let v = vote(&[killed(1)], &reference);
    assert!(matches!(&v, Vote::WrongCode(f) if f.len() == 1), "{v:?}");
    // Nor are many sequences that optimize the program alike, or two programs.
    assert!(matches!(vote(&[bad(1), bad(1), bad(1), bad(1)], &reference), Vote::WrongCode(f) if f.len() == 4));
    assert!(matches!(vote(&[bad(1), bad(2), bad(1), good(3)], &reference), Vote::WrongCode(f) if f.len() == 3));
    // Half is not a majority.
    assert!(matches!(vote(&[bad(1), good(2)], &reference), Vote::WrongCode(f) if f.len() == 1));
    // Agreeing with the reference is never suspect.
    assert_eq!(vote(&[good(1), good(2), good(3)], &reference), Vote::WrongCode(Vec::new()));
    assert_eq!(vote(&[], &reference), Vote::WrongCode(Vec::new()));
    // Runs without a hash count as programs of their own.
    let unnamed = Ballot { module: None, ..bad(0) };
    assert_eq!(distinct_modules(&[unnamed.clone(), unnamed, bad(1), bad(1)]), 3);
}

#[test]
fn a_failed_assertion_is_keyed_on_its_text_not_its_frames() {
    let catalog = Catalog::for_llvm(crate::llvm::version().0).unwrap();
    let asserting = |line: u32, frames: &[&str]| {
        let mut run = crashed(libc::SIGABRT, frames);
        let text = format!("LoopInfo.h:{line}: void llvm::f(): Assertion `!L' failed.");
        run.crash.as_mut().unwrap().assertion = Some(text);
        fails(observe(&run, None))
    };
    let (a, b) = (asserting(120, &["llvm::LoopBase::x"]), asserting(131, &["llvm::LoopInfo::y"]));
    assert_eq!(a.signature, "assertion failed: LoopInfo.h:N: void llvm::f(): Assertion `!L' failed.");
    let seq = Sequence::parse("loop-extract", &catalog).unwrap();
    let key =
        |f: &Failure, frames: &[&str]| bug_key(f, &seq, &frames.iter().map(|s| s.to_string()).collect::<Vec<_>>()).0;
    assert_eq!(key(&a, &["llvm::LoopBase::x"]), key(&b, &["llvm::LoopInfo::y"]));
    // Without an assertion the frames key the crash, as before.
    let plain = fails(observe(&crashed(libc::SIGSEGV, &["a"]), None));
    assert_ne!(key(&a, &["a"]), key(&plain, &["a"]));
}

#[test]
fn values_destroyed_while_used_are_keyed_by_where_they_were_destroyed() {
    let catalog = Catalog::for_llvm(crate::llvm::version().0).unwrap();
    let mut run = crashed(libc::SIGABRT, &["llvm::Value::deleteValue"]);
    let text = format!("llvm/lib/IR/Value.cpp: llvm::Value::~Value(): Assertion `materialized_use_empty() && \"{USES_REMAIN}\"' failed.");
    run.crash.as_mut().unwrap().assertion = Some(text);
    let failure = fails(observe(&run, None));
    assert!(failure.signature.contains(USES_REMAIN), "{}", failure.signature);
    let seq = Sequence::parse("loop-deletion", &catalog).unwrap();
    let key = |frames: &[&str]| bug_key(&failure, &seq, &frames.iter().map(|s| s.to_string()).collect::<Vec<_>>()).0;
    let deleted_by = |f: &str| key(&["llvm::Value::deleteValue", "llvm::BasicBlock::~BasicBlock", f]);
    assert_ne!(deleted_by("llvm::deleteDeadLoop"), deleted_by("llvm::MergeBlockIntoPredecessor"));
    assert_eq!(deleted_by("llvm::deleteDeadLoop"), deleted_by("llvm::deleteDeadLoop"));
}

#[test]
fn bug_keys_follow_the_cause_not_the_symptom() {
    let catalog = Catalog::for_llvm(crate::llvm::version().0).unwrap();
    let seq = |text: &str| Sequence::parse(text, &catalog).unwrap();
    let failure = |kind, signature: &str| Failure { kind, signature: signature.into() };

    let crash = failure(FailureKind::Crash, "SIGSEGV in a");
    let frames: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
    let (key, pass) = bug_key(&crash, &seq("sroa,loop-extract"), &frames);
    assert_eq!((key.as_str(), pass.as_str()), ("crash|a < b < c", "loop-extract"));
    // The same three frames under another sequence are the same bug.
    assert_eq!(bug_key(&crash, &seq("gvn"), &frames).0, key);
    // Without frames: the last pass and the signature.
    assert_eq!(bug_key(&crash, &seq("sroa,gvn"), &[]).0, "crash|gvn|SIGSEGV in a");

    let invalid = failure(FailureKind::InvalidIr, "PHI node entries do not match predecessors!");
    assert_eq!(
        bug_key(&invalid, &seq("slp-vectorizer"), &[]).0,
        "invalid-ir|slp-vectorizer|PHI node entries do not match predecessors!"
    );
    assert_eq!(bug_key(&failure(FailureKind::Timeout, "t"), &seq("licm,loop-unroll"), &[]).0, "timeout|loop-unroll");

    let wrong = failure(FailureKind::WrongCode, "output differs");
    let (key, pass) = bug_key(&wrong, &seq("instcombine,gvn,instcombine"), &[]);
    // Pass names, each once, in order: parameters and repeats do not make another bug.
    assert_eq!(key, "wrong-code|instcombine gvn");
    assert_eq!(pass, "instcombine");
    assert_ne!(bug_key(&wrong, &seq("gvn,instcombine"), &[]).0, key, "order matters");

    // A stale analysis found by ctos's check is the culprit's, whatever the frames.
    let verify = ["llvm::ScalarEvolution::verify", "checkPreservedAnalyses(…)::$_0::operator()", "x"].map(String::from);
    let stale = failure(FailureKind::Crash, "SIGABRT in llvm::ScalarEvolution::verify");
    let (indvars, simplify) =
        (bug_key(&stale, &seq("indvars"), &verify).0, bug_key(&stale, &seq("loop-simplifycfg"), &verify).0);
    assert_eq!(indvars, "crash|indvars|llvm::ScalarEvolution::verify");
    assert_ne!(indvars, simplify);
    assert_eq!(key_before_reduction(&stale, &verify), None);

    // Keys that do not depend on the sequence are known before reduction; the rest are not.
    assert_eq!(key_before_reduction(&crash, &frames).as_deref(), Some("crash|a < b < c"));
    assert_eq!(key_before_reduction(&crash, &[]), None);
    assert_eq!(key_before_reduction(&invalid, &[]), None);
    assert_eq!(key_before_reduction(&wrong, &[]), None);
    let codegen = failure(FailureKind::Codegen, "LLVM ERROR: Cannot select");
    assert_eq!(key_before_reduction(&codegen, &[]), Some(bug_key(&codegen, &seq("gvn"), &[]).0));
}

#[test]
fn failure_kinds_round_trip_through_their_names() {
    for kind in FailureKind::ALL {
        assert_eq!(FailureKind::parse(kind.as_str()), Some(kind));
        let json = serde_json::to_value(kind).unwrap();
        assert_eq!(json, kind.as_str());
    }
    assert_eq!(FailureKind::parse("segfault"), None);
}

#[test]
fn once_the_culprit_is_known_a_crash_inside_it_is_the_same_failure_whatever_its_top_frame() {
    let expected = fails(observe(&crashed(libc::SIGSEGV, &["llvm::LoopInfo::erase"]), None));
    let mut oracle = Oracle::of(expected, None);
    let pipeline = "function(sroa),function(loop(loop-simplifycfg))";
    let elsewhere =
        |element| Run { failed_in_element: Some(element), ..crashed(libc::SIGSEGV, &["llvm::Loop::getHeader"]) };
    // Before the culprit is known, the top frame tells failures apart.
    assert!(matches!(oracle.judge(&elsewhere(1), pipeline).unwrap(), Verdict::Other(_)));
    oracle.crash_in = Some("loop-simplifycfg".into());
    assert_eq!(oracle.judge(&elsewhere(1), pipeline).unwrap(), Verdict::Same);
    // A crash in another pass, or one whose pass is unknown, is another failure.
    assert!(matches!(oracle.judge(&elsewhere(0), pipeline).unwrap(), Verdict::Other(_)));
    let unplaced = crashed(libc::SIGSEGV, &["llvm::Loop::getHeader"]);
    assert!(matches!(oracle.judge(&unplaced, pipeline).unwrap(), Verdict::Other(_)));
    // Other kinds keep their signature.
    let fatal = Run { failed_in_element: Some(1), ..run(Outcome::Fatal, "x") };
    assert!(matches!(oracle.judge(&fatal, pipeline).unwrap(), Verdict::Other(_)));
}

/// While reducing a fault: a crash by the same signal under the same pass's `run` is the
/// failure under study, wherever in that pass the bad read fell.
#[test]
fn a_fault_under_the_same_pass_run_is_the_same_failure_whatever_its_top_frame() {
    let frames = ["llvm::BasicBlock::replacePhiUsesWith", "llvm::SplitCallBrEdge", "llvm::UnifyLoopExitsPass::run"];
    let first = crashed(libc::SIGSEGV, &frames);
    let expected = fails(observe(&first, None));
    let mut oracle = Oracle::of(expected.clone(), None);
    oracle.fault_in = fault_pass(&expected, &first.crash.as_ref().unwrap().frames);
    assert_eq!(oracle.fault_in.as_deref(), Some("llvm::UnifyLoopExitsPass::run"));
    let elsewhere = crashed(libc::SIGSEGV, &["llvm::Value::getName", "llvm::UnifyLoopExitsPass::run"]);
    assert_eq!(oracle.judge(&elsewhere, "p").unwrap(), Verdict::Same);
    let other_pass = crashed(libc::SIGSEGV, &["llvm::Value::getName", "llvm::StructurizeCFGPass::run"]);
    assert!(matches!(oracle.judge(&other_pass, "p").unwrap(), Verdict::Other(_)));
    // An assertion is named by its text, never by where it stopped.
    let asserted = Failure { kind: FailureKind::Crash, signature: format!("{ASSERTION}x") };
    assert_eq!(fault_pass(&asserted, &frames.map(String::from)), None);
}
