//! The IR mutator on real programs: the LLVM bug reproducers of the benchmark and a csmith
//! program. The core property: every mutant is valid IR.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::ir::{ir_text_of, IrMutator, RULES_PER_CLASS};
use super::{Mutator, RuleClass};
use crate::llvm::{IrModule, TargetSpec};

const BUGS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/bugs");

/// `repro.ll`, `repro.v22.ll` and `driver.ll` of every benchmark bug that this LLVM reads.
fn bench_programs() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let dirs = std::fs::read_dir(BUGS).unwrap_or_else(|e| panic!("{BUGS}: {e}"));
    let mut dirs: Vec<PathBuf> = dirs.filter_map(|d| d.ok().map(|d| d.path())).collect();
    dirs.sort();
    for dir in dirs {
        for file in ["repro.ll", "repro.v22.ll", "driver.ll"] {
            let path = dir.join(file);
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            // Older reproducers use typed pointers, which this LLVM no longer reads.
            if IrModule::from_bytes(text.as_bytes(), "p.ll", &TargetSpec::default()).is_ok() {
                out.push((path.display().to_string(), text));
            }
        }
    }
    out
}

/// csmith's program for seed 1 at -O0 (optimizable), compiled once per test process.
fn csmith_program() -> &'static str {
    static PROGRAM: OnceLock<Result<String, String>> = OnceLock::new();
    let made = PROGRAM.get_or_init(|| {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let c = dir.path().join("p.c");
        let ll = dir.path().join("p.ll");
        let generated =
            std::process::Command::new("csmith").args(["--seed", "1"]).output().map_err(|e| format!("csmith: {e}"))?;
        if !generated.status.success() {
            return Err("csmith failed".into());
        }
        std::fs::write(&c, &generated.stdout).map_err(|e| e.to_string())?;
        let built = std::process::Command::new(crate::llvm::clang_for_this_llvm())
            .args(["-O0", "-Xclang", "-disable-O0-optnone", "-emit-llvm", "-S", "-w", "-I/usr/include/csmith"])
            .arg(&c)
            .arg("-o")
            .arg(&ll)
            .output()
            .map_err(|e| format!("clang: {e}"))?;
        if !built.status.success() {
            return Err(format!("clang failed: {}", String::from_utf8_lossy(&built.stderr)));
        }
        std::fs::read_to_string(&ll).map_err(|e| e.to_string())
    });
    match made {
        Ok(text) => text,
        Err(e) => panic!("cannot make the csmith program (csmith and clang are needed): {e}"),
    }
}

/// Every rule, five seeds: each mutant verifies in a fresh parse, differs from the program
/// and prints back to itself. Returns the classes that gave a mutant. Two threads take
/// alternate rules (each parse has its own LLVM context): on csmith's program these are
/// 3,000 parses of a large module, the longest unit test of the LLVM 19 run.
fn check_program(name: &str, program: &str) -> HashSet<RuleClass> {
    let mutator = IrMutator::new();
    let original = ir_text_of(program.as_bytes()).expect("the program parses");
    let rules = mutator.rules().len();
    std::thread::scope(|scope| {
        let halves: Vec<_> = (0..2)
            .map(|first| {
                let (mutator, original) = (&mutator, &original);
                scope.spawn(move || {
                    (first..rules)
                        .step_by(2)
                        .flat_map(|rule| check_rule(name, program, original, mutator, rule))
                        .collect()
                })
            })
            .collect();
        halves
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .fold(HashSet::new(), |all: HashSet<RuleClass>, half: HashSet<RuleClass>| &all | &half)
    })
}

/// `check_program` for one rule: the class, if the rule gave a mutant.
fn check_rule(name: &str, program: &str, original: &str, mutator: &IrMutator, rule: usize) -> Option<RuleClass> {
    let info = &mutator.rules()[rule];
    let mut class = None;
    for seed in 0..5 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mutant = mutator.mutate(program, rule, &mut rng).expect("a valid program is readable");
        let Some(mutant) = mutant else {
            // Sites the verifier refused three (or eight) times in a row would mean a broken edit.
            let sites = crate::llvm::ir_site_count(program, mutator.edit(rule).unwrap()).unwrap();
            assert_eq!(sites, 0, "{name}, {}, seed {seed}: sites but no mutant", info.name);
            break;
        };
        let what = format!("{name}, {}, seed {seed}: {}", info.name, mutant.description);
        if let Err(e) = IrModule::from_bytes(mutant.text.as_bytes(), "m.ll", &TargetSpec::default()) {
            panic!("{what}: the mutant is invalid: {e}\n{}", mutant.text);
        }
        assert_ne!(mutant.text, original, "{what}: nothing changed");
        let reprinted = ir_text_of(mutant.text.as_bytes()).expect("the mutant parses");
        assert_eq!(reprinted, mutant.text, "{what}: printing is not stable");
        assert!(mutant.description.starts_with(&info.name), "{what}");
        if program.starts_with("; ModuleID") {
            assert_eq!(mutant.text.lines().next(), program.lines().next(), "{what}: the module was renamed");
        }
        assert!(mutant.line >= 1 && mutant.line <= program.lines().count().max(1), "{what}: line {}", mutant.line);
        class = Some(info.class);
    }
    class
}

