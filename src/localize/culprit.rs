//! The culprit pass: the pass of the reduced sequence after which the failure first
//! appears. It is what an engineer looks for first, and what focused traces record.

use anyhow::Result;
use serde::Serialize;

use super::runner::Runner;
use crate::llvm::VerifyEach;
use crate::oracle::pass_runs::{first_failing_run, LimitedRun};
use crate::oracle::{FailureKind, Oracle, Verdict};
use crate::sandbox::{Focus, JobSpec, Outcome, PassRun};
use crate::seq::Sequence;

/// Past this many passes the prefixes are bisected instead of all run.
const ALL_PREFIXES_UP_TO: usize = 24;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CulpritMethod {
    /// The optimizer failed (crash, fatal error, hang) while this pass ran.
    FailedIn,
    /// With verification after every pass, the first broken IR comes after this one.
    VerifyEach,
    /// The shortest prefix of the sequence that fails the same way ends with it.
    Prefixes,
    /// Counting the runs of passes inside the pipeline as `-opt-bisect-limit` does, the
    /// failure first shows after a run of it: where passes share an adaptor the failure
    /// needs, or run inside a whole pipeline (`default<O2>`).
    PassRuns,
}

#[derive(Debug, Clone, Serialize)]
pub struct Culprit {
    /// As the reduced sequence writes it (`instcombine<max-iterations=1>`).
    pub pass: String,
    /// Its pipeline name without parameters (`instcombine`).
    pub name: String,
    /// 1-based position in the reduced sequence.
    pub position: usize,
    pub passes: usize,
    pub method: CulpritMethod,
    /// LLVM's class name of the pass (`InstCombinePass`), when it was seen running.
    pub class: Option<String>,
    /// A pipeline of the reduced sequence that fails the same way: one adaptor per pass
    /// (top-level element i is pass i + 1), or as written when its passes need their
    /// adaptors.
    pub pipeline: String,
    /// The top-level element of `pipeline` the culprit runs in (0-based).
    pub element: usize,
    /// Its run, among the pipeline's runs of passes that may be skipped, after which the
    /// failure first shows (method `pass-runs`).
    pub run: Option<u32>,
}

impl Culprit {
    /// Recording coverage of the culprit's run in its failing pipeline only.
    pub fn focus_here(&self) -> Focus {
        Focus { pass: self.name.clone(), element: Some(self.element) }
    }

    /// Recording coverage of every run of the culprit's pass, in any pipeline.
    pub fn focus_anywhere(&self) -> Focus {
        Focus { pass: self.name.clone(), element: None }
    }
}

impl std::fmt::Display for Culprit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (pass {} of {}", self.pass, self.position, self.passes)?;
        match self.run {
            Some(run) => write!(f, "; run {run} of the pipeline's passes)"),
            None => write!(f, ")"),
        }
    }
}

/// Names of whole pipelines: a culprit found as one of them is refined inside it.
const PIPELINES: &[&str] = &["default", "thinlto-pre-link", "thinlto", "lto-pre-link", "lto", "fatlto-pre-link"];

/// The culprit of `reduced`, which fails as `oracle` expects; `Ok(Err(why))` when none can
/// be named.
pub(super) fn find_culprit(
    runner: &mut Runner,
    oracle: &Oracle,
    reduced: &Sequence,
) -> Result<std::result::Result<Culprit, String>> {
    let passes = reduced.passes();
    let n = passes.len();
    let pipeline = runner.per_pass_text(reduced)?;
    let found = |position: usize, method| Culprit {
        pass: passes[position - 1].to_string(),
        name: passes[position - 1].name.clone(),
        position,
        passes: n,
        method,
        class: None,
        pipeline: pipeline.clone(),
        element: position - 1,
        run: None,
    };
    let run = runner.run(&pipeline, false)?;
    let mut culprit = if oracle.judge(&run, &pipeline)? != Verdict::Same {
        // The failure needs passes together in one adaptor: count the runs inside it.
        let written = runner.text(reduced)?;
        match counted_culprit(runner, oracle, reduced, &written)? {
            Some(c) => c,
            None => {
                return Ok(Err("with one adaptor per pass the sequence no longer fails the same way, \
                                   and counting its passes' runs finds none after which it fails"
                    .into()))
            }
        }
    } else if let Some(element) = run.failed_in_element.filter(|&e| e < n) {
        // The oracle verifies after every pass that changes broken-IR bugs' IR: such a run
        // already stops right after the culprit.
        let method =
            if run.outcome == Outcome::InvalidIr { CulpritMethod::VerifyEach } else { CulpritMethod::FailedIn };
        found(element + 1, method)
    } else if let Some(position) = first_broken_by(runner, oracle, &pipeline, n)? {
        found(position, CulpritMethod::VerifyEach)
    } else {
        found(first_failing_prefix(runner, oracle, reduced, n)?, CulpritMethod::Prefixes)
    };
    // A whole pipeline (`default<O2>`) is no pass to blame: the run inside it is.
    if PIPELINES.contains(&culprit.name.as_str()) {
        if let Some(inner) = counted_culprit(runner, oracle, reduced, &pipeline)? {
            culprit = inner;
        }
    }
    // The class name ties the pass to its code (the `run` method's file).
    let job = JobSpec { focus: Some(culprit.focus_here()), ..JobSpec::optimize(&culprit.pipeline) };
    culprit.class = runner.run_all(vec![job])?.pop().and_then(|r| r.focus_class);
    Ok(Ok(culprit))
}

