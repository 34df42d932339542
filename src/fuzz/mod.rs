//! `ctos fuzz`: the CTOS campaign. Each iteration plans diverse programs and pass
//! sequences (embeddings + centroid selection), tests every pair in the sandbox, and
//! reduces and de-duplicates what fails into one folder per unique bug.

mod bugs;
mod campaign_page;
mod cross;
pub mod cvise;
mod finish;
mod fires;
mod hermes_generator;
pub mod interesting;
mod ir_mutate;
mod issue;
mod merge;
mod pairs;
mod plan;
mod pool;
mod preflight;
mod reduce_ir;
mod report;
mod seeds;
mod stale_loop;
mod stats;
pub mod store;
mod suspects;
mod sync;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use serde::{Deserialize, Serialize};

pub use campaign_page::write_campaign_page;
pub use merge::merge;
pub use report::{print_report, BugReport};
pub use stats::Stats;

use crate::llvm::CFrontend;
use crate::program::{catalog_for, Generator, GeneratorMix};
use crate::sandbox::Limits;
use crate::sandbox::Llvm;
use crate::seq::{Catalog, Nesting, RenderOptions};
use store::Store;

/// How each iteration picks its programs and sequences from the random pools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Selection {
    /// X-means over doc2vec embeddings, then CTOS's centroid scheme (Algorithm 3).
    Ctos,
    /// Uniformly at random (the baseline the paper compares with).
    Random,
}

/// What defines a campaign; stored in its folder, so `--resume` continues the same plan.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CampaignConfig {
    pub seed: u64,
    pub selection: Selection,
    /// The generators sharing each iteration's program pool.
    pub generator: GeneratorMix,
    /// Test these C/IR files instead of generated programs.
    pub programs_dir: Option<PathBuf>,
    /// LLVM's regression tests and IR files to fuzz from (`--seeds`).
    #[serde(default)]
    pub seeds_dirs: Vec<PathBuf>,
    /// Test these pipelines (one per line) instead of random sequences.
    pub sequences_file: Option<PathBuf>,
    /// Catalog set sequences are drawn from.
    pub pass_set: String,
    /// Ordered sub-sequences ("a b": a somewhere before b) that generated sequences avoid.
    pub exclude: Vec<String>,
    /// Keep generating sequences that contain a known bug's reduced sequence (by default
    /// a known cause leaves the generator).
    #[serde(default)]
    pub keep_known: bool,
    pub seq_pool: usize,
    pub seq_select: usize,
    pub seq_min: usize,
    pub seq_max: usize,
    pub prog_pool: usize,
    pub prog_select: usize,
    pub min_size: usize,
    pub opt_timeout: f64,
    pub exec_timeout: f64,
    pub memory_mib: u64,
    pub llvm_args: Vec<String>,
    pub verify_each: crate::llvm::VerifyEach,
    /// Analyses checked after each pass that changed the IR and kept them.
    #[serde(default)]
    pub check_preserved: Vec<crate::llvm::CheckedAnalysis>,
    pub nesting: Nesting,
    pub reduce_programs: bool,
    /// Seconds cvise may spend on one bug's program.
    #[serde(default = "default_cvise_seconds")]
    pub reduce_programs_seconds: f64,
    /// Seconds llvm-reduce may spend on one bug's program (0: no IR reduction).
    #[serde(default = "default_reduce_ir_seconds")]
    pub reduce_ir_seconds: f64,
    /// Seconds a new bug's `locseq isolate` may take (0: not localized).
    #[serde(default = "default_localize_seconds")]
    pub localize_seconds: f64,
    /// Other `opt`s each bug is re-run on, to say where it fires.
    #[serde(default)]
    pub also_opt: Vec<PathBuf>,
    /// (i, n): this campaign runs shard i of n of the plan.
    pub shard: (usize, usize),
    /// The folder through which the shards share their causes.
    #[serde(default)]
    pub sync: Option<PathBuf>,
    /// Test this `opt` (through the agent) instead of the linked LLVM.
    #[serde(default)]
    pub opt: Option<PathBuf>,
    pub max_iterations: Option<usize>,
}

