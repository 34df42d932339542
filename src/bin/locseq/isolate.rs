use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};
use ctos::cli::{bounded, InputOptions, LimitArgs};
use ctos::coverage::Granularity;
use ctos::localize::bug_folder::{is_bug_folder, BenchBug};
use ctos::localize::evidence::FailingEvidence;
use ctos::localize::isolate::{isolate, Isolation, OracleMode, Progress, TraceScope};
use ctos::localize::record::SearchStats;
use ctos::localize::sbfl::{Aggregate, Formula};
use ctos::localize::sequence_search::Strategy;
use ctos::localize::similarity::SimilarityFormula;
use ctos::localize::witness_programs::ProgramInput;
use ctos::output::{self, shorten, value_name};
use ctos::program::{Subject, SubjectSpec};
use ctos::sandbox::Llvm;
use ctos::seq::{pipeline_lines, Catalog, Sequence};
use indicatif::ProgressBar;
use serde::Serialize;

use crate::options::SearchArgs;

#[derive(clap::Args)]
#[command(after_help = "The failure is reproduced first; if it does not fire, locseq says so and stops. \
The sequence is then reduced (default<Ox> expanded first), a search looks for bug-free sequences whose \
LLVM coverage is close to the failing run's, and the LLVM source files the failing run covered are \
ranked by Ochiai over the coverage elements.\n\n\
A bug folder stands for the sequence and the program: one `ctos fuzz` wrote (bugs/NNNN-kind-pass/: \
program, reduced sequence, the campaign's --llvm-args and --opt, the failure's kind as the oracle) or one \
in the format of shared/bench (meta.json, oracle.conf, seq.txt, repro.ll). Options given as well add to \
its LLVM options or replace its oracle.\n\nExamples:\n  \
locseq isolate seq.txt bug.ll --llvm-arg=-slp-threshold=-99999\n  \
locseq isolate bug.ll --passes 'function(slp-vectorizer)' --llvm-arg=-slp-threshold=-99999\n  \
locseq isolate campaign/bugs/0001-invalid-ir-slp-vectorizer --html report.html\n  \
locseq isolate ../shared/bench/bugs/140481 --strategy diwi")]
pub struct IsolateArgs {
    /// The failing pass sequence in a file (new-PM text or legacy flags), or a bug folder;
    /// with --passes, the program.
    #[arg(value_name = "SEQ_FILE|BUG_DIR|PROGRAM")]
    pub seq_file: PathBuf,
    /// Test program: LLVM IR (.ll), bitcode (.bc) or C (.c, compiled with clang); a bug
    /// folder brings its own.
    pub program: Option<PathBuf>,
    /// The failing pipeline itself, as `opt -passes=` and `ctos run --passes` take it: then
    /// the program comes first and alone (`locseq isolate bug.ll --passes 'function(gvn)'`).
    #[arg(short = 'p', long, value_name = "PIPELINE", allow_hyphen_values = true)]
    pub passes: Option<String>,
    #[command(flatten)]
    pub input: InputOptions,
    /// What counts as the failure: auto (what the sequence shows, with its signature),
    /// crash, invalid-ir, wrong-code (output differs from the unoptimized program's), hang
    /// (the optimizer does not end), or script:PATH (PATH OPT PIPELINE exits 0 when the bug fires, like the bench's oracle.sh).
    #[arg(long, default_value = "auto", value_name = "ORACLE", value_parser = clap::value_parser!(OracleMode))]
    pub oracle: OracleMode,
    /// A regular expression the failure's message must match.
    #[arg(long, value_name = "REGEX")]
    pub pattern: Option<String>,
    /// Search strategy: cga (LocSeq), random (LocSeq_r), cga-wc, random-wc, configs;
    /// diwi or recbi (witness programs: mutants of the program, C or IR, that no longer
    /// fail), mixed (cga for half the time, recbi for the other half, one spectrum).
    #[arg(long, value_enum, default_value_t = Strategy::Cga)]
    pub strategy: Strategy,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// JSON Lines instead of the report (see the README): begin, one `file` record per
    /// ranked file, one `function` record per ranked function (the first --top), one
    /// `witness` record per bug-free sequence, summary.
    #[arg(long)]
    pub json: bool,
    /// Files and functions to show in the report (and function records in --json).
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = |s: &str| bounded(s, 1usize, 1_000_000))]
    pub top: usize,
    /// Also write the localization as one self-contained HTML page (failure, ranked files
    /// with score bars, closest witnesses, the search's progress); it opens offline.
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub search: SearchArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// What to localize, from the command line or a bug folder.
struct Target {
    spec: SubjectSpec,
    catalog: Catalog,
    sequence: Sequence,
    oracle: OracleMode,
    pattern: Option<String>,
    /// Said with any error: the bug folder says the bug fires on other LLVM versions.
    version_note: Option<String>,
}

