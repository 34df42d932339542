//! The run of a pass after which a failure first shows, counting the runs of passes that
//! may be skipped as `opt -opt-bisect-limit=N` does: what LLVM's developers bisect with.

use anyhow::Result;

use super::{Oracle, Verdict};
use crate::sandbox::{PassRun, Run};

/// What one run with the pass runs limited to `limit` gave: whether it failed the way under
/// study, how many runs the pipeline counted, and the last run it let run.
pub struct LimitedRun {
    pub fails: bool,
    pub counted: Option<u32>,
    pub last: Option<PassRun>,
}

impl LimitedRun {
    /// `run` of `pipeline`, limited, as `oracle` judges it.
    pub fn judged(run: Run, oracle: &Oracle, pipeline: &str) -> Result<LimitedRun> {
        Ok(LimitedRun {
            fails: oracle.judge(&run, pipeline)? == Verdict::Same,
            counted: run.pass_runs,
            last: run.nth_pass_run,
        })
    }
}

/// Doubles the limit until the failure shows, then bisects: the first limit at which it
/// does, and the run that limit last let run. None when no limit below the pipeline's own
/// count of runs shows it (it needs every run, or a pass that cannot be skipped).
pub fn first_failing_run(mut attempt: impl FnMut(u32) -> Result<LimitedRun>) -> Result<Option<PassRun>> {
    let found = first_failing_limit(|limit| {
        let run = attempt(u32::try_from(limit).unwrap_or(u32::MAX))?;
        let all = run.counted.is_some_and(|t| u64::from(t) <= limit);
        Ok(Attempt { fails: run.fails, all, kept: run.last })
    })?;
    Ok(found.and_then(|(_, last)| last))
}

/// What one attempt under a limit gave: whether it failed, whether the limit let all run
/// (no higher one can differ), and what the caller keeps of it.
pub struct Attempt<T> {
    pub fails: bool,
    pub all: bool,
    pub kept: T,
}

/// Doubles the limit from 1 until the attempt fails, then bisects between the last clean
/// limit and it: the first failing limit, and what its attempt kept. None when a limit
/// that lets all run does not fail, nor 2^24.
pub fn first_failing_limit<T>(mut attempt: impl FnMut(u64) -> Result<Attempt<T>>) -> Result<Option<(u64, T)>> {
    let (mut clean, mut failing) = (0u64, None);
    let mut limit = 1u64;
    while failing.is_none() {
        let run = attempt(limit)?;
        if run.fails {
            failing = Some((limit, run.kept));
        } else if run.all || limit >= 1 << 24 {
            return Ok(None);
        } else {
            clean = limit;
            limit *= 2;
        }
    }
    let (mut first, mut kept) = failing.expect("found");
    while first - clean > 1 {
        let mid = clean + (first - clean) / 2;
        let run = attempt(mid)?;
        if run.fails {
            (first, kept) = (mid, run.kept);
        } else {
            clean = mid;
        }
    }
    Ok(Some((first, kept)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pipeline of `total` runs that fails from run `culprit` on.
    fn pipeline(total: u32, culprit: u32) -> impl FnMut(u32) -> Result<LimitedRun> {
        move |limit| {
            let ran = limit.min(total);
            Ok(LimitedRun {
                fails: ran >= culprit,
                counted: Some(total),
                last: (ran > 0).then(|| PassRun { index: ran, element: 0, name: format!("pass{ran}") }),
            })
        }
    }

    #[test]
    fn the_first_run_after_which_it_fails_is_found_wherever_it_is() {
        for total in [1, 2, 7, 64, 1000] {
            for culprit in 1..=total.min(70) {
                let found = first_failing_run(pipeline(total, culprit)).unwrap().map(|r| r.index);
                assert_eq!(found, Some(culprit), "{culprit} of {total}");
            }
        }
    }

    #[test]
    fn a_failure_no_limit_shows_has_no_run() {
        assert_eq!(first_failing_run(pipeline(10, 11)).unwrap().map(|r| r.index), None);
    }

    /// A debug counter's steps in a run that crashes are never counted: the limit doubles
    /// without a known end, and a step found is found in about 2·log2(step) attempts.
    #[test]
    fn a_first_failing_step_is_found_without_knowing_how_many_there_are() {
        for step in [1u64, 2, 3, 41, 1000, 123_457] {
            let mut attempts = 0;
            let found = first_failing_limit(|limit| {
                attempts += 1;
                Ok(Attempt { fails: limit >= step, all: false, kept: limit })
            });
            assert_eq!(found.unwrap(), Some((step, step)));
            assert!(attempts <= 2 * (64 - step.leading_zeros()) + 1, "{attempts} attempts for {step}");
        }
        let never = first_failing_limit(|_| Ok(Attempt { fails: false, all: false, kept: () })).unwrap();
        assert!(never.is_none(), "gives up at 2^24");
    }
}
