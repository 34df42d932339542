//! Where a bug is: a short `locseq isolate` of its folder, run as the README tells the
//! user to, in its own process (a localization that fails costs the campaign nothing).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Files the folder's README, report and page name.
pub const TOP_FILES: usize = 3;

/// What a short localization found, as `outcome.json` records it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Suspects {
    /// The culprit pass as the reduced sequence writes it.
    pub culprit: Option<String>,
    /// Its LLVM class (`NewGVNPass`), when it was seen running.
    pub class: Option<String>,
    /// The best-ranked source files, best first.
    pub files: Vec<String>,
    pub seconds: f64,
    /// Why there are no files, when there are none.
    pub note: Option<String>,
    /// The command that ran (and that gives the full ranking).
    pub command: String,
}

/// `locseq isolate FOLDER` with `budget` for the whole isolation.
pub fn localize(folder: &Path, budget: Duration, jobs: usize, seed: u64, opt: Option<&Path>) -> Suspects {
    let started = Instant::now();
    let locseq = std::env::current_exe().ok().and_then(|e| Some(e.parent()?.join("locseq"))).filter(|p| p.is_file());
    let time = format!("{}s", budget.as_secs().max(1));
    let mut args = vec!["isolate".to_string(), folder.display().to_string(), "--time".into(), time];
    args.extend(["-j".into(), jobs.max(1).to_string(), "--seed".into(), seed.to_string()]);
    if let Some(opt) = opt {
        args.extend(["--opt".into(), opt.display().to_string()]);
    }
    let command = std::iter::once("locseq".to_string())
        .chain(args.iter().map(|a| crate::output::shell_quote(a)))
        .collect::<Vec<_>>()
        .join(" ");
    let mut suspects = Suspects { command, ..Default::default() };
    let Some(locseq) = locseq else {
        suspects.note = Some("locseq is not installed beside ctos".into());
        return suspects;
    };
    match Command::new(locseq).args(&args).arg("--json").output() {
        Ok(out) if out.status.success() => read_records(&String::from_utf8_lossy(&out.stdout), &mut suspects),
        Ok(out) => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no message");
            suspects.note = Some(format!("locseq failed: {last}"));
        }
        Err(e) => suspects.note = Some(format!("cannot run locseq: {e}")),
    }
    suspects.seconds = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
    suspects
}

/// The culprit and the top files from `locseq isolate --json`'s records.
fn read_records(stdout: &str, suspects: &mut Suspects) {
    for record in stdout.lines().filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok()) {
        match record["type"].as_str() {
            Some("file") if suspects.files.len() < TOP_FILES => {
                if let Some(path) = record["path"].as_str() {
                    suspects.files.push(path.to_string());
                }
            }
            Some("summary") => {
                let culprit = &record["culprit"];
                suspects.culprit = culprit["pass"].as_str().map(str::to_string);
                suspects.class = culprit["class"].as_str().map(str::to_string);
            }
            _ => {}
        }
    }
    if suspects.files.is_empty() {
        suspects.note = Some("the localization ranked no file".into());
    }
}
