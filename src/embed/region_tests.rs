use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use super::region::RegionGraph;
use super::testing::{bubble_sort, function};
use crate::llvm::{CFrontend, IrModule, TargetSpec};

#[test]
fn bubble_sort_has_two_loop_headers_and_four_nested_regions() {
    let g = RegionGraph::new(&bubble_sort());
    let depths: Vec<usize> = (0..g.len()).map(|v| g.region_depth(v)).collect();
    assert_eq!(depths, [0, 1, 1, 2, 3, 3, 2, 2, 1, 1, 0]);
    let mut regions: Vec<(usize, Option<usize>, usize)> =
        g.regions().iter().map(|r| (r.entry, r.exit, r.depth)).collect();
    regions.sort();
    assert_eq!(regions, [(0, None, 0), (1, Some(10), 1), (3, Some(8), 2), (4, Some(6), 3)]);
    let headers: Vec<usize> = (0..g.len()).filter(|&v| g.is_loop_header(v)).collect();
    assert_eq!(headers, [1, 3]);
    assert_eq!(g.exits(), [10]);
    assert_eq!(g.predecessors(10), [1]);
}

#[test]
fn unreachable_blocks_are_dropped() {
    // Block 2 is dead and jumps into the loop at 1.
    let g = RegionGraph::new(&function("f", 4, &[(0, 1), (1, 1), (1, 3), (2, 1)]));
    assert_eq!(g.len(), 3);
    assert_eq!((g.block(0), g.block(1), g.block(2)), (0, 1, 3));
    assert_eq!(g.predecessors(1), [0, 1]);
    assert!(g.is_loop_header(1));
    assert_eq!(g.exits(), [2]);
}

#[test]
fn a_function_that_never_returns_has_no_exit() {
    let g = RegionGraph::new(&function("spin", 3, &[(0, 1), (1, 2), (2, 1)]));
    assert_eq!(g.len(), 3);
    assert!(g.exits().is_empty());
    assert!((0..3).all(|v| g.region_depth(v) == 0));
}

/// Region depth of every block, from `opt -passes='print<regions>' -print-region-style=bb`:
/// `[depth] entry => exit` headers, each followed by `{`, then the region's blocks
/// (nested regions' blocks included) on one line.
fn opt_region_depths(named_ll: &Path, opt: &str) -> HashMap<String, HashMap<String, usize>> {
    let out = Command::new(opt)
        .args(["-passes=print<regions>", "-print-region-style=bb", "-disable-output"])
        .arg(named_ll)
        .output()
        .expect("run opt");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stderr).unwrap();
    let mut all: HashMap<String, HashMap<String, usize>> = HashMap::new();
    let (mut function, mut depth) = (String::new(), None);
    for line in text.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix("Region Tree for function: ") {
            function = name.to_string();
        } else if let Some(rest) = line.strip_prefix('[') {
            depth = rest.split(']').next().and_then(|d| d.parse::<usize>().ok());
        } else if let (Some(d), true) = (depth, line.ends_with(',')) {
            let blocks = all.entry(function.clone()).or_default();
            for name in line.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                let e = blocks.entry(name.to_string()).or_insert(d);
                *e = (*e).max(d);
            }
            depth = None;
        }
    }
    all
}

/// Compile `source` at -O0, name every block, and compare our region depth of each
/// reachable block with LLVM's. Returns how many blocks were compared.
fn compare_with_llvm(source: &Path) -> usize {
    let major = crate::llvm::version().0;
    let (clang, opt) = (format!("clang-{major}"), format!("opt-{major}"));
    let dir = tempfile::tempdir().unwrap();
    let (raw, named) = (dir.path().join("raw.ll"), dir.path().join("named.ll"));
    let status = Command::new(&clang)
        .args(["-O0", "-Xclang", "-disable-O0-optnone", "-emit-llvm", "-S", "-w", "-I/usr/include/csmith"])
        .arg(source)
        .arg("-o")
        .arg(&raw)
        .status()
        .expect("run clang");
    assert!(status.success());
    let status =
        Command::new(&opt).args(["-passes=instnamer", "-S"]).arg(&raw).arg("-o").arg(&named).status().expect("run opt");
    assert!(status.success());
    let expected = opt_region_depths(&named, &opt);
    let module = IrModule::load(&named, &CFrontend::default(), &TargetSpec::default()).unwrap();
    let functions = module.function_cfgs();
    assert_eq!(functions.len(), expected.len());
    let mut compared = 0;
    for f in &functions {
        let g = RegionGraph::new(f);
        let llvm = &expected[&f.name];
        assert_eq!(g.len(), llvm.len(), "{}: reachable blocks", f.name);
        for v in 0..g.len() {
            let name = &f.blocks[g.block(v)].name;
            assert_eq!(g.region_depth(v), llvm[name], "{} in {}: region depth of {name}", f.name, source.display());
            compared += 1;
        }
    }
    compared
}

fn test_data(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

#[test]
fn region_depths_match_llvm_on_a_csmith_program() {
    let compared = compare_with_llvm(&test_data("csmith-12345.c"));
    println!("{compared} blocks compared with opt's print<regions>");
    assert!(compared > 150, "only {compared} blocks compared");
}

#[test]
fn region_depths_match_llvm_on_unusual_control_flow() {
    let compared = compare_with_llvm(&test_data("control-flow.c"));
    println!("{compared} blocks compared with opt's print<regions>");
    assert!(compared > 80, "only {compared} blocks compared");
}
