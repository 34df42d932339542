use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context as _, Result};
use ctos::cli::{bounded, LimitArgs};
use ctos::localize::bug_folder::{read_bench, BenchBug};
use ctos::localize::eval::{
    evaluate_bug, summarize, BugOutcome, BugResult, EvalSetup, FixClass, StrategySummary, TopN,
};
use ctos::localize::function_eval::FunctionSummary;
use ctos::localize::functions::FunctionRule;
use ctos::localize::sequence_search::Strategy;
use ctos::output;
use ctos::sandbox::Llvm;
use serde::Serialize;

use crate::isolate::Bar;
use crate::options::SearchArgs;

#[derive(clap::Args)]
#[command(after_help = "Each bug that fires on the linked LLVM is isolated with every strategy \
(--repeat times, seeds 1..N); bugs that do not fire are listed with the reason. Ranks are those of \
the bug's fix_files; Top-n counts bugs whose best fix file ranks within n, MFR/MAR are the mean \
first/average rank (a fix file the failing run did not cover counts as one past the last rank).")]
pub struct EvalArgs {
    /// The bench: a folder of bug folders (or its parent with bugs/), as shared/bench.
    pub bench: PathBuf,
    /// Strategies to compare (repeatable) [default: cga].
    #[arg(long = "strategy", value_enum)]
    pub strategies: Vec<Strategy>,
    /// Isolations per bug and strategy; ranks are the median over them.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = |s: &str| bounded(s, 1usize, 1000))]
    pub repeat: usize,
    /// Only these bugs (folder names; repeatable).
    #[arg(long = "bug", value_name = "ID")]
    pub bugs: Vec<String>,
    /// JSON Lines instead of tables (see the README): begin, one `bug` record per bug and
    /// strategy, summary with the per-strategy metrics.
    #[arg(long)]
    pub json: bool,
    /// Run the bugs in this `opt` (your LLVM build) instead of the linked LLVM: bugs that
    /// fire on its major version are ranked (see `locseq isolate --opt`).
    #[arg(long, value_name = "PATH")]
    pub opt: Option<PathBuf>,
    /// Also keep each isolation's whole ranking (every file with its evidence), culprit and
    /// fix files as DIR/BUG-STRATEGY-SEED.json, to judge ranking rules on afterwards.
    #[arg(long, value_name = "DIR")]
    pub rankings: Option<PathBuf>,
    #[command(flatten)]
    pub search: SearchArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
}

fn rank_text(r: &BugResult) -> String {
    match (&r.outcome, r.median_ranks()) {
        (BugOutcome::Skipped { .. }, _) => "skipped".into(),
        (BugOutcome::Error { .. }, _) => "error".into(),
        (_, Some((ranks, worst))) => {
            let files: Vec<String> =
                ranks.iter().map(|x| x.map_or(format!(">{}", worst - 1), |x| x.to_string())).collect();
            format!("{}/{}", files.join(","), worst - 1)
        }
        _ => "-".into(),
    }
}

#[derive(Serialize)]
struct Summary<'a> {
    bench: String,
    time_per_bug: f64,
    repeat: usize,
    strategies: &'a [StrategySummary],
}

pub fn main(args: EvalArgs) -> Result<ExitCode> {
    let llvm = Llvm::from_opt(args.opt.as_deref())?;
    let catalog = ctos::program::catalog_for(&llvm)?;
    let bugs = chosen_bugs(&args, llvm.major())?;
    let strategies = if args.strategies.is_empty() { vec![Strategy::Cga] } else { args.strategies.clone() };
    let base = args.search.options()?;
    base.check(&catalog, &llvm)?;
    if let Some(dir) = &args.rankings {
        std::fs::create_dir_all(dir).with_context(|| format!("--rankings {}: cannot create it", dir.display()))?;
    }
    let setup = EvalSetup {
        base,
        repeat: args.repeat,
        jobs: args.limits.jobs(),
        limits: args.limits.limits(),
        catalog: &catalog,
        llvm: llvm.clone(),
        rankings: args.rankings.clone(),
    };
    let results = evaluate_all(&bugs, &strategies, &setup, &args);
    let summaries: Vec<_> = strategies.iter().map(|&s| summarize(s, &results)).collect();
    let unattributed = results.iter().find_map(|r| match &r.outcome {
        BugOutcome::Ranked { attempts } => attempts.iter().find_map(|a| a.unattributed.clone()),
        _ => None,
    });
    if let (Some(why), false) = (&unattributed, args.json) {
        eprintln!("note: coverage without source files for {why}: its files cannot be ranked");
    }
    if args.json {
        output::begin("locseq eval", None, &llvm)?;
        for result in &results {
            output::emit("bug", result)?;
        }
        let summary = Summary {
            bench: args.bench.display().to_string(),
            time_per_bug: args.search.time.as_secs_f64(),
            repeat: args.repeat,
            strategies: &summaries,
        };
        output::emit("summary", &summary)?;
        return Ok(ExitCode::SUCCESS);
    }
    ctos::outln!(
        "LLVM {}, {} s of search per bug, {} repeat(s)\n",
        llvm.describe(),
        args.search.time.as_secs_f64(),
        args.repeat
    )?;
    print_bugs(&bugs, &strategies, &results)?;
    print_summaries(&summaries)?;
    Ok(ExitCode::SUCCESS)
}

