//! Undefined-behaviour screening: a program whose unoptimized build trips UBSan or ASan
//! would make optimized and unoptimized outputs disagree without any compiler bug.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use tempfile::TempDir;

use super::children::{run_all, Ended, Job, Step};

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case", tag = "verdict", content = "detail")]
pub enum Screening {
    /// No sanitizer report, exit status 0. `millis` is the wall time of the sanitized run
    /// (ASan and UBSan make it slower than a plain `-O0` run).
    Clean {
        stdout: String,
        millis: f64,
    },
    /// The first line of the sanitizer's report.
    Undefined(String),
    Timeout,
    CompileError(String),
    /// A nonzero exit or a signal without a sanitizer report.
    Failed(String),
}

#[derive(Debug, Clone)]
pub struct Screen {
    pub clang: PathBuf,
    /// For the run; the program is killed when it is up.
    pub timeout: Duration,
}

impl Default for Screen {
    fn default() -> Self {
        Screen { clang: crate::llvm::clang_for_this_llvm(), timeout: Duration::from_secs(10) }
    }
}

/// `-fno-sanitize-recover=all` stops at the first report, so the verdict names the first
/// problem and a program never runs on past it.
const CLANG_FLAGS: &[&str] = &["-O0", "-fsanitize=undefined,address", "-fno-sanitize-recover=all", "-w"];

/// Leaks are not undefined behaviour, and LeakSanitizer needs ptrace, which containers
/// often forbid: its failure would look like a broken program. Returning pointers into
/// dead frames is undefined and csmith may emit it; ASan only sees it with fake stacks.
const ASAN_OPTIONS: &str = "detect_leaks=0:detect_stack_use_after_return=1";
const UBSAN_OPTIONS: &str = "print_stacktrace=0";

/// A clang run that takes this long is itself a problem: a 1.4 MB swarm program compiles
/// with the sanitizers in about a second.
const COMPILE_LIMIT: Duration = Duration::from_secs(180);

/// Build `source` (C) at `-O0` with UBSan and ASan, run it with the time limit, classify.
pub fn screen(source: &Path, screen: &Screen) -> Screening {
    screen_many(&[source.to_path_buf()], screen, 1).pop().expect("one verdict per source")
}

/// `screen` for each source, up to `jobs` processes at a time and no threads (callers
/// fork afterwards). Verdicts in input order.
pub fn screen_many(sources: &[PathBuf], screen: &Screen, jobs: usize) -> Vec<Screening> {
    run_all(sources.iter().map(|source| ScreenJob { source, screen, dir: None, running: false }).collect(), jobs)
}

struct ScreenJob<'a> {
    source: &'a Path,
    screen: &'a Screen,
    dir: Option<TempDir>,
    /// The compile step is done and the program runs.
    running: bool,
}

const BINARY: &str = "program";
const STDOUT: &str = "stdout.txt";
const STDERR: &str = "stderr.txt";

