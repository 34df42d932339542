//! Where a bug fires: its reproducer re-run on every LLVM the campaign knows (the one
//! under test, the linked one, each `--also-opt`), judged as the campaign judged it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::oracle::{failed_in_pass, observe, FailureKind, Observation};
use crate::program::{Subject, SubjectSpec};
use crate::sandbox::agent::major_of;
use crate::sandbox::{ExecMode, JobSpec, Limits, Llvm};

/// One LLVM's answer, as `outcome.json` records it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FiresOn {
    /// Its version (`X.Y.Z`).
    pub llvm: String,
    /// The `opt` that ran it; None: the LLVM linked into ctos.
    pub opt: Option<PathBuf>,
    /// None when this LLVM cannot tell: it does not read the IR or know a pass.
    pub fires: Option<bool>,
    /// What it did instead, or why it cannot tell.
    pub note: Option<String>,
    /// LLVM's message (crash, fatal error, verifier) when it fires.
    pub message: Option<String>,
    /// A crash's innermost LLVM frames, innermost first.
    #[serde(default)]
    pub frames: Vec<String>,
    /// For programs with `main`: the unoptimized and the optimized output.
    pub expected_stdout: Option<String>,
    pub actual_stdout: Option<String>,
}

impl FiresOn {
    /// Nothing known yet of `llvm` (`opt`: None for the linked LLVM).
    fn blank(llvm: String, opt: Option<PathBuf>) -> FiresOn {
        FiresOn {
            llvm,
            opt,
            fires: None,
            note: None,
            message: None,
            frames: Vec::new(),
            expected_stdout: None,
            actual_stdout: None,
        }
    }

    /// An `opt` that cannot be run, and why.
    pub fn unknown(opt: PathBuf, why: String) -> FiresOn {
        FiresOn { note: Some(why), ..FiresOn::blank("unknown".into(), Some(opt)) }
    }

    /// `22 ✔`, `19 ✘`, `23 ?`.
    pub fn mark(&self) -> String {
        let sign = match self.fires {
            Some(true) => "✔",
            Some(false) => "✘",
            None => "?",
        };
        match major_of(&self.llvm) {
            0 => format!(
                "{} {sign}",
                self.opt.as_deref().and_then(|o| o.file_name()).unwrap_or_default().to_string_lossy()
            ),
            major => format!("{major} {sign}"),
        }
    }
}

/// The "fires on" line: each LLVM's mark, oldest first.
pub fn fires_line(all: &[FiresOn]) -> String {
    all.iter().map(FiresOn::mark).collect::<Vec<_>>().join(" ")
}

/// The major version of the newest LLVM that could tell, when it no longer fires there and
/// an older one does: the bug is fixed in it (`22 ✔ 23 ✘`).
pub fn fixed_in(all: &[FiresOn]) -> Option<u32> {
    let told: Vec<&FiresOn> = all.iter().filter(|f| f.fires.is_some() && major_of(&f.llvm) > 0).collect();
    let newest = told.iter().max_by_key(|f| version_key(&f.llvm))?;
    let fired_before = told.iter().any(|f| f.fires == Some(true) && version_key(&f.llvm) < version_key(&newest.llvm));
    (newest.fires == Some(false) && fired_before).then(|| major_of(&newest.llvm))
}

/// A bug's reproducer and how the campaign judged it.
pub struct Reproducer<'a> {
    pub program: &'a Path,
    /// Linked in after optimization (a generated driver, for IR without `main`).
    pub driver: Option<&'a Path>,
    pub pipeline: &'a str,
    pub kind: FailureKind,
    pub culprit: &'a str,
    pub llvm_args: &'a [String],
    pub verify_each: crate::llvm::VerifyEach,
    pub limits: Limits,
    /// The C program and the sequence that failed on it, for an LLVM that cannot read
    /// `program` (IR printed by a newer LLVM): compiled by that LLVM's clang.
    pub source: Option<(&'a Path, &'a str)>,
}

/// Run `r` on each of `llvms`, oldest version first.
pub fn fires_on_each(r: &Reproducer, llvms: &[Llvm]) -> Vec<FiresOn> {
    let mut all: Vec<FiresOn> = llvms.iter().map(|llvm| fires_on(r, llvm)).collect();
    all.sort_by_key(|f| (version_key(&f.llvm), f.opt.is_some()));
    all
}

fn version_key(version: &str) -> Vec<u32> {
    version.split('.').map(|p| p.parse().unwrap_or(0)).collect()
}

