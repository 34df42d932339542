//! The culprit pass: the pass of the reduced sequence after which the failure first
//! appears. It is what an engineer looks for first, and what focused traces record.

use anyhow::Result;
use serde::Serialize;

use super::runner::Runner;
use crate::llvm::VerifyEach;
use crate::oracle::{FailureKind, Oracle, Verdict};
use crate::sandbox::{Focus, JobSpec, Outcome};
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
    /// The reduced sequence with one adaptor per pass (top-level element i is pass i + 1),
    /// which fails the same way.
    pub pipeline: String,
}

impl Culprit {
    /// Recording coverage of the culprit's run in its failing pipeline only.
    pub fn focus_here(&self) -> Focus {
        Focus { pass: self.name.clone(), element: Some(self.position - 1) }
    }

    /// Recording coverage of every run of the culprit's pass, in any pipeline.
    pub fn focus_anywhere(&self) -> Focus {
        Focus { pass: self.name.clone(), element: None }
    }
}

impl std::fmt::Display for Culprit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (pass {} of {})", self.pass, self.position, self.passes)
    }
}

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
    };
    let run = runner.run(&pipeline, false)?;
    if oracle.judge(&run, &pipeline)? != Verdict::Same {
        return Ok(Err("with one adaptor per pass the sequence no longer fails the same way".into()));
    }
    // The oracle verifies after every pass that changes broken-IR bugs' IR: such a run
    // already stops right after the culprit.
    let mut culprit = if let Some(element) = run.failed_in_element.filter(|&e| e < n) {
        let method =
            if run.outcome == Outcome::InvalidIr { CulpritMethod::VerifyEach } else { CulpritMethod::FailedIn };
        found(element + 1, method)
    } else if let Some(position) = first_broken_by(runner, oracle, &pipeline, n)? {
        found(position, CulpritMethod::VerifyEach)
    } else {
        found(first_failing_prefix(runner, oracle, reduced, n)?, CulpritMethod::Prefixes)
    };
    // The class name ties the pass to its code (the `run` method's file).
    let job = JobSpec { focus: Some(culprit.focus_here()), ..JobSpec::optimize(&pipeline) };
    culprit.class = runner.run_all(vec![job])?.pop().and_then(|r| r.focus_class);
    Ok(Ok(culprit))
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
