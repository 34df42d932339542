//! The interestingness test that reducers (cvise on C, llvm-reduce on IR) call back into
//! as `ctos interesting`: the candidate still fails the same way under the reduced
//! sequence, and, when its output is the evidence, reduction has not made it up.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use serde::{Deserialize, Serialize};

use crate::llvm::IrModule;
use crate::oracle::{Failure, FailureKind, Oracle, Verdict};
use crate::program::{reference_execution_filled, screen, Screen, Screening, Subject, SubjectSpec};
use crate::sandbox::Llvm;
use crate::sandbox::{ExecMode, ExecStatus, Execution, JobSpec, Limits, Pool};

/// What `ctos interesting` checks.
#[derive(Debug, Clone)]
pub struct Interesting {
    pub failure: Failure,
    pub pipeline: String,
    pub verify_each: crate::llvm::VerifyEach,
    pub llvm_args: Vec<String>,
    pub limits: Limits,
    /// The LLVM under test.
    pub llvm: Llvm,
    /// The pass the campaign found failing: a crash inside it is this failure whatever
    /// its top frame (a smaller program often crashes a few frames earlier).
    pub culprit: Option<String>,
    /// For IR candidates of wrong code: what the original did without optimization.
    pub baseline: Option<Baseline>,
    /// A module linked in after optimization (a generated driver, for IR without `main`).
    pub driver: Option<PathBuf>,
    /// Keep a copy of the smallest interesting candidate here: reducers save their best
    /// only now and then (llvm-reduce after each of its passes), and a reduction that
    /// runs out of time should still leave the smallest one seen.
    pub keep_smallest: Option<PathBuf>,
}

/// What an IR program did before reduction, which a wrong-code candidate must keep as far
/// as undefined behaviour goes: reduction must not invent the undefined behaviour that
/// then looks like a miscompile. Its output may change (C-Reduce's wrong-code tests allow
/// that too): a candidate is a miscompilation when its own optimized and unoptimized
/// outputs differ, and asking for the original's output would leave few candidates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// The unoptimized program's ending and output (its fresh memory filled with
    /// [`FILLS`]`[0]`).
    pub status: ExecStatus,
    pub stdout: String,
    /// Whether it does and prints the same with its fresh memory filled with [`FILLS`]`[1]`:
    /// a program that reads memory it never wrote does not (a store that reduction
    /// deleted, say), and an optimizer may then legally print anything.
    pub fill_stable: bool,
    /// Code generation plus the run, the slower of the two (ms).
    #[serde(default)]
    pub millis: f64,
    /// `undef` and `poison` operands in its IR.
    pub undefined_values: usize,
    /// What LLVM's `lint` pass calls undefined behaviour in it (null or undef pointers,
    /// division by zero, out-of-bounds constant offsets, oversized shifts, …).
    pub lint_findings: usize,
    /// The types of `main` and of each function it declares (see [`interface`]).
    #[serde(default)]
    pub interface: Vec<String>,
    /// With a driver ctos generated: whether its calls run free of undefined behaviour and
    /// poison under its checks (see [`crate::program::driver::runs_clean`]).
    #[serde(default)]
    pub checked_clean: Option<bool>,
}

pub use crate::program::driver::FILLS;

impl Baseline {
    /// The baseline of `module` (which must have `main`).
    pub fn of(pool: &mut Pool, module: &mut IrModule) -> Result<Baseline> {
        let first = reference_execution_filled(pool, module, Some(FILLS[0]))?;
        Baseline::after(pool, module, first)
    }

    /// The baseline of `module`, whose run with [`FILLS`]`[0]` was `first`.
    fn after(pool: &mut Pool, module: &mut IrModule, first: Execution) -> Result<Baseline> {
        let second = reference_execution_filled(pool, module, Some(FILLS[1]))?;
        let ir = module.ir_text();
        Ok(Baseline {
            fill_stable: first.status == second.status && first.stdout == second.stdout,
            millis: first.millis.max(second.millis),
            status: first.status,
            stdout: first.stdout,
            undefined_values: undefined_values(&ir),
            lint_findings: lint_findings(pool, module)?,
            interface: interface(&ir),
            checked_clean: crate::program::driver::runs_clean(pool, module, FILLS[0])?,
        })
    }

    /// How long a candidate may run: ten times the original, at least a second. Reduction
    /// deletes loop exits, and each endless candidate would cost the whole timeout.
    pub fn exec_timeout(&self, at_most: Duration) -> Duration {
        Duration::from_secs_f64((self.millis / 100.0).max(1.0)).min(at_most)
    }

