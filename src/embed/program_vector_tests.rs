//! Algorithms 1 and 2 on small graphs whose results are worked out by hand: each test
//! replays, step by step, the updates the paper's rules call for.

use super::program_vector::{edges, embed_programs, function_vector, program_vector};
use super::region::RegionGraph;
use super::testing::{bubble_sort, function};
use super::Doc2VecParams;
use crate::llvm::{CFrontend, IrModule, TargetSpec};

/// Distinct start values, one per edge (1-dimensional: the rules act per coordinate).
fn start(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * i) % 7 + 2 * i + 1) as f32).collect()
}

/// The function vector, and the final edge vectors (Algorithm 1 updates them in place).
fn run(g: &RegionGraph, e: &[f32]) -> (f32, Vec<f32>) {
    let mut vectors: Vec<Vec<f32>> = e.iter().map(|&x| vec![x]).collect();
    let result = function_vector(g, &mut vectors)[0];
    (result, vectors.into_iter().map(|v| v[0]).collect())
}

fn assert_all_close(actual: &[f32], expected: &[f32]) {
    assert_eq!(actual.len(), expected.len());
    for (i, (&a, &x)) in actual.iter().zip(expected).enumerate() {
        assert!((a - x).abs() < 1e-5, "edge {i}: got {a}, expected {x}");
    }
}

fn assert_close(actual: f32, expected: f32) {
    assert!((actual - expected).abs() < 1e-5, "got {actual}, expected {expected}");
}

#[test]
fn bubble_sort_folds_inner_loop_before_outer() {
    let g = RegionGraph::new(&bubble_sort());
    #[rustfmt::skip]
    assert_eq!(edges(&g), [(0, 1), (1, 2), (1, 10), (2, 3), (3, 4), (3, 8), (4, 5), (4, 6), (5, 6), (6, 7), (7, 3), (8, 9), (9, 1)]);
    let mut e = start(13);
    let (got, edges_after) = run(&g, &e);
    e[1] = (e[1] + e[0]) / 2.0; // 0: into header 1 over e0
    e[2] = (e[2] + e[0]) / 2.0;
    e[3] = (e[3] + e[1]) / 2.0; // 1: node 2
    e[4] = (e[4] + e[3]) / 2.0; // 2: into header 3 over e3
    e[5] = (e[5] + e[3]) / 2.0;
    e[6] = (e[6] + e[4]) / 2.0; // 3 (depth 2, before 10): nodes 4 and 8
    e[7] = (e[7] + e[4]) / 2.0;
    e[11] = (e[11] + e[5]) / 2.0;
    e[8] = (e[8] + e[6]) / 2.0; // 4 (depth 3): node 5, then 6 whose in-edges e7, e8 are final
    e[9] = (e[9] + e[7] + e[8]) / 3.0;
    e[10] = (e[10] + e[9]) / 2.0; // 5 adds nothing (6 is done); 6: node 7
    e[4] = (e[4] + e[10]) / 2.0; // 7: into header 3 over the back edge e10
    e[5] = (e[5] + e[10]) / 2.0;
    e[12] = (e[12] + e[11]) / 2.0; // 8: node 9
    e[1] = (e[1] + e[12]) / 2.0; // 9: into header 1 over the back edge e12
    e[2] = (e[2] + e[12]) / 2.0;
    assert_all_close(&edges_after, &e);
    assert_close(got, e[2]); // the only edge into the returning block 10
}

#[test]
fn deepest_region_goes_first() {
    // A loop 1 → 2 → 7 → 1 whose exit 3 is also reached through 0 → 4 → 6 → 3. LLVM's
    // regions: (0 => 3) holds 0, 4, 6 at depth 1; (1 => 3) holds the loop at depth 2.
    let g =
        RegionGraph::new(&function("f", 8, &[(0, 1), (0, 4), (1, 2), (1, 3), (2, 7), (3, 5), (4, 6), (6, 3), (7, 1)]));
    assert_eq!((0..8).map(|v| g.region_depth(v)).collect::<Vec<_>>(), [1, 2, 2, 0, 1, 0, 1, 2]);
    assert_eq!(edges(&g), [(0, 1), (0, 4), (1, 2), (1, 3), (2, 7), (3, 5), (4, 6), (6, 3), (7, 1)]);
    let (got, _) = run(&g, &start(9));
    let with_order = |loop_first: bool| {
        let mut e = start(9);
        e[2] = (e[2] + e[0]) / 2.0; // 0: into header 1, and node 4
        e[3] = (e[3] + e[0]) / 2.0;
        e[6] = (e[6] + e[1]) / 2.0;
        e[4] = (e[4] + e[2]) / 2.0; // 1: node 2 (node 3 waits for e7)
        let back_edge = |e: &mut Vec<f32>| {
            e[8] = (e[8] + e[4]) / 2.0; // 2: node 7
            e[2] = (e[2] + e[8]) / 2.0; // 7: into header 1 over e8
            e[3] = (e[3] + e[8]) / 2.0;
        };
        if loop_first {
            back_edge(&mut e);
        }
        e[7] = (e[7] + e[6]) / 2.0; // 4: node 6
        e[5] = (e[5] + e[3] + e[7]) / 3.0; // 6: node 3, its in-edges e3 and e7 final
        if !loop_first {
            back_edge(&mut e);
        }
        e[5]
    };
    assert_close(got, with_order(true));
    assert!((with_order(true) - with_order(false)).abs() > 0.1, "the test must tell the orders apart");
}

