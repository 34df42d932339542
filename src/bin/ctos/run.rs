use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context as _, Result};
use ctos::cli::{catalog_for, InputArgs, LimitArgs};
use ctos::coverage::{Coverage, Granularity, Summary};
use ctos::llvm::{Heap, VerifyEach};
use ctos::oracle::{observe, Observation};
use ctos::output as json;
use ctos::program::driver::{compare_calls, load_with_generated_driver, CallComparison};
use ctos::program::Subject;
use ctos::sandbox::{run_batch, signal_name, BatchItem, ExecMode, ExecStatus, Execution, JobSpec, Run};
use ctos::seq::{pipeline_lines, Nesting, RenderOptions, Sequence};
use indicatif::ProgressBar;
use serde::Serialize;

#[derive(clap::Args)]
#[command(after_help = "Exit status: 0 when every pipeline optimized the program without failing (and, \
with --exec, it ran as unoptimized); 1 when the tool worked and at least one pipeline crashed, hit a \
fatal error, broke the IR, timed out, ran out of memory, failed in code generation or (with --exec) \
miscompiled: what lit's `not` and scripts test; 2 when the command is misused or its input is bad.\n\n\
Pipelines are new-PM text (`function(loop-mssa(licm)),gvn`, `default<O2>`) or legacy \
flags (`-loop-unswitch -licm -gvn`). Bare passes are wrapped by their level: loop passes in \
function(loop(...)), licm/lnicm in function(loop-mssa(...)), and instcombine gets \
<no-verify-fixpoint>. The `pipeline` column shows exactly what ran; `opt-22 -passes='<it>'` \
runs the same.")]
pub struct RunArgs {
    #[command(flatten)]
    input: InputArgs,
    /// A pipeline to run (repeatable).
    #[arg(short = 'p', long = "passes", value_name = "PIPELINE", allow_hyphen_values = true)]
    passes: Vec<String>,
    /// A file with one pipeline per line ('-' reads standard input); '#' starts a comment.
    #[arg(long, value_name = "FILE")]
    seq_file: Option<PathBuf>,
    /// Also execute main (JIT) of each optimized module and of the unoptimized one. A
    /// module without main gets a generated driver (see --seed): each call of its functions
    /// is compared (value, memory written, poison observed, undefined behaviour).
    #[arg(long)]
    exec: bool,
    /// JSON Lines instead of the table: begin, the reference (with --exec), one `run`
    /// record per pipeline in input order, summary (see the README).
    #[arg(long)]
    json: bool,
    /// Write each optimized module to DIR/<index>.ll.
    #[arg(long, value_name = "DIR")]
    emit_ir: Option<PathBuf>,
    /// Also verify during the pipeline: after each pass that changed the IR (changed, the
    /// default of a bare --verify-each), or after every pass like opt -verify-each (every).
    #[arg(long, value_enum, value_name = "WHEN", num_args = 0..=1, default_value = "off", default_missing_value = "changed", require_equals = true)]
    verify_each: VerifyEach,
    /// How bare passes share adaptors.
    #[arg(long, value_enum, default_value_t = Nesting::Grouped)]
    nesting: Nesting,
    /// Keep instcombine's verify-fixpoint default (missing the fixpoint is then fatal).
    #[arg(long)]
    verify_fixpoint: bool,
    /// Record which LLVM code each pipeline ran, per function or per basic block, with
    /// hits per source file; with --json each `run` record gets a `coverage` object.
    #[arg(long, value_enum, value_name = "GRANULARITY")]
    coverage: Option<Granularity>,
    /// Seed of the inputs of the driver ctos generates, with --exec, for a module without
    /// main (it calls the module's functions and prints what each call returns and writes).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    limits: LimitArgs,
}

/// One `run` record of `--json`.
#[derive(Serialize)]
struct RunRecord<'a> {
    index: usize,
    pipeline: &'a str,
    outcome: &'static str,
    ir_hash: Option<String>,
    message: Option<&'a str>,
    /// The optimizer's signal for a crash, or the program's when it was killed.
    signal: Option<String>,
    /// The innermost LLVM frames of a crash, or of a hang where it was stopped.
    crash_frames: Option<&'a [String]>,
    instructions: Option<usize>,
    opt_ms: f64,
    #[serde(flatten)]
    exec: ExecRecord<'a>,
    /// Same status and output as the unoptimized program (null without --exec).
    matches_reference: Option<bool>,
    coverage: Option<Summary>,
    /// The heap of the run that gave this record: `strict` when ctos's strict heap shows its
    /// failure (plain `opt`, on glibc's own, may not).
    heap: Heap,
    /// What the pipeline needed, when LLVM's message says it broke a pass's precondition
    /// (a mistake in the pipeline, not a bug).
    pipeline_mistake: Option<&'static str>,
    /// With a driver ctos generated: how many calls agree with the unoptimized run, and
    /// each that does not (another value, poison observed, undefined behaviour).
    calls: Option<CallComparison>,
}

