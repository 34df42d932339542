use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Result};
use ctos::fuzz::{self, CampaignConfig, RunOptions, Selection};
use ctos::llvm::VerifyEach;
use ctos::program::Generator;
use ctos::seq::Nesting;

#[derive(clap::Args)]
#[command(after_help = "A campaign folder holds campaign.sqlite (plan, pairs done, failures, bugs), \
stats.json (rewritten while running), programs/ and bugs/NNNN-<type>-<pass>/ (program, reduced \
sequence, outcome, README with the opt and ctos commands that reproduce it). Interrupt it any time; \
--resume DIR continues without redoing or losing work.\n\nExamples:\n  ctos fuzz --out camp --time-limit 30m\n  \
ctos fuzz --resume camp --time-limit 1h\n  ctos fuzz --out shard3 --shard 3/8 --seed 7   # as array job task 3 of 8\n  \
ctos merge --out all shard0 shard1 ...\n  ctos report camp")]
pub struct FuzzArgs {
    /// New campaign folder.
    #[arg(long, value_name = "DIR", required_unless_present = "resume", conflicts_with = "resume")]
    out: Option<PathBuf>,
    /// Continue the campaign in DIR (its stored configuration applies).
    #[arg(long, value_name = "DIR")]
    resume: Option<PathBuf>,
    /// Stop after this long (e.g. 90s, 30m, 2h); without it, run until interrupted.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    time_limit: Option<Duration>,
    /// Stop after this many iterations.
    #[arg(long, value_name = "N")]
    iterations: Option<usize>,
    /// Seed of every random choice (sequences, programs, embeddings, selection).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Children running at once [default: number of CPUs].
    #[arg(short = 'j', long, value_name = "N")]
    jobs: Option<usize>,
    /// Run shard I of N of the plan (0-based), e.g. as an array job; merge with `ctos merge`.
    #[arg(long, value_name = "I/N", value_parser = parse_shard, default_value = "0/1")]
    shard: (usize, usize),
    /// How each iteration picks programs and sequences from its random pools.
    #[arg(long, value_enum, default_value_t = Selection::Ctos)]
    selection: Selection,
    /// Program generator: csmith's defaults, or the paper's swarm variants.
    #[arg(long, value_enum, default_value_t = Generator::Csmith)]
    generator: Generator,
    /// Test these .c/.ll/.bc files instead of generated programs.
    #[arg(long, value_name = "DIR")]
    programs: Option<PathBuf>,
    /// Test these pipelines (one per line) instead of random sequences.
    #[arg(long, value_name = "FILE")]
    sequences: Option<PathBuf>,
    /// Catalog set random sequences draw from (unsafe passes are always left out).
    #[arg(long, value_name = "SET", default_value = "ctos")]
    pass_set: String,
    /// Leave out sequences where these passes occur in this order, e.g. "loop-unroll licm"
    /// (repeatable; the paper's Table 3 keeps known bugs from flooding a campaign).
    #[arg(long, value_name = "PASSES")]
    exclude: Vec<String>,
    /// Random sequences generated per iteration.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    seq_pool: usize,
    /// Sequences selected from them.
    #[arg(long, value_name = "N", default_value_t = 50)]
    seq_select: usize,
    /// Shortest and longest random sequence.
    #[arg(long, value_name = "MIN..MAX", default_value = "50..200", value_parser = parse_range)]
    seq_len: (usize, usize),
    /// csmith programs generated per iteration.
    #[arg(long, value_name = "N", default_value_t = 20)]
    prog_pool: usize,
    /// Programs selected from them (after screening for undefined behaviour).
    #[arg(long, value_name = "N", default_value_t = 4)]
    prog_select: usize,
    /// Minimum size of a csmith program in bytes (the paper: 80 KB).
    #[arg(long, value_name = "BYTES", default_value_t = 80_000)]
    min_size: usize,
    /// An LLVM option for every run (repeatable), e.g. --llvm-arg=-slp-threshold=-50.
    #[arg(long = "llvm-arg", value_name = "FLAG", allow_hyphen_values = true)]
    llvm_args: Vec<String>,
    /// Verify after each pass that changed the IR (changed), after every pass like
    /// `opt -verify-each` (every), or only after the whole sequence (off).
    #[arg(long, value_enum, value_name = "WHEN", default_value = "changed")]
    verify_each: VerifyEach,
    /// How bare passes share adaptors.
    #[arg(long, value_enum, default_value_t = Nesting::Grouped)]
    nesting: Nesting,
    /// Seconds one sequence may optimize (then: a performance bug).
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    opt_timeout: f64,
    /// Seconds code generation plus the program may take.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    exec_timeout: f64,
    /// Memory cap per child in MiB (then: a performance bug).
    #[arg(long, value_name = "MIB", default_value_t = 4096)]
    memory: u64,
    /// Also reduce each new bug's C program with cvise (kept as program.reduced.c).
    #[arg(long)]
    reduce_programs: bool,
    /// Seconds cvise may spend per bug.
    #[arg(long, value_name = "SECS", default_value_t = 300.0)]
    reduce_programs_time: f64,
}

