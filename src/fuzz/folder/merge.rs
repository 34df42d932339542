//! `ctos merge --out OUT SHARD...`: one campaign folder from the shards of an array job,
//! with bugs de-duplicated across shards: by their keys, and a bug whose key is new by
//! cross-reproduction with the merged bugs of its kind and culprit (on the campaign's LLVM).
//! The shards are only read.

use std::path::Path;

use anyhow::{bail, Context as _, Result};

use std::collections::BTreeMap;

use crate::fuzz::bug::bugs;
use crate::fuzz::bug::cross::CrossCheck;
use crate::fuzz::config::CampaignConfig;
use crate::fuzz::folder::store::{open_campaign, DB};
use crate::fuzz::folder::store::{BugRow, FailureCount, Store, TimelineRow, VariantRow};
use crate::oracle::FailureKind;

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

struct Shard<'a> {
    dir: &'a Path,
    store: Store,
    config: CampaignConfig,
    version: String,
}

/// Every shard is a campaign of the same plan on the same LLVM; `out` is new.
/// `path` with its links resolved, as far as it exists; the rest as written.
fn resolved(path: &Path) -> std::path::PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return absolute,
        }
    }
    let mut out = existing.canonicalize().unwrap_or_else(|_| existing.to_path_buf());
    out.extend(rest.iter().rev());
    out
}

fn check<'a>(out: &Path, shards: &[&'a Path]) -> Result<Vec<Shard<'a>>> {
    if shards.is_empty() {
        bail!("give the shard folders to merge");
    }
    if out.join(DB).exists() {
        bail!("{} holds a campaign already; merge into a new folder", out.display());
    }
    if out.read_dir().is_ok_and(|mut entries| entries.next().is_some()) {
        bail!("{} is not empty; merge into a new folder", out.display());
    }
    let mut opened: Vec<Shard> = Vec::new();
    for &dir in shards {
        if resolved(out).starts_with(resolved(dir)) {
            bail!("{} is inside the shard {}; merge into a folder of its own", out.display(), dir.display());
        }
        let store = open_campaign(dir)?;
        let config: CampaignConfig = serde_json::from_str(&store.get_meta("config")?.unwrap_or_default())
            .with_context(|| format!("{}: unreadable configuration", dir.display()))?;
        let version = store.get_meta("llvm_version")?.unwrap_or_default();
        if let Some(first) = opened.first() {
            if version != first.version {
                bail!("{} ran on LLVM {version}, {} on LLVM {}", dir.display(), first.dir.display(), first.version);
            }
            let plan = |c: &CampaignConfig| serde_json::to_value(CampaignConfig { shard: (0, 1), ..c.clone() }).ok();
            if config.shard.1 != first.config.shard.1 || plan(&config) != plan(&first.config) {
                bail!(
                    "{} and {} are not shards of one campaign (their configurations differ)",
                    dir.display(),
                    first.dir.display()
                );
            }
            if let Some(twin) = opened.iter().find(|s| s.config.shard == config.shard) {
                bail!(
                    "{} and {} are both shard {}/{}",
                    dir.display(),
                    twin.dir.display(),
                    config.shard.0,
                    config.shard.1
                );
            }
        }
        opened.push(Shard { dir, store, config, version });
    }
    Ok(opened)
}

pub fn merge(out: &Path, shards: &[&Path]) -> Result<()> {
    let shards = check(out, shards)?;
    let created = !out.exists();
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let result = write_merged(out, &shards);
    if result.is_err() && created {
        let _ = std::fs::remove_dir_all(out);
    }
    result
}