/// How an execution ended, in `run` and `reference` records; all null without one.
#[derive(Serialize, Default)]
struct ExecRecord<'a> {
    exec_status: Option<&'static str>,
    exit_code: Option<i32>,
    stdout: Option<&'a str>,
    exec_ms: Option<f64>,
}

impl<'a> ExecRecord<'a> {
    fn of(e: Option<&'a Execution>) -> ExecRecord<'a> {
        let Some(e) = e else { return ExecRecord::default() };
        ExecRecord {
            exec_status: Some(e.status.as_str()),
            exit_code: match e.status {
                ExecStatus::Exited(code) => Some(code),
                _ => None,
            },
            stdout: Some(&e.stdout),
            exec_ms: Some(round2(e.millis)),
        }
    }
}

#[derive(Serialize)]
struct ReferenceRecord<'a> {
    #[serde(flatten)]
    exec: ExecRecord<'a>,
    signal: Option<String>,
}

#[derive(Serialize)]
struct SummaryRecord {
    pipelines: usize,
    outcomes: BTreeMap<&'static str, usize>,
    seconds: f64,
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn program_signal(e: Option<&Execution>) -> Option<String> {
    match e?.status {
        ExecStatus::Signal(s) => Some(signal_name(s)),
        _ => None,
    }
}

/// The pipelines to run, each with where it came from (`--passes` or `FILE:LINE`).
fn read_pipelines(args: &RunArgs) -> Result<Vec<(String, String)>> {
    let mut texts: Vec<(String, String)> = args.passes.iter().map(|p| (p.clone(), "--passes".to_string())).collect();
    if let Some(path) = &args.seq_file {
        let (content, name) = if path.as_os_str() == "-" {
            let mut s = String::new();
            std::io::stdin().read_to_string(&mut s).context("reading pipelines from standard input")?;
            (s, "<stdin>".to_string())
        } else {
            let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
            (text, path.display().to_string())
        };
        texts.extend(pipeline_lines(&content).map(|(line, text)| (text.to_string(), format!("{name}:{line}"))));
    }
    if texts.is_empty() {
        bail!("no pipeline given: use --passes PIPELINE or --seq-file FILE");
    }
    Ok(texts)
}

pub fn main(args: RunArgs) -> Result<ExitCode> {
    // One program: its run may cost what tracking its whole code costs.
    ctos::sandbox::set_poison_tracking(ctos::sandbox::PoisonTracking::All);
    let started = std::time::Instant::now();
    let mut spec = args.input.spec()?;
    let catalog = catalog_for(&spec.llvm)?;
    let options = RenderOptions { nesting: args.nesting, verify_fixpoint: args.verify_fixpoint };
    let texts = read_pipelines(&args)?;
    let mut pipelines = Vec::with_capacity(texts.len());
    for (text, origin) in &texts {
        let seq = Sequence::parse_with(text, &catalog, &options).with_context(|| origin.clone())?;
        pipelines.push(ctos::seq::render_with(&seq, &catalog, &options)?);
    }
    let mut input = Subject::load(&spec, args.limits.jobs(), args.limits.limits())?;
    if args.exec && !input.module.for_host() {
        bail!(
            "--exec runs programs on this host ({}), but {} is for {}: drop --exec to optimize it for its target",
            ctos::llvm::host_triple(),
            args.input.program.display(),
            input.module.triple()
        );
    }
    input.check(&pipelines).map_err(|r| r.located(|index| texts[index].1.clone()))?;
    if let Some(dir) = &args.emit_ir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let scratch = tempfile::Builder::new().prefix("ctos-run-").tempdir()?;
    let mut generated = false;
    if args.exec {
        let path = args.emit_ir.as_deref().unwrap_or(scratch.path()).join("driver.ll");
        let (jobs, limits) = (args.limits.jobs(), args.limits.limits());
        let (loaded, driver) = load_with_generated_driver(&mut spec, input, jobs, limits, args.seed, &path)
            .with_context(|| format!("--exec: {} defines no main function", args.input.program.display()))?;
        input = loaded;
        if let Some(driver) = driver {
            generated = true;
            eprintln!(
                "note: {} defines no main: a generated driver makes {} calls of its functions ({}{})",
                args.input.program.display(),
                driver.calls,
                path.display(),
                if args.emit_ir.is_some() { "" } else { ", removed at the end; --emit-ir DIR keeps it" }
            );
        }
    }

    let reference = if args.exec { Some(reference(&mut input)?) } else { None };
    if args.json {
        json::begin("ctos run", None, &input.pool.llvm())?;
        if let Some(r) = &reference {
            json::emit(
                "reference",
                &ReferenceRecord { exec: ExecRecord::of(Some(r)), signal: program_signal(Some(r)) },
            )?;
        }
    }
    let triple = input.module.triple();
    let coverage = args.coverage.map(|g| Coverage::arm_for(&mut input.pool, g, Some(&triple))).transpose()?;
    if let Some(note) = coverage.and_then(|c| c.sites.attribution.unattributed_note.as_deref()) {
        eprintln!("note: coverage without source files for {note}");
    }
    let progress = progress_bar(pipelines.len(), args.json);
    let exec = if args.exec { ExecMode::Always } else { ExecMode::Never };
    let items = pipelines.iter().enumerate().map(|(index, p)| BatchItem {
        index,
        job: JobSpec {
            verify_each: args.verify_each,
            emit_ir: args.emit_ir.is_some(),
            exec,
            observe: coverage.is_some(),
            ..JobSpec::optimize(p.clone())
        },
    });
    // Runs finish out of order; print in input order.
    let mut ready: BTreeMap<usize, Run> = BTreeMap::new();
    let mut next = 0;
    let mut out = std::io::stdout().lock();
    if !args.json {
        print_header(&mut out, args.exec)?;
    }
    let mut write_error = None;
    let mut failed = false;
    let mut outcomes: BTreeMap<&'static str, usize> = BTreeMap::new();
    run_batch(&mut input.pool, &mut input.module, items, |index, run| {
        progress.inc(1);
        ready.insert(index, run);
        while let Some(run) = ready.remove(&next) {
            *outcomes.entry(run.outcome.as_str()).or_default() += 1;
            failed |= compiler_failed(&run, reference.as_ref());
            let summary = coverage.zip(run.trace.as_deref()).map(|(c, t)| c.spectrum(t).summary(c.sites));
            let judged = Judged { reference: reference.as_ref(), generated, coverage: summary };
            let result = emit(&mut out, &args, next, &pipelines[next], &run, judged);
            if let Err(e) = result {
                write_error.get_or_insert(e);
            }
            next += 1;
        }
    })?;
    progress.finish_and_clear();
    if let Some(e) = write_error {
        return Err(e);
    }
    if args.json {
        let seconds = round2(started.elapsed().as_secs_f64());
        json::emit("summary", &SummaryRecord { pipelines: pipelines.len(), outcomes, seconds })?;
    }
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The unoptimized program's execution, with a warning when it does not end cleanly.
fn reference(input: &mut ctos::program::Subject) -> Result<Execution> {
    let execution = input.reference()?;
    if execution.status != ExecStatus::Exited(0) {
        eprintln!("warning: the unoptimized program {}; outputs are compared anyway", execution.status.describe());
    }
    Ok(execution)
}

fn progress_bar(len: usize, json: bool) -> ProgressBar {
    ctos::output::progress_bar(
        Some(len as u64),
        "{bar:40} {pos}/{len} pipelines, {per_sec}, eta {eta}",
        len < 2 || json,
    )
}

fn print_header(out: &mut impl Write, exec: bool) -> Result<()> {
    if exec {
        writeln!(
            out,
            "{:>4}  {:<10}  {:<16}  {:>8}  {:<12}  {:<6}  pipeline",
            "#", "outcome", "ir_hash", "opt_ms", "exec", "stdout"
        )?;
    } else {
        writeln!(out, "{:>4}  {:<10}  {:<16}  {:>8}  pipeline", "#", "outcome", "ir_hash", "opt_ms")?;
    }
    Ok(())
}

/// Whether an optimized program's run ended and printed as the unoptimized one's.
fn same_as_reference(run: &Execution, reference: &Execution) -> bool {
    run.status == reference.status && run.stdout == reference.stdout
}

/// Whether the compiler failed on this pipeline: any outcome but ok, or (with --exec) a
/// program that ends or prints otherwise than unoptimized.
fn compiler_failed(run: &Run, reference: Option<&Execution>) -> bool {
    let differs = run.execution.as_ref().zip(reference).is_some_and(|(e, r)| !same_as_reference(e, r));
    run.outcome != ctos::sandbox::Outcome::Ok || differs
}

/// Differing calls the table shows per run.
const SHOWN_CALLS: usize = 5;

/// What a run is judged against, and what came with it.
struct Judged<'a> {
    reference: Option<&'a Execution>,
    /// The program's driver is one ctos generated: its calls are compared one by one.
    generated: bool,
    coverage: Option<Summary>,
}

fn emit(out: &mut impl Write, args: &RunArgs, index: usize, pipeline: &str, run: &Run, judged: Judged) -> Result<()> {
    let Judged { reference, generated, coverage } = judged;
    if let (Some(dir), Some(ir)) = (&args.emit_ir, &run.ir) {
        let path = dir.join(format!("{index:04}.ll"));
        std::fs::write(&path, ir).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let hash = run.ir_hash.map(|h| format!("{h:016x}"));
    let execution = run.execution.as_ref();
    let mistake = match observe(run, reference) {
        Observation::Misuse(needed) => Some(needed),
        _ => None,
    };
    let matches_reference = execution.zip(reference).map(|(e, r)| same_as_reference(e, r));
    let calls = execution.zip(reference).filter(|_| generated).map(|(e, r)| compare_calls(&e.stdout, &r.stdout));
    if args.json {
        let record = RunRecord {
            index,
            pipeline,
            outcome: run.outcome.as_str(),
            ir_hash: hash,
            message: run.message.as_deref(),
            // A hang's stack comes from a signal ctos sent: no signal of the optimizer's own.
            signal: run
                .crash
                .as_ref()
                .filter(|_| run.outcome == ctos::sandbox::Outcome::Crash)
                .map(|c| signal_name(c.signal))
                .or_else(|| program_signal(execution)),
            crash_frames: run.crash.as_ref().map(|c| c.frames.as_slice()),
            instructions: run.instructions,
            opt_ms: round2(run.opt_millis),
            exec: ExecRecord::of(execution),
            matches_reference,
            coverage,
            heap: run.heap,
            pipeline_mistake: mistake,
            calls,
        };
        json::emit("run", &record)?;
    } else {
        let hash = hash.unwrap_or_else(|| "-".into());
        if args.exec {
            let status = execution.map_or("-".to_string(), |e| match &e.status {
                ExecStatus::Exited(code) => format!("exit {code}"),
                ExecStatus::Signal(s) => signal_name(*s),
                other => other.as_str().to_string(),
            });
            let same = match matches_reference {
                Some(true) => "=ref",
                Some(false) => "DIFF",
                None => "-",
            };
            let status: String = status.chars().take(12).collect();
            writeln!(
                out,
                "{index:>4}  {:<10}  {hash:<16}  {:>8.1}  {status:<12}  {same:<6}  {pipeline}",
                run.outcome.as_str(),
                run.opt_millis
            )?;
        } else {
            writeln!(out, "{index:>4}  {:<10}  {hash:<16}  {:>8.1}  {pipeline}", run.outcome.as_str(), run.opt_millis)?;
        }
        if let Some(message) = &run.message {
            writeln!(out, "      {message}")?;
        }
        if run.heap == Heap::Strict {
            writeln!(out, "      on ctos's strict heap (poison in freed and fresh memory): plain opt may not show it")?;
        }
        if let Some(needed) = mistake {
            writeln!(out, "      a mistake in the pipeline, not a bug: {needed}")?;
        }
        if let Some(calls) = calls.filter(|c| !c.differ.is_empty()) {
            let n = calls.differ.len();
            writeln!(out, "      calls: {} agree, {n} {}", calls.agree, if n == 1 { "differs" } else { "differ" })?;
            for sentence in calls.differ.iter().take(SHOWN_CALLS) {
                writeln!(out, "        {sentence}")?;
            }
            if n > SHOWN_CALLS {
                writeln!(out, "        … and {} more (--json lists all)", n - SHOWN_CALLS)?;
            }
        }
        if let Some(c) = coverage {
            writeln!(out, "      covered {} {} in {} files", c.elements, c.granularity, c.files.len())?;
        }
    }
    out.flush()?;
    Ok(())
}