impl ScreenJob<'_> {
    fn dir(&self) -> &Path {
        self.dir.as_ref().expect("created in start").path()
    }

    fn stderr(&self) -> String {
        fs::read(self.dir().join(STDERR)).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default()
    }

    /// Output and messages go to files: pipes could fill up while nobody reads them.
    fn with_files(&self, mut command: Command, limit: Duration) -> Step<Screening> {
        let files = File::create(self.dir().join(STDOUT)).and_then(|o| Ok((o, File::create(self.dir().join(STDERR))?)));
        match files {
            Ok((out, err)) => {
                command.stdin(Stdio::null()).stdout(out).stderr(err).current_dir(self.dir());
                Step::Run(Box::new(command), limit)
            }
            Err(e) => Step::Done(Screening::Failed(format!("cannot write into {}: {e}", self.dir().display()))),
        }
    }

    fn compile(&self) -> Step<Screening> {
        let mut clang = Command::new(&self.screen.clang);
        clang.args(CLANG_FLAGS);
        if Path::new("/usr/include/csmith").is_dir() {
            clang.arg("-I/usr/include/csmith");
        }
        // The source path may be relative to our working directory, clang runs in the scratch dir.
        let source = std::path::absolute(self.source).unwrap_or_else(|_| self.source.to_path_buf());
        clang.arg(source).arg("-o").arg(self.dir().join(BINARY));
        self.with_files(clang, COMPILE_LIMIT)
    }

    fn compiled(&mut self, ended: Ended) -> Step<Screening> {
        match ended {
            Ended::Exited(status) if status.success() => {
                self.running = true;
                let mut run = Command::new(self.dir().join(BINARY));
                run.env("ASAN_OPTIONS", ASAN_OPTIONS).env("UBSAN_OPTIONS", UBSAN_OPTIONS);
                self.with_files(run, self.screen.timeout)
            }
            Ended::Exited(status) => Step::Done(Screening::CompileError(clang_errors(&self.stderr(), status))),
            Ended::TimedOut => Step::Done(Screening::CompileError(format!("clang ran longer than {COMPILE_LIMIT:?}"))),
            Ended::Error(e) => Step::Done(Screening::CompileError(format!(
                "cannot run {}: {e} (install it with scripts/setup.sh)",
                self.screen.clang.display()
            ))),
        }
    }

    fn ran(&self, ended: Ended, elapsed: Duration) -> Screening {
        let status = match ended {
            Ended::Exited(status) => status,
            Ended::TimedOut => return Screening::Timeout,
            Ended::Error(e) => return Screening::Failed(format!("cannot run the sanitized program: {e}")),
        };
        let stderr = self.stderr();
        if let Some(report) = sanitizer_report(&stderr) {
            return Screening::Undefined(report);
        }
        if !status.success() {
            let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("no message");
            return Screening::Failed(format!("{status}: {first}"));
        }
        match fs::read(self.dir().join(STDOUT)) {
            Ok(out) => Screening::Clean {
                stdout: String::from_utf8_lossy(&out).into_owned(),
                millis: elapsed.as_secs_f64() * 1e3,
            },
            Err(e) => Screening::Failed(format!("cannot read the program's output: {e}")),
        }
    }
}

impl Job for ScreenJob<'_> {
    type Output = Screening;

    fn start(&mut self) -> Step<Screening> {
        match tempfile::Builder::new().prefix("ctos-screen-").tempdir() {
            Ok(dir) => {
                self.dir = Some(dir);
                self.compile()
            }
            Err(e) => Step::Done(Screening::Failed(format!("cannot create a scratch directory: {e}"))),
        }
    }

    fn next(&mut self, ended: Ended, elapsed: Duration) -> Step<Screening> {
        if self.running {
            Step::Done(self.ran(ended, elapsed))
        } else {
            self.compiled(ended)
        }
    }
}

/// UBSan's `file:line:col: runtime error: ...` line, or ASan's `ERROR: AddressSanitizer: ...`
/// without its `==pid==` prefix (so verdicts compare equal across runs). ASan's start-up
/// failures (`ERROR: AddressSanitizer failed to ...`) are not reports about the program.
fn sanitizer_report(stderr: &str) -> Option<String> {
    stderr.lines().find_map(|line| {
        if line.contains(": runtime error: ") {
            return Some(line.trim().to_string());
        }
        ["ERROR: AddressSanitizer: ", "ERROR: UndefinedBehaviorSanitizer: "]
            .iter()
            .find_map(|marker| line.find(marker).map(|at| line[at..].trim().to_string()))
    })
}

/// The first few error lines (the rest is usually fallout).
fn clang_errors(stderr: &str, status: ExitStatus) -> String {
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).take(3).collect();
    if errors.is_empty() {
        format!("clang {status}: {}", stderr.lines().next().unwrap_or("no message"))
    } else {
        errors.join(" | ")
    }
}