    /// Whether `candidate`'s baseline shows nothing this one did not: it ends alike (its
    /// output may differ), no new dependence on unwritten memory, no more undefined values
    /// or lint.
    fn kept_by(&self, candidate: &Baseline) -> bool {
        candidate.status == self.status
            && (candidate.fill_stable || !self.fill_stable)
            && candidate.undefined_values <= self.undefined_values
            && candidate.lint_findings <= self.lint_findings
            && candidate.interface.iter().all(|f| self.interface.contains(f))
            && (candidate.checked_clean == Some(true) || self.checked_clean != Some(true))
    }
}

/// The types of `main`, of the other functions it defines for other modules to call, and
/// of those it declares, as `i32 @printf(ptr,...)`
/// (parameter attributes and names left out). A reduced program whose `main` takes other
/// arguments than the original's reads whatever the runtime passes (llvm-reduce's
/// operands-to-args makes values arguments), and one that calls `printf` declared with
/// other parameters passes what happens to be in registers: output that differs between
/// two compilations without any miscompilation.
pub fn interface(ir: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in ir.lines() {
        // `main`, and every function another module may call (a generated driver calls
        // them with the types it had).
        let visible = line.starts_with("define ")
            && !["internal ", "private ", "available_externally "].iter().any(|l| line.contains(l));
        if !(line.starts_with("declare ") || visible) {
            continue;
        }
        let Some((head, rest)) = line.split_once(" @") else { continue };
        let Some((name, params)) = rest.split_once('(') else { continue };
        let params = params.rsplit_once(')').map_or(params, |(p, _)| p);
        let types: Vec<&str> = params.split(',').filter_map(|p| p.split_whitespace().next()).collect();
        let returns = head.split_whitespace().last().unwrap_or("");
        out.push(format!("{returns} @{name}({})", types.join(",")));
    }
    out.sort();
    out
}

/// `undef` and `poison` as operands in printed IR (not inside names or strings).
pub fn undefined_values(ir: &str) -> usize {
    let mut count = 0;
    for line in ir.lines().filter(|l| !l.trim_start().starts_with(';')) {
        let bytes = line.as_bytes();
        for word in ["undef", "poison"] {
            for (at, _) in line.match_indices(word) {
                let before = at.checked_sub(1).map(|i| bytes[i]);
                let after = bytes.get(at + word.len());
                let name_char = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'%' | b'@' | b'"');
                if !before.is_some_and(name_char) && !after.is_some_and(|&b| name_char(b)) {
                    count += 1;
                }
            }
        }
    }
    count
}

/// How many findings of undefined behaviour LLVM's `lint` pass prints for `module`.
fn lint_findings(pool: &mut Pool, module: &mut IrModule) -> Result<usize> {
    let run = pool.run_one(module, &JobSpec::optimize("lint"))?;
    Ok(run.stderr.lines().filter(|l| l.starts_with("Undefined behavior:")).count())
}

impl Interesting {
    /// Whether `program` still shows the failure; if so, it is kept when it is the
    /// smallest so far (see `keep_smallest`).
    pub fn check(&self, program: &Path) -> Result<bool> {
        let holds = self.holds(program)?;
        if let (true, Some(best)) = (holds, &self.keep_smallest) {
            keep_if_smaller(program, best)?;
        }
        Ok(holds)
    }

