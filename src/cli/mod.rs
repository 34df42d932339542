//! Pieces the front doors share: argument groups, loading the program under test, the
//! duration syntax, and how a command ends (one line, status 2).

mod duration;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;

pub use duration::{parse_duration, parse_duration_or_off};

use crate::llvm::CFrontend;
pub use crate::program::catalog_for;
use crate::program::{Subject, SubjectSpec};
use crate::sandbox::{Limits, Llvm};

/// The program under test and how to turn it into IR.
#[derive(clap::Args, Debug, Clone)]
pub struct InputArgs {
    /// Test program: LLVM IR (.ll), bitcode (.bc) or C (.c, compiled with clang).
    pub program: PathBuf,
    #[command(flatten)]
    pub options: InputOptions,
}

impl InputArgs {
    pub fn spec(&self) -> Result<SubjectSpec> {
        self.options.spec(&self.program)
    }
}

/// How to turn a program into IR and run LLVM on it, for commands that may take the
/// program from elsewhere (a bug folder).
#[derive(clap::Args, Debug, Clone)]
pub struct InputOptions {
    /// IR module linked in after optimization, before execution (a `main` that calls the
    /// optimized code, like the driver.ll of many LLVM bug reports).
    #[arg(long, value_name = "FILE.ll")]
    pub driver: Option<PathBuf>,
    /// clang used for .c inputs [default: the clang of the linked LLVM version].
    #[arg(long, value_name = "PATH")]
    pub clang: Option<PathBuf>,
    /// Flags for clang instead of "-O0 -Xclang -disable-O0-optnone". Some C bugs need
    /// "-O2 -Xclang -disable-llvm-passes" (keeps TBAA metadata, runs no pass).
    #[arg(long, value_name = "FLAGS", allow_hyphen_values = true)]
    pub clang_args: Option<String>,
    /// An LLVM option as `opt` takes it, e.g. --llvm-arg=-slp-threshold=-50 (repeatable).
    /// -mtriple=, -mcpu= and -mattr= choose the target, as with opt.
    #[arg(long = "llvm-arg", value_name = "FLAG", allow_hyphen_values = true)]
    pub llvm_args: Vec<String>,
    /// Run the pipelines in this `opt` (your LLVM build: trunk, assertions on) instead of
    /// the LLVM linked into ctos, through ctos's agent loaded into it. The agent is built
    /// once per LLVM with the llvm-config beside that opt (see scripts/build-plugin.sh).
    #[arg(long, value_name = "PATH")]
    pub opt: Option<PathBuf>,
}

impl InputOptions {
    pub fn spec(&self, program: &std::path::Path) -> Result<SubjectSpec> {
        self.spec_on(program, &Llvm::from_opt(self.opt.as_deref())?)
    }

    /// [`InputOptions::spec`] on an LLVM decided elsewhere (a bug folder's `opt`), not
    /// from `--opt`.
    pub fn spec_on(&self, program: &std::path::Path, llvm: &Llvm) -> Result<SubjectSpec> {
        let spec = SubjectSpec {
            program: program.to_path_buf(),
            driver: self.driver.clone(),
            frontend: CFrontend::with_flags(None, self.clang_args.as_deref()),
            llvm_args: self.llvm_args.clone(),
            llvm: Llvm::Linked,
        };
        // C programs become IR this LLVM reads: its own clang, unless the user names one.
        let mut spec = spec.with_llvm(llvm)?;
        if let Some(clang) = &self.clang {
            spec.frontend.clang = clang.clone();
        }
        Ok(spec)
    }
}

/// Limits of each sandboxed child and how many run at once.
#[derive(clap::Args, Debug, Clone)]
pub struct LimitArgs {
    /// Time one pipeline may take to optimize, then: timeout (90, 90s, 30m, 2h).
    #[arg(long, value_name = "TIME", default_value = "60", value_parser = parse_duration, allow_hyphen_values = true)]
    pub opt_timeout: Duration,
    /// Time code generation plus running main may take.
    #[arg(long, value_name = "TIME", default_value = "10", value_parser = parse_duration, allow_hyphen_values = true)]
    pub exec_timeout: Duration,
    /// Memory cap per child, in MiB, from 64 to 1048576 (then: oom).
    #[arg(long, value_name = "MIB", default_value_t = 4096, value_parser = memory_mib)]
    pub memory: u64,
    /// Children running at once, from 1 to 1024 [default: number of CPUs].
    #[arg(short = 'j', long, value_name = "N", value_parser = jobs)]
    pub jobs: Option<usize>,
}

