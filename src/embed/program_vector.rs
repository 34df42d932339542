//! Program vectors (spec §2.5.2–2.5.5): a Doc2Vec model trained on the edge documents of
//! all programs gives every CFG edge a vector; the paper's Algorithm 1 folds a function's
//! edge vectors along its region graph, deepest regions first, into a function vector;
//! Algorithm 2 folds function vectors up the call graph into the program vector.

use std::collections::{HashMap, VecDeque};

use super::doc2vec::{train, Corpus, Doc2VecParams, DocVectors};
use super::region::RegionGraph;
use crate::llvm::FunctionCfg;

/// One vector per program. All programs' edge documents form one corpus for one model,
/// so pass [`Doc2VecParams::instructions`] (window 5) unless you mean otherwise.
pub fn embed_programs(programs: &[Vec<FunctionCfg>], params: &Doc2VecParams, seed: u64) -> Vec<Vec<f32>> {
    let mut corpus = Corpus::new();
    for f in programs.iter().flatten() {
        add_documents(f, &RegionGraph::new(f), &mut corpus);
    }
    let docs = train(&corpus, params, seed);
    // Region graphs are rebuilt rather than kept: they are cheap, and a pool of programs
    // would otherwise hold every graph in memory through training.
    let mut next_doc = 0;
    programs
        .iter()
        .map(|program| {
            if program.is_empty() {
                return vec![0.0; params.vector_size];
            }
            let vectors = program.iter().map(|f| function_vector_from_docs(f, &docs, &mut next_doc)).collect();
            let index: HashMap<&str, usize> = program.iter().enumerate().map(|(i, f)| (f.name.as_str(), i)).collect();
            let calls: Vec<Vec<usize>> = program
                .iter()
                .map(|f| f.callees.iter().filter_map(|c| index.get(c.as_str()).copied()).collect())
                .collect();
            program_vector(&calls, index.get("main").copied(), vectors)
        })
        .collect()
}

/// The document of edge u→v is u's opcodes then v's; a function without edges is
/// represented by its entry block's opcodes.
fn add_documents(f: &FunctionCfg, g: &RegionGraph, corpus: &mut Corpus) {
    let tokens = |node: usize| f.blocks[g.block(node)].opcodes.iter();
    let edges = edges(g);
    if edges.is_empty() {
        corpus.push(tokens(0));
    }
    for (u, v) in edges {
        corpus.push(tokens(u).chain(tokens(v)));
    }
}

fn function_vector_from_docs(f: &FunctionCfg, docs: &DocVectors, next_doc: &mut usize) -> Vec<f32> {
    let g = RegionGraph::new(f);
    let n_edges = edges(&g).len();
    let first = *next_doc;
    *next_doc += n_edges.max(1);
    if n_edges == 0 {
        return docs.get(first).to_vec();
    }
    let mut vectors: Vec<Vec<f32>> = (first..first + n_edges).map(|d| docs.get(d).to_vec()).collect();
    function_vector(&g, &mut vectors)
}

/// Every edge once, numbered by source node and then by the source's successor order.
pub fn edges(g: &RegionGraph) -> Vec<(usize, usize)> {
    (0..g.len()).flat_map(|u| g.successors(u).iter().map(move |&v| (u, v))).collect()
}

/// Paper Algorithm 1. `edge_vectors[i]` starts as the vector of `edges(g)[i]` and is
/// updated in place; the function has at least one edge. Returns the mean of the final
/// vectors of the edges into returning blocks ([AMBIGUITY] the paper assumes one such
/// edge), or the mean of all edge vectors when nothing returns.
pub fn function_vector(g: &RegionGraph, edge_vectors: &mut [Vec<f32>]) -> Vec<f32> {
    let first_out: Vec<usize> = (0..g.len())
        .scan(0, |next, u| {
            let first = *next;
            *next += g.successors(u).len();
            Some(first)
        })
        .collect();
    let out_edges = |u: usize| first_out[u]..first_out[u] + g.successors(u).len();
    let in_edges = |v: usize| -> Vec<usize> {
        g.predecessors(v)
            .iter()
            .map(|&p| first_out[p] + g.successors(p).iter().position(|&s| s == v).unwrap())
            .collect()
    };
    let dim = edge_vectors[0].len();
    let mut visited_edge = vec![false; edge_vectors.len()];
    out_edges(0).for_each(|e| visited_edge[e] = true);
    // Ever queued; a visited node was queued first, so this also answers "visited ∪ work".
    let mut queued = vec![false; g.len()];
    queued[0] = true;
    let mut work = vec![0];
    while !work.is_empty() {
        // Deepest region first; [AMBIGUITY] ties go to the earliest queued.
        let deepest = work.iter().map(|&n| g.region_depth(n)).max().unwrap();
        let cur = work.remove(work.iter().position(|&n| g.region_depth(n) == deepest).unwrap());
        for (k, &node) in g.successors(cur).iter().enumerate() {
            let (fold, weight) = if g.is_loop_header(node) {
                // Each in-edge is folded in on its own, when its source is processed.
                (edge_vectors[first_out[cur] + k].clone(), 2.0)
            } else {
                // [AMBIGUITY] Once, when all in-edges are final: the literal pseudo-code
                // would fold them in again for every predecessor processed afterwards,
                // and the out-edges would no longer be the mean the paper describes.
                let ins = in_edges(node);
                if queued[node] || !ins.iter().all(|&e| visited_edge[e]) {
                    continue;
                }
                let mut sum = vec![0.0f32; dim];
                for &e in &ins {
                    sum.iter_mut().zip(&edge_vectors[e]).for_each(|(s, x)| *s += x);
                }
                (sum, (ins.len() + 1) as f32)
            };
            for e in out_edges(node) {
                edge_vectors[e].iter_mut().zip(&fold).for_each(|(x, f)| *x = (*x + f) / weight);
                visited_edge[e] = true;
            }
            if !queued[node] {
                queued[node] = true;
                work.push(node);
            }
        }
    }
    let into_exits: Vec<usize> = g.exits().iter().flat_map(|&x| in_edges(x)).collect();
    if into_exits.is_empty() {
        mean(edge_vectors.iter(), dim)
    } else {
        mean(into_exits.iter().map(|&e| &edge_vectors[e]), dim)
    }
}

