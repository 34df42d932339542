//! `--seeds DIR`: LLVM's own regression tests (lit files: `; RUN: opt …` lines, then the
//! module) and plain `.ll`/`.bc` files as a campaign's programs. A test is a module of
//! exactly the shape its pass handles, with the pipeline and options its RUN lines give;
//! those pipelines run on it as its own sequences, then perturbed, and its options
//! (`-mtriple=`, `-mattr=`, thresholds) stay with it and its mutants.
//!
//! Seeds the LLVM under test cannot use are left out and counted by reason: one seed of
//! another time or target must not refuse the folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};
use rand::seq::IndexedRandom as _;
use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

use crate::fuzz::folder::store;
use crate::fuzz::programs::seed_options::{without_outside_passes, OptionKinds};
use crate::llvm::{IrModule, TargetSpec};
use crate::seq::random::with_preconditions;
use crate::seq::{render_with, Catalog, Pass, RenderOptions, Sequence};

/// One usable seed: a module, one set of options its RUN lines give, and the pipelines
/// those lines run with them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeedEntry {
    pub file: String,
    /// LLVM options (target flags included), as `--llvm-arg`s.
    pub options: Vec<String>,
    /// Rendered as the campaign renders its sequences; empty for a plain module.
    pub pipelines: Vec<String>,
}

/// Seeds left out, by reason, with a few of their files; and what was changed in the seeds
/// kept, by reason, so that they run here as their tests meant and safely.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LeftOut {
    pub reasons: BTreeMap<String, LeftOutReason>,
    #[serde(default)]
    pub changed: BTreeMap<String, LeftOutReason>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LeftOutReason {
    pub count: usize,
    pub examples: Vec<String>,
}

impl LeftOutReason {
    fn add(&mut self, file: &Path) {
        self.count += 1;
        if self.examples.len() < 3 {
            self.examples.push(file.display().to_string());
        }
    }
}

impl LeftOut {
    fn add(&mut self, reason: &str, file: &Path) {
        self.reasons.entry(reason.to_string()).or_default().add(file);
    }

    fn add_change(&mut self, change: &str, file: &Path) {
        self.changed.entry(change.to_string()).or_default().add(file);
    }

    pub fn total(&self) -> usize {
        self.reasons.values().map(|r| r.count).sum()
    }

    /// `12 do not parse, 3 run no opt` for a status line.
    pub fn summary(&self) -> String {
        counted(&self.reasons)
    }
}

fn counted(reasons: &BTreeMap<String, LeftOutReason>) -> String {
    let parts: Vec<String> = reasons.iter().map(|(why, r)| format!("{} {why}", r.count)).collect();
    parts.join(", ")
}

/// What became of a campaign's `--seeds`, for its report.
#[derive(Debug, Clone, Serialize)]
pub struct SeedStats {
    /// Seed files in use, and (file, options) entries made of them.
    pub files: usize,
    pub entries: usize,
    /// Left out when the campaign started.
    pub left_out: LeftOut,
    /// Seed programs (and mutants) skipped when tested, by reason.
    pub skipped: BTreeMap<String, usize>,
}

impl SeedStats {
    /// What the campaign starts with, before any is tested.
    pub(in crate::fuzz) fn new(seeds: &[SeedEntry], left_out: LeftOut) -> SeedStats {
        let files = seeds.iter().map(|s| &s.file).collect::<std::collections::BTreeSet<_>>().len();
        SeedStats { files, entries: seeds.len(), left_out, skipped: BTreeMap::new() }
    }

    /// None for a campaign without seeds.
    pub(in crate::fuzz) fn of(store: &store::Store) -> Result<Option<SeedStats>> {
        let Some(json) = store.get_meta("seeds")? else { return Ok(None) };
        let seeds: Vec<SeedEntry> = serde_json::from_str(&json)?;
        let left_out = match store.get_meta("seeds_left_out")? {
            Some(json) => serde_json::from_str(&json)?,
            None => LeftOut::default(),
        };
        let mut stats = SeedStats::new(&seeds, left_out);
        for (origin, status) in store.skipped_programs()? {
            if from_seed(&origin) {
                *stats.skipped.entry(skip_reason(&status)).or_insert(0) += 1;
            }
        }
        Ok(Some(stats))
    }

