//! Bug folders: in the format of `shared/bench/` (see its README: one fixed LLVM bug each,
//! with its program, failing pipeline, oracle configuration and the files the fix changed),
//! or as `ctos fuzz` writes them (`bugs/NNNN-kind-pass/`: program, reduced sequence, and
//! how the campaign ran LLVM in `outcome.json`).

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
    /// Per fix file, the functions the fix commit's hunks changed.
    #[serde(default)]
    bug_location_funcname: Option<std::collections::BTreeMap<String, Vec<String>>>,
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
    /// How clang makes `source` into the IR the bug was found on, when not ctos's default
    /// (`-O2 -Xclang -disable-llvm-passes` for a `default<O2>` bug: see [`clang_args_for`]).
    pub clang_args: Option<String>,
    pub driver: Option<PathBuf>,
    /// LLVM options, target flags included (`-mtriple=… -slp-threshold=-50`).
    pub llvm_args: Vec<String>,
    pub fix_files: Vec<String>,
    /// Per fix file, the functions its fix changed, as the fix commit's hunk headers name
    /// them (`ScalarEvolution::howFarToZero`); empty when the bench does not say.
    pub fix_functions: Vec<(String, Vec<String>)>,
    pub versions: Vec<u32>,
    pub oracle: OracleMode,
    pub pattern: Option<String>,
    /// The `opt` the bug was found in (`ctos fuzz --opt`), when not the linked LLVM.
    pub opt: Option<PathBuf>,
}

/// What `ctos fuzz` records of a bug in its folder's `outcome.json`.
#[derive(Debug, Deserialize)]
struct FuzzOutcome {
    kind: String,
    signature: String,
    program_file: Option<String>,
    llvm_args: Option<Vec<String>>,
    #[serde(default)]
    opt: Option<PathBuf>,
    #[serde(default)]
    llvm_version: Option<String>,
    /// The program reduced as IR, when the campaign kept a smaller one.
    #[serde(default)]
    reduced_ir: Option<ReducedIrFile>,
}

#[derive(Debug, Deserialize)]
struct ReducedIrFile {
    file: Option<String>,
    /// A shorter sequence that fails on it, when the campaign found one.
    #[serde(default)]
    pipeline: Option<String>,
}

