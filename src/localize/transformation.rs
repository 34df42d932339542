//! The transformation: inside the culprit's run, the one step of one of LLVM's debug
//! counters (`-debug-counter=instcombine-visit=0-41`: an instruction InstCombine visits, a
//! tree SLP vectorizes, a condition ConstraintElimination removes) after which the failure
//! first shows. An engineer bisects the counter by hand after `-opt-bisect-limit` named the
//! pass run; this does it the same way, and keeps what the step changed.
//!
//! Counters count across the whole process, so each limit is the counter's steps before the
//! culprit's run plus a number of steps inside it; the runs before the culprit's run all
//! their steps. LLVM 19's release build has no counters; neither does a pass without any.

use std::time::Instant;

use anyhow::Result;
use serde::Serialize;

use super::culprit::Culprit;
use super::runner::Runner;
use crate::oracle::pass_runs::{first_failing_limit, Attempt};
use crate::oracle::{Oracle, Verdict};
use crate::sandbox::{ExecMode, Focus, JobSpec};

/// Past this many lines of optimized IR, what a step changed is not worked out.
const DIFF_LINES: usize = 20_000;
/// Lines of each side of a change kept for the report.
const SHOWN: usize = 8;

#[derive(Debug, Clone, Serialize)]
pub struct Transformation {
    /// The debug counter (`instcombine-visit`).
    pub counter: String,
    /// The step inside the culprit's run, from 0: the failure shows once steps 0..=step run.
    pub step: u64,
    /// The counter's steps in the runs before the culprit's.
    pub before: u64,
    /// The culprit's run's steps of the counter, when that run ends (not for crashes).
    pub steps: Option<u64>,
    /// The culprit's pipeline, cut after its run: `-passes`, and `-opt-bisect-limit` when
    /// the culprit was found by counting runs.
    pub pipeline: String,
    pub pass_runs: Option<u32>,
    /// `-debug-counter=…` that lets exactly the steps up to this one run.
    pub llvm_arg: String,
    /// The function whose IR the step changed, and its lines before and after the step
    /// (at most a few of each; empty when the run with the step ends without IR).
    pub function: Option<String>,
    pub removed: Vec<String>,
    pub added: Vec<String>,
    /// Other counters of the run whose steps the failure also needs.
    pub also: Vec<String>,
    /// The functions whose code the step's run ran and the run one step short did not,
    /// with how many of their elements, most first (filled in once coverage is recorded).
    pub code: Vec<(String, usize)>,
    pub evaluations: usize,
    pub seconds: f64,
}

impl std::fmt::Display for Transformation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "step {} of {}", self.step, self.counter)?;
        if let Some(n) = self.steps {
            write!(f, " (of {n} in the culprit's run)")?;
        }
        if let Some(function) = &self.function {
            write!(f, ", in @{function}")?;
        }
        Ok(())
    }
}

impl Transformation {
    /// The `opt` options that stop right after the step (the pipeline quoted for a shell).
    pub fn reproduce(&self) -> String {
        let limit = self.pass_runs.map(|n| format!(" -opt-bisect-limit={n}")).unwrap_or_default();
        format!("-passes='{}'{limit} {}", self.pipeline, self.llvm_arg)
    }

    /// The failing pipeline one step short of the failure, and its LLVM option: a run that
    /// differs from the failing one by this transformation (and what it set off).
    pub fn one_short(&self) -> (String, Vec<String>) {
        (self.pipeline.clone(), vec![limit(&self.counter, self.before, self.step)])
    }

    /// The functions the step ran, as a line (`visitShl (12), simplifyShift (3)`).
    pub fn code_line(&self) -> Option<String> {
        let names: Vec<String> = self.code.iter().map(|(name, n)| format!("{name} ({n})")).collect();
        (!names.is_empty()).then(|| names.join(", "))
    }

    /// What the step changed, as a diff's lines.
    pub fn change(&self) -> Vec<String> {
        let removed = self.removed.iter().map(|l| format!("- {l}"));
        removed.chain(self.added.iter().map(|l| format!("+ {l}"))).collect()
    }
}

/// The traces of the run that stops right after the step and of the one a step short of
/// it, `focus`ed as the failing trace is: what differs is the code of that one
/// transformation and what it set off. None when either run ends differently than it did
/// when the step was found, or records no trace.
pub(super) fn step_traces(
    runner: &mut Runner,
    oracle: &Oracle,
    t: &Transformation,
    focus: Option<Focus>,
) -> Result<Option<(Vec<u32>, Vec<u32>)>> {
    let job = |arg: String| JobSpec {
        observe: true,
        focus: focus.clone(),
        pass_runs: t.pass_runs,
        llvm_args: vec![arg],
        ..runner.job(&t.pipeline)
    };
    let (_, short) = t.one_short();
    let runs = runner.run_all(vec![job(t.llvm_arg.clone()), job(short[0].clone())])?;
    let fails = oracle.judge(&runs[0], &t.pipeline)? == Verdict::Same;
    let passes = oracle.judge(&runs[1], &t.pipeline)? == Verdict::Passes;
    let mut traces = runs.into_iter().map(|r| r.trace.filter(|t| !t.is_empty()));
    Ok(match (fails && passes, traces.next().flatten(), traces.next().flatten()) {
        (true, Some(with), Some(without)) => Some((with, without)),
        _ => None,
    })
}

