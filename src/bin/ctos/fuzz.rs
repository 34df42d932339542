use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};
use clap::parser::ValueSource;
use clap::ArgMatches;
use ctos::cli::{bounded, default_jobs, jobs, memory_mib, parse_duration, parse_duration_or_off};
use ctos::fuzz::{self, CampaignConfig, Resumed, RunOptions, Selection};
use ctos::llvm::{CheckedAnalysis, VerifyEach};
use ctos::output;
use ctos::program::{Generator, GeneratorMix};
use ctos::sandbox::Llvm;
use ctos::seq::Nesting;

#[derive(clap::Args)]
#[command(after_help = "A campaign folder holds campaign.sqlite (plan, pairs done, failures, bugs), \
stats.json (rewritten while running), programs/ and bugs/NNNN-<type>-<pass>/ (program, reduced \
sequence, outcome, README with the opt and ctos commands that reproduce it). Everything given is \
checked before the folder is made. Interrupt a campaign any time; --resume DIR continues it without \
redoing or losing work, with its stored configuration: --time-limit, --iterations (that many more) and \
-j apply to the resumed run, and a flag that would change the configuration is refused.\n\nExamples:\n  \
ctos fuzz --out camp --time-limit 30m\n  ctos fuzz --resume camp --time-limit 1h\n  \
ctos fuzz --out shard3 --shard 3/8 --seed 7 --sync /shared/causes   # array job task 3 of 8\n  \
ctos merge --out all shard0 shard1 ...\n  ctos report camp")]
pub struct FuzzArgs {
    /// New campaign folder.
    #[arg(long, value_name = "DIR", required_unless_present = "resume", conflicts_with = "resume")]
    out: Option<PathBuf>,
    /// Continue the campaign in DIR (its stored configuration applies).
    #[arg(long, value_name = "DIR")]
    resume: Option<PathBuf>,
    /// Stop after this long (90s, 30m, 2h); without it, run until interrupted.
    #[arg(long, value_name = "TIME", value_parser = parse_duration, allow_hyphen_values = true)]
    time_limit: Option<Duration>,
    /// Stop after this many iterations (with --resume: this many more).
    #[arg(long, value_name = "N", value_parser = |s: &str| bounded(s, 1usize, 1_000_000))]
    iterations: Option<usize>,
    /// Seed of every random choice (sequences, programs, embeddings, selection).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Children running at once, from 1 to 1024 [default: number of CPUs].
    #[arg(short = 'j', long, value_name = "N", value_parser = jobs)]
    jobs: Option<usize>,
    /// Run shard I of N of the plan (0-based), e.g. as an array job; merge with `ctos merge`.
    #[arg(long, value_name = "I/N", value_parser = parse_shard, default_value = "0/1")]
    shard: (usize, usize),
    /// Share causes with the other shards through DIR, a folder they all see (made if
    /// missing): each shard publishes its bugs' keys, reduced sequences and programs there
    /// and reads the others', so no two shards report one cause.
    #[arg(long, value_name = "DIR")]
    sync: Option<PathBuf>,
    /// How each iteration picks programs and sequences from its random pools.
    #[arg(long, value_enum, default_value_t = Selection::Ctos)]
    selection: Selection,
    /// Program generators, one or a mix sharing each iteration's pool (csmith,llvm-stress):
    /// csmith (its defaults), swarm and swarm-v (the CTOS paper's swarm variants), hermes
    /// (live-code EMI variants of clean csmith programs, 10 per program, each must print its
    /// output), llvm-stress (LLVM's random IR: vectors, odd widths; no main, so crash,
    /// invalid-IR and fatal oracles only), ir-mutate (IR mutants of csmith programs, of
    /// --programs, and of the campaign's bug reproducers; those whose edits keep the program's
    /// behaviour are run), seeds (the modules of --seeds, under their own RUN pipelines and
    /// options, then others). `ctos report` says what each found. [default: csmith; with
    /// --seeds: seeds]
    #[arg(long, value_name = "NAMES", value_parser = GeneratorMix::parse)]
    generator: Option<GeneratorMix>,
    /// Fuzz from LLVM's regression tests (repeatable): lit files (`; RUN: opt …` lines,
    /// then the module; point it at llvm-project/llvm/test/Transforms/X) and plain .ll/.bc
    /// files. Each runs its RUN lines' pipelines with their options (-mtriple=, -mattr=,
    /// thresholds), perturbed versions of them, and the iteration's sequences; with
    /// --generator seeds,ir-mutate its IR mutants too, under the same options. Seeds this
    /// LLVM cannot read or run are counted and left out.
    #[arg(long, value_name = "DIR")]
    seeds: Vec<PathBuf>,
    /// Test these .c/.ll/.bc files instead of generated programs (with --generator
    /// ir-mutate: test IR mutants of them).
    #[arg(long, value_name = "DIR")]
    programs: Option<PathBuf>,
    /// Test these pipelines (one per line, '#' comments) instead of random sequences.
    #[arg(long, value_name = "FILE")]
    sequences: Option<PathBuf>,
    /// Catalog set random sequences draw from (unsafe passes are always left out): ctos
    /// (the CTOS paper's), production (what this LLVM's default and LTO pipelines run, with
    /// their parameters), o3, locseq, safe; `ctos passes --set NAME` lists one.
    #[arg(long, value_name = "SET", default_value = "ctos")]
    pass_set: String,
    /// Leave out sequences where these passes occur in this order, e.g. "loop-unroll licm"
    /// (repeatable; the paper's Table 3 keeps known bugs from flooding a campaign).
    #[arg(long, value_name = "PASSES")]
    exclude: Vec<String>,
    /// Read more --exclude patterns from FILE, one per line ('#' comments), e.g. the
    /// paper's Table 3 in passes/table3.txt, or a list shared by campaigns and shards.
    #[arg(long, value_name = "FILE")]
    exclude_file: Vec<PathBuf>,
    /// Keep generating sequences that contain the reduced sequence of a bug the campaign
    /// has found (by default a known cause leaves the generator, so that later iterations
    /// look for new ones).
    #[arg(long)]
    keep_known: bool,
    /// Random sequences generated per iteration.
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = |s: &str| bounded(s, 1usize, 1_000_000))]
    seq_pool: usize,
    /// Sequences selected from them; every selected program is tested against each. A
    /// program costs seconds to generate, compile and embed, a pair a tenth of one: more
    /// sequences per program is cheaper end to end.
    #[arg(long, value_name = "N", default_value_t = ctos::fuzz::DEFAULT_SEQ_SELECT, value_parser = |s: &str| bounded(s, 1usize, 1_000_000))]
    seq_select: usize,
    /// Shortest and longest random sequence.
    #[arg(long, value_name = "MIN..MAX", default_value = "50..200", value_parser = parse_range)]
    seq_len: (usize, usize),
    /// Programs generated per iteration (with --generator hermes: EMI variants, 10 per csmith program).
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = |s: &str| bounded(s, 1usize, 100_000))]
    prog_pool: usize,
    /// Programs selected from them.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = |s: &str| bounded(s, 1usize, 100_000))]
    prog_select: usize,
    /// Minimum size of a csmith program in bytes [default: 80 KB, as the CTOS paper; with
    /// --generator hermes none, as the Hermes paper: its variants of an 80 KB program made
    /// single pipelines run for tens of seconds]
    #[arg(long, value_name = "BYTES", value_parser = |s: &str| bounded(s, 0usize, 100_000_000))]
    min_size: Option<usize>,
    /// An LLVM option for every run (repeatable), e.g. --llvm-arg=-slp-threshold=-50.
    #[arg(long = "llvm-arg", value_name = "FLAG", allow_hyphen_values = true)]
    llvm_args: Vec<String>,
    /// Verify after each pass that changed the IR (changed, also a bare --verify-each),
    /// after every pass like `opt -verify-each` (every), or only after the whole sequence
    /// (off). Written --verify-each=WHEN, as for `ctos run`.
    #[arg(long, value_enum, value_name = "WHEN", num_args = 0..=1, default_value = "changed", default_missing_value = "changed", require_equals = true)]
    verify_each: VerifyEach,
    /// After each pass that changed the IR, check the analyses it kept against the IR, as an
    /// LLVM built with assertions does under -verify-scev, -verify-dom-info and
    /// -verify-loop-info (release builds compile those checks out): scev, domtree, loops,
    /// comma-separated. A stale analysis is a crash (scev: in ScalarEvolution::verify) or a
    /// fatal error naming the pass.
    #[arg(long, value_enum, value_name = "ANALYSES", value_delimiter = ',')]
    check_preserved: Vec<CheckedAnalysis>,
    /// How bare passes share adaptors.
    #[arg(long, value_enum, default_value_t = Nesting::Grouped)]
    nesting: Nesting,
    /// Time one sequence may optimize (then: a performance bug).
    #[arg(long, value_name = "TIME", default_value = "30", value_parser = parse_duration, allow_hyphen_values = true)]
    opt_timeout: Duration,
    /// Time code generation plus the program may take.
    #[arg(long, value_name = "TIME", default_value = "10", value_parser = parse_duration, allow_hyphen_values = true)]
    exec_timeout: Duration,
    /// Memory cap per child in MiB, from 64 to 1048576 (then: a performance bug).
    #[arg(long, value_name = "MIB", default_value_t = 4096, value_parser = memory_mib)]
    memory: u64,
    /// Also reduce each new bug's C program with cvise (kept as program.reduced.c).
    #[arg(long)]
    reduce_programs: bool,
    /// Time cvise may spend per bug.
    #[arg(long, value_name = "TIME", default_value = "300", value_parser = parse_duration, allow_hyphen_values = true)]
    reduce_programs_time: Duration,
    /// Time llvm-reduce may spend reducing each new bug's program as IR (kept as reduced.ll,
    /// the README's first command); 0 turns IR reduction off.
    #[arg(long, value_name = "TIME", default_value = "3m", value_parser = parse_duration_or_off, allow_hyphen_values = true)]
    reduce_ir_time: Duration,
    /// Time `locseq isolate` may spend on each new bug (its culprit pass and top files go
    /// into the README, the report and ISSUE.md); 0 turns it off.
    #[arg(long, value_name = "TIME", default_value = "60", value_parser = parse_duration_or_off, allow_hyphen_values = true)]
    localize_time: Duration,
    /// Also re-run each bug on this `opt` (repeatable: opt-19, llvm-23/bin/opt) to say
    /// which LLVMs it fires on.
    #[arg(long, value_name = "PATH")]
    also_opt: Vec<PathBuf>,
    /// Print the report as JSON Lines (see the README) instead of a table.
    #[arg(long)]
    json: bool,
    /// Test this `opt` (your LLVM build: trunk, assertions on) instead of the linked LLVM,
    /// through ctos's agent; its passes are read from its -print-passes.
    #[arg(long, value_name = "PATH")]
    opt: Option<PathBuf>,
}