fn fires_on(r: &Reproducer, llvm: &Llvm) -> FiresOn {
    let mut answer = FiresOn::blank(llvm.version(), llvm.external().map(|o| o.opt.clone()));
    let Err(e) = judge(r.program, r.pipeline, r, llvm, &mut answer) else { return answer };
    let why = first_part(&format!("{e:#}"));
    let Some((source, pipeline)) = r.source else {
        answer.note = Some(why);
        return answer;
    };
    answer.note = Some(match judge(source, pipeline, r, llvm, &mut answer) {
        Ok(()) => format!(
            "on {} compiled by its clang, under the campaign's sequence: it cannot read {} ({}){}",
            source.file_name().unwrap_or_default().to_string_lossy(),
            r.program.file_name().unwrap_or_default().to_string_lossy(),
            why.rsplit("error: ").next().unwrap_or(&why),
            answer.note.as_deref().map(|n| format!("; {n}")).unwrap_or_default()
        ),
        Err(e) => format!("{why}; {}", first_part(&format!("{e:#}"))),
    });
    answer
}

/// An error's first line up to its first ` | ` (the IR line a parser error quotes).
fn first_part(message: &str) -> String {
    message.lines().next().unwrap_or_default().split(" | ").next().unwrap_or_default().to_string()
}

/// Run `pipeline` on `program` as `r` says, into `answer`.
fn judge(program: &Path, pipeline: &str, r: &Reproducer, llvm: &Llvm, answer: &mut FiresOn) -> anyhow::Result<()> {
    let mut spec = SubjectSpec::new(program, r.llvm_args).with_llvm(llvm)?;
    spec.driver = r.driver.map(Path::to_path_buf);
    let mut subject = Subject::load(&spec, 1, r.limits)?;
    let reference = if subject.module.can_execute() { Some(subject.reference()?) } else { None };
    let exec = if reference.is_some() { ExecMode::Always } else { ExecMode::Never };
    let job = JobSpec { verify_each: r.verify_each, exec, ..JobSpec::optimize(pipeline) };
    let run = subject.pool.run_one(&mut subject.module, &job)?;
    answer.expected_stdout = reference.as_ref().map(|e| e.stdout.clone());
    answer.actual_stdout = run.execution.as_ref().map(|e| e.stdout.clone());
    answer.message = run.message.clone();
    answer.frames = run.crash.as_ref().map(|c| c.frames.iter().take(8).cloned().collect()).unwrap_or_default();
    match observe(&run, reference.as_ref()) {
        Observation::Rejected => {
            answer.note = Some(format!("refuses the pipeline: {}", run.message.as_deref().unwrap_or("")));
        }
        Observation::Misuse(needed) => {
            answer.note = Some(format!("says the pipeline is wrong: {needed}"));
        }
        Observation::Clean => answer.fires = Some(false),
        Observation::Fails(f) => {
            let same = f.kind == r.kind && failed_in_pass(&run, pipeline, r.culprit).unwrap_or(true);
            answer.fires = Some(same);
            if !same {
                answer.note = Some(format!("fails otherwise: {f}"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(llvm: &str, fires: Option<bool>) -> FiresOn {
        FiresOn { fires, ..FiresOn::blank(llvm.into(), None) }
    }

    #[test]
    fn a_bug_the_newest_llvm_no_longer_shows_is_fixed_there() {
        let fixed = [answer("19.1.7", Some(false)), answer("22.1.8", Some(true)), answer("23.1.4", Some(false))];
        assert_eq!(fixed_in(&fixed), Some(23));
        assert_eq!(fires_line(&fixed), "19 ✘ 22 ✔ 23 ✘");
        // The newest fires: not fixed, whatever an older one says.
        assert_eq!(fixed_in(&[answer("19.1.7", Some(false)), answer("22.1.8", Some(true))]), None);
        // The newest cannot tell (it does not know a pass): the newest that can decides.
        assert_eq!(fixed_in(&[answer("22.1.8", Some(true)), answer("23.1.4", None)]), None);
        assert_eq!(
            fixed_in(&[answer("19.1.7", Some(true)), answer("22.1.8", Some(false)), answer("23.1.4", None)]),
            Some(22)
        );
        // Firing nowhere is no fix.
        assert_eq!(fixed_in(&[answer("22.1.8", Some(false)), answer("23.1.4", Some(false))]), None);
    }
}
