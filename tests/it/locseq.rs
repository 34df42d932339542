//! `locseq` end to end, on the development bugs and the real LLVM.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

/// A bug folder of tests/data/bugs (the format of the development bench), by its issue number.
fn bug_dir(id: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/bugs").join(id)
}

fn bug(id: &str, file: &str) -> String {
    let path = bug_dir(id).join(file);
    assert!(path.exists(), "{} is missing from the checkout", path.display());
    path.display().to_string()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("locseq-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn locseq(args: &[&str]) -> Out {
    let out = Command::new(env!("CARGO_BIN_EXE_locseq")).args(args).output().expect("run locseq");
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The JSON Lines of `locseq … --json` on stdout, checked for their envelope.
fn records(out: &Out) -> Vec<Value> {
    let lines: Vec<Value> = out.stdout.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    assert_eq!(lines.first().map(|l| l["type"].clone()), Some("begin".into()), "{}", out.stdout);
    assert_eq!(lines.last().map(|l| l["type"].clone()), Some("summary".into()), "{}", out.stdout);
    lines
}

/// `locseq isolate … --json`, as {begin, isolation: summary with `ranking`, `functions`
/// and `witnesses`}; evaluations are capped so runs are repeatable.
fn isolate(args: &[&str]) -> Value {
    let mut all = vec!["isolate", "--time", "600", "--json"];
    if !args.contains(&"--max-evals") {
        all.extend(["--max-evals", "300"]);
    }
    all.extend_from_slice(args);
    let out = locseq(&all);
    assert_eq!(out.code, 0, "locseq {all:?}: {}", out.stderr);
    let lines = records(&out);
    let of = |kind: &str| Value::from(lines.iter().filter(|l| l["type"] == kind).cloned().collect::<Vec<_>>());
    let mut isolation = lines.last().unwrap().clone();
    isolation["ranking"] = of("file");
    isolation["functions"] = of("function");
    isolation["witnesses"] = of("witness");
    let mut report = lines[0].clone();
    report["isolation"] = isolation;
    report
}

/// `isolate` on a bench bug whose program runs through its driver.ll.
fn isolate_with_driver(id: &str, extra: &[&str]) -> Value {
    let files = [bug(id, "seq.txt"), bug(id, "repro.ll"), bug(id, "driver.ll")];
    let mut args = vec![files[0].as_str(), files[1].as_str(), "--driver", files[2].as_str()];
    args.extend_from_slice(extra);
    isolate(&args)
}

fn rank_of(report: &Value, path: &str) -> Option<u64> {
    report["isolation"]["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == path)
        .map(|r| r["rank"].as_u64().unwrap())
}

/// IR without `main` whose bug is wrong code (tests/data/irce-udiv.ll: irce leaves a
/// division by zero in the entry block): locseq generates a driver, keeps it beside the
/// page, reproduces the undefined behaviour the optimized calls show, and ranks files.
#[test]
fn a_wrong_code_bug_of_ir_without_main_is_isolated_with_a_generated_driver() {
    let seq = temp("irce.seq");
    std::fs::write(&seq, "function(irce)\n").unwrap();
    let program = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/irce-udiv.ll");
    let page = temp("irce.html");
    let report = isolate(&[
        seq.to_str().unwrap(),
        program.to_str().unwrap(),
        "--max-evals",
        "60",
        "--html",
        page.to_str().unwrap(),
    ]);
    let isolation = &report["isolation"];
    let failure = &isolation["failure"];
    assert_eq!(
        (&failure["kind"], &failure["signature"]),
        (&"wrong-code".into(), &"undefined behaviour: a division by zero".into())
    );
    assert_eq!(isolation["culprit"]["pass"], "irce", "{isolation}");
    // IRCE has no debug counter (and LLVM 19's release build no counters at all).
    let notes = isolation["notes"].to_string();
    assert!(isolation["transformation"].is_null() && notes.contains("no transformation named"), "{notes}");
    assert!(!isolation["ranking"].as_array().unwrap().is_empty(), "{isolation}");
    let driver = std::fs::read_to_string(page.with_extension("driver.ll")).unwrap();
    assert!(driver.contains("@f(i64 0)"), "{driver}");
    // The page ranks functions too, across files, with each one's file.
    let html = std::fs::read_to_string(&page).unwrap();
    let first = &isolation["functions"][0];
    let file = format!("{} (file rank {})", first["file"].as_str().unwrap(), first["file_rank"]);
    assert!(html.contains("Ranked functions") && html.contains(&file), "{first}");
}

#[test]
fn a_sequence_that_does_not_fail_is_reported_and_nothing_else_happens() {
    let seq = temp("ok-seq.txt");
    std::fs::write(&seq, "sroa,gvn\n").unwrap();
    let out = locseq(&["isolate", seq.to_str().unwrap(), &bug("191714", "repro.ll"), "--time", "5"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("does not reproduce"), "{}", out.stderr);
}

/// LLVM's test hook crashes on every function: no mutant of the program is bug-free, and
/// the report says what the ranking then rests on.
#[test]
fn a_program_search_without_witnesses_says_so() {
    let seq = temp("crash-seq.txt");
    std::fs::write(&seq, "trigger-crash-function\n").unwrap();
    let sum = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/sum.c");
    let report = isolate(&[seq.to_str().unwrap(), sum.to_str().unwrap(), "--strategy", "diwi", "--max-evals", "20"]);
    let isolation = &report["isolation"];
    assert_eq!(isolation["stats"]["passing"], 0, "{isolation}");
    let notes = isolation["notes"].to_string();
    assert!(notes.contains("no bug-free mutant found"), "{notes}");
}

/// `LICM requires MemorySSA` says the pipeline was wrong, not LLVM: nothing to isolate.
#[test]
fn a_pipeline_that_breaks_a_passs_precondition_is_not_a_bug_to_isolate() {
    let seq = temp("licm-seq.txt");
    std::fs::write(&seq, "function(loop(licm))\n").unwrap();
    let sum = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/sum.c");
    let out = locseq(&["isolate", seq.to_str().unwrap(), sum.to_str().unwrap(), "--time", "5"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("not a bug: LLVM says the pipeline"), "{}", out.stderr);
    assert!(out.stderr.contains("licm runs only inside loop-mssa"), "{}", out.stderr);
}

/// A bug folder in the bench's format whose `type` is crash, as its user calls an
/// `LLVM ERROR`, and whose oracle's pattern names that error: the pattern decides, and the
/// fatal error is the failure under study.
#[test]
fn a_crash_folder_whose_pattern_names_an_llvm_error_isolates_as_that_fatal_error() {
    let folder = temp("llvm-error-folder");
    std::fs::create_dir_all(&folder).unwrap();
    let sum = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/sum.c");
    let ir = Command::new("/usr/lib/llvm-".to_string() + &ctos::llvm::version().0.to_string() + "/bin/clang")
        .args(["-O0", "-Xclang", "-disable-O0-optnone", "-emit-llvm", "-S", "-o"])
        .arg(folder.join("repro.ll"))
        .arg(&sum)
        .status()
        .unwrap();
    assert!(ir.success());
    // InstCombine asked to reach its fixpoint in no iteration stops with an LLVM ERROR on
    // any function it would change.
    std::fs::write(folder.join("seq.txt"), "function(sroa,instcombine<max-iterations=0;verify-fixpoint>)\n").unwrap();
    std::fs::write(folder.join("meta.json"), r#"{"type": "crash", "title": "opt crashes", "fix_files": []}"#).unwrap();
    let conf = "TYPE=\"crash\"\nPATTERN='LLVM ERROR: Instruction Combining'\nEXTRA=\"\"\n";
    std::fs::write(folder.join("oracle.conf"), conf).unwrap();
    let report = isolate(&[folder.to_str().unwrap(), "--max-evals", "40"]);
    assert_eq!(report["isolation"]["failure"]["kind"], "fatal", "{}", report["isolation"]);
    // Without the pattern the folder's kind decides, and a fatal error is no crash.
    std::fs::write(folder.join("oracle.conf"), "TYPE=\"crash\"\nPATTERN=''\n").unwrap();
    let out = locseq(&["isolate", folder.to_str().unwrap(), "--max-evals", "40"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("expected a crash failure, but the run shows fatal"), "{}", out.stderr);
}

#[test]
fn bad_oracles_and_options_are_clear_errors() {
    let seq = bug("191714", "seq.txt");
    let out = locseq(&["isolate", &seq, &bug("191714", "repro.ll"), "--oracle", "bogus"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("unknown oracle 'bogus'"), "{}", out.stderr);
    let out = locseq(&["isolate", &seq, &bug("191714", "repro.ll"), "--crossover", "1.5"]);
    assert!(out.code == 2 && out.stderr.contains("--crossover"), "{}", out.stderr);
}

#[cfg(feature = "llvm22")]
mod llvm22 {
    use super::*;

    /// `isolate` on bench bug 191714, with the SLP threshold it needs.
    fn isolate_191714(extra: &[&str]) -> Value {
        let files = [bug("191714", "seq.txt"), bug("191714", "repro.ll")];
        let mut args = vec![files[0].as_str(), files[1].as_str(), "--llvm-arg=-slp-threshold=-99999"];
        args.extend_from_slice(extra);
        isolate(&args)
    }

    /// GVN's crash on an instruction it freed, which plain opt-22 shows every time (and
    /// the strict heap alone hides): locseq reproduces it and isolates it.
    #[test]
    fn bug_219885_a_crash_plain_opt_shows_reproduces() {
        let seq = temp("gvn-seq.txt");
        std::fs::write(&seq, "gvn\n").unwrap();
        let program = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/gvn-invariant-group-219885.ll");
        let report = isolate(&[seq.to_str().unwrap(), program.to_str().unwrap(), "--max-evals", "60"]);
        let i = &report["isolation"];
        assert_eq!(i["failure"]["kind"], "crash", "{i}");
        assert_eq!(i["culprit"]["name"], "gvn", "{}", i["culprit"]);
    }

    #[test]
    fn bug_191714_ranks_its_fix_file() {
        let report = isolate_191714(&[]);
        let i = &report["isolation"];
        assert_eq!(i["failure"]["kind"], "invalid-ir");
        assert_eq!(i["reduced"], "function(slp-vectorizer)");
        assert_eq!(i["stats"]["evaluations"], 300);
        assert!(i["stats"]["passing"].as_u64().unwrap() > 100);
        assert!(!i["witnesses"].as_array().unwrap().is_empty());
        // The culprit's own file ran code no bug-free run did: it ranks first, and says why.
        let first = &i["ranking"][0];
        assert_eq!(first["path"], "llvm/lib/Transforms/Vectorize/SLPVectorizer.cpp", "{first}");
        assert_eq!(first["rank"], 1);
        assert_eq!(first["evidence"]["placed"], "culprit", "{first}");
        assert_eq!(first["evidence"]["culprit"], true);
        assert!(first["evidence"]["failure_specific"].as_u64().unwrap() > 0, "{first}");
        // The subtarget is built before any pass runs: its constructors (the legalizer's
        // tables) are in no trace, so they cannot look like failure-only code.
        for constructor in ["llvm/lib/Target/X86/X86LegalizerInfo.cpp", "llvm/lib/Target/X86/X86Subtarget.cpp"] {
            assert_eq!(rank_of(&report, constructor), None, "{constructor} is in the failing trace");
        }
        // Broken IR is caught by verifying after every pass in one run.
        assert_eq!(i["culprit"]["name"], "slp-vectorizer", "{}", i["culprit"]);
        assert_eq!(i["culprit"]["method"], "verify-each");
        assert_eq!(i["culprit"]["class"], "SLPVectorizerPass");
        assert_eq!(i["culprit_file"], "llvm/lib/Transforms/Vectorize/SLPVectorizer.cpp");
        assert_eq!(report["seed"], 1);
        assert!(report["llvm_version"].as_str().unwrap().starts_with("22."));
    }

    /// Witness programs of an IR reproducer: mutants of repro.ll that the slp-vectorizer
    /// leaves valid, each one row of the spectrum.
    #[test]
    fn diwi_recbi_and_mixed_rank_191714_with_witness_programs() {
        for strategy in ["diwi", "recbi", "mixed"] {
            let report = isolate_191714(&["--strategy", strategy, "--max-evals", "80"]);
            let i = &report["isolation"];
            assert_eq!(i["strategy"], strategy);
            let programs = &i["stats"]["programs"];
            assert_eq!(programs["guidance"], if strategy == "diwi" { "diwi" } else { "recbi" }, "{programs}");
            let witnesses = i["witnesses"].as_array().unwrap();
            let mutants: Vec<&str> = witnesses.iter().filter_map(|w| w["mutation"].as_str()).collect();
            assert!(mutants.len() >= 3, "{strategy}: {mutants:?}");
            assert!(mutants.iter().all(|m| m.starts_with("ir ")), "{mutants:?}");
            // Mixed pools bug-free sequences and witness programs in one spectrum.
            let sequences = witnesses.len() - mutants.len();
            assert_eq!(sequences > 0, strategy == "mixed", "{strategy}: {sequences} sequence witnesses");
            assert_eq!(i["stats"]["passing"].as_u64().unwrap() as usize, witnesses.len());
            let rank = rank_of(&report, "llvm/lib/Transforms/Vectorize/SLPVectorizer.cpp").expect("fix file ranked");
            assert!(rank <= 3, "{strategy}: SLPVectorizer.cpp ranked {rank}");
        }
    }

    /// `--near` keeps far witnesses out of the evidence, witness programs as sequences.
    #[test]
    fn a_witness_program_honours_near() {
        let report = isolate_191714(&["--strategy", "diwi", "--near", "0.99", "--max-evals", "60"]);
        let i = &report["isolation"];
        let witnesses = i["witnesses"].as_array().unwrap();
        let near = witnesses.iter().filter(|w| w["file_jaccard"].as_f64().unwrap() >= 0.99).count();
        assert!(near < witnesses.len(), "every witness is near: the test shows nothing");
        assert!(witnesses.iter().all(|w| w["mutation"].is_string()));
        assert_eq!(i["passing_evidence"].as_u64().unwrap() as usize, near, "{}", i["stats"]);
    }

    #[test]
    fn a_long_failing_sequence_is_reduced_before_the_search() {
        let seq = temp("long-seq.txt");
        std::fs::write(&seq, "-forceattrs -lower-expect -slp-vectorizer -globaldce -constmerge\n").unwrap();
        let report = isolate(&[
            seq.to_str().unwrap(),
            &bug("191714", "repro.ll"),
            "--llvm-arg=-slp-threshold=-99999",
            "--max-evals",
            "50",
        ]);
        let reduced = report["isolation"]["reduced"].as_str().unwrap();
        assert!(reduced.contains("slp-vectorizer"), "{reduced}");
        assert!(report["isolation"]["reduced_passes"].as_u64().unwrap() < 5, "{reduced}");
    }

    #[test]
    fn a_wrong_code_bug_is_judged_by_the_programs_output() {
        let report = isolate_with_driver(
            "180456",
            &[
                "--llvm-arg=-slp-threshold=-50",
                "--llvm-arg=-mtriple=x86_64-unknown-linux-gnu",
                "--oracle",
                "wrong-code",
            ],
        );
        let i = &report["isolation"];
        assert_eq!(i["failure"]["kind"], "wrong-code");
        // Judged by the output: both bug-free and failing candidates exist.
        assert!(i["stats"]["passing"].as_u64().unwrap() > 50, "{}", i["stats"]);
        assert!(i["stats"]["failing_same"].as_u64().unwrap() > 0, "{}", i["stats"]);
        let rank = rank_of(&report, "llvm/lib/Transforms/Vectorize/SLPVectorizer.cpp").expect("fix file ranked");
        assert!(rank <= 3, "SLPVectorizer.cpp ranked {rank}");
    }

    /// SLP's debug counter counts the trees it vectorizes: 180456's run vectorizes one, and
    /// that one step turns `sub %l0, 0` into a lane of a `mul` by 0.
    #[test]
    fn the_slp_tree_after_which_180456_miscompiles_is_named_with_what_it_changed() {
        let args =
            ["--llvm-arg=-slp-threshold=-50", "--llvm-arg=-mtriple=x86_64-unknown-linux-gnu", "--max-evals", "10"];
        let report = isolate_with_driver("180456", &args);
        let t = &report["isolation"]["transformation"];
        assert_eq!((&t["counter"], &t["step"], &t["steps"]), (&"slp-vectorized".into(), &0.into(), &1.into()), "{t}");
        assert_eq!(t["function"], "sub_mul");
        assert_eq!(t["llvm_arg"], "-debug-counter=slp-vectorized=0");
        let (removed, added) = (t["removed"].to_string(), t["added"].to_string());
        assert!(removed.contains("sub i16 %l0, 0") || removed.contains("load i16"), "{removed}");
        assert!(added.contains("mul <4 x i16>"), "{added}");
        // The run one step short of it passes: a witness, as a configuration of the sequence.
        let witnesses = report["isolation"]["witnesses"].as_array().unwrap();
        let short = witnesses.iter().find(|w| w["llvm_args"][0] == "-debug-counter=slp-vectorized=9000000000000000000");
        assert!(short.is_some_and(|w| w["configuration"] == true), "{witnesses:?}");
    }

    /// InstCombine's counter counts the instructions it visits: the fifth visit of 215453's
    /// run (tests/data/bugs/215453, a miscompile LLVM 22 ships) folds the select into a
    /// masked load placed after the store, and the page names the code that visit ran.
    #[test]
    fn the_instcombine_visit_after_which_215453_miscompiles_is_named_with_the_load_it_moved() {
        let folder = bug_dir("215453").display().to_string();
        let report = isolate(&[folder.as_str(), "--max-evals", "40"]);
        let t = &report["isolation"]["transformation"];
        assert_eq!((&t["counter"], &t["function"]), (&"instcombine-visit".into(), &"swap".into()), "{t}");
        assert_eq!(t["llvm_arg"], format!("-debug-counter=instcombine-visit=0-{}", t["step"]));
        let (removed, added) = (t["removed"].to_string(), t["added"].to_string());
        assert!(removed.contains("select <4 x i1> %mask, <4 x i32> %tmp"), "{removed}");
        assert!(added.contains("@llvm.masked.load") && added.contains("splat (i32 -1)"), "{added}");
        // The step's own code: what its run ran and the run one step short did not.
        let code = t["code"].as_array().unwrap();
        assert!(code.iter().any(|c| c[0].as_str().unwrap().contains("InstCombinerImpl")), "{code:?}");
        // Functions are ranked across files, each with its file's rank.
        let functions = report["isolation"]["functions"].as_array().unwrap();
        assert!(functions.len() >= 10, "{functions:?}");
        let ranks: Vec<u64> = functions.iter().map(|f| f["rank"].as_u64().unwrap()).collect();
        assert!(ranks.windows(2).all(|w| w[0] <= w[1]) && functions.iter().all(|f| f["file_rank"].is_u64()));
    }

    /// A bug that names its fix functions (215453: `InstCombinerImpl::visitSelectInst`)
    /// gets function-level figures: by class, held out, and per rule.
    #[test]
    fn eval_reports_where_the_fix_functions_rank_by_class() {
        let bench = bug_dir("215453").parent().unwrap().display().to_string();
        let out = locseq(&["eval", &bench, "--bug", "215453", "--max-evals", "40", "--json"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let lines = records(&out);
        let bug = lines.iter().find(|l| l["type"] == "bug").unwrap();
        let attempt = &bug["outcome"]["attempts"][0];
        let by_rule = attempt["functions"]["by_rule"].as_array().unwrap();
        // visitSelectInst is among the failing run's functions, whatever its rank.
        assert!(by_rule.len() >= 6 && by_rule.iter().all(|r| r.is_u64()), "{attempt}");
        let functions = &lines.last().unwrap()["strategies"][0]["functions"];
        let classes = functions["by_class"].as_array().unwrap();
        let class = classes.iter().find(|c| c["class"] == attempt["fix_class"]).unwrap();
        for figures in ["ranking", "leave-one-out", "listed"].map(|k| &class[k.replace('-', "_")]) {
            assert_eq!(figures["bugs"], 1, "{functions}");
            assert!(figures["top10"].as_u64() <= Some(1), "{functions}");
        }
        assert_eq!(functions["rules"].as_array().unwrap().len(), by_rule.len());
        let table = locseq(&["eval", &bench, "--bug", "215453", "--max-evals", "40"]);
        assert_eq!(table.code, 0, "{}", table.stderr);
        assert!(table.stdout.contains("functions, cga (1 bugs name their fix functions"), "{}", table.stdout);
        let row = format!("{} ", attempt["fix_class"].as_str().unwrap());
        assert!(table.stdout.lines().any(|l| l.starts_with(&row) && l.contains(" 1  ")), "{}", table.stdout);
    }

    /// The pipeline inline, program first, as `ctos run` takes them: the same isolation as
    /// from a sequence file. A second program beside --passes is refused.
    #[test]
    fn the_pipeline_can_be_given_inline_with_the_program_first() {
        let program = bug("191714", "repro.ll");
        let args = ["--passes", "function(slp-vectorizer)", "--llvm-arg=-slp-threshold=-99999", "--max-evals", "10"];
        let report = isolate(&[&[program.as_str()][..], &args[..]].concat());
        let culprit = &report["isolation"]["culprit"];
        assert_eq!(
            (&culprit["pass"], &report["isolation"]["failure"]["kind"]),
            (&"slp-vectorizer".into(), &"invalid-ir".into())
        );
        let out = locseq(&["isolate", &program, &program, "--passes", "function(slp-vectorizer)"]);
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(out.stderr.contains("with --passes, give the program alone"), "{}", out.stderr);
    }

    /// A broken-IR run ends before its counts are read: every counter is tried, and SLP's
    /// is the one whose step breaks it.
    #[test]
    fn the_slp_tree_that_breaks_191714s_ir_is_named_though_its_run_ends_broken() {
        let report = isolate_191714(&["--max-evals", "10"]);
        let t = &report["isolation"]["transformation"];
        assert_eq!((&t["counter"], &t["step"]), (&"slp-vectorized".into(), &0.into()), "{t}");
        assert!(t["evaluations"].as_u64().unwrap() > 10, "every counter was tried: {t}");
    }

    #[test]
    fn a_users_interestingness_script_can_be_the_oracle() {
        let report =
            isolate_191714(&["--oracle", &format!("script:{}", bug("191714", "oracle.sh")), "--max-evals", "40"]);
        let stats = &report["isolation"]["stats"];
        assert!(stats["passing"].as_u64().unwrap() > 0 && stats["failing_same"].as_u64().unwrap() > 0, "{stats}");
    }

    #[test]
    fn eval_reports_ranks_per_strategy_and_skips_bugs_that_do_not_fire() {
        let bench = PathBuf::from(bug("191714", "meta.json")).parent().unwrap().parent().unwrap().display().to_string();
        let rankings = temp("kept-rankings");
        let out = locseq(&[
            "eval",
            &bench,
            "--bug",
            "191714",
            "--bug",
            "147869",
            "--strategy",
            "cga",
            "--strategy",
            "random",
            "--max-evals",
            "150",
            "--json",
            "--rankings",
            rankings.to_str().unwrap(),
        ]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let lines = records(&out);
        let bugs: Vec<&Value> = lines.iter().filter(|l| l["type"] == "bug").collect();
        // Each isolation's whole ranking is kept, with every file's evidence.
        for strategy in ["cga", "random"] {
            let kept: Value = serde_json::from_slice(
                &std::fs::read(rankings.join(format!("191714-{strategy}-1.json"))).expect("a kept ranking"),
            )
            .unwrap();
            assert_eq!(kept["fix_files"][0], "llvm/lib/Transforms/Vectorize/SLPVectorizer.cpp");
            let files = kept["ranking"].as_array().unwrap();
            assert!(files.len() > 5 && files.iter().all(|f| f["evidence"]["spectrum_rank"].is_u64()), "{kept}");
        }
        assert!(!rankings.join("147869-cga-1.json").exists(), "a skipped bug has no ranking");
        let skipped = bugs.iter().find(|b| b["bug"] == "147869").unwrap();
        assert_eq!(skipped["outcome"]["status"], "skipped");
        assert!(skipped["outcome"]["reason"].as_str().unwrap().contains("not on 22"));
        for summary in lines.last().unwrap()["strategies"].as_array().unwrap() {
            // 191714's fix is in the culprit pass's file: its one class, ranked first there.
            let classes = summary["by_class"].as_array().unwrap();
            let class = |name: &str| classes.iter().find(|c| c["class"] == name).unwrap().clone();
            assert_eq!(class("in-culprit")["ranking"]["top1"], 1, "{summary}");
            assert_eq!(class("in-culprit")["culprit_file_baseline"]["top1"], 1, "{summary}");
            assert_eq!(class("elsewhere")["ranking"]["bugs"], 0, "{summary}");
            assert_eq!(summary["bugs"], 1, "{summary}");
            assert_eq!(summary["top5"], 1, "{summary}");
            assert_eq!((summary["skipped"].as_u64(), summary["errors"].as_u64()), (Some(1), Some(0)), "{summary}");
        }
        // Each strategy's search ran within its budget of evaluations.
        let ranked = bugs.iter().filter(|b| b["bug"] == "191714");
        for attempt in ranked.flat_map(|b| b["outcome"]["attempts"].as_array().unwrap()) {
            let evaluations = attempt["evaluations"].as_u64().unwrap();
            assert!((1..=150).contains(&evaluations), "{attempt}");
        }
    }

    /// A bug folder that cannot be isolated (its program does not parse) is reported as
    /// an error with the reason; the other bugs are still ranked.
    #[test]
    fn eval_reports_a_broken_bug_folder_and_ranks_the_others() {
        let bench = temp("bench-broken");
        for (id, broken) in [("191714", false), ("999999", true)] {
            let dir = bench.join(id);
            std::fs::create_dir_all(&dir).unwrap();
            for f in ["meta.json", "oracle.conf", "repro.ll", "seq.txt"] {
                std::fs::copy(bug("191714", f), dir.join(f)).unwrap();
            }
            if broken {
                std::fs::write(dir.join("repro.ll"), "define i32 @f( {\n").unwrap();
            }
        }
        let out = locseq(&["eval", bench.to_str().unwrap(), "--max-evals", "100", "--json"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let lines = records(&out);
        let outcome =
            |id: &str| lines.iter().find(|l| l["type"] == "bug" && l["bug"] == id).unwrap()["outcome"].clone();
        assert_eq!(outcome("191714")["status"], "ranked");
        let broken = outcome("999999");
        assert_eq!(broken["status"], "error", "{broken}");
        assert!(broken["reason"].as_str().unwrap().contains("repro.ll"), "{broken}");
        let summary = &lines.last().unwrap()["strategies"][0];
        assert_eq!((summary["bugs"].as_u64(), summary["errors"].as_u64()), (Some(1), Some(1)), "{summary}");
        assert_eq!(summary["top1"], 1, "{summary}");
        assert!(summary["culprit_file_baseline"]["top1"].as_u64().is_some() && summary["spectrum_only"]["bugs"] == 1);
    }

    /// A failure that is a hang, at the default --opt-timeout of a minute: the first run
    /// is cut where the budget affords it, candidates at a limit derived from the
    /// sequence's own speed, --time bounds the whole isolation, and the search makes
    /// evaluations. The stack the hanging child reported when stopped is evidence. One job:
    /// each hanging candidate burns its limit, and two burnt both cores for the whole budget
    /// (alone: 41 CPU-s in 25 s with two jobs and --time 20; 16 CPU-s in 16 s with one and 14).
    #[test]
    fn a_hang_is_isolated_within_twice_its_time_budget_with_evaluations_and_its_stack() {
        let seq = temp("hang-seq.txt");
        std::fs::write(&seq, "loop-unroll\n").unwrap();
        let program = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/unroll-hang.ll");
        let budget = 14;
        let started = std::time::Instant::now();
        let out = locseq(&[
            "isolate",
            seq.to_str().unwrap(),
            program.to_str().unwrap(),
            "--llvm-arg=-unroll-threshold=1000000000",
            "--llvm-arg=-unroll-full-max-count=100000000",
            "--time",
            &budget.to_string(),
            "-j",
            "1",
            "--json",
        ]);
        let seconds = started.elapsed().as_secs_f64();
        assert_eq!(out.code, 0, "{}", out.stderr);
        let lines = records(&out);
        let summary = lines.last().unwrap();
        assert_eq!(summary["failure"]["kind"], "timeout", "{summary}");
        assert!(summary["notes"].to_string().contains("counts as hanging"), "{}", summary["notes"]);
        assert!(seconds < 2.0 * f64::from(budget), "took {seconds:.1} s for --time {budget}");
        let phases = summary["seconds_by_phase"].as_object().unwrap();
        let names: Vec<&str> = phases.keys().map(String::as_str).collect();
        assert_eq!(names, ["reproduce", "reduce", "culprit", "failing-trace", "search", "rank"]);
        assert!(phases["reproduce"].as_f64().unwrap() < 10.0, "{phases:?}");
        assert!(summary["stats"]["evaluations"].as_u64().unwrap() > 0, "{}", summary["stats"]);
        let on_stack = lines.iter().filter(|l| l["type"] == "file" && l["evidence"]["stack_depth"].is_u64()).count();
        assert!(on_stack > 0, "no ranked file is on the hang's stack: {}", out.stdout);
    }

    /// The failure needs indvars and loop-simplifycfg in one loop adaptor (each in its own, no
    /// check fails): counting the passes' runs as -opt-bisect-limit does names the run after
    /// which it first shows.
    #[test]
    fn a_failure_needing_two_loop_passes_in_one_adaptor_names_the_run_after_which_it_shows() {
        let seq = temp("adaptor-seq.txt");
        std::fs::write(&seq, "function(loop(indvars,loop-simplifycfg))\n").unwrap();
        let program = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/scev-stale-187472.ll");
        let report = isolate(&[
            seq.to_str().unwrap(),
            program.to_str().unwrap(),
            "--llvm-arg=-ctos-check-preserved=scev",
            "--max-evals",
            "40",
        ]);
        let culprit = &report["isolation"]["culprit"];
        assert_eq!(culprit["method"], "pass-runs", "{culprit}");
        assert!(["indvars", "loop-simplifycfg"].contains(&culprit["name"].as_str().unwrap()), "{culprit}");
        assert!(culprit["run"].as_u64().unwrap() >= 1, "{culprit}");
        assert_eq!(culprit["pipeline"], "function(loop(indvars,loop-simplifycfg))", "{culprit}");
    }

    /// A bug whose sequence does not fail here is listed as skipped, with the reason;
    /// the evaluation goes on.
    #[test]
    fn eval_skips_a_bug_whose_failure_does_not_reproduce() {
        let dir = temp("bench-clean/191714");
        std::fs::create_dir_all(&dir).unwrap();
        for f in ["meta.json", "oracle.conf", "repro.ll"] {
            std::fs::copy(bug("191714", f), dir.join(f)).unwrap();
        }
        std::fs::write(dir.join("seq.txt"), "sroa\n").unwrap();
        let out = locseq(&["eval", dir.to_str().unwrap(), "--max-evals", "10", "--json"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let lines = records(&out);
        let outcome = &lines.iter().find(|l| l["type"] == "bug").unwrap()["outcome"];
        assert_eq!(outcome["status"], "skipped", "{outcome}");
        assert!(outcome["reason"].as_str().unwrap().contains("does not reproduce"), "{outcome}");
    }
}

#[cfg(feature = "llvm19")]
mod llvm19 {
    use super::*;

    #[test]
    fn bug_147869_crash_ranks_loop_simplify_cfg() {
        let report = isolate(&[&bug("147869", "seq.txt"), &bug("147869", "repro.ll")]);
        assert_eq!(report["isolation"]["failure"]["kind"], "crash");
        let culprit = &report["isolation"]["culprit"];
        assert_eq!(
            (culprit["name"].as_str(), culprit["method"].as_str()),
            (Some("loop-simplifycfg"), Some("failed-in"))
        );
        let first = &report["isolation"]["ranking"][0];
        assert_eq!(first["path"], "llvm/lib/Transforms/Scalar/LoopSimplifyCFG.cpp", "{first}");
        assert_eq!((first["rank"].as_u64(), first["evidence"]["placed"].as_str()), (Some(1), Some("culprit")));
        // The pass crashed in its own code: its file is at the top of the stack.
        assert_eq!(first["evidence"]["stack_depth"], 0, "{first}");
        let notes = report["isolation"]["notes"].to_string();
        assert!(notes.contains("LLVM 19's release build has none"), "{notes}");
    }

    /// loop-deletion destroys a value that an unreachable block still uses; a release build
    /// goes on, and the verifier crashes on the dangling use after the pass. ctos stops
    /// the run at the destruction, as an assertions build does, so the stack names the
    /// code that destroyed it: LoopUtils.cpp's deleteDeadLoop, where the fix went, ranks
    /// ahead of the culprit's file, which holds no failure-specific code.
    #[test]
    fn bug_173357_stops_where_the_used_value_is_destroyed_and_ranks_that_utility_first() {
        let report = isolate(&[&bug("173357", "seq.txt"), &bug("173357", "repro.ll")]);
        let i = &report["isolation"];
        assert_eq!(i["failure"]["kind"], "crash", "{i}");
        let failure = i["failure"].to_string();
        assert!(failure.contains("Uses remain when a value is destroyed!"), "{failure}");
        assert_eq!(i["culprit"]["name"], "loop-deletion", "{}", i["culprit"]);
        let ranking = i["ranking"].as_array().unwrap();
        assert_eq!(ranking[0]["path"], "llvm/lib/Transforms/Utils/LoopUtils.cpp", "{}", ranking[0]);
        assert_eq!(ranking[0]["evidence"]["placed"], "stack", "{}", ranking[0]);
        assert_eq!(ranking[1]["path"], "llvm/lib/Transforms/Scalar/LoopDeletion.cpp", "{}", ranking[1]);
        let against = ranking[1]["evidence"]["against_first"].as_str().unwrap();
        assert!(against.contains("innermost pass or analysis frame is in LoopUtils.cpp"), "{against}");
        // The function: deleteDeadLoop, where the fix went, is the innermost pass frame.
        let first = &i["functions"][0];
        assert_eq!((&first["name"], &first["rank"]), (&"llvm::deleteDeadLoop".into(), &1.into()), "{first}");
        assert!(first["stack_depth"].is_u64(), "{first}");
    }

    /// loop-fusion leaves a dangling instruction behind, and opt-19 reads it after the
    /// pass. ctos stops the run where the used value is destroyed, as an assertions build
    /// does (without that check, the poisoned heap made the later read fault inside the
    /// pass): the same way in every child and worker, under block coverage too. The one pass is the culprit, and its file, with failure-specific code,
    /// ranks first, ahead of the DomTreeUpdater.cpp that destroyed the block for it.
    #[test]
    fn bug_166356_fails_alike_under_block_coverage_and_names_loop_fusion() {
        let report = isolate(&[&bug("166356", "seq.txt"), &bug("166356", "repro.ll"), "--granularity", "blocks"]);
        let i = &report["isolation"];
        assert_eq!(i["failure"]["kind"], "crash", "{i}");
        assert_eq!(i["culprit"]["name"], "loop-fusion", "{}", i["culprit"]);
        assert_eq!(i["stats"]["other_failures"], 0, "{}", i["stats"]);
        assert_eq!(rank_of(&report, "llvm/lib/Transforms/Scalar/LoopFuse.cpp"), Some(1));
    }

    /// 135182's fix is in SimplifyIndVar.cpp, a helper indvars drives: it ranks first,
    /// placed as a helper, ahead of the culprit's own file. The search used to settle in
    /// the first basin it found (the closest witnesses run indvars twice; farther ones are
    /// configurations that turn widening off, and left the expander first); it is drawn
    /// afresh when it stalls, and the restarts count.
    #[test]
    fn bug_135182_ranks_the_helper_indvars_drives_first_ahead_of_the_culprits_file() {
        let report = isolate_with_driver("135182", &["--oracle", "wrong-code", "--max-evals", "3000"]);
        let ranking = report["isolation"]["ranking"].as_array().unwrap();
        let first = &ranking[0];
        assert_eq!(first["path"], "llvm/lib/Transforms/Utils/SimplifyIndVar.cpp", "{:?}", &ranking[..3]);
        assert_eq!(first["evidence"]["placed"], "helper", "{first}");
        let culprit = rank_of(&report, "llvm/lib/Transforms/Scalar/IndVarSimplify.cpp").expect("culprit file ranked");
        assert!(culprit > 1, "{culprit}");
        assert!(report["isolation"]["stats"]["restarts"].as_u64().unwrap() > 0, "{}", report["isolation"]["stats"]);
    }

    /// 36998's culprit file holds no failure-specific code, nor does any other file hold
    /// code that stands out: the engineer's first suspect, the fix file, stays first, and
    /// the files behind it say why.
    #[test]
    fn bug_36998_keeps_the_culprits_file_first_when_no_other_file_stands_out() {
        let report = isolate(&[&bug("36998", "seq.txt"), &bug("36998", "repro.ll"), "--llvm-arg=-aa-pipeline="]);
        let ranking = report["isolation"]["ranking"].as_array().unwrap();
        assert_eq!(ranking[0]["path"], "llvm/lib/Transforms/Utils/LoopVersioning.cpp", "{}", ranking[0]);
        assert_eq!(ranking[0]["evidence"]["placed"], "culprit");
        let against = ranking[1]["evidence"]["against_first"].as_str().unwrap();
        assert!(against.contains("LoopVersioning.cpp"), "{against}");
        // IR core code the failing run alone executed ranks after the rest.
        let core = ranking.iter().find(|f| f["path"].as_str().unwrap().starts_with("llvm/lib/IR/")).unwrap();
        assert_eq!(core["evidence"]["placed"], "core", "{core}");
        assert!(ranking
            .iter()
            .skip_while(|f| f["evidence"]["placed"] != "core")
            .all(|f| f["evidence"]["placed"] == "core"));
    }

    /// 123550's fix is in ScalarEvolution, which indvars asks: the culprit's own file
    /// ranks no higher than the analysis the spectrum points at.
    #[test]
    fn an_analysis_fix_does_not_fall_behind_the_culprit_file() {
        let report = isolate_with_driver("123550", &["--oracle", "wrong-code"]);
        assert_eq!(report["isolation"]["culprit_file"], "llvm/lib/Transforms/Scalar/IndVarSimplify.cpp");
        let fix = rank_of(&report, "llvm/lib/Analysis/ScalarEvolution.cpp").expect("fix file ranked");
        let culprit = rank_of(&report, "llvm/lib/Transforms/Scalar/IndVarSimplify.cpp").expect("culprit file ranked");
        assert!(fix < culprit, "ScalarEvolution.cpp {fix}, IndVarSimplify.cpp {culprit}");
        assert!(fix <= 3, "ScalarEvolution.cpp ranked {fix}");
    }

    /// InstCombine's visitors live in InstCombine*.cpp, not in the file of its `run`:
    /// they are the culprit's files too, and 121584's fix file ranks among them.
    #[test]
    fn the_culprits_files_include_those_of_its_classes() {
        let report = isolate_with_driver("121584", &["--max-evals", "200"]);
        let ranking = report["isolation"]["ranking"].as_array().unwrap();
        let culprit_files: Vec<&str> =
            ranking.iter().filter(|r| r["evidence"]["culprit"] == true).map(|r| r["path"].as_str().unwrap()).collect();
        assert!(
            culprit_files.contains(&"llvm/lib/Transforms/InstCombine/InstructionCombining.cpp"),
            "{culprit_files:?}"
        );
        assert!(
            culprit_files.contains(&"llvm/lib/Transforms/InstCombine/InstCombineMulDivRem.cpp"),
            "{culprit_files:?}"
        );
        assert!(culprit_files.iter().all(|f| f.starts_with("llvm/lib/Transforms/InstCombine/")), "{culprit_files:?}");
        let rank = rank_of(&report, "llvm/lib/Transforms/InstCombine/InstCombineMulDivRem.cpp").unwrap();
        assert!(rank <= 3, "InstCombineMulDivRem.cpp ranked {rank}");
    }

    /// The reduced sequence keeps the passes that set the bug up; the culprit is the one
    /// after which the program first prints the wrong thing.
    #[test]
    fn bug_140481_default_o3_is_expanded_and_reduced_to_its_culprit() {
        let report = isolate(&[&bug("140481", "seq.txt"), &bug("140481", "repro.v19.ll"), "--max-evals", "100"]);
        let i = &report["isolation"];
        assert_eq!(i["original"], "default<O3>");
        assert!(i["reduced_passes"].as_u64().unwrap() <= 5, "{}", i["reduced"]);
        assert!(i["reduced"].as_str().unwrap().contains("constraint-elimination"));
        let culprit = &i["culprit"];
        assert_eq!(culprit["name"], "constraint-elimination", "{culprit}");
        assert_eq!(culprit["method"], "prefixes");
        assert_eq!(i["culprit_file"], "llvm/lib/Transforms/Scalar/ConstraintElimination.cpp");
    }

    /// DiWi on the C program of 140481: mutants of repro.c (DiWi's rules), compiled by
    /// clang 19, each run unoptimized and screened for undefined behaviour.
    #[test]
    fn diwi_ranks_140481_with_mutants_of_its_c_program() {
        let report =
            isolate(&[&bug("140481", "seq.txt"), &bug("140481", "repro.c"), "--strategy", "diwi", "--max-evals", "60"]);
        let i = &report["isolation"];
        assert_eq!(i["failure"]["kind"], "wrong-code");
        let witnesses = i["witnesses"].as_array().unwrap();
        assert!(witnesses.len() >= 3, "{}", i["stats"]);
        assert!(witnesses.iter().all(|w| w["mutation"].as_str().is_some_and(|m| !m.starts_with("ir "))));
        let refused = &i["stats"]["programs"]["refused"];
        assert!(refused["undefined"].as_u64().unwrap_or(0) > 0, "UB screening refused nothing: {refused}");
        let rank = rank_of(&report, "llvm/lib/Transforms/Scalar/ConstraintElimination.cpp").expect("fix file ranked");
        assert!(rank <= 3, "ConstraintElimination.cpp ranked {rank}");
    }

    /// A mutant that changes only what the program prints could pass by hiding the bug's
    /// symptom: 140481 with its values printed, the printing line is never a witness's.
    #[test]
    fn a_witness_never_changes_what_the_program_prints() {
        let source = std::fs::read_to_string(bug("140481", "repro.c")).unwrap();
        let printing = format!(
            "#include <stdio.h>\n{}",
            source.replace("  return 0;", "  printf(\"%d %d\\n\", b, c);\n  return 0;")
        );
        let printed_line = printing.lines().position(|l| l.contains("printf")).unwrap() + 1;
        let program = temp("140481-printing.c");
        std::fs::write(&program, &printing).unwrap();
        let report =
            isolate(&[&bug("140481", "seq.txt"), program.to_str().unwrap(), "--strategy", "diwi", "--max-evals", "80"]);
        let i = &report["isolation"];
        assert!(i["stats"]["programs"]["touches_output"].as_u64().unwrap() > 0, "{}", i["stats"]);
        let witnesses = i["witnesses"].as_array().unwrap();
        assert!(!witnesses.is_empty());
        for w in witnesses {
            let m = w["mutation"].as_str().unwrap();
            assert!(!m.contains(&format!("at line {printed_line}:")), "{m}");
        }
    }

    /// 121584 fires under every candidate that keeps `instcombine`: the constrained search
    /// finds no bug-free sequence (only configurations), and the user is told so and what
    /// to try.
    #[test]
    fn a_search_without_bug_free_sequences_says_what_to_try() {
        let report = isolate_with_driver("121584", &["--max-evals", "60"]);
        let i = &report["isolation"];
        assert_eq!(i["stats"]["passing"], i["stats"]["passing_configs"], "{}", i["stats"]);
        let notes = i["notes"].to_string();
        assert!(notes.contains("no bug-free sequence found") && notes.contains("cga-wc"), "{notes}");
    }

    /// Where no sequence with `instcombine` is bug-free, running instcombine differently
    /// is: a configuration witness, which ends the all-way tie.
    #[test]
    fn a_configuration_of_the_culprit_is_a_witness_where_no_sequence_is() {
        let args = |strategy| {
            [
                &bug("121584", "seq.txt"),
                &bug("121584", "repro.ll"),
                "--driver",
                &bug("121584", "driver.ll"),
                "--strategy",
                strategy,
                "--max-evals",
                "200",
            ]
            .map(String::from)
        };
        let report = isolate(&args("configs").each_ref().map(String::as_str));
        let i = &report["isolation"];
        assert!(i["stats"]["passing_configs"].as_u64().unwrap() > 0, "{}", i["stats"]);
        let witness = &i["witnesses"][0];
        assert_eq!(witness["configuration"], true);
        assert!(witness["pipeline"].as_str().unwrap().starts_with("function(instcombine<"), "{witness}");
        let ranks: std::collections::BTreeSet<u64> =
            i["ranking"].as_array().unwrap().iter().map(|r| r["rank"].as_u64().unwrap()).collect();
        assert!(ranks.len() > 1, "every file still ties: {ranks:?}");
    }
}
