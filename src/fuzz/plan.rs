//! Planning one iteration: random pools of sequences and programs, embedded and
//! selected for diversity.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::embed::{doc2vec::Doc2VecParams, embed_programs, embed_sequences};
use crate::fuzz::campaign::Campaign;
use crate::fuzz::config::{derive, Selection};
use crate::fuzz::folder::store::{ProgramRow, SelectionPoint};
use crate::fuzz::programs::candidate;
use crate::fuzz::programs::candidate::Body;
use crate::fuzz::programs::pool;
use crate::fuzz::programs::seeds;
use crate::llvm::{CFrontend, IrModule, TargetSpec};
use crate::program::Generator;
use crate::select::{project_2d, random_select, select_representatives, XMeansParams};
use crate::seq::random::random_pool_excluding;
use crate::seq::{render_with, Pass, Sequence};

/// Indices of `k` of `points`, in selection order.
fn choose(selection: Selection, points: &[Vec<f32>], k: usize, seed: u64) -> Vec<usize> {
    match selection {
        Selection::Ctos => select_representatives(points, k, &XMeansParams::default(), seed),
        Selection::Random => random_select(points.len(), k, seed),
    }
}

pub(super) fn plan_iteration(c: &mut Campaign, iteration: i64) -> Result<()> {
    let t = Instant::now();
    c.stats.tick(&c.dir, &c.store, c.started, "planning")?;
    c.stats.spent("bookkeeping", t);
    let sequences = plan_sequences(c, iteration)?;
    let programs = plan_programs(c, iteration)?;
    if programs.is_empty() {
        bail!("iteration {iteration}: no generated program compiled");
    }
    let own = own_sequences(c, iteration, &programs)?;
    let t = Instant::now();
    c.store.save_plan(iteration, &programs, &sequences, &own)?;
    c.stats.spent("bookkeeping", t);
    Ok(())
}

/// The passes random sequences and a seed's variants draw from: `--pass-set` without its
/// unsafe passes.
fn drawable_passes(c: &Campaign) -> Result<Vec<Pass>> {
    Ok(c.catalog.set(&c.config.pass_set)?.into_iter().filter(|p| c.catalog.unsafe_reason(&p.name).is_none()).collect())
}

/// Variants of each of a seed's own pipelines that run besides it.
const PERTURBATIONS: usize = 3;

/// Each program's own sequences: a seed's (or its mutant's) RUN pipelines, each with
/// [`PERTURBATIONS`] variants (a pass dropped, repeated, swapped or added from the set).
fn own_sequences(c: &Campaign, iteration: i64, programs: &[ProgramRow]) -> Result<Vec<Vec<String>>> {
    let mut rng = ChaCha8Rng::seed_from_u64(derive(c.config.seed, iteration, 7));
    let render = c.config.render();
    let pool = drawable_passes(c)?;
    Ok(programs
        .iter()
        .map(|p| {
            let mut own = Vec::new();
            for pipeline in seeds::own_pipelines(&p.origin) {
                let variants = seeds::perturbed(&mut rng, &pipeline, &pool, &c.catalog, &render, PERTURBATIONS);
                own.push(pipeline);
                own.extend(variants);
            }
            own
        })
        .collect())
}

