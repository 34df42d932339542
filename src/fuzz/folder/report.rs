//! `ctos report DIR`: the unique bugs of a campaign.

use std::path::Path;

use crate::fuzz::bug::bugs;
use crate::fuzz::bug::issue;
use crate::fuzz::config;
use crate::fuzz::folder::store;
use crate::fuzz::programs::seeds;
use anyhow::Result;
use serde::Serialize;

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
    /// The command that localizes it (`locseq isolate` on its folder).
    pub localize: String,
    /// Its other faces: failures with other signatures that cross-reproduce with it.
    pub variants: Vec<Variant>,
    /// Its program reduced as IR, where it fires, where it is (once the campaign did so).
    #[serde(flatten)]
    pub findings: issue::Findings,
    /// The newest LLVM the campaign knows no longer fires it: its major version.
    pub fixed_in: Option<u32>,
}

#[derive(Debug, Serialize)]
pub struct Variant {
    pub signature: String,
    pub reduced: String,
    pub dir: String,
}

/// The campaign as a whole: the `summary` record of `ctos report --json`.
#[derive(Debug, Serialize)]
pub struct CampaignSummary {
    pub dir: String,
    pub llvm_version: String,
    pub seed: Option<u64>,
    pub pairs: i64,
    pub programs_tested: i64,
    pub failures: i64,
    pub bugs: usize,
    /// Failures whose cause another shard published first (`--sync`).
    pub known_elsewhere: i64,
    /// What each generator's programs gave (`programs` for a user's).
    pub by_generator: std::collections::BTreeMap<String, store::GeneratorCounts>,
    /// What became of `--seeds`: those used, those left out, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seeds: Option<seeds::SeedStats>,
}

#[derive(Debug)]
pub struct CampaignReport {
    pub summary: CampaignSummary,
    pub bugs: Vec<BugReport>,
}

/// What a campaign folder holds, read without changing anything (it may be running).
pub fn campaign_report(dir: &Path) -> Result<CampaignReport> {
    report_of(&store::open_campaign(dir)?, dir)
}

/// The report of the campaign in `dir`, whose store is open.
pub(in crate::fuzz) fn report_of(store: &store::Store, dir: &Path) -> Result<CampaignReport> {
    let created: i64 = store.get_meta("created")?.and_then(|s| s.parse().ok()).unwrap_or(0);
    let merged = |key: &str| -> Result<Option<i64>> { Ok(store.get_meta(key)?.and_then(|v| v.parse().ok())) };
    let (pairs, programs_tested, failures) = store.counts()?;
    let pairs = merged("merged_pairs")?.unwrap_or(pairs);
    let programs_tested = merged("merged_programs_tested")?.unwrap_or(programs_tested);
    let failures = merged("merged_failures")?.unwrap_or(failures);
    let config = store.get_meta("config")?.and_then(|c| serde_json::from_str::<config::CampaignConfig>(&c).ok());
    let seed = config.as_ref().map(|c| c.seed);
    let opt = config.as_ref().and_then(|c| c.opt.clone());
    let variants = store.variants()?;
    let bugs: Vec<BugReport> = store
        .bugs()?
        .into_iter()
        .map(|b| BugReport {
            findings: issue::Findings::read(&dir.join(&b.dir)),
            fixed_in: None,
            id: b.id,
            kind: b.kind,
            pass: b.pass,
            signature: b.signature,
            reduced: b.reduced,
            first_seen: b.first_seen.parse::<i64>().unwrap_or(created) - created,
            count: b.count,
            localize: bugs::localize_command(&dir.join(&b.dir).display().to_string(), opt.as_deref()),
            dir: b.dir,
            variants: variants
                .iter()
                .filter(|v| v.bug == b.id)
                .map(|v| Variant { signature: v.signature.clone(), reduced: v.reduced.clone(), dir: v.dir.clone() })
                .collect(),
        })
        .collect();
    // Bugs that still fire first, those that production pipelines can meet first among
    // them, each group in the order found.
    let mut bugs = bugs;
    for b in &mut bugs {
        b.fixed_in = b.findings.fixed_in();
    }
    bugs.sort_by_key(|b: &BugReport| (b.fixed_in.is_some(), b.findings.production_only != Some(true), b.id));
    let summary = CampaignSummary {
        dir: dir.display().to_string(),
        llvm_version: store.get_meta("llvm_version")?.unwrap_or_default(),
        seed,
        pairs,
        programs_tested,
        failures,
        bugs: bugs.len(),
        known_elsewhere: store.failures_resolved_as(store::ELSEWHERE)?,
        by_generator: store.by_generator()?,
        seeds: seeds::SeedStats::of(store)?,
    };
    Ok(CampaignReport { summary, bugs })
}

pub(in crate::fuzz) fn duration(secs: i64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// The report as a table, or as the `bug` and `summary` records of the `--json`
/// convention (the caller writes `begin`).
pub fn print_report(dir: &Path, json: bool) -> Result<()> {
    let r = campaign_report(dir)?;
    if json {
        for bug in &r.bugs {
            crate::output::emit("bug", bug)?;
        }
        return crate::output::emit("summary", &r.summary);
    }
    let s = &r.summary;
    let elsewhere = match s.known_elsewhere {
        0 => String::new(),
        n => format!(" ({n} failures of causes other shards found first)"),
    };
    crate::outln!(
        "{}: LLVM {}, {} pairs, {} programs tested, {} failures, {} unique bugs{elsewhere}\n",
        dir.display(),
        s.llvm_version,
        s.pairs,
        s.programs_tested,
        s.failures,
        s.bugs
    )?;
    if s.by_generator.len() > 1 {
        for (generator, n) in &s.by_generator {
            crate::outln!(
                "  {generator:<12} {} programs tested, {} pairs, {} failures, {} bugs",
                n.programs_tested,
                n.pairs,
                n.failures,
                n.bugs
            )?;
        }
        crate::outln!()?;
    }
    if let Some(seeds) = &s.seeds {
        for line in seeds.lines() {
            crate::outln!("  {line}")?;
        }
        crate::outln!()?;
    }
    if r.bugs.is_empty() {
        return Ok(());
    }
    crate::outln!("{:>4}  {:<11} {:<24} {:>5}  {:>10}  signature", "bug", "type", "pass", "count", "first seen")?;
    for b in &r.bugs {
        let signature = crate::output::shorten(&b.signature, 70);
        crate::outln!(
            "{:>4}  {:<11} {:<24} {:>5}  {:>10}  {signature}",
            b.id,
            b.kind,
            b.pass,
            b.count,
            duration(b.first_seen)
        )?;
        crate::outln!("{:>6}{}/  {}", "", b.dir, b.reduced)?;
        crate::outln!("{:>6}localize: {}", "", b.localize)?;
        for line in b.findings.summary_lines() {
            crate::outln!("{:>6}{line}", "")?;
        }
        for v in &b.variants {
            crate::outln!("{:>6}also: {}  ({}/)", "", v.signature, v.dir)?;
        }
    }
    Ok(())
}
