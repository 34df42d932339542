//! A campaign run's state: its folder, store, LLVM and catalog, the checked inputs, the
//! clock and the stats, handed to every room the loop calls.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Result};

use crate::fuzz::config::{CampaignConfig, RunOptions};
use crate::fuzz::folder::{stats::Stats, store::Store, sync::SyncDir};
use crate::fuzz::programs::seeds::SeedEntry;
use crate::llvm::CFrontend;
use crate::program::catalog_for;
use crate::sandbox::Llvm;
use crate::seq::Catalog;

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
    pub seeds: Vec<SeedEntry>,
    /// Where the shards share their causes (`--sync`).
    pub sync: Option<SyncDir>,
}

impl Campaign {
    /// The campaign of `dir` as its stored inputs and this run's options make it; its
    /// clock starts now.
    pub fn new(dir: &Path, config: CampaignConfig, store: Store, run: RunOptions, llvm: Llvm) -> Result<Campaign> {
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
        let sync = config.sync.as_deref().map(|s| SyncDir::open(s, dir)).transpose()?;
        Ok(Campaign {
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
        })
    }

    pub fn out_of_time(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}