    /// The report's lines.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "seeds: {} files usable ({} with their options), {} left out{}",
            self.files,
            self.entries,
            self.left_out.total(),
            if self.left_out.total() > 0 { format!(": {}", self.left_out.summary()) } else { String::new() }
        )];
        if !self.left_out.changed.is_empty() {
            lines.push(format!("seeds changed to run here: {}", counted(&self.left_out.changed)));
        }
        if !self.skipped.is_empty() {
            let parts: Vec<String> = self.skipped.iter().map(|(why, n)| format!("{n} {why}")).collect();
            lines.push(format!("seed programs skipped when tested: {}", parts.join(", ")));
        }
        lines
    }
}

/// A skipped program's status as a reason to count.
fn skip_reason(status: &str) -> String {
    if status.contains("no LLVM target") {
        "need a target the LLVM under test lacks".into()
    } else if status.contains("--llvm-arg") {
        "have an option the LLVM under test refuses".into()
    } else if status.contains("rejects") {
        "have a pipeline the LLVM under test refuses".into()
    } else {
        "did not load".into()
    }
}

/// One `opt` command of a RUN line: its pipeline and its LLVM options.
#[derive(Debug, Clone, PartialEq)]
pub struct RunCommand {
    pub pipeline: Option<String>,
    pub options: Vec<String>,
}

/// The RUN lines of a lit test, continuation lines (`\` at the end) joined.
pub fn run_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let Some(at) = line.find("RUN:") else { continue };
        let body = line[at + 4..].trim();
        match body.strip_suffix('\\') {
            Some(part) => {
                pending.push_str(part);
                pending.push(' ');
            }
            None => {
                pending.push_str(body);
                lines.push(std::mem::take(&mut pending));
            }
        }
    }
    lines
}

/// The `opt` command a RUN line starts with (what comes before the first `|`, `;` or
/// `&&` outside quotes); None when it runs another tool or expects `opt` to fail (`not opt`).
pub fn opt_command(line: &str) -> Option<Result<RunCommand, String>> {
    let words = match shlex::split(line) {
        Some(w) => w,
        None => return Some(Err("a RUN line ctos cannot split".into())),
    };
    let end = words.iter().position(|w| w.starts_with('|') || w == ";" || w == "&&").unwrap_or(words.len());
    let (tool, args) = words[..end].split_first()?;
    if tool != "opt" && tool != "%opt" {
        return None;
    }
    let mut command = RunCommand { pipeline: None, options: Vec::new() };
    let mut words = args.iter();
    while let Some(word) = words.next() {
        let (name, value) = match word.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (word.as_str(), None),
        };
        match name.trim_start_matches('-') {
            _ if !word.starts_with('-') || word == "-" => {} // %s, < %s, files
            "passes" | "p" => {
                command.pipeline = value.or_else(|| words.next().cloned());
            }
            level @ ("O0" | "O1" | "O2" | "O3" | "Os" | "Oz") => command.pipeline = Some(format!("default<{level}>")),
            "o" => {
                words.next();
            }
            // Target flags may give their value as the next word.
            flag @ ("mtriple" | "mcpu" | "mattr") if value.is_none() => {
                if let Some(v) = words.next() {
                    command.options.push(format!("-{flag}={v}"));
                }
            }
            // What only prints, or only exists in builds with assertions.
            "S"
            | "disable-output"
            | "f"
            | "verify-each"
            | "disable-verify"
            | "debug-pass-manager"
            | "print-pipeline-passes"
            | "debug"
            | "debug-only"
            | "stats"
            | "time-passes"
            | "print-after-all"
            | "print-before-all"
            | "print-changed" => {}
            _ => command.options.push(word.clone()),
        }
    }
    Some(Ok(command))
}

