//! From evidence to one ranked list of LLVM functions across files: where in a 25,000-line
//! file an engineer starts reading.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::evidence::Evidence;
use super::rank::{is_core, DirectEvidence, FileRank, FAILURE_SPECIFIC};
use super::sbfl::Formula;
use crate::coverage::Sites;

/// What the ranking knows of one function the failing run covered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionEvidence {
    /// Demangled, without parameters (`llvm::ScalarEvolution::howFarToZero`).
    pub name: String,
    pub file: String,
    /// Its file's place in the file ranking (worst of its tie group).
    pub file_rank: usize,
    /// The best score of its elements.
    pub best: f64,
    /// The sum of its elements' scores: big functions that behaved differently weigh more.
    pub total: f64,
    /// Its elements the failing run covered.
    pub elements: usize,
    /// Its elements at most one in twenty bug-free runs covered (see [`FAILURE_SPECIFIC`]).
    pub failure_specific: usize,
    /// Depth of its innermost frame on a failure's stack (0: the function that crashed).
    pub stack_depth: Option<usize>,
    /// Its elements that the failing transformation ran and the run one step short did
    /// not, when a debug counter named the step.
    pub in_step: Option<usize>,
}

impl FunctionEvidence {
    /// IR core or support code, or an instance of the C++ standard library's templates
    /// made in the file (`std::__find_if<…>`): code LLVM's fixes do not change.
    fn core(&self) -> bool {
        is_core(&self.file) || ["std::", "__gnu_cxx::"].iter().any(|p| self.name.starts_with(p))
    }

    /// One short line of what placed it (`stack 0, 12 failure-specific of 40 elements`).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(d) = self.stack_depth {
            parts.push(format!("stack {d}"));
        }
        parts.push(format!("{} failure-specific of {} elements", self.failure_specific, self.elements));
        parts.push(format!("best {:.3}", self.best));
        if let Some(n) = self.in_step.filter(|&n| n > 0) {
            parts.push(format!("{n} in the failing step"));
        }
        if self.core() {
            parts.push("core (IR, support and standard library code rank last)".into());
        }
        parts.join(", ")
    }
}

/// How one score orders a file's functions, or all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FunctionKey {
    Best,
    Total,
    FailureSpecific,
}

/// One rule for ordering functions across files. IR core and support functions rank after
/// all others under every rule, as their files do, and so do the C++ standard library's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionRule {
    /// Functions on a failure's stack first, innermost first.
    pub stack_first: bool,
    /// Each file's functions together, in the file ranking's order; otherwise one order by
    /// `key` across files (the file's rank breaking ties).
    pub by_file: bool,
    pub key: FunctionKey,
}

impl FunctionRule {
    /// Every rule the leave-one-out chooses among.
    pub fn all() -> Vec<FunctionRule> {
        let mut rules = Vec::new();
        for stack_first in [false, true] {
            for by_file in [true, false] {
                for key in [FunctionKey::Best, FunctionKey::Total, FunctionKey::FailureSpecific] {
                    rules.push(FunctionRule { stack_first, by_file, key });
                }
            }
        }
        rules
    }

    /// `stack, file, total`: the parts of the rule in the order they apply.
    pub fn name(&self) -> String {
        let key = match self.key {
            FunctionKey::Best => "best",
            FunctionKey::Total => "total",
            FunctionKey::FailureSpecific => "failure-specific",
        };
        let parts = [self.stack_first.then_some("stack"), self.by_file.then_some("file"), Some(key)];
        parts.into_iter().flatten().collect::<Vec<_>>().join(", ")
    }

    /// The rule in words, for a report.
    pub fn explain(&self) -> String {
        let key = match self.key {
            FunctionKey::Best => "the best score of their elements",
            FunctionKey::Total => "the summed scores of their elements",
            FunctionKey::FailureSpecific => "their failure-specific elements",
        };
        let order = match self.by_file {
            true => format!("each file's functions together, files in the file ranking's order, by {key}"),
            false => format!("by {key}, the file ranking breaking ties"),
        };
        let stack = if self.stack_first { "functions on a failure's stack first, innermost first; then " } else { "" };
        format!("{stack}{order}; IR core, support and standard library code last")
    }

    /// The rule `locseq isolate` ranks by (chosen by leave-one-out, see the README).
    pub const DEFAULT: FunctionRule = FunctionRule { stack_first: true, by_file: false, key: FunctionKey::Total };
}

