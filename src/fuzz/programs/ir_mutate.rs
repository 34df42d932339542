//! `--generator ir-mutate`: IR mutants of seed modules (alive-mutate's idea with the witness
//! mutator's rules). Seeds are `--programs` when given, else csmith programs, and the
//! campaign's own bug reproducers (near a known failure, other failures hide).
//!
//! Half of the mutants of a seed that may run get only edits that keep what the program
//! computes (flags and `volatile` dropped, loads and stores made volatile, blocks, loops,
//! calls and edges behind an always-false guard): they are executed, and their wrong code
//! counts when the seed's C is free of undefined behaviour. The other mutants take any
//! rule (opcodes, predicates, constants, operands): nothing screens IR for undefined
//! behaviour, so they are judged on the optimizer alone. Every mutant passes the verifier.

use std::time::Instant;

use anyhow::Result;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::fuzz::campaign::Campaign;
use crate::fuzz::programs::candidate;
use crate::fuzz::programs::candidate::{Body, Candidate};
use crate::fuzz::programs::csmith;
use crate::fuzz::programs::from_seeds;
use crate::fuzz::programs::seeds;
use crate::llvm::ir_text_of;
use crate::mutate::witness::ir::IrMutator;
use crate::mutate::witness::{Mutator, RuleClass};
use crate::program::Generator;

/// Mutants made of one csmith seed: seeds cost a csmith and a clang run each.
const MUTANTS_PER_SEED: usize = 4;
/// Edits per mutant, drawn from 1 up to this.
const MAX_EDITS: usize = 6;
/// One mutant in this many starts from a bug reproducer, when the campaign has any.
const REPRODUCER_EVERY: usize = 4;

/// Rule classes whose edits keep the program's behaviour.
const PRESERVING: &[RuleClass] = &[
    RuleClass::Remove,
    RuleClass::AddQualifier,
    RuleClass::AddIf,
    RuleClass::AddWhile,
    RuleClass::AddFunction,
    RuleClass::AddGoto,
];

struct Seed {
    /// Where it came from, for the bug's README.
    name: String,
    ir: String,
    /// Its C, kept in the campaign (relative path), to screen for undefined behaviour.
    c_file: Option<String>,
    /// Whether behaviour-keeping mutants of it are executed.
    executable: bool,
    /// What its mutants keep of its origin (a `--seeds` test's options and pipelines).
    inherit: serde_json::Map<String, serde_json::Value>,
}

pub(in crate::fuzz) fn mutants(c: &mut Campaign, iteration: i64, seed: u64, count: usize) -> Result<Vec<Candidate>> {
    let (seeds, reproducers) = (seeds(c, iteration, seed, count)?, reproducers(c)?);
    if seeds.is_empty() && reproducers.is_empty() {
        return Ok(Vec::new());
    }
    let t = Instant::now();
    c.stats.tick(&c.dir, &c.store, c.started, "mutating IR")?;
    let mutator = IrMutator::new();
    let classes: Vec<Vec<usize>> = RuleClass::ALL
        .iter()
        .map(|&class| (0..mutator.rules().len()).filter(|&r| mutator.rules()[r].class == class).collect())
        .filter(|rules: &Vec<usize>| !rules.is_empty())
        .collect();
    let keeping: Vec<&Vec<usize>> =
        classes.iter().filter(|rules| PRESERVING.contains(&mutator.rules()[rules[0]].class)).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6d75_7461_6e74);
    let mut out = Vec::new();
    for k in 0..count {
        let from_reproducer =
            seeds.is_empty() || (!reproducers.is_empty() && k % REPRODUCER_EVERY == REPRODUCER_EVERY - 1);
        let s = if from_reproducer { &reproducers[k % reproducers.len()] } else { &seeds[k % seeds.len()] };
        let keeps = s.executable && k % 2 == 0;
        let wanted = rng.random_range(1..=MAX_EDITS);
        let (mut text, mut edits) = (s.ir.clone(), Vec::new());
        // A rule without a site in this program gives nothing: a few more draws.
        for _ in 0..3 * wanted {
            if edits.len() == wanted {
                break;
            }
            let class = if keeps {
                keeping[rng.random_range(0..keeping.len())]
            } else {
                &classes[rng.random_range(0..classes.len())]
            };
            let rule = class[rng.random_range(0..class.len())];
            if let Ok(Some(m)) = mutator.mutate(&text, rule, &mut rng) {
                text = m.text;
                edits.push(m.description);
            }
        }
        if edits.is_empty() {
            continue;
        }
        let mut origin = serde_json::json!({
            "generator": Generator::IrMutate, "seed_program": s.name, "edits": edits, "execute": keeps,
        });
        if let (true, Some(file)) = (keeps, &s.c_file) {
            origin["seed_source"] = serde_json::json!(file);
        }
        if let Some(o) = origin.as_object_mut() {
            o.extend(s.inherit.clone());
        }
        out.push(Candidate { suffix: format!("m{k:03}"), body: Body::Ir(text), origin });
    }
    c.stats.spent("IR mutation", t);
    Ok(out)
}

