//! The corpus: built from csmith and installed files it holds every kind of ingredient,
//! each usable as harvested, and a second load reads the cache.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use super::{Corpus, IngredientKind, Sources};
use crate::mutate::{c_args, parse_source};

struct Built {
    corpus: Arc<Corpus>,
    /// What the build wrote to its cache (the file itself is gone: tests leave nothing behind).
    cached: Option<Vec<u8>>,
    took: Duration,
}

fn cache_file(what: &str) -> PathBuf {
    std::env::temp_dir().join(format!("ctos-ingredients-{what}-{}.json", std::process::id()))
}

fn built() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cache = cache_file("built");
        let _ = std::fs::remove_file(&cache);
        let started = Instant::now();
        let corpus = Corpus::load_or_build_at(Some(&cache), &Sources::standard()).expect("a corpus");
        let took = started.elapsed();
        let cached = std::fs::read(&cache).ok();
        let _ = std::fs::remove_file(&cache);
        Built { corpus: Arc::new(corpus), cached, took }
    })
}

/// One corpus for every test of the structural rules, built once per test process.
pub(crate) fn test_corpus() -> Arc<Corpus> {
    built().corpus.clone()
}

#[test]
fn the_corpus_holds_every_kind_and_a_second_load_reads_the_cache() {
    let b = built();
    eprintln!("corpus built in {:.1} s: {}", b.took.as_secs_f64(), b.corpus.summary());
    for kind in [IngredientKind::Branch, IngredientKind::Loop, IngredientKind::Function] {
        assert!(!b.corpus.of(kind).is_empty(), "no {kind:?} ingredients: {}", b.corpus.summary());
    }
    let cache = cache_file("reread");
    std::fs::write(&cache, b.cached.as_ref().expect("the build wrote its cache")).unwrap();
    // Sources that would build an empty corpus: only the cache can give the same content.
    let nothing = Sources { csmith_seeds: Vec::new(), files: Vec::new(), threads: 1 };
    let again = Corpus::load_or_build_at(Some(&cache), &nothing);
    let _ = std::fs::remove_file(&cache);
    assert_eq!(&again.expect("the cached corpus"), b.corpus.as_ref());
    assert!(Corpus::build(&nothing).is_err(), "an empty corpus must be an error");
}

/// One program defining every ingredient with `helpers` as given, each condition in a
/// function of its own with its variables declared, each function with its globals.
fn program_of(corpus: &Corpus, helpers: bool, failures: &mut Vec<String>) -> String {
    let mut program = if helpers { "#include \"csmith.h\"\n".to_string() } else { String::new() };
    let conditions = corpus.branches.iter().chain(&corpus.loops).filter(|i| i.helpers == helpers);
    for (i, ing) in conditions.enumerate().take(400) {
        let mut decls = String::new();
        let names: Vec<String> = (0..ing.vars.len()).map(|j| format!("v{i}_{j}")).collect();
        for (v, n) in ing.vars.iter().zip(&names) {
            decls.push_str(&format!("{} {n} = 1; ", v.ty));
        }
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let Some(cond) = ing.instantiate(&refs) else {
            failures.push(format!("{}: cannot instantiate", ing.text));
            continue;
        };
        program.push_str(&format!("int c{i}(void) {{ {decls}return !!({cond}); }}\n"));
    }
    for (i, f) in corpus.functions.iter().filter(|i| i.helpers == helpers).enumerate() {
        let names: Vec<String> = (0..f.vars.len()).map(|j| format!("g{i}_{j}")).collect();
        for (v, n) in f.vars.iter().zip(&names) {
            program.push_str(&format!("static {} {n} = 1;\n", v.ty));
        }
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        match f.renamed_function(&format!("f{i}"), &refs) {
            Some(text) => program.push_str(&format!("{text}\n")),
            None => failures.push(format!("{}: cannot rename", f.text)),
        }
    }
    program.push_str("int main(void) { return 0; }\n");
    program
}

#[test]
fn every_ingredient_compiles_once_its_variables_are_declared() {
    let corpus = test_corpus();
    let mut failures = Vec::new();
    for helpers in [false, true] {
        let program = program_of(&corpus, helpers, &mut failures);
        if let Err(e) = parse_source(&program, &c_args()) {
            failures.push(e.to_string());
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn conditions_keep_their_free_variables_and_spell_typedefs_out() {
    let corpus = test_corpus();
    for ing in corpus.branches.iter().chain(&corpus.loops) {
        assert!(!ing.vars.is_empty() && ing.text.len() <= super::MAX_CONDITION, "{ing:?}");
        for v in &ing.vars {
            assert!(v.int().is_some(), "{ing:?}");
            for &u in &v.uses {
                assert_eq!(ing.text.get(u..u + v.name.len()), Some(v.name.as_str()), "{ing:?}");
            }
        }
        // A helper's name spells a typedef (`safe_add_func_int8_t_s_s`); nothing else may.
        if !ing.helpers {
            assert!(!ing.text.contains("int8_t") && !ing.text.contains("int32_t"), "{ing:?}");
        }
    }
}
