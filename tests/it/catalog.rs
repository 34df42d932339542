//! Keep the pass catalog honest against the linked LLVM.

use std::path::PathBuf;

use ctos::llvm::{CFrontend, IrModule, TargetSpec};
use ctos::sandbox::{run_batch, BatchItem, JobSpec, Limits, Outcome, Pool, Run};
use ctos::seq::{Catalog, Sequence};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn committed_catalog_is_what_opt_prints_now() {
    let major = ctos::llvm::version().0;
    let opt = PathBuf::from(format!("/usr/lib/llvm-{major}/bin/opt"));
    let tables = ctos::seq::catalog_tables(&opt, major).unwrap();
    let files = [
        (format!("llvm{major}.tsv"), &tables.tsv),
        (format!("o3.llvm{major}.txt"), &tables.o3),
        (format!("production.llvm{major}.txt"), &tables.production),
    ];
    for (file, generated) in files {
        let committed = std::fs::read_to_string(root().join("passes").join(&file)).unwrap();
        assert!(
            &committed == generated,
            "passes/{file} is stale for LLVM {major}: run `ctos passes --write-catalog passes` (with the LLVM {major} build)"
        );
    }
}

/// The leaf passes of a pipeline `opt -print-pipeline-passes` printed, parameters kept: a
/// name followed by `(` is an adaptor, `require<…>` and `invalidate<…>` name analyses.
fn leaf_passes(printed: &str) -> Vec<String> {
    let (mut leaves, mut token, mut depth) = (Vec::new(), String::new(), 0);
    for c in printed.trim().chars().chain(std::iter::once(',')) {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ',' | '(' | ')' if depth == 0 => {
                let t = std::mem::take(&mut token);
                let analysis = t.starts_with("require<") || t.starts_with("invalidate<");
                if c != '(' && !t.is_empty() && !analysis {
                    leaves.push(t);
                }
                continue;
            }
            _ => {}
        }
        token.push(c);
    }
    leaves
}

