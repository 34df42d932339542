//! Where a bug is: a short `locseq isolate` of its folder, run as the README tells the
//! user to, in its own process (a localization that fails costs the campaign nothing).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Files the folder's README, report and page name.
pub const TOP_FILES: usize = 3;
/// Functions they name.
pub const TOP_FUNCTIONS: usize = 5;

/// What a short localization found, as `outcome.json` records it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Suspects {
    /// The culprit pass as the reduced sequence writes it.
    pub culprit: Option<String>,
    /// Its LLVM class (`NewGVNPass`), when it was seen running.
    pub class: Option<String>,
    /// The best-ranked source files, best first.
    pub files: Vec<String>,
    /// The best-ranked functions, best first, each with its file (an older ctos's folder
    /// has none).
    #[serde(default)]
    pub functions: Vec<(String, String)>,
    pub seconds: f64,
    /// Why there are no files, when there are none.
    pub note: Option<String>,
    /// The command that ran (and that gives the full ranking).
    pub command: String,
    /// The same command as anyone with the bug folder runs it: the folder by its name, the
    /// `opt` by its (for a report read on another machine).
    #[serde(default)]
    pub portable: Option<String>,
}

impl Suspects {
    /// The command as a report for LLVM's tracker shows it (that of an older ctos's folder:
    /// as it ran).
    pub fn portable_command(&self) -> String {
        self.portable.clone().unwrap_or_else(|| self.command.clone())
    }
}

/// `locseq isolate FOLDER` with `budget` for the whole isolation.
pub fn localize(folder: &Path, budget: Duration, jobs: usize, seed: u64, opt: Option<&Path>) -> Suspects {
    let started = Instant::now();
    let locseq = std::env::current_exe().ok().and_then(|e| Some(e.parent()?.join("locseq"))).filter(|p| p.is_file());
    let time = format!("{}s", budget.as_secs().max(1));
    let options = ["--time".into(), time, "-j".into(), jobs.max(1).to_string(), "--seed".into(), seed.to_string()];
    let command_of = |folder: String, opt: Option<String>| -> (Vec<String>, String) {
        let mut args = vec!["isolate".to_string(), folder];
        args.extend(options.iter().cloned());
        args.extend(opt.into_iter().flat_map(|o| ["--opt".to_string(), o]));
        let line = std::iter::once("locseq".to_string())
            .chain(args.iter().map(|a| crate::output::shell_quote(a)))
            .collect::<Vec<_>>()
            .join(" ");
        (args, line)
    };
    let (args, command) = command_of(folder.display().to_string(), opt.map(|o| o.display().to_string()));
    let name = folder.file_name().map_or_else(|| folder.display().to_string(), |n| n.to_string_lossy().into_owned());
    let (_, portable) = command_of(name, opt.map(|_| "opt".to_string()));
    let mut suspects = Suspects { command, portable: Some(portable), ..Default::default() };
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

/// The culprit, the top files and functions from `locseq isolate --json`'s records.
fn read_records(stdout: &str, suspects: &mut Suspects) {
    for record in stdout.lines().filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok()) {
        match record["type"].as_str() {
            Some("file") if suspects.files.len() < TOP_FILES => {
                if let Some(path) = record["path"].as_str() {
                    suspects.files.push(path.to_string());
                }
            }
            Some("function") if suspects.functions.len() < TOP_FUNCTIONS => {
                if let (Some(name), Some(file)) = (record["name"].as_str(), record["file"].as_str()) {
                    suspects.functions.push((name.to_string(), file.to_string()));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_top_files_and_functions_come_from_locseqs_records() {
        let mut lines = vec![r#"{"type":"begin"}"#.to_string()];
        for i in 0..4 {
            lines.push(format!(r#"{{"type":"file","path":"llvm/lib/F{i}.cpp","rank":{}}}"#, i + 1));
        }
        for i in 0..7 {
            lines.push(format!(
                r#"{{"type":"function","name":"llvm::f{i}","file":"llvm/lib/F0.cpp","rank":{}}}"#,
                i + 1
            ));
        }
        lines.push(r#"{"type":"summary","culprit":{"pass":"gvn","class":"GVNPass"}}"#.to_string());
        let mut s = Suspects::default();
        read_records(&lines.join("\n"), &mut s);
        assert_eq!(s.files.len(), TOP_FILES);
        assert_eq!(s.functions.len(), TOP_FUNCTIONS);
        assert_eq!(s.functions[0], ("llvm::f0".to_string(), "llvm/lib/F0.cpp".to_string()));
        assert_eq!((s.culprit.as_deref(), s.class.as_deref()), (Some("gvn"), Some("GVNPass")));
        // A folder written by an older ctos has no functions, and still reads.
        let old: Suspects =
            serde_json::from_str(r#"{"culprit":null,"class":null,"files":[],"seconds":1.0,"note":null,"command":"x"}"#)
                .unwrap();
        assert!(old.functions.is_empty());
    }

    /// A report read on another machine names the bug folder and `opt` as its reader has
    /// them; the folder's README keeps the command as it ran here.
    #[test]
    fn the_command_for_a_report_names_the_folder_and_opt_as_anyone_has_them() {
        // Nothing is read there: the folder only names the command's argument.
        let folder = std::env::temp_dir().join("camp/bugs/0001-crash-gvn");
        let s = localize(&folder, Duration::from_secs(30), 2, 7, Some(Path::new("/opt/llvm 23/bin/opt")));
        assert_eq!(s.portable_command(), "locseq isolate 0001-crash-gvn --time 30s -j 2 --seed 7 --opt opt");
        let here = crate::output::shell_quote(&folder.display().to_string());
        assert_eq!(s.command, format!("locseq isolate {here} --time 30s -j 2 --seed 7 --opt '/opt/llvm 23/bin/opt'"));
    }
}