    /// Whether `program` (C or IR) still shows the failure.
    pub fn holds(&self, program: &Path) -> Result<bool> {
        // A reducer's candidate is always there: a missing one is a wrong command, which
        // must not read as "not interesting".
        if !std::fs::metadata(program).is_ok_and(|m| m.is_file()) {
            bail!("{}: no such file", program.display());
        }
        // A variant that no longer compiles or parses is simply not interesting.
        let mut spec = SubjectSpec::new(program, &self.llvm_args).with_llvm(&self.llvm)?;
        spec.driver = self.driver.clone();
        let Ok(mut subject) = Subject::load(&spec, 1, self.limits) else {
            return Ok(false);
        };
        let wrong_code = self.failure.kind == FailureKind::WrongCode;
        let is_c = program.extension().is_some_and(|e| e == "c");
        // cvise readily introduces undefined behaviour; it only matters when output does.
        if wrong_code && is_c && !matches!(screen(program, &Screen::default()), Screening::Clean { .. }) {
            return Ok(false);
        }
        let mut oracle = Oracle::of(self.failure.clone(), None);
        oracle.crash_in = self.culprit.clone();
        // Wrong code in IR runs with fresh memory filled, as its baseline did.
        let fill = (wrong_code && !is_c).then_some(FILLS[0]);
        // Only a failure of the program's behaviour needs it run: a crash is judged by
        // the optimizer alone, which halves each test of a crash's reduction.
        let reference = match oracle.needs_execution() && subject.module.can_execute() {
            true => reference_execution_filled(&mut subject.pool, &mut subject.module, fill).ok(),
            false => None,
        };
        if wrong_code && reference.is_none() {
            return Ok(false);
        }
        oracle.reference = reference.clone();
        let exec = if reference.is_some() { ExecMode::Always } else { ExecMode::Never };
        let job =
            JobSpec { verify_each: self.verify_each, exec, fill_memory: fill, ..JobSpec::optimize(&self.pipeline) };
        let run = subject.pool.run_one(&mut subject.module, &job)?;
        if let Some(why) = crate::sandbox::llvm_args_rejected(&run) {
            bail!("LLVM rejects an --llvm-arg: {why}");
        }
        match oracle.judge(&run, &self.pipeline)? {
            Verdict::Same => {}
            // LLVM refuses a pipeline or an option whatever the program: the command is wrong.
            Verdict::Rejected => bail!(
                "LLVM rejects --passes '{}': {}",
                self.pipeline,
                run.message.as_deref().unwrap_or("").lines().next().unwrap_or("")
            ),
            _ => return Ok(false),
        }
        let (Some(first), Some(_)) = (reference, fill) else { return Ok(true) };
        // Wrong code in IR without a baseline cannot be told from invented UB.
        let Some(baseline) = &self.baseline else { return Ok(false) };
        Ok(baseline.kept_by(&Baseline::after(&mut subject.pool, &mut subject.module, first)?))
    }

    /// The `ctos interesting` command line that checks the file the reducer appends.
    fn command_line(&self, ctos: &Path, baseline: Option<&Path>) -> String {
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
        if let Some(opt) = self.llvm.external() {
            parts.extend(["--opt".to_string(), q(&opt.opt.display().to_string())]);
        }
        if let Some(culprit) = &self.culprit {
            parts.extend(["--culprit".to_string(), q(culprit)]);
        }
        if let Some(baseline) = baseline {
            parts.extend(["--baseline".to_string(), q(&baseline.display().to_string())]);
        }
        if let Some(driver) = &self.driver {
            // The reducer runs the script in a directory of its own: a campaign folder
            // given as a relative --out made every candidate "not interesting".
            let driver = std::path::absolute(driver).unwrap_or_else(|_| driver.clone());
            parts.extend(["--driver".to_string(), q(&driver.display().to_string())]);
        }
        if let Some(best) = &self.keep_smallest {
            parts.extend(["--keep-smallest".to_string(), q(&best.display().to_string())]);
        }
        parts.join(" ")
    }

    /// Write `interesting.sh` into `work`: this test on `program` as the shell reads it
    /// (cvise names no file, llvm-reduce passes one: `"$1"`).
    pub(in crate::fuzz) fn script(&self, work: &Path, program: &str) -> Result<PathBuf> {
        let baseline = match &self.baseline {
            Some(b) => {
                let path = work.join("baseline.json");
                std::fs::write(&path, serde_json::to_string(b)?)?;
                Some(path)
            }
            None => None,
        };
        let script = work.join("interesting.sh");
        let ctos = std::env::current_exe()?;
        let command = self.command_line(&ctos, baseline.as_deref());
        std::fs::write(&script, format!("#!/bin/sh\nexec {command} {program}\n"))?;
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
        Ok(script)
    }
}

/// Copy `candidate` to `best` if it is smaller than what `best` holds, under a lock
/// (reducers run several tests at once).
fn keep_if_smaller(candidate: &Path, best: &Path) -> Result<()> {
    let lock = std::fs::File::create(best.with_extension("lock"))?;
    lock.lock()?;
    let size = std::fs::metadata(candidate)?.len();
    if std::fs::metadata(best).is_ok_and(|m| m.len() <= size) {
        return Ok(());
    }
    let partial = best.with_extension("partial");
    std::fs::copy(candidate, &partial)?;
    std::fs::rename(&partial, best)?;
    Ok(())
}