/// The seeds of `dirs` that the LLVM linked into ctos reads and whose pipelines the
/// catalog knows, and those left out. `render`: how the campaign writes sequences; `kinds`:
/// the values the LLVM under test's options take (what of a RUN line may run here).
pub fn load(
    dirs: &[PathBuf],
    catalog: &Catalog,
    render: &RenderOptions,
    kinds: &OptionKinds,
) -> Result<(Vec<SeedEntry>, LeftOut)> {
    let mut seeds = Vec::new();
    let mut left_out = LeftOut::default();
    for dir in dirs {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .with_context(|| format!("--seeds {}: cannot read it", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "ll" || e == "bc"))
            .collect();
        files.sort();
        if files.is_empty() {
            bail!("--seeds {}: no .ll or .bc files", dir.display());
        }
        for file in files {
            let mut changed = Vec::new();
            match seed_entries(&file, catalog, render, kinds, &mut changed) {
                Ok(entries) => {
                    seeds.extend(entries);
                    changed.sort();
                    changed.dedup();
                    for change in changed {
                        left_out.add_change(&change, &file);
                    }
                }
                Err(reason) => left_out.add(&reason, &file),
            }
        }
    }
    Ok((seeds, left_out))
}

/// The entries of one seed file (one per distinct set of options), or why it is left out;
/// what was changed in them goes into `changed`.
fn seed_entries(
    file: &Path,
    catalog: &Catalog,
    render: &RenderOptions,
    kinds: &OptionKinds,
    changed: &mut Vec<String>,
) -> Result<Vec<SeedEntry>, String> {
    let bytes = crate::files::read_regular(file).map_err(|_| "cannot be read".to_string())?;
    let text = String::from_utf8_lossy(&bytes);
    let lines = run_lines(&text);
    let commands: Vec<Result<RunCommand, String>> = lines.iter().filter_map(|l| opt_command(l)).collect();
    let mut by_options: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    let mut first_problem = None;
    for command in commands {
        let pipeline = command.and_then(|c| {
            let text = c.pipeline.ok_or("an opt RUN line without -passes")?;
            let seq =
                Sequence::parse_with(&text, catalog, render).map_err(|_| "a pipeline the catalog does not know")?;
            let (seq, outside) = without_outside_passes(&seq, catalog);
            changed.extend(
                outside.into_iter().map(|p| format!("a pass that writes files or starts a program left out: {p}")),
            );
            let seq = seq.ok_or("a pipeline only of passes that write files or start programs")?;
            let options = c
                .options
                .into_iter()
                .filter(|o| match kinds.refusal(o) {
                    Some(why) => {
                        changed.push(format!("an option that may name a file or a program left out: {why}"));
                        false
                    }
                    None => true,
                })
                .collect();
            let fixed = with_preconditions(&seq, catalog);
            if fixed != seq {
                changed.push(preconditions_added(&seq, catalog));
            }
            let rendered = render_with(&fixed, catalog, render).map_err(|e| e.to_string())?;
            Ok((options, rendered))
        });
        match pipeline {
            Ok((options, rendered)) => {
                let list = by_options.entry(options).or_default();
                if !list.contains(&rendered) {
                    list.push(rendered);
                }
            }
            Err(e) => {
                first_problem.get_or_insert(e.to_string());
            }
        }
    }
    if by_options.is_empty() {
        // A plain module, or a test whose RUN lines give nothing usable.
        if !lines.is_empty() {
            return Err(first_problem.unwrap_or_else(|| "its RUN lines run no opt".into()));
        }
        by_options.insert(Vec::new(), Vec::new());
    }
    let name = file.display().to_string();
    let mut entries = Vec::new();
    for (options, pipelines) in by_options {
        // The triple alone: a CPU or feature of another target only makes LLVM complain.
        let triple = TargetSpec::split_flags(&options).0.triple;
        if let Err(e) = IrModule::from_bytes(&bytes, &name, &TargetSpec { triple, ..TargetSpec::default() }) {
            let message = e.to_string();
            return Err(if message.contains("no LLVM target") || message.contains("No available targets") {
                "needs a target this LLVM lacks".into()
            } else {
                format!("does not parse with LLVM {}", crate::llvm::version().0)
            });
        }
        entries.push(SeedEntry { file: name.clone(), options, pipelines });
    }
    Ok(entries)
}

