//! Reducing a bug's C program with cvise, whose interestingness test calls back into
//! `ctos interesting` (see [`crate::fuzz::bug::interesting`]).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::Result;

use crate::fuzz::bug::interesting::{run_bounded, Interesting};

/// Reduce `source` with cvise for at most `budget`; the reduced program, if cvise shrank it.
pub fn reduce_program(source: &Path, check: &Interesting, budget: Duration, jobs: usize) -> Result<Option<PathBuf>> {
    let work = tempfile::Builder::new().prefix("ctos-cvise-").tempdir()?;
    let program = work.path().join("program.c");
    std::fs::copy(source, &program)?;
    let script = check.script(work.path(), "program.c")?;
    // cvise refuses a test case named with a folder, hence the bare name in its own folder;
    // it keeps the smallest interesting version in place as it goes.
    let mut cvise = Command::new("cvise");
    cvise.args(["--n", &jobs.max(1).to_string(), "--timeout", "120"]).arg(&script).arg("program.c");
    cvise.current_dir(work.path());
    run_bounded(cvise, "cvise", &work.path().join("cvise.log"), budget)?;
    let reduced = std::fs::read(&program)?;
    if reduced.len() >= std::fs::metadata(source)?.len() as usize || !check.holds(&program)? {
        return Ok(None);
    }
    let out = source.with_file_name("program.reduced.c");
    std::fs::write(&out, reduced)?;
    Ok(Some(out))
}
