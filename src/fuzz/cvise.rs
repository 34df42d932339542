//! Reducing a bug's C program with cvise, whose interestingness test calls back into
//! `ctos interesting`: the program still compiles, is still free of undefined behaviour
//! when its output matters, and still fails the same way under the reduced sequence.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};

use crate::oracle::{Failure, FailureKind, Oracle, Verdict};
use crate::program::{screen, Screen, Screening, Subject, SubjectSpec};
use crate::sandbox::agent::ExternalOpt;
use crate::sandbox::{ExecMode, JobSpec, Limits};

/// What `ctos interesting` checks.
#[derive(Debug, Clone)]
pub struct Interesting {
    pub failure: Failure,
    pub pipeline: String,
    pub verify_each: crate::llvm::VerifyEach,
    pub llvm_args: Vec<String>,
    pub limits: Limits,
    /// The `opt` under test, when not the linked LLVM.
    pub opt: Option<ExternalOpt>,
}

impl Interesting {
    /// Whether `program` (C) still shows the failure.
    pub fn holds(&self, program: &Path) -> Result<bool> {
        // A variant that no longer compiles is simply not interesting.
        let spec = SubjectSpec::new(program, &self.llvm_args).with_opt(self.opt.as_ref())?;
        let Ok(mut subject) = Subject::load(&spec, 1, self.limits) else {
            return Ok(false);
        };
        let wrong_code = self.failure.kind == FailureKind::WrongCode;
        // cvise readily introduces undefined behaviour; it only matters when output does.
        if wrong_code && !matches!(screen(program, &Screen::default()), Screening::Clean { .. }) {
            return Ok(false);
        }
        let reference = if subject.module.has_main() { subject.reference().ok() } else { None };
        if wrong_code && reference.is_none() {
            return Ok(false);
        }
        let exec = if reference.is_some() { ExecMode::Always } else { ExecMode::Never };
        let job = JobSpec { verify_each: self.verify_each, exec, ..JobSpec::optimize(&self.pipeline) };
        let run = subject.pool.run_one(&mut subject.module, &job)?;
        Ok(Oracle::of(self.failure.clone(), reference).judge(&run, &self.pipeline)? == Verdict::Same)
    }

    fn command_line(&self, ctos: &Path, program: &str) -> String {
        let q = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
        let mut parts = vec![
            q(&ctos.display().to_string()),
            "interesting".into(),
            "--kind".into(),
            self.failure.kind.as_str().into(),
            "--signature".into(),
            q(&self.failure.signature),
            "--passes".into(),
            q(&self.pipeline),
            "--opt-timeout".into(),
            self.limits.opt_timeout.as_secs_f64().to_string(),
            "--exec-timeout".into(),
            self.limits.exec_timeout.as_secs_f64().to_string(),
        ];
        let mode = serde_json::to_value(self.verify_each).ok().and_then(|v| v.as_str().map(str::to_string));
        parts.push(format!("--verify-each={}", mode.unwrap_or_default()));
        parts.extend(self.llvm_args.iter().map(|a| q(&format!("--llvm-arg={a}"))));
        if let Some(opt) = &self.opt {
            parts.extend(["--opt".to_string(), q(&opt.opt.display().to_string())]);
        }
        parts.push(program.into());
        parts.join(" ")
    }
}

/// Reduce `source` with cvise for at most `budget`; the reduced program, if cvise shrank it.
pub fn reduce_program(source: &Path, check: &Interesting, budget: Duration, jobs: usize) -> Result<Option<PathBuf>> {
    let work = tempfile::Builder::new().prefix("ctos-cvise-").tempdir()?;
    let program = work.path().join("program.c");
    std::fs::copy(source, &program)?;
    let ctos = std::env::current_exe()?;
    let script = work.path().join("interesting.sh");
    std::fs::write(&script, format!("#!/bin/sh\nexec {}\n", check.command_line(&ctos, "program.c")))?;
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
    let log_path = work.path().join("cvise.log");
    // cvise refuses a test case named with a folder, hence the bare name in its own folder.
    let mut child = Command::new("cvise")
        .args(["--n", &jobs.max(1).to_string(), "--timeout", "120"])
        .arg(&script)
        .arg("program.c")
        .current_dir(work.path())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log_path)?)
        .spawn()
        .context("cannot run cvise (scripts/setup.sh installs it)")?;
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            if !status.success() {
                let log = std::fs::read_to_string(&log_path).unwrap_or_default();
                let last = log.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no message");
                bail!("cvise failed ({status}): {last}");
            }
            break;
        }
        if started.elapsed() >= budget {
            // cvise keeps the smallest interesting version in place as it goes.
            let _ = child.kill();
            let _ = child.wait();
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let reduced = std::fs::read(&program)?;
    if reduced.len() >= std::fs::metadata(source)?.len() as usize || !check.holds(&program)? {
        return Ok(None);
    }
    let out = source.with_file_name("program.reduced.c");
    std::fs::write(&out, reduced)?;
    Ok(Some(out))
}