/// What a seed's pipeline `seq` was given to meet this LLVM's preconditions
/// (`passes/preconditions.tsv`): `coro-early added before coro-split`.
fn preconditions_added(seq: &Sequence, catalog: &Catalog) -> String {
    let mut added: Vec<String> = seq
        .passes()
        .iter()
        .filter(|p| !catalog.preconditions(&p.name).is_empty())
        .map(|p| {
            let needed: Vec<String> = catalog.preconditions(&p.name).iter().map(ToString::to_string).collect();
            format!("{} added before {}", needed.join(","), p.name)
        })
        .collect();
    added.dedup();
    format!("pipelines with {}, which LLVM {} requires", added.join("; "), catalog.llvm_major)
}

/// One in this many drawn seeds runs with one of its knobs changed: a test's thresholds and
/// widths are set to reach one path of its pass, and the paths beside it are as untested.
pub const KNOB_CHANGE_ONE_IN: u32 = 3;

/// `options` with one knob (`-name=value`, a number or a boolean; not a target flag)
/// changed, and `-name=old → new` to say so; None when the options have no knob.
///
/// A number moves to a neighbour or an edge of its own scale: a power of two stays one (a
/// vector width or an interleave count must be), a negative threshold stays negative or
/// becomes 0, and 0 and 1 swap with each other and 2. A value the LLVM refuses skips the
/// program as any refused option does.
pub fn knob_changed<R: Rng + ?Sized>(rng: &mut R, options: &[String]) -> Option<(Vec<String>, String)> {
    let (_, rest) = TargetSpec::split_flags(options);
    let knobs: Vec<(usize, &str, &str, Vec<String>)> = options
        .iter()
        .enumerate()
        .filter(|(_, o)| rest.contains(o))
        .filter_map(|(i, o)| {
            let (name, value) = o.split_once('=')?;
            name.starts_with('-').then_some(())?;
            Some((i, name, value, knob_values(value)?))
        })
        .collect();
    let (i, name, value, values) = knobs.choose(rng)?;
    let (i, new) = (*i, values.choose(rng)?.clone());
    let mut changed = options.to_vec();
    changed[i] = format!("{name}={new}");
    Some((changed, format!("{name}={value} → {new}")))
}

/// The values a knob's `value` may change to, or None when it is neither a number nor a
/// boolean.
fn knob_values(value: &str) -> Option<Vec<String>> {
    let values: Vec<i64> = match value {
        "true" => return Some(vec!["false".into()]),
        "false" => return Some(vec!["true".into()]),
        _ => match value.parse::<i64>().ok()? {
            0 => vec![1, 2],
            1 => vec![0, 2],
            v if v > 1 && v.count_ones() == 1 => vec![v / 2, v * 2],
            v if v > 1 => vec![v - 1, v + 1, v / 2, v * 2],
            v => vec![0, v / 2, v.saturating_mul(2)],
        },
    };
    Some(values.into_iter().map(|v| v.to_string()).collect())
}

/// The origin record of a seed's program: its file, options and own pipelines (which its
/// mutants inherit, see [`inherited`]).
pub(in crate::fuzz) fn origin_of(s: &SeedEntry) -> serde_json::Value {
    serde_json::json!({
        "generator": crate::program::Generator::Seeds, "file": s.file, "llvm_args": s.options,
        "pipelines": s.pipelines,
    })
}