/// The run of a pass in `pipeline` (a rendering of `reduced`) after which the failure
/// first shows, counting the runs of passes that may be skipped as `-opt-bisect-limit`
/// does: doubling the limit until the failure shows, then bisecting. None when no limit
/// below the pipeline's own count of runs shows it.
fn counted_culprit(
    runner: &mut Runner,
    oracle: &Oracle,
    reduced: &Sequence,
    pipeline: &str,
) -> Result<Option<Culprit>> {
    let attempt = |limit: u32| -> Result<LimitedRun> {
        let job = JobSpec { pass_runs: Some(limit), ..runner.job(pipeline) };
        let run = runner.run_all(vec![job])?.pop().expect("one run");
        LimitedRun::judged(run, oracle, pipeline)
    };
    let nth = first_failing_run(attempt)?;
    let Some(run) = nth else { return Ok(None) };
    Ok(Some(culprit_of_run(runner, reduced, pipeline, run)?))
}

/// The culprit for pass run `run` of `pipeline`: the pass of `reduced` it is, or the
/// pipeline (`default<O2>`) it ran inside.
fn culprit_of_run(runner: &Runner, reduced: &Sequence, pipeline: &str, run: PassRun) -> Result<Culprit> {
    let passes = reduced.passes();
    // Top-level element e holds a contiguous stretch of the passes, in order.
    let mut start = 0;
    for element in crate::seq::top_level_elements(pipeline).iter().take(run.element) {
        start += Sequence::parse(element, runner.catalog).map_or(1, |s| s.len());
    }
    let stretch = crate::seq::top_level_elements(pipeline)
        .get(run.element)
        .and_then(|e| Sequence::parse(e, runner.catalog).ok())
        .map_or(1, |s| s.len());
    let end = (start + stretch).min(passes.len());
    let index = (start..end).find(|&i| passes[i].name == run.name).unwrap_or(start.min(passes.len() - 1));
    let written = passes[index];
    Ok(Culprit {
        pass: if written.name == run.name { written.to_string() } else { run.name.clone() },
        name: run.name,
        position: index + 1,
        passes: passes.len(),
        method: CulpritMethod::PassRuns,
        class: None,
        pipeline: pipeline.to_string(),
        element: run.element,
        run: Some(run.index),
    })
}

/// For broken-IR failures: the pass after which the verifier first objects, verifying
/// after every pass in one run.
fn first_broken_by(runner: &mut Runner, oracle: &Oracle, pipeline: &str, n: usize) -> Result<Option<usize>> {
    if oracle.expected.kind != FailureKind::InvalidIr || oracle.script.is_some() {
        return Ok(None);
    }
    let job = JobSpec { verify_each: VerifyEach::Every, ..runner.job(pipeline) };
    let run = runner.run_all(vec![job])?.pop().expect("one run");
    Ok(match (run.outcome, run.failed_in_element) {
        (Outcome::InvalidIr, Some(e)) if e < n => Some(e + 1),
        _ => None,
    })
}

/// The length of the shortest prefix that fails the same way (`n` when only the whole
/// sequence does): all prefixes for short sequences, bisection for long ones.
fn first_failing_prefix(runner: &mut Runner, oracle: &Oracle, reduced: &Sequence, n: usize) -> Result<usize> {
    let prefix = |k: usize| reduced.retain_passes(|i| i < k);
    if n <= ALL_PREFIXES_UP_TO {
        let texts: Vec<String> = (1..n).map(|k| runner.per_pass_text(&prefix(k))).collect::<Result<_>>()?;
        let jobs = texts.iter().map(|t| runner.job(t)).collect();
        let runs = runner.run_all(jobs)?;
        for (k, (run, text)) in runs.iter().zip(&texts).enumerate() {
            if oracle.judge(run, text)? == Verdict::Same {
                return Ok(k + 1);
            }
        }
        return Ok(n);
    }
    // The empty prefix is clean and the whole sequence fails: keep one of each at the ends.
    let (mut clean, mut failing) = (0, n);
    while failing - clean > 1 {
        let mid = (clean + failing) / 2;
        let text = runner.per_pass_text(&prefix(mid))?;
        let run = runner.run(&text, false)?;
        if oracle.judge(&run, &text)? == Verdict::Same {
            failing = mid;
        } else {
            clean = mid;
        }
    }
    Ok(failing)
}
