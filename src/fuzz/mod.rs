//! `ctos fuzz`: the CTOS campaign. Each iteration plans diverse programs and pass
//! sequences (embeddings + centroid selection), tests every pair in the sandbox, and
//! reduces and de-duplicates what fails into one folder per unique bug.

mod bug;
mod campaign;
mod config;
mod folder;
mod pairs;
mod plan;
mod preflight;
mod programs;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context as _, Result};

pub use bug::{cvise, interesting};
pub use config::{CampaignConfig, RunOptions, Selection, DEFAULT_SEQ_SELECT};
pub use folder::campaign_page::write_campaign_page;
pub use folder::merge::merge;
pub use folder::report::{print_report, BugReport};
pub use folder::stats::Stats;
pub use folder::store;
pub use preflight::usable_seeds;
pub use programs::seeds::{LeftOut, SeedEntry};

use crate::program::catalog_for;
use crate::sandbox::Llvm;
use campaign::Campaign;
use folder::store::{open_campaign, recorded_llvm_version, Store, DB};
use programs::seeds;

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
        store.set_meta("created", &folder::store::now())?;
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
    let mut campaign = Campaign::new(dir, config, store, run, llvm)?;
    // Failures found before an interruption are reduced first.
    let t = Instant::now();
    bug::bugs::process_pending(&mut campaign)?;
    bug::finish::finish_all(&mut campaign)?;
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
        bug::bugs::process_pending(&mut campaign)?;
        bug::finish::finish_all(&mut campaign)?;
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
