//! Test programs from csmith: default options (RP), swarm (RPS) and the swarm variant (RPSv),
//! regenerated until large enough (the spec's 80 KB minimum).

use std::fs::{self, File};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::anyhow;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tempfile::TempDir;

use super::children::{run_all, Ended, Job, Step};
use super::swarm;

/// Where programs come from (the paper's RP, RPS, RPSv, Hermes' EMI variants, and IR).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Generator {
    /// csmith with its default options.
    Csmith,
    /// Swarm testing: each csmith feature on or off, each probability 0 or its maximum.
    Swarm,
    /// Each feature on or off, each probability uniform in [0, maximum].
    SwarmV,
    /// Live-code EMI variants (Hermes) of csmith programs free of undefined behaviour; each
    /// variant must print what its csmith program prints.
    Hermes,
    /// LLVM's random IR generator (vectors, odd integer widths, phis): one function without
    /// `main`, so judged on the optimizer only (crash, invalid IR, fatal error).
    LlvmStress,
    /// The IR rules of the witness mutator applied to seed modules (csmith programs,
    /// `--programs`, the campaign's bug reproducers).
    IrMutate,
    /// The modules of `--seeds` (LLVM's regression tests), each with its RUN lines'
    /// pipelines and options.
    Seeds,
}

impl Generator {
    /// Whether the programs are csmith's C (the rest are IR, or C made from csmith's).
    pub fn is_csmith(self) -> bool {
        matches!(self, Generator::Csmith | Generator::Swarm | Generator::SwarmV)
    }

    pub fn name(self) -> &'static str {
        match self {
            Generator::Csmith => "csmith",
            Generator::Swarm => "swarm",
            Generator::SwarmV => "swarm-v",
            Generator::Hermes => "hermes",
            Generator::LlvmStress => "llvm-stress",
            Generator::IrMutate => "ir-mutate",
            Generator::Seeds => "seeds",
        }
    }

    const ALL: [Generator; 7] = [
        Generator::Csmith,
        Generator::Swarm,
        Generator::SwarmV,
        Generator::Hermes,
        Generator::LlvmStress,
        Generator::IrMutate,
        Generator::Seeds,
    ];
}

/// The generators of a campaign, sharing each iteration's program pool in turn. Stored as
/// their names joined by commas, so a campaign of one generator reads as before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratorMix(Vec<Generator>);

impl GeneratorMix {
    pub fn one(generator: Generator) -> GeneratorMix {
        GeneratorMix(vec![generator])
    }

    /// `csmith,llvm-stress,ir-mutate`: each name once, in the order given.
    pub fn parse(text: &str) -> Result<GeneratorMix, String> {
        let mut mix = Vec::new();
        for name in text.split(',').map(str::trim) {
            let Some(&g) = Generator::ALL.iter().find(|g| g.name() == name) else {
                let names: Vec<&str> = Generator::ALL.iter().map(|g| g.name()).collect();
                return Err(format!("no generator '{name}' (there are {}; mix them with commas)", names.join(", ")));
            };
            if mix.contains(&g) {
                return Err(format!("'{name}' is given twice"));
            }
            mix.push(g);
        }
        Ok(GeneratorMix(mix))
    }

    pub fn generators(&self) -> &[Generator] {
        &self.0
    }

    pub fn has(&self, generator: Generator) -> bool {
        self.0.contains(&generator)
    }

    /// How many of `pool` programs each generator makes: equal shares, the first ones
    /// taking the remainder.
    pub fn shares(&self, pool: usize) -> Vec<(Generator, usize)> {
        let n = self.0.len();
        self.0.iter().enumerate().map(|(i, &g)| (g, pool / n + usize::from(i < pool % n))).collect()
    }
}

impl std::fmt::Display for GeneratorMix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.0.iter().map(|g| g.name()).collect();
        f.write_str(&names.join(","))
    }
}

