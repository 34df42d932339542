//! From evidence to ranked LLVM source files.

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
    /// The spectrum score (its elements' scores combined by the aggregate).
    pub score: f64,
    /// Elements of this file the failing run covered.
    pub elements: usize,
    /// What the ranking knows of this file, each kind of evidence apart.
    pub evidence: FileEvidence,
    /// The file's first functions in the function ranking (see [`super::functions`]).
    pub top_functions: Vec<String>,
}

/// The share of bug-free runs that may cover an element that still counts as failure-
/// specific.
pub const FAILURE_SPECIFIC: f64 = 0.05;

/// A transform file whose failure-specific code is this many times the culprit's files'
/// ranks with them: a helper the pass drives (chosen by leave-one-out, see the README).
pub const HELPER_FACTOR: usize = 3;

/// When the culprit's files hold no failure-specific code and the failure is wrong output,
/// another file's spectrum score must be this many times the next one's to rank before
/// them (leave-one-out, README).
pub const STANDS_OUT: f64 = 3.0;

/// Which evidence put a file where it is (the rule is [`rank`]'s).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placed {
    /// One of the culprit pass's files, ahead of the others because the culprit's code
    /// did something in the failing run that (almost) no bug-free run did, or because no
    /// other file's evidence stands out.
    Culprit,
    /// A transform file beside the culprit's: it holds several times their failure-specific
    /// code (a helper the pass drives, as SimplifyIndVar.cpp is indvars').
    Helper,
    /// The innermost pass or analysis file on the failure's stack, ahead of culprit files
    /// that hold no failure-specific code: where the run stopped is the evidence left.
    Stack,
    /// By its spectrum score (the crash stack adds to it).
    #[default]
    Spectrum,
    /// IR core or support code (llvm/lib/IR, llvm/lib/Support), ranked after every other
    /// file: every pass manipulates its data structures.
    Core,
}

/// Whether `path` is LLVM's IR core or support library: the values, instructions, use
/// lists, containers and the pass manager that every pass works through. Their code that
/// only a failing run executes says what the culprit did, and rarely where it erred.
pub fn is_core(path: &str) -> bool {
    ["llvm/lib/IR/", "llvm/lib/Support/"].iter().any(|d| path.starts_with(d))
}

/// Every kind of evidence the ranking weighs, for one file.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FileEvidence {
    /// What put the file where it is.
    pub placed: Placed,
    /// One of the culprit pass's files: that of its `run` method, or one that defines
    /// members of its classes (InstCombine's visitors live in InstCombine*.cpp).
    pub culprit: bool,
    /// Depth of the file's innermost frame on a crash's stack (0: the function that crashed).
    pub stack_depth: Option<usize>,
    /// Its elements that the failing run(s) cover and no passing run does.
    pub failure_only: usize,
    /// Its elements that the failing run(s) cover and at most one in twenty passing runs
    /// do ([`FAILURE_SPECIFIC`]): what the culprit rule looks at.
    pub failure_specific: usize,
    /// Its rank by the spectrum alone (worst of its tie group).
    pub spectrum_rank: usize,
    /// Behind a first file that the rule placed there (culprit or helper): what this
    /// file's evidence is against it, for an engineer reading the top files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub against_first: Option<String>,
}

impl FileEvidence {
    /// One short line: what placed the file, then the rest of its evidence
    /// (`culprit, 290 failure-specific (282 failure-only), stack 0`).
    pub fn describe(&self) -> String {
        self.parts().join(", ")
    }

    /// What placed the file, then each other piece of its evidence.
    pub fn parts(&self) -> Vec<String> {
        let mut parts = vec![match self.placed {
            Placed::Culprit if self.failure_specific == 0 => {
                "culprit (no failure-specific code, and no other file's evidence outweighs it)".to_string()
            }
            Placed::Culprit => "culprit".to_string(),
            Placed::Helper => "helper of the culprit".to_string(),
            Placed::Stack => {
                "stack (its innermost pass or analysis file; the culprit's hold no failure-specific code)".to_string()
            }
            Placed::Spectrum if self.culprit => "spectrum (a culprit file without failure-specific code)".to_string(),
            Placed::Spectrum => "spectrum".to_string(),
            Placed::Core => "core (IR and support code rank last)".to_string(),
        }];
        if self.failure_specific > 0 {
            parts.push(format!("{} failure-specific ({} failure-only)", self.failure_specific, self.failure_only));
        }
        if let Some(d) = self.stack_depth {
            parts.push(format!("stack {d}"));
        }
        parts
    }
}

