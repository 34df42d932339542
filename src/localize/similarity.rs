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

#[cfg(test)]
mod tests {
    use super::*;

    fn close(actual: f64, expected: f64) {
        assert!((actual - expected).abs() < 1e-12, "{actual} != {expected}");
    }

    /// Sites 0 and 1 in file 0, 2 and 3 in file 1, 4 in file 2, 5 unattributed.
    fn sites() -> Sites {
        Sites::synthetic(&[Some(0), Some(0), Some(1), Some(1), Some(2), None])
    }

    fn spectrum(elements: &[u32], sites: &Sites) -> Spectrum {
        Spectrum::from_elements(elements.to_vec(), sites)
    }

    #[test]
    fn jaccard_is_shared_over_all_elements() {
        let s = sites();
        close(similarity(&spectrum(&[0, 1, 2], &s), &spectrum(&[1, 2, 3], &s), &s, SimilarityFormula::Jaccard), 0.5);
        close(similarity(&spectrum(&[0], &s), &spectrum(&[4], &s), &s, SimilarityFormula::Jaccard), 0.0);
    }

    /// a = {0, 1, 4} (files 0, 2), failing b = {0, 2} (files 0, 1). Only file 0 is shared,
    /// so a' = {0, 1} and Sim_s = |{0}| / |{0, 1, 2}| = 1/3; Sim_f = |{0}| / |{0, 1, 2}| = 1/3.
    #[test]
    fn the_statement_part_ignores_files_the_failing_run_does_not_cover() {
        let s = sites();
        let (a, b) = (spectrum(&[0, 1, 4], &s), spectrum(&[0, 2], &s));
        close(similarity(&a, &b, &s, SimilarityFormula::Product), 1.0 / 9.0);
        close(similarity(&a, &b, &s, SimilarityFormula::AsPrinted), (1.0 / 3.0) / (2.0 / 3.0));
        close(similarity(&a, &b, &s, SimilarityFormula::LogDamped), (1.0 / 3.0) / (1.0 - (1.0f64 / 3.0).ln()));
    }

    #[test]
    fn when_the_files_agree_as_printed_is_the_statement_part_not_a_division_by_zero() {
        let s = sites();
        // Same files {0, 1}; elements {0, 2} against {1, 2, 3}: Sim_s = 1/4.
        let (a, b) = (spectrum(&[0, 2], &s), spectrum(&[1, 2, 3], &s));
        close(a.file_jaccard(&b), 1.0);
        close(similarity(&a, &b, &s, SimilarityFormula::AsPrinted), 0.25);
        close(similarity(&a, &b, &s, SimilarityFormula::Product), 0.25);
        close(similarity(&a, &b, &s, SimilarityFormula::LogDamped), 0.25);
    }

    #[test]
    fn a_run_is_as_close_as_can_be_to_itself() {
        let s = sites();
        let a = spectrum(&[0, 3, 4], &s);
        for formula in [SimilarityFormula::Product, SimilarityFormula::LogDamped, SimilarityFormula::Jaccard] {
            close(similarity(&a, &a, &s, formula), 1.0);
        }
    }

    #[test]
    fn unattributed_code_counts_as_elements_but_not_as_a_file() {
        let s = sites();
        let a = spectrum(&[0, 3, 4, 5], &s);
        assert_eq!((a.len(), a.unattributed, a.files.len()), (4, 1, 3));
        close(a.file_jaccard(&spectrum(&[0, 3, 4], &s)), 1.0);
    }
}