/// A function's place in one ranking.
#[derive(Debug, Clone, Serialize)]
pub struct FunctionRank {
    /// Worst position of its tie group, 1-based.
    pub rank: usize,
    #[serde(flatten)]
    pub evidence: FunctionEvidence,
}

/// Every function of the failing run's elements with its evidence, in no order.
pub fn function_evidence(
    evidence: &Evidence,
    sites: &Sites,
    formula: Formula,
    files: &[FileRank],
    direct: &DirectEvidence,
) -> Vec<FunctionEvidence> {
    let scores = evidence.scores(formula);
    let specific = evidence.failure_specific(FAILURE_SPECIFIC);
    let file_rank: HashMap<&str, usize> = files.iter().map(|f| (f.path.as_str(), f.rank)).collect();
    let mut by_function: HashMap<u32, FunctionEvidence> = HashMap::new();
    for (i, (&e, &s)) in evidence.elements.iter().zip(&scores).enumerate() {
        let Some(file) = sites.file(e) else { continue };
        let path = &sites.attribution.files[file as usize];
        let Some(&rank) = file_rank.get(path.as_str()) else { continue };
        let function = sites.function[e as usize];
        let f = by_function.entry(function).or_insert_with(|| FunctionEvidence {
            name: sites.attribution.name_of(function as usize),
            file: path.clone(),
            file_rank: rank,
            best: 0.0,
            total: 0.0,
            elements: 0,
            failure_specific: 0,
            stack_depth: direct.stack_functions.iter().find(|&&(g, _)| g == function).map(|&(_, d)| d),
            in_step: direct.step.as_ref().map(|_| 0),
        });
        f.best = f.best.max(s);
        f.total += s;
        f.elements += 1;
        f.failure_specific += usize::from(specific[i]);
        if let (Some(n), Some(step)) = (f.in_step.as_mut(), &direct.step) {
            *n += usize::from(step.binary_search(&e).is_ok());
        }
    }
    let mut all: Vec<FunctionEvidence> = by_function.into_values().collect();
    // A fixed order whatever the hash map's: ties then rank alike run to run.
    all.sort_by(|a, b| a.file_rank.cmp(&b.file_rank).then_with(|| a.name.cmp(&b.name)));
    all
}

/// The functions of code the failing step ran and the run one step short did not, most
/// such code first (IR core and standard library code left out): the visitor or helper
/// that made the transformation.
pub fn step_functions(functions: &[FunctionEvidence]) -> Vec<&FunctionEvidence> {
    let mut ran: Vec<&FunctionEvidence> =
        functions.iter().filter(|f| f.in_step.is_some_and(|n| n > 0) && !f.core()).collect();
    ran.sort_by(|a, b| b.in_step.cmp(&a.in_step).then(a.file_rank.cmp(&b.file_rank)).then(a.name.cmp(&b.name)));
    ran
}

/// `functions` ranked by `rule`: each with the worst position of its tie group.
pub fn rank_functions(functions: &[FunctionEvidence], rule: FunctionRule) -> Vec<FunctionRank> {
    // Smaller sorts first; equal keys tie.
    let key = |f: &FunctionEvidence| -> (bool, usize, usize, i64, usize) {
        let on_stack = rule.stack_first && !f.core() && f.stack_depth.is_some();
        let stack = if on_stack { f.stack_depth.unwrap_or(0) } else { usize::MAX };
        let score = match rule.key {
            FunctionKey::Best => f.best,
            FunctionKey::Total => f.total,
            FunctionKey::FailureSpecific => f.failure_specific as f64,
        };
        // Scores to a fixed precision, so that sums of equal terms in another order tie.
        let score = -(score * 1e9).round() as i64;
        let (file_first, file_then) = if rule.by_file { (f.file_rank, 0) } else { (0, f.file_rank) };
        (f.core() && !on_stack, stack, file_first, score, file_then)
    };
    let mut order: Vec<(_, &FunctionEvidence)> = functions.iter().map(|f| (key(f), f)).collect();
    order.sort_by_key(|o| o.0);
    (0..order.len())
        .map(|i| {
            let tied = order[i + 1..].iter().take_while(|o| o.0 == order[i].0).count();
            FunctionRank { rank: i + 1 + tied, evidence: order[i].1.clone() }
        })
        .collect()
}

