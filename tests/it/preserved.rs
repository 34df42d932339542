//! `--check-preserved`: analyses a pass kept, checked against the IR after it, in release
//! builds, on a real bug that LLVM leaves silent without the check.

use std::process::Command;

use crate::common;
use common::ctos;

use common::root;

/// llvm/llvm-project#187472: indvars and loop-simplifycfg leave ScalarEvolution with a wrong
/// trip count. Unchecked, the campaign sees nothing; with `--check-preserved scev` it is a
/// bug whose README's plain-opt command (with `verify<scalar-evolution>` appended) aborts.
#[test]
fn a_pass_that_leaves_scalar_evolution_stale_is_a_bug_only_when_kept_analyses_are_checked() {
    let work = tempfile::tempdir().unwrap();
    let programs = work.path().join("programs");
    std::fs::create_dir(&programs).unwrap();
    std::fs::copy(root().join("tests/data/scev-stale-187472.ll"), programs.join("stale.ll")).unwrap();
    let sequences = work.path().join("sequences.txt");
    std::fs::write(&sequences, "function(loop(indvars,loop-simplifycfg))\nfunction(loop(indvars))\n").unwrap();
    let campaign = |name: &str, extra: &[&str]| {
        let out = work.path().join(name);
        let mut args = vec!["fuzz", "--out", out.to_str().unwrap(), "--programs", programs.to_str().unwrap()];
        args.extend_from_slice(&["--sequences", sequences.to_str().unwrap(), "--iterations", "1", "-j", "2"]);
        args.extend_from_slice(&["--reduce-ir-time", "0", "--localize-time", "0"]);
        args.extend_from_slice(extra);
        let (code, stdout, stderr) = ctos(&args);
        assert_eq!(code, 0, "{stderr}");
        (out, stdout)
    };
    let (_, unchecked) = campaign("unchecked", &[]);
    assert!(unchecked.contains("0 failures"), "{unchecked}");
    let (checked, stdout) = campaign("checked", &["--check-preserved", "scev,domtree,loops"]);
    assert!(
        stdout.contains("1 failures, 1 unique bugs") && stdout.contains("SIGABRT in llvm::ScalarEvolution::verify"),
        "{stdout}"
    );
    let bug = std::fs::read_dir(checked.join("bugs")).unwrap().next().unwrap().unwrap().path();
    let readme = std::fs::read_to_string(bug.join("README.md")).unwrap();
    let command = readme
        .lines()
        .find(|l| l.starts_with("opt-") && l.contains("verify<scalar-evolution>"))
        .unwrap_or_else(|| panic!("no plain-opt command with the SCEV verifier:\n{readme}"));
    assert!(readme.contains("The only evidence is an analysis check"), "{readme}");
    // Fires-on agrees with the command above it: it fires where that command aborts.
    let fires = readme.lines().find(|l| l.starts_with("Fires on: ")).unwrap_or_else(|| panic!("{readme}"));
    assert!(fires.contains('✔') && !fires.contains('✘'), "{fires}");
    let issue = std::fs::read_to_string(bug.join("ISSUE.md")).unwrap();
    // The loop the verifier names exits, after a count computed from the optimized IR.
    for text in [&readme, &issue] {
        assert!(text.contains("exits from `%loop1`") && text.contains("not a loop that never exits"), "{text}");
    }
    let plain = Command::new("sh").arg("-c").arg(command).current_dir(&bug).output().unwrap();
    let stderr = String::from_utf8_lossy(&plain.stderr);
    assert!(plain.status.code().is_none_or(|c| c >= 128) && !plain.status.success(), "{command}: {stderr}");
    assert!(stderr.contains("Changed!"), "{stderr}");
    // The reproducer is the campaign's to re-run: the check travels with the bug.
    let outcome = std::fs::read_to_string(bug.join("outcome.json")).unwrap();
    assert!(outcome.contains("-ctos-check-preserved=scev,domtree,loops"), "{outcome}");
}
