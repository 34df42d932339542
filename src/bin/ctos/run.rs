use std::collections::BTreeMap;
use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context as _, Result};
use ctos::cli::{load_input, validate, InputArgs, LimitArgs};
use ctos::coverage::{Coverage, Granularity, Summary};
use ctos::llvm::VerifyEach;
use ctos::sandbox::{run_batch, signal_name, BatchItem, ExecMode, ExecStatus, Execution, JobSpec, Pool, Run};
use ctos::seq::{Catalog, Nesting, RenderOptions, Sequence};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

#[derive(clap::Args)]
#[command(after_help = "Pipelines are new-PM text (`function(loop-mssa(licm)),gvn`, `default<O2>`) or legacy \
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
    /// Also execute main (JIT) of each optimized module and of the unoptimized one.
    #[arg(long)]
    exec: bool,
    /// One JSON object per pipeline, one per line, in input order.
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
    /// Record which LLVM code each pipeline ran, per source file (`files`), per function
    /// or per basic block; with --json each line gets a `coverage` object.
    #[arg(long, value_enum, value_name = "GRANULARITY")]
    coverage: Option<Granularity>,
    #[command(flatten)]
    limits: LimitArgs,
}

#[derive(Serialize)]
struct Line<'a> {
    index: usize,
    pipeline: &'a str,
    outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    ir_hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    signal: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    crash_frames: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<usize>,
    opt_ms: f64,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    exec: Option<ExecFields<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    coverage: Option<Summary>,
}

#[derive(Serialize)]
struct ExecFields<'a> {
    exec_status: String,
    exit_code: Option<i32>,
    stdout: &'a str,
    exec_ms: f64,
    reference_exit_code: Option<i32>,
    reference_stdout: &'a str,
}

fn read_pipelines(args: &RunArgs) -> Result<Vec<String>> {
    let mut texts = args.passes.clone();
    if let Some(path) = &args.seq_file {
        let content = if path.as_os_str() == "-" {
            let mut s = String::new();
            std::io::stdin().read_to_string(&mut s).context("reading pipelines from standard input")?;
            s
        } else {
            std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?
        };
        texts.extend(
            content
                .lines()
                .map(|l| l.split('#').next().unwrap_or("").trim())
                .filter(|l| !l.is_empty())
                .map(str::to_string),
        );
    }
    if texts.is_empty() {
        bail!("no pipeline given: use --passes PIPELINE or --seq-file FILE");
    }
    Ok(texts)
}

fn status_text(status: &ExecStatus) -> (String, Option<i32>) {
    match status {
        ExecStatus::Exited(code) => ("exited".into(), Some(*code)),
        ExecStatus::Signal(s) => (format!("signal {}", signal_name(*s)), None),
        ExecStatus::Timeout => ("timeout".into(), None),
        ExecStatus::Oom => ("oom".into(), None),
        ExecStatus::CodegenError(m) => (format!("codegen-error: {m}"), None),
    }
}