fn plan_sequences(c: &mut Campaign, iteration: i64) -> Result<Vec<String>> {
    let t = Instant::now();
    let render = c.config.render();
    if let Some(sequences) = &c.sequences {
        return Ok(sequences.clone());
    }
    let pool = drawable_passes(c)?;
    let mut exclude: Vec<Vec<String>> =
        c.config.exclude.iter().map(|e| e.split_whitespace().map(str::to_string).collect()).collect();
    let known = if c.config.keep_known { Vec::new() } else { known_causes(c)? };
    exclude.extend(known.iter().cloned());
    let mut rng = ChaCha8Rng::seed_from_u64(derive(c.config.seed, iteration, 1));
    let lengths = (c.config.seq_min, c.config.seq_max);
    let Some((candidates, dropped)) =
        random_pool_excluding(&mut rng, &pool, lengths, c.config.seq_pool, &exclude, &c.catalog)
    else {
        let known = match known.len() {
            0 => String::new(),
            n => format!(" (with the reduced sequences of {n} known bugs; --keep-known keeps them)"),
        };
        bail!("the exclusion patterns reject almost every random sequence{known}");
    };
    c.store.add_excluded(iteration, dropped)?;
    let t = c.stats.spent("sequence generation", t);
    let tokens: Vec<Vec<String>> =
        candidates.iter().map(|s| s.passes().iter().map(|p| p.to_string()).collect()).collect();
    let points = match c.config.selection {
        Selection::Ctos => embed_sequences(&tokens, &Doc2VecParams::sequences(), derive(c.config.seed, iteration, 2)),
        Selection::Random => vec![Vec::new(); tokens.len()],
    };
    let t = c.stats.spent("sequence embedding (doc2vec)", t);
    let chosen = choose(c.config.selection, &points, c.config.seq_select, derive(c.config.seed, iteration, 3));
    save_projection(c, iteration, "sequence", &points, &chosen)?;
    let rendered = chosen.into_iter().map(|i| Ok(render_with(&candidates[i], &c.catalog, &render)?)).collect();
    c.stats.spent("selection (x-means)", t);
    rendered
}

/// Keep the pool's 2-D projection with the chosen ones marked, for `ctos report --html`
/// (nothing when the selection embeds nothing).
fn save_projection(c: &mut Campaign, iteration: i64, kind: &str, points: &[Vec<f32>], chosen: &[usize]) -> Result<()> {
    if points.iter().all(Vec::is_empty) {
        return Ok(());
    }
    let rows: Vec<SelectionPoint> = project_2d(points)
        .into_iter()
        .enumerate()
        .map(|(i, (x, y))| SelectionPoint {
            iteration,
            kind: kind.to_string(),
            item: i as i64,
            x,
            y,
            selected: chosen.contains(&i),
        })
        .collect();
    c.store.save_selection(&rows)
}

/// The reduced sequences of the campaign's bugs and of the causes other shards published
/// (`--sync`), as exclusion patterns: a pass whose parameters are only the ones parsing adds
/// by default is named bare, so that it matches however a random sequence spells it.
pub(super) fn known_causes(c: &Campaign) -> Result<Vec<Vec<String>>> {
    let render = c.config.render();
    let mut patterns = Vec::new();
    let mut reduced: Vec<String> = c.store.bugs()?.into_iter().map(|b| b.reduced).collect();
    if let Some(sync) = &c.sync {
        reduced.extend(sync.causes()?.into_iter().map(|cause| cause.reduced));
    }
    for text in reduced {
        let reduced = Sequence::parse_with(&text, &c.catalog, &render)?;
        let tokens = reduced
            .passes()
            .into_iter()
            .map(|p| {
                let bare = render.apply_defaults(Pass { name: p.name.clone(), params: None });
                if bare == *p {
                    p.name.clone()
                } else {
                    p.to_string()
                }
            })
            .collect();
        patterns.push(tokens);
    }
    Ok(patterns)
}

/// Write `bitcode` of program `name` into the campaign's programs folder.
/// Keep a program's C source (if any) and IR (bitcode, or text as a user gave it).
fn store_program(dir: &Path, name: &str, source: Option<&str>, ir: &[u8]) -> Result<(Option<String>, String)> {
    let programs = dir.join("programs");
    std::fs::create_dir_all(&programs)?;
    let source_rel = source
        .map(|text| -> Result<String> {
            let rel = format!("programs/{name}.c");
            std::fs::write(dir.join(&rel), text)?;
            Ok(rel)
        })
        .transpose()?;
    let extension = if ir.starts_with(b"BC\xC0\xDE") { "bc" } else { "ll" };
    let ir_rel = format!("programs/{name}.{extension}");
    std::fs::write(dir.join(&ir_rel), ir)?;
    Ok((source_rel, ir_rel))
}

