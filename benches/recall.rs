//! Recall on fixed miscompilations: LLVM's regression tests (`../shared/seeds/llvm-tests`,
//! tests of bugs fixed in 2024–2026), each run under its own RUN lines' pipelines and
//! options with a generated driver (`ctos run SEED --exec`), on LLVM 19 (before most of
//! the fixes) and on LLVM 23 (after), with poison tracking off and on. A seed that shows
//! wrong code on 19 and not on 23 is a fixed bug rediscovered; one that shows it on both
//! is an unfixed bug or a false positive, and each is listed to be looked at.
//!
//!     cargo bench --bench recall
//!     CTOS_RECALL_SEEDS=DIR CTOS_RECALL_LIMIT=200 CTOS_RECALL_JOBS=2 cargo bench --bench recall
//!
//! Needs target/llvm19/release/ctos (scripts/setup.sh builds it) and llvm-23/bin/opt; an
//! LLVM that is missing is left out and said so. Seeds are read as a campaign reads them
//! (`ctos::fuzz::usable_seeds`); a seed whose driver cannot be generated on LLVM 22 (no
//! function a driver can call, no clean call, another target) is counted and skipped.
//! Writes every verdict to target/recall.json.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

mod common;

use common::env_or;
use serde_json::{json, Value};

/// One LLVM and tracking setting a seed runs under.
struct Side {
    name: String,
    ctos: PathBuf,
    opt: Option<PathBuf>,
    poison: &'static str,
}

/// What one side made of one seed entry: None when ctos could not run it (exit status,
/// first line of its error); else the first differing call of each wrong-code pipeline.
type Verdict = Result<Vec<String>, String>;

fn run(side: &Side, file: &str, options: &[String], pipelines: &[String]) -> Verdict {
    let mut c = Command::new(&side.ctos);
    c.env("CTOS_POISON", side.poison).args(["run", file, "--exec", "--json", "-j", "1", "--opt-timeout", "30s"]);
    for p in pipelines {
        c.arg("-p").arg(p);
    }
    for o in options {
        c.arg(format!("--llvm-arg={o}"));
    }
    if let Some(opt) = &side.opt {
        c.arg("--opt").arg(opt);
    }
    let out = c.output().expect("run ctos");
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(err.lines().rfind(|l| l.starts_with("error")).unwrap_or("failed").to_string());
    }
    let mut wrong = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(record) = serde_json::from_str::<Value>(line) else { continue };
        if record["type"] == "run" && record["outcome"] == "ok" && record["matches_reference"] == false {
            let first = record["calls"]["differ"][0].as_str().unwrap_or("output differs");
            wrong.push(format!("{}: {first}", record["pipeline"].as_str().unwrap_or("")));
        }
    }
    Ok(wrong)
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let seeds_dir = std::env::var("CTOS_RECALL_SEEDS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("../shared/seeds/llvm-tests"));
    let limit = env_or("CTOS_RECALL_LIMIT", usize::MAX);
    let jobs = env_or("CTOS_RECALL_JOBS", 2);
    let ctos22 = PathBuf::from(env!("CARGO_BIN_EXE_ctos"));
    let ctos19 = root.join("target/llvm19/release/ctos");
    let opt23 = root.join("llvm-23/bin/opt");
    let mut sides = Vec::new();
    // "on" tracks as campaigns do: the programs of generated drivers.
    for (label, poison) in [("off", "off"), ("on", "drivers")] {
        match ctos19.is_file() {
            true => sides.push(Side { name: format!("19 {label}"), ctos: ctos19.clone(), opt: None, poison }),
            false => eprintln!("recall: no {} (scripts/setup.sh builds it): LLVM 19 left out", ctos19.display()),
        }
        match opt23.is_file() {
            true => {
                let opt = Some(opt23.clone());
                sides.push(Side { name: format!("23 {label}"), ctos: ctos22.clone(), opt, poison })
            }
            false => eprintln!("recall: no {}: LLVM 23 left out", opt23.display()),
        }
    }
    let linked = ctos::sandbox::Llvm::Linked;
    let catalog = ctos::cli::catalog_for(&linked).expect("catalog");
    let render = ctos::seq::RenderOptions::default();
    let (entries, left_out) =
        ctos::fuzz::usable_seeds(std::slice::from_ref(&seeds_dir), &catalog, &render, &linked).expect("seeds");
    let entries: Vec<_> = entries.into_iter().filter(|e| !e.pipelines.is_empty()).take(limit).collect();
    eprintln!("recall: {} seed entries ({} files left out)", entries.len(), left_out.total());
    let probe = Side { name: "22 on".into(), ctos: ctos22.clone(), opt: None, poison: "drivers" };
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Value>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(e) = entries.get(i) else { break };
                let file = &e.file;
                let mut verdicts = BTreeMap::new();
                // Seeds whose driver LLVM 22 cannot generate are not run on the others.
                let probed = run(&probe, file, &e.options, &e.pipelines);
                if let Err(why) = &probed {
                    verdicts.insert(probe.name.clone(), json!({ "error": why }));
                } else {
                    for side in &sides {
                        let v = match run(side, file, &e.options, &e.pipelines) {
                            Ok(wrong) => json!({ "wrong": wrong }),
                            Err(why) => json!({ "error": why }),
                        };
                        verdicts.insert(side.name.clone(), v);
                    }
                }
                let record =
                    json!({ "file": file, "options": e.options, "pipelines": e.pipelines, "verdicts": verdicts });
                results.lock().unwrap().push(record);
                if i % 50 == 0 {
                    eprintln!("recall: {i}/{}", entries.len());
                }
            });
        }
    });
    let results = results.into_inner().unwrap();
    std::fs::write(root.join("target/recall.json"), serde_json::to_string_pretty(&results).unwrap()).unwrap();
    summarize(&results, &sides);
}

fn summarize(results: &[Value], sides: &[Side]) {
    let wrong = |r: &Value, side: &str| r["verdicts"][side]["wrong"].as_array().is_some_and(|w| !w.is_empty());
    let ran = |r: &Value, side: &str| r["verdicts"][side]["wrong"].is_array();
    let driven = results.iter().filter(|r| r["verdicts"]["22 on"].get("error").is_none()).count();
    println!("seed entries: {}, with a driver (LLVM 22): {driven}", results.len());
    println!("{:<8} {:>6} {:>11}", "side", "ran", "wrong code");
    for side in sides {
        let n = results.iter().filter(|r| ran(r, &side.name)).count();
        let w = results.iter().filter(|r| wrong(r, &side.name)).count();
        println!("{:<8} {n:>6} {w:>11}", side.name);
    }
    for poison in ["off", "on"] {
        let (old, new) = (format!("19 {poison}"), format!("23 {poison}"));
        let both_ran: Vec<&Value> = results.iter().filter(|r| ran(r, &old) && ran(r, &new)).collect();
        let rediscovered = both_ran.iter().filter(|r| wrong(r, &old) && !wrong(r, &new)).count();
        let on_both: Vec<&&Value> = both_ran.iter().filter(|r| wrong(r, &old) && wrong(r, &new)).collect();
        let only_new: Vec<&&Value> = both_ran.iter().filter(|r| !wrong(r, &old) && wrong(r, &new)).collect();
        println!(
            "poison tracking {poison}: ran on both {}, rediscovered (19, not 23) {rediscovered}, on both {}, on 23 only {}",
            both_ran.len(),
            on_both.len(),
            only_new.len()
        );
        for r in on_both.iter().chain(&only_new) {
            println!("  {} {}", r["file"].as_str().unwrap_or(""), r["verdicts"][&new]["wrong"][0]);
        }
    }
}
