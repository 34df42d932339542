//! `locseq`: localize LLVM optimization-sequence bugs to LLVM source files (LocSeq).

mod eval;
mod isolate;
mod options;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "locseq",
    version = format!("{} (LLVM {})", env!("CARGO_PKG_VERSION"), ctos::llvm::version_string()),
    about = "Localize LLVM optimization-sequence bugs to LLVM source files",
    long_about = "Localize LLVM optimization-sequence bugs to LLVM source files.\n\n\
Given a program and a pass sequence that makes LLVM fail (the LLVM linked into locseq, or \
your build's opt with --opt PATH), locseq reduces the sequence, names the culprit pass and \
the transformation inside it, searches for nearby sequences that do not fail (LocSeq's \
constrained genetic algorithm) or for mutants of the program that do not fail (DiWi, RecBi), \
records LLVM's own coverage of every run, and ranks LLVM source files and functions by \
spectrum-based fault localization.",
    after_help = "Examples:\n  locseq isolate seq.txt bug.ll --llvm-arg=-slp-threshold=-99999\n  \
locseq isolate seq.txt repro.ll --driver driver.ll --oracle wrong-code --time 60 --json > out.jsonl\n  \
locseq isolate seq.txt repro.c --strategy recbi --time 120\n  \
locseq eval ../shared/bench --strategy cga --strategy diwi --strategy recbi --strategy mixed --time 120"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Rank the LLVM source files most likely to hold the bug a (program, sequence) shows.
    Isolate(isolate::IsolateArgs),
    /// Measure localization on a bench of real bugs (the format of shared/bench).
    Eval(eval::EvalArgs),
}

fn main() -> ExitCode {
    ctos::cli::install_panic_hook();
    let cli = match ctos::cli::parse_args::<Cli>() {
        Ok((cli, _)) => cli,
        Err(code) => return code,
    };
    let result = match cli.command {
        Command::Isolate(args) => isolate::main(args),
        Command::Eval(args) => eval::main(args),
    };
    ctos::cli::exit_with(result)
}
