//! The shape of the code itself: `src/fuzz/` keeps its wings (`programs/`, `bug/`,
//! `folder/`) under the campaign loop, and `src/sandbox/` its executors (the in-process
//! child, the agent) side by side under the pool, each without an import circle among its
//! files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use petgraph::algo::tarjan_scc;
use petgraph::graph::DiGraph;

/// `src/{folder}/`'s Rust files by module path (`bug/bugs`, `config`; a folder's `mod.rs`
/// is the folder, the top one `mod`), each with its code up to its test module, comments
/// left out (a doc link names a module without importing it).
fn files_of(folder: &str) -> BTreeMap<String, String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src").join(folder);
    let mut files = BTreeMap::new();
    let mut folders = vec![root.clone()];
    while let Some(dir) = folders.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.insert(module_of(&root, &path), code_before_tests(&std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    files
}

fn module_of(root: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(root).unwrap().with_extension("");
    let rel = rel.to_str().unwrap();
    match rel.strip_suffix("/mod") {
        Some(folder) => folder.to_string(),
        None => rel.to_string(),
    }
}

fn code_before_tests(text: &str) -> String {
    let tests = regex::Regex::new(r"#\[cfg\(test\)\]\s*mod tests \{").unwrap();
    let code = tests.find(text).map_or(text, |m| &text[..m.start()]);
    code.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// Which of `files` (of `src/{folder}/`) each file names: `crate::{folder}::a::b` is `a/b`
/// (or `a`), a name of the top module's own (`crate::fuzz::Campaign`, or `super::Run` in a
/// file beside it) is `mod`, and `super::x` in a wing is that wing's `x`. The top module declares every file: a file
/// that reads the top module's own names closes a circle through it.
fn imports<'a>(files: &'a BTreeMap<String, String>, folder: &str) -> BTreeMap<&'a str, Vec<&'a str>> {
    let absolute = regex::Regex::new(&format!(r"crate::{folder}::(\w+)(?:::(\w+))?")).unwrap();
    let relative = regex::Regex::new(r"\bsuper::(\w+)").unwrap();
    let known = |name: &str| files.get_key_value(name).map(|(k, _)| k.as_str());
    let mut imports: BTreeMap<&str, Vec<&str>> = files
        .iter()
        .map(|(module, text)| {
            let wing = module.rsplit_once('/').map(|(w, _)| w);
            let mut deps: Vec<&str> = absolute
                .captures_iter(text)
                .filter_map(|c| {
                    let first = c.get(1).unwrap().as_str();
                    let nested = c.get(2).and_then(|s| known(&format!("{first}/{}", s.as_str())));
                    nested.or_else(|| known(first)).or_else(|| known("mod"))
                })
                .chain(relative.captures_iter(text).filter_map(|c| {
                    let name = c.get(1).unwrap().as_str();
                    let top_level_name = || known("mod").filter(|_| wing.is_none() && name != "super");
                    known(&wing.map_or(name.to_string(), |w| format!("{w}/{name}"))).or_else(top_level_name)
                }))
                .filter(|d| d != module)
                .collect();
            deps.sort_unstable();
            deps.dedup();
            (module.as_str(), deps)
        })
        .collect();
    let rooms: Vec<&str> = imports.keys().copied().filter(|&m| m != "mod").collect();
    imports.insert("mod", rooms);
    imports
}

/// The import circles among the files: each a list of the files in it.
fn circles<'a>(imports: &BTreeMap<&'a str, Vec<&'a str>>) -> Vec<Vec<&'a str>> {
    let mut graph = DiGraph::<&str, ()>::new();
    let nodes: BTreeMap<&str, _> = imports.keys().map(|&m| (m, graph.add_node(m))).collect();
    for (module, deps) in imports {
        for dep in deps {
            graph.add_edge(nodes[module], nodes[dep], ());
        }
    }
    tarjan_scc(&graph).into_iter().filter(|c| c.len() > 1).map(|c| c.into_iter().map(|n| graph[n]).collect()).collect()
}

#[test]
fn the_fuzz_files_import_one_another_without_a_circle() {
    let files = files_of("fuzz");
    for wing in ["programs", "bug", "folder", "config", "campaign"] {
        assert!(files.contains_key(wing), "src/fuzz/ has no {wing}: {:?}", files.keys());
    }
    let imports = imports(&files, "fuzz");
    // The campaign's configuration reads nothing of the rooms that read it.
    assert!(imports["config"].is_empty(), "config imports {:?}", imports["config"]);
    let circles = circles(&imports);
    assert!(circles.is_empty(), "import circles among src/fuzz/'s files: {circles:?}");
    // The check sees imports: the rooms do read one another.
    assert!(imports["bug/finish"].contains(&"bug/issue"), "{:?}", imports["bug/finish"]);
}

#[test]
fn the_sandbox_executors_stand_side_by_side_under_the_pool_without_a_circle() {
    let files = files_of("sandbox");
    let imports = imports(&files, "sandbox");
    let circles = circles(&imports);
    assert!(circles.is_empty(), "import circles among src/sandbox/'s files: {circles:?}");
    // The pool drives both executors; neither reads the pool or the other.
    for executor in ["child", "agent"] {
        assert!(imports["pool"].contains(&executor), "the pool does not use {executor}: {:?}", imports["pool"]);
        for other in ["pool", "child", "agent"] {
            assert!(!imports[executor].contains(&other), "{executor} imports {other}: {:?}", imports[executor]);
        }
    }
}