/// The limit that lets `steps` steps of the culprit's run, after `before` outside it, run.
fn limit(counter: &str, before: u64, steps: u64) -> String {
    match before + steps {
        // Counting never reaches it: no step runs.
        0 => format!("-debug-counter={counter}=9000000000000000000"),
        1 => format!("-debug-counter={counter}=0"),
        n => format!("-debug-counter={counter}=0-{}", n - 1),
    }
}

/// The culprit's pipeline cut after its run, as jobs: the run that fails, and the one that
/// stops before the culprit's run.
fn cut_jobs(runner: &Runner, culprit: &Culprit) -> (JobSpec, JobSpec, Option<u32>) {
    match culprit.run {
        Some(run) => {
            let failing = JobSpec { pass_runs: Some(run), ..runner.job(&culprit.pipeline) };
            let before = match run {
                1 => runner.job(""),
                _ => JobSpec { pass_runs: Some(run - 1), ..runner.job(&culprit.pipeline) },
            };
            (failing, before, Some(run))
        }
        None => {
            let elements = crate::seq::top_level_elements(&culprit.pipeline);
            let upto = elements.len().min(culprit.element + 1);
            let failing = runner.job(&elements[..upto].join(","));
            let before = runner.job(&elements[..upto.saturating_sub(1)].join(","));
            (failing, before, None)
        }
    }
}

/// The step of a debug counter in the culprit's run after which the failure first shows;
/// `Ok(Err(why))` when none can be named.
pub(super) fn find_transformation(
    runner: &mut Runner,
    oracle: &Oracle,
    culprit: &Culprit,
) -> Result<std::result::Result<Transformation, String>> {
    let started = Instant::now();
    let tests = runner.tests;
    let (failing, before_job, pass_runs) = cut_jobs(runner, culprit);
    let counting = |job: &JobSpec, exec| JobSpec { count_steps: true, exec, ..job.clone() };
    let runs = runner.run_all(vec![counting(&before_job, ExecMode::Never), counting(&failing, failing.exec)])?;
    let (before, after) = (&runs[0].step_counts, &runs[1].step_counts);
    let Some(before) = before.as_ref().filter(|c| !c.is_empty()) else {
        return Ok(Err("this LLVM's debug counters cannot be read (LLVM 19's release build has none; \
                       an --opt build runs in a process of its own)"
            .into()));
    };
    if oracle.judge(&runs[1], &failing.pipeline)? != Verdict::Same {
        return Ok(Err(format!("`{}` cut after the culprit's run no longer fails the same way", failing.pipeline)));
    }
    // The counters the culprit's run counted; all of them when the run ended in a crash.
    let candidates: Vec<(String, u64, Option<u64>)> = match after {
        Some(after) => before
            .iter()
            .filter_map(|(c, &b)| Some((c.clone(), b, Some(after.get(c)?.checked_sub(b).filter(|&n| n > 0)?))))
            .collect(),
        None => before.iter().map(|(c, &b)| (c.clone(), b, None)).collect(),
    };
    if candidates.is_empty() {
        return Ok(Err(format!("{} counts no step of any debug counter on this program", culprit.name)));
    }
    let limited = |c: &str, b: u64, n: u64| JobSpec { llvm_args: vec![limit(c, b, n)], ..failing.clone() };
    let stopped = runner.run_all(candidates.iter().map(|(c, b, _)| limited(c, *b, 0)).collect())?;
    let mut controlling = Vec::new();
    for (candidate, run) in candidates.iter().zip(&stopped) {
        if !matches!(oracle.judge(run, &failing.pipeline)?, Verdict::Same | Verdict::Rejected) {
            controlling.push(candidate.clone());
        }
    }
    // The counter with the fewest steps names the most focused transformation.
    controlling.sort_by_key(|(_, _, steps)| steps.unwrap_or(u64::MAX));
    let names: Vec<String> = controlling.iter().map(|(c, ..)| c.clone()).collect();
    for (counter, b, steps) in &controlling {
        let found = first_failing_limit(|n| {
            let run = runner.run_all(vec![limited(counter, *b, n)])?.pop().expect("one run");
            let fails = oracle.judge(&run, &failing.pipeline)? == Verdict::Same;
            Ok(Attempt { fails, all: steps.is_some_and(|m| n >= m), kept: () })
        })?;
        let Some((n, ())) = found else { continue };
        let step = n - 1;
        let shown = |n| JobSpec { emit_ir: true, exec: ExecMode::Never, ..limited(counter, *b, n) };
        let ir = runner.run_all(vec![shown(step), shown(n)])?;
        let change = ir[0].ir.as_deref().zip(ir[1].ir.as_deref()).and_then(|(a, b)| changed_lines(a, b));
        return Ok(Ok(Transformation {
            counter: counter.clone(),
            step,
            before: *b,
            steps: *steps,
            pipeline: failing.pipeline.clone(),
            pass_runs,
            llvm_arg: limit(counter, *b, n),
            function: change.as_ref().and_then(|c| c.0.clone()),
            removed: change.as_ref().map(|c| c.1.clone()).unwrap_or_default(),
            added: change.map(|c| c.2).unwrap_or_default(),
            also: names.iter().filter(|c| *c != counter).cloned().collect(),
            code: Vec::new(),
            evaluations: runner.tests - tests,
            seconds: started.elapsed().as_secs_f64(),
        }));
    }
    Ok(Err(match names.is_empty() {
        true => format!(
            "with the steps of each debug counter {} counts stopped in turn ({}), it still fails the same way",
            culprit.name,
            candidates.iter().map(|(c, ..)| c.as_str()).collect::<Vec<_>>().join(", ")
        ),
        false => format!("stopping {} stops the failure, but no number of its steps brings it back", names.join(", ")),
    }))
}