impl Default for CampaignConfig {
    fn default() -> Self {
        CampaignConfig {
            seed: 1,
            selection: Selection::Ctos,
            generator: GeneratorMix::one(Generator::Csmith),
            programs_dir: None,
            seeds_dirs: Vec::new(),
            sequences_file: None,
            pass_set: "ctos".into(),
            exclude: Vec::new(),
            keep_known: false,
            seq_pool: 1000,
            seq_select: DEFAULT_SEQ_SELECT,
            seq_min: 50,
            seq_max: 200,
            prog_pool: 20,
            prog_select: 4,
            min_size: 80_000,
            opt_timeout: 30.0,
            exec_timeout: 10.0,
            memory_mib: 4096,
            llvm_args: Vec::new(),
            verify_each: crate::llvm::VerifyEach::Changed,
            check_preserved: Vec::new(),
            nesting: Nesting::Grouped,
            reduce_programs: false,
            reduce_programs_seconds: default_cvise_seconds(),
            reduce_ir_seconds: default_reduce_ir_seconds(),
            localize_seconds: default_localize_seconds(),
            also_opt: Vec::new(),
            shard: (0, 1),
            sync: None,
            opt: None,
            max_iterations: None,
        }
    }
}

fn default_cvise_seconds() -> f64 {
    300.0
}

/// llvm-reduce took a 605 KB csmith program to 27 lines in 28 s on 2 cores with opt as
/// its test; ctos's judge is slower per test, and wrong code runs the program twice.
fn default_reduce_ir_seconds() -> f64 {
    180.0
}

fn default_localize_seconds() -> f64 {
    60.0
}

impl CampaignConfig {
    pub fn limits(&self) -> Limits {
        Limits {
            opt_timeout: Duration::from_secs_f64(self.opt_timeout),
            exec_timeout: Duration::from_secs_f64(self.exec_timeout),
            memory_bytes: self.memory_mib << 20,
        }
    }

    /// The LLVM options of every run: the user's, and ctos's own for `check_preserved`.
    pub fn llvm_options(&self) -> Vec<String> {
        let mut options = self.llvm_args.clone();
        options.extend(crate::llvm::CheckedAnalysis::llvm_flag(&self.check_preserved));
        options
    }

    pub fn render(&self) -> RenderOptions {
        RenderOptions { nesting: self.nesting, verify_fixpoint: false }
    }
}

/// How a run of the campaign (a start or a resume) may spend its time.
pub struct RunOptions {
    pub time_limit: Option<Duration>,
    pub jobs: usize,
    /// Show a live status line on stderr.
    pub status_line: bool,
}

/// Everything a campaign run works with.
pub(crate) struct Campaign {
    pub dir: PathBuf,
    pub config: CampaignConfig,
    pub store: Store,
    pub catalog: Catalog,
    /// The LLVM under test.
    pub llvm: Llvm,
    /// How C programs become IR that the LLVM under test reads.
    pub frontend: CFrontend,
    pub jobs: usize,
    pub started: Instant,
    pub deadline: Option<Instant>,
    pub stats: Stats,
    /// The pipelines of `--sequences`, as checked when the campaign started.
    pub sequences: Option<Vec<String>>,
    /// The usable seeds of `--seeds`, as checked when the campaign started.
    pub seeds: Vec<seeds::SeedEntry>,
    /// Where the shards share their causes (`--sync`).
    pub(super) sync: Option<sync::SyncDir>,
}

