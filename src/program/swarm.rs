//! Swarm configurations for csmith (the paper's RPS and RPSv program sources): random
//! feature switches, and a random probability file derived from the defaults csmith dumps
//! for those switches.

use anyhow::{bail, Context};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// csmith 2.3.0's feature switches that have both an `--X` and a `--no-X` form and keep
/// the programs free of undefined behaviour. Left at csmith's defaults: `checksum`, `main`
/// and `safe-math` (the test needs them), `float` and `builtins` (off by default, outside
/// the integer programs csmith is known for), and `global-variables`, which has no `--X`
/// form.
const FEATURES: &[&str] = &[
    "argc",
    "arrays",
    "bitfields",
    "comma-operators",
    "compound-assignment",
    "consts",
    "const-pointers",
    "divs",
    "embedded-assigns",
    "inline-function",
    "int8",
    "jumps",
    "longlong",
    "math64",
    "muls",
    "packed-struct",
    "pointers",
    "post-decr-operator",
    "post-incr-operator",
    "pre-decr-operator",
    "pre-incr-operator",
    "structs",
    "uint8",
    "unary-plus-operator",
    "unions",
    "volatiles",
    "volatile-pointers",
];

/// Probabilities near which csmith 2.3.0 stops terminating; the first two are "once more?"
/// coins (another struct type, another dereference), so 100 never stops. Each alone at 100,
/// other settings default: 5, 4, 1 and 1 of 5 seeds hung; at 99 or 90 some of 8 seeds
/// still hung; at 80 none did.
const REPEATING: &[&str] =
    &["more_struct_union_type_prob", "select_deref_pointer_prob", "new_array_var_prob", "regular_volatile_prob"];
const REPEATING_MAX: u32 = 80;

/// Entries that keep their default. With 16-bit safe-math wrappers off (and 8-bit ones off,
/// as `--no-int8` or `--no-uint8` make them), csmith 2.3.0 ran past 5 s (mostly hung) for
/// 38% of 157 swarm configurations, against 4% of 443 others.
const KEPT: &[&str] = &["safe_ops_size_int16"];

/// Each feature on or off with probability 1/2, always spelled out.
pub(crate) fn feature_flags(rng: &mut ChaCha8Rng) -> Vec<String> {
    FEATURES.iter().map(|f| if rng.random::<bool>() { format!("--{f}") } else { format!("--no-{f}") }).collect()
}

/// A probability file for `--probability-configuration`, from the file csmith's
/// `--dump-default-probabilities` wrote for the same switches. An entry whose default is 0
/// stays 0 (a disabled feature, csmith's own rule under `--random-random`). Otherwise a
/// single probability becomes 0 or its maximum (`uniform == false`, RPS) or uniform in
/// `[0, maximum]` (RPSv); the maximum is 100 except for the repeating coins.
/// `(...)` groups hold 0/1 flags: each on or off, never all off. `[...]` groups are
/// cumulative: see `cumulative`.
pub(crate) fn randomize(defaults: &str, uniform: bool, rng: &mut ChaCha8Rng) -> anyhow::Result<String> {
    let mut out = String::new();
    for line in defaults.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let randomized = if let Some(body) = line.strip_prefix('(').and_then(|l| l.strip_suffix(')')) {
            format!("({})", flags_group(body, rng)?)
        } else if let Some(body) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            format!("[{}]", cumulative_group(body, uniform, rng)?)
        } else {
            let (name, default) = entry(line)?;
            let max = if REPEATING.contains(&name) { REPEATING_MAX } else { 100 };
            let value = match (default, uniform) {
                (0, _) => 0,
                (_, true) => rng.random_range(0..=max),
                (_, false) if rng.random::<bool>() => max,
                (_, false) => 0,
            };
            format!("{name}={value}")
        };
        out.push_str(&randomized);
        out.push('\n');
    }
    Ok(out)
}

fn entry(text: &str) -> anyhow::Result<(&str, u32)> {
    let (name, value) = text.split_once('=').with_context(|| format!("csmith probability '{text}' has no '='"))?;
    let value = value.trim().parse().with_context(|| format!("csmith probability '{text}' is not a number"))?;
    Ok((name.trim(), value))
}

/// `group,name=v,...` → the group name and its entries.
fn group(body: &str) -> anyhow::Result<(&str, Vec<(&str, u32)>)> {
    let mut parts = body.split(',');
    let name = parts.next().unwrap_or_default();
    let entries = parts.map(entry).collect::<anyhow::Result<Vec<_>>>()?;
    if entries.is_empty() {
        bail!("csmith probability group '{body}' is empty");
    }
    Ok((name, entries))
}

fn flags_group(body: &str, rng: &mut ChaCha8Rng) -> anyhow::Result<String> {
    let (name, entries) = group(body)?;
    let mut values: Vec<u32> = entries
        .iter()
        .map(|&(entry, default)| match default {
            0 => 0,
            _ if KEPT.contains(&entry) => default,
            _ => rng.random_range(0..=1),
        })
        .collect();
    if values.iter().all(|&v| v == 0) {
        values = entries.iter().map(|&(_, d)| d).collect();
    }
    Ok(render(name, &entries, &values))
}

/// Swarm turns each enabled kind on or off (equal shares among those on); the variant
/// draws each kind's weight uniformly from 0..=100. The entry whose default is 100 is
/// csmith's catch-all (assignments for statements): it always keeps a share, so csmith
/// can always pick something.
fn cumulative_group(body: &str, uniform: bool, rng: &mut ChaCha8Rng) -> anyhow::Result<String> {
    let (name, entries) = group(body)?;
    let weights: Vec<u32> = entries
        .iter()
        .map(|&(_, default)| match (default, uniform) {
            (0, _) => 0,
            (100, true) => rng.random_range(1..=100),
            (100, false) => 1,
            (_, true) => rng.random_range(0..=100),
            (_, false) => rng.random_range(0..=1),
        })
        .collect();
    if weights.iter().all(|&w| w == 0) {
        bail!("csmith probability group '{body}' has no catch-all entry of 100");
    }
    Ok(render(name, &entries, &cumulative(&weights)))
}

/// In a `[...]` group csmith draws r in 0..100 and takes the entry with the smallest value
/// above r, so an entry's share is its value minus the next smaller one. Values must be
/// distinct and the largest 100 (csmith asserts both); 0 means never.
fn cumulative(weights: &[u32]) -> Vec<u32> {
    let total: u32 = weights.iter().sum();
    let mut positive_left = weights.iter().filter(|&&w| w > 0).count() as u32;
    let (mut sum, mut previous) = (0, 0);
    weights
        .iter()
        .map(|&w| {
            if w == 0 {
                return 0;
            }
            sum += w;
            positive_left -= 1;
            let value = ((sum * 100 + total / 2) / total).max(previous + 1).min(100 - positive_left);
            previous = value;
            value
        })
        .collect()
}

fn render(name: &str, entries: &[(&str, u32)], values: &[u32]) -> String {
    let mut text = name.to_string();
    for ((entry, _), value) in entries.iter().zip(values) {
        text.push_str(&format!(",{entry}={value}"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cumulative_values_are_distinct_rising_and_end_at_100() {
        assert_eq!(cumulative(&[1, 0, 1, 1, 1]), vec![25, 0, 50, 75, 100]);
        assert_eq!(cumulative(&[0, 0, 7]), vec![0, 0, 100]);
        // A tiny weight still gets a value of its own.
        assert_eq!(cumulative(&[1000, 1, 1]), vec![98, 99, 100]);
        assert_eq!(cumulative(&[1, 1000, 1]), vec![1, 99, 100]);
    }
}