/// Whether a demangled C++ name is qualified by a class or namespace whose name starts
/// with `stem` (any case): `llvm::InstCombinerImpl::visitSelectInst(…)` for
/// `InstCombine`, `llvm::slpvectorizer::BoUpSLP::…` for `SLPVectorizer`. Template
/// arguments and parameters are not qualifiers.
fn qualified_by(name: &str, stem: &str) -> bool {
    let name = name.replace("(anonymous namespace)", "anonymous");
    let mut plain = String::with_capacity(name.len());
    let mut depth = 0;
    for ch in name.chars() {
        match ch {
            '<' => depth += 1,
            '>' => depth -= 1,
            '(' if depth == 0 => break,
            _ if depth == 0 => plain.push(ch),
            _ => {}
        }
    }
    let stem = stem.to_ascii_lowercase();
    let parts: Vec<&str> = plain.split("::").collect();
    parts[..parts.len().saturating_sub(1)].iter().any(|q| q.trim().to_ascii_lowercase().starts_with(&stem))
}

/// The culprit pass's files among those the failing run covered: the file of its `run`
/// method, and every file that defines a covered function of a class or namespace named
/// like the pass (`InstCombinePass`: `InstCombinerImpl`'s visitors across InstCombine*.cpp).
pub fn culprit_files(class: Option<&str>, run_file: Option<&str>, failing: &Spectrum, sites: &Sites) -> Vec<u32> {
    let mut files: Vec<u32> = Vec::new();
    if let Some(path) = run_file {
        files.extend(failing.files.iter().map(|&(f, _)| f).filter(|&f| sites.attribution.files[f as usize] == path));
    }
    let stem = class.map(|c| c.strip_suffix("Pass").unwrap_or(c)).filter(|s| s.len() >= 3);
    if let Some(stem) = stem {
        let mut functions: Vec<u32> = failing.elements.iter().map(|&e| sites.function[e as usize]).collect();
        functions.dedup();
        for function in functions {
            let Some(file) = sites.file_of_function(function) else { continue };
            if !files.contains(&file) && qualified_by(&sites.attribution.name_of(function as usize), stem) {
                files.push(file);
            }
        }
    }
    files.sort_unstable();
    files.dedup();
    files
}

/// Evidence that names files directly, beside the spectrum's statistics.
#[derive(Debug, Clone, Default)]
pub struct DirectEvidence {
    /// The culprit pass's files (see [`culprit_files`]).
    pub culprit_files: Vec<u32>,
    /// (file, depth) per file on a crash's stack, as [`stack_frames`] gives them.
    pub stack: Vec<(u32, usize)>,
    /// (function, depth) per function on it, likewise.
    pub stack_functions: Vec<(u32, usize)>,
    /// Whether the failure is wrong output (rather than a crash or broken IR): an
    /// analysis's wrong answer that the culprit trusted can be its fault.
    pub wrong_output: bool,
    /// The elements the culprit's failing transformation ran and the run one step short
    /// did not (sorted), when a debug counter named the step.
    pub step: Option<Vec<u32>>,
}

impl DirectEvidence {
    /// The culprit's files, and what a failure's `stack` (return addresses, innermost
    /// first) says of files and functions.
    pub fn new(culprit_files: Vec<u32>, stack: &[u64], sites: &Sites, failing: &Spectrum) -> DirectEvidence {
        let frames = stack_frames(stack, sites, failing);
        let mut files: Vec<(u32, usize)> = Vec::new();
        for &(_, file, depth) in &frames {
            if !files.iter().any(|&(f, _)| f == file) {
                files.push((file, depth));
            }
        }
        let functions = frames.iter().map(|&(function, _, depth)| (function, depth)).collect();
        DirectEvidence { culprit_files, stack: files, stack_functions: functions, ..DirectEvidence::default() }
    }
}

/// What a crash's stack says: each function of the failing trace's files on it, with its
/// file and d the depth of its innermost frame among those functions' frames (0: the
/// function that crashed). Files the trace does not cover (the pass manager above a focused
/// pass) say nothing.
fn stack_frames(stack: &[u64], sites: &Sites, failing: &Spectrum) -> Vec<(u32, u32, usize)> {
    let mut out: Vec<(u32, u32, usize)> = Vec::new();
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
        if !out.iter().any(|&(g, _, _)| g == function as u32) {
            out.push((function as u32, file, depth));
        }
        depth += 1;
    }
    out
}

