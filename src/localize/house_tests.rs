//! The house of `localize/`: its modules' imports form no circle, so each search can be read
//! (and changed) without the others; what they share lives in leaf modules (`record`,
//! `witness_programs::stats`, `witness_programs::quality`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use petgraph::algo::tarjan_scc;
use petgraph::graph::DiGraph;

/// Module path (`localize::record`, `localize::witness_programs`) of each source file.
fn modules(dir: &Path, prefix: &str, out: &mut BTreeMap<String, PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            modules(&path, &format!("{prefix}::{stem}"), out);
        } else if path.extension().is_some_and(|e| e == "rs") && stem != "house_tests" {
            let name = if stem == "mod" { prefix.to_string() } else { format!("{prefix}::{stem}") };
            out.insert(name, path);
        }
    }
}

/// The modules of `localize` a file's code (not its unit tests) names: `super::x` from
/// its parent module, `crate::localize::x::y`, to the deepest one that is a file (comments
/// left out: a doc link is no import).
fn imports(name: &str, source: &str, known: &BTreeMap<String, PathBuf>, is_mod_rs: bool) -> Vec<String> {
    let code: String = source
        .split("#[cfg(test)]\nmod tests")
        .next()
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let parent = if is_mod_rs { name.rsplit_once("::").map_or("", |p| p.0) } else { name.rsplit_once("::").unwrap().0 };
    let path = regex::Regex::new(r"\b(super|crate::localize)((?:::[a-z_][a-z0-9_]*)+)").unwrap();
    let mut out = Vec::new();
    for c in path.captures_iter(&code) {
        let base = if &c[1] == "super" { parent.to_string() } else { "localize".to_string() };
        let mut at = base.clone();
        let mut deepest = None;
        for segment in c[2].split("::").filter(|s| !s.is_empty()) {
            at = format!("{at}::{segment}");
            if known.contains_key(&at) {
                deepest = Some(at.clone());
            }
        }
        if let Some(m) = deepest.filter(|m| m != name) {
            out.push(m);
        }
    }
    out
}

#[test]
fn the_modules_of_localize_import_one_another_in_no_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/localize");
    let mut known = BTreeMap::new();
    modules(&root, "localize", &mut known);
    assert!(known.contains_key("localize::record") && known.contains_key("localize::witness_programs::stats"));
    let mut graph = DiGraph::<String, ()>::new();
    let nodes: BTreeMap<_, _> = known.keys().map(|k| (k.clone(), graph.add_node(k.clone()))).collect();
    let mut edges = 0;
    for (name, path) in &known {
        let source = std::fs::read_to_string(path).unwrap();
        let is_mod_rs = path.file_name().unwrap() == "mod.rs";
        for m in imports(name, &source, &known, is_mod_rs) {
            graph.update_edge(nodes[name], nodes[&m], ());
            edges += 1;
        }
    }
    assert!(edges > 20, "the imports were not read: {edges}");
    let circles: Vec<Vec<String>> = tarjan_scc(&graph)
        .into_iter()
        .filter(|scc| scc.len() > 1)
        .map(|scc| scc.into_iter().map(|n| graph[n].clone()).collect())
        .collect();
    assert!(circles.is_empty(), "import circles in localize/: {circles:?}");
}
