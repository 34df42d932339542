//! From evidence to ranked LLVM source files, with the functions that score highest.

use std::collections::HashMap;

use serde::Serialize;

use super::evidence::Evidence;
use super::sbfl::{self, Aggregate, Formula};
use crate::coverage::Sites;

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

pub fn rank(evidence: &Evidence, sites: &Sites, formula: Formula, aggregate: Aggregate) -> Vec<FileRank> {
    let scores = evidence.scores(formula);
    let per_element: Vec<(u32, f64)> =
        evidence.elements.iter().zip(&scores).filter_map(|(&e, &s)| sites.file(e).map(|f| (f, s))).collect();
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