impl LimitArgs {
    pub fn limits(&self) -> Limits {
        Limits { opt_timeout: self.opt_timeout, exec_timeout: self.exec_timeout, memory_bytes: self.memory << 20 }
    }

    pub fn jobs(&self) -> usize {
        self.jobs.unwrap_or_else(default_jobs)
    }
}

pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `-j`: 1 to 1024 children.
pub fn jobs(text: &str) -> Result<usize, String> {
    bounded(text, 1, 1024)
}

/// `--memory`: LLVM needs some room; a cap beyond 1 TiB caps nothing.
pub fn memory_mib(text: &str) -> Result<u64, String> {
    bounded(text, 64, 1 << 20)
}

/// A whole number in `min..=max`, said as the range when it is not.
pub fn bounded<T>(text: &str, min: T, max: T) -> Result<T, String>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
{
    match text.trim().parse::<T>() {
        Ok(n) if n >= min && n <= max => Ok(n),
        _ => Err(format!("expected a whole number from {min} to {max}")),
    }
}

/// Load the program under test as the arguments say.
pub fn load_input(input: &InputArgs, limits: &LimitArgs) -> Result<Subject> {
    Subject::load(&input.spec()?, limits.jobs(), limits.limits())
}

/// Parse the command line. Help and version are printed as clap prints them; a mistake
/// is one line on stderr and status 2, like every other input error.
pub fn parse_args<T: clap::Parser>() -> Result<(T, clap::ArgMatches), ExitCode> {
    use clap::error::ErrorKind;
    let matches = match T::command().try_get_matches() {
        Ok(m) => m,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => e.exit(),
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
        Err(e) => {
            eprintln!("error: {}", one_line(&e.render().to_string()));
            return Err(ExitCode::from(2));
        }
    };
    match T::from_arg_matches(&matches) {
        Ok(parsed) => Ok((parsed, matches)),
        Err(e) => {
            eprintln!("error: {}", one_line(&e.render().to_string()));
            Err(ExitCode::from(2))
        }
    }
}

/// Clap's multi-line message (what is wrong, a usage block, a hint) as one line.
fn one_line(rendered: &str) -> String {
    let mut parts = Vec::new();
    for line in rendered.lines() {
        let line = line.trim();
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        if !line.is_empty() {
            parts.push(line.trim_start_matches("error: ").to_string());
        }
    }
    format!("{} (see --help)", parts.join(" "))
}

/// A panic is a bug of ours, never the user's: say so in one line with the command to
/// report, instead of a backtrace. In a sandboxed child, end the child right there.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".into());
        let place = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        let command: Vec<String> = crate::output::command_line();
        eprintln!(
            "error: internal error ({what}{place}); this is a bug in ctos, please report it with the command: {}",
            command.join(" ")
        );
        if crate::sandbox::in_child() {
            unsafe { libc::_exit(70) }
        }
    }));
}

/// How a front door ends: errors are one line and status 2, except a closed pipe
/// (`ctos run … | head`), which is the reader's choice, not an error.
pub fn exit_with(result: Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            // Messages that quote LLVM or clang may span lines; the answer stays one line.
            let text = format!("{e:#}");
            let parts: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
            eprintln!("error: {}", printable(&parts.join(" | ")));
            ExitCode::from(2)
        }
    }
}

/// `text` with control characters escaped (`\0`, `\u{1b}`): a message that quotes a
/// binary input must not write its bytes to the user's terminal.
fn printable(text: &str) -> String {
    text.chars().flat_map(|c| if c.is_control() { c.escape_default().collect::<Vec<_>>() } else { vec![c] }).collect()
}