impl Campaign {
    pub fn out_of_time(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

/// Sequences per iteration. Each iteration's programs cost ~3 s apiece to generate,
/// compile and screen and a pair ~0.1 s to test (2 workers): with 50 sequences planning
/// took a third of a campaign's time, with 100 about a fifth.
pub const DEFAULT_SEQ_SELECT: usize = 100;

const DB: &str = "campaign.sqlite";

/// Start a campaign in `dir` (which must not hold one already). Everything is checked
/// first; a start that fails before its first plan leaves nothing behind.
pub fn start(dir: &Path, config: CampaignConfig, run: RunOptions) -> Result<()> {
    if dir.join(DB).exists() {
        bail!("{} holds a campaign already: continue it with --resume {}", dir.display(), dir.display());
    }
    let llvm = Llvm::from_opt(config.opt.as_deref())?;
    let catalog = catalog_for(&llvm)?;
    let checked = preflight::check(&config, &catalog, &llvm)?;
    let (target, _) = crate::llvm::TargetSpec::split_flags(&config.llvm_args);
    if let Some(triple) = target.triple.filter(|t| !crate::llvm::executes_here(t)) {
        eprintln!(
            "note: programs execute on this host only ({}): for {triple} the campaign judges crashes, fatal \
             errors, hangs and broken IR, not wrong code",
            crate::llvm::host_triple()
        );
    }
    let created_dir = !dir.exists();
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let result = (|| {
        let store = Store::open(&dir.join(DB))?;
        store.set_meta("config", &serde_json::to_string(&config)?)?;
        store.set_meta("llvm_version", &llvm.version())?;
        store.set_meta("created", &store::now())?;
        if let Some(sequences) = &checked.sequences {
            store.set_meta("sequences", &serde_json::to_string(sequences)?)?;
        }
        if let Some((seeds, left_out)) = &checked.seeds {
            store.set_meta("seeds", &serde_json::to_string(seeds)?)?;
            store.set_meta("seeds_left_out", &serde_json::to_string(left_out)?)?;
            for line in seeds::SeedStats::new(seeds, left_out.clone()).lines() {
                eprintln!("note: {line}");
            }
        }
        drive(dir, config, store, run, llvm)
    })();
    if result.is_err() {
        discard_if_unplanned(dir, created_dir);
    }
    result
}

/// Remove what a start that failed before planning anything wrote, so that the corrected
/// command is not told to resume a campaign that never ran.
fn discard_if_unplanned(dir: &Path, created_dir: bool) {
    let planned = Store::open_read_only(&dir.join(DB)).and_then(|s| s.iterations()).is_ok_and(|n| n > 0);
    if planned {
        return;
    }
    if created_dir {
        let _ = std::fs::remove_dir_all(dir);
    } else {
        for name in [DB, "campaign.sqlite-wal", "campaign.sqlite-shm", "stats.json", "stats.json.tmp"] {
            let _ = std::fs::remove_file(dir.join(name));
        }
        let _ = std::fs::remove_dir_all(dir.join("programs"));
    }
}

/// The configuration stored in the campaign folder `dir`.
pub fn stored_config(dir: &Path) -> Result<CampaignConfig> {
    config_in(&open_campaign(dir)?)
}

fn config_in(store: &Store) -> Result<CampaignConfig> {
    let config = store.get_meta("config")?.context("the campaign has no configuration")?;
    Ok(serde_json::from_str(&config)?)
}

/// The LLVM the campaign in `dir` tests, as it recorded it: version and external `opt`.
pub fn stored_llvm(dir: &Path) -> Result<(String, Option<PathBuf>)> {
    let store = open_campaign(dir)?;
    Ok((recorded_llvm_version(&store)?, config_in(&store)?.opt))
}

/// The version the campaign recorded when it started (older campaigns did not: the linked).
pub(crate) fn recorded_llvm_version(store: &Store) -> Result<String> {
    Ok(store.get_meta("llvm_version")?.unwrap_or_else(|| Llvm::Linked.version()))
}

/// The campaign's store, read-only, after checking that `dir` holds one.
pub(crate) fn open_campaign(dir: &Path) -> Result<Store> {
    if !dir.is_dir() {
        bail!("{}: no such folder", dir.display());
    }
    if !dir.join(DB).is_file() {
        bail!("{} holds no campaign (no {DB}); start one with ctos fuzz --out {}", dir.display(), dir.display());
    }
    let store = Store::open_read_only(&dir.join(DB))?;
    if store.get_meta("config").ok().flatten().is_none() {
        bail!("{} is not a ctos campaign (its {DB} has no configuration)", dir.display());
    }
    Ok(store)
}

/// What a resumed run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resumed {
    Ran,
    /// The campaign had done all of its iterations and was given no more.
    AlreadyDone {
        iterations: i64,
    },
}

/// Continue the campaign in `dir` where it stopped. `more_iterations` extends it by that
/// many iterations (an interrupted one counts); a time limit alone lifts the iteration cap
/// of a campaign that has reached it.
pub fn resume(dir: &Path, run: RunOptions, more_iterations: Option<usize>) -> Result<Resumed> {
    open_campaign(dir)?;
    let store = Store::open(&dir.join(DB))?;
    let mut config = config_in(&store)?;
    let version = store.get_meta("llvm_version")?.unwrap_or_default();
    let llvm = Llvm::from_opt(config.opt.as_deref())?;
    if version != llvm.version() {
        let now = match &llvm {
            Llvm::External(o) => format!("{} is LLVM {}", o.opt.display(), o.version),
            Llvm::Linked => format!("this ctos links LLVM {}", llvm.version()),
        };
        bail!("the campaign ran on LLVM {version}; {now}");
    }
    let finished = store.finished_iterations()?;
    let capped = |c: &CampaignConfig| c.max_iterations.is_some_and(|m| finished >= m as i64);
    match more_iterations {
        Some(n) => config.max_iterations = Some(finished as usize + n),
        None if run.time_limit.is_some() && capped(&config) => config.max_iterations = None,
        None => {}
    }
    if capped(&config) && store.pending_failures()?.is_empty() {
        return Ok(Resumed::AlreadyDone { iterations: finished });
    }
    store.set_meta("config", &serde_json::to_string(&config)?)?;
    drive(dir, config, store, run, llvm)?;
    Ok(Resumed::Ran)
}

/// `llvm`: the campaign's, located by the caller.
fn drive(dir: &Path, config: CampaignConfig, store: Store, run: RunOptions, llvm: Llvm) -> Result<()> {
    crate::llvm::init();
    let started = Instant::now();
    let sequences = match (&config.sequences_file, store.get_meta("sequences")?) {
        (None, _) => None,
        (Some(_), Some(json)) => Some(serde_json::from_str(&json)?),
        (Some(file), None) => bail!("the campaign lost the pipelines of {}", file.display()),
    };
    let seeds = match (config.seeds_dirs.is_empty(), store.get_meta("seeds")?) {
        (true, _) => Vec::new(),
        (false, Some(json)) => serde_json::from_str(&json)?,
        (false, None) => bail!("the campaign lost the seeds of --seeds"),
    };
    let sync = config.sync.as_deref().map(|s| sync::SyncDir::open(s, dir)).transpose()?;
    let mut campaign = Campaign {
        sequences,
        seeds,
        sync,
        dir: dir.to_path_buf(),
        catalog: catalog_for(&llvm)?,
        frontend: llvm.frontend()?,
        llvm,
        stats: Stats::new(dir, &store, run.status_line)?,
        config,
        store,
        jobs: run.jobs.max(1),
        started,
        deadline: run.time_limit.map(|t| started + t),
    };
    // Failures found before an interruption are reduced first.
    let t = Instant::now();
    bugs::process_pending(&mut campaign)?;
    finish::finish_all(&mut campaign)?;
    // Every stretch of the loop is counted toward a phase, the store's reads and writes as
    // bookkeeping: on a short campaign their fsyncs are a visible share of the run.
    let mut t = campaign.stats.spent("reduction", t);
    loop {
        if campaign.out_of_time() {
            break;
        }
        let iteration = match campaign.store.open_iteration()? {
            Some(i) => i,
            None => {
                let done = campaign.store.iterations()?;
                if campaign.config.max_iterations.is_some_and(|m| done as usize >= m) {
                    break;
                }
                done
            }
        };
        if campaign.store.iteration_state(iteration)?.as_deref() != Some("testing") {
            campaign.store.begin_iteration(iteration)?;
            campaign.stats.spent("bookkeeping", t);
            plan::plan_iteration(&mut campaign, iteration)?;
            t = Instant::now();
        }
        campaign.stats.iteration = iteration;
        let finished = pairs::test_iteration(&mut campaign, iteration)?;
        t = campaign.stats.spent("testing", t);
        bugs::process_pending(&mut campaign)?;
        finish::finish_all(&mut campaign)?;
        t = campaign.stats.spent("reduction", t);
        if finished {
            campaign.store.set_iteration_state(iteration, "finished")?;
        }
        campaign.stats.write(&campaign.dir, &campaign.store, campaign.started)?;
        t = campaign.stats.spent("bookkeeping", t);
        if !finished {
            break;
        }
    }
    campaign.stats.spent("bookkeeping", t);
    campaign.stats.finish(&campaign.dir, &campaign.store, campaign.started)?;
    Ok(())
}
