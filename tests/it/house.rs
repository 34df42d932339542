//! The shape of the code itself: `src/fuzz/` keeps its wings (`programs/`, `bug/`,
//! `folder/`) under the campaign loop without an import circle among its files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use petgraph::algo::tarjan_scc;
use petgraph::graph::DiGraph;

/// `src/fuzz/`'s files by module path (`bug/bugs`, `config`; a folder's `mod.rs` is the
/// folder, the top one `mod`), each with its text up to its test module.
fn fuzz_files() -> BTreeMap<String, String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/fuzz");
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
    tests.find(text).map_or(text, |m| &text[..m.start()]).to_string()
}

/// Which of `files` each file names: `crate::fuzz::a::b` is `a/b` (or `a`), a name of the
/// top module's own (`crate::fuzz::Campaign`) is `mod`, and `super::x` in a wing is that
/// wing's `x`.
fn imports(files: &BTreeMap<String, String>) -> BTreeMap<&str, Vec<&str>> {
    let absolute = regex::Regex::new(r"crate::fuzz::(\w+)(?:::(\w+))?").unwrap();
    let relative = regex::Regex::new(r"\bsuper::(\w+)").unwrap();
    let known = |name: &str| files.get_key_value(name).map(|(k, _)| k.as_str());
    files
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
                    known(&wing.map_or(name.to_string(), |w| format!("{w}/{name}")))
                }))
                .filter(|d| d != module)
                .collect();
            deps.sort_unstable();
            deps.dedup();
            (module.as_str(), deps)
        })
        .collect()
}

#[test]
fn the_fuzz_files_import_one_another_without_a_circle() {
    let files = fuzz_files();
    for wing in ["programs", "bug", "folder", "config", "campaign"] {
        assert!(files.contains_key(wing), "src/fuzz/ has no {wing}: {:?}", files.keys());
    }
    let mut imports = imports(&files);
    // The campaign's configuration reads nothing of the rooms that read it.
    assert!(imports["config"].is_empty(), "config imports {:?}", imports["config"]);
    // The loop declares and calls every room: a room that reads the loop's own names
    // closes a circle through it.
    let rooms: Vec<&str> = imports.keys().copied().filter(|&m| m != "mod").collect();
    imports.insert("mod", rooms);
    let mut graph = DiGraph::<&str, ()>::new();
    let nodes: BTreeMap<&str, _> = imports.keys().map(|&m| (m, graph.add_node(m))).collect();
    for (module, deps) in &imports {
        for dep in deps {
            graph.add_edge(nodes[module], nodes[dep], ());
        }
    }
    let circles: Vec<Vec<&str>> = tarjan_scc(&graph)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| c.into_iter().map(|n| graph[n]).collect())
        .collect();
    assert!(circles.is_empty(), "import circles among src/fuzz/'s files: {circles:?}");
    // The check sees imports: the rooms do read one another.
    assert!(imports["bug/finish"].contains(&"bug/issue"), "{:?}", imports["bug/finish"]);
}