/// The function a demangled name's code belongs to, as a fix commit's hunk headers name it:
/// its qualified name's parts, without template arguments or parameters, and a lambda's
/// (or a local class's) code counted for the function that encloses it.
pub fn enclosing_parts(demangled: &str) -> Vec<String> {
    let name = demangled.replace("(anonymous namespace)", "anonymous");
    let name = name.split(" [clone").next().unwrap_or(&name);
    let mut parts = vec![String::new()];
    let (mut angle, mut paren, mut brace) = (0i32, 0i32, 0i32);
    let mut chars = name.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '<' if paren == 0 && brace == 0 && !parts.last().is_some_and(|p| p.ends_with("operator")) => angle += 1,
            '>' if angle > 0 && paren == 0 && brace == 0 => angle -= 1,
            '(' if brace == 0 => paren += 1,
            ')' if brace == 0 && paren > 0 => paren -= 1,
            '{' => {
                // A lambda or unnamed type: its code is the enclosing function's.
                if angle == 0 && paren == 0 && brace == 0 {
                    break;
                }
                brace += 1;
            }
            '}' => brace -= 1,
            ':' if angle == 0 && paren == 0 && brace == 0 && chars.peek() == Some(&':') => {
                chars.next();
                parts.push(String::new());
            }
            _ if angle == 0 && paren == 0 && brace == 0 => parts.last_mut().unwrap().push(ch),
            _ => {}
        }
    }
    // The return type of a template instance, when the demangler kept it: `void llvm::f`.
    let parts: Vec<String> = parts
        .into_iter()
        .map(|p| p.rsplit(' ').next().unwrap_or("").trim().to_string())
        .filter(|p| !p.is_empty())
        .collect();
    parts
}

/// Whether the function `demangled` is the one `wanted` names (`ScalarEvolution::howFarToZero`,
/// `analyze`): `wanted`'s parts end its enclosing name's parts.
pub fn names_function(demangled: &str, wanted: &str) -> bool {
    let have = enclosing_parts(demangled);
    let want: Vec<&str> = wanted.split("::").map(str::trim).filter(|p| !p.is_empty()).collect();
    !want.is_empty()
        && have.len() >= want.len()
        && have[have.len() - want.len()..].iter().zip(&want).all(|(h, w)| h == w)
}