pub fn main(args: RunArgs) -> Result<ExitCode> {
    let catalog = Catalog::for_llvm(ctos::llvm::version().0)?;
    let options = RenderOptions { nesting: args.nesting, verify_fixpoint: args.verify_fixpoint };
    let texts = read_pipelines(&args)?;
    let mut pipelines = Vec::with_capacity(texts.len());
    for (i, text) in texts.iter().enumerate() {
        let seq = Sequence::parse_with(text, &catalog, &options).with_context(|| {
            if texts.len() > 1 {
                format!("pipeline {} ({text})", i + 1)
            } else {
                text.clone()
            }
        })?;
        pipelines.push(ctos::seq::render_with(&seq, &catalog, &options)?);
    }
    let mut input = load_input(&args.input)?;
    if args.exec && !input.module.has_main() {
        bail!(
            "--exec needs a main function: {} defines none (give one with --driver FILE.ll)",
            args.input.program.display()
        );
    }
    let mut pool = Pool::new(args.limits.jobs(), args.limits.limits()?, input.llvm_args.clone())?;
    validate(&mut pool, &input.target, &pipelines)?;
    if let Some(dir) = &args.emit_ir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }

    let reference = if args.exec { Some(reference_run(&mut pool, &mut input.module)?) } else { None };
    let coverage = args.coverage.map(|g| {
        let c = Coverage::arm(g);
        pool.set_observer(c.observer());
        c
    });
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
    run_batch(&mut pool, &mut input.module, items, |index, run| {
        progress.inc(1);
        ready.insert(index, run);
        while let Some(run) = ready.remove(&next) {
            let summary = coverage.zip(run.trace.as_deref()).map(|(c, t)| c.spectrum(t).summary(c.sites));
            let result = emit(&mut out, &args, next, &pipelines[next], &run, reference.as_ref(), summary);
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
    Ok(ExitCode::SUCCESS)
}

fn reference_run(pool: &mut Pool, module: &mut ctos::llvm::IrModule) -> Result<Execution> {
    let job = JobSpec { exec: ExecMode::Always, ..JobSpec::optimize("") };
    let mut result = None;
    run_batch(pool, module, [BatchItem { index: 0, job }], |_, run| result = Some(run))?;
    let run = result.expect("one run");
    let execution = run.execution.with_context(|| {
        format!("the unoptimized program could not be run: {}", run.message.unwrap_or_else(|| run.stderr.clone()))
    })?;
    if execution.status != ExecStatus::Exited(0) {
        eprintln!(
            "warning: the unoptimized program ends with {}; outputs are compared anyway",
            status_text(&execution.status).0
        );
    }
    Ok(execution)
}

fn progress_bar(len: usize, json: bool) -> ProgressBar {
    if len < 2 || json || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len as u64);
    bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} pipelines, {per_sec}, eta {eta}").unwrap());
    bar
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

fn emit(
    out: &mut impl Write,
    args: &RunArgs,
    index: usize,
    pipeline: &str,
    run: &Run,
    reference: Option<&Execution>,
    coverage: Option<Summary>,
) -> Result<()> {
    if let (Some(dir), Some(ir)) = (&args.emit_ir, &run.ir) {
        let path = dir.join(format!("{index:04}.ll"));
        std::fs::write(&path, ir).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let hash = run.ir_hash.map(|h| format!("{h:016x}"));
    let exec = match (&run.execution, reference) {
        (Some(e), Some(r)) => {
            let (exec_status, exit_code) = status_text(&e.status);
            let (_, reference_exit_code) = status_text(&r.status);
            Some(ExecFields {
                exec_status,
                exit_code,
                stdout: &e.stdout,
                exec_ms: e.millis,
                reference_exit_code,
                reference_stdout: &r.stdout,
            })
        }
        _ => None,
    };
    if args.json {
        let line = Line {
            index,
            pipeline,
            outcome: run.outcome.as_str(),
            ir_hash: hash,
            message: run.message.as_deref(),
            signal: run.crash.as_ref().map(|c| c.signal),
            crash_frames: run.crash.as_ref().map(|c| c.frames.as_slice()),
            instructions: run.instructions,
            opt_ms: (run.opt_millis * 100.0).round() / 100.0,
            exec,
            coverage,
        };
        writeln!(out, "{}", serde_json::to_string(&line)?)?;
    } else {
        let hash = hash.unwrap_or_else(|| "-".into());
        if args.exec {
            let (status, same) = match &exec {
                Some(e) => (
                    e.exit_code.map_or(e.exec_status.clone(), |c| format!("exit {c}")),
                    if e.stdout == e.reference_stdout && e.exit_code == e.reference_exit_code {
                        "=ref"
                    } else {
                        "DIFF"
                    },
                ),
                None => ("-".into(), "-"),
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
        if let Some(c) = coverage {
            writeln!(out, "      covered {} {} in {} files", c.elements, c.granularity, c.files.len())?;
        }
    }
    out.flush()?;
    Ok(())
}