/// The bench's bug folders for this LLVM, only those of `--bug` when given.
fn chosen_bugs(args: &EvalArgs, major: u32) -> Result<Vec<BenchBug>> {
    let mut bugs = read_bench(&args.bench, major)?;
    if bugs.is_empty() {
        bail!("{} holds no bug folders (folders with a meta.json, as in shared/bench)", args.bench.display());
    }
    if let Some(unknown) = args.bugs.iter().find(|id| !bugs.iter().any(|b| &b.id == *id)) {
        let known: Vec<&str> = bugs.iter().map(|b| b.id.as_str()).collect();
        bail!("--bug {unknown}: no such bug in {} (it has {})", args.bench.display(), known.join(", "));
    }
    if !args.bugs.is_empty() {
        bugs.retain(|b| args.bugs.contains(&b.id));
    }
    Ok(bugs)
}

/// Every bug under every strategy, one after the other, with a bar for each.
fn evaluate_all(bugs: &[BenchBug], strategies: &[Strategy], setup: &EvalSetup, args: &EvalArgs) -> Vec<BugResult> {
    let mut results = Vec::new();
    for bug in bugs {
        for &strategy in strategies {
            if !args.json {
                eprintln!("bug {} ({}), {}", bug.id, bug.kind, strategy.name());
            }
            let mut bar = Bar::new(args.search.time, args.json);
            let result = evaluate_bug(bug, strategy, setup, &mut bar);
            bar.finish();
            if let (BugOutcome::Error { reason }, false) = (&result.outcome, args.json) {
                eprintln!("error: bug {}: {reason}", bug.id);
            }
            results.push(result);
        }
    }
    results
}

/// One row per bug: its rank under each strategy, its fix files, the culprit, why skipped.
fn print_bugs(bugs: &[BenchBug], strategies: &[Strategy], results: &[BugResult]) -> std::io::Result<()> {
    ctos::out!("{:<8} {:<11}", "bug", "type")?;
    for s in strategies {
        ctos::out!(" {:>14}", s.name())?;
    }
    ctos::outln!("  fix file")?;
    for bug in bugs {
        ctos::out!("{:<8} {:<11}", bug.id, bug.kind)?;
        let mut skip = None;
        let mut culprit = None;
        for &s in strategies {
            let r = results.iter().find(|r| r.bug == bug.id && r.strategy == s).expect("evaluated");
            match &r.outcome {
                BugOutcome::Skipped { reason } => skip = Some(format!("skipped: {reason}")),
                BugOutcome::Error { reason } => skip = Some(format!("error: {reason}")),
                BugOutcome::Ranked { attempts } => culprit = culprit.or(attempts[0].culprit.clone()),
            }
            ctos::out!(" {:>14}", rank_text(r))?;
        }
        ctos::outln!("  {}", bug.fix_files.join(", "))?;
        if let Some(c) = culprit {
            ctos::outln!("{:>20}culprit: {c}", "")?;
        }
        if let Some(reason) = skip {
            ctos::outln!("{:>20}{reason}", "")?;
        }
    }
    Ok(())
}

