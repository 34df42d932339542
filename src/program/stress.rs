//! Test programs from `llvm-stress`, LLVM's random IR generator: one function of vector,
//! odd-width integer and floating-point code over phis and selects, with no `main`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::anyhow;
use tempfile::TempDir;

use super::children::{run_all, Ended, Job, Step};

/// Generous: llvm-stress writes a thousand instructions in milliseconds.
const TIMEOUT: Duration = Duration::from_secs(20);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StressProgram {
    pub seed: u32,
    /// Instructions asked for (`-size`).
    pub size: usize,
    /// Textual IR.
    pub ir: String,
}

impl StressProgram {
    /// The command that makes it again.
    pub fn command(&self, tool: &Path) -> String {
        format!("{} -seed={} -size={} -o program.ll", tool.display(), self.seed, self.size)
    }
}

/// One program per (seed, size), up to `jobs` llvm-stress processes at a time and no
/// threads (callers fork afterwards). Results in input order.
pub fn llvm_stress_many(tool: &Path, wanted: &[(u32, usize)], jobs: usize) -> Vec<anyhow::Result<StressProgram>> {
    let jobs_: Vec<StressJob> =
        wanted.iter().map(|&(seed, size)| StressJob { tool: tool.to_path_buf(), seed, size, dir: None }).collect();
    run_all(jobs_, jobs)
}

struct StressJob {
    tool: PathBuf,
    seed: u32,
    size: usize,
    dir: Option<TempDir>,
}

impl StressJob {
    fn output(&self) -> PathBuf {
        self.dir.as_ref().expect("created in start").path().join("program.ll")
    }
}

impl Job for StressJob {
    type Output = anyhow::Result<StressProgram>;

    fn start(&mut self) -> Step<Self::Output> {
        match tempfile::Builder::new().prefix("ctos-stress-").tempdir() {
            Ok(dir) => self.dir = Some(dir),
            Err(e) => return Step::Done(Err(anyhow!("cannot create a scratch directory for llvm-stress: {e}"))),
        }
        let mut command = Command::new(&self.tool);
        command
            .arg(format!("-seed={}", self.seed))
            .arg(format!("-size={}", self.size))
            .arg("-o")
            .arg(self.output())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        Step::Run(Box::new(command), TIMEOUT)
    }

    fn next(&mut self, ended: Ended, _elapsed: Duration) -> Step<Self::Output> {
        let tool = self.tool.display();
        Step::Done(match ended {
            Ended::Exited(status) if status.success() => std::fs::read_to_string(self.output())
                .map(|ir| StressProgram { seed: self.seed, size: self.size, ir })
                .map_err(|e| anyhow!("cannot read {tool}'s output: {e}")),
            Ended::Exited(status) => Err(anyhow!("{tool} -seed={} -size={}: {status}", self.seed, self.size)),
            Ended::TimedOut => Err(anyhow!("{tool} -seed={} ran over {TIMEOUT:?}", self.seed)),
            Ended::Error(e) => Err(anyhow!("cannot run {tool}: {e}")),
        })
    }
}