/// `--pass-set production` is what clang's default and LTO pipelines run: the union of
/// their passes as this LLVM's `opt` prints them, parameters and all.
#[test]
fn the_production_set_is_the_union_of_the_default_pipelines_passes() {
    let major = ctos::llvm::version().0;
    let opt = format!("/usr/lib/llvm-{major}/bin/opt");
    let pipelines = ["default<O1>", "default<O2>", "default<O3>", "default<Os>", "default<Oz>"].into_iter().chain([
        "thinlto-pre-link<O2>",
        "thinlto<O2>",
        "lto-pre-link<O2>",
        "lto<O2>",
    ]);
    let union: std::collections::BTreeSet<String> = pipelines.flat_map(|p| printed_leaves(&opt, p)).collect();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ctos"))
        .args(["passes", "--set", "production", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let set: std::collections::BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["type"] == "pass")
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect();
    assert!(union.len() > 80, "{union:?}");
    assert_eq!(set, union, "only in the set: {:?}; only in the pipelines: {:?}", &set - &union, &union - &set);
}

fn printed_leaves(opt: &str, pipeline: &str) -> Vec<String> {
    let out = std::process::Command::new(opt)
        .args([&format!("-passes={pipeline}"), "-print-pipeline-passes", "-disable-output", "-"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{pipeline}: {}", String::from_utf8_lossy(&out.stderr));
    leaf_passes(&String::from_utf8_lossy(&out.stdout))
}

/// Every rename in `legacy.tsv` leads to a pipeline the catalog parses, and the legacy
/// parser really uses it: `-OLD` parses to what `NEW` parses to. Every removal says why,
/// and the parser reports it.
#[test]
fn every_legacy_name_maps_to_what_it_says() {
    let text = std::fs::read_to_string(root().join("passes/legacy.tsv")).unwrap();
    let catalogs = [Catalog::for_llvm(22).unwrap(), Catalog::for_llvm(19).unwrap()];
    let mut checked = 0;
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let (old, new) = line.split_once('\t').unwrap_or_else(|| panic!("legacy.tsv: not OLD<TAB>NEW: {line:?}"));
        if let Some(reason) = new.strip_prefix('!') {
            assert!(!reason.trim().is_empty(), "{old} is removed without a reason");
            for c in &catalogs {
                let e = Sequence::parse(&format!("-{old}"), c).unwrap_err().to_string();
                assert!(e.contains("no longer exists") && e.contains(reason.trim()), "-{old}: {e}");
            }
        } else {
            let parsed: Vec<_> = catalogs.iter().filter_map(|c| Some((c, Sequence::parse(new, c).ok()?))).collect();
            assert!(!parsed.is_empty(), "legacy.tsv maps {old} to '{new}', which neither LLVM parses");
            for (c, expected) in parsed {
                let legacy = Sequence::parse(&format!("-{old}"), c).unwrap();
                assert_eq!(legacy, expected, "LLVM {}: -{old}", c.llvm_major);
            }
        }
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} entries in legacy.tsv");
}

#[test]
fn every_unsafe_entry_and_set_member_names_something_real() {
    let c22 = Catalog::for_llvm(22).unwrap();
    let c19 = Catalog::for_llvm(19).unwrap();
    let text = std::fs::read_to_string(root().join("passes/unsafe.tsv")).unwrap();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let (name, reason) = line.split_once('\t').expect("name<TAB>reason");
        assert!(!reason.trim().is_empty(), "{name} has no reason");
        let known = |c: &Catalog| match name.strip_suffix('*') {
            Some(prefix) => c.entries().iter().any(|e| e.name.starts_with(prefix)),
            None => c.get(name).is_some(),
        };
        assert!(known(&c22) || known(&c19), "unsafe.tsv names '{name}', which neither LLVM has");
    }
    for c in [&c22, &c19] {
        for set in ["locseq", "ctos"] {
            for pass in c.set(set).unwrap() {
                let seq = Sequence::parse(&pass.to_string(), c);
                assert!(seq.is_ok(), "LLVM {}: set {set} member {pass}: {:?}", c.llvm_major, seq.err());
            }
        }
    }
}

/// The first documented parameter value, for passes LLVM rejects bare (`default`).
fn first_param(syntax: &str) -> String {
    syntax.split(';').next().unwrap_or("").split('=').next().unwrap_or("").to_string()
}

/// Safe passes run on a csmith program and must end well; unsafe ones (printers, viewers,
/// passes that need a runtime, a profile or another target) need only exist, which any
/// program shows: they run on `examples/sum.c`. On the csmith program two printers took 25
/// of the passes' 28.6 s (`print<da>` and `print-must-be-executed-contexts`), the safe
/// passes 1.3 s.
#[test]
fn every_catalog_pass_runs_alone_on_a_real_program() {
    let catalog = Catalog::for_llvm(ctos::llvm::version().0).unwrap();
    // From private copies, to check that no pass writes files beside the program.
    let dir = tempfile::tempdir().unwrap();
    let load = |name: &str, from: &str| {
        let program = dir.path().join(name);
        std::fs::copy(root().join(from), &program).unwrap();
        IrModule::load(&program, &CFrontend::default(), &TargetSpec::default()).unwrap()
    };
    let mut modules = [load("program.c", "tests/data/csmith-12345.c"), load("small.c", "examples/sum.c")];
    let limits = Limits { opt_timeout: std::time::Duration::from_secs(30), ..Limits::default() };
    let mut pool = Pool::new(2, limits, Vec::new()).unwrap();
    let passes = catalog.set("all").unwrap();
    let unsafe_: Vec<bool> = passes.iter().map(|p| catalog.unsafe_reason(&p.name).is_some()).collect();
    let render = |text: &str| Sequence::parse(text, &catalog).and_then(|s| s.render(&catalog)).unwrap();
    let job = JobSpec::optimize;
    let mut runs: Vec<Option<Run>> = vec![None; passes.len()];
    for (module, on_small) in modules.iter_mut().zip([false, true]) {
        let items = (passes.iter().enumerate())
            .filter(|&(index, _)| unsafe_[index] == on_small)
            .map(|(index, p)| BatchItem { index, job: job(render(&p.to_string())) });
        run_batch(&mut pool, module, items, |i, run| runs[i] = Some(run)).unwrap();
    }

    let mut problems = Vec::new();
    for ((pass, run), unsafe_) in passes.iter().zip(runs).zip(unsafe_) {
        let mut run = run.expect("every pass ran");
        if run.outcome == Outcome::Rejected {
            // Some passes only exist with a parameter (default<O0>, function-simplification<O1>).
            let syntax = catalog.get(&pass.name).and_then(|e| e.params.clone()).unwrap_or_default();
            let with_param = render(&format!("{}<{}>", pass.name, first_param(&syntax)));
            run = pool.run_one(&mut modules[usize::from(unsafe_)], &job(with_param)).unwrap();
        }
        if run.outcome == Outcome::Rejected || (!unsafe_ && run.outcome != Outcome::Ok) {
            problems.push(format!("{pass}: {} {}", run.outcome.as_str(), run.message.unwrap_or_default()));
        }
    }
    assert!(problems.is_empty(), "{} catalog passes fail alone:\n{}", problems.len(), problems.join("\n"));
    let mut beside: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    beside.sort();
    assert_eq!(beside, ["program.c", "small.c"], "passes wrote files beside the programs");
}
