//! From evidence to ranked LLVM source files, with the functions that score highest.

use std::collections::HashMap;

use serde::Serialize;

use super::evidence::Evidence;
use super::sbfl::{self, Aggregate, Formula};
use crate::coverage::Sites;
use crate::coverage::Spectrum;

#[derive(Debug, Clone, Serialize)]
pub struct FileRank {
    /// Worst position of its tie group, 1-based.
    pub rank: usize,
    pub path: String,
    pub score: f64,
    /// Elements of this file the failing run covered.
    pub elements: usize,
    /// Best-scoring functions of the file, best first.
    pub top_functions: Vec<String>,
}

/// What a crash's stack says: each file of the failing trace on it with `1/(1+d)`, d the
/// depth of its innermost frame among those files' frames (0: the function that crashed).
/// The stack is where the failure happened; the deeper a frame, the more of the path to
/// the failure lies in code called from it, so the less the frame itself is to blame.
/// Files the trace does not cover (the pass manager above a focused pass) say nothing.
pub fn stack_evidence(stack: &[u64], sites: &Sites, failing: &Spectrum) -> Vec<(u32, f64)> {
    let mut out: Vec<(u32, f64)> = Vec::new();
    let mut last_function = None;
    let mut depth = 0;
    for (i, &addr) in stack.iter().enumerate() {
        // Return addresses point after the call, possibly into the next function.
        let pc = if i == 0 { addr } else { addr.saturating_sub(1) };
        let Some(function) = sites.attribution.function_at(pc) else { continue };
        let Some(file) = sites.attribution.functions[function].file.filter(|&f| failing.covers_file(f)) else {
            continue;
        };
        if last_function == Some(function) {
            continue;
        }
        last_function = Some(function);
        if !out.iter().any(|&(f, _)| f == file) {
            out.push((file, 1.0 / (1.0 + depth as f64)));
        }
        depth += 1;
    }
    out
}

/// Ranked files. `extra` adds per-file pseudo-elements (file, score) to the file's own,
/// as [`stack_evidence`] gives them.
pub fn rank(
    evidence: &Evidence,
    sites: &Sites,
    formula: Formula,
    aggregate: Aggregate,
    extra: &[(u32, f64)],
) -> Vec<FileRank> {
    let scores = evidence.scores(formula);
    let mut per_element: Vec<(u32, f64)> =
        evidence.elements.iter().zip(&scores).filter_map(|(&e, &s)| sites.file(e).map(|f| (f, s))).collect();
    per_element.extend_from_slice(extra);
    // Best score of each function, for naming what to look at inside a file.
    let mut functions: HashMap<u32, HashMap<u32, f64>> = HashMap::new();
    for (&e, &s) in evidence.elements.iter().zip(&scores) {
        if let Some(f) = sites.file(e) {
            let best = functions.entry(f).or_default().entry(sites.function[e as usize]).or_insert(s);
            *best = best.max(s);
        }
    }
    sbfl::rank_files(&per_element, aggregate)
        .into_iter()
        .map(|r| {
            let mut top: Vec<(u32, f64)> =
                functions.get(&r.file).map(|m| m.iter().map(|(&k, &v)| (k, v)).collect()).unwrap_or_default();
            top.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            FileRank {
                rank: r.rank,
                path: sites.attribution.files[r.file as usize].clone(),
                score: r.score,
                elements: r.elements,
                top_functions: top.iter().take(3).map(|&(f, _)| sites.attribution.name_of(f as usize)).collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Functions f0..f4 at 0x1000, 0x2000 … in files 0, 0, 1, 2, none.
    fn sites() -> Sites {
        Sites::synthetic(&[Some(0), Some(0), Some(1), Some(2), None])
    }

    #[test]
    fn a_stack_scores_each_covered_file_by_its_innermost_frame() {
        let sites = sites();
        // The failing trace covers f0, f1, f2 and f4: files 0 and 1 (file 2 is not covered).
        let failing = Spectrum::from_elements(vec![0, 1, 2, 4], &sites);
        let stack = [
            0x2010, // f1 crashed: file 0, depth 0
            0x2081, // f1 again (recursion): no new depth
            0x5041, // f4: unattributed
            0x4041, // f3: file 2, not in the trace
            0x9000, // no function
            0x3001, // f2 (return address just past the call): file 1, depth 1
            0x1001, // f0: file 0 again, already scored at depth 0
        ];
        assert_eq!(stack_evidence(&stack, &sites, &failing), vec![(0, 1.0), (1, 0.5)]);
    }

    #[test]
    fn a_return_address_right_after_a_function_belongs_to_it() {
        let sites = sites();
        let failing = Spectrum::from_elements(vec![0, 2], &sites);
        // 0x1100 is one past f0's end: as a return address it is a call at f0's last byte.
        assert_eq!(stack_evidence(&[0x3000, 0x1100], &sites, &failing), vec![(1, 1.0), (0, 0.5)]);
    }
}
