//! Bug folders in the format of `shared/bench/` (see its README): one fixed LLVM bug each,
//! with its program, failing pipeline, oracle configuration and the files the fix changed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use serde::Deserialize;

use super::isolate::OracleMode;

#[derive(Debug, Deserialize)]
struct Meta {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    extra_opt_args: String,
    #[serde(default)]
    llvm_versions_reproducing: Vec<String>,
    #[serde(default)]
    fix_files: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct BenchBug {
    pub id: String,
    pub dir: PathBuf,
    pub title: String,
    /// crash, invalid-IR, wrong-code (as meta.json says).
    pub kind: String,
    pub pipeline: String,
    /// The program for the linked LLVM version (`repro.vN.ll` when there is one).
    pub program: PathBuf,
    /// The C program the IR was made from, when the folder has it (`repro.c`).
    pub source: Option<PathBuf>,
    pub driver: Option<PathBuf>,
    /// LLVM options, target flags included (`-mtriple=… -slp-threshold=-50`).
    pub llvm_args: Vec<String>,
    pub fix_files: Vec<String>,
    pub versions: Vec<u32>,
    pub oracle: OracleMode,
    pub pattern: Option<String>,
}

/// `KEY="value"` / `KEY='value'` lines of an `oracle.conf`.
fn read_conf(path: &Path) -> HashMap<String, String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().trim_matches(|c| c == '"' || c == '\'').to_string()))
        .collect()
}

impl BenchBug {
    pub fn read(dir: &Path, llvm_major: u32) -> Result<BenchBug> {
        // `.` names no folder: the bug's id is the name of the folder it resolves to.
        let dir = &std::fs::canonicalize(dir).with_context(|| format!("cannot read {}", dir.display()))?;
        let meta: Meta = serde_json::from_str(
            &std::fs::read_to_string(dir.join("meta.json"))
                .with_context(|| format!("cannot read {}/meta.json", dir.display()))?,
        )
        .with_context(|| format!("{}/meta.json", dir.display()))?;
        let conf = read_conf(&dir.join("oracle.conf"));
        let input = conf.get("INPUT").cloned().unwrap_or_else(|| "repro.ll".into());
        let stem = input.trim_end_matches(".ll");
        let versioned = dir.join(format!("{stem}.v{llvm_major}.ll"));
        let program = if versioned.exists() {
            versioned
        } else if dir.join(&input).exists() {
            dir.join(&input)
        } else {
            dir.join("repro.c")
        };
        let extra = conf.get("EXTRA").cloned().unwrap_or(meta.extra_opt_args);
        let pattern = conf.get("PATTERN").filter(|p| !p.is_empty()).cloned();
        let oracle = match (conf.get("MODE").map(String::as_str), conf.get("TYPE").unwrap_or(&meta.kind).as_str()) {
            // Only the bug's own script can check an IR pattern.
            (Some("irpattern"), _) => OracleMode::Script(dir.join("oracle.sh")),
            (_, "crash") => OracleMode::Crash,
            (_, "invalid-IR") => OracleMode::InvalidIr,
            (_, "wrong-code") => OracleMode::WrongCode,
            _ => OracleMode::Auto,
        };
        Ok(BenchBug {
            id: dir.file_name().map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned()),
            dir: dir.to_path_buf(),
            title: meta.title,
            kind: meta.kind,
            pipeline: std::fs::read_to_string(dir.join("seq.txt"))
                .with_context(|| format!("cannot read {}/seq.txt", dir.display()))?
                .trim()
                .to_string(),
            program,
            source: Some(dir.join("repro.c")).filter(|c| c.exists()),
            driver: Some(dir.join("driver.ll")).filter(|d| d.exists()),
            llvm_args: extra.split_whitespace().map(str::to_string).collect(),
            fix_files: meta.fix_files,
            versions: meta.llvm_versions_reproducing.iter().filter_map(|v| v.parse().ok()).collect(),
            oracle,
            pattern,
        })
    }
}

/// Every bug folder under `dir` (the bench root, its `bugs/`, or one bug folder).
pub fn read_bench(dir: &Path, llvm_major: u32) -> Result<Vec<BenchBug>> {
    if !dir.is_dir() {
        anyhow::bail!("{}: no such folder", dir.display());
    }
    if dir.join("meta.json").exists() {
        return Ok(vec![BenchBug::read(dir, llvm_major)?]);
    }
    let bugs_dir = if dir.join("bugs").is_dir() { dir.join("bugs") } else { dir.to_path_buf() };
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&bugs_dir)
        .with_context(|| format!("cannot read {}", bugs_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("meta.json").exists())
        .collect();
    dirs.sort();
    dirs.iter().map(|d| BenchBug::read(d, llvm_major)).collect()
}
