//! An iteration's program pool: each generator of the campaign's mix makes its share,
//! as C (csmith and the programs made from it) or as IR (llvm-stress, IR mutants).

use std::time::Instant;

use anyhow::Result;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::plan::derive;
use super::reduce_ir::llvm_tool_for;
use super::Campaign;
use crate::program::{generate_many, llvm_stress_many, GenConfig, Generated, Generator};
use crate::sandbox::Llvm;

/// What a candidate program is written in.
pub(super) enum Body {
    /// Compiled by the campaign's clang.
    C(String),
    /// Textual IR, loaded as it is.
    Ir(String),
}

/// A program for the iteration's pool: its name suffix, its text and origin record.
pub(super) struct Candidate {
    pub suffix: String,
    pub body: Body,
    pub origin: serde_json::Value,
}

/// Instructions an llvm-stress function is asked for: from LLVM's own default (100) to
/// functions as long as a mid-sized csmith program's largest.
const STRESS_SIZES: std::ops::RangeInclusive<usize> = 100..=2000;

/// The candidates of every generator of the mix, for `iteration`. The first generator
/// draws from the random stream a campaign of it alone uses, so its programs are the same.
pub(super) fn candidates(c: &mut Campaign, iteration: i64) -> Result<Vec<Candidate>> {
    let mix = c.config.generator.clone();
    let mut out = Vec::new();
    for (index, (generator, count)) in mix.shares(c.config.prog_pool).into_iter().enumerate() {
        if count == 0 {
            continue;
        }
        let seed = derive(c.config.seed, iteration, if index == 0 { 4 } else { 40 + index as u64 });
        let made = match generator {
            Generator::LlvmStress => stress(c, seed, count)?,
            Generator::IrMutate => super::ir_mutate::mutants(c, iteration, seed, count)?,
            Generator::Seeds => super::seeds::candidates(c, seed, count)?,
            Generator::Hermes => {
                let generated = csmith(c, Generator::Hermes, seed, super::hermes_generator::csmith_programs_for(count));
                super::hermes_generator::variants(c, iteration, &generated, count)?
            }
            _ => {
                let generated = csmith(c, generator, seed, count);
                let origin = |g: &Generated| serde_json::json!({ "generator": generator, "seed": g.seed, "csmith_args": g.csmith_args });
                generated
                    .into_iter()
                    .map(|(k, g)| Candidate { suffix: format!("p{k:03}"), origin: origin(&g), body: Body::C(g.source) })
                    .collect()
            }
        };
        // Names stay unique when two generators number their programs alike.
        let prefix = if index == 0 { String::new() } else { format!("{}-", generator.name()) };
        out.extend(made.into_iter().map(|m| Candidate { suffix: format!("{prefix}{}", m.suffix), ..m }));
    }
    Ok(out)
}

/// `count` csmith programs of `generator`'s kind from `seed`, numbered by position; the
/// ones csmith could not make are left out.
pub(super) fn csmith(c: &mut Campaign, generator: Generator, seed: u64, count: usize) -> Vec<(usize, Generated)> {
    let t = Instant::now();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let seeds: Vec<u64> = (0..count).map(|_| rng.random_range(0..u32::MAX as u64)).collect();
    let gen = GenConfig { generator, min_size: c.config.min_size, ..GenConfig::default() };
    let generated = generate_many(&seeds, &gen, c.jobs);
    c.stats.spent("program generation (csmith)", t);
    generated.into_iter().enumerate().filter_map(|(k, g)| Some((k, g.ok()?))).collect()
}

/// llvm-stress of the LLVM under test (or of the linked one, older than an `--opt`).
pub(super) fn stress_tool(llvm: &Llvm) -> Result<std::path::PathBuf> {
    llvm_tool_for("llvm-stress", llvm, "or leave llvm-stress out of --generator")
}

fn stress(c: &mut Campaign, seed: u64, count: usize) -> Result<Vec<Candidate>> {
    let tool = stress_tool(&c.llvm)?;
    let t = Instant::now();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let wanted: Vec<(u32, usize)> = (0..count).map(|_| (rng.random(), rng.random_range(STRESS_SIZES))).collect();
    let made = llvm_stress_many(&tool, &wanted, c.jobs);
    c.stats.spent("program generation (llvm-stress)", t);
    Ok(made
        .into_iter()
        .enumerate()
        .filter_map(|(k, p)| {
            let p = p.ok()?;
            let origin = serde_json::json!({
                "generator": Generator::LlvmStress, "seed": p.seed, "size": p.size, "command": p.command(&tool),
            });
            Some(Candidate { suffix: format!("s{k:03}"), body: Body::Ir(p.ir), origin })
        })
        .collect())
}

/// Whether the campaign runs `origin`'s program: an IR mutant whose edits may change what
/// it computes is judged on the optimizer alone (nothing screens IR for undefined behaviour).
pub(super) fn executes(origin: &str) -> bool {
    let origin: serde_json::Value = serde_json::from_str(origin).unwrap_or_default();
    origin.get("execute").and_then(|e| e.as_bool()).unwrap_or(true)
}

/// How a bug folder's generated IR program is made again, for its README.
pub(super) fn provenance(origin: &str) -> Option<String> {
    let origin: serde_json::Value = serde_json::from_str(origin).ok()?;
    match origin.get("generator")?.as_str()? {
        "llvm-stress" => Some(format!(
            "\nThe program is llvm-stress output (one function, no `main`), made again with:\n\n```sh\n{}\n```\n",
            origin.get("command")?.as_str()?
        )),
        "ir-mutate" => {
            let edits: Vec<String> =
                origin.get("edits")?.as_array()?.iter().filter_map(|e| Some(format!("* {}", e.as_str()?))).collect();
            Some(format!(
                "\nThe program is an IR mutant of {} by these edits, in order:\n\n{}\n{}",
                origin.get("seed_program")?.as_str()?,
                edits.join("\n"),
                knob_note(&origin)
            ))
        }
        "seeds" => Some(format!(
            "\nThe program is the module of LLVM's test `{}`, run with its RUN line's options.\n{}",
            origin.get("file")?.as_str()?,
            knob_note(&origin)
        )),
        _ => super::hermes_generator::provenance(&origin.to_string()),
    }
}

/// What a seed's program changed of its RUN line's options, if anything.
fn knob_note(origin: &serde_json::Value) -> String {
    match origin.get("knob").and_then(|k| k.as_str()) {
        Some(change) => format!(
            "\nOne knob of the test's RUN line was changed (`{change}`); the commands above carry the new value.\n"
        ),
        None => String::new(),
    }
}
