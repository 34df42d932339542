//! Pieces the front doors share: argument groups, loading the program under test,
//! checking user input against the real LLVM before long work starts.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

use crate::llvm::{CFrontend, IrModule, TargetSpec};
use crate::sandbox::{run_batch, BatchItem, JobSpec, Limits, Outcome, Pool};

/// The program under test and how to turn it into IR.
#[derive(clap::Args, Debug, Clone)]
pub struct InputArgs {
    /// Test program: LLVM IR (.ll), bitcode (.bc) or C (.c, compiled with clang).
    pub program: PathBuf,
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
}

/// Limits of each sandboxed child and how many run at once.
#[derive(clap::Args, Debug, Clone)]
pub struct LimitArgs {
    /// Seconds one pipeline may take to optimize (then: timeout).
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub opt_timeout: f64,
    /// Seconds code generation plus running main may take.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub exec_timeout: f64,
    /// Memory cap per child, in MiB (then: oom).
    #[arg(long, value_name = "MIB", default_value_t = 4096)]
    pub memory: u64,
    /// Children running at once [default: number of CPUs].
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,
}

impl LimitArgs {
    pub fn limits(&self) -> Result<Limits> {
        for (name, v) in [("--opt-timeout", self.opt_timeout), ("--exec-timeout", self.exec_timeout)] {
            if !(v > 0.0 && v.is_finite()) {
                bail!("{name} must be a positive number of seconds, not {v}");
            }
        }
        Ok(Limits {
            opt_timeout: Duration::from_secs_f64(self.opt_timeout),
            exec_timeout: Duration::from_secs_f64(self.exec_timeout),
            memory_bytes: self.memory.max(64) << 20,
        })
    }

    pub fn jobs(&self) -> usize {
        self.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1)
    }
}

/// Target flags (`-mtriple=` …) are opt's, not cl::opts of the library: take them out.
pub fn split_target_flags(args: &[String]) -> (TargetSpec, Vec<String>) {
    let mut target = TargetSpec::default();
    let mut rest = Vec::new();
    for arg in args {
        let bare = arg.trim_start_matches('-');
        if let Some(v) = bare.strip_prefix("mtriple=") {
            target.triple = Some(v.to_string());
        } else if let Some(v) = bare.strip_prefix("mcpu=") {
            target.cpu = v.to_string();
        } else if let Some(v) = bare.strip_prefix("mattr=") {
            target.features = v.to_string();
        } else {
            rest.push(arg.clone());
        }
    }
    (target, rest)
}

/// The program, loaded and verified, with its driver; the target and remaining LLVM flags.
pub struct LoadedInput {
    pub module: IrModule,
    pub target: TargetSpec,
    pub llvm_args: Vec<String>,
    pub frontend: CFrontend,
}

pub fn load_input(input: &InputArgs) -> Result<LoadedInput> {
    let (target, llvm_args) = split_target_flags(&input.llvm_args);
    if !input.program.exists() {
        bail!("{}: no such file", input.program.display());
    }
    let frontend = CFrontend::with_flags(input.clang.clone(), input.clang_args.as_deref());
    let mut module = IrModule::load(&input.program, &frontend, &target)?;
    if let Some(driver) = &input.driver {
        module.set_driver(driver).with_context(|| format!("loading the driver {}", driver.display()))?;
    }
    Ok(LoadedInput { module, target, llvm_args, frontend })
}

/// Check the LLVM flags and every distinct pipeline against the linked LLVM, on an empty
/// module, so that a typo fails in a second instead of after a long run.
pub fn validate(pool: &mut Pool, target: &TargetSpec, pipelines: &[String]) -> Result<()> {
    let mut empty = IrModule::from_bytes(b"", "validation", target)?;
    let distinct: Vec<&String> = pipelines.iter().collect::<BTreeSet<_>>().into_iter().collect();
    let mut first_error: Option<(usize, String)> = None;
    let items = std::iter::once(String::new())
        .chain(distinct.iter().map(|s| s.to_string()))
        .enumerate()
        .map(|(index, pipeline)| BatchItem { index, job: JobSpec::optimize(pipeline) });
    run_batch(pool, &mut empty, items, |index, run| {
        let problem = if run.stderr.contains("Unknown command line argument") || run.stderr.contains("for the -") {
            let line = run.stderr.lines().next().unwrap_or("").trim();
            let line = line.split("  Try:").next().unwrap_or(line).trim_start_matches("ctos: ");
            Some(format!("LLVM rejects an --llvm-arg: {line}"))
        } else if run.outcome == Outcome::Rejected && index > 0 {
            Some(format!(
                "LLVM rejects the pipeline '{}': {}",
                distinct[index - 1],
                run.message.as_deref().unwrap_or("")
            ))
        } else {
            None
        };
        if let Some(p) = problem {
            if first_error.as_ref().is_none_or(|(i, _)| index < *i) {
                first_error = Some((index, p));
            }
        }
    })?;
    match first_error {
        Some((_, message)) => bail!(message),
        None => Ok(()),
    }
}

/// `println!` that hands back the write error instead of panicking, so that a reader who
/// closes the pipe (`ctos passes | head`) ends the program quietly through `?`.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// `print!` with the same contract as [`outln!`].
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// How a front door ends: errors are one line and status 2, except a closed pipe
/// (`ctos run … | head`), which is the reader's choice, not an error.
pub fn exit_with(result: Result<std::process::ExitCode>) -> std::process::ExitCode {
    match result {
        Ok(code) => code,
        Err(e) if e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) => {
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}