fn write_merged(out: &Path, shards: &[Shard]) -> Result<()> {
    let mut merged = Store::open(&out.join(DB))?;
    for key in ["config", "created", "llvm_version", "sequences"] {
        if let Some(value) = shards[0].store.get_meta(key)? {
            merged.set_meta(key, &value)?;
        }
    }
    let (mut pairs, mut programs_tested, mut failures) = (0, 0, 0);
    let mut by_kind_and_pass: BTreeMap<(String, String), i64> = BTreeMap::new();
    for kind in ["sequence", "program"] {
        merged.save_selection(&shards[0].store.latest_selection(kind)?)?;
    }
    let cross = CrossCheck::new(&shards[0].config)?;
    for shard in shards {
        let (i, n) = shard.config.shard;
        for row in shard.store.timeline()? {
            merged.add_timeline(&TimelineRow { run: format!("shard {i}/{n}, {}", row.run), ..row })?;
        }
        for f in failure_counts(&shard.store)? {
            *by_kind_and_pass.entry((f.kind, f.pass)).or_insert(0) += f.count;
        }
        let (p, t, f) = shard.store.counts()?;
        pairs += p;
        programs_tested += t;
        failures += f;
        let variants = shard.store.variants()?;
        for bug in shard.store.bugs()? {
            let own: Vec<&VariantRow> = variants.iter().filter(|v| v.bug == bug.id).collect();
            // One cause seen under another key in another shard is still one bug.
            let mut keys = std::iter::once(&bug.key).chain(own.iter().map(|v| &v.key));
            let known = keys.try_fold(None, |found, key| match found {
                Some(bug) => Ok(Some(bug)),
                None => merged.bug_by_key(key),
            })?;
            let known = match known {
                Some(known) => Some(known),
                None => same_cause(&merged, out, shard, &bug, &cross)?,
            };
            match known {
                Some(known) => {
                    merged.set_bug_count(known.id, known.count + bug.count)?;
                    if bug.first_seen < known.first_seen {
                        merged.set_bug_first_seen(known.id, &bug.first_seen)?;
                    }
                }
                None => {
                    let id = merged.bugs()?.len() + 1;
                    let name = bug.dir.split('/').next_back().unwrap_or("bug");
                    let suffix = name.split_once('-').map_or(name, |(_, rest)| rest);
                    let dir = format!("bugs/{id:04}-{suffix}");
                    copy_dir(&shard.dir.join(&bug.dir), &out.join(&dir))?;
                    let new = merged.add_bug(&BugRow { dir: dir.clone(), ..bug.clone() })?;
                    merged.set_bug_count(new, bug.count)?;
                    for v in own {
                        let inside = v.dir.strip_prefix(&bug.dir).unwrap_or(&v.dir).trim_start_matches('/');
                        merged.add_variant(&VariantRow { bug: new, dir: format!("{dir}/{inside}"), ..v.clone() })?;
                    }
                }
            }
        }
    }
    merged.set_meta("merged_pairs", &pairs.to_string())?;
    merged.set_meta("merged_programs_tested", &programs_tested.to_string())?;
    merged.set_meta("merged_failures", &failures.to_string())?;
    let mut counts: Vec<FailureCount> =
        by_kind_and_pass.into_iter().map(|((kind, pass), count)| FailureCount { kind, pass, count }).collect();
    // In the order the store counts a campaign's own failures.
    counts.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| (&a.kind, &a.pass).cmp(&(&b.kind, &b.pass))));
    merged.set_meta(MERGED_FAILURE_COUNTS, &serde_json::to_string(&counts)?)?;
    let from: Vec<String> = shards.iter().map(|s| s.dir.display().to_string()).collect();
    merged.set_meta("merged_from", &from.join("\n"))?;
    Ok(())
}

/// A merged bug of `bug`'s kind and culprit that cross-reproduces with it (another shard's
/// face of one cause, under another key): `bug`'s folder goes inside it as `also-N/`, with
/// `bug`'s own other faces as its variants.
fn same_cause(merged: &Store, out: &Path, shard: &Shard, bug: &BugRow, cross: &CrossCheck) -> Result<Option<BugRow>> {
    let Some(kind) = FailureKind::parse(&bug.kind) else { return Ok(None) };
    let from = shard.dir.join(&bug.dir);
    for known in merged.bugs()?.into_iter().filter(|b| b.kind == bug.kind && b.pass == bug.pass) {
        if !cross.one_cause((&out.join(&known.dir), &known.reduced), (&from, &bug.reduced), kind, &bug.pass)? {
            continue;
        }
        let n = merged.variants()?.iter().filter(|v| v.bug == known.id).count() + 1;
        let dir = format!("{}/also-{n}", known.dir);
        copy_dir(&from, &out.join(&dir))?;
        let program = if from.join("program.bc").exists() { "program.bc" } else { "program.ll" };
        bugs::note_also_seen(&out.join(&known.dir), n, &bug.signature, &bug.reduced, program)?;
        // `bug`'s own faces came along inside its folder.
        for v in shard.store.variants()?.into_iter().filter(|v| v.bug == bug.id) {
            let inside = v.dir.strip_prefix(&bug.dir).unwrap_or(&v.dir).trim_start_matches('/').to_string();
            merged.add_variant(&VariantRow { bug: known.id, dir: format!("{dir}/{inside}"), ..v })?;
        }
        let face = VariantRow {
            bug: known.id,
            key: bug.key.clone(),
            signature: bug.signature.clone(),
            reduced: bug.reduced.clone(),
            program: bug.program,
            dir,
        };
        merged.add_variant(&face)?;
        return Ok(Some(known));
    }
    Ok(None)
}

const MERGED_FAILURE_COUNTS: &str = "merged_failure_counts";

/// Failures by kind and culprit pass: counted from the store, or, for a merged campaign
/// (which keeps no failures of its own), as the merge summed them over its shards.
pub fn failure_counts(store: &Store) -> Result<Vec<FailureCount>> {
    match store.get_meta(MERGED_FAILURE_COUNTS)? {
        Some(json) => Ok(serde_json::from_str(&json)?),
        None => store.failure_counts(),
    }
}