/// Files ranked by all the evidence, in one rule. IR core and support files rank last.
/// Among the others, the culprit pass's files rank first when they hold failure-specific
/// code (code the failing run executed and at most one bug-free run in twenty did), with
/// any transform file holding [`HELPER_FACTOR`] times their failure-specific code; when
/// they hold none, the innermost other file on the failure's stack ranks first, then
/// they do, unless no stack names such a file, the failure is wrong output and another
/// file's spectrum score stands out ([`STANDS_OUT`] times the next one's). The rest rank
/// by the spectrum: Ochiai over each file's elements, combined by `aggregate`, plus
/// `1/(1+d)` when it is d frames deep on a crash's (or a hang's) stack.
///
/// Why: the culprit's code is an engineer's first suspect, and the spectrum confirms it when
/// that code behaved in the failing run as in (almost) no bug-free one. A pass also works
/// through helpers (loop utilities, the SCEV expander, SimplifyIndVar) that are not named
/// like it: one whose failure-specific code dwarfs the pass's own is where the behaviour
/// that differed lives. When nothing of the culprit's is failure-specific, the spectrum's
/// first file is another suspect only if it clearly leads, and only for wrong output: an
/// analysis's wrong answer that the culprit trusted shows as wrong output, while broken IR
/// and a crash are the culprit's own doing on the IR (the one development bug of each
/// kind where the rule fired, 202296's broken IR, lost its fix file to ScalarEvolution.cpp
/// for it). A near tie of weak scores is no reason to pass over the engineer's first
/// suspect. A stack is stronger evidence than
/// either: the run stopped there (a crash, a value destroyed while still used, a hang),
/// and code that ran as in the bug-free runs can still be what went wrong. IR core and
/// support code (values, use lists, the dominator tree, the pass manager) runs in every
/// pass; its failure-specific
/// code is the trace of what the culprit did (and of analyses it computed on first use),
/// and it buried the fix file of four development bugs. Each choice was made by
/// leave-one-out on the development bench (see the README).
pub fn rank(
    evidence: &Evidence,
    sites: &Sites,
    formula: Formula,
    aggregate: Aggregate,
    direct: &DirectEvidence,
) -> Vec<FileRank> {
    let mut ranking = rank_by_spectrum(evidence, sites, formula, aggregate, direct);
    for f in ranking.iter_mut().filter(|f| is_core(&f.path) && !f.evidence.culprit) {
        f.evidence.placed = Placed::Core;
    }
    let culprit_specific = ranking.iter().filter(|f| f.evidence.culprit).map(|f| f.evidence.failure_specific).max();
    match culprit_specific {
        None => {}
        Some(0) if mark_innermost_on_stack(&mut ranking) => {
            for f in ranking.iter_mut().filter(|f| f.evidence.culprit) {
                f.evidence.placed = Placed::Culprit;
            }
        }
        Some(0) => {
            let leads = direct.wrong_output && {
                let mut others = ranking.iter().filter(|f| !f.evidence.culprit && f.evidence.placed != Placed::Core);
                match (others.next(), others.next()) {
                    (Some(first), Some(second)) => first.score >= STANDS_OUT * second.score,
                    (Some(_), None) => true,
                    _ => false,
                }
            };
            if !leads {
                for f in ranking.iter_mut().filter(|f| f.evidence.culprit) {
                    f.evidence.placed = Placed::Culprit;
                }
            }
        }
        Some(specific) => {
            for f in ranking.iter_mut() {
                if f.evidence.culprit {
                    f.evidence.placed = Placed::Culprit;
                } else if f.path.starts_with("llvm/lib/Transforms/")
                    && f.evidence.failure_specific >= HELPER_FACTOR * specific
                {
                    f.evidence.placed = Placed::Helper;
                }
            }
        }
    }
    let order = |p: Placed| match p {
        Placed::Stack => 0,
        Placed::Culprit | Placed::Helper => 1,
        Placed::Spectrum => 2,
        Placed::Core => 3,
    };
    // Stable: within each group the spectrum's order, ties included, stays.
    ranking.sort_by_key(|f| order(f.evidence.placed));
    let groups: Vec<(usize, f64)> = ranking.iter().map(|f| (order(f.evidence.placed), f.score)).collect();
    for (i, f) in ranking.iter_mut().enumerate() {
        // The worst position of its tie group: same group, same score.
        f.rank = i + 1 + groups[i + 1..].iter().take_while(|g| **g == groups[i]).count();
    }
    explain_against_first(&mut ranking);
    ranking
}

