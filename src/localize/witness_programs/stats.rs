//! What a witness-program search counted, in a leaf module: the record of every search
//! holds it without depending on the search that fills it.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

/// Which witness-program search ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Guidance {
    /// DiWi: local rules, Metropolis–Hastings over rule scores.
    Diwi,
    /// RecBi: local and structural rules, an A2C agent, the ΔQ ≥ 0 filter.
    Recbi,
}

/// Why a mutant is no evidence either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Refusal {
    /// Does not compile (C) or does not verify.
    Invalid,
    /// Unoptimized, it shows something else than the failing program: it crashes, hangs,
    /// or prints another number of lines.
    Shows,
    /// Undefined behaviour under UBSan/ASan (C, wrong-code oracles).
    Undefined,
    /// LLVM refused the pipeline on it.
    Rejected,
}

impl Refusal {
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::Invalid => "invalid",
            Refusal::Shows => "shows",
            Refusal::Undefined => "undefined",
            Refusal::Rejected => "rejected",
        }
    }
}

/// What the program search counted, beside [`SearchStats`](crate::localize::record::SearchStats).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ProgramStats {
    pub guidance: Option<Guidance>,
    /// Attempts: rules drawn.
    pub attempts: usize,
    /// The rule had no site in its seed.
    pub not_applicable: usize,
    /// The change was inside what the program prints or checks (fake-pass guard).
    pub touches_output: usize,
    /// A program already tried, or coverage a witness already has.
    pub duplicates: usize,
    pub refused: HashMap<Refusal, usize>,
    /// Passing programs RecBi's quality filter or per-line cap turned away.
    pub turned_away: usize,
    /// The mutation order reached (1: mutants of the failing program).
    pub order: usize,
    /// Witnesses per rule class.
    pub witnesses_by_class: HashMap<String, usize>,
    /// Updates of RecBi's networks.
    pub updates: usize,
    /// Wall seconds by phase (mutate, compile, reference, optimize, ub-screening).
    pub seconds_by_phase: BTreeMap<&'static str, f64>,
}