fn parse_time(s: &str) -> Result<Duration, String> {
    let (number, unit) = s.split_at(s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len()));
    let n: f64 = number.parse().map_err(|_| format!("'{s}' is not a duration (e.g. 90s, 30m, 2h)"))?;
    let secs = match unit {
        "" | "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("unknown unit '{unit}' in '{s}' (s, m or h)")),
    };
    if secs <= 0.0 {
        return Err("the time limit must be positive".into());
    }
    Ok(Duration::from_secs_f64(secs))
}

fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let (i, n) = s.split_once('/').ok_or_else(|| format!("'{s}' is not I/N"))?;
    let (i, n): (usize, usize) = (i.parse().map_err(|_| "bad shard index")?, n.parse().map_err(|_| "bad shard count")?);
    if n == 0 || i >= n {
        return Err(format!("shard {i}/{n}: need 0 <= I < N"));
    }
    Ok((i, n))
}

fn parse_range(s: &str) -> Result<(usize, usize), String> {
    let (a, b) = s.split_once("..").ok_or_else(|| format!("'{s}' is not MIN..MAX"))?;
    let (a, b): (usize, usize) = (a.parse().map_err(|_| "bad minimum")?, b.parse().map_err(|_| "bad maximum")?);
    if a == 0 || a > b {
        return Err(format!("{a}..{b}: need 1 <= MIN <= MAX"));
    }
    Ok((a, b))
}

pub fn main(args: FuzzArgs) -> Result<ExitCode> {
    let jobs = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let run = RunOptions { time_limit: args.time_limit, jobs, status_line: true };
    if let Some(dir) = &args.resume {
        fuzz::resume(dir, run)?;
        fuzz::print_report(dir, false)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.seq_select == 0 || args.prog_select == 0 {
        bail!("--seq-select and --prog-select must be at least 1");
    }
    let config = CampaignConfig {
        seed: args.seed,
        selection: args.selection,
        generator: args.generator,
        programs_dir: args.programs.clone(),
        sequences_file: args.sequences.clone(),
        pass_set: args.pass_set.clone(),
        exclude: args.exclude.clone(),
        seq_pool: args.seq_pool.max(args.seq_select),
        seq_select: args.seq_select,
        seq_min: args.seq_len.0,
        seq_max: args.seq_len.1,
        prog_pool: args.prog_pool.max(args.prog_select),
        prog_select: args.prog_select,
        min_size: args.min_size,
        opt_timeout: args.opt_timeout,
        exec_timeout: args.exec_timeout,
        memory_mib: args.memory,
        llvm_args: args.llvm_args.clone(),
        verify_each: args.verify_each,
        nesting: args.nesting,
        reduce_programs: args.reduce_programs,
        reduce_programs_seconds: args.reduce_programs_time,
        shard: args.shard,
        max_iterations: args.iterations,
    };
    let dir = args.out.clone().expect("clap requires --out or --resume");
    fuzz::start(&dir, config, run)?;
    fuzz::print_report(&dir, false)?;
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
pub struct InterestingArgs {
    #[arg(long)]
    kind: String,
    #[arg(long, allow_hyphen_values = true)]
    signature: String,
    #[arg(long, allow_hyphen_values = true)]
    passes: String,
    #[arg(long, value_enum, default_value = "off")]
    verify_each: VerifyEach,
    #[arg(long = "llvm-arg", allow_hyphen_values = true)]
    llvm_args: Vec<String>,
    #[arg(long, default_value_t = 30.0)]
    opt_timeout: f64,
    #[arg(long, default_value_t = 10.0)]
    exec_timeout: f64,
    program: PathBuf,
}

pub fn interesting(args: InterestingArgs) -> Result<ExitCode> {
    let kind = serde_json::from_value(serde_json::Value::String(args.kind.clone()))
        .map_err(|_| anyhow::anyhow!("unknown failure kind '{}'", args.kind))?;
    let check = ctos::fuzz::cvise::Interesting {
        failure: ctos::oracle::Failure { kind, signature: args.signature },
        pipeline: args.passes,
        verify_each: args.verify_each,
        llvm_args: args.llvm_args,
        limits: ctos::sandbox::Limits {
            opt_timeout: Duration::from_secs_f64(args.opt_timeout),
            exec_timeout: Duration::from_secs_f64(args.exec_timeout),
            ..Default::default()
        },
    };
    Ok(if check.holds(&args.program)? { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