/// Places the innermost file on the stack that is neither IR core nor the culprit's, if
/// the stack reaches one before any culprit file; whether it did.
fn mark_innermost_on_stack(ranking: &mut [FileRank]) -> bool {
    let innermost = ranking
        .iter_mut()
        .filter(|f| f.evidence.placed != Placed::Core)
        .filter_map(|f| f.evidence.stack_depth.map(|d| (d, f)))
        .min_by_key(|(d, _)| *d);
    match innermost {
        Some((_, f)) if !f.evidence.culprit => {
            f.evidence.placed = Placed::Stack;
            true
        }
        _ => false,
    }
}

/// For the files behind a first file the rule placed there (a culprit, helper or stack
/// file that the spectrum alone would not put first), what their evidence is against it.
fn explain_against_first(ranking: &mut [FileRank]) {
    let Some(first) =
        ranking.first().filter(|f| matches!(f.evidence.placed, Placed::Culprit | Placed::Helper | Placed::Stack))
    else {
        return;
    };
    let (name, first_specific, first_rank, first_placed) = (
        first.path.rsplit('/').next().unwrap_or(&first.path).to_string(),
        first.evidence.failure_specific,
        first.evidence.spectrum_rank,
        first.evidence.placed,
    );
    for f in ranking.iter_mut().skip(1) {
        let mine = &f.evidence;
        let standing = match mine.placed {
            Placed::Culprit if first_placed == Placed::Stack => {
                format!("a culprit file without failure-specific code, and the stack's innermost pass or analysis frame is in {name}")
            }
            Placed::Culprit | Placed::Helper | Placed::Stack => "placed with it".to_string(),
            Placed::Core => "IR core or support code, which ranks after the passes' and analyses' files".to_string(),
            Placed::Spectrum if first_placed == Placed::Stack => format!(
                "{} failure-specific elements, but the run stopped in {name}'s code (the stack's innermost pass or \
                 analysis frame) and the culprit's files hold none",
                mine.failure_specific
            ),
            Placed::Spectrum if first_specific == 0 => {
                format!(
                    "{name} holds no failure-specific code either, and no file's spectrum score stands out for a \
                     failure of this kind"
                )
            }
            Placed::Spectrum if mine.failure_specific >= first_specific => format!(
                "more failure-specific code than {name} ({} against {first_specific}), but not a transform file \
                 the culprit drives",
                mine.failure_specific
            ),
            Placed::Spectrum => {
                format!("less failure-specific code than {name} ({} against {first_specific})", mine.failure_specific)
            }
        };
        let stack = mine.stack_depth.map(|d| format!(", stack {d}")).unwrap_or_default();
        f.evidence.against_first =
            Some(format!("{standing}; spectrum rank {} against {name}'s {first_rank}{stack}", mine.spectrum_rank));
    }
}