impl serde::Serialize for GeneratorMix {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for GeneratorMix {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        GeneratorMix::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[derive(Debug, Clone)]
pub struct GenConfig {
    pub generator: Generator,
    /// Smaller outputs are thrown away and csmith runs again (bytes).
    pub min_size: usize,
    /// csmith runs per program before giving up.
    pub max_attempts: usize,
    /// Per csmith run; some swarm configurations make csmith loop forever.
    pub timeout: Duration,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig { generator: Generator::Csmith, min_size: 80_000, max_attempts: 20, timeout: Duration::from_secs(30) }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Generated {
    pub seed: u64,
    /// Reproduce with `csmith ARGS` in a directory holding `probabilities` as
    /// `probabilities.txt` (when there is one).
    pub csmith_args: Vec<String>,
    /// The `--probability-configuration` file of a swarm program.
    pub probabilities: Option<String>,
    pub source: String,
    /// csmith runs it took, the successful one included.
    pub attempts: usize,
}

/// Deterministic in `seed`: csmith seeds and swarm choices derive from it. Regenerates
/// (next derived csmith seed, and for swarm a new configuration) until the output has at
/// least `min_size` bytes; an error after `max_attempts` csmith runs.
pub fn generate(seed: u64, config: &GenConfig) -> anyhow::Result<Generated> {
    generate_many(&[seed], config, 1).pop().expect("one result per seed")
}

/// `generate` for each seed, with up to `jobs` csmith processes at a time and no threads
/// (callers fork afterwards). Results in input order.
pub fn generate_many(seeds: &[u64], config: &GenConfig, jobs: usize) -> Vec<anyhow::Result<Generated>> {
    run_all(seeds.iter().map(|&seed| GenJob::new(seed, config)).collect(), jobs)
}

const CSMITH: &str = "csmith";
const PROBABILITIES: &str = "probabilities.txt";
const DEFAULTS: &str = "defaults.txt";
const OUTPUT: &str = "program.c";
const STDERR: &str = "stderr.txt";

enum Phase {
    /// csmith writes the default probabilities for this attempt's feature switches.
    Defaults,
    Generate,
}

struct GenJob<'a> {
    seed: u64,
    config: &'a GenConfig,
    rng: ChaCha8Rng,
    /// csmith writes `platform.info` into its working directory: one scratch dir per job.
    dir: Option<TempDir>,
    phase: Phase,
    attempts: usize,
    args: Vec<String>,
    probabilities: Option<String>,
    /// Why earlier attempts were thrown away, for the error message.
    rejected: Vec<String>,
}

impl<'a> GenJob<'a> {
    fn new(seed: u64, config: &'a GenConfig) -> Self {
        GenJob {
            seed,
            config,
            rng: ChaCha8Rng::seed_from_u64(seed),
            dir: None,
            phase: Phase::Generate,
            attempts: 0,
            args: Vec::new(),
            probabilities: None,
            rejected: Vec::new(),
        }
    }

    fn dir(&self) -> &Path {
        self.dir.as_ref().expect("created in start").path()
    }

    fn attempt(&mut self) -> Step<anyhow::Result<Generated>> {
        if self.attempts == self.config.max_attempts {
            return Step::Done(Err(anyhow!(
                "csmith made no program of at least {} bytes for seed {} in {} attempts ({})",
                self.config.min_size,
                self.seed,
                self.attempts,
                self.rejected.join("; ")
            )));
        }
        self.attempts += 1;
        self.args = vec!["--seed".into(), self.rng.random::<u32>().to_string()];
        self.probabilities = None;
        if !matches!(self.config.generator, Generator::Swarm | Generator::SwarmV) {
            self.phase = Phase::Generate;
            return self.csmith(&self.args);
        }
        let flags = swarm::feature_flags(&mut self.rng);
        self.args.extend(flags);
        self.phase = Phase::Defaults;
        let mut dump = self.args[2..].to_vec();
        dump.extend(["--dump-default-probabilities".into(), DEFAULTS.into()]);
        self.csmith(&dump)
    }

