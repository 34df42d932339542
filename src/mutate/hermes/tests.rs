//! Hermes variants of real csmith programs: each compiles, is clean under UBSan and ASan at
//! -O0, prints exactly what its seed prints; the three strategies all occur, and the code a
//! TCB adds runs.

use std::collections::HashMap;
use std::sync::Mutex;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{chain, output_at_o0, profile, EmiConfig, Strategy, Variant};
use crate::mutate::parse_source;
use crate::mutate::scope::statements;
use crate::program::{generate_many, screen, screen_many, GenConfig, Screen, Screening};

/// The first `n` csmith programs from seed 1 on (csmith's own sizes, as the paper's seeds)
/// that UBSan and ASan find clean within a second, with their output.
fn clean_seeds(n: usize) -> Vec<(u64, String, String)> {
    let dir = tempfile::tempdir().unwrap();
    let small = GenConfig { min_size: 0, ..GenConfig::default() };
    // Clean ones ran in under 10 ms (seeds 1 to 16); each that never ends burnt a core
    // for the default 10 s, three of them the longest part of finding eight.
    let quick = Screen { timeout: std::time::Duration::from_secs(1), ..Screen::default() };
    let mut out = Vec::new();
    let mut next = 1u64;
    // Bounded: when csmith or the sanitizers fail, no seed is ever clean.
    while out.len() < n {
        assert!(next < 1 + 40 * n as u64, "{} clean programs among csmith seeds 1..{next}", out.len());
        // As many as are still missing (two at least, one per core): a sanitized compile
        // takes seconds, and screening seeds past the n-th was wasted.
        let count = (n - out.len()).max(2) as u64;
        let batch: Vec<u64> = (next..next + count).collect();
        next += count;
        let generated = generate_many(&batch, &small, 2);
        assert!(generated.iter().any(|g| g.is_ok()), "csmith made none of seeds {batch:?}");
        let generated: Vec<_> = generated.into_iter().flatten().collect();
        let paths: Vec<_> = generated
            .iter()
            .map(|g| {
                let path = dir.path().join(format!("{}.c", g.seed));
                std::fs::write(&path, &g.source).unwrap();
                path
            })
            .collect();
        // Two at a time: the chain test waits for these seeds, so one screening at a time
        // left a core idle.
        for (g, screening) in generated.into_iter().zip(screen_many(&paths, &quick, 2)) {
            if let Screening::Clean { stdout, .. } = screening {
                out.push((g.seed, g.source, stdout));
            }
        }
    }
    out.truncate(n);
    out
}

/// Points inside a TCB of `v` that ran when `v` was profiled at every such point. Only those
/// are instrumented: every point of a csmith variant, each recording up to 48 values, made
/// the longest compiles of the test.
fn tcb_points_that_ran(v: &Variant, config: &EmiConfig) -> usize {
    let tu = parse_source(&v.source, &config.args).unwrap();
    let tcbs: Vec<_> =
        v.mutations.iter().zip(&v.placed).filter(|(m, _)| m.strategy == Strategy::Tcb).map(|(_, r)| r).collect();
    // A point's offset is its statement's start.
    let inside = statements(&tu).into_iter().filter(|&(stmt, _)| tcbs.iter().any(|r| r.contains(&tu.node(stmt).start)));
    let instrumented = profile::instrument_statements(&tu, &mut ChaCha8Rng::seed_from_u64(0), inside);
    // Points that never ran are left out of the profile.
    profile::run(&instrumented, &config.clang, &config.args, config.timeout).unwrap().len()
}

/// How many csmith programs the variants test checks: 8 in the test suite (about 30 s alone),
/// `CTOS_HERMES_PROGRAMS=30` for the 30 of the first version of this test (two minutes).
fn programs_to_check() -> usize {
    std::env::var("CTOS_HERMES_PROGRAMS").ok().and_then(|n| n.parse().ok()).unwrap_or(8).max(1)
}

/// The clean seeds of this run, generated and screened once for both tests below (the
/// chain test's one, `clean_seeds(1)`, is the first of them).
fn suite_seeds() -> &'static [(u64, String, String)] {
    static SEEDS: std::sync::OnceLock<Vec<(u64, String, String)>> = std::sync::OnceLock::new();
    SEEDS.get_or_init(|| clean_seeds(programs_to_check()))
}

#[test]
fn variants_of_csmith_programs_are_clean_and_print_what_their_seed_prints() {
    let config = EmiConfig::default();
    // libclang is loaded per thread; the first load sets its path for all.
    parse_source("int main(void) { return 0; }", &config.args).unwrap();
    let seeds = suite_seeds();
    let strategies: Mutex<HashMap<Strategy, usize>> = Mutex::new(HashMap::new());
    let ran = Mutex::new(0);
    let failures = Mutex::new(Vec::new());
    let check = |(seed, source, expected): &(u64, String, String)| -> Result<(), String> {
        let variants = chain(source, 3, *seed, &config).map_err(|e| e.to_string())?;
        let prints_the_seeds = |i: usize, output: &str| match output == expected {
            true => Ok(()),
            false => Err(format!("variant {} prints {output:?}, the seed {expected:?}", i + 1)),
        };
        for (i, v) in variants.iter().enumerate() {
            // The last one's output is its sanitized run's, below (both at -O0).
            if i + 1 < variants.len() {
                prints_the_seeds(i, &output_at_o0(&v.source, &config)?)?;
            }
            for m in &v.mutations {
                *strategies.lock().unwrap().entry(m.strategy).or_default() += 1;
            }
        }
        // Snippets are only ever added: the last variant holds every earlier one's.
        let last = variants.last().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("last.c");
        std::fs::write(&path, &last.source).unwrap();
        match screen(&path, &Screen::default()) {
            Screening::Clean { stdout, .. } => prints_the_seeds(variants.len() - 1, &stdout)?,
            Screening::Undefined(report) => {
                let line: usize = report.split(':').nth(1).and_then(|l| l.parse().ok()).unwrap_or(0);
                let text = last.source.lines().nth(line.saturating_sub(1)).unwrap_or("");
                return Err(format!("{report}\n{text}"));
            }
            other => return Err(format!("{other:?}")),
        }
        *ran.lock().unwrap() += tcb_points_that_ran(last, &config);
        Ok(())
    };
    std::thread::scope(|scope| {
        for half in seeds.chunks(seeds.len().div_ceil(2)) {
            let (check, failures) = (&check, &failures);
            scope.spawn(move || {
                for s in half {
                    if let Err(e) = check(s) {
                        failures.lock().unwrap().push(format!("csmith seed {}: {e}", s.0));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let strategies = strategies.into_inner().unwrap();
    for s in [Strategy::Fcb, Strategy::Tg, Strategy::Tcb] {
        assert!(strategies.get(&s).copied().unwrap_or(0) > 0, "{s:?} never occurred: {strategies:?}");
    }
    assert!(ran.into_inner().unwrap() > 0, "no code inside a TCB ran");
}

#[test]
fn a_chain_is_the_same_for_the_same_seed() {
    let config = EmiConfig::default();
    let &(seed, ref source, _) = &suite_seeds()[0];
    let texts = |s: u64| chain(source, 2, s, &config).unwrap().into_iter().map(|v| v.source).collect::<Vec<_>>();
    assert_eq!(texts(seed), texts(seed));
    assert_ne!(texts(seed), texts(seed + 1));
}
