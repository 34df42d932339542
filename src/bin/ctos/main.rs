//! `ctos`: test LLVM's optimizer under arbitrary pass sequences.

mod passes;
mod run;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "ctos",
    version = version(),
    about = "Test and debug LLVM's optimizer under arbitrary pass sequences",
    long_about = "Test and debug LLVM's optimizer under arbitrary pass sequences.\n\n\
Every pipeline runs in a sandboxed child of this process, against the LLVM linked into \
this binary: crashes, fatal errors and hangs are reported, never fatal to the tool.",
    after_help = "Examples:\n  ctos run prog.c --passes 'sroa,licm,gvn' --exec\n  \
ctos run bug.ll --seq-file pipelines.txt --json -j 2\n  ctos passes --set locseq"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per process; the size difference between subcommands does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Run one program through one or many pipelines; report outcomes, IR hashes, output.
    Run(run::RunArgs),
    /// List the pass catalog of the linked LLVM: names, levels, sets, unsafe passes.
    Passes(passes::PassesArgs),
}

fn version() -> String {
    format!("{} (LLVM {})", env!("CARGO_PKG_VERSION"), ctos::llvm::version_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run::main(args),
        Command::Passes(args) => passes::main(args),
    };
    match result {
        Ok(code) => code,
        // A closed pipe (`ctos run … | head`) is the reader's choice, not an error.
        Err(e) if e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) => {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
