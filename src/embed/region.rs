//! The region graph of a function (spec §2.5.1): its CFG without unreachable blocks, plus
//! LLVM's `RegionInfo` tree of single-entry single-exit regions, loop headers and the
//! returning block. The region detection repeats `RegionInfoImpl.h` step by step
//! (`scanForRegions`, `findRegionsWithEntry` with its short-cuts, `isRegion`,
//! `buildRegionsTree`), so depths match `opt -passes='print<regions>'`.

use super::dom::{frontiers, DomTree};
use crate::llvm::FunctionCfg;

/// LLVM's `Region`: entered at `entry`, left to `exit`; the whole function has no exit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub entry: usize,
    pub exit: Option<usize>,
    pub parent: Option<usize>,
    pub depth: usize,
}

/// A function's reachable CFG with its region tree. Nodes are numbered by the function's
/// block order with unreachable blocks left out, so node 0 is the entry. Adjacency lists,
/// not a petgraph graph: every step of the region detection below is LLVM's, which petgraph
/// has none of, and walks successors and predecessors by block number; the dominator trees
/// it needs are petgraph's (`dom.rs`).
#[derive(Debug, Clone)]
pub struct RegionGraph {
    blocks: Vec<usize>,
    succs: Vec<Vec<usize>>,
    preds: Vec<Vec<usize>>,
    regions: Vec<Region>,
    region_of: Vec<usize>,
    loop_header: Vec<bool>,
    exits: Vec<usize>,
}

impl RegionGraph {
    pub fn new(f: &FunctionCfg) -> RegionGraph {
        assert!(!f.blocks.is_empty(), "{} has no blocks: only defined functions have region graphs", f.name);
        let (blocks, succs) = reachable(f);
        let n = blocks.len();
        let mut preds = vec![Vec::new(); n];
        for (u, ss) in succs.iter().enumerate() {
            for &v in ss {
                preds[v].push(u);
            }
        }
        let dt = DomTree::new(0, &succs);
        let pdt = post_dominators(&succs, &preds);
        let df = frontiers(&dt, &preds);
        let (regions, region_of) = Detector { succs: &succs, preds: &preds, dt: &dt, pdt: &pdt, df: &df }.run();
        let loop_header = (0..n).map(|h| preds[h].iter().any(|&u| dt.dominates(h, u))).collect();
        let exits = (0..n).filter(|&v| f.blocks[blocks[v]].opcodes.last().is_some_and(|op| op == "ret")).collect();
        RegionGraph { blocks, succs, preds, regions, region_of, loop_header, exits }
    }

    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The function's block index of `node`.
    pub fn block(&self, node: usize) -> usize {
        self.blocks[node]
    }

    pub fn successors(&self, node: usize) -> &[usize] {
        &self.succs[node]
    }

    pub fn predecessors(&self, node: usize) -> &[usize] {
        &self.preds[node]
    }

    /// `regions()[0]` is the whole function.
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// The innermost region containing `node`.
    pub fn region_of(&self, node: usize) -> &Region {
        &self.regions[self.region_of[node]]
    }

    /// Depth of the innermost region containing `node`; the whole function is 0.
    pub fn region_depth(&self, node: usize) -> usize {
        self.region_of(node).depth
    }

    /// Targets of back edges (edges u→h where h dominates u).
    pub fn is_loop_header(&self, node: usize) -> bool {
        self.loop_header[node]
    }

    /// Nodes whose block returns (`ret`).
    pub fn exits(&self) -> &[usize] {
        &self.exits
    }
}

/// Blocks reachable from the entry, in block order, and their successors as node indices.
fn reachable(f: &FunctionCfg) -> (Vec<usize>, Vec<Vec<usize>>) {
    let mut seen = vec![false; f.blocks.len()];
    seen[0] = true;
    let mut stack = vec![0];
    while let Some(b) = stack.pop() {
        for &s in &f.blocks[b].successors {
            if !seen[s] {
                seen[s] = true;
                stack.push(s);
            }
        }
    }
    let blocks: Vec<usize> = (0..f.blocks.len()).filter(|&b| seen[b]).collect();
    let mut node = vec![usize::MAX; f.blocks.len()];
    for (i, &b) in blocks.iter().enumerate() {
        node[b] = i;
    }
    let succs = blocks.iter().map(|&b| f.blocks[b].successors.iter().map(|&s| node[s]).collect()).collect();
    (blocks, succs)
}

/// The post-dominator tree: dominators of the reversed CFG from a virtual exit (node `n`)
/// whose predecessors are LLVM's post-dominator roots.
fn post_dominators(succs: &[Vec<usize>], preds: &[Vec<usize>]) -> DomTree {
    let n = succs.len();
    let roots = post_dominator_roots(succs, preds);
    let mut rsuccs: Vec<Vec<usize>> = preds.to_vec();
    rsuccs.push(roots);
    DomTree::new(n, &rsuccs)
}