/// The seeds of one iteration: `--seeds`, `--programs`, or fresh csmith programs.
fn seeds(c: &mut Campaign, iteration: i64, seed: u64, count: usize) -> Result<Vec<Seed>> {
    if !c.seeds.is_empty() {
        let chosen = from_seeds::candidates(c, seed ^ 0x7365_6564, count.div_ceil(MUTANTS_PER_SEED))?;
        return Ok(chosen
            .into_iter()
            .filter_map(|s| {
                let candidate::Body::Ir(ir) = s.body else { return None };
                let name = s.origin.get("file")?.as_str()?.to_string();
                let inherit = seeds::inherited(&s.origin);
                Some(Seed { name, ir, c_file: None, executable: true, inherit })
            })
            .collect());
    }
    let t = Instant::now();
    let mut sources = Vec::new();
    match c.config.programs_dir.clone() {
        Some(dir) => {
            for file in candidate::program_files(&dir)? {
                let c_source = file.extension().is_some_and(|e| e == "c").then(|| std::fs::read_to_string(&file));
                sources.push((file.display().to_string(), c_source.transpose()?, Some(file)));
            }
        }
        None => {
            for (_, g) in csmith::csmith(c, Generator::Csmith, seed, count.div_ceil(MUTANTS_PER_SEED)) {
                sources.push((format!("csmith {}", g.csmith_args.join(" ")), Some(g.source), None));
            }
        }
    }
    let t = c.stats.spent("IR mutation", t);
    let scratch = tempfile::tempdir()?;
    let mut c_files = Vec::new();
    for (k, (_, c_source, _)) in sources.iter().enumerate() {
        if let Some(text) = c_source {
            c_files.push(scratch.path().join(format!("seed{k:03}.c")));
            std::fs::write(c_files.last().expect("just pushed"), text)?;
        }
    }
    let mut compiled = c.frontend.compile_many(&c_files, c.jobs).into_iter();
    let mut out = Vec::new();
    for (k, (name, c_source, file)) in sources.into_iter().enumerate() {
        let bytes = match (&c_source, &file) {
            (Some(_), _) => compiled.next().expect("one result per C seed"),
            (None, Some(file)) => std::fs::read(file).map_err(|e| e.to_string()),
            (None, None) => continue,
        };
        let Some(ir) = bytes.ok().and_then(|b| ir_text_of(&b).ok()) else { continue };
        let c_file = c_source
            .map(|text| -> Result<String> {
                let rel = format!("programs/i{iteration:03}-seed{k:03}.c");
                std::fs::create_dir_all(c.dir.join("programs"))?;
                std::fs::write(c.dir.join(&rel), text)?;
                Ok(rel)
            })
            .transpose()?;
        out.push(Seed { name, ir, c_file, executable: true, inherit: Default::default() });
    }
    c.stats.spent("compiling (clang)", t);
    Ok(out)
}

/// The campaign's bug reproducers (the reduced IR when there is one): mutated, never run.
fn reproducers(c: &Campaign) -> Result<Vec<Seed>> {
    let mut out = Vec::new();
    for bug in c.store.bugs()? {
        let dir = c.dir.join(&bug.dir);
        let Some(file) = ["reduced.ll", "program.ll", "program.bc"].iter().map(|f| dir.join(f)).find(|p| p.is_file())
        else {
            continue;
        };
        let Some(ir) = std::fs::read(&file).ok().and_then(|b| ir_text_of(&b).ok()) else { continue };
        let name = file.strip_prefix(&c.dir).unwrap_or(&file).display().to_string();
        out.push(Seed { name, ir, c_file: None, executable: false, inherit: Default::default() });
    }
    Ok(out)
}
