//! One way to count a run as evidence, whatever was varied to make it: another sequence, a
//! configuration of the culprit pass, a mutant of the program. Every witness kind is
//! judged by the same oracle and recorded here, so that `--near` and `--evidence all` mean
//! the same for all of them. The searches (sequences, configurations, witness programs)
//! share their budget, witnesses and counts through this module, never through each other.

use std::collections::HashMap;
use std::time::Duration;

use serde::Serialize;

use super::evidence::{Evidence, FailingEvidence};
use super::files::FileFilter;
use super::similarity::{similarity, SimilarityFormula};
use super::witness_programs::stats::ProgramStats;
use crate::coverage::{Sites, Spectrum};
use crate::oracle::Failure;

/// What the search may spend.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub time: Option<Duration>,
    pub max_evals: Option<usize>,
}

/// A bug-free sequence (or configuration of the failing one) the search found.
#[derive(Debug, Clone, Serialize)]
pub struct Witness {
    pub pipeline: String,
    /// LLVM options of its run (configurations set the culprit's knobs).
    pub llvm_args: Vec<String>,
    /// Whether it is the failing sequence run differently rather than another sequence.
    pub configuration: bool,
    pub similarity: f64,
    pub file_jaccard: f64,
    /// A witness program: how it differs from the failing program.
    pub mutation: Option<String>,
}

/// What every search that feeds one ranking counted.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SearchStats {
    pub evaluations: usize,
    pub passing: usize,
    pub failing_same: usize,
    pub other_failures: usize,
    /// Candidates LLVM refused to run (no evidence either way).
    pub rejected: usize,
    /// Bug-free configurations of the failing sequence (among `passing`).
    pub passing_configs: usize,
    pub generations: usize,
    /// Times the GA's population stalled and a fresh batch joined its best.
    pub restarts: usize,
    pub best_similarity: f64,
    pub seconds: f64,
    /// Other failures by kind and signature, for the report.
    pub other_kinds: HashMap<String, usize>,
    /// What a witness-program search counted.
    pub programs: Option<ProgramStats>,
}

/// How runs become spectra and which count (the ranking's settings).
pub struct RecordSettings<'a> {
    pub sites: &'static Sites,
    pub filter: &'a FileFilter,
    /// The failing run's spectrum, restricted by `filter`.
    pub failing: &'a Spectrum,
    pub similarity: SimilarityFormula,
    pub evidence: FailingEvidence,
    /// Passing runs count as evidence only when their file-level Jaccard with the failing
    /// run reaches this (0 keeps all, as LocSeq).
    pub near: f64,
    /// Cut failing runs' traces before LLVM's error reporting.
    pub cut_error_reporting: bool,
}

/// What made a witness: a sequence with its LLVM options, or a mutant of the program.
pub struct Made {
    pub pipeline: String,
    pub llvm_args: Vec<String>,
    /// The failing sequence run differently (a configuration of its culprit).
    pub configuration: bool,
    /// How a witness program differs from the failing one.
    pub mutation: Option<String>,
}

/// The evidence, the witnesses and the counts of every search that feeds one ranking.
pub struct Recorder<'a> {
    pub settings: RecordSettings<'a>,
    pub evidence: Evidence,
    pub witnesses: Vec<Witness>,
    pub stats: SearchStats,
}

