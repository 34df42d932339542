use std::process::ExitCode;

use anyhow::Result;
use ctos::output;
use ctos::seq::{Catalog, Kind};
use serde::Serialize;

#[derive(clap::Args)]
pub struct PassesArgs {
    /// Only the members of this set (locseq, ctos, o3, safe, unsafe, all).
    #[arg(long)]
    set: Option<String>,
    /// JSON Lines instead of a table: begin, one `pass` record per pass, summary.
    #[arg(long)]
    json: bool,
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
    let catalog = Catalog::for_llvm(ctos::llvm::version().0)?;
    let names: Vec<String> = match &args.set {
        Some(set) => catalog.set(set)?.iter().map(|p| p.to_string()).collect(),
        None => catalog.entries().iter().filter(|e| e.kind == Kind::Pass).map(|e| e.name.clone()).collect(),
    };
    if args.json {
        output::begin("ctos passes", None, None)?;
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
