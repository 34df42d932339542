//! Reducing a bug's program as IR with `llvm-reduce` of the LLVM under test, whose
//! interestingness test is ctos's own judge of this failure (`ctos interesting`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use crate::fuzz::bug::interesting::{run_bounded, Ended, Interesting};
use crate::sandbox::Llvm;

/// What IR reduction did, as `outcome.json` records it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IrReduction {
    /// The reduced program's file in the bug folder (None: nothing smaller was kept).
    pub file: Option<String>,
    pub lines_before: usize,
    pub lines: usize,
    pub seconds: f64,
    /// llvm-reduce finished (false: stopped at its time limit with the smallest so far).
    pub finished: bool,
    /// Why there is no reduced program, when there is none.
    pub note: Option<String>,
    /// A shorter pass sequence that still fails this way on the reduced program (the
    /// campaign's was reduced on the whole program), when there is one.
    #[serde(default)]
    pub pipeline: Option<String>,
    /// The culprit under `pipeline`, its last pass: the campaign's culprit may be gone
    /// from it (the failure shows earlier on the reduced program).
    #[serde(default)]
    pub culprit: Option<String>,
}

impl IrReduction {
    /// No smaller program of `program`, and why.
    pub fn not_reduced(program: &Path, seconds: f64, finished: bool, note: String) -> IrReduction {
        let lines = line_count(program);
        IrReduction {
            file: None,
            lines_before: lines,
            lines,
            seconds,
            finished,
            note: Some(note),
            pipeline: None,
            culprit: None,
        }
    }
}

/// The llvm-reduce of the LLVM under test: the one beside an external `opt`, else the
/// versioned one of that major version on PATH (`llvm-reduce-22`).
pub fn llvm_reduce_for(llvm: &Llvm) -> Result<PathBuf> {
    llvm_tool_for("llvm-reduce", llvm, "or turn it off with --reduce-ir-time 0")
}

/// LLVM's `tool` of the LLVM under test: the one beside `--opt`, else Debian's of its
/// version, else, for an `--opt` newer than the linked LLVM, the linked version's (its IR
/// is read by a newer opt; a trunk build often ships only opt); the error says how to get
/// it, then `otherwise`.
pub fn llvm_tool_for(tool: &str, llvm: &Llvm, otherwise: &str) -> Result<PathBuf> {
    if let Some(beside) = llvm.external().map(|o| o.bin_dir().join(tool)).filter(|p| p.is_file()) {
        return Ok(beside);
    }
    let linked = Llvm::Linked.major();
    let major = llvm.major();
    let name = format!("{tool}-{major}");
    let older = (major > linked).then(|| crate::program::find_on_path(&format!("{tool}-{linked}"))).flatten();
    match crate::program::find_on_path(&name).or(older) {
        Some(path) => Ok(path),
        None => bail!("{name} is missing (Debian's llvm-{major}-tools; scripts/setup.sh installs it); {otherwise}"),
    }
}

/// Delta passes that only ever make wrong code out of nothing: replacing operands by
/// `poison` (the check refuses such candidates anyway; skipping spares the tests).
const WRONG_CODE_SKIPPED: &[&str] = &["operands-poison", "operands-undef"];

/// Reduce `program` (IR) with `tool` for at most `budget`, writing the smallest
/// interesting version as `out`. The result is checked again here, so a file that the
/// reducer was writing when its time ran out is never kept.
pub fn reduce_ir(
    tool: &Path,
    program: &Path,
    out: &Path,
    check: &Interesting,
    budget: Duration,
    jobs: usize,
) -> Result<IrReduction> {
    let started = Instant::now();
    let work = tempfile::Builder::new().prefix("ctos-llvm-reduce-").tempdir()?;
    let input = work.path().join("input.ll");
    as_text(tool, program, &input)?;
    let lines_before = line_count(&input);
    // llvm-reduce saves its best only after each of its passes: the test keeps the
    // smallest interesting candidate itself, for a reduction that runs out of time.
    let smallest = work.path().join("smallest.ll");
    let check = Interesting { keep_smallest: Some(smallest.clone()), ..check.clone() };
    let script = check.script(work.path(), "\"$1\"")?;
    let written = work.path().join("reduced.ll");
    let mut command = Command::new(tool);
    command.arg(format!("--test={}", script.display())).arg(format!("-j={}", jobs.max(1)));
    if check.failure.kind == crate::oracle::FailureKind::WrongCode {
        let known = known_delta_passes(tool);
        let skipped: Vec<&str> = WRONG_CODE_SKIPPED.iter().copied().filter(|p| known.iter().any(|k| k == p)).collect();
        if !skipped.is_empty() {
            command.arg(format!("--skip-delta-passes={}", skipped.join(",")));
        }
    }
    command.arg("-o").arg(&written).arg(&input).current_dir(work.path());
    let ended = run_bounded(command, "llvm-reduce", &work.path().join("llvm-reduce.log"), budget);
    let nothing = |finished: bool, note: String| IrReduction::not_reduced(&input, secs(started), finished, note);
    let ended = match ended {
        Ok(ended) => ended,
        Err(e) => return Ok(nothing(false, format!("{e:#}"))),
    };
    let mut candidates = [&written, &smallest];
    candidates.sort_by_key(|f| std::fs::metadata(f).map_or(u64::MAX, |m| m.len()));
    for candidate in candidates {
        if candidate.is_file() && line_count(candidate) < lines_before && check.holds(candidate)? {
            std::fs::copy(candidate, out)?;
            return Ok(IrReduction {
                file: out.file_name().map(|n| n.to_string_lossy().into_owned()),
                lines_before,
                lines: line_count(out),
                seconds: secs(started),
                finished: ended == Ended::Finished,
                note: None,
                pipeline: None,
                culprit: None,
            });
        }
    }
    Ok(match ended {
        Ended::Finished => nothing(true, "llvm-reduce found nothing smaller that fails the same way".into()),
        Ended::OutOfTime => nothing(false, "llvm-reduce kept nothing smaller within its time".into()),
    })
}

/// `program` as textual IR at `to`: a maintainer reads the reduced program, and its lines
/// measure the reduction. Bitcode (what `--opt` campaigns keep) goes through the `llvm-dis`
/// beside `reducer`.
fn as_text(reducer: &Path, program: &Path, to: &Path) -> Result<()> {
    if program.extension().is_some_and(|e| e == "ll") {
        std::fs::copy(program, to)?;
        return Ok(());
    }
    let name = reducer.file_name().and_then(|n| n.to_str()).unwrap_or("llvm-reduce").replace("llvm-reduce", "llvm-dis");
    let dis = reducer.with_file_name(name);
    let out = Command::new(&dis).arg(program).arg("-o").arg(to).output();
    match out {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => bail!(
            "{} cannot read {}: {}",
            dis.display(),
            program.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => bail!("cannot run {}: {e}", dis.display()),
    }
}

fn secs(since: Instant) -> f64 {
    (since.elapsed().as_secs_f64() * 10.0).round() / 10.0
}

/// Lines of a text IR file (bitcode: 0).
pub fn line_count(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

/// The delta passes `tool` offers (`--print-delta-passes`), for skipping by name only
/// what this version has.
fn known_delta_passes(tool: &Path) -> Vec<String> {
    let Ok(out) = Command::new(tool).arg("--print-delta-passes").output() else { return Vec::new() };
    String::from_utf8_lossy(&out.stdout).lines().map(|l| l.trim().to_string()).filter(|l| !l.is_empty()).collect()
}
