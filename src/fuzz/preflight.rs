//! Everything a campaign is given, checked before its folder exists: a mistake found an
//! hour in, or one that leaves a half-made campaign behind, is worse than none.

use std::path::Path;

use anyhow::{bail, Context as _, Result};

use crate::fuzz::bug::finish;
use crate::fuzz::bug::reduce_ir;
use crate::fuzz::config::CampaignConfig;
use crate::fuzz::programs::candidate::program_files;
use crate::fuzz::programs::pool;
use crate::fuzz::programs::seed_options::OptionKinds;
use crate::fuzz::programs::seeds;
use crate::fuzz::programs::seeds::{LeftOut, SeedEntry};
use crate::llvm::{CFrontend, IrModule, TargetSpec};
use crate::program::{find_on_path, Generator};
use crate::sandbox::Llvm;
use crate::sandbox::{check_pipelines, Pool, Rejection};
use crate::seq::{pipeline_lines, render_with, Catalog, Sequence};

/// What checking produced that the campaign keeps: the user's pipelines, rendered, and
/// the seeds it can use with those it left out.
pub(super) struct Checked {
    pub sequences: Option<Vec<String>>,
    pub seeds: Option<(Vec<SeedEntry>, LeftOut)>,
}

/// `opt`: the campaign's, located by the caller.
pub(super) fn check(config: &CampaignConfig, catalog: &Catalog, llvm: &Llvm) -> Result<Checked> {
    let (i, n) = config.shard;
    if n == 0 || i >= n {
        bail!("--shard {i}/{n}: the shard index must be below the number of shards");
    }
    if config.seq_select == 0 || config.prog_select == 0 {
        bail!("--seq-select and --prog-select must be at least 1");
    }
    if config.seq_min == 0 || config.seq_min > config.seq_max {
        bail!("--seq-len {}..{}: need 1 <= MIN <= MAX", config.seq_min, config.seq_max);
    }
    for (flag, seconds) in [
        ("--opt-timeout", config.opt_timeout),
        ("--exec-timeout", config.exec_timeout),
        ("--reduce-programs-time", config.reduce_programs_seconds),
    ] {
        if !(seconds > 0.0 && seconds.is_finite()) {
            bail!("{flag} must be a positive time, not {seconds}");
        }
    }
    for (flag, seconds) in
        [("--reduce-ir-time", config.reduce_ir_seconds), ("--localize-time", config.localize_seconds)]
    {
        if !(seconds >= 0.0 && seconds.is_finite()) {
            bail!("{flag} must be a time (0 turns the step off), not {seconds}");
        }
    }
    if config.reduce_ir_seconds > 0.0 {
        reduce_ir::llvm_reduce_for(llvm)?;
    }
    if let Some(sync) = &config.sync {
        // Made when the campaign starts; here nothing is written yet.
        let nearest = sync.ancestors().find(|a| a.exists()).unwrap_or(Path::new("."));
        if !nearest.is_dir() {
            bail!("--sync {}: cannot create it ({} is not a folder)", sync.display(), nearest.display());
        }
    }
    for path in &config.also_opt {
        finish::locate_also(path)?;
    }
    let sequences = match &config.sequences_file {
        Some(file) => Some(read_sequences(file, catalog, config)?),
        None => {
            check_pass_set(config, catalog)?;
            None
        }
    };
    let (lines, pipelines): (Vec<usize>, Vec<String>) = sequences.unwrap_or_default().into_iter().unzip();
    let (target, llvm_args) = TargetSpec::split_flags(&config.llvm_options());
    check_exclude(&config.exclude, catalog)?;
    if let Some(dir) = &config.programs_dir {
        check_programs(dir, &target)?;
    }
    check_generators(config, llvm)?;
    let seeds = check_seeds(config, catalog, llvm)?;
    if config.reduce_programs && find_on_path("cvise").is_none() {
        bail!("--reduce-programs needs cvise (scripts/setup.sh installs it)");
    }
    let checked = Pool::new(2, config.limits(), llvm_args)
        .map_err(|e| Rejection::Target(format!("cannot start the sandbox: {e}")))
        .and_then(|mut pool| check_pipelines(&mut pool, &target, &pipelines));
    checked.map_err(|r| {
        let file = config.sequences_file.as_deref().unwrap_or(Path::new("--sequences"));
        r.located(|index| format!("{}:{}", file.display(), lines[index]))
    })?;
    Ok(Checked { sequences: config.sequences_file.is_some().then_some(pipelines), seeds })
}

