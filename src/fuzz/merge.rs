//! `ctos merge OUT SHARD...`: one campaign folder from the shards of an array job, with
//! bugs de-duplicated across shards by their keys.

use std::path::Path;

use anyhow::{bail, Context as _, Result};

use super::store::Store;
use super::DB;

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

pub fn merge(out: &Path, shards: &[&Path]) -> Result<()> {
    if out.join(DB).exists() {
        bail!("{} holds a campaign already; merge into a new folder", out.display());
    }
    if shards.is_empty() {
        bail!("give the shard folders to merge");
    }
    std::fs::create_dir_all(out)?;
    let merged = Store::open(&out.join(DB))?;
    let mut version = None;
    let mut pairs = 0;
    for shard in shards {
        let store = Store::open(&shard.join(DB)).with_context(|| format!("{} is not a campaign", shard.display()))?;
        let v = store.get_meta("llvm_version")?.unwrap_or_default();
        if version.get_or_insert_with(|| v.clone()) != &v {
            bail!("{} ran on LLVM {v}, the other shards on {}", shard.display(), version.unwrap());
        }
        if merged.get_meta("config")?.is_none() {
            for key in ["config", "created", "llvm_version"] {
                if let Some(value) = store.get_meta(key)? {
                    merged.set_meta(key, &value)?;
                }
            }
        }
        pairs += store.counts()?.0;
        for bug in store.bugs()? {
            match merged.bug_by_key(&bug.key)? {
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
                    copy_dir(&shard.join(&bug.dir), &out.join(&dir))?;
                    let new = merged.add_bug(&super::store::BugRow { dir, ..bug.clone() })?;
                    merged.set_bug_count(new, bug.count)?;
                }
            }
        }
    }
    merged.set_meta("merged_pairs", &pairs.to_string())?;
    merged.set_meta("merged_from", &shards.iter().map(|s| s.display().to_string()).collect::<Vec<_>>().join("\n"))?;
    Ok(())
}
