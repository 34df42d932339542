//! Against the real csmith and clang.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;
use crate::llvm::CFrontend;

fn small(generator: Generator) -> GenConfig {
    GenConfig { generator, min_size: 10_000, timeout: Duration::from_secs(10), ..GenConfig::default() }
}

fn write(dir: &Path, name: &str, source: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, source).unwrap();
    path
}

#[test]
fn generate_is_deterministic_in_the_seed() {
    let config = small(Generator::Csmith);
    let a = generate(41, &config).unwrap();
    assert_eq!(a, generate(41, &config).unwrap());
    let b = generate(42, &config).unwrap();
    assert_ne!(a.source, b.source);
    assert_ne!(a.csmith_args, b.csmith_args);
    assert_eq!(a.csmith_args[0], "--seed");
    assert_eq!(a.csmith_args.len(), 2, "default csmith: only the seed");
    assert!(a.probabilities.is_none());
}

#[test]
fn default_config_gives_programs_of_at_least_80_kb() {
    let config = GenConfig::default();
    assert_eq!((config.generator, config.min_size), (Generator::Csmith, 80_000));
    let seeds = [1, 2, 3];
    let programs: Vec<Generated> = generate_many(&seeds, &config, 2).into_iter().map(Result::unwrap).collect();
    for p in &programs {
        assert!(p.source.len() >= 80_000, "seed {}: {} bytes", p.seed, p.source.len());
        assert!(p.source.contains("transparent_crc"));
    }
    // About 4 in 10 csmith programs are smaller: some of these needed a second run.
    assert!(programs.iter().any(|p| p.attempts > 1), "{:?}", programs.iter().map(|p| p.attempts).collect::<Vec<_>>());
}

#[test]
fn generate_gives_up_after_max_attempts() {
    let config = GenConfig { min_size: usize::MAX, max_attempts: 2, ..small(Generator::Csmith) };
    let error = generate(5, &config).unwrap_err().to_string();
    assert!(error.contains("in 2 attempts"), "{error}");
}

#[test]
fn swarm_configurations_differ_by_seed_and_compile() {
    let frontend = CFrontend::default();
    let dir = tempfile::tempdir().unwrap();
    for generator in [Generator::Swarm, Generator::SwarmV] {
        let programs: Vec<Generated> =
            generate_many(&[1, 2, 3], &small(generator), 2).into_iter().map(Result::unwrap).collect();
        for (i, p) in programs.iter().enumerate() {
            assert!(p.csmith_args.iter().any(|a| a == "--probability-configuration"));
            assert!(p.csmith_args.iter().any(|a| a.starts_with("--no-")), "{:?}", p.csmith_args);
            for q in &programs[i + 1..] {
                assert_ne!(p.csmith_args[2..], q.csmith_args[2..], "switches must differ between seeds");
                assert_ne!(p.probabilities, q.probabilities);
            }
            let path = write(dir.path(), &format!("{generator:?}-{}.c", p.seed), &p.source);
            frontend.compile(&path).unwrap_or_else(|e| panic!("{generator:?} seed {}: {e}", p.seed));
        }
        let probabilities = programs[0].probabilities.as_deref().unwrap();
        let singles: Vec<u32> = probabilities
            .lines()
            .filter(|l| !l.starts_with(['(', '[']))
            .map(|l| l.split_once('=').unwrap().1.parse().unwrap())
            .collect();
        match generator {
            Generator::Swarm => assert!(singles.iter().all(|&v| v == 0 || v >= 80), "{probabilities}"),
            _ => assert!(singles.iter().any(|&v| v != 0 && v != 100 && v != 80), "{probabilities}"),
        }
    }
}

#[test]
fn generate_many_matches_sequential_generate_in_input_order() {
    let config = small(Generator::Swarm);
    let seeds = [7, 3, 11, 3];
    let together = generate_many(&seeds, &config, 2);
    for (seed, result) in seeds.iter().zip(together) {
        let one = generate(*seed, &config).unwrap();
        assert_eq!(result.unwrap(), one);
        assert_eq!(one.seed, *seed);
    }
}

#[test]
fn screen_keeps_a_clean_csmith_program_and_its_checksum() {
    let dir = tempfile::tempdir().unwrap();
    let program = generate(9, &small(Generator::Csmith)).unwrap();
    let path = write(dir.path(), "clean.c", &program.source);
    match screen(&path, &Screen::default()) {
        Screening::Clean { stdout, .. } => assert!(stdout.starts_with("checksum = "), "{stdout}"),
        other => panic!("{other:?}"),
    }
}

