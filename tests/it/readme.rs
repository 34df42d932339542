//! The README agrees with the tools: every flag a README command line names is one its
//! subcommand's `--help` lists.

use std::collections::BTreeMap;
use std::process::Command;

/// Each `ctos …` or `locseq …` command line of the README (in code blocks and in inline
/// code), as (tool, subcommand, flags).
fn readme_commands() -> Vec<(String, String, Vec<String>, String)> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let mut lines: Vec<String> = Vec::new();
    let mut in_block = false;
    // Prose between code blocks, whose inline code may run over a line break.
    let mut prose = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            lines.push(line.trim().trim_start_matches("$ ").to_string());
        } else {
            prose.push_str(line);
            prose.push(' ');
        }
    }
    lines.extend(prose.split('`').skip(1).step_by(2).map(str::to_string));
    let mut commands = Vec::new();
    for line in lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(at) = words.iter().position(|w| {
            let tool = w.rsplit('/').next().unwrap_or(w);
            (tool == "ctos" || tool == "locseq") && !w.contains("ctos/")
                || w.ends_with("release/ctos")
                || w.ends_with("release/locseq")
        }) else {
            continue;
        };
        let tool = words[at].rsplit('/').next().unwrap().to_string();
        let Some(sub) = words.get(at + 1).filter(|w| w.chars().all(|c| c.is_ascii_lowercase())) else { continue };
        let flags = words[at + 2..]
            .iter()
            .take_while(|w| !["|", "&&", ";", ">", "2>"].contains(w))
            .filter(|w| w.starts_with("--") && w.len() > 2)
            .map(|w| w.split(['=', ',', ')', '`', '…']).next().unwrap().to_string())
            .filter(|w| w.len() > 2 && w[2..].chars().all(|c| c.is_ascii_lowercase() || c == '-'))
            .collect();
        commands.push((tool, sub.to_string(), flags, line.clone()));
    }
    commands
}

#[test]
fn every_flag_a_readme_command_names_is_in_its_help() {
    let commands = readme_commands();
    assert!(commands.len() > 30, "{} command lines found", commands.len());
    let mut helps: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut missing = Vec::new();
    for (tool, sub, flags, line) in &commands {
        let help = helps.entry((tool.clone(), sub.clone())).or_insert_with(|| {
            let exe = if tool == "ctos" { env!("CARGO_BIN_EXE_ctos") } else { env!("CARGO_BIN_EXE_locseq") };
            let out = Command::new(exe).args([sub.as_str(), "--help"]).output().unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        });
        if help.is_empty() {
            missing.push(format!("`{tool} {sub}` has no help: {line}"));
            continue;
        }
        for flag in flags {
            // `  --time <TIME>`, `  -j, --jobs <N>`, `  --json`
            let listed = help.lines().any(|l| {
                let l = l.trim_start();
                let l = if l.len() > 4 && l.starts_with('-') && l[2..].starts_with(", ") { &l[4..] } else { l };
                l.strip_prefix(flag.as_str()).is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '=']))
            });
            if !listed {
                missing.push(format!("{tool} {sub} {flag}: {line}"));
            }
        }
    }
    assert!(missing.is_empty(), "README flags that --help does not list:\n{}", missing.join("\n"));
}