/// LLVM's `SemiNCAInfo::FindRoots` for post-dominators: the blocks without successors,
/// then, for each block in an infinite loop not yet covered (in block order), the last
/// block a depth-first walk along successors reaches from it; then `RemoveRedundantRoots`
/// drops such a root when it can reach another root. The spec's virtual exit alone would
/// leave those loops outside the tree, and regions around them would differ from LLVM's.
/// (LLVM also walks from unreachable blocks here; they are gone, which only matters for
/// dead code that jumps into an infinite loop.)
fn post_dominator_roots(succs: &[Vec<usize>], preds: &[Vec<usize>]) -> Vec<usize> {
    let n = succs.len();
    let mut covered = vec![false; n];
    let mut roots: Vec<usize> = (0..n).filter(|&v| succs[v].is_empty()).collect();
    for &r in &roots {
        mark_reachable(r, preds, &mut covered);
    }
    for start in 0..n {
        if covered[start] {
            continue;
        }
        // LLVM's stack discipline: successors pushed in block order, so the last is
        // walked first, and the furthest block is the last one numbered.
        let mut seen = covered.clone();
        let (mut stack, mut furthest) = (vec![start], start);
        while let Some(v) = stack.pop() {
            if !std::mem::replace(&mut seen[v], true) {
                furthest = v;
                let mut next = succs[v].clone();
                next.sort_unstable();
                stack.extend(next);
            }
        }
        roots.push(furthest);
        mark_reachable(furthest, preds, &mut covered);
    }
    let mut i = 0;
    while i < roots.len() {
        let root = roots[i];
        let mut reached = vec![false; n];
        for &s in &succs[root] {
            mark_reachable(s, succs, &mut reached);
        }
        if !succs[root].is_empty() && roots.iter().any(|&r| r != root && reached[r]) {
            roots.swap_remove(i);
        } else {
            i += 1;
        }
    }
    roots
}

fn mark_reachable(from: usize, next: &[Vec<usize>], marked: &mut [bool]) {
    let mut stack = vec![from];
    while let Some(v) = stack.pop() {
        if !std::mem::replace(&mut marked[v], true) {
            stack.extend(&next[v]);
        }
    }
}

struct Detector<'a> {
    succs: &'a [Vec<usize>],
    preds: &'a [Vec<usize>],
    dt: &'a DomTree,
    pdt: &'a DomTree,
    df: &'a [Vec<usize>],
}

impl Detector<'_> {
    fn run(&self) -> (Vec<Region>, Vec<usize>) {
        let n = self.succs.len();
        let mut regions = vec![Region { entry: 0, exit: None, parent: None, depth: 0 }];
        // LLVM's BBtoRegion after scanning: the smallest region each block enters.
        let mut smallest: Vec<Option<usize>> = vec![None; n];
        let mut shortcut: Vec<Option<usize>> = vec![None; n];
        for entry in self.dt.post_order() {
            self.regions_with_entry(entry, &mut regions, &mut smallest, &mut shortcut);
        }
        let region_of = build_tree(self.dt, &mut regions, &smallest);
        for r in 0..regions.len() {
            let mut depth = 0;
            let mut up = regions[r].parent;
            while let Some(p) = up {
                depth += 1;
                up = regions[p].parent;
            }
            regions[r].depth = depth;
        }
        (regions, region_of)
    }

    /// `findRegionsWithEntry`: walk the post-dominators of `entry` upwards; each one that
    /// closes a region gets a region nesting the previous one.
    fn regions_with_entry(
        &self,
        entry: usize,
        regions: &mut Vec<Region>,
        smallest: &mut [Option<usize>],
        shortcut: &mut [Option<usize>],
    ) {
        let virtual_exit = self.succs.len();
        let mut last_region: Option<usize> = None;
        let mut last_exit = entry;
        let mut node = entry;
        // Jumping over the largest region already found at `node` skips only blocks that
        // cannot close a region of `entry` (LLVM's short-cut, kept for identical results).
        while let Some(exit) = self.pdt.idom(shortcut[node].unwrap_or(node)).filter(|&e| e != virtual_exit) {
            if self.is_region(entry, exit) {
                let trivial = self.succs[entry].len() <= 1 && self.succs[entry].first() == Some(&exit);
                let new = (!trivial).then(|| {
                    regions.push(Region { entry, exit: Some(exit), parent: None, depth: 0 });
                    regions.len() - 1
                });
                if let (Some(new), Some(last)) = (new, last_region) {
                    regions[last].parent = Some(new);
                }
                if let Some(new) = new {
                    smallest[entry].get_or_insert(new);
                }
                last_region = new;
                last_exit = exit;
            }
            if !self.dt.dominates(entry, exit) {
                break;
            }
            node = exit;
        }
        if last_exit != entry {
            shortcut[entry] = Some(shortcut[last_exit].unwrap_or(last_exit));
        }
    }

    fn is_region(&self, entry: usize, exit: usize) -> bool {
        let entry_df = &self.df[entry];
        if !self.dt.dominates(entry, exit) {
            // The exit heads a loop around the entry: only the exit may be in DF(entry).
            return entry_df.iter().all(|&s| s == exit || s == entry);
        }
        let exit_df = &self.df[exit];
        let leaves = entry_df.iter().filter(|&&s| s != exit && s != entry).any(|&s| {
            exit_df.binary_search(&s).is_err()
                || self.preds[s].iter().any(|&p| self.dt.dominates(entry, p) && !self.dt.dominates(exit, p))
        });
        let enters = exit_df.iter().any(|&s| s != exit && self.dt.properly_dominates(entry, s));
        !leaves && !enters
    }
}

/// `buildRegionsTree`: walk the dominator tree; a block belongs to the smallest region it
/// enters, otherwise to the region of its dominator, left once the walk reaches its exit.
fn build_tree(dt: &DomTree, regions: &mut [Region], smallest: &[Option<usize>]) -> Vec<usize> {
    let mut region_of = vec![0; smallest.len()];
    let mut stack = vec![(0usize, 0usize)];
    while let Some((block, mut region)) = stack.pop() {
        while regions[region].exit == Some(block) {
            region = regions[region].parent.expect("only the top-level region has no parent");
        }
        if let Some(own) = smallest[block] {
            let mut top = own;
            while let Some(p) = regions[top].parent {
                top = p;
            }
            regions[top].parent = Some(region);
            region = own;
        }
        region_of[block] = region;
        stack.extend(dt.children(block).iter().map(|&c| (c, region)));
    }
    region_of
}