impl<'a> Recorder<'a> {
    /// A recorder holding the failing run alone.
    pub fn new(settings: RecordSettings<'a>) -> Recorder<'a> {
        let evidence = Evidence::new(settings.failing);
        Recorder { settings, evidence, witnesses: Vec::new(), stats: SearchStats::default() }
    }

    /// A passing run's trace as the spectrum counts it.
    pub fn passing_spectrum(&self, trace: &[u32]) -> Spectrum {
        let s = &self.settings;
        s.filter.restrict(&Spectrum::from_trace(trace, s.sites), s.sites)
    }

    /// A run that does not fail: a witness, and passing evidence when it is near enough to
    /// the failing run (`--near`). Its similarity to the failing run.
    pub fn passing(&mut self, spectrum: &Spectrum, made: Made) -> f64 {
        let s = &self.settings;
        let sim = similarity(spectrum, s.failing, s.sites, s.similarity);
        let file_jaccard = spectrum.file_jaccard(s.failing);
        if file_jaccard >= s.near {
            self.evidence.add_passing(spectrum);
        }
        self.stats.evaluations += 1;
        self.stats.passing += 1;
        self.stats.passing_configs += usize::from(made.configuration);
        self.stats.best_similarity = self.stats.best_similarity.max(sim);
        self.witnesses.push(Witness {
            pipeline: made.pipeline,
            llvm_args: made.llvm_args,
            configuration: made.configuration,
            similarity: sim,
            file_jaccard,
            mutation: made.mutation,
        });
        sim
    }

    /// A run that fails the way under study: failing evidence with `--evidence all`.
    pub fn failing_same(&mut self, trace: &[u32]) {
        self.stats.evaluations += 1;
        self.stats.failing_same += 1;
        let s = &self.settings;
        if s.evidence == FailingEvidence::All {
            let full = Spectrum::from_failing_trace(trace, s.sites, s.cut_error_reporting);
            self.evidence.add_failing(&s.filter.restrict(&full, s.sites));
        }
    }

    /// A run that fails some other way: no evidence either way.
    pub fn other_failure(&mut self, failure: &Failure) {
        self.stats.evaluations += 1;
        self.stats.other_failures += 1;
        *self.stats.other_kinds.entry(failure.to_string()).or_default() += 1;
    }

    /// A run that is no evidence of the failure: a mutant that is no program the search can
    /// use, or a bug-free one that is no witness.
    pub fn evaluated(&mut self) {
        self.stats.evaluations += 1;
    }

    /// A run LLVM refused: no evidence at all.
    pub fn refused(&mut self) {
        self.stats.evaluations += 1;
        self.stats.rejected += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Elements 0..4 in files 0, 0, 1, 1; the failing run covers all four.
    fn settings(near: f64, evidence: FailingEvidence) -> (RecordSettings<'static>, &'static Sites) {
        let sites: &'static Sites = Box::leak(Box::new(Sites::synthetic(&[Some(0), Some(0), Some(1), Some(1)])));
        let filter: &'static FileFilter = Box::leak(Box::new(FileFilter::new(sites, &[], true)));
        let failing: &'static Spectrum = Box::leak(Box::new(Spectrum::from_elements(vec![0, 1, 2, 3], sites)));
        let s = RecordSettings {
            sites,
            filter,
            failing,
            similarity: SimilarityFormula::Jaccard,
            evidence,
            near,
            cut_error_reporting: true,
        };
        (s, sites)
    }

    fn made(mutation: Option<&str>) -> Made {
        Made {
            pipeline: "function(sroa)".into(),
            llvm_args: Vec::new(),
            configuration: false,
            mutation: mutation.map(str::to_string),
        }
    }

    #[test]
    fn near_keeps_far_witnesses_of_every_kind_out_of_the_evidence() {
        let (settings, sites) = settings(1.0, FailingEvidence::One);
        let mut r = Recorder::new(settings);
        let one_file = Spectrum::from_elements(vec![0], sites);
        let both_files = Spectrum::from_elements(vec![0, 2], sites);
        // A witness sequence and a witness program, each in file 0 alone (Jaccard 0.5).
        r.passing(&one_file, made(None));
        r.passing(&one_file, made(Some("binary + -> - at line 3")));
        assert_eq!((r.stats.passing, r.witnesses.len(), r.evidence.passing), (2, 2, 0));
        assert_eq!(r.witnesses[1].file_jaccard, 0.5);
        r.passing(&both_files, made(Some("binary + -> - at line 4")));
        assert_eq!((r.stats.passing, r.evidence.passing), (3, 1));
        assert_eq!(r.stats.evaluations, 3);
    }

    #[test]
    fn failing_runs_are_evidence_only_with_evidence_all() {
        for (mode, counted) in [(FailingEvidence::One, 1), (FailingEvidence::All, 2)] {
            let (settings, _) = settings(0.0, mode);
            let mut r = Recorder::new(settings);
            r.failing_same(&[0, 2]);
            assert_eq!((r.stats.failing_same, r.evidence.failing), (1, counted), "{mode:?}");
        }
    }
}
