//! Dominator trees (petgraph's `simple_fast`: Cooper, Harvey & Kennedy, "A Simple, Fast
//! Dominance Algorithm") with constant-time dominance queries, and dominance frontiers, on
//! graphs given as successor lists. The post-dominator tree is the same on the reversed
//! graph.

use petgraph::algo::dominators::simple_fast;
use petgraph::graph::{DiGraph, NodeIndex};

const NONE: usize = usize::MAX;

pub(super) struct DomTree {
    root: usize,
    /// Immediate dominator; the root's is itself, `NONE` for nodes the root does not reach.
    idom: Vec<usize>,
    children: Vec<Vec<usize>>,
    /// Pre- and post-order numbers in the tree, for constant-time `dominates`.
    pre: Vec<usize>,
    post: Vec<usize>,
}

impl DomTree {
    /// Dominators of the nodes reached from `root` along `succs`.
    pub fn new(root: usize, succs: &[Vec<usize>]) -> DomTree {
        let n = succs.len();
        let edges = succs.iter().enumerate().flat_map(|(u, ss)| ss.iter().map(move |&v| (u as u32, v as u32)));
        let mut graph = DiGraph::<(), ()>::from_edges(edges);
        // Nodes without edges at the end of the list have no edge to make them.
        while graph.node_count() < n {
            graph.add_node(());
        }
        let dominators = simple_fast(&graph, NodeIndex::new(root));
        let mut idom: Vec<usize> =
            (0..n).map(|v| dominators.immediate_dominator(NodeIndex::new(v)).map_or(NONE, |d| d.index())).collect();
        idom[root] = root;
        // Children in reverse post-order of the graph: the order the regions and the
        // embeddings walk them in.
        let order = post_order(root, |v| &succs[v], n);
        let mut children = vec![Vec::new(); n];
        for &v in order.iter().rev().filter(|&&v| v != root) {
            children[idom[v]].push(v);
        }
        let (mut pre, mut post) = (vec![NONE; n], vec![NONE; n]);
        let tree_order = post_order(root, |v| &children[v], n);
        for (i, &v) in tree_order.iter().enumerate() {
            post[v] = i;
        }
        let mut stack = vec![root];
        let mut counter = 0;
        while let Some(v) = stack.pop() {
            pre[v] = counter;
            counter += 1;
            stack.extend(children[v].iter().rev());
        }
        DomTree { root, idom, children, pre, post }
    }

    pub fn reaches(&self, v: usize) -> bool {
        self.idom[v] != NONE
    }

    /// `None` for the root and for nodes the root does not reach.
    pub fn idom(&self, v: usize) -> Option<usize> {
        (v != self.root && self.idom[v] != NONE).then_some(self.idom[v])
    }

    pub fn dominates(&self, a: usize, b: usize) -> bool {
        self.reaches(a) && self.reaches(b) && self.pre[a] <= self.pre[b] && self.post[b] <= self.post[a]
    }

    pub fn properly_dominates(&self, a: usize, b: usize) -> bool {
        a != b && self.dominates(a, b)
    }

    pub fn children(&self, v: usize) -> &[usize] {
        &self.children[v]
    }

    pub fn post_order(&self) -> Vec<usize> {
        post_order(self.root, |v| &self.children[v], self.idom.len())
    }
}

/// Depth-first post-order from `root`, iteratively (CFGs of generated programs are deep).
fn post_order<'a>(root: usize, next: impl Fn(usize) -> &'a [usize], n: usize) -> Vec<usize> {
    let mut seen = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut stack = vec![(root, 0usize)];
    seen[root] = true;
    while let Some((v, i)) = stack.last_mut() {
        let v = *v;
        if let Some(&w) = next(v).get(*i) {
            *i += 1;
            if !seen[w] {
                seen[w] = true;
                stack.push((w, 0));
            }
        } else {
            order.push(v);
            stack.pop();
        }
    }
    order
}

/// DF(x): the nodes y such that x dominates a predecessor of y but does not properly
/// dominate y. Each set is sorted.
pub(super) fn frontiers(dt: &DomTree, preds: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut df = vec![Vec::new(); preds.len()];
    for (b, ps) in preds.iter().enumerate() {
        for &p in ps.iter().filter(|&&p| dt.reaches(p)) {
            let mut runner = p;
            while Some(runner) != dt.idom(b) {
                df[runner].push(b);
                match dt.idom(runner) {
                    Some(up) => runner = up,
                    None => break,
                }
            }
        }
    }
    for set in &mut df {
        set.sort_unstable();
        set.dedup();
    }
    df
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};

    /// By definition: `a` dominates `b` when every path from the root to `b` passes `a`,
    /// that is, `b` cannot be reached from the root once `a` is taken out.
    fn dominates_by_definition(root: usize, succs: &[Vec<usize>], a: usize, b: usize) -> bool {
        let reached = |without: Option<usize>| {
            let mut seen = vec![false; succs.len()];
            let mut stack = vec![root];
            while let Some(v) = stack.pop() {
                if Some(v) == without || seen[v] {
                    continue;
                }
                seen[v] = true;
                stack.extend(&succs[v]);
            }
            seen
        };
        reached(None)[a] && reached(None)[b] && (a == b || !reached(Some(a))[b])
    }

    #[test]
    fn dominance_is_what_the_definition_says_on_random_graphs() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..300 {
            let n = rng.random_range(1..12);
            let succs: Vec<Vec<usize>> =
                (0..n).map(|_| (0..rng.random_range(0..4)).map(|_| rng.random_range(0..n)).collect()).collect();
            let root = rng.random_range(0..n);
            let dt = DomTree::new(root, &succs);
            for a in 0..n {
                for b in 0..n {
                    let expected = dominates_by_definition(root, &succs, a, b);
                    assert_eq!(dt.dominates(a, b), expected, "{a} dom {b} from {root} in {succs:?}");
                }
            }
        }
    }
}