/// The flags that make up a campaign's stored configuration: (argument id, the config
/// keys it sets). On --resume, one given with another value than stored is refused.
const CONFIG_FLAGS: &[(&str, &[&str])] = &[
    ("seed", &["seed"]),
    ("shard", &["shard"]),
    ("sync", &["sync"]),
    ("selection", &["selection"]),
    ("generator", &["generator"]),
    ("programs", &["programs_dir"]),
    ("seeds", &["seeds_dirs"]),
    ("sequences", &["sequences_file"]),
    ("pass_set", &["pass_set"]),
    ("exclude", &["exclude"]),
    ("exclude_file", &["exclude"]),
    ("keep_known", &["keep_known"]),
    ("seq_pool", &["seq_pool"]),
    ("seq_select", &["seq_select"]),
    ("seq_len", &["seq_min", "seq_max"]),
    ("prog_pool", &["prog_pool"]),
    ("prog_select", &["prog_select"]),
    ("min_size", &["min_size"]),
    ("llvm_args", &["llvm_args"]),
    ("verify_each", &["verify_each"]),
    ("check_preserved", &["check_preserved"]),
    ("nesting", &["nesting"]),
    ("opt_timeout", &["opt_timeout"]),
    ("exec_timeout", &["exec_timeout"]),
    ("memory", &["memory_mib"]),
    ("reduce_programs", &["reduce_programs"]),
    ("reduce_programs_time", &["reduce_programs_seconds"]),
    ("reduce_ir_time", &["reduce_ir_seconds"]),
    ("localize_time", &["localize_seconds"]),
    ("also_opt", &["also_opt"]),
    ("opt", &["opt"]),
];

fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("'{s}' is not a shard: expected I/N with 0 <= I < N, like 3/8");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

fn parse_range(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("'{s}' is not a length range: expected MIN..MAX with 1 <= MIN <= MAX, like 50..200");
    let (a, b) = s.split_once("..").ok_or_else(bad)?;
    let (a, b): (usize, usize) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
    if a == 0 || a > b || b > 100_000 {
        return Err(bad());
    }
    Ok((a, b))
}

/// A path as the campaign stores it: absolute, so a resume from elsewhere finds it.
fn absolute(path: &Option<PathBuf>) -> Option<PathBuf> {
    path.as_ref().map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
}

/// The patterns of `--exclude` and of each `--exclude-file`, in that order.
fn exclude_patterns(args: &FuzzArgs) -> Result<Vec<String>> {
    let mut patterns = args.exclude.clone();
    for file in &args.exclude_file {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("--exclude-file {}: cannot read it", file.display()))?;
        let lines = text.lines().map(|l| l.split('#').next().unwrap_or("").trim()).filter(|l| !l.is_empty());
        patterns.extend(lines.map(str::to_string));
    }
    Ok(patterns)
}

/// The mix given, else what the other flags imply: seeds with --seeds, else csmith.
fn generators_of(args: &FuzzArgs) -> GeneratorMix {
    let implied = if args.seeds.is_empty() { Generator::Csmith } else { Generator::Seeds };
    args.generator.clone().unwrap_or_else(|| GeneratorMix::one(implied))
}

