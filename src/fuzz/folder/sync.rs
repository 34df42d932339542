//! `--sync DIR`: the shards of one campaign share the causes they find through a folder
//! they all see (a shared file system), so that no two shards report one cause.
//!
//! A cause is one file, `causes/<hash of its key>.json`, made by a hard link from a complete
//! temporary file: the link is atomic and fails when the file exists, so of two shards that
//! reduce one cause at the same moment exactly one claims it (also on NFS, where `link` is
//! atomic and `O_EXCL` was not always). The cause's program is copied beside it first, so
//! other shards can cross-reproduce a failure of another key with it.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};

/// A cause as a shard published it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Cause {
    pub key: String,
    pub kind: String,
    /// The culprit: the last pass of the reduced sequence.
    pub pass: String,
    pub signature: String,
    pub reduced: String,
    /// `I/N` of the shard that found it, its campaign folder and bug folder there.
    pub shard: String,
    pub campaign: String,
    pub folder: String,
    /// The program, relative to the sync folder.
    pub program: String,
}

pub(crate) struct SyncDir {
    dir: PathBuf,
    /// This campaign's folder as causes name it: its own causes are not "elsewhere" (a
    /// campaign interrupted after publishing a cause finds it again when resumed).
    own: String,
}

fn key_hash(key: &str) -> String {
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(key.as_bytes()))
}

impl SyncDir {
    /// The folder, made if missing, for the campaign in `campaign`.
    pub fn open(dir: &Path, campaign: &Path) -> Result<SyncDir> {
        for sub in ["causes", "programs", "locks"] {
            let path = dir.join(sub);
            std::fs::create_dir_all(&path).with_context(|| format!("--sync: cannot create {}", path.display()))?;
        }
        let own = std::fs::canonicalize(campaign).unwrap_or_else(|_| campaign.to_path_buf()).display().to_string();
        Ok(SyncDir { dir: dir.to_path_buf(), own })
    }

    /// The folder this campaign's causes name.
    pub fn own(&self) -> &str {
        &self.own
    }

    fn cause_file(&self, key: &str) -> PathBuf {
        self.dir.join("causes").join(format!("{}.json", key_hash(key)))
    }

    /// Every cause the other campaigns published so far (files that cannot be read are
    /// another shard's business; they are skipped).
    pub fn causes(&self) -> Result<Vec<Cause>> {
        let mut causes = Vec::new();
        for entry in std::fs::read_dir(self.dir.join("causes"))? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "json") {
                let cause =
                    crate::files::read_regular(&path).ok().and_then(|b| serde_json::from_slice::<Cause>(&b).ok());
                causes.extend(cause.filter(|c| c.campaign != self.own));
            }
        }
        causes.sort_by(|a: &Cause, b: &Cause| a.key.cmp(&b.key));
        Ok(causes)
    }

    /// The cause of `key`, when another campaign published it.
    pub fn known(&self, key: &str) -> Option<Cause> {
        let bytes = crate::files::read_regular(&self.cause_file(key)).ok()?;
        serde_json::from_slice::<Cause>(&bytes).ok().filter(|c| c.key == key && c.campaign != self.own)
    }

    /// Held while a shard decides whether a failure of `kind` in `pass` is a new cause and
    /// publishes it: two faces of one cause have different keys, so the key alone cannot
    /// keep two shards that reduce them at once from both publishing.
    pub fn lock(&self, kind: &str, pass: &str) -> Result<std::fs::File> {
        let name: String = pass.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
        let path = self.dir.join("locks").join(format!("{kind}-{name}.lock"));
        let file = std::fs::File::create(&path).with_context(|| format!("--sync: cannot create {}", path.display()))?;
        file.lock().with_context(|| format!("--sync: cannot lock {}", path.display()))?;
        Ok(file)
    }

    /// The program of a published cause.
    pub fn program(&self, cause: &Cause) -> PathBuf {
        self.dir.join(&cause.program)
    }

    /// Publish `cause` (of this campaign) with a copy of `program`; false when another
    /// campaign has the key.
    pub fn claim(&self, mut cause: Cause, program: &Path) -> Result<bool> {
        let hash = key_hash(&cause.key);
        let final_path = self.cause_file(&cause.key);
        if final_path.exists() {
            return Ok(self.known(&cause.key).is_none());
        }
        let unique = format!("{hash}.{}.{}", std::process::id(), cause.shard.replace('/', "of"));
        let extension = program.extension().and_then(|e| e.to_str()).unwrap_or("ll");
        cause.program = format!("programs/{unique}.{extension}");
        std::fs::copy(program, self.dir.join(&cause.program))
            .with_context(|| format!("--sync: cannot copy {} into {}", program.display(), self.dir.display()))?;
        let tmp = self.dir.join("causes").join(format!("{unique}.tmp"));
        std::fs::write(&tmp, serde_json::to_string_pretty(&cause)?)?;
        let claimed = std::fs::hard_link(&tmp, &final_path);
        let _ = std::fs::remove_file(&tmp);
        match claimed {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let _ = std::fs::remove_file(self.dir.join(&cause.program));
                Ok(self.known(&cause.key).is_none())
            }
            Err(e) => Err(e).with_context(|| format!("--sync: cannot publish into {}", self.dir.display())),
        }
    }
}