/// A progress bar over the time budget (hidden when stderr is not a terminal).
pub struct Bar {
    bar: ProgressBar,
}

impl Bar {
    pub fn new(budget: Duration, quiet: bool) -> Bar {
        let seconds = budget.as_secs_f64().ceil() as u64;
        Bar { bar: ctos::output::progress_bar(Some(seconds), "{spinner} {bar:30} {pos}/{len}s {msg}", quiet) }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Progress for Bar {
    fn phase(&mut self, message: &str) {
        self.bar.set_position(0);
        self.bar.set_message(message.to_string());
    }

    fn search(&mut self, s: &SearchStats) {
        self.bar.set_position(s.seconds as u64);
        self.bar.set_message(format!(
            "{} evaluations ({:.0}/s), {} bug-free, {} failing alike, best similarity {:.3}",
            s.evaluations,
            s.evaluations as f64 / s.seconds.max(1e-9),
            s.passing,
            s.failing_same,
            s.best_similarity
        ));
    }
}

/// The settings a ranking depends on, in the `summary` record.
#[derive(Serialize)]
struct Summary<'a> {
    #[serde(flatten)]
    isolation: &'a Isolation,
    strategy: Strategy,
    granularity: Granularity,
    trace: TraceScope,
    formula: Formula,
    aggregate: Aggregate,
    similarity: SimilarityFormula,
    evidence: FailingEvidence,
}

/// The failing sequence in `text` (read from `path`), with the file (and line, when it
/// has one) in errors.
fn parse_sequence(text: &str, path: &Path, catalog: &Catalog) -> Result<Sequence> {
    let lines: Vec<(usize, &str)> = pipeline_lines(text).collect();
    let at = match lines.as_slice() {
        [(line, _)] => format!("{}:{line}", path.display()),
        _ => path.display().to_string(),
    };
    Sequence::parse(text, catalog).with_context(|| at)
}

/// The sequence, program, LLVM options and oracle: as given, or from a bug folder.
fn target(args: &IsolateArgs) -> Result<Target> {
    if let Some(passes) = &args.passes {
        let program = &args.seq_file;
        if let Some(extra) = &args.program {
            bail!(
                "with --passes, give the program alone (locseq isolate PROGRAM --passes PIPELINE), not {}",
                extra.display()
            );
        }
        if program.is_dir() {
            bail!(
                "{} is a folder: with --passes, give a program file (a bug folder brings its own sequence)",
                program.display()
            );
        }
        let spec = args.input.spec(program)?;
        let catalog = ctos::program::catalog_for(&spec.llvm)?;
        let sequence = Sequence::parse(passes, &catalog).context("--passes")?;
        let (oracle, pattern) = (args.oracle.clone(), args.pattern.clone());
        return Ok(Target { spec, catalog, sequence, oracle, pattern, version_note: None });
    }
    if !args.seq_file.is_dir() {
        let Some(program) = &args.program else {
            bail!("give the program after the sequence file (locseq isolate SEQ_FILE PROGRAM), or a bug folder");
        };
        let spec = args.input.spec(program)?;
        let catalog = ctos::program::catalog_for(&spec.llvm)?;
        let path = &args.seq_file;
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        let sequence = parse_sequence(&text, path, &catalog)?;
        let (oracle, pattern) = (args.oracle.clone(), args.pattern.clone());
        return Ok(Target { spec, catalog, sequence, oracle, pattern, version_note: None });
    }
    let dir = &args.seq_file;
    if !is_bug_folder(dir) {
        bail!(
            "{} is a folder but not a bug folder (no outcome.json from ctos fuzz, no meta.json as in shared/bench)",
            dir.display()
        );
    }
    if let Some(program) = &args.program {
        bail!("{} is a bug folder, which brings its program: leave out {}", dir.display(), program.display());
    }
    let given = Llvm::from_opt(args.input.opt.as_deref())?;
    let read_for = given.major();
    let mut bug = BenchBug::read(dir, read_for)?;
    // Without --opt, the LLVM is the one the folder's campaign tested.
    let llvm = match (&args.input.opt, bug.opt.clone()) {
        (None, Some(opt)) => Llvm::from_opt(Some(&opt)).with_context(|| format!("{}: its opt", dir.display()))?,
        _ => given,
    };
    if llvm.major() != read_for {
        bug = BenchBug::read(dir, llvm.major())?;
    }
    let major = llvm.major();
    let mut options = args.input.clone();
    options.llvm_args = bug.llvm_args.iter().chain(&args.input.llvm_args).cloned().collect();
    options.driver = args.input.driver.clone().or(bug.driver.clone());
    options.clang_args = args.input.clang_args.clone().or(bug.clang_args.clone());
    let spec = options.spec_on(bug.program_for(args.strategy), &llvm)?;
    let catalog = ctos::program::catalog_for(&llvm)?;
    let sequence = parse_sequence(&bug.pipeline, &bug.dir, &catalog)?;
    let oracle = if args.oracle == OracleMode::Auto { bug.oracle.clone() } else { args.oracle.clone() };
    let version_note = (!bug.versions.is_empty() && !bug.versions.contains(&major)).then(|| {
        let versions: Vec<String> = bug.versions.iter().map(u32::to_string).collect();
        format!("{} fires on LLVM {}, this is LLVM {major}", bug.id, versions.join(", "))
    });
    let pattern = args.pattern.clone().or(bug.pattern);
    Ok(Target { spec, catalog, sequence, oracle, pattern, version_note })
}

pub fn main(args: IsolateArgs) -> Result<ExitCode> {
    // One program: its run may cost what tracking its whole code costs.
    ctos::sandbox::set_poison_tracking(ctos::sandbox::PoisonTracking::All);
    if let Some(out) = &args.html {
        ctos::html::check_output(out)?;
    }
    let Target { spec, catalog, sequence: buggy, oracle, pattern, version_note } = target(&args)?;
    let mut opts = args.search.options()?;
    opts.oracle = oracle;
    opts.pattern = pattern;
    opts.strategy = args.strategy;
    opts.seed = args.seed;
    let mut input = Subject::load(&spec, args.limits.jobs(), args.limits.limits())?;
    let sequence_from =
        if args.passes.is_some() { "--passes".to_string() } else { args.seq_file.display().to_string() };
    input.check(&[buggy.render(&catalog)?]).with_context(|| sequence_from)?;
    let mut bar = Bar::new(args.search.time, args.json);
    let program = ProgramInput::read(&spec.program, &spec.frontend, spec.driver.as_deref(), &input.target)?;
    let isolation = isolate(&mut input.pool, &mut input.module, Some(&program), &buggy, &catalog, &opts, &mut bar);
    bar.finish();
    let isolation = match (isolation, version_note) {
        (Err(e), Some(note)) => return Err(e.context(note)),
        (result, _) => result?,
    };
    if let Some(text) = &isolation.generated_driver {
        keep_driver(text, &spec.program, args.html.as_deref())?;
    }
    if let Some(out) = &args.html {
        let settings = settings(&opts, &input.pool.llvm());
        ctos::localize::isolation_page::write_isolation_page(&isolation, &settings, args.top, out)?;
    }
    if !args.json {
        print_report(&isolation, args.top)?;
        return Ok(ExitCode::SUCCESS);
    }
    output::begin("locseq isolate", Some(args.seed), &input.pool.llvm())?;
    for file in &isolation.ranking {
        output::emit("file", file)?;
    }
    for function in isolation.functions.iter().take(args.top) {
        output::emit("function", function)?;
    }
    for witness in &isolation.witnesses {
        output::emit("witness", witness)?;
    }
    let summary = Summary {
        isolation: &isolation,
        strategy: opts.strategy,
        granularity: opts.granularity,
        trace: opts.trace,
        formula: opts.formula,
        aggregate: opts.aggregate,
        similarity: opts.similarity,
        evidence: opts.evidence,
    };
    output::emit("summary", &summary)?;
    Ok(ExitCode::SUCCESS)
}

/// Where the driver generated for `program` (it has no `main`) is kept: beside the page,
/// else said to be gone; the command again generates the same (from `--seed`).
fn keep_driver(text: &str, program: &Path, page: Option<&Path>) -> Result<()> {
    let Some(page) = page else {
        eprintln!(
            "note: {} defines no main: its wrong code shows through a generated driver (--html PAGE keeps it \
             beside the page)",
            program.display()
        );
        return Ok(());
    };
    let path = page.with_extension("driver.ll");
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!(
        "note: {} defines no main: the generated driver that shows its wrong code is {}",
        program.display(),
        path.display()
    );
    Ok(())
}

/// What the ranking depends on and how to run it again, for the HTML page.
fn settings(opts: &ctos::localize::isolate::IsolateOptions, llvm: &Llvm) -> Vec<(&'static str, String)> {
    let command: Vec<String> = ctos::output::command_line();
    vec![
        ("LLVM", llvm.describe()),
        ("strategy", opts.strategy.name().to_string()),
        ("seed", opts.seed.to_string()),
        (
            "ranking",
            format!(
                "{} over {} elements, files by {}",
                value_name(&opts.formula),
                value_name(&opts.granularity),
                value_name(&opts.aggregate)
            ),
        ),
        ("trace", value_name(&opts.trace)),
        ("command", command.join(" ")),
    ]
}

fn print_report(i: &Isolation, top: usize) -> Result<()> {
    let s = &i.stats;
    ctos::outln!("failure:   {}", i.failure)?;
    ctos::outln!("sequence:  {}", i.original)?;
    ctos::outln!("reduced:   {} ({} passes, {} test runs)", i.reduced, i.reduced_passes, i.reduction_tests)?;
    if let Some(c) = &i.culprit {
        let file = i.culprit_file.as_deref().map(|f| format!(", in {f}")).unwrap_or_default();
        ctos::outln!("culprit:   {c}{file}")?;
    }
    if let Some(t) = &i.transformation {
        ctos::outln!("transform: {t}; {} runs, {:.1} s", t.evaluations, t.seconds)?;
        ctos::outln!("           opt {}", t.reproduce())?;
        for line in t.change() {
            ctos::outln!("           {line}")?;
        }
        if let Some(code) = t.code_line() {
            ctos::outln!("           code the step ran and one step short did not: {}", shorten(&code, 200))?;
        }
    }
    for note in &i.notes {
        ctos::outln!("note:      {note}")?;
    }
    if let Some(why) = &i.unattributed {
        ctos::outln!("note:      coverage without source files for {why}")?;
    }
    ctos::outln!(
        "search:    {} evaluations in {:.1} s ({:.1}/s): {} bug-free, {} failing the same way, {} other failures; best similarity {:.3}",
        s.evaluations,
        s.seconds,
        s.evaluations as f64 / s.seconds.max(1e-9),
        s.passing,
        s.failing_same,
        s.other_failures,
        s.best_similarity
    )?;
    if let Some(p) = &s.programs {
        let refused: Vec<String> = p.refused.iter().map(|(r, n)| format!("{n} {}", r.as_str())).collect();
        ctos::outln!(
            "programs:  {} rules drawn ({} without a site, {} touching output, {} duplicates), mutation order {}; refused: {}",
            p.attempts,
            p.not_applicable,
            p.touches_output,
            p.duplicates,
            p.order,
            if refused.is_empty() { "none".to_string() } else { refused.join(", ") }
        )?;
        for w in i.witnesses.iter().filter_map(|w| w.mutation.as_deref().map(|m| (m, w.similarity))).take(3) {
            ctos::outln!("witness:   {} (similarity {:.3})", shorten(w.0, 90), w.1)?;
        }
    }
    ctos::outln!("coverage:  the failing run covers {} elements in {} files", i.failing_elements, i.failing_files)?;
    ctos::outln!(
        "time:      {:.1} s ({})\n",
        i.seconds_total,
        i.seconds_by_phase.iter().map(|(p, s)| format!("{p} {s:.1}")).collect::<Vec<_>>().join(", ")
    )?;
    ctos::outln!("{:>4}  {:>9}  {:>6}  file / evidence / top functions", "rank", "score", "elems")?;
    for r in i.ranking.iter().take(top) {
        ctos::outln!("{:>4}  {:>9.4}  {:>6}  {}", r.rank, r.score, r.elements, r.path)?;
        ctos::outln!("{:>23}{}", "", r.evidence.describe())?;
        // An engineer reads the top three: why each is behind a first file the rule placed.
        if let Some(against) = r.evidence.against_first.as_deref().filter(|_| r.rank <= 3) {
            ctos::outln!("{:>23}behind the first: {against}", "")?;
        }
        if !r.top_functions.is_empty() {
            let names: Vec<String> = r.top_functions.iter().map(|f| shorten(f, 70)).collect();
            ctos::outln!("{:>23}{}", "", names.join(", "))?;
        }
    }
    ctos::outln!("\n{:>4}  {:>9}  {:>6}  function / file / evidence", "rank", "score", "elems")?;
    for f in i.functions.iter().take(top) {
        let e = &f.evidence;
        ctos::outln!("{:>4}  {:>9.4}  {:>6}  {}", f.rank, e.total, e.elements, shorten(&e.name, 90))?;
        ctos::outln!("{:>23}{} (file rank {}), {}", "", e.file, e.file_rank, e.describe())?;
    }
    Ok(())
}
