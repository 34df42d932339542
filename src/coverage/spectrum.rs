//! What one run covered: its elements (functions or blocks) and files, with the set
//! operations localization needs thousands of times per second.

use serde::Serialize;

use super::sites::Sites;

/// Covered elements and files of one run. Both lists are sorted, without repeats.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Spectrum {
    /// Site indices.
    pub elements: Vec<u32>,
    /// (file id, covered elements in it).
    pub files: Vec<(u32, u32)>,
    /// Covered elements in code no single file owns (templates, inline header code).
    pub unattributed: u32,
}

#[derive(Debug, Serialize)]
pub struct FileHits {
    pub path: String,
    pub hits: u32,
}

/// The `coverage` object of `ctos run --json`.
#[derive(Debug, Serialize)]
pub struct Summary {
    pub granularity: &'static str,
    pub elements: usize,
    pub unattributed: u32,
    pub files: Vec<FileHits>,
}

/// |a ∩ b| of two sorted lists.
fn intersection_len(a: &[u32], b: &[u32]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

fn jaccard_of(a: &[u32], b: &[u32]) -> f64 {
    let inter = intersection_len(a, b);
    let union = a.len() + b.len() - inter;
    if union == 0 {
        1.0
    } else {
        inter as f64 / union as f64
    }
}

impl Spectrum {
    /// The spectrum of a recorded trace (sites in first-hit order).
    pub fn from_trace(trace: &[u32], sites: &Sites) -> Spectrum {
        Spectrum::from_elements(trace.to_vec(), sites)
    }

    /// The spectrum of a failing run's trace, with `cut_error_reporting` cut before its
    /// first hit of LLVM's error reporting (`report_fatal_error`, the verifier's failure
    /// path): no passing run covers that code, so it would outrank the fault in a ranking.
    pub fn from_failing_trace(trace: &[u32], sites: &Sites, cut_error_reporting: bool) -> Spectrum {
        let end = match cut_error_reporting {
            true => trace.iter().position(|&s| sites.is_error_reporting(s)).unwrap_or(trace.len()),
            false => trace.len(),
        };
        Spectrum::from_elements(trace[..end].to_vec(), sites)
    }

    pub fn from_elements(mut elements: Vec<u32>, sites: &Sites) -> Spectrum {
        elements.sort_unstable();
        elements.dedup();
        let mut files: Vec<(u32, u32)> = Vec::new();
        let mut unattributed = 0;
        let mut by_file: Vec<u32> = elements.iter().filter_map(|&e| sites.file(e)).collect();
        unattributed += (elements.len() - by_file.len()) as u32;
        by_file.sort_unstable();
        for f in by_file {
            match files.last_mut() {
                Some((last, n)) if *last == f => *n += 1,
                _ => files.push((f, 1)),
            }
        }
        Spectrum { elements, files, unattributed }
    }

    pub fn len(&self) -> usize {
        self.elements.len()
    }

    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }

    pub fn contains(&self, element: u32) -> bool {
        self.elements.binary_search(&element).is_ok()
    }

    pub fn file_ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.files.iter().map(|f| f.0)
    }

    pub fn covers_file(&self, file: u32) -> bool {
        self.files.binary_search_by_key(&file, |f| f.0).is_ok()
    }

    pub fn intersection_len(&self, other: &Spectrum) -> usize {
        intersection_len(&self.elements, &other.elements)
    }

    pub fn union_len(&self, other: &Spectrum) -> usize {
        self.len() + other.len() - self.intersection_len(other)
    }

    /// Jaccard similarity of the covered elements.
    pub fn jaccard(&self, other: &Spectrum) -> f64 {
        jaccard_of(&self.elements, &other.elements)
    }

    /// Jaccard similarity of the covered files.
    pub fn file_jaccard(&self, other: &Spectrum) -> f64 {
        let a: Vec<u32> = self.file_ids().collect();
        let b: Vec<u32> = other.file_ids().collect();
        jaccard_of(&a, &b)
    }

    /// Elements in `self` but not in `other`.
    pub fn difference(&self, other: &Spectrum) -> Vec<u32> {
        self.elements.iter().copied().filter(|e| !other.contains(*e)).collect()
    }

    pub fn summary(&self, sites: &Sites) -> Summary {
        let mut files: Vec<FileHits> = self
            .files
            .iter()
            .map(|&(f, hits)| FileHits { path: sites.attribution.files[f as usize].clone(), hits })
            .collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Summary {
            granularity: sites.granularity.as_str(),
            elements: self.len(),
            unattributed: self.unattributed,
            files,
        }
    }
}