fn mean<'a>(rows: impl Iterator<Item = &'a Vec<f32>>, dim: usize) -> Vec<f32> {
    let mut sum = vec![0.0f32; dim];
    let mut count = 0;
    for row in rows {
        sum.iter_mut().zip(row).for_each(|(s, x)| *s += x);
        count += 1;
    }
    sum.iter_mut().for_each(|s| *s /= count.max(1) as f32);
    sum
}

/// Paper Algorithm 2. `calls[f]` lists the functions `f` calls, `vectors[f]` is its
/// function vector. A virtual start node with the zero vector calls every function
/// nobody calls; each caller becomes the mean of itself and its callees once they are
/// final; the start node's vector is the program's.
pub fn program_vector(calls: &[Vec<usize>], main: Option<usize>, mut vectors: Vec<Vec<f32>>) -> Vec<f32> {
    let n = calls.len();
    let mut succs = acyclic(calls, main);
    let start = n;
    let roots: Vec<usize> = (0..n).filter(|&f| !succs.iter().flatten().any(|&c| c == f)).collect();
    succs.push(roots);
    vectors.push(vec![0.0; vectors.first().map_or(0, Vec::len)]);
    let mut preds = vec![Vec::new(); n + 1];
    for (caller, callees) in succs.iter().enumerate() {
        for &c in callees {
            preds[c].push(caller);
        }
    }
    let mut visited: Vec<bool> = succs.iter().map(Vec::is_empty).collect();
    visited[start] = false;
    // The paper picks work items at random; any order gives the same result, since a
    // node is computed once, from final callees only.
    let mut work: VecDeque<usize> = (0..n).filter(|&f| visited[f]).collect();
    while let Some(cur) = work.pop_front() {
        for &p in &preds[cur] {
            if visited[p] || !succs[p].iter().all(|&s| visited[s]) {
                continue;
            }
            let mut sum = vectors[p].clone();
            for &s in &succs[p] {
                sum.iter_mut().zip(&vectors[s]).for_each(|(x, y)| *x += y);
            }
            let k = (succs[p].len() + 1) as f32;
            vectors[p] = sum.into_iter().map(|x| x / k).collect();
            visited[p] = true;
            work.push_back(p);
        }
    }
    vectors.swap_remove(start)
}

/// The call graph without recursion: depth-first from `main`, then from the functions
/// nobody calls, then from whatever is left (cycles nobody enters), each in order; an
/// edge to a function on the current path (self-calls included) is dropped.
/// [AMBIGUITY] the paper only says recursive-call edges are deleted.
/// By hand, not petgraph's `depth_first_search` with its back-edge events: that one
/// recurses once per call depth, and mutated or generated IR can chain calls deeply
/// enough to overflow the campaign's stack.
fn acyclic(calls: &[Vec<usize>], main: Option<usize>) -> Vec<Vec<usize>> {
    let n = calls.len();
    let called: Vec<bool> = (0..n).map(|f| calls.iter().flatten().any(|&c| c == f)).collect();
    let starts = main.into_iter().chain((0..n).filter(|&f| !called[f])).chain(0..n);
    let (mut on_path, mut done) = (vec![false; n], vec![false; n]);
    let mut kept = vec![Vec::new(); n];
    for s in starts {
        if done[s] {
            continue;
        }
        on_path[s] = true;
        let mut stack = vec![(s, 0)];
        while let Some((f, i)) = stack.last_mut() {
            let f = *f;
            match calls[f].get(*i) {
                Some(&c) => {
                    *i += 1;
                    if on_path[c] {
                        continue;
                    }
                    kept[f].push(c);
                    if !done[c] {
                        on_path[c] = true;
                        stack.push((c, 0));
                    }
                }
                None => {
                    on_path[f] = false;
                    done[f] = true;
                    stack.pop();
                }
            }
        }
    }
    kept
}