fn plan_programs(c: &mut Campaign, iteration: i64) -> Result<Vec<ProgramRow>> {
    let frontend = c.frontend.clone();
    if let Some(dir) = c.config.programs_dir.clone().filter(|_| !c.config.generator.has(Generator::IrMutate)) {
        let t = Instant::now();
        let programs = user_programs(c, &dir, iteration, &frontend);
        c.stats.spent("compiling (clang)", t);
        return programs;
    }
    let candidates = pool::candidates(c, iteration)?;
    let t = Instant::now();
    c.stats.tick(&c.dir, &c.store, c.started, "compiling programs")?;
    let scratch = tempfile::tempdir()?;
    let mut sources = Vec::new();
    for p in &candidates {
        if let Body::C(text) = &p.body {
            sources.push(scratch.path().join(format!("{}.c", p.suffix)));
            std::fs::write(sources.last().expect("just pushed"), text)?;
        }
    }
    let mut compiled = frontend.compile_many(&sources, c.jobs).into_iter();
    let mut pool: Vec<(ProgramRow, Vec<crate::llvm::FunctionCfg>)> = Vec::new();
    for p in candidates {
        let (source, bytes) = match p.body {
            Body::C(text) => (Some(text), compiled.next().expect("one result per C program")),
            Body::Ir(text) => (None, Ok(text.into_bytes())),
        };
        let Ok(bytes) = bytes else { continue };
        let name = format!("i{iteration:03}-{}", p.suffix);
        // Loading verifies: a program that is not valid IR is never tested.
        let Ok(module) = IrModule::from_bytes(&bytes, &name, &TargetSpec::default()) else { continue };
        let (source, ir) = store_program(&c.dir, &name, source.as_deref(), &bytes)?;
        let row =
            ProgramRow { id: 0, iteration, name, origin: p.origin.to_string(), source, ir, status: String::new() };
        pool.push((row, module.function_cfgs()));
    }
    let t = c.stats.spent("compiling (clang)", t);
    let points = match c.config.selection {
        Selection::Ctos => {
            let cfgs: Vec<Vec<crate::llvm::FunctionCfg>> = pool.iter().map(|p| p.1.clone()).collect();
            embed_programs(&cfgs, &Doc2VecParams::instructions(), derive(c.config.seed, iteration, 5))
        }
        Selection::Random => vec![Vec::new(); pool.len()],
    };
    let t = c.stats.spent("program embedding (region graphs, doc2vec)", t);
    let order = choose(c.config.selection, &points, c.config.prog_select, derive(c.config.seed, iteration, 6));
    save_projection(c, iteration, "program", &points, &order)?;
    c.stats.spent("selection (x-means)", t);
    // Not screened for undefined behaviour here: only a wrong-code verdict depends on it (LLVM
    // must not crash on any program), so a program is screened when it has one (pairs.rs).
    Ok(order.into_iter().map(|i| pool[i].0.clone()).collect())
}

fn user_programs(c: &Campaign, dir: &Path, iteration: i64, frontend: &CFrontend) -> Result<Vec<ProgramRow>> {
    let files = candidate::program_files(dir)?;
    let mut rows = Vec::new();
    for (k, file) in files.iter().enumerate() {
        let name = format!("i{iteration:03}-u{k:03}");
        let loading = || format!("loading {}", file.display());
        let bytes = frontend.ir_bytes(file).with_context(loading)?;
        let module =
            IrModule::from_bytes(&bytes, &file.display().to_string(), &TargetSpec::default()).with_context(loading)?;
        let source =
            if file.extension().is_some_and(|e| e == "c") { Some(std::fs::read_to_string(file)?) } else { None };
        // An external opt reads the program as given (or as its clang made it): the linked
        // LLVM's bitcode may be too new for it.
        let ir_bytes = if c.llvm.external().is_some() { bytes } else { module.bitcode() };
        let (source, ir) = store_program(&c.dir, &name, source.as_deref(), &ir_bytes)?;
        let origin = serde_json::json!({ "file": file.to_string_lossy() });
        rows.push(ProgramRow { id: 0, iteration, name, origin: origin.to_string(), source, ir, status: String::new() });
    }
    Ok(rows)
}
