//! `ctos emi`: a chain of live-code EMI variants (Hermes) of one C program, each written as
//! soon as it exists, with a log of its snippets, and checked to print what the program prints.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context as _, Result};
use clap::Args;
use ctos::mutate::hermes::{output_at_o0, Chain, EmiConfig, Strategy, Variant};
use ctos::outln;
use ctos::program::{screen, Screen, Screening};
use indicatif::ProgressBar;
use serde::Serialize;

#[derive(Args)]
#[command(after_help = "Examples:\n  csmith --seed 7 > p.c && ctos emi p.c\n  \
ctos emi p.c -n 3 --out p-variants --seed 2 --json")]
pub struct EmiArgs {
    /// The seed program (C, free of undefined behaviour: it is checked with UBSan and ASan)
    program: PathBuf,
    /// Variants in the chain; each mutates the one before, profiled again
    #[arg(short = 'n', long = "variants", default_value = "10", value_parser = |s: &str| ctos::cli::bounded(s, 1usize, 1000))]
    variants: usize,
    /// Folder for the variants, new or empty [default: PROGRAM without .c, plus .emi]
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Seed of every random choice (points profiled, strategies, snippets)
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// JSON Lines instead of the table: begin, one `variant` record per variant, summary
    #[arg(long)]
    json: bool,
}

/// What the log and `--json` say about one variant.
#[derive(Serialize)]
struct Record<'a> {
    variant: usize,
    file: String,
    fcb: usize,
    tg: usize,
    tcb: usize,
    points_profiled: usize,
    points_executed: usize,
    seconds: f64,
    /// The variant's -O0 output equals the program's (anything else is a bug in ctos).
    same_output: bool,
    mutations: &'a [ctos::mutate::hermes::Mutation],
}

fn check(args: &EmiArgs) -> Result<(String, PathBuf)> {
    let program = &args.program;
    if program.extension().is_none_or(|e| e != "c") {
        bail!("{}: expected a C file (.c)", program.display());
    }
    let source = std::fs::read_to_string(program).with_context(|| format!("{}: not readable", program.display()))?;
    let out = args.out.clone().unwrap_or_else(|| program.with_extension("emi"));
    if out.read_dir().is_ok_and(|mut d| d.next().is_some()) {
        bail!("{}: exists and is not empty; choose another --out", out.display());
    }
    if out.exists() && !out.is_dir() {
        bail!("{}: exists and is not a folder", out.display());
    }
    Ok((source, out))
}

pub fn main(args: EmiArgs) -> Result<ExitCode> {
    let (source, out) = check(&args)?;
    let config = EmiConfig::default();
    let mut chain = Chain::new(&source, args.seed, &config).with_context(|| args.program.display().to_string())?;
    // The sanitized run is also the run whose output every variant must print.
    let expected = match screen(&args.program, &Screen::default()) {
        Screening::Clean { stdout, .. } => stdout,
        Screening::Undefined(report) => {
            bail!("{}: has undefined behaviour, so its variants would prove nothing: {report}", args.program.display())
        }
        Screening::Timeout => bail!("{}: runs too long at -O0 to be profiled", args.program.display()),
        other => bail!("{}: does not run cleanly at -O0: {other:?}", args.program.display()),
    };
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    write_readme(&out, &args)?;
    if args.json {
        ctos::output::begin("ctos emi", Some(args.seed), &ctos::sandbox::Llvm::Linked)?;
    } else {
        outln!(
            "{:>7}  {:>4} {:>4} {:>4}  {:>15}  {:>7}  output",
            "variant",
            "FCB",
            "TG",
            "TCB",
            "points (ran)",
            "seconds"
        )?;
    }
    let bar = progress(args.variants, args.json);
    let mut differing = Vec::new();
    for k in 1..=args.variants {
        let variant = chain.next_variant().with_context(|| format!("variant {k}"))?;
        let same = output_at_o0(&variant.source, &config).is_ok_and(|o| o == expected);
        if !same {
            differing.push(k);
        }
        report(&out, k, &variant, same, args.json)?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    if args.json {
        ctos::output::emit(
            "summary",
            &serde_json::json!({ "variants": args.variants, "differing": differing, "out": out.to_string_lossy() }),
        )?;
    } else {
        outln!("{} variants in {}", args.variants, out.display())?;
    }
    if !differing.is_empty() {
        eprintln!(
            "error: variants {differing:?} print differently from {} at -O0: a bug in ctos, please report it with {}",
            args.program.display(),
            out.display()
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

fn report(out: &Path, k: usize, variant: &Variant, same: bool, json: bool) -> Result<()> {
    let file = format!("variant-{k:02}.c");
    std::fs::write(out.join(&file), &variant.source)?;
    let count = |s: Strategy| variant.mutations.iter().filter(|m| m.strategy == s).count();
    let record = Record {
        variant: k,
        file: out.join(&file).display().to_string(),
        fcb: count(Strategy::Fcb),
        tg: count(Strategy::Tg),
        tcb: count(Strategy::Tcb),
        points_profiled: variant.profiled,
        points_executed: variant.executed,
        seconds: variant.seconds,
        same_output: same,
        mutations: &variant.mutations,
    };
    std::fs::write(out.join(format!("variant-{k:02}.json")), serde_json::to_string_pretty(&record)?)?;
    if json {
        return ctos::output::emit("variant", &record);
    }
    let points = format!("{} ({})", record.points_profiled, record.points_executed);
    let output = if same { "same as the program" } else { "DIFFERENT" };
    outln!(
        "{k:>7}  {:>4} {:>4} {:>4}  {points:>15}  {:>7.2}  {output}",
        record.fcb,
        record.tg,
        record.tcb,
        record.seconds
    )?;
    Ok(())
}

fn write_readme(out: &Path, args: &EmiArgs) -> Result<()> {
    let command: Vec<String> = ctos::output::command_line();
    let text = format!(
        "EMI variants of {} (seed {}, LLVM {}).\n\nEach variant-NN.c mutates the one before it where the program runs, keeping \
         its output;\nvariant-NN.json lists its snippets (strategy, line, text).\n\nReproduce: {}\n",
        args.program.display(),
        args.seed,
        ctos::llvm::version_string(),
        command.join(" ")
    );
    Ok(std::fs::write(out.join("README.txt"), text)?)
}

fn progress(n: usize, json: bool) -> ProgressBar {
    ctos::output::progress_bar(Some(n as u64), "{spinner} {bar:30} {pos}/{len} variants {elapsed}", json)
}