/// The seeds of `--seeds`, for the generators that use them: at least one usable.
fn check_seeds(config: &CampaignConfig, catalog: &Catalog, llvm: &Llvm) -> Result<Option<(Vec<SeedEntry>, LeftOut)>> {
    let mix = &config.generator;
    if config.seeds_dirs.is_empty() {
        if mix.has(Generator::Seeds) {
            bail!("--generator seeds needs --seeds DIR (LLVM's regression tests, or .ll files)");
        }
        return Ok(None);
    }
    if config.programs_dir.is_some() {
        bail!("--seeds and --programs both give the programs; give one");
    }
    if !mix.has(Generator::Seeds) && !mix.has(Generator::IrMutate) {
        bail!("--seeds feeds the seeds and ir-mutate generators; --generator {mix} uses neither");
    }
    let (seeds, left_out) = usable_seeds(&config.seeds_dirs, catalog, &config.render(), llvm)?;
    if seeds.is_empty() {
        bail!("--seeds: no seed this LLVM can use ({} left out: {})", left_out.total(), left_out.summary());
    }
    Ok(Some((seeds, left_out)))
}

/// The seeds of `dirs` as a campaign on `llvm` uses them: per file and set of options its
/// RUN lines give, the pipelines they run; and the seeds left out, by reason.
pub fn usable_seeds(
    dirs: &[std::path::PathBuf],
    catalog: &Catalog,
    render: &crate::seq::RenderOptions,
    llvm: &Llvm,
) -> Result<(Vec<SeedEntry>, LeftOut)> {
    // Which of the seeds' options take file names, as the LLVM under test's opt says.
    let help = crate::llvm::opt_hidden_options(&llvm.opt_path())
        .map_err(|e| anyhow::anyhow!("--seeds: cannot ask opt which options name files: {e}"))?;
    seeds::load(dirs, catalog, render, &OptionKinds::from_help(&help))
}

/// The pipelines of `--sequences` with their line numbers, parsed and rendered; errors name
/// the file and line.
fn read_sequences(file: &Path, catalog: &Catalog, config: &CampaignConfig) -> Result<Vec<(usize, String)>> {
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let render = config.render();
    let mut pipelines = Vec::new();
    for (line, pipeline) in pipeline_lines(&text) {
        let seq =
            Sequence::parse_with(pipeline, catalog, &render).with_context(|| format!("{}:{line}", file.display()))?;
        pipelines.push((line, render_with(&seq, catalog, &render)?));
    }
    if pipelines.is_empty() {
        bail!("{} holds no pipeline (one per line; '#' starts a comment)", file.display());
    }
    Ok(pipelines)
}

fn check_pass_set(config: &CampaignConfig, catalog: &Catalog) -> Result<()> {
    let set = catalog.set(&config.pass_set)?;
    if !set.iter().any(|p| catalog.unsafe_reason(&p.name).is_none()) {
        bail!(
            "--pass-set {} leaves no pass to draw: random sequences never draw unsafe passes \
             (`ctos passes --set unsafe` lists them with the reasons)",
            config.pass_set
        );
    }
    Ok(())
}

/// Every pass an `--exclude` pattern names must exist, or the pattern excludes nothing.
fn check_exclude(patterns: &[String], catalog: &Catalog) -> Result<()> {
    for pattern in patterns {
        if pattern.split_whitespace().next().is_none() {
            bail!("--exclude '{pattern}' names no pass");
        }
        for token in pattern.split_whitespace() {
            let name = crate::seq::parse::split_last_params(token).0;
            if catalog.get(token).is_none() && catalog.get(name).is_none() {
                let hint = catalog.suggest(name);
                let hint =
                    if hint.is_empty() { String::new() } else { format!(" (did you mean {}?)", hint.join(", ")) };
                bail!("--exclude '{pattern}': unknown pass '{token}'{hint}");
            }
        }
    }
    Ok(())
}

/// The programs of `--programs`: there are some, and each loads.
fn check_programs(dir: &Path, target: &TargetSpec) -> Result<()> {
    for file in &program_files(dir)? {
        // Every load error names the file already.
        IrModule::load(file, &CFrontend::default(), target).context("--programs")?;
    }
    Ok(())
}

/// The tools the generators of the mix need, and what they cannot be combined with.
fn check_generators(config: &CampaignConfig, llvm: &Llvm) -> Result<()> {
    let mix = &config.generator;
    let mutants = mix.has(Generator::IrMutate);
    if config.programs_dir.is_some() && mutants && mix.generators().len() > 1 {
        bail!("--programs replaces generated programs; with it, --generator may only be ir-mutate (mutants of them)");
    }
    let csmith_needed = match &config.programs_dir {
        Some(_) => false,
        None => {
            (mutants && config.seeds_dirs.is_empty())
                || mix.generators().iter().any(|g| g.is_csmith() || *g == Generator::Hermes)
        }
    };
    if csmith_needed && find_on_path("csmith").is_none() {
        bail!("csmith is not installed (scripts/setup.sh installs it), or test your own programs with --programs DIR");
    }
    if mix.has(Generator::LlvmStress) {
        pool::stress_tool(llvm)?;
    }
    if let Some(opt) = llvm.external().filter(|o| mutants && o.major() < Llvm::Linked.major()) {
        bail!(
            "ir-mutate writes its mutants as LLVM {} IR, which {} (LLVM {}) may not read; use the ctos build of LLVM {}",
            Llvm::Linked.major(),
            opt.opt.display(),
            opt.major(),
            opt.major()
        );
    }
    Ok(())
}