/// The metrics of each strategy, of its spectrum alone and of the culprit-file baseline.
fn print_summaries(summaries: &[StrategySummary]) -> std::io::Result<()> {
    ctos::outln!(
        "\n{:<16} {:>4} {:>5} {:>5} {:>6} {:>6} {:>7} {:>7} {:>8} {:>9} {:>9}",
        "strategy",
        "bugs",
        "top1",
        "top5",
        "top10",
        "top20",
        "MFR",
        "MAR",
        "evals/s",
        "witness/h",
        "median s"
    )?;
    // Mean ranks over no ranked bug are no number.
    let mean = |x: f64| if x.is_finite() { format!("{x:.2}") } else { "-".into() };
    let row = |name: String, m: &ctos::localize::sbfl::Metrics| -> std::io::Result<()> {
        ctos::out!(
            "{:<16} {:>4} {:>5} {:>5} {:>6} {:>6} {:>7} {:>7}",
            name,
            m.bugs,
            m.top1,
            m.top5,
            m.top10,
            m.top20,
            mean(m.mfr),
            mean(m.mar)
        )
    };
    for s in summaries {
        row(s.strategy.name(), &s.metrics)?;
        ctos::outln!(
            " {:>8.1} {:>9.0} {:>9.1}",
            s.evaluations_per_second,
            s.witnesses_per_hour,
            s.median_seconds_to_ranking
        )?;
    }
    // What the strategies' ranks would be by the spectrum alone.
    for s in summaries {
        row(format!("{} spectrum", s.strategy.name()), &s.spectrum_only)?;
        ctos::outln!()?;
    }
    // The culprit is found before any search: one baseline row serves every strategy.
    if let Some(s) = summaries.first() {
        row("culprit-file".into(), &s.culprit_file_baseline)?;
        ctos::outln!()?;
    }
    // Where rankings fail differently: fixes in the culprit's files, and elsewhere.
    ctos::outln!(
        "\n{:<16} {:<11} {:>4}  {:>17}  {:>17}  {:>17}",
        "strategy",
        "fix",
        "bugs",
        "ranking",
        "spectrum alone",
        "culprit file"
    )?;
    ctos::outln!("{:<16} {:<11} {:>4}  {:>17}  {:>17}  {:>17}", "", "", "", "top1/3/5", "top1/3/5", "top1/3/5")?;
    for s in summaries {
        for c in &s.by_class {
            let t = |t: &ctos::localize::eval::TopN| format!("{}/{}/{}", t.top1, t.top3, t.top5);
            ctos::outln!(
                "{:<16} {:<11} {:>4}  {:>17}  {:>17}  {:>17}",
                s.strategy.name(),
                c.class.name(),
                c.ranking.bugs,
                t(&c.ranking),
                t(&c.spectrum_only),
                t(&c.culprit_file_baseline)
            )?;
        }
    }
    for s in summaries {
        if let Some(f) = &s.functions {
            print_functions(&s.strategy.name(), f)?;
        }
    }
    for s in summaries.iter().filter(|s| s.errors > 0) {
        ctos::outln!(
            "\n{}: {} bug(s) could not be isolated (the reason is in the bug's row)",
            s.strategy.name(),
            s.errors
        )?;
    }
    Ok(())
}

/// Where the fix functions rank: by class under the default rule, held out, and as listed
/// before; then every rule with the bugs it rests on.
fn print_functions(strategy: &str, f: &FunctionSummary) -> std::io::Result<()> {
    let t = |t: &TopN| format!("{}/{}/{}/{}", t.top1, t.top3, t.top5, t.top10);
    ctos::outln!(
        "\nfunctions, {strategy} ({} bugs name their fix functions; ranks are the best of a fix function's)",
        f.bugs.len()
    )?;
    ctos::outln!(
        "{:<11} {:>4}  {:>12}  {:>13}  {:>13}",
        "fix",
        "bugs",
        "default rule",
        "leave-one-out",
        "listed before"
    )?;
    ctos::outln!("{:<11} {:>4}  {:>12}  {:>13}  {:>13}", "", "", "top1/3/5/10", "top1/3/5/10", "top1/3/5/10")?;
    for c in &f.by_class {
        ctos::outln!(
            "{:<11} {:>4}  {:>12}  {:>13}  {:>13}",
            c.class.name(),
            c.ranking.bugs,
            t(&c.ranking),
            t(&c.leave_one_out),
            t(&c.listed)
        )?;
    }
    let classes: Vec<&str> = FixClass::ALL.iter().map(|c| c.name()).collect();
    ctos::outln!("\n{:<30} {:>12}  {:>12}  {:>12}  top-5 bugs", "rule", "all bugs", classes[0], classes[1])?;
    for r in &f.rules {
        let class = |i: usize| r.by_class.get(i).map(&t).unwrap_or_default();
        ctos::outln!(
            "{:<30} {:>12}  {:>12}  {:>12}  {}",
            r.rule,
            t(&r.top),
            class(0),
            class(1),
            r.top5_bugs.join(" ")
        )?;
    }
    ctos::outln!("chosen on all bugs: {} (the default: {})", f.chosen, FunctionRule::DEFAULT.name())?;
    let without: Vec<String> = f.chosen_without.iter().map(|(bug, rule)| format!("{bug}: {rule}")).collect();
    ctos::outln!("chosen without each bug: {}", without.join("; "))?;
    let default = FunctionRule::all().iter().position(|r| *r == FunctionRule::DEFAULT).unwrap_or(0);
    let rank = |r: Option<usize>| r.map_or("-".to_string(), |r| r.to_string());
    let ranks: Vec<String> =
        f.bugs.iter().map(|b| format!("{} {}/{}", b.bug, rank(b.by_rule[default]), rank(b.listed))).collect();
    ctos::outln!("per bug (ranking/listed before): {}", ranks.join(", "))
}