/// `--sync` must be a folder (or nothing yet) of its own: shards write their causes there,
/// a campaign its own files in `--out`.
fn check_sync(sync: &Path, out: Option<&Path>) -> Result<()> {
    match (std::fs::symlink_metadata(sync), std::fs::metadata(sync)) {
        (Ok(_), Err(_)) => bail!("--sync {}: a link to nothing; point it at a folder", sync.display()),
        (_, Ok(m)) if !m.is_dir() => bail!("--sync {}: not a folder", sync.display()),
        _ => {}
    }
    let full = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    if let Some(out) = out.filter(|o| full(o).starts_with(full(sync)) || full(sync).starts_with(full(o))) {
        bail!(
            "--sync {} and --out {} overlap; give the shards' shared folder apart from each campaign's",
            sync.display(),
            out.display()
        );
    }
    Ok(())
}

fn config_of(args: &FuzzArgs) -> Result<CampaignConfig> {
    // The configuration is stored as JSON text, which holds only UTF-8 paths.
    let paths = [
        ("--programs", &args.programs),
        ("--sequences", &args.sequences),
        ("--sync", &args.sync),
        ("--opt", &args.opt),
    ];
    let also = args.also_opt.iter().map(|p| ("--also-opt", p)).chain(args.seeds.iter().map(|p| ("--seeds", p)));
    for (flag, path) in paths.iter().filter_map(|(f, p)| Some((*f, p.as_ref()?))).chain(also) {
        if path.to_str().is_none() {
            bail!(
                "{flag} {}: a path that is not UTF-8; the campaign records it as text (rename it, or link to it)",
                path.to_string_lossy()
            );
        }
    }
    if let Some(sync) = &args.sync {
        check_sync(sync, args.out.as_deref())?;
    }
    Ok(CampaignConfig {
        seed: args.seed,
        selection: args.selection,
        generator: generators_of(args),
        seeds_dirs: args.seeds.iter().map(|p| absolute(&Some(p.clone())).unwrap_or_else(|| p.clone())).collect(),
        programs_dir: absolute(&args.programs),
        sequences_file: absolute(&args.sequences),
        pass_set: args.pass_set.clone(),
        exclude: exclude_patterns(args)?,
        keep_known: args.keep_known,
        seq_pool: args.seq_pool.max(args.seq_select),
        seq_select: args.seq_select,
        seq_min: args.seq_len.0,
        seq_max: args.seq_len.1,
        prog_pool: args.prog_pool.max(args.prog_select),
        prog_select: args.prog_select,
        min_size: args.min_size.unwrap_or(if generators_of(args).has(Generator::Hermes) { 0 } else { 80_000 }),
        opt_timeout: args.opt_timeout.as_secs_f64(),
        exec_timeout: args.exec_timeout.as_secs_f64(),
        memory_mib: args.memory,
        llvm_args: args.llvm_args.clone(),
        verify_each: args.verify_each,
        check_preserved: args.check_preserved.clone(),
        nesting: args.nesting,
        reduce_programs: args.reduce_programs,
        reduce_programs_seconds: args.reduce_programs_time.as_secs_f64(),
        reduce_ir_seconds: args.reduce_ir_time.as_secs_f64(),
        localize_seconds: args.localize_time.as_secs_f64(),
        also_opt: args.also_opt.iter().map(|p| absolute(&Some(p.clone())).unwrap_or_else(|| p.clone())).collect(),
        shard: args.shard,
        // Made when the campaign starts: named from the root, so a resume from elsewhere finds it.
        sync: args.sync.clone().map(|p| std::path::absolute(&p).unwrap_or(p)),
        opt: absolute(&args.opt),
        max_iterations: args.iterations,
    })
}

