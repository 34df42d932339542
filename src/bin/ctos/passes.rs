use std::process::ExitCode;

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use ctos::output;
use ctos::sandbox::agent::{identify, major_of};
use ctos::seq::{Catalog, Kind};
use serde::Serialize;

#[derive(clap::Args)]
pub struct PassesArgs {
    /// Only the members of this set: locseq, ctos, o3, production (what clang's default
    /// pipelines run), safe, unsafe, all.
    #[arg(long)]
    set: Option<String>,
    /// JSON Lines instead of a table: begin, one `pass` record per pass, summary.
    #[arg(long)]
    json: bool,
    /// The passes of this `opt` (read from its -print-passes) instead of the linked LLVM's.
    #[arg(long, value_name = "PATH")]
    opt: Option<PathBuf>,
    /// Write the generated tables of the catalog into DIR (llvmN.tsv: every pass with its
    /// parameters; o3.llvmN.txt: the passes of default<O3>; production.llvmN.txt: those of
    /// every default pipeline), from the `--opt`, else from Debian's opt of the linked LLVM:
    /// how passes/ is made.
    #[arg(long, value_name = "DIR")]
    write_catalog: Option<PathBuf>,
}

#[derive(Serialize)]
struct PassRecord<'a> {
    name: &'a str,
    levels: Vec<String>,
    params: Option<String>,
    sets: Vec<&'a str>,
    #[serde(rename = "unsafe")]
    unsafe_reason: Option<&'a str>,
}

pub fn main(args: PassesArgs) -> Result<ExitCode> {
    let opt = match &args.opt {
        Some(path) => Some(identify(path)?),
        None => None,
    };
    if let Some(dir) = &args.write_catalog {
        return write_catalog(dir, opt);
    }
    let catalog = match &opt {
        Some((path, version)) => Catalog::of_opt(path, major_of(version))?,
        None => Catalog::for_llvm(ctos::llvm::version().0)?,
    };
    let names: Vec<String> = match &args.set {
        Some(set) => catalog.set(set)?.iter().map(|p| p.to_string()).collect(),
        None => catalog.entries().iter().filter(|e| e.kind == Kind::Pass).map(|e| e.name.clone()).collect(),
    };
    if args.json {
        let version = opt.as_ref().map_or_else(ctos::llvm::version_string, |(_, v)| v.clone());
        output::begin_on("ctos passes", None, &version, opt.as_ref().map(|(p, _)| p.as_path()))?;
    }
    for name in &names {
        let base = ctos::seq::parse::split_last_params(name).0;
        let entry = catalog.get(name).or_else(|| catalog.get(base));
        let levels: Vec<String> = entry.map(|e| e.levels.iter().map(|l| l.to_string()).collect()).unwrap_or_default();
        let params = entry.and_then(|e| e.params.clone());
        let sets: Vec<&str> = catalog
            .set_names()
            .filter(|s| !matches!(*s, "all" | "safe"))
            .filter(|s| catalog.set(s).is_ok_and(|m| m.iter().any(|p| p.name == base)))
            .collect();
        let unsafe_reason = catalog.unsafe_reason(base);
        if args.json {
            output::emit("pass", &PassRecord { name, levels, params, sets, unsafe_reason })?;
        } else {
            let mut text = format!("{name:<40} {:<22}", levels.join(","));
            if !sets.is_empty() {
                text.push_str(&format!(" [{}]", sets.join(",")));
            }
            if let Some(reason) = unsafe_reason {
                text.push_str(&format!(" unsafe: {reason}"));
            }
            ctos::outln!("{}", text.trim_end())?;
        }
    }
    if args.json {
        output::emit("summary", &serde_json::json!({ "set": args.set, "passes": names.len() }))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn write_catalog(dir: &Path, opt: Option<(PathBuf, String)>) -> Result<ExitCode> {
    let (opt, major) = match opt {
        Some((path, version)) => (path, major_of(&version)),
        None => (ctos::llvm::linked_opt(), ctos::llvm::version().0),
    };
    let tables = ctos::seq::catalog_tables(&opt, major).map_err(anyhow::Error::msg)?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let files = [
        (format!("llvm{major}.tsv"), &tables.tsv),
        (format!("o3.llvm{major}.txt"), &tables.o3),
        (format!("production.llvm{major}.txt"), &tables.production),
    ];
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        ctos::outln!("wrote {}", path.display())?;
    }
    Ok(ExitCode::SUCCESS)
}