/// The function the step changed and its lines without and with the step: the optimized
/// IR of the two runs, compared with value numbers left out (a removed instruction
/// renumbers every later one).
fn changed_lines(without: &str, with: &str) -> Option<(Option<String>, Vec<String>, Vec<String>)> {
    let (a, b): (Vec<&str>, Vec<&str>) = (without.lines().collect(), with.lines().collect());
    if a.len().max(b.len()) > DIFF_LINES {
        return None;
    }
    let number = regex::Regex::new(r"%[0-9]+\b").expect("valid");
    let plain = |lines: &[&str]| lines.iter().map(|l| format!("{}\n", number.replace_all(l, "%_"))).collect::<String>();
    let (pa, pb) = (plain(&a), plain(&b));
    let diff = similar::TextDiff::from_lines(&pa, &pb);
    let (mut removed, mut added, mut function) = (Vec::new(), Vec::new(), None);
    for op in diff.ops() {
        let (old, new) = (op.old_range(), op.new_range());
        if matches!(op.tag(), similar::DiffTag::Equal) {
            continue;
        }
        function = function.or_else(|| enclosing_function(&a[..old.start]));
        removed.extend(a[old].iter().map(|l| l.trim().to_string()));
        added.extend(b[new].iter().map(|l| l.trim().to_string()));
    }
    if removed.is_empty() && added.is_empty() {
        return None;
    }
    removed.truncate(SHOWN);
    added.truncate(SHOWN);
    Some((function, removed, added))
}

/// The name of the function a line at the end of `lines` is inside.
fn enclosing_function(lines: &[&str]) -> Option<String> {
    let define = lines.iter().rev().take_while(|l| !l.starts_with('}')).find(|l| l.starts_with("define "))?;
    let name = define.split_once('@')?.1;
    Some(name.split(['(', ' ']).next()?.trim_matches('"').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_let_the_steps_before_the_run_and_the_given_ones_inside_it_run() {
        assert_eq!(limit("early-cse", 0, 0), "-debug-counter=early-cse=9000000000000000000");
        assert_eq!(limit("early-cse", 0, 1), "-debug-counter=early-cse=0");
        assert_eq!(limit("early-cse", 5, 0), "-debug-counter=early-cse=0-4");
        assert_eq!(limit("instcombine-visit", 5, 3), "-debug-counter=instcombine-visit=0-7");
    }

    #[test]
    fn the_change_is_found_in_its_function_whatever_the_renumbering() {
        let without = "define i32 @f(i32 %x) {\n  %1 = mul i32 %x, 2\n  %2 = add i32 %1, 1\n  ret i32 %2\n}\n\
                       define i32 @g() {\n  ret i32 0\n}\n";
        let with = "define i32 @f(i32 %x) {\n  %1 = shl i32 %x, 1\n  %2 = add i32 %1, 1\n  ret i32 %2\n}\n\
                    define i32 @g() {\n  ret i32 0\n}\n";
        let (function, removed, added) = changed_lines(without, with).unwrap();
        assert_eq!(function.as_deref(), Some("f"));
        assert_eq!((removed, added), (vec!["%1 = mul i32 %x, 2".to_string()], vec!["%1 = shl i32 %x, 1".to_string()]));
        assert!(changed_lines(without, without).is_none());
    }
}
