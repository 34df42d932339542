//! Bad input across every command: a non-zero exit, one short line on stderr that names the
//! problem, no panic, and nothing left behind that would block the corrected command.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bench(id: &str, file: &str) -> String {
    let path = root().join("tests/data/bugs").join(id).join(file);
    assert!(path.exists(), "{} is missing from the checkout", path.display());
    path.display().to_string()
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(binary: &str, args: &[String], cwd: &Path) -> Out {
    let out = Command::new(binary).args(args).current_dir(cwd).output().expect("start the binary");
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The files the cases use, in a folder of their own (the commands run there).
struct Fixtures {
    dir: tempfile::TempDir,
}

impl Fixtures {
    fn new() -> Fixtures {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        write("broken.ll", "define i32 @f() {\n  ret i32 %nope\n}\n");
        write("bad.c", "int main(void) { return undeclared; }\n");
        write("notes.txt", "hello\n");
        write("typo.txt", "# pipelines\nsroa\ngvn\nlcim\n");
        std::os::unix::fs::symlink("/nonexistent-ctos-target", dir.path().join("dangling")).unwrap();
        write("binary.txt", "sroa\n\u{0}gvn\u{1b}[31m\n");
        write("rejected.txt", "sroa\nloop-unroll<O7>\n");
        write("good.txt", "sroa,gvn\n");
        write("clean.txt", "sroa,gvn\n");
        write("plain.sh", "#!/bin/sh\nexit 0\n");
        write("overflow.c", "int main(void) { volatile int a = 2147483647; a = a + 1; return 0; }\n");
        for sub in ["progs", "empty", "badprogs", "fake", "used"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        std::fs::copy(root().join("examples/sum.c"), dir.path().join("progs/sum.c")).unwrap();
        std::fs::copy(dir.path().join("broken.ll"), dir.path().join("badprogs/broken.ll")).unwrap();
        write("fake/campaign.sqlite", "not a database at all, but long enough to look like a file\n");
        write("used/keep.txt", "something of the user's\n");
        std::fs::create_dir(dir.path().join("badkind")).unwrap();
        write(
            "badkind/outcome.json",
            r#"{"kind": "bogus", "signature": "x", "program_file": "program.ll", "llvm_args": []}"#,
        );
        write("badkind/reduced.txt", "sroa\n");
        std::fs::copy(dir.path().join("broken.ll"), dir.path().join("badkind/program.ll")).unwrap();
        Fixtures { dir }
    }

    /// Every file below the fixtures folder, with its size: what a refused command must
    /// leave exactly as it was.
    fn listing(&self) -> Vec<(PathBuf, u64)> {
        fn walk(dir: &Path, out: &mut Vec<(PathBuf, u64)>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let entry = entry.unwrap();
                let meta = entry.metadata().unwrap();
                if meta.is_dir() {
                    out.push((entry.path(), 0));
                    walk(&entry.path(), out);
                } else {
                    out.push((entry.path(), meta.len()));
                }
            }
        }
        let mut out = Vec::new();
        walk(self.dir.path(), &mut out);
        out.sort();
        out
    }
}

const CTOS: &str = env!("CARGO_BIN_EXE_ctos");
const LOCSEQ: &str = env!("CARGO_BIN_EXE_locseq");

/// (binary, arguments, what the message must say); relative names are files of [`Fixtures`].
fn cases() -> Vec<(&'static str, Vec<String>, &'static str)> {
    let csmith = root().join("tests/data/csmith-12345.c").display().to_string();
    let sum = root().join("examples/sum.c").display().to_string();
    let (repro, seq) = (bench("191714", "repro.ll"), bench("191714", "seq.txt"));
    let s = |items: &[&str]| items.iter().map(|i| i.to_string()).collect::<Vec<String>>();
    let run = |extra: &[&str]| [s(&["run", &csmith]), s(extra)].concat();
    let fuzz = |extra: &[&str]| [s(&["fuzz", "--out", "camp"]), s(extra)].concat();
    let interesting = |extra: &[&str]| [s(&["interesting", "--kind", "crash", "--signature", "x"]), s(extra)].concat();
    let isolate = |extra: &[&str]| [s(&["isolate", &seq, &repro]), s(extra)].concat();
    vec![
        // ctos run
        (CTOS, s(&["run", "no-such.ll", "-p", "sroa"]), "no-such.ll: no such file"),
        (
            CTOS,
            run(&["-p", "instcombine,\u{201c}gvn\u{201d}"]),
            "unknown pass '\u{201c}gvn\u{201d}' (did you mean 'gvn'?)",
        ),
        (CTOS, run(&["-p", "function(gvn"]), "missing ')'"),
        (CTOS, run(&["-p", "sroa)"]), "unexpected ')'"),
        (CTOS, run(&["-p", ""]), "empty pass sequence"),
        (CTOS, run(&[]), "no pipeline given"),
        (CTOS, run(&["--seq-file", "no-such.txt"]), "cannot read no-such.txt"),
        (CTOS, run(&["--seq-file", "typo.txt"]), "typo.txt:4: unknown pass 'lcim'"),
        // Bytes of the input that would act on the terminal are shown escaped.
        (CTOS, run(&["--seq-file", "binary.txt"]), "binary.txt:2: unknown pass '\\u{0}gvn\\u{1b}[31m'"),
        (CTOS, fuzz(&["--programs", "progs", "--sync", "typo.txt"]), "--sync typo.txt: not a folder"),
        (CTOS, fuzz(&["--programs", "progs", "--sync", "dangling"]), "--sync dangling: a link to nothing"),
        (CTOS, fuzz(&["--programs", "progs", "--sync", "camp/causes"]), "overlap"),
        (CTOS, run(&["-p", "loop-unroll<O7>"]), "LLVM rejects the pipeline 'function(loop-unroll<O7>)'"),
        (CTOS, run(&["-p", "-licm gvn"]), "'gvn' is not a pass"),
        (CTOS, run(&["-p", "-constprop"]), "'constprop' no longer exists in LLVM"),
        (
            CTOS,
            run(&["-p", "sroa", "--llvm-arg=-no-such-flag"]),
            "LLVM rejects an --llvm-arg: Unknown command line argument '-no-such-flag'",
        ),
        (CTOS, run(&["-p", "sroa", "--llvm-arg=-slp-threshold=abc"]), "'abc' value invalid for integer argument"),
        (CTOS, run(&["-p", "sroa", "--llvm-arg=-mtriple=nonsense"]), "no LLVM target for triple 'nonsense'"),
        (CTOS, run(&["-p", "sroa", "--opt-timeout", "1e20"]), "'1e20' is not a duration"),
        (CTOS, run(&["-p", "sroa", "--opt-timeout", "-1"]), "'-1' is not a duration"),
        (CTOS, run(&["-p", "sroa", "--exec-timeout", "nan"]), "'nan' is not a duration"),
        (CTOS, run(&["-p", "sroa", "--memory", "0"]), "--memory <MIB>': expected a whole number from 64"),
        (CTOS, run(&["-p", "sroa", "-j", "0"]), "--jobs <N>': expected a whole number from 1"),
        (CTOS, run(&["-p", "sroa", "--coverage", "files"]), "invalid value 'files' for '--coverage"),
        (CTOS, run(&["-p", "sroa", "--verify-each=sometimes"]), "invalid value 'sometimes'"),
        (CTOS, run(&["-p", "sroa", "--emit-ir", "notes.txt"]), "cannot create notes.txt"),
        (CTOS, run(&["-p", "sroa", "--driver", "no-such.ll"]), "no-such.ll: no such file (the --driver)"),
        (CTOS, run(&["-p", "sroa", "--no-such-option"]), "unexpected argument '--no-such-option'"),
        (CTOS, s(&["run", "broken.ll", "-p", "sroa"]), "broken.ll:2:11: error: use of undefined value '%nope'"),
        (CTOS, s(&["run", "bad.c", "-p", "sroa"]), "use of undeclared identifier 'undeclared'"),
        (CTOS, s(&["run", "notes.txt", "-p", "sroa"]), "notes.txt:1:1: error: expected top-level entity"),
        (CTOS, s(&["run", &sum, "-p", "sroa", "--clang", "/no/such/clang"]), "cannot run /no/such/clang"),
        (CTOS, s(&["run", "broken.ll"]), "no pipeline given"),
        // ctos emi: checked before any folder is made
        (CTOS, s(&["emi", "no-such.c"]), "no-such.c: not readable"),
        (CTOS, s(&["emi", "notes.txt"]), "notes.txt: expected a C file (.c)"),
        (CTOS, s(&["emi", "bad.c"]), "use of undeclared identifier 'undeclared'"),
        (CTOS, s(&["emi", "overflow.c"]), "overflow.c: has undefined behaviour"),
        (CTOS, s(&["emi", &sum, "-n", "0"]), "expected a whole number from 1 to 1000"),
        (CTOS, s(&["emi", &sum, "--out", "used"]), "used: exists and is not empty"),
        // ctos passes
        (CTOS, s(&["passes", "--set", "bogus"]), "unknown pass set 'bogus'"),
        // ctos fuzz: every one of these must leave no campaign folder behind
        (CTOS, fuzz(&["--pass-set", "unsafe"]), "--pass-set unsafe leaves no pass to draw"),
        (CTOS, fuzz(&["--pass-set", "bogus"]), "unknown pass set 'bogus'"),
        (CTOS, fuzz(&["--programs", "progs", "--sequences", "no-such.txt"]), "cannot read no-such.txt"),
        (CTOS, fuzz(&["--programs", "progs", "--sequences", "typo.txt"]), "typo.txt:4: unknown pass 'lcim'"),
        (
            CTOS,
            fuzz(&["--programs", "progs", "--sequences", "rejected.txt"]),
            "rejected.txt:2: LLVM rejects the pipeline",
        ),
        (CTOS, fuzz(&["--programs", "progs", "--llvm-arg=-no-such-flag"]), "LLVM rejects an --llvm-arg"),
        (CTOS, fuzz(&["--opt-timeout=-1"]), "'-1' is not a duration"),
        (CTOS, fuzz(&["--opt-timeout", "nan"]), "'nan' is not a duration"),
        (CTOS, fuzz(&["--reduce-programs-time=-1"]), "'-1' is not a duration"),
        (CTOS, fuzz(&["--time-limit", "0"]), "'0' is not a duration"),
        (CTOS, fuzz(&["--reduce-ir-time", "-1"]), "'-1' is not a duration: expected 0 (off)"),
        (CTOS, fuzz(&["--localize-time", "soon"]), "'soon' is not a duration: expected 0 (off)"),
        (CTOS, fuzz(&["--programs", "progs", "--also-opt", "no-such-opt"]), "--also-opt no-such-opt: no such file"),
        (CTOS, fuzz(&["--time-limit", "5x"]), "'5x' is not a duration"),
        (CTOS, fuzz(&["--generator", "csmith,llvm-stres"]), "no generator 'llvm-stres' (there are csmith,"),
        (CTOS, fuzz(&["--generator", "csmith,csmith"]), "'csmith' is given twice"),
        (CTOS, fuzz(&["--programs", "progs", "--sync", "notes.txt/causes"]), "notes.txt/causes: cannot create it (/"),
        (
            CTOS,
            fuzz(&["--programs", "progs", "--generator", "csmith,ir-mutate"]),
            "with it, --generator may only be ir-mutate",
        ),
        (CTOS, fuzz(&["--shard", "3/2"]), "'3/2' is not a shard"),
        (CTOS, fuzz(&["--seq-len", "10..5"]), "'10..5' is not a length range"),
        (CTOS, fuzz(&["--seq-select", "0"]), "--seq-select <N>': expected a whole number from 1"),
        (CTOS, fuzz(&["--programs", "no-such-dir"]), "cannot read no-such-dir"),
        (CTOS, fuzz(&["--programs", "empty"]), "has no .c, .ll or .bc files"),
        (CTOS, fuzz(&["--programs", "badprogs"]), "broken.ll:2:11: error: use of undefined value"),
        (CTOS, fuzz(&["--exclude", "licm no-such-pass"]), "--exclude 'licm no-such-pass': unknown pass 'no-such-pass'"),
        (CTOS, fuzz(&["--exclude-file", "no-such-file"]), "--exclude-file no-such-file: cannot read it"),
        (CTOS, s(&["fuzz", "--resume", "no-such-dir"]), "no-such-dir: no such folder"),
        (CTOS, s(&["fuzz", "--resume", "empty"]), "empty holds no campaign"),
        (CTOS, s(&["fuzz"]), "required arguments were not provided: --out"),
        (
            CTOS,
            s(&["fuzz", "--out", "camp", "--resume", "empty"]),
            "'--out <DIR>' cannot be used with '--resume <DIR>'",
        ),
        // ctos report and merge: only ever read
        (CTOS, s(&["report", "no-such-dir"]), "no-such-dir: no such folder"),
        (CTOS, s(&["report", "empty"]), "empty holds no campaign (no campaign.sqlite)"),
        (CTOS, s(&["report", "fake"]), "fake is not a ctos campaign"),
        (CTOS, s(&["merge", "--out", "merged", "empty"]), "empty holds no campaign"),
        (CTOS, s(&["merge", "--out", "merged", "fake"]), "fake is not a ctos campaign"),
        (CTOS, s(&["merge", "--out", "used", "fake"]), "used is not empty; merge into a new folder"),
        (CTOS, s(&["merge", "--out", "merged"]), "required arguments were not provided"),
        (CTOS, s(&["merge", "--out", "fake/bugs/merged", "fake"]), "fake/bugs/merged is inside the shard fake"),
        // ctos interesting: a wrong command must not read as "not interesting" (exit 1)
        (
            CTOS,
            interesting(&["--passes", "function(scalarizer", &csmith]),
            "LLVM rejects --passes 'function(scalarizer'",
        ),
        (CTOS, interesting(&["--passes", "nosuchpass", &csmith]), "unknown pass name 'nosuchpass'"),
        (
            CTOS,
            interesting(&["--passes", "sroa", "--llvm-arg=-no-such-flag", &csmith]),
            "LLVM rejects an --llvm-arg: Unknown command line argument '-no-such-flag'",
        ),
        (CTOS, interesting(&["--passes", "sroa", "no-such.c"]), "no-such.c: no such file"),
        (
            CTOS,
            interesting(&["--passes", "sroa", "--keep-smallest", "progs", &csmith]),
            "--keep-smallest progs: not a file",
        ),
        (LOCSEQ, s(&["isolate", "badkind"]), "unknown kind 'bogus'"),
        // locseq isolate
        (LOCSEQ, s(&["isolate", "no-such.txt", &repro]), "cannot read no-such.txt"),
        (LOCSEQ, s(&["isolate", "typo.txt", &repro]), "typo.txt: unknown pass 'lcim'"),
        (LOCSEQ, s(&["isolate", "rejected.txt", &repro]), "rejected.txt: LLVM rejects the pipeline"),
        (LOCSEQ, s(&["isolate", &seq, "no-such.ll"]), "no-such.ll: no such file"),
        (LOCSEQ, isolate(&["--oracle", "script:no-such.sh"]), "the oracle script no-such.sh: No such file"),
        (LOCSEQ, isolate(&["--oracle", "script:plain.sh"]), "plain.sh is not executable"),
        (LOCSEQ, isolate(&["--oracle", "bogus"]), "unknown oracle 'bogus'"),
        (
            LOCSEQ,
            isolate(&["--strategy", "diwi", "--oracle", "script:plain.sh"]),
            "--strategy diwi mutates the program, but a script oracle tests its own program",
        ),
        (LOCSEQ, isolate(&["--time", "inf"]), "'inf' is not a duration"),
        (LOCSEQ, isolate(&["--time", "0"]), "'0' is not a duration"),
        (LOCSEQ, isolate(&["--crossover", "1.5"]), "--crossover must be between 0 and 1"),
        (LOCSEQ, isolate(&["--near", "nan"]), "--near must be between 0 and 1"),
        (LOCSEQ, isolate(&["--population", "1"]), "--population <N>': expected a whole number from 2"),
        (LOCSEQ, isolate(&["--max-evals", "0"]), "--max-evals <N>': expected a whole number from 1"),
        (LOCSEQ, isolate(&["--pattern", "("]), "--pattern '(' is not a regular expression"),
        (LOCSEQ, isolate(&["--candidates", "bogus"]), "--candidates: unknown pass set 'bogus'"),
        (LOCSEQ, isolate(&["--granularity", "files"]), "invalid value 'files' for '--granularity"),
        (LOCSEQ, isolate(&["--html", "no-such-dir/page.html"]), "the folder no-such-dir does not exist"),
        (LOCSEQ, isolate(&["--html", "progs"]), "is a folder; give a file name"),
        (LOCSEQ, s(&["isolate", &seq]), "give the program after the sequence file"),
        (LOCSEQ, s(&["isolate", "progs"]), "progs is a folder but not a bug folder"),
        (LOCSEQ, s(&["isolate", &bench("191714", "."), &repro]), "is a bug folder, which brings its program"),
        (CTOS, s(&["report", "progs", "--html", "page.html"]), "progs holds no campaign"),
        (CTOS, s(&["report", "progs", "--html", "no-such-dir/page.html"]), "the folder no-such-dir does not exist"),
        (
            LOCSEQ,
            s(&["isolate", "clean.txt", &repro, "--llvm-arg=-slp-threshold=-99999", "--time", "5"]),
            "the failure does not reproduce",
        ),
        // locseq eval
        (LOCSEQ, s(&["eval", "no-such-dir"]), "no-such-dir: no such folder"),
        (LOCSEQ, s(&["eval", "empty"]), "empty holds no bug folders"),
        (LOCSEQ, s(&["eval", &bench("191714", ".."), "--bug", "99999"]), "--bug 99999: no such bug"),
        (
            LOCSEQ,
            s(&["eval", &bench("191714", ".."), "--repeat", "0"]),
            "--repeat <N>': expected a whole number from 1",
        ),
    ]
}

#[test]
fn every_command_answers_bad_input_with_one_line_and_leaves_nothing_behind() {
    let f = Fixtures::new();
    let before = f.listing();
    let cases = cases();
    assert!(cases.len() >= 40, "{} cases", cases.len());
    let mut problems = Vec::new();
    for (binary, args, expected) in &cases {
        let out = run(binary, args, f.dir.path());
        let name = Path::new(binary).file_name().unwrap().to_string_lossy();
        let what = format!("{name} {}", args.join(" "));
        let stderr = out.stderr.trim_end();
        if out.code != 2 {
            problems.push(format!("{what}: exit {} (want 2): {stderr}", out.code));
        } else if stderr.lines().count() != 1 || !stderr.starts_with("error: ") || stderr.len() > 400 {
            problems.push(format!("{what}: not one short error line: {stderr:?}"));
        } else if !stderr.contains(expected) {
            problems.push(format!("{what}: {stderr:?} does not say {expected:?}"));
        } else if stderr.contains("panicked") || !out.stdout.is_empty() {
            problems.push(format!("{what}: a panic or output: {stderr:?} {:?}", out.stdout));
        }
        if f.listing() != before {
            problems.push(format!("{what}: the fixtures folder changed: {:?}", f.listing()));
            break;
        }
    }
    assert!(problems.is_empty(), "{} of {} cases:\n{}", problems.len(), cases.len(), problems.join("\n"));
}

/// After a refused campaign, the corrected command starts it: nothing was left behind.
#[test]
fn a_corrected_fuzz_command_runs_after_a_refused_one() {
    let f = Fixtures::new();
    let args = |sequences: &str| {
        ["fuzz", "--out", "camp", "--programs", "progs", "--sequences", sequences, "--iterations", "1", "-j", "2"]
            .map(String::from)
            .to_vec()
    };
    let refused = run(CTOS, &args("rejected.txt"), f.dir.path());
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(!f.dir.path().join("camp").exists(), "the refused campaign left its folder");
    let corrected = run(CTOS, &args("good.txt"), f.dir.path());
    assert_eq!(corrected.code, 0, "{}", corrected.stderr);
    assert!(corrected.stdout.contains("1 pairs"), "{}", corrected.stdout);
}

/// `locseq eval .` inside a bug folder names the bug after the folder.
#[test]
fn eval_of_the_current_bug_folder_works() {
    // A bug that does not fire on this build is skipped at once.
    let id = if ctos::llvm::version().0 == 22 { "147869" } else { "191714" };
    let dir = PathBuf::from(bench(id, "meta.json")).parent().unwrap().to_path_buf();
    let out = run(LOCSEQ, &["eval", ".", "--json"].map(String::from), &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let bug = out.stdout.lines().find(|l| l.contains("\"type\":\"bug\"")).expect("a bug record");
    assert!(bug.contains(&format!("\"bug\":\"{id}\"")) && bug.contains("skipped"), "{bug}");
}

/// An `--opt` that never answers is refused (one line, status 2), not waited for forever.
#[test]
fn an_opt_that_never_answers_is_refused() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let hangs = dir.path().join("hangs");
    std::fs::write(&hangs, "#!/bin/sh\nexec sleep 600\n").unwrap();
    std::fs::set_permissions(&hangs, std::fs::Permissions::from_mode(0o755)).unwrap();
    let csmith = root().join("tests/data/csmith-12345.c");
    let mut child = Command::new(CTOS)
        .arg("run")
        .arg(&csmith)
        .args(["-p", "sroa", "--opt"])
        .arg(&hangs)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A guard against the defect itself, far above the refusal's own limit.
    let guard = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > guard {
            child.kill().unwrap();
            panic!("ctos run --opt {} still waiting after 120 s", hangs.display());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("did not answer"), "{stderr}");
}

/// File names need not be UTF-8: a program named so is fuzzed, into a campaign folder
/// named so, and resumed; a panic (or its hook) must not meet such a name. Paths the
/// campaign records as text (`--programs`) are refused, and nothing is written.
#[test]
fn programs_and_campaigns_whose_names_are_not_utf8_run_and_resume() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt as _;
    let f = Fixtures::new();
    let dir = f.dir.path();
    let programs = dir.join("progs-latin1");
    std::fs::create_dir(&programs).unwrap();
    std::fs::copy(root().join("examples/sum.c"), programs.join(OsStr::from_bytes(b"prog-\xe9.c"))).unwrap();
    let out = dir.join(OsStr::from_bytes(b"camp-\xe9"));
    let fuzz = |args: &[&OsStr]| {
        let run = Command::new(CTOS).arg("fuzz").args(args).current_dir(dir).output().unwrap();
        (run.status.code(), String::from_utf8_lossy(&run.stdout).into_owned() + &String::from_utf8_lossy(&run.stderr))
    };
    let o = |s: &'static str| OsStr::new(s);
    let (code, text) = fuzz(&[
        o("--out"),
        out.as_os_str(),
        o("--programs"),
        programs.as_os_str(),
        o("--sequences"),
        o("good.txt"),
        o("--iterations"),
        o("1"),
        o("-j"),
        o("2"),
    ]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("1 pairs"), "{text}");
    let (code, text) = fuzz(&[o("--resume"), out.as_os_str(), o("--iterations"), o("2")]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("pairs") && !text.contains("internal error"), "{text}");

    // The command line a report records (and the panic hook prints) is read lossily.
    let program = programs.join(OsStr::from_bytes(b"prog-\xe9.c"));
    let run = Command::new(CTOS).arg("run").arg(&program).args(["-p", "sroa", "--json"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.stderr));
    let begin = stdout.lines().next().unwrap_or_default();
    assert!(begin.contains("\"begin\"") && begin.contains("prog-\u{fffd}.c"), "{begin}");

    let refused = dir.join(OsStr::from_bytes(b"progs-\xe9"));
    std::fs::rename(&programs, &refused).unwrap();
    let before = f.listing();
    let (code, text) = fuzz(&[o("--out"), o("camp2"), o("--programs"), refused.as_os_str(), o("--iterations"), o("1")]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("a path that is not UTF-8") && text.trim_end().lines().count() == 1, "{text}");
    assert_eq!(f.listing(), before);
}