/// The configuration flags given on this command line whose values differ from `stored`.
fn changed_flags(args: &FuzzArgs, matches: &ArgMatches, stored: &CampaignConfig) -> Result<Vec<String>> {
    let given = serde_json::to_value(config_of(args)?).unwrap_or_default();
    let stored = serde_json::to_value(stored).unwrap_or_default();
    let mut changed = Vec::new();
    for (id, keys) in CONFIG_FLAGS {
        if matches.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        if keys.iter().any(|k| given[k] != stored[k]) {
            let stored_values: Vec<String> = keys.iter().map(|k| stored[k].to_string()).collect();
            changed.push(format!("--{} (stored: {})", id.replace('_', "-"), stored_values.join(", ")));
        }
    }
    Ok(changed)
}

pub fn main(args: FuzzArgs, matches: &ArgMatches) -> Result<ExitCode> {
    let run =
        RunOptions { time_limit: args.time_limit, jobs: args.jobs.unwrap_or_else(default_jobs), status_line: true };
    let dir = match &args.resume {
        Some(dir) => {
            let changed = changed_flags(&args, matches, &fuzz::stored_config(dir)?)?;
            if !changed.is_empty() {
                bail!(
                    "a resumed campaign keeps its configuration, and {} would change it; drop the flag, \
                     or start a new campaign with --out",
                    changed.join(", ")
                );
            }
            if let Resumed::AlreadyDone { iterations } = fuzz::resume(dir, run, args.iterations)? {
                eprintln!(
                    "note: the campaign has done its {iterations} iterations; extend it with --iterations N or --time-limit TIME"
                );
            }
            dir.clone()
        }
        None => {
            let dir = args.out.clone().context("give --out DIR for a new campaign, or --resume DIR")?;
            fuzz::start(&dir, config_of(&args)?, run)?;
            dir
        }
    };
    if args.json {
        let (version, opt) = fuzz::stored_llvm(&dir)?;
        output::begin_on("ctos fuzz", Some(fuzz::stored_config(&dir)?.seed), &version, opt.as_deref())?;
    }
    fuzz::print_report(&dir, args.json)?;
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
#[command(after_help = "Exit status: 0 when PROGRAM still fails this way, 1 when it does not (it passes, \
fails otherwise, or no longer parses), 2 when the command is misused. Every bug folder's README \
shows the line ctos fuzz reduced it with.\n\nExample:\n  ctos interesting --kind crash --signature \
'SIGSEGV in llvm::LoopInfo::erase' --passes 'function(loop-extract)' reduced.ll")]
pub struct InterestingArgs {
    /// The failure's kind: crash, fatal, invalid-ir, timeout, oom, codegen or wrong-code.
    #[arg(long)]
    kind: String,
    /// The failure's signature as ctos reports it (a bug folder's outcome.json): the one
    /// failure of that kind that counts.
    #[arg(long, allow_hyphen_values = true)]
    signature: String,
    /// The pipeline, as `opt -passes=` takes it.
    #[arg(long, allow_hyphen_values = true)]
    passes: String,
    /// When the verifier runs (off: after the whole pipeline).
    #[arg(long, value_enum, default_value = "off")]
    verify_each: VerifyEach,
    /// An LLVM option, as opt takes it (repeatable): `--llvm-arg=-slp-threshold=-50`.
    #[arg(long = "llvm-arg", allow_hyphen_values = true)]
    llvm_args: Vec<String>,
    #[arg(long, default_value = "30", value_parser = parse_duration, allow_hyphen_values = true)]
    opt_timeout: Duration,
    #[arg(long, default_value = "10", value_parser = parse_duration, allow_hyphen_values = true)]
    exec_timeout: Duration,
    /// Run the pipeline in this opt (your LLVM build) instead of the linked LLVM.
    #[arg(long, value_name = "PATH")]
    opt: Option<PathBuf>,
    /// A crash inside this pass is the failure whatever its top frame.
    #[arg(long)]
    culprit: Option<String>,
    /// What the unoptimized IR program must keep doing (JSON, written by ctos fuzz).
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// Copy PROGRAM here when it holds and is smaller than what is here.
    #[arg(long, value_name = "FILE")]
    keep_smallest: Option<PathBuf>,
    /// Link this module after optimization (the driver of IR without `main`).
    #[arg(long, value_name = "FILE")]
    driver: Option<PathBuf>,
    /// The program to test (IR or C): what cvise or llvm-reduce has made of the reproducer.
    program: PathBuf,
}

