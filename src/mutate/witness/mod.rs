//! What DiWi and RecBi ask of a program mutator, whatever the program is written in: a
//! table of named rules, each in one of RecBi's operator classes, and one random
//! application of a rule to a program's text. C source (`rules`, with RecBi's `ingredients`)
//! and LLVM IR (`ir`) are the two backends.

pub mod ingredients;
pub mod ir;
#[cfg(test)]
mod ir_tests;
pub mod rules;

use rand::Rng;
use serde::Serialize;

/// RecBi's eleven operator classes (spec recbi.md §5.1, the released code's numbering):
/// its A2C agent picks a class, then a rule of the class uniformly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleClass {
    AddFunction = 0,
    AddQualifier = 1,
    AddModifier = 2,
    Remove = 3,
    Binary = 4,
    Constant = 5,
    Unary = 6,
    Variable = 7,
    AddIf = 8,
    AddWhile = 9,
    AddGoto = 10,
}

impl RuleClass {
    pub const COUNT: usize = 11;

    pub const ALL: [RuleClass; RuleClass::COUNT] = [
        RuleClass::AddFunction,
        RuleClass::AddQualifier,
        RuleClass::AddModifier,
        RuleClass::Remove,
        RuleClass::Binary,
        RuleClass::Constant,
        RuleClass::Unary,
        RuleClass::Variable,
        RuleClass::AddIf,
        RuleClass::AddWhile,
        RuleClass::AddGoto,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    /// Structural classes change control flow; the rest are DiWi's local rules.
    pub fn is_structural(self) -> bool {
        matches!(self, RuleClass::AddFunction | RuleClass::AddIf | RuleClass::AddWhile | RuleClass::AddGoto)
    }
}

/// Functions whose arguments are what a program shows, its output and its own checks: a
/// change there could pass by hiding the bug's symptom (C calls and IR callees alike).
pub const OUTPUT_CALLS: &[&str] = &[
    "printf",
    "fprintf",
    "puts",
    "putchar",
    "fputs",
    "write",
    "transparent_crc",
    "transparent_crc_bytes",
    "platform_main_end",
    "abort",
    "__builtin_abort",
    "exit",
    "assert",
    "__assert_fail",
];

/// A rule's name and class, as a backend's table lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleInfo {
    /// Unique within a backend: `binary + -> -`, `add volatile`, `ir icmp slt -> sle`.
    pub name: String,
    pub class: RuleClass,
}

/// One application of a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mutant {
    /// The whole mutated program.
    pub text: String,
    /// What changed, for reports: `binary + -> - at line 7: a + b`.
    pub description: String,
    /// The 1-based line of the original where the change is (RecBi's per-line cap on
    /// structural witnesses counts these).
    pub line: usize,
    /// The change is inside what the program prints or checks (an argument of one of
    /// [`OUTPUT_CALLS`]; the condition guarding an `abort` is not one): such a mutant could
    /// pass by hiding the bug's symptom, so it is never a witness (DiWi's fake-pass guard).
    pub touches_output: bool,
}

/// A program mutation backend.
pub trait Mutator {
    /// Every rule, indexed as [`Mutator::mutate`] takes them.
    fn rules(&self) -> &[RuleInfo];

    /// Rule `rule` applied at one site of `program` drawn uniformly among the rule's
    /// sites; `Ok(None)` when it has none (or none that gives a valid program). `Err` only
    /// when `program` itself cannot be read.
    fn mutate(&self, program: &str, rule: usize, rng: &mut dyn Rng) -> anyhow::Result<Option<Mutant>>;
}

/// The 1-based line of byte `offset` in `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// The rules of another mutator that `keep` admits, renumbered (DiWi on a backend whose
/// table also has structural rules).
pub struct Subset<M> {
    inner: M,
    /// Our rule i is the inner mutator's rule `map[i]`.
    map: Vec<usize>,
    infos: Vec<RuleInfo>,
}

impl<M: Mutator> Subset<M> {
    pub fn new(inner: M, keep: impl Fn(&RuleInfo) -> bool) -> Subset<M> {
        let map: Vec<usize> = (0..inner.rules().len()).filter(|&i| keep(&inner.rules()[i])).collect();
        let infos = map.iter().map(|&i| inner.rules()[i].clone()).collect();
        Subset { inner, map, infos }
    }
}

impl<M: Mutator> Mutator for Subset<M> {
    fn rules(&self) -> &[RuleInfo] {
        &self.infos
    }

    fn mutate(&self, program: &str, rule: usize, rng: &mut dyn Rng) -> anyhow::Result<Option<Mutant>> {
        self.inner.mutate(program, self.map[rule], rng)
    }
}