/// Files ranked by the spectrum alone (each with all its evidence): LocSeq's ranking.
fn rank_by_spectrum(
    evidence: &Evidence,
    sites: &Sites,
    formula: Formula,
    aggregate: Aggregate,
    direct: &DirectEvidence,
) -> Vec<FileRank> {
    let scores = evidence.scores(formula);
    let only = evidence.failure_specific(0.0);
    let specific = evidence.failure_specific(FAILURE_SPECIFIC);
    let mut per_element: Vec<(u32, f64)> = Vec::new();
    // Per file: failure-only and failure-specific elements.
    let mut counts: HashMap<u32, (usize, usize)> = HashMap::new();
    for (i, (&e, &s)) in evidence.elements.iter().zip(&scores).enumerate() {
        let Some(f) = sites.file(e) else { continue };
        per_element.push((f, s));
        let (o, sp) = counts.entry(f).or_default();
        *o += usize::from(only[i]);
        *sp += usize::from(specific[i]);
    }
    let depth_of = |file: u32| direct.stack.iter().find(|&&(f, _)| f == file).map(|&(_, d)| d);
    let mut ranked = sbfl::rank_files(&per_element, aggregate);
    if !direct.stack.is_empty() {
        for r in &mut ranked {
            r.score += depth_of(r.file).map_or(0.0, |d| 1.0 / (1.0 + d as f64));
        }
        ranked = sbfl::sorted_with_ranks(ranked);
    }
    ranked
        .into_iter()
        .map(|r| {
            let (failure_only, failure_specific) = counts.get(&r.file).copied().unwrap_or_default();
            FileRank {
                rank: r.rank,
                evidence: FileEvidence {
                    placed: Placed::Spectrum,
                    culprit: direct.culprit_files.contains(&r.file),
                    stack_depth: depth_of(r.file),
                    failure_only,
                    failure_specific,
                    spectrum_rank: r.rank,
                    against_first: None,
                },
                path: sites.attribution.files[r.file as usize].clone(),
                score: r.score,
                elements: r.elements,
                top_functions: Vec::new(),
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
        let direct = DirectEvidence::new(Vec::new(), &stack, &sites, &failing);
        assert_eq!(direct.stack, vec![(0, 0), (1, 1)]);
        assert_eq!(direct.stack_functions, vec![(1, 0), (2, 1), (0, 2)]);
    }

    /// Files named `paths`, file i with `sizes[i]` elements (numbered in file order), the
    /// failing run covering them all, one bug-free run per entry of `passing`; file 0 is
    /// the culprit's.
    fn ranked(paths: &[&str], sizes: &[usize], passing: &[&[u32]]) -> Vec<FileRank> {
        ranked_with_stack(paths, sizes, passing, Vec::new())
    }

    /// As [`ranked`], with (file, depth) of a failure's stack.
    fn ranked_with_stack(
        paths: &[&str],
        sizes: &[usize],
        passing: &[&[u32]],
        stack: Vec<(u32, usize)>,
    ) -> Vec<FileRank> {
        ranked_as(paths, sizes, passing, stack, true)
    }

    /// As [`ranked_with_stack`], for a failure that is wrong output or not.
    fn ranked_as(
        paths: &[&str],
        sizes: &[usize],
        passing: &[&[u32]],
        stack: Vec<(u32, usize)>,
        wrong_output: bool,
    ) -> Vec<FileRank> {
        let owners: Vec<Option<u32>> =
            sizes.iter().enumerate().flat_map(|(f, &n)| std::iter::repeat_n(Some(f as u32), n)).collect();
        let mut sites = Sites::synthetic(&owners);
        sites.attribution.files = paths.iter().map(|p| p.to_string()).collect();
        let sites: &'static Sites = Box::leak(Box::new(sites));
        let failing = Spectrum::from_elements((0..owners.len() as u32).collect(), sites);
        let mut evidence = Evidence::new(&failing);
        for p in passing {
            evidence.add_passing(&Spectrum::from_elements(p.to_vec(), sites));
        }
        let direct = DirectEvidence { culprit_files: vec![0], stack, wrong_output, ..DirectEvidence::default() };
        rank(&evidence, sites, Formula::Ochiai, Aggregate::Sum, &direct)
    }

    /// Files 0 (the culprit's, 2 elements), 1 (3 elements) and 2 (3 elements).
    fn ranked_with_passing(passing: &[&[u32]]) -> Vec<FileRank> {
        ranked(&["file0.cpp", "file1.cpp", "file2.cpp"], &[2, 3, 3], passing)
    }

    fn order(ranking: &[FileRank]) -> Vec<&str> {
        ranking.iter().map(|f| f.path.as_str()).collect()
    }

    #[test]
    fn the_culprits_files_rank_first_when_they_hold_failure_only_code() {
        // Element 1 of the culprit's file ran in a bug-free run, element 0 in none.
        let ranking = ranked_with_passing(&[&[1, 7], &[1]]);
        assert_eq!(order(&ranking), ["file0.cpp", "file1.cpp", "file2.cpp"]);
        assert_eq!(ranking.iter().map(|f| f.rank).collect::<Vec<_>>(), [1, 2, 3]);
        let culprit = &ranking[0].evidence;
        assert_eq!((culprit.placed, culprit.culprit, culprit.failure_only), (Placed::Culprit, true, 1));
        // By the spectrum alone it would be last.
        assert_eq!(culprit.spectrum_rank, 3);
        assert_eq!(culprit.describe(), "culprit, 1 failure-specific (1 failure-only)");
        assert_eq!(ranking[1].evidence.placed, Placed::Spectrum);
        // The next file says what it has against the first.
        let against = ranking[1].evidence.against_first.as_deref().unwrap();
        assert!(against.contains("more failure-specific code than file0.cpp (3 against 1)"), "{against}");
        assert!(against.ends_with("spectrum rank 1 against file0.cpp's 3"), "{against}");
    }

    #[test]
    fn a_culprit_without_failure_specific_code_stays_first_unless_another_file_stands_out_for_wrong_output() {
        // Every element of the culprit's file ran in a bug-free run; files 1 and 2 score
        // alike: no reason to pass over the first suspect.
        let ranking = ranked_with_passing(&[&[0, 1, 7], &[1]]);
        assert_eq!(order(&ranking), ["file0.cpp", "file1.cpp", "file2.cpp"]);
        assert_eq!(ranking[0].evidence.placed, Placed::Culprit);
        assert_eq!(
            ranking[0].evidence.describe(),
            "culprit (no failure-specific code, and no other file's evidence outweighs it)"
        );
        // File 1's three elements ran in no bug-free run, file 2's in all nine: file 1
        // stands out (3 against 3/sqrt(10) = 0.95), and for wrong output the spectrum ranks.
        let passing = [&[0, 1, 5, 6, 7][..]; 9];
        let ranking = ranked_with_passing(&passing);
        assert_eq!(order(&ranking)[0], "file1.cpp");
        assert!(ranking.iter().all(|f| f.evidence.placed == Placed::Spectrum && f.rank == f.evidence.spectrum_rank));
        assert_eq!(ranking[2].evidence.describe(), "spectrum (a culprit file without failure-specific code)");
        // Broken IR or a crash is the culprit's own doing: its file stays first.
        let paths = ["file0.cpp", "file1.cpp", "file2.cpp"];
        let ranking = ranked_as(&paths, &[2, 3, 3], &passing, Vec::new(), false);
        assert_eq!((ranking[0].path.as_str(), ranking[0].evidence.placed), ("file0.cpp", Placed::Culprit));
    }

    #[test]
    fn a_few_coincidentally_correct_witnesses_do_not_outweigh_the_culprit() {
        // 40 bug-free runs cover the culprit's element 1, and 2 of them (5%) its element 0 too.
        let mut passing: Vec<&[u32]> = vec![&[1, 7]; 38];
        passing.extend([&[0, 1, 7][..], &[0, 1]]);
        let ranking = ranked_with_passing(&passing);
        assert_eq!(ranking[0].path, "file0.cpp");
        assert_eq!((ranking[0].evidence.failure_only, ranking[0].evidence.failure_specific), (0, 1));
        // One more would be more than one in twenty: none of its code is failure-specific.
        passing.push(&[0]);
        assert_eq!(ranked_with_passing(&passing)[0].evidence.failure_specific, 0);
    }

    #[test]
    fn a_transform_helper_with_three_times_the_culprits_failure_specific_code_ranks_with_it() {
        let paths =
            ["llvm/lib/Transforms/Scalar/Pass.cpp", "llvm/lib/Transforms/Utils/Helper.cpp", "llvm/lib/Analysis/A.cpp"];
        // The culprit: 1 failure-specific element of 2; the helper 4 of 4; the analysis 3
        // of 3, but it is no transform file.
        let ranking = ranked(&paths, &[2, 4, 3], &[&[1]]);
        let placed: Vec<Placed> = ranking.iter().map(|f| f.evidence.placed).collect();
        assert_eq!(order(&ranking), [paths[1], paths[0], paths[2]]);
        assert_eq!(placed, [Placed::Helper, Placed::Culprit, Placed::Spectrum]);
        // With two failure-specific elements the pass's own code is not dwarfed.
        let ranking = ranked(&paths, &[2, 4, 3], &[&[8]]);
        assert_eq!(order(&ranking), [paths[0], paths[1], paths[2]]);
        assert_eq!(ranking[1].evidence.placed, Placed::Spectrum);
    }

    #[test]
    fn the_innermost_pass_file_on_the_stack_ranks_ahead_of_a_culprit_without_failure_specific_code() {
        let paths = [
            "llvm/lib/Transforms/Scalar/Pass.cpp",
            "llvm/lib/Transforms/Utils/Utils.cpp",
            "llvm/lib/IR/Value.cpp",
            "llvm/lib/Analysis/A.cpp",
        ];
        // The culprit's and the utility's code ran in a bug-free run; Value.cpp's and the
        // analysis's did not. The run stopped in Value.cpp, called by the utility, called
        // by the pass.
        let passing: &[&[u32]] = &[&[0, 1, 2, 3]];
        let stack = vec![(2, 0), (1, 2), (0, 3)];
        let ranking = ranked_with_stack(&paths, &[2, 2, 2, 2], passing, stack);
        assert_eq!(order(&ranking), [paths[1], paths[0], paths[3], paths[2]]);
        assert_eq!(ranking[0].evidence.placed, Placed::Stack);
        assert_eq!(ranking[1].evidence.placed, Placed::Culprit);
        let against = ranking[2].evidence.against_first.as_deref().unwrap();
        assert!(
            against.starts_with("2 failure-specific elements, but the run stopped in Utils.cpp's code"),
            "{against}"
        );
        // Without the stack the culprit's files stay first (no other file stands out).
        assert_eq!(order(&ranked(&paths, &[2, 2, 2, 2], passing))[0], paths[0]);
        // When the stack reaches the culprit's code first, the culprit's files stay first.
        let ranking = ranked_with_stack(&paths, &[2, 2, 2, 2], passing, vec![(0, 0), (1, 1)]);
        assert_eq!((ranking[0].path.as_str(), ranking[0].evidence.placed), (paths[0], Placed::Culprit));
        // When the culprit's code holds failure-specific code, the stack does not pass over it.
        let ranking = ranked_with_stack(&paths, &[2, 2, 2, 2], &[&[1, 2, 3]], vec![(1, 0), (0, 1)]);
        assert_eq!((ranking[0].path.as_str(), ranking[0].evidence.placed), (paths[0], Placed::Culprit));
        assert!(ranking.iter().all(|f| f.evidence.placed != Placed::Stack));
    }

    #[test]
    fn ir_core_and_support_files_rank_after_every_other_file() {
        let paths = ["llvm/lib/Transforms/Scalar/Pass.cpp", "llvm/lib/IR/Value.cpp", "llvm/lib/Analysis/A.cpp"];
        // Value.cpp's three elements ran in no bug-free run, one of the culprit's and one of
        // the analysis's did.
        let ranking = ranked(&paths, &[2, 3, 2], &[&[1, 5]]);
        assert_eq!(order(&ranking), [paths[0], paths[2], paths[1]]);
        assert_eq!(ranking[2].evidence.placed, Placed::Core);
        assert_eq!(ranking[2].evidence.spectrum_rank, 1);
        let against = ranking[2].evidence.against_first.as_deref().unwrap();
        assert!(against.starts_with("IR core or support code"), "{against}");
    }

    #[test]
    fn a_pass_owns_the_files_that_define_its_classes_members() {
        let owned = |name: &str, stem: &str| qualified_by(name, stem);
        assert!(owned("llvm::InstCombinerImpl::visitSelectInst(llvm::SelectInst&)", "InstCombine"));
        assert!(owned(
            "llvm::InstCombinePass::run(llvm::Function&, llvm::AnalysisManager<llvm::Function>&)",
            "InstCombine"
        ));
        assert!(owned("llvm::slpvectorizer::BoUpSLP::buildTree(llvm::ArrayRef<llvm::Value*>)", "SLPVectorizer"));
        assert!(owned(
            "(anonymous namespace)::CodeGenPrepare::optimizeInst(llvm::Instruction*, bool&)",
            "CodeGenPrepare"
        ));
        // Template arguments and parameters name no owner; a free function has none.
        assert!(!owned("llvm::DenseMap<llvm::InstCombinerImpl*, int>::find(llvm::InstCombinerImpl*)", "InstCombine"));
        assert!(!owned("llvm::simplifyInstruction(llvm::Instruction*, llvm::InstCombinerImpl const&)", "InstCombine"));
        assert!(!owned("foldSelectICmp(llvm::InstCombinerImpl&)", "InstCombine"));
    }

    #[test]
    fn a_return_address_right_after_a_function_belongs_to_it() {
        let sites = sites();
        let failing = Spectrum::from_elements(vec![0, 2], &sites);
        // 0x1100 is one past f0's end: as a return address it is a call at f0's last byte.
        assert_eq!(DirectEvidence::new(Vec::new(), &[0x3000, 0x1100], &sites, &failing).stack, vec![(1, 0), (0, 1)]);
    }
}