/// The best rank in `ranking` of any fix function (per file, the names its fix changed).
pub fn best_fix_rank(ranking: &[FunctionRank], fix: &[(String, Vec<String>)]) -> Option<usize> {
    ranking
        .iter()
        .filter(|r| {
            fix.iter().any(|(file, names)| {
                &r.evidence.file == file && names.iter().any(|n| names_function(&r.evidence.name, n))
            })
        })
        .map(|r| r.rank)
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function(name: &str, file: &str, file_rank: usize, best: f64, total: f64, specific: usize) -> FunctionEvidence {
        FunctionEvidence {
            name: name.into(),
            file: file.into(),
            file_rank,
            best,
            total,
            elements: specific.max(1),
            failure_specific: specific,
            stack_depth: None,
            in_step: None,
        }
    }

    fn names(ranking: &[FunctionRank]) -> Vec<(&str, usize)> {
        ranking.iter().map(|r| (r.evidence.name.as_str(), r.rank)).collect()
    }

    #[test]
    fn a_lambda_or_template_instance_counts_for_the_function_that_encloses_it() {
        let parts = |s: &str| enclosing_parts(s).join("::");
        assert_eq!(parts("llvm::ScalarEvolution::howFarToZero"), "llvm::ScalarEvolution::howFarToZero");
        assert_eq!(
            parts("llvm::slpvectorizer::BoUpSLP::buildTree_rec(llvm::ArrayRef<llvm::Value*>, unsigned int)::{lambda(llvm::Value*)#3}::operator()"),
            "llvm::slpvectorizer::BoUpSLP::buildTree_rec"
        );
        assert_eq!(
            parts("(anonymous namespace)::CodeGenPrepare::optimizeMemoryInst"),
            "anonymous::CodeGenPrepare::optimizeMemoryInst"
        );
        assert_eq!(
            parts("void llvm::SmallVectorImpl<llvm::Value*>::append<llvm::Use*>"),
            "llvm::SmallVectorImpl::append"
        );
        assert_eq!(
            parts("llvm::DenseMapBase<llvm::DenseMap<int, int>, int>::operator<"),
            "llvm::DenseMapBase::operator<"
        );
        assert_eq!(parts("foldSelectWithFCmpToFabs [clone .cold]"), "foldSelectWithFCmpToFabs");
        assert!(names_function("llvm::ScalarEvolution::howFarToZero", "ScalarEvolution::howFarToZero"));
        assert!(names_function("(anonymous namespace)::ConstantTerminatorFoldingImpl::analyze", "analyze"));
        assert!(names_function("llvm::deleteDeadLoop", "llvm::deleteDeadLoop"));
        assert!(names_function("(anonymous namespace)::Decomposition::Decomposition", "Decomposition"));
        assert!(!names_function("llvm::ScalarEvolution::howFarToZeroOrOne", "ScalarEvolution::howFarToZero"));
        assert!(!names_function("llvm::ScalarEvolution::howFarToZero", "LoopInfo::howFarToZero"));
        assert!(!names_function("llvm::f", ""));
    }

    #[test]
    fn each_rule_orders_functions_across_files_and_core_code_comes_last() {
        let a = "llvm/lib/Transforms/Scalar/A.cpp";
        let b = "llvm/lib/Analysis/B.cpp";
        let core = "llvm/lib/IR/Value.cpp";
        let functions = vec![
            function("a1", a, 1, 0.5, 0.5, 1),
            function("a2", a, 1, 0.3, 2.0, 0),
            function("b1", b, 2, 0.9, 0.9, 3),
            function("v", core, 3, 1.0, 9.0, 9),
            function("std::__find_if<llvm::Value**>", a, 1, 1.0, 9.0, 9),
        ];
        let rule = |stack_first, by_file, key| FunctionRule { stack_first, by_file, key };
        let ranked = rank_functions(&functions, rule(false, true, FunctionKey::Best));
        assert_eq!(names(&ranked), [("a1", 1), ("a2", 2), ("b1", 3), ("std::__find_if<llvm::Value**>", 4), ("v", 5)]);
        let ranked = rank_functions(&functions, rule(false, true, FunctionKey::Total));
        assert_eq!(names(&ranked)[..3], [("a2", 1), ("a1", 2), ("b1", 3)]);
        let ranked = rank_functions(&functions, rule(false, false, FunctionKey::Best));
        assert_eq!(names(&ranked)[..3], [("b1", 1), ("a1", 2), ("a2", 3)]);
        let ranked = rank_functions(&functions, rule(false, false, FunctionKey::FailureSpecific));
        assert_eq!(names(&ranked)[..3], [("b1", 1), ("a1", 2), ("a2", 3)]);
        // Equal scores in one file tie, at the worst place of the two.
        let mut tied = functions.clone();
        tied[1].best = 0.5;
        assert_eq!(names(&rank_functions(&tied, rule(false, true, FunctionKey::Best)))[..2], [("a1", 2), ("a2", 2)]);
    }

    #[test]
    fn with_the_stack_first_the_innermost_pass_or_analysis_frame_leads() {
        let a = "llvm/lib/Transforms/Scalar/A.cpp";
        let core = "llvm/lib/IR/Value.cpp";
        let mut functions = vec![
            function("a1", a, 1, 0.9, 0.9, 1),
            function("a2", a, 1, 0.1, 0.1, 0),
            function("v", core, 2, 1.0, 1.0, 1),
        ];
        functions[1].stack_depth = Some(1);
        // The crash was in core code, which the stack does not lift.
        functions[2].stack_depth = Some(0);
        let stack_first = FunctionRule { stack_first: true, by_file: true, key: FunctionKey::Best };
        assert_eq!(names(&rank_functions(&functions, stack_first)), [("a2", 1), ("a1", 2), ("v", 3)]);
        let plain = FunctionRule { stack_first: false, ..stack_first };
        assert_eq!(names(&rank_functions(&functions, plain)), [("a1", 1), ("a2", 2), ("v", 3)]);
    }

    #[test]
    fn a_fix_function_is_found_by_file_and_name() {
        let a = "llvm/lib/Transforms/Scalar/A.cpp";
        let functions = vec![
            function("llvm::A::run", a, 1, 0.9, 0.9, 1),
            function("(anonymous namespace)::Impl::analyze", a, 1, 0.5, 0.5, 1),
        ];
        let ranking =
            rank_functions(&functions, FunctionRule { stack_first: false, by_file: true, key: FunctionKey::Best });
        let fix = |file: &str, names: &[&str]| vec![(file.to_string(), names.iter().map(|n| n.to_string()).collect())];
        assert_eq!(best_fix_rank(&ranking, &fix(a, &["analyze"])), Some(2));
        assert_eq!(best_fix_rank(&ranking, &fix(a, &["analyze", "run"])), Some(1));
        assert_eq!(best_fix_rank(&ranking, &fix("other.cpp", &["run"])), None);
    }
}
