//! `ctos`: test LLVM's optimizer under arbitrary pass sequences.

mod emi;
mod fuzz;
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
this binary or, with --opt PATH, inside your LLVM build's opt: crashes, fatal errors and \
hangs are reported, never fatal to the tool.",
    after_help = "Examples:\n  ctos run prog.c --passes 'sroa,licm,gvn' --exec\n  \
ctos run bug.ll --seq-file pipelines.txt --json -j 2\n  ctos fuzz --out campaign --time-limit 30m\n  ctos emi prog.c -n 10\n  \
ctos report campaign --html campaign.html\n  ctos passes --set locseq"
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
    /// Run a CTOS campaign: diverse programs x diverse pass sequences, reduced unique bugs.
    Fuzz(fuzz::FuzzArgs),
    /// Write a chain of live-code EMI variants (Hermes) of a C program, each printing what it prints.
    Emi(emi::EmiArgs),
    /// Print the unique bugs of a campaign folder (read-only: it may be running).
    Report {
        /// The campaign folder.
        dir: std::path::PathBuf,
        /// JSON Lines instead of a table: begin, one `bug` record per bug, summary.
        #[arg(long)]
        json: bool,
        /// Also write the campaign as one self-contained HTML page (configuration, bugs with
        /// their reproducers, throughput and bugs over time, failures by pass and kind, the
        /// newest selection); it opens offline in any browser.
        #[arg(long, value_name = "OUT.html")]
        html: Option<std::path::PathBuf>,
    },
    /// Interestingness test for cvise and llvm-reduce: exit 0 iff PROGRAM still fails this way.
    Interesting(fuzz::InterestingArgs),
    /// Combine the folders of a sharded campaign, de-duplicating bugs across shards.
    Merge {
        /// The merged campaign folder (new).
        #[arg(long, value_name = "DIR")]
        out: std::path::PathBuf,
        /// The shard folders (only read).
        #[arg(required = true)]
        shards: Vec<std::path::PathBuf>,
        /// Print the merged report as JSON Lines instead of a table.
        #[arg(long)]
        json: bool,
    },
}

fn version() -> String {
    format!("{} (LLVM {})", env!("CARGO_PKG_VERSION"), ctos::llvm::version_string())
}

fn main() -> ExitCode {
    ctos::cli::install_panic_hook();
    let (cli, matches) = match ctos::cli::parse_args::<Cli>() {
        Ok(parsed) => parsed,
        Err(code) => return code,
    };
    let result = match cli.command {
        Command::Run(args) => run::main(args),
        Command::Passes(args) => passes::main(args),
        Command::Fuzz(args) => {
            let sub = matches.subcommand_matches("fuzz").expect("clap parsed the fuzz subcommand");
            fuzz::main(args, sub)
        }
        Command::Interesting(args) => fuzz::interesting(args),
        Command::Emi(args) => emi::main(args),
        Command::Report { dir, json, html } => report(&dir, json, html.as_deref(), "ctos report"),
        Command::Merge { out, shards, json } => {
            let shards: Vec<&std::path::Path> = shards.iter().map(|p| p.as_path()).collect();
            ctos::fuzz::merge(&out, &shards).and_then(|_| report(&out, json, None, "ctos merge"))
        }
    };
    ctos::cli::exit_with(result)
}

fn report(dir: &std::path::Path, json: bool, html: Option<&std::path::Path>, tool: &str) -> anyhow::Result<ExitCode> {
    if let Some(out) = html {
        ctos::html::check_output(out)?;
        ctos::fuzz::write_campaign_page(dir, out)?;
    }
    if json {
        let (version, opt) = ctos::fuzz::stored_llvm(dir)?;
        ctos::output::begin_on(tool, None, &version, opt.as_deref())?;
    }
    ctos::fuzz::print_report(dir, json)?;
    Ok(ExitCode::SUCCESS)
}
