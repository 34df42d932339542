//! Dominator trees (Cooper, Harvey & Kennedy, "A Simple, Fast Dominance Algorithm") and
//! dominance frontiers, on graphs given as successor and predecessor lists. The
//! post-dominator tree is the same algorithm on the reversed graph.

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
    /// Dominators of the nodes reached from `root` along `succs`; `preds` is its reverse.
    pub fn new(root: usize, succs: &[Vec<usize>], preds: &[Vec<usize>]) -> DomTree {
        let n = succs.len();
        let order = post_order(root, |v| &succs[v], n);
        let mut number = vec![NONE; n];
        for (i, &v) in order.iter().enumerate() {
            number[v] = i;
        }
        let mut idom = vec![NONE; n];
        idom[root] = root;
        let mut changed = true;
        while changed {
            changed = false;
            for &b in order.iter().rev().filter(|&&b| b != root) {
                let mut new = NONE;
                for &p in preds[b].iter().filter(|&&p| idom[p] != NONE) {
                    new = if new == NONE { p } else { intersect(&idom, &number, p, new) };
                }
                if idom[b] != new {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
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

fn intersect(idom: &[usize], number: &[usize], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while number[a] < number[b] {
            a = idom[a];
        }
        while number[b] < number[a] {
            b = idom[b];
        }
    }
    a
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
