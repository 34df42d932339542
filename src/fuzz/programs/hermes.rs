//! `--generator hermes`: an iteration's programs are live-code EMI variants of csmith
//! programs that UBSan and ASan find clean. Every variant must print what its csmith program
//! prints; a variant that does not, unoptimized, is a bug of ours (counted, never tested).

use std::time::Instant;

use anyhow::Result;

use crate::fuzz::campaign::Campaign;
use crate::fuzz::config::derive;
use crate::fuzz::programs::candidate::{Body, Candidate};
use crate::mutate::hermes::{Chain, EmiConfig};
use crate::program::{screen_many, Generated, Screen, Screening};

/// Variants per csmith program, chained (the paper's 10).
pub const CHAIN: usize = 10;

/// The status of a variant whose unoptimized output is not its seed's.
pub const MISMATCH: &str = "emi-mismatch: unoptimized, the variant prints differently from its csmith program";

/// How many csmith programs to generate for a pool of `pool` variants: twice the seeds
/// needed, as some will not be clean.
pub(in crate::fuzz) fn csmith_programs_for(pool: usize) -> usize {
    2 * pool.div_ceil(CHAIN)
}

/// The variants of the first clean csmith programs, `CHAIN` each, enough for `count`.
pub(in crate::fuzz) fn variants(
    c: &mut Campaign,
    iteration: i64,
    generated: &[(usize, Generated)],
    count: usize,
) -> Result<Vec<Candidate>> {
    let t = Instant::now();
    let scratch = tempfile::tempdir()?;
    let mut paths = Vec::new();
    for (k, g) in generated {
        let path = scratch.path().join(format!("{k}.c"));
        std::fs::write(&path, &g.source)?;
        paths.push(path);
    }
    let verdicts = screen_many(&paths, &Screen::default(), c.jobs);
    let t = c.stats.spent("UB screening", t);
    c.stats.tick(&c.dir, &c.store, c.started, "deriving EMI variants")?;
    let seeds = count.div_ceil(CHAIN);
    let clean = generated.iter().zip(verdicts).filter_map(|((k, g), v)| match v {
        Screening::Clean { stdout, .. } => Some((k, g, stdout)),
        _ => None,
    });
    let config = EmiConfig::default();
    let mut out = Vec::new();
    for (k, g, expected) in clean.take(seeds) {
        let emi_seed = derive(c.config.seed, iteration, 100 + *k as u64);
        let Ok(mut chain) = Chain::new(&g.source, emi_seed, &config) else { continue };
        for v in 1..=CHAIN {
            // A chain that cannot go on (its variant failed to profile) keeps what it made.
            let Ok(variant) = chain.next_variant() else { break };
            let origin = serde_json::json!({
                "generator": "hermes",
                "seed": g.seed,
                "csmith_args": g.csmith_args,
                "emi_seed": emi_seed,
                "variant": v,
                "expected_output": expected,
            });
            out.push(Candidate { suffix: format!("p{k:03}-v{v:02}"), body: Body::C(variant.source), origin });
        }
    }
    c.stats.spent("EMI variants (hermes)", t);
    Ok(out)
}

/// The output a program must print unoptimized, when it is an EMI variant.
pub(in crate::fuzz) fn expected_output(origin: &str) -> Option<String> {
    let origin: serde_json::Value = serde_json::from_str(origin).ok()?;
    Some(origin.get("expected_output")?.as_str()?.to_string())
}

/// How a bug folder's EMI variant is made again, for its README.
pub(in crate::fuzz) fn provenance(origin: &str) -> Option<String> {
    let origin: serde_json::Value = serde_json::from_str(origin).ok()?;
    if origin.get("generator")?.as_str()? != "hermes" {
        return None;
    }
    let args: Vec<&str> = origin.get("csmith_args")?.as_array()?.iter().filter_map(|a| a.as_str()).collect();
    let (variant, emi_seed) = (origin.get("variant")?.as_u64()?, origin.get("emi_seed")?.as_u64()?);
    Some(format!(
        "\nThe program is live-code EMI variant {variant} of a csmith program; unoptimized, it prints what \
         that program prints. Made again with:\n\n```sh\ncsmith {} > seed.c\n\
         ctos emi seed.c -n {variant} --seed {emi_seed}   # seed.emi/variant-{variant:02}.c\n```\n",
        args.join(" ")
    ))
}
