//! One cause or two, across campaigns (`ctos merge`): two failures of one kind and culprit
//! pass are one cause when either's reduced sequence fails that way, in the culprit, on the
//! other's program (the rule a campaign applies to its own bugs, see bugs.rs).

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use crate::fuzz::bug::DRIVER;
use crate::fuzz::config::CampaignConfig;
use crate::oracle::{failed_in_pass, observe, FailureKind, Observation};
use crate::program::{Subject, SubjectSpec};
use crate::sandbox::Llvm;
use crate::sandbox::{ExecMode, Execution, JobSpec, Run};

/// Whether `run` of `pipeline` failed with a failure of `kind`, whatever its text, and,
/// when the optimizer failed, in an element that runs `culprit`.
pub(in crate::fuzz) fn fails_like(
    run: &Run,
    reference: Option<&Execution>,
    pipeline: &str,
    kind: FailureKind,
    culprit: &str,
) -> bool {
    let in_culprit = failed_in_pass(run, pipeline, culprit).unwrap_or(true);
    in_culprit && matches!(observe(run, reference), Observation::Fails(f) if f.kind == kind)
}

/// Runs the campaign's LLVM, as its configuration says, on bug folders' programs.
pub(in crate::fuzz) struct CrossCheck<'a> {
    config: &'a CampaignConfig,
    llvm: Llvm,
}

impl<'a> CrossCheck<'a> {
    pub fn new(config: &'a CampaignConfig) -> Result<CrossCheck<'a>> {
        Ok(CrossCheck { config, llvm: Llvm::from_opt(config.opt.as_deref())? })
    }

    /// Whether the bug folders `a` and `b` (with their reduced sequences) show one cause.
    pub fn one_cause(&self, a: (&Path, &str), b: (&Path, &str), kind: FailureKind, pass: &str) -> Result<bool> {
        Ok(self.fails_on(a.0, b.1, kind, pass)? || self.fails_on(b.0, a.1, kind, pass)?)
    }

    fn fails_on(&self, folder: &Path, pipeline: &str, kind: FailureKind, culprit: &str) -> Result<bool> {
        let program = program_in(folder)?;
        let options = options_in(folder)?.unwrap_or_else(|| self.config.llvm_options());
        let mut spec = SubjectSpec::new(program.clone(), &options).with_llvm(&self.llvm)?;
        spec.driver = Some(folder.join(DRIVER)).filter(|d| d.is_file());
        let mut subject =
            Subject::load(&spec, 1, self.config.limits()).with_context(|| format!("loading {}", program.display()))?;
        let reference = if subject.module.can_execute() { Some(subject.reference()?) } else { None };
        let exec = if reference.is_some() { ExecMode::Always } else { ExecMode::Never };
        let job = JobSpec { verify_each: self.config.verify_each, exec, ..JobSpec::optimize(pipeline) };
        let run = subject.pool.run_one(&mut subject.module, &job)?;
        Ok(fails_like(&run, reference.as_ref(), pipeline, kind, culprit))
    }
}

/// The LLVM options a bug folder's program ran with: the campaign's and, for a seed, its
/// RUN line's (`-mtriple=…`, knobs), which another shard's campaign options lack. None for
/// folders of a ctos that did not record them.
fn options_in(folder: &Path) -> Result<Option<Vec<String>>> {
    #[derive(serde::Deserialize)]
    struct Handoff {
        llvm_args: Option<Vec<String>>,
    }
    let path = folder.join("outcome.json");
    let text = crate::files::read_regular_text(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let handoff: Handoff = serde_json::from_str(&text).with_context(|| format!("{}: not ctos's", path.display()))?;
    Ok(handoff.llvm_args)
}

/// A bug folder's program (IR, as the campaign wrote it).
fn program_in(folder: &Path) -> Result<PathBuf> {
    ["program.ll", "program.bc"]
        .iter()
        .map(|f| folder.join(f))
        .find(|p| p.is_file())
        .with_context(|| format!("{} holds no program.ll or program.bc", folder.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A driver as a campaign's folder holds one: it calls `@f(0)` and prints the result.
    const CALLS_F_OF_0: &str = r#"@fmt = private constant [5 x i8] c"%ld\0A\00"
declare i32 @printf(ptr, ...)
declare i64 @f(i64)
define i32 @main() {
  %r = call i64 @f(i64 0)
  %p = call i32 (ptr, ...) @printf(ptr @fmt, i64 %r)
  ret i32 0
}
"#;

    /// tests/data/irce-udiv.ll has no `main`: only its folder's driver runs it, and
    /// `function(irce,gvn)` makes `f(0)` divide by zero unless IRCE gives up on the loop
    /// at once (`-irce-loop-size-cutoff=1`, an option the folder's outcome.json can carry
    /// where the merging campaign's options do not).
    #[test]
    fn a_folders_own_driver_and_options_decide_whether_a_sequence_fails_on_its_program() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path();
        let program = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/irce-udiv.ll");
        std::fs::copy(program, folder.join("program.ll")).unwrap();
        std::fs::write(folder.join(DRIVER), CALLS_F_OF_0).unwrap();
        let config = CampaignConfig::default();
        let cross = CrossCheck::new(&config).unwrap();
        let fails = |llvm_args: &str| {
            std::fs::write(folder.join("outcome.json"), format!("{{\"llvm_args\": {llvm_args}}}")).unwrap();
            cross.fails_on(folder, "function(irce,gvn)", FailureKind::WrongCode, "gvn").unwrap()
        };
        assert!(fails("[]"), "the driver's call divides by zero once optimized");
        assert!(!fails(r#"["-irce-loop-size-cutoff=1"]"#), "the folder's options are the ones it runs with");
        std::fs::remove_file(folder.join(DRIVER)).unwrap();
        assert!(!fails("[]"), "without its driver nothing runs the program");
    }
}