/// Whether `dir` is a bug folder of either format.
pub fn is_bug_folder(dir: &Path) -> bool {
    dir.join("meta.json").is_file() || dir.join("outcome.json").is_file()
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
    /// The bug in `dir`, in either format.
    pub fn read(dir: &Path, llvm_major: u32) -> Result<BenchBug> {
        // `.` names no folder: the bug's id is the name of the folder it resolves to.
        let dir = &std::fs::canonicalize(dir).with_context(|| format!("cannot read {}", dir.display()))?;
        if !dir.join("meta.json").exists() && dir.join("outcome.json").exists() {
            return BenchBug::read_fuzz_folder(dir);
        }
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
            (_, "hang") => OracleMode::Hang,
            _ => OracleMode::Auto,
        };
        let pipeline = std::fs::read_to_string(dir.join("seq.txt"))
            .with_context(|| format!("cannot read {}/seq.txt", dir.display()))?
            .trim()
            .to_string();
        Ok(BenchBug {
            id: dir.file_name().map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned()),
            dir: dir.to_path_buf(),
            title: meta.title,
            clang_args: conf.get("CLANG_ARGS").cloned().or_else(|| clang_args_for(&pipeline)),
            kind: meta.kind,
            pipeline,
            program,
            source: Some(dir.join("repro.c")).filter(|c| c.exists()),
            driver: Some(dir.join("driver.ll")).filter(|d| d.exists()),
            llvm_args: extra.split_whitespace().map(str::to_string).collect(),
            fix_files: meta.fix_files,
            fix_functions: meta.bug_location_funcname.unwrap_or_default().into_iter().collect(),
            versions: meta.llvm_versions_reproducing.iter().filter_map(|v| v.parse().ok()).collect(),
            oracle,
            pattern,
            opt: None,
        })
    }

    /// A bug folder `ctos fuzz` wrote: the failure kind picks the oracle (its signature is
    /// what an `auto`/kind oracle matches anyway), the campaign's LLVM options come along.
    fn read_fuzz_folder(dir: &Path) -> Result<BenchBug> {
        let path = dir.join("outcome.json");
        let outcome: FuzzOutcome = serde_json::from_str(
            &crate::files::read_regular_text(&path).with_context(|| format!("cannot read {}", path.display()))?,
        )
        .with_context(|| format!("{}: not an outcome.json of ctos fuzz", path.display()))?;
        let (Some(program_file), Some(llvm_args)) = (outcome.program_file, outcome.llvm_args) else {
            anyhow::bail!(
                "{}: written by an older ctos, it does not say how the campaign ran LLVM; give the sequence and \
                 program instead: locseq isolate {}/reduced.txt {}/program.ll --llvm-arg=... (as its README's ctos run)",
                path.display(),
                dir.display(),
                dir.display()
            );
        };
        let reduced = dir.join("reduced.txt");
        let reduced_ir = outcome.reduced_ir.filter(|r| r.file.is_some());
        use crate::oracle::FailureKind;
        let oracle = match FailureKind::parse(&outcome.kind) {
            Some(FailureKind::Crash) => OracleMode::Crash,
            Some(FailureKind::InvalidIr) => OracleMode::InvalidIr,
            Some(FailureKind::WrongCode) => OracleMode::WrongCode,
            Some(FailureKind::Timeout) => OracleMode::Hang,
            // Kinds the automatic oracle tells by their signature.
            Some(FailureKind::Fatal | FailureKind::Oom | FailureKind::Codegen) => OracleMode::Auto,
            None => anyhow::bail!(
                "{}: unknown kind '{}' (ctos fuzz writes crash, fatal, invalid-ir, wrong-code, timeout, oom or codegen)",
                path.display(),
                outcome.kind
            ),
        };
        let major = outcome.llvm_version.as_deref().and_then(|v| v.split('.').next()?.parse().ok());
        Ok(BenchBug {
            id: dir.file_name().map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned()),
            dir: dir.to_path_buf(),
            title: outcome.signature,
            kind: outcome.kind,
            pipeline: match reduced_ir.as_ref().and_then(|r| r.pipeline.clone()) {
                Some(shorter) => shorter,
                None => std::fs::read_to_string(&reduced)
                    .with_context(|| format!("cannot read {}", reduced.display()))?
                    .trim()
                    .to_string(),
            },
            // The reduced program fails as the original does, and its traces hold less else.
            program: dir.join(reduced_ir.and_then(|r| r.file).unwrap_or(program_file)),
            source: Some(dir.join("program.c")).filter(|c| c.exists()),
            // A campaign compiles its C programs with ctos's default flags.
            clang_args: None,
            // The driver ctos generated for a program without `main`.
            driver: Some(dir.join("driver.ll")).filter(|d| d.is_file()),
            llvm_args,
            fix_files: Vec::new(),
            fix_functions: Vec::new(),
            versions: major.into_iter().collect(),
            oracle,
            pattern: None,
            opt: outcome.opt,
        })
    }

    /// The program a strategy starts from: witness programs come from the program as
    /// reported, C when the bug has it.
    pub fn program_for(&self, strategy: super::sequence_search::Strategy) -> &Path {
        match (&self.source, strategy.mutates_programs()) {
            (Some(c), true) => c,
            _ => &self.program,
        }
    }
}

/// The clang flags that make a C program into the IR an `-O<x>` pipeline gets in clang:
/// at that level with LLVM's passes off (`-O2 -Xclang -disable-llvm-passes`), which keeps
/// what the front end adds at that level (TBAA, lifetime markers) and some bugs need. The
/// bench's `repro.vN.ll` were made so; a folder's `oracle.conf` may say otherwise with
/// `CLANG_ARGS=`. None for pipelines without a level.
pub fn clang_args_for(pipeline: &str) -> Option<String> {
    let levels = regex::Regex::new(r"(?:^|[,(\s])(?:default|thinlto-pre-link|lto-pre-link|thinlto|lto)<(O[123sz])>")
        .expect("a valid expression");
    let level = levels.captures(pipeline)?.get(1)?.as_str();
    Some(format!("-{level} -Xclang -disable-llvm-passes"))
}

/// Every bug folder under `dir` (the bench root, its `bugs/`, or one bug folder).
pub fn read_bench(dir: &Path, llvm_major: u32) -> Result<Vec<BenchBug>> {
    if !dir.is_dir() {
        anyhow::bail!("{}: no such folder", dir.display());
    }
    if is_bug_folder(dir) {
        return Ok(vec![BenchBug::read(dir, llvm_major)?]);
    }
    let bugs_dir = if dir.join("bugs").is_dir() { dir.join("bugs") } else { dir.to_path_buf() };
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&bugs_dir)
        .with_context(|| format!("cannot read {}", bugs_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| is_bug_folder(p))
        .collect();
    dirs.sort();
    dirs.iter().map(|d| BenchBug::read(d, llvm_major)).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_c_bug_is_compiled_at_its_pipelines_level_with_llvms_passes_off() {
        let args = super::clang_args_for;
        assert_eq!(args("default<O3>").as_deref(), Some("-O3 -Xclang -disable-llvm-passes"));
        assert_eq!(args("function(sroa),lto-pre-link<Oz>").as_deref(), Some("-Oz -Xclang -disable-llvm-passes"));
        // A pass's parameter is no pipeline level.
        assert_eq!(args("function(loop-unroll<O2>)"), None);
        assert_eq!(args("instcombine"), None);
    }
}