pub fn interesting(args: InterestingArgs) -> Result<ExitCode> {
    if let Some(driver) = args.driver.as_deref().filter(|d| !d.is_file()) {
        anyhow::bail!("--driver {}: no such file", driver.display());
    }
    if let Some(keep) = args.keep_smallest.as_deref().filter(|k| k.exists() && !k.is_file()) {
        anyhow::bail!("--keep-smallest {}: not a file", keep.display());
    }
    let kind = ctos::oracle::FailureKind::parse(&args.kind)
        .with_context(|| format!("unknown failure kind '{}'", args.kind))?;
    let baseline = match &args.baseline {
        Some(path) => Some(
            serde_json::from_str(
                &std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?,
            )
            .with_context(|| format!("{}: not a baseline written by ctos fuzz", path.display()))?,
        ),
        None => None,
    };
    let check = ctos::fuzz::interesting::Interesting {
        failure: ctos::oracle::Failure { kind, signature: args.signature },
        pipeline: args.passes,
        verify_each: args.verify_each,
        llvm_args: args.llvm_args,
        limits: ctos::sandbox::Limits {
            opt_timeout: args.opt_timeout,
            exec_timeout: args.exec_timeout,
            ..Default::default()
        },
        llvm: Llvm::from_opt(args.opt.as_deref())?,
        culprit: args.culprit,
        baseline,
        keep_smallest: args.keep_smallest,
        driver: args.driver,
    };
    Ok(if check.check(&args.program)? { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
