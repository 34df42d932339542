//! What defines a campaign: stored in its folder at the start, read back on `--resume`.
//! It imports nothing else of `fuzz/`, so every room may read it.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::program::{Generator, GeneratorMix};
use crate::sandbox::Limits;
use crate::seq::{Nesting, RenderOptions};

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

/// Sequences per iteration. Each iteration's programs cost ~3 s apiece to generate,
/// compile and screen and a pair ~0.1 s to test (2 workers): with 50 sequences planning
/// took a third of a campaign's time, with 100 about a fifth.
pub const DEFAULT_SEQ_SELECT: usize = 100;

/// A seed per (campaign seed, iteration, purpose): iterations and shards replay alike.
pub fn derive(seed: u64, iteration: i64, purpose: u64) -> u64 {
    xxhash_rust::xxh3::xxh3_64(&[seed.to_le_bytes(), (iteration as u64).to_le_bytes(), purpose.to_le_bytes()].concat())
}