#[test]
fn every_mutant_of_the_benchmark_programs_verifies() {
    let programs = bench_programs();
    assert!(programs.len() >= 4, "only {} benchmark programs parse: {programs:?}", programs.len());
    let mut classes = HashSet::new();
    for (name, text) in &programs {
        classes.extend(check_program(name, text));
    }
    // Small programs still exercise most of the table.
    assert!(classes.len() >= 8, "{classes:?}");
}

#[test]
fn every_mutant_of_a_csmith_program_verifies_and_every_class_has_one() {
    let classes = check_program("csmith seed 1", csmith_program());
    let mutator = IrMutator::new();
    for class in RuleClass::ALL {
        if mutator.rules().iter().any(|r| r.class == class) {
            assert!(classes.contains(&class), "no mutant of class {class:?} on the csmith program");
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_mutant() {
    let mutator = IrMutator::new();
    let program = csmith_program();
    let mut made = 0;
    for rule in (0..mutator.rules().len()).step_by(7) {
        let a = mutator.mutate(program, rule, &mut ChaCha8Rng::seed_from_u64(3)).unwrap();
        let b = mutator.mutate(program, rule, &mut ChaCha8Rng::seed_from_u64(3)).unwrap();
        made += a.is_some() as usize;
        assert_eq!(a, b, "rule {}", mutator.rules()[rule].name);
    }
    assert!(made > 5, "only {made} rules gave mutants");
}

#[test]
fn the_table_has_unique_names_and_the_documented_counts() {
    let mutator = IrMutator::new();
    let names: HashSet<&str> = mutator.rules().iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names.len(), mutator.rules().len(), "duplicate rule names");
    let doc = include_str!("ir.rs");
    for class in RuleClass::ALL {
        let count = mutator.rules().iter().filter(|r| r.class == class).count();
        assert_eq!(count, RULES_PER_CLASS[class.index()], "{class:?}");
        if count > 0 {
            let listed = format!("{class:?} ({count})");
            assert!(doc.contains(&listed), "the module comment does not say {listed}");
        }
    }
    assert_eq!(mutator.rules().len(), 218);
}

fn lli() -> PathBuf {
    let path = PathBuf::from(format!("/usr/lib/llvm-{}/bin/lli", crate::llvm::version().0));
    assert!(path.exists(), "{} is missing: install the llvm package of this LLVM version", path.display());
    path
}

/// stdout and exit status of `lli` on `text`.
fn run(lli: &Path, dir: &Path, text: &str) -> (String, Option<i32>) {
    let file = dir.join("m.ll");
    std::fs::write(&file, text).unwrap();
    let out = std::process::Command::new("timeout").arg("20").arg(lli).arg(&file).output().unwrap();
    (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code())
}

#[test]
fn structural_mutants_print_what_the_program_prints() {
    let lli = lli();
    let dir = tempfile::tempdir().unwrap();
    let program = csmith_program();
    let expected = run(&lli, dir.path(), program);
    assert!(expected.0.contains("checksum"), "the program itself does not run: {expected:?}");
    let mutator = IrMutator::new();
    for (rule, info) in mutator.rules().iter().enumerate().filter(|(_, r)| r.class.is_structural()) {
        for seed in 0..2 {
            let mutant = mutator.mutate(program, rule, &mut ChaCha8Rng::seed_from_u64(seed)).unwrap();
            let mutant = mutant.unwrap_or_else(|| panic!("{} gave no mutant", info.name));
            assert_eq!(run(&lli, dir.path(), &mutant.text), expected, "{}", mutant.description);
        }
    }
}

#[test]
fn text_that_is_not_ir_is_an_error() {
    let mutator = IrMutator::new();
    for junk in ["int main(void) { return 0; }", "define i32 @f( {", "\u{0}\u{1}garbage"] {
        for rule in [0, mutator.rules().len() - 1] {
            assert!(mutator.mutate(junk, rule, &mut ChaCha8Rng::seed_from_u64(0)).is_err(), "{junk:?}");
        }
    }
    // Parses, but the verifier refuses it.
    let broken = "define i32 @f() {\n  ret i64 0\n}\n";
    assert!(mutator.mutate(broken, 0, &mut ChaCha8Rng::seed_from_u64(0)).is_err());
    assert!(mutator.mutate("", 10_000, &mut ChaCha8Rng::seed_from_u64(0)).is_err(), "a rule out of range");
}

const SMALL: &str = r#"%pair = type { i32, i32 }
@g = global %pair zeroinitializer
declare i32 @printf(ptr, ...)

define i32 @f(i32 %a, i32 %b) {
entry:
  %s = alloca i32, i32 4
  %q = getelementptr %pair, ptr @g, i64 0, i32 1
  %x = add nsw i32 %a, 7
  %d = sdiv exact i32 %x, %b
  %c = icmp slt i32 %d, %a
  %r = select i1 %c, i32 %d, i32 %a
  %p = call i32 (ptr, ...) @printf(ptr null, i32 %r)
  ret i32 %r
}
"#;

fn mutate_small(rule: &str, seed: u64) -> Option<super::Mutant> {
    let mutator = IrMutator::new();
    let index = mutator.rules().iter().position(|r| r.name == rule).unwrap_or_else(|| panic!("no rule {rule}"));
    mutator.mutate(SMALL, index, &mut ChaCha8Rng::seed_from_u64(seed)).unwrap()
}

#[test]
fn opcode_changes_keep_only_the_flags_the_new_opcode_takes() {
    let sub = mutate_small("ir add -> sub", 0).unwrap();
    assert!(sub.text.contains("%x = sub nsw i32 %a, 7"), "{}", sub.text);
    assert_eq!(sub.description, "ir add -> sub in @f: %x = add nsw i32 %a, 7");
    assert_eq!(sub.line, 9);
    let udiv = mutate_small("ir sdiv -> udiv", 0).unwrap();
    assert!(udiv.text.contains("%d = udiv exact i32 %x, %b"), "{}", udiv.text);
    let srem = mutate_small("ir sdiv -> srem", 0).unwrap();
    assert!(srem.text.contains("%d = srem i32 %x, %b"), "{}", srem.text);
    let sle = mutate_small("ir icmp slt -> sle", 0).unwrap();
    assert!(sle.text.contains("%c = icmp sle i32 %d, %a"), "{}", sle.text);
    assert!(mutate_small("ir icmp sgt -> sle", 0).is_none(), "no sgt in the program");
    assert!(mutate_small("ir drop exact", 0).unwrap().text.contains("%d = sdiv i32 %x, %b"));
    assert!(mutate_small("ir add nuw", 0).unwrap().text.contains("%x = add nuw nsw i32 %a, 7"));
}

#[test]
fn constants_that_must_stay_constant_are_left_alone() {
    // Sites: add's 7 and the GEP's leading 0 (not the struct field, not the alloca size).
    for seed in 0..20 {
        let m = mutate_small("ir const +1", seed).unwrap();
        assert!(m.text.contains("alloca i32, i32 4"), "{}", m.description);
        let add = m.text.contains("add nsw i32 %a, 8") && m.text.contains("i64 0, i32 1");
        let gep = m.text.contains("add nsw i32 %a, 7") && m.text.contains("i64 1, i32 1");
        assert!(add || gep, "{}", m.description);
    }
}

#[test]
fn changes_feeding_output_calls_are_marked() {
    let mut seen = HashSet::new();
    for seed in 0..40 {
        let m = mutate_small("ir replace value", seed).unwrap();
        let feeds_printf = m.description.contains("@printf") || m.description.contains("select");
        assert_eq!(m.touches_output, feeds_printf, "{}", m.description);
        seen.insert(m.touches_output);
    }
    assert_eq!(seen.len(), 2, "both kinds of site were drawn");
}

#[test]
fn bitcode_becomes_text() {
    let module = IrModule::from_bytes(SMALL.as_bytes(), "s.ll", &TargetSpec::default()).unwrap();
    let text = ir_text_of(&module.bitcode()).unwrap();
    assert!(text.contains("%x = add nsw i32 %a, 7"), "{text}");
    assert!(ir_text_of(b"BC\xC0\xDEjunk").is_err());
}

#[test]
fn guards_of_earlier_structural_mutants_stay_opaque() {
    let mutator = IrMutator::new();
    let rule = |name: &str| mutator.rules().iter().position(|r| r.name == name).unwrap();
    let guarded = mutator.mutate(SMALL, rule("ir guard block"), &mut ChaCha8Rng::seed_from_u64(1)).unwrap().unwrap();
    assert!(guarded.text.contains("load volatile i1, ptr @__ctos_opaque"), "{}", guarded.text);
    assert!(mutator
        .mutate(&guarded.text, rule("ir drop volatile"), &mut ChaCha8Rng::seed_from_u64(1))
        .unwrap()
        .is_none());
    for name in ["ir replace value", "ir not operand"] {
        for seed in 0..30 {
            let m = mutator.mutate(&guarded.text, rule(name), &mut ChaCha8Rng::seed_from_u64(seed)).unwrap().unwrap();
            assert!(!m.description.contains("ctos"), "{}", m.description);
        }
    }
}
