//! The seeds generator: the campaign's `--seeds`, drawn as an iteration's programs.

use std::path::Path;

use anyhow::Result;
use rand::seq::IndexedRandom as _;
use rand::RngExt;

use crate::fuzz::campaign::Campaign;
use crate::fuzz::programs::candidate::{Body, Candidate};
use crate::fuzz::programs::seeds::{knob_changed, origin_of, KNOB_CHANGE_ONE_IN};

/// `count` of the campaign's seeds, drawn at random (each once): programs under their own
/// options, with their own pipelines in their origin.
pub fn candidates(c: &Campaign, seed: u64, count: usize) -> Result<Vec<Candidate>> {
    use rand::SeedableRng as _;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for (k, s) in c.seeds.sample(&mut rng, count.min(c.seeds.len())).enumerate() {
        // A seed that went since the campaign started is one program fewer.
        let Ok(bytes) = crate::files::read_regular(Path::new(&s.file)) else { continue };
        let Ok(text) = crate::llvm::ir_text_of(&bytes) else { continue };
        let mut origin = origin_of(s);
        if rng.random_ratio(1, KNOB_CHANGE_ONE_IN) {
            if let Some((options, change)) = knob_changed(&mut rng, &s.options) {
                origin["llvm_args"] = serde_json::json!(options);
                origin["knob"] = serde_json::json!(change);
            }
        }
        out.push(Candidate { suffix: format!("t{k:03}"), body: Body::Ir(text), origin });
    }
    Ok(out)
}