#[test]
fn a_join_is_folded_once() {
    let g = RegionGraph::new(&function("d", 5, &[(0, 1), (0, 2), (1, 3), (2, 3), (3, 4)]));
    let mut e = start(5);
    let (got, edges_after) = run(&g, &e);
    e[2] = (e[2] + e[0]) / 2.0;
    e[3] = (e[3] + e[1]) / 2.0;
    e[4] = (e[4] + e[2] + e[3]) / 3.0; // when 1 is processed; not again for 2
    assert_all_close(&edges_after, &e);
    assert_close(got, e[4]);
}

#[test]
fn two_edges_into_the_exit_are_averaged() {
    let g = RegionGraph::new(&function("d", 4, &[(0, 1), (0, 2), (1, 3), (2, 3)]));
    let mut e = start(4);
    let (got, _) = run(&g, &e);
    e[2] = (e[2] + e[0]) / 2.0;
    e[3] = (e[3] + e[1]) / 2.0;
    assert_close(got, (e[2] + e[3]) / 2.0);
}

#[test]
fn without_a_return_all_edges_are_averaged() {
    let g = RegionGraph::new(&function("spin", 3, &[(0, 1), (1, 2), (2, 1)]));
    let mut e = start(3);
    let (got, _) = run(&g, &e);
    e[1] = (e[1] + e[0]) / 2.0; // 0: into header 1
    e[2] = (e[2] + e[1]) / 2.0; // 1: node 2
    e[1] = (e[1] + e[2]) / 2.0; // 2: into header 1 over the back edge
    assert_close(got, (e[0] + e[1] + e[2]) / 3.0);
}

#[test]
fn callees_fold_into_callers_up_to_the_start_node() {
    // main → a, main → b, a → b, b → a (recursion), c → c (recursion, nobody calls c).
    let calls = vec![vec![1, 2], vec![2], vec![1], vec![3]];
    let v = |x: f32| vec![x, -x];
    let got = program_vector(&calls, Some(0), vec![v(1.0), v(2.0), v(4.0), v(8.0)]);
    // The DFS from main drops b → a; c's self-call goes too. b and c are leaves.
    let a = (2.0 + 4.0) / 2.0;
    let main = (1.0 + a + 4.0) / 3.0;
    let start = (0.0 + main + 8.0) / 3.0;
    assert_close(got[0], start);
    assert_close(got[1], -start);
}

#[test]
fn recursion_is_broken_at_the_edge_that_closes_the_cycle() {
    // The paper's example: func1 ↔ func4 loses func4 → func1, so func4 is a leaf.
    let calls = vec![vec![1], vec![2], vec![1]]; // main → func1 → func4 → func1
    let got = program_vector(&calls, Some(0), vec![vec![3.0], vec![6.0], vec![12.0]]);
    let func1 = (6.0 + 12.0) / 2.0;
    let main = (3.0 + func1) / 2.0;
    assert_close(got[0], main / 2.0);
}

#[test]
fn a_single_function_program_is_half_its_function() {
    assert_close(program_vector(&[vec![]], None, vec![vec![5.0]])[0], 2.5);
}

/// End to end on real IR: a copy of a program must land nearer to it than another program.
#[test]
fn copies_of_a_program_get_near_vectors() {
    let load = |name: &str| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name);
        IrModule::load(&path, &CFrontend::default(), &TargetSpec::default()).unwrap().function_cfgs()
    };
    let (csmith, other) = (load("csmith-12345.c"), load("control-flow.c"));
    let programs = vec![csmith.clone(), other.clone(), csmith, other];
    let params = Doc2VecParams::instructions();
    let v = embed_programs(&programs, &params, 1);
    assert_eq!(v.len(), 4);
    assert!(v.iter().all(|p| p.len() == 100 && p.iter().all(|x| x.is_finite())));
    let dist = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f32>().sqrt();
    assert!(dist(&v[0], &v[2]) < dist(&v[0], &v[1]), "{} vs {}", dist(&v[0], &v[2]), dist(&v[0], &v[1]));
    assert!(dist(&v[1], &v[3]) < dist(&v[1], &v[2]), "{} vs {}", dist(&v[1], &v[3]), dist(&v[1], &v[2]));
    assert_eq!(v, embed_programs(&programs, &params, 1));
}