/// How a bounded reducer run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Finished,
    /// Stopped at its time limit: what it wrote so far stands.
    OutOfTime,
}

/// Run a reducer until it ends or `budget` runs out, with its stderr in `log`. A
/// reducer that fails says why with the last line of its log.
pub(in crate::fuzz) fn run_bounded(mut command: Command, name: &str, log: &Path, budget: Duration) -> Result<Ended> {
    // Its temporary files (llvm-reduce's copy of the program, its tests' files) go beside
    // the log, in the caller's work folder: a reducer killed at its time limit cannot
    // remove them, the work folder's owner does.
    let tmp = log.with_file_name("tmp");
    std::fs::create_dir_all(&tmp)?;
    command.env("TMPDIR", &tmp);
    // Its own process group: its tests are stopped with it.
    let mut child: Child = command
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log)?)
        .spawn()
        .with_context(|| format!("cannot run {name} (scripts/setup.sh installs it)"))?;
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            if !status.success() {
                let log = std::fs::read_to_string(log).unwrap_or_default();
                let last = log.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no message");
                bail!("{name} failed ({status}): {last}");
            }
            return Ok(Ended::Finished);
        }
        if started.elapsed() >= budget {
            // Safety: signalling the group this call created.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            return Ok(Ended::OutOfTime);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_candidate_keeps_mains_type_and_every_declaration_it_calls_as_the_original_had_them() {
        let original = "define dso_local i32 @main() #0 {\ndeclare i32 @printf(ptr noundef, ...) #1\n\
                        define internal void @f(i16 %x) {\n";
        assert_eq!(interface(original), ["i32 @main()", "i32 @printf(ptr,...)"]);
        // llvm-reduce made values arguments of main, and stripped printf's parameters.
        let reduced = "define i32 @main(ptr %p, ptr %s) {\ndeclare i32 @printf(...)\n";
        assert_eq!(interface(reduced), ["i32 @main(ptr,ptr)", "i32 @printf(...)"]);
        let base = |ir: &str| Baseline {
            status: ExecStatus::Exited(0),
            stdout: String::new(),
            fill_stable: true,
            millis: 1.0,
            undefined_values: 0,
            lint_findings: 0,
            interface: interface(ir),
            checked_clean: None,
        };
        let kept = |ir: &str| base(original).kept_by(&base(ir));
        assert!(!kept(reduced));
        // Dropping a declaration or attributes is no change of type.
        assert!(kept("define i32 @main() {\n"));
        assert!(kept("define i32 @main() {\ndeclare i32 @printf(ptr, ...)\n"));
        // A generated driver's calls that ran clean must stay clean.
        let checked = |clean| Baseline { checked_clean: Some(clean), ..base(original) };
        assert!(checked(true).kept_by(&checked(true)));
        assert!(!checked(true).kept_by(&checked(false)));
        assert!(!checked(true).kept_by(&base(original)));
    }

    fn wrong_code_check(driver: Option<&str>) -> Interesting {
        Interesting {
            failure: Failure { kind: FailureKind::WrongCode, signature: "output differs".into() },
            pipeline: "function(sroa)".into(),
            verify_each: crate::llvm::VerifyEach::Off,
            llvm_args: Vec::new(),
            limits: Limits::default(),
            llvm: Llvm::Linked,
            culprit: None,
            baseline: None,
            driver: driver.map(PathBuf::from),
            keep_smallest: None,
        }
    }

    /// The reducer runs the script in a directory of its own: the driver of a campaign
    /// whose --out was relative must still be found.
    #[test]
    fn the_reducers_script_names_the_driver_by_its_absolute_path() {
        let check = wrong_code_check(Some("camp/bugs/0001-wrong-code-sroa/driver.ll"));
        let work = tempfile::tempdir().unwrap();
        let script = std::fs::read_to_string(check.script(work.path(), "\"$1\"").unwrap()).unwrap();
        let absolute = std::env::current_dir().unwrap().join("camp/bugs/0001-wrong-code-sroa/driver.ll");
        assert!(script.contains(&format!("--driver '{}'", absolute.display())), "{script}");
    }

    #[test]
    fn undefined_values_counts_operands_not_names() {
        let ir = "; undef in a comment\n%undef.x = add i32 undef, 1\nstore i32 poison, ptr @poison_g\n\
                  %y = select i1 %c, i32 %undef, i32 undef\n";
        assert_eq!(undefined_values(ir), 3);
    }
}
