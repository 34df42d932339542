//! Hand-built CFGs for the tests.

use crate::llvm::{BlockCfg, FunctionCfg};

/// A function with blocks `0..n`, the given edges, and `ret` in every block without
/// successors; every other block ends in `br`, after one opcode naming the block.
pub fn function(name: &str, n: usize, edges: &[(usize, usize)]) -> FunctionCfg {
    let blocks = (0..n)
        .map(|b| {
            let successors: Vec<usize> = edges.iter().filter(|e| e.0 == b).map(|e| e.1).collect();
            let last = if successors.is_empty() { "ret" } else { "br" };
            BlockCfg { name: format!("b{b}"), opcodes: vec![format!("op{b}"), last.to_string()], successors }
        })
        .collect();
    FunctionCfg { name: name.to_string(), blocks, callees: Vec::new() }
}

/// The bubble sort of spec §2.5.4 as clang 22 emits it at -O0 (names from `instnamer`):
/// outer loop at b1 (bb6), inner loop at b3 (bb12), the swap test at b4 (bb19), return at
/// b10 (bb62). `opt -passes='print<regions>'` finds 4 regions: b1 => b10, b3 => b8,
/// b4 => b6, and the function.
pub fn bubble_sort() -> FunctionCfg {
    // bb, bb6, bb11, bb12, bb19, bb32, bb54, bb55, bb58, bb59, bb62
    function(
        "bubble",
        11,
        &[(0, 1), (1, 2), (1, 10), (2, 3), (3, 4), (3, 8), (4, 5), (4, 6), (5, 6), (6, 7), (7, 3), (8, 9), (9, 1)],
    )
}