    /// A csmith run in the scratch dir with output and messages in files (pipes could fill
    /// up while nobody reads them).
    fn csmith(&self, args: &[String]) -> Step<anyhow::Result<Generated>> {
        let files =
            File::create(self.dir().join(OUTPUT)).and_then(|out| Ok((out, File::create(self.dir().join(STDERR))?)));
        match files {
            Ok((out, err)) => {
                let mut command = Command::new(CSMITH);
                command.args(args).current_dir(self.dir()).stdin(Stdio::null()).stdout(out).stderr(err);
                Step::Run(Box::new(command), self.config.timeout)
            }
            Err(e) => Step::Done(Err(anyhow!("cannot write into {}: {e}", self.dir().display()))),
        }
    }

    /// Write this attempt's random probabilities and start the real run.
    fn after_defaults(&mut self) -> Step<anyhow::Result<Generated>> {
        let uniform = self.config.generator == Generator::SwarmV;
        let written = fs::read_to_string(self.dir().join(DEFAULTS))
            .map_err(anyhow::Error::from)
            .and_then(|defaults| swarm::randomize(&defaults, uniform, &mut self.rng))
            .and_then(|probabilities| {
                fs::write(self.dir().join(PROBABILITIES), &probabilities)?;
                Ok(probabilities)
            });
        match written {
            Ok(probabilities) => {
                self.probabilities = Some(probabilities);
                self.args.extend(["--probability-configuration".into(), PROBABILITIES.into()]);
                self.phase = Phase::Generate;
                self.csmith(&self.args)
            }
            Err(e) => {
                Step::Done(Err(e.context(format!("csmith {} --dump-default-probabilities", self.args.join(" ")))))
            }
        }
    }

    fn after_generate(&mut self, status: std::process::ExitStatus) -> Step<anyhow::Result<Generated>> {
        if !status.success() {
            let stderr = fs::read_to_string(self.dir().join(STDERR)).unwrap_or_default();
            let first = stderr.lines().next().unwrap_or("no message");
            self.rejected.push(format!("csmith {status}: {first}"));
            return self.attempt();
        }
        let source = match fs::read(self.dir().join(OUTPUT)) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => return Step::Done(Err(anyhow!("cannot read csmith's output: {e}"))),
        };
        if source.len() < self.config.min_size {
            self.rejected.push(format!("{} bytes", source.len()));
            return self.attempt();
        }
        Step::Done(Ok(Generated {
            seed: self.seed,
            csmith_args: std::mem::take(&mut self.args),
            probabilities: self.probabilities.take(),
            source,
            attempts: self.attempts,
        }))
    }
}

impl Job for GenJob<'_> {
    type Output = anyhow::Result<Generated>;

    fn start(&mut self) -> Step<Self::Output> {
        match tempfile::Builder::new().prefix("ctos-csmith-").tempdir() {
            Ok(dir) => {
                self.dir = Some(dir);
                self.attempt()
            }
            Err(e) => Step::Done(Err(anyhow!("cannot create a scratch directory for csmith: {e}"))),
        }
    }

    fn next(&mut self, ended: Ended, _elapsed: Duration) -> Step<Self::Output> {
        match (ended, &self.phase) {
            (Ended::Error(e), _) => {
                Step::Done(Err(anyhow!("cannot run {CSMITH}: {e} (install it with scripts/setup.sh)")))
            }
            (Ended::TimedOut, _) => {
                self.rejected.push(format!("timed out after {:?}", self.config.timeout));
                self.attempt()
            }
            (Ended::Exited(status), Phase::Defaults) if !status.success() => {
                Step::Done(Err(anyhow!("csmith rejects the swarm switches {}: {status}", self.args[2..].join(" "))))
            }
            (Ended::Exited(_), Phase::Defaults) => self.after_defaults(),
            (Ended::Exited(status), Phase::Generate) => self.after_generate(status),
        }
    }
}
