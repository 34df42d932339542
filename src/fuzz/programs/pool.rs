//! An iteration's program pool: each generator of the campaign's mix makes its share,
//! as C (csmith and the programs made from it) or as IR (llvm-stress, IR mutants).

use std::time::Instant;

use anyhow::Result;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::fuzz::bug::reduce_ir::llvm_tool_for;
use crate::fuzz::campaign::Campaign;
use crate::fuzz::config::derive;
use crate::fuzz::programs::candidate::{Body, Candidate};
use crate::fuzz::programs::csmith::csmith;
use crate::fuzz::programs::from_seeds;
use crate::fuzz::programs::hermes;
use crate::fuzz::programs::ir_mutate;
use crate::program::{llvm_stress_many, Generated, Generator};
use crate::sandbox::Llvm;

/// Instructions an llvm-stress function is asked for: from LLVM's own default (100) to
/// functions as long as a mid-sized csmith program's largest.
const STRESS_SIZES: std::ops::RangeInclusive<usize> = 100..=2000;

/// The candidates of every generator of the mix, for `iteration`. The first generator
/// draws from the random stream a campaign of it alone uses, so its programs are the same.
pub(in crate::fuzz) fn candidates(c: &mut Campaign, iteration: i64) -> Result<Vec<Candidate>> {
    let mix = c.config.generator.clone();
    let mut out = Vec::new();
    for (index, (generator, count)) in mix.shares(c.config.prog_pool).into_iter().enumerate() {
        if count == 0 {
            continue;
        }
        let seed = derive(c.config.seed, iteration, if index == 0 { 4 } else { 40 + index as u64 });
        let made = match generator {
            Generator::LlvmStress => stress(c, seed, count)?,
            Generator::IrMutate => ir_mutate::mutants(c, iteration, seed, count)?,
            Generator::Seeds => from_seeds::candidates(c, seed, count)?,
            Generator::Hermes => {
                let generated = csmith(c, Generator::Hermes, seed, hermes::csmith_programs_for(count));
                hermes::variants(c, iteration, &generated, count)?
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

/// llvm-stress of the LLVM under test (or of the linked one, older than an `--opt`).
pub(in crate::fuzz) fn stress_tool(llvm: &Llvm) -> Result<std::path::PathBuf> {
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