/// What a program made from the seed of `origin` keeps of it: its options and pipelines.
pub(in crate::fuzz) fn inherited(origin: &serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    ["llvm_args", "pipelines", "knob"]
        .into_iter()
        .filter_map(|k| Some((k.to_string(), origin.get(k)?.clone())))
        .collect()
}

/// Whether the program of `origin` is a seed's or a seed's mutant.
pub(in crate::fuzz) fn from_seed(origin: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(origin).is_ok_and(|o| o.get("pipelines").is_some())
}

/// A program's own LLVM options (a seed's RUN line options), from its origin record.
pub(in crate::fuzz) fn own_options(origin: &str) -> Vec<String> {
    own_list(origin, "llvm_args")
}

/// A program's own pipelines (a seed's RUN line pipelines), from its origin record.
pub(in crate::fuzz) fn own_pipelines(origin: &str) -> Vec<String> {
    own_list(origin, "pipelines")
}

fn own_list(origin: &str, key: &str) -> Vec<String> {
    let origin: serde_json::Value = serde_json::from_str(origin).unwrap_or_default();
    origin
        .get(key)
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|v| Some(v.as_str()?.to_string())).collect())
        .unwrap_or_default()
}

/// Ways a seed's own pipeline is perturbed: a pass dropped, repeated, swapped with the
/// next, or one of `pool` added.
pub fn perturbed<R: Rng + ?Sized>(
    rng: &mut R,
    pipeline: &str,
    pool: &[Pass],
    catalog: &Catalog,
    render: &RenderOptions,
    count: usize,
) -> Vec<String> {
    let Ok(seq) = Sequence::parse_with(pipeline, catalog, render) else { return Vec::new() };
    let passes: Vec<Pass> = seq.passes().into_iter().cloned().collect();
    let mut out = Vec::new();
    for _ in 0..count * 3 {
        if out.len() == count {
            break;
        }
        let mut p = passes.clone();
        let at = rng.random_range(0..p.len().max(1));
        match rng.random_range(0..4) {
            0 if p.len() > 1 => {
                p.remove(at);
            }
            1 if !p.is_empty() => p.insert(at, p[at].clone()),
            2 if p.len() > 1 && at + 1 < p.len() => p.swap(at, at + 1),
            _ => match pool.choose(rng) {
                Some(extra) => p.insert(rng.random_range(0..=p.len()), extra.clone()),
                None => continue,
            },
        }
        if let Ok(text) = render_with(&with_preconditions(&Sequence::flat(p), catalog), catalog, render) {
            if text != pipeline && !out.contains(&text) {
                out.push(text);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_lines_give_each_opt_command_its_pipeline_and_options() {
        let text = "; RUN: opt -passes=loop-vectorize,dce -force-vector-width=8 \\\n; RUN:   -mattr=+neon -S < %s | FileCheck %s\n\
                    ; RUN: opt < %s -O3 -S -mtriple=x86_64-- -mcpu=x86-64-v3\n\
                    ; RUN: not opt -passes=verify %s\n\
                    ; RUN: llc < %s\n\
                    ; RUN: opt -p 'function(loop-mssa(licm))' -o %t %s\n\
                    ; RUN: opt %s -passes='function(scalarizer<load-store;min-bits=16>)' -mtriple riscv64 -debug-only=x -S\n\
                    define void @f() {\n  ret void\n}\n";
        let lines = run_lines(text);
        assert_eq!(lines.len(), 6, "{lines:?}");
        let commands: Vec<RunCommand> = lines.iter().filter_map(|l| opt_command(l)).map(Result::unwrap).collect();
        assert_eq!(
            commands,
            [
                RunCommand {
                    pipeline: Some("loop-vectorize,dce".into()),
                    options: vec!["-force-vector-width=8".into(), "-mattr=+neon".into()],
                },
                RunCommand {
                    pipeline: Some("default<O3>".into()),
                    options: vec!["-mtriple=x86_64--".into(), "-mcpu=x86-64-v3".into()],
                },
                RunCommand { pipeline: Some("function(loop-mssa(licm))".into()), options: vec![] },
                RunCommand {
                    pipeline: Some("function(scalarizer<load-store;min-bits=16>)".into()),
                    options: vec!["-mtriple=riscv64".into()],
                },
            ]
        );
    }

    #[test]
    fn seeds_that_cannot_be_used_are_counted_by_reason() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        let module = "define i32 @f(i32 %x) {\n  %y = add i32 %x, 1\n  ret i32 %y\n}\n";
        write("a.ll", &format!("; RUN: opt -passes=instcombine -S < %s | FileCheck %s\n{module}"));
        write("b.ll", &format!("; RUN: opt -passes=no-such-pass -S < %s\n{module}"));
        write("c.ll", "; RUN: opt -passes=instcombine -S < %s\ndefine i32 @f( {\n");
        write("d.ll", &format!("; RUN: llc < %s\n{module}"));
        write("e.ll", module);
        write("notes.txt", "not a seed\n");
        let catalog = Catalog::for_llvm(crate::llvm::version().0).unwrap();
        let render = RenderOptions::default();
        let (seeds, left_out) = load(&[dir.path().to_path_buf()], &catalog, &render, &OptionKinds::default()).unwrap();
        let files: Vec<&str> = seeds.iter().map(|s| s.file.rsplit('/').next().unwrap()).collect();
        assert_eq!(files, ["a.ll", "e.ll"]);
        assert_eq!(seeds[0].pipelines, ["function(instcombine<no-verify-fixpoint>)"]);
        assert!(seeds[1].pipelines.is_empty() && seeds[1].options.is_empty());
        assert_eq!(left_out.total(), 3, "{left_out:?}");
        let reasons: Vec<&str> = left_out.reasons.keys().map(String::as_str).collect();
        assert_eq!(
            reasons,
            [
                "a pipeline the catalog does not know",
                &format!("does not parse with LLVM {}", crate::llvm::version().0),
                "its RUN lines run no opt"
            ]
        );
    }

    #[test]
    fn a_changed_knob_is_one_number_or_boolean_moved_to_a_neighbour_or_an_edge_never_a_target_flag() {
        use rand::SeedableRng as _;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let options: Vec<String> = [
            "-mtriple=x86_64--",
            "-mcpu=i686",
            "-force-vector-width=8",
            "-enable-x=true",
            "-slp-threshold=-50",
            "-x=abc",
        ]
        .map(String::from)
        .into();
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let (changed, change) = knob_changed(&mut rng, &options).unwrap();
            let differ: Vec<usize> = (0..options.len()).filter(|&i| changed[i] != options[i]).collect();
            assert_eq!(differ.len(), 1, "{changed:?}");
            let (name, new) = changed[differ[0]].split_once('=').unwrap();
            assert_eq!(change, format!("{} → {new}", options[differ[0]]));
            seen.insert(format!("{name}={new}"));
        }
        let expected = [
            "-enable-x=false",
            "-force-vector-width=16",
            "-force-vector-width=4",
            "-slp-threshold=-100",
            "-slp-threshold=-25",
            "-slp-threshold=0",
        ];
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), expected);
        assert_eq!(knob_changed(&mut rng, &options[..2]), None);
        assert_eq!(knob_changed(&mut rng, &["-x=abc".to_string()]), None);

        // A bug folder's README names the test and the knob changed.
        let entry = SeedEntry { file: "t/vw.ll".into(), options: options.clone(), pipelines: vec![] };
        let mut origin = origin_of(&entry);
        origin["knob"] = serde_json::json!("-force-vector-width=8 → 16");
        let told = crate::fuzz::programs::origin::provenance(&origin.to_string()).unwrap();
        assert!(told.contains("LLVM's test `t/vw.ll`") && told.contains("`-force-vector-width=8 → 16`"), "{told}");
        assert!(!crate::fuzz::programs::origin::provenance(&origin_of(&entry).to_string()).unwrap().contains("knob"));
    }
}
