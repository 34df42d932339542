//! `ctos report DIR`: the unique bugs of a campaign.

use std::path::Path;

use anyhow::{bail, Result};
use serde::Serialize;

use super::store::Store;

#[derive(Debug, Serialize)]
pub struct BugReport {
    pub id: i64,
    pub kind: String,
    pub pass: String,
    pub signature: String,
    pub reduced: String,
    /// Seconds after the campaign started.
    pub first_seen: i64,
    /// Failing pairs that were this bug.
    pub count: i64,
    pub dir: String,
}

#[derive(Debug, Serialize)]
pub struct CampaignReport {
    pub llvm_version: String,
    pub pairs: i64,
    pub programs_tested: i64,
    pub failures: i64,
    pub bugs: Vec<BugReport>,
}

pub fn campaign_report(dir: &Path) -> Result<CampaignReport> {
    let db = dir.join(super::DB);
    if !db.exists() {
        bail!("{} holds no campaign (no {})", dir.display(), super::DB);
    }
    let store = Store::open(&db)?;
    let created: i64 = store.get_meta("created")?.and_then(|s| s.parse().ok()).unwrap_or(0);
    let (mut pairs, programs_tested, failures) = store.counts()?;
    if let Some(merged) = store.get_meta("merged_pairs")?.and_then(|p| p.parse().ok()) {
        pairs = merged;
    }
    let bugs = store
        .bugs()?
        .into_iter()
        .map(|b| BugReport {
            id: b.id,
            kind: b.kind,
            pass: b.pass,
            signature: b.signature,
            reduced: b.reduced,
            first_seen: b.first_seen.parse::<i64>().unwrap_or(created) - created,
            count: b.count,
            dir: b.dir,
        })
        .collect();
    Ok(CampaignReport {
        llvm_version: store.get_meta("llvm_version")?.unwrap_or_default(),
        pairs,
        programs_tested,
        failures,
        bugs,
    })
}

fn duration(secs: i64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

pub fn print_report(dir: &Path, json: bool) -> Result<()> {
    let r = campaign_report(dir)?;
    if json {
        crate::outln!("{}", serde_json::to_string_pretty(&r)?)?;
        return Ok(());
    }
    crate::outln!(
        "{}: LLVM {}, {} pairs, {} programs tested, {} failures, {} unique bugs\n",
        dir.display(),
        r.llvm_version,
        r.pairs,
        r.programs_tested,
        r.failures,
        r.bugs.len()
    )?;
    if r.bugs.is_empty() {
        return Ok(());
    }
    crate::outln!("{:>4}  {:<11} {:<24} {:>5}  {:>10}  signature", "bug", "type", "pass", "count", "first seen")?;
    for b in &r.bugs {
        let mut signature = b.signature.clone();
        if signature.chars().count() > 70 {
            signature = signature.chars().take(69).collect::<String>() + "…";
        }
        crate::outln!(
            "{:>4}  {:<11} {:<24} {:>5}  {:>10}  {signature}",
            b.id,
            b.kind,
            b.pass,
            b.count,
            duration(b.first_seen)
        )?;
        crate::outln!("{:>6}{}/  {}", "", b.dir, b.reduced)?;
    }
    Ok(())
}
