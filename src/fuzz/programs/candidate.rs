//! The candidate program every generator makes for an iteration's pool, and the user's
//! own programs (`--programs DIR`).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};

/// What a candidate program is written in.
pub enum Body {
    /// Compiled by the campaign's clang.
    C(String),
    /// Textual IR, loaded as it is.
    Ir(String),
}

/// A program for the iteration's pool: its name suffix, its text and origin record.
pub struct Candidate {
    pub suffix: String,
    pub body: Body,
    pub origin: serde_json::Value,
}

/// The .c, .ll and .bc files of `dir`, sorted.
pub fn program_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "c" || e == "ll" || e == "bc"))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("{} has no .c, .ll or .bc files", dir.display());
    }
    Ok(files)
}