const SIGNED_OVERFLOW: &str = "#include <stdio.h>\n\
    int main(void) { volatile int one = 1; int x = 2147483647; x += one; printf(\"%d\\n\", x); return 0; }\n";
const HEAP_READ_OUT_OF_BOUNDS: &str = "#include <stdlib.h>\n\
    int main(void) { int *p = malloc(4 * sizeof(int)); volatile int i = 4; p[0] = 0; return p[i]; }\n";
// Waits rather than spins: the timeout is on the clock, and a spinning program held a core
// for all of it (the screening test alone: 12.2 CPU-s spinning, 2.1 waiting).
const ENDLESS: &str = "#include <unistd.h>\nint main(void) { for (;;) pause(); }\n";
const BROKEN: &str = "int main(void) { return undeclared_variable; }\n";
const EXIT_3: &str = "int main(void) { return 3; }\n";

#[test]
fn screen_many_classifies_planted_programs_in_input_order() {
    let dir = tempfile::tempdir().unwrap();
    let sources: Vec<PathBuf> = [
        ("overflow.c", SIGNED_OVERFLOW),
        ("oob.c", HEAP_READ_OUT_OF_BOUNDS),
        ("endless.c", ENDLESS),
        ("broken.c", BROKEN),
        ("exit3.c", EXIT_3),
    ]
    .iter()
    .map(|(name, text)| write(dir.path(), name, text))
    .collect();
    // Long enough that a sanitized program's start-up, on a loaded machine, is no timeout
    // (500 ms was not, once: the heap overflow timed out); the endless one waits it out.
    let quick = Screen { timeout: Duration::from_secs(5), ..Screen::default() };
    let verdicts = screen_many(&sources, &quick, 2);

    match &verdicts[0] {
        Screening::Undefined(line) => assert!(line.contains("runtime error: signed integer overflow"), "{line}"),
        other => panic!("overflow: {other:?}"),
    }
    match &verdicts[1] {
        Screening::Undefined(line) => {
            assert!(line.starts_with("ERROR: AddressSanitizer: heap-buffer-overflow"), "{line}")
        }
        other => panic!("out of bounds: {other:?}"),
    }
    assert_eq!(verdicts[2], Screening::Timeout);
    match &verdicts[3] {
        Screening::CompileError(message) => assert!(message.contains("undeclared_variable"), "{message}"),
        other => panic!("broken: {other:?}"),
    }
    match &verdicts[4] {
        Screening::Failed(message) => assert!(message.contains("exit status: 3"), "{message}"),
        other => panic!("exit 3: {other:?}"),
    }
    // One at a time gives the same verdicts.
    assert_eq!(screen(&sources[0], &quick), verdicts[0]);
    assert_eq!(screen(&sources[2], &quick), Screening::Timeout);
}

#[test]
fn screening_serializes_with_verdict_tags() {
    let json = serde_json::to_string(&Screening::Undefined("x".into())).unwrap();
    assert_eq!(json, r#"{"verdict":"undefined","detail":"x"}"#);
    let json = serde_json::to_string(&Screening::Timeout).unwrap();
    assert_eq!(json, r#"{"verdict":"timeout"}"#);
}

#[test]
fn compile_many_answers_each_source_in_input_order_as_compile_does() {
    let dir = tempfile::tempdir().unwrap();
    let sources: Vec<PathBuf> = [("exit3.c", EXIT_3), ("broken.c", BROKEN), ("overflow.c", SIGNED_OVERFLOW)]
        .iter()
        .map(|(name, text)| write(dir.path(), name, text))
        .collect();
    let frontend = CFrontend::default();
    for jobs in [1, 2, 5] {
        let results = frontend.compile_many(&sources, jobs);
        assert_eq!(results.len(), 3);
        assert_eq!(results[0].as_ref().unwrap(), &frontend.compile(&sources[0]).unwrap(), "jobs {jobs}");
        assert!(results[1].as_ref().unwrap_err().contains("undeclared_variable"), "{:?}", results[1]);
        assert_eq!(results[2].as_ref().unwrap(), &frontend.compile(&sources[2]).unwrap(), "jobs {jobs}");
    }
    assert!(frontend.compile_many(&[], 2).is_empty());
}
