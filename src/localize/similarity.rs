//! How close a passing run's compiler trace is to the failing one (LocSeq's fitness).

use serde::{Deserialize, Serialize};

use crate::coverage::{Sites, Spectrum};

/// LocSeq's eq. 3 combines a statement part `Sim_s` (eq. 4) and a file part `Sim_f`
/// (eq. 5). As printed it divides by zero when the file sets agree and barely scales
/// otherwise (spec §2.5), so the combination is a choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum SimilarityFormula {
    /// `Sim_s · Sim_f`: meets both properties the paper asks for (the spec's choice).
    #[default]
    Product,
    /// `Sim_s / (1 − Sim_f)`, `Sim_s` when the file sets agree: eq. 3 as printed.
    AsPrinted,
    /// `Sim_s / (1 − ln Sim_f)`.
    LogDamped,
    /// Plain Jaccard of the covered elements (eq. 2, DiWi's and RecBi's).
    Jaccard,
}

/// Fitness of candidate `a` against the failing run `b`. Both spectra are restricted to
/// the files localization considers.
pub fn similarity(a: &Spectrum, b: &Spectrum, sites: &Sites, formula: SimilarityFormula) -> f64 {
    if formula == SimilarityFormula::Jaccard {
        return a.jaccard(b);
    }
    // Cov'_a: a's elements in files both runs cover (a's files outside b's are the
    // file part's business, not the statement part's).
    let shared_files: Vec<u32> = a.file_ids().filter(|&f| b.covers_file(f)).collect();
    let restricted: Vec<u32> = a
        .elements
        .iter()
        .copied()
        .filter(|&e| sites.file(e).is_some_and(|f| shared_files.binary_search(&f).is_ok()))
        .collect();
    let a_prime = Spectrum { elements: restricted, ..Spectrum::default() };
    let union = a_prime.union_len(b);
    let sim_s = if union == 0 { 1.0 } else { a_prime.intersection_len(b) as f64 / union as f64 };
    let sim_f = a.file_jaccard(b);
    match formula {
        SimilarityFormula::Product => sim_s * sim_f,
        SimilarityFormula::AsPrinted if sim_f >= 1.0 => sim_s,
        SimilarityFormula::AsPrinted => sim_s / (1.0 - sim_f).max(1e-9),
        SimilarityFormula::LogDamped => sim_s / (1.0 - sim_f.max(1e-12).ln()),
        SimilarityFormula::Jaccard => unreachable!("handled above"),
    }
}
