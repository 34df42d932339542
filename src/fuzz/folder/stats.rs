//! `stats.json`, rewritten while the campaign runs, and the live status line.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};

use crate::fuzz::folder::store;
use crate::fuzz::folder::store::{Store, TimelineRow};

/// How often the campaign's progress is sampled into its store's timeline.
const SAMPLE_EVERY_SECONDS: f64 = 5.0;

pub struct Stats {
    pub iteration: i64,
    bar: ProgressBar,
    last_write: Instant,
    last_sample: Option<Instant>,
    /// This run's name in the timeline: when it started (unix seconds, to the millisecond).
    run: String,
    pairs_at_start: i64,
    /// Seconds this run spent per phase of the campaign (csmith, clang, testing …).
    phases: BTreeMap<&'static str, f64>,
    /// Programs with a generated driver, and every program's [`DriverRecord`] added up:
    /// read from the folder when the run starts, then counted as records are written.
    programs_with_drivers: usize,
    drivers: DriverStats,
}

#[derive(Serialize)]
struct Snapshot {
    llvm_version: String,
    iteration: i64,
    elapsed_seconds: f64,
    pairs: i64,
    pairs_this_run: i64,
    pairs_per_second: f64,
    programs_tested: i64,
    failures: i64,
    /// Pairs LLVM refused to run (a bug of ours: input is checked before a campaign starts).
    rejected_pairs: i64,
    /// Pairs whose pipeline broke a pass's precondition, as LLVM's message says (a seed's
    /// own pipeline, written for another LLVM): neither failures nor votes.
    misuse_pairs: i64,
    bugs: usize,
    bugs_by_kind: BTreeMap<String, usize>,
    /// Random sequences dropped because a known bug's reduced sequence or an --exclude
    /// pattern occurs in them.
    excluded_sequences: i64,
    /// EMI variants (`--generator hermes`) whose unoptimized output is not their seed's:
    /// bugs of ctos, never tested.
    emi_mismatches: i64,
    /// Failures whose cause another shard published first (`--sync`): no folder here.
    known_elsewhere: i64,
    /// Programs tested, pairs, failures and bugs by the generator that made the program.
    by_generator: BTreeMap<String, store::GeneratorCounts>,
    /// Programs without `main` that a generated driver runs (see crate::program::driver).
    programs_with_drivers: usize,
    /// What driver generation left out, over all programs without `main` it was tried on.
    drivers: DriverStats,
    /// Where this run's `elapsed_seconds` went.
    seconds_by_phase: BTreeMap<&'static str, f64>,
    finished: bool,
}

/// What driver generation made of one program without `main`, kept beside it
/// (`programs/X.driver.json`) for stats.json's `drivers`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(in crate::fuzz) struct DriverRecord {
    calls: usize,
    /// Why it has no driver (the reason's first clause), when it has none.
    none: Option<String>,
    refused: BTreeMap<String, usize>,
    dropped: BTreeMap<String, usize>,
}

impl DriverRecord {
    pub(in crate::fuzz) fn of(outcome: &crate::program::driver::DriverOutcome) -> DriverRecord {
        let (calls, none) = match &outcome.driver {
            Ok(driver) => (driver.calls, None),
            Err(why) => (0, Some(why.split(" (").next().unwrap_or(why).to_string())),
        };
        DriverRecord { calls, none, refused: outcome.refused.clone(), dropped: outcome.dropped.clone() }
    }

    /// A generation that stopped on an error: the program is tested without a driver.
    pub(in crate::fuzz) fn failed(error: &str) -> DriverRecord {
        // The first line: a verifier's complaint goes on with the IR it names.
        let first = error.lines().next().unwrap_or(error);
        DriverRecord { none: Some(format!("an error: {first}")), ..DriverRecord::default() }
    }
}

/// [`DriverRecord`]s added up.
#[derive(Debug, Default, Clone, Serialize)]
struct DriverStats {
    /// Programs without `main` that got no driver, by why.
    programs_without: BTreeMap<String, usize>,
    /// Calls the drivers make.
    calls: usize,
    /// Calls left out because the unoptimized run broke a rule, by rule.
    calls_dropped: BTreeMap<String, usize>,
    /// Functions no driver calls, by why.
    functions_refused: BTreeMap<String, usize>,
}

impl DriverStats {
    fn add(&mut self, record: DriverRecord) {
        if let Some(why) = record.none {
            *self.programs_without.entry(why).or_default() += 1;
        }
        self.calls += record.calls;
        for (why, n) in record.dropped {
            *self.calls_dropped.entry(why).or_default() += n;
        }
        for (why, n) in record.refused {
            *self.functions_refused.entry(why).or_default() += n;
        }
    }
}

/// Programs with a generated driver in the campaign folder `dir`, and their records added up.
fn drivers_in(dir: &Path) -> (usize, DriverStats) {
    let mut stats = DriverStats::default();
    let mut with = 0;
    let Ok(entries) = std::fs::read_dir(dir.join("programs")) else { return (0, stats) };
    for entry in entries.filter_map(|e| e.ok()) {
        let name = entry.file_name().to_string_lossy().to_string();
        if name.ends_with(".driver.ll") {
            with += 1;
        }
        if !name.ends_with(".driver.json") {
            continue;
        }
        let record = std::fs::read(entry.path()).ok().and_then(|b| serde_json::from_slice::<DriverRecord>(&b).ok());
        if let Some(record) = record {
            stats.add(record);
        }
    }
    (with, stats)
}

impl Stats {
    /// The stats of the campaign in `dir`.
    pub fn new(dir: &Path, store: &Store, status_line: bool) -> Result<Stats> {
        let bar = crate::output::progress_bar(None, "{spinner} [{elapsed_precise}] {msg}", !status_line);
        let (programs_with_drivers, drivers) = drivers_in(dir);
        Ok(Stats {
            iteration: 0,
            bar,
            last_write: Instant::now(),
            last_sample: None,
            // Milliseconds: a resume can follow an interruption within the second.
            run: format!("{:.3}", unix_seconds()),
            pairs_at_start: store.counts()?.0,
            phases: BTreeMap::new(),
            programs_with_drivers,
            drivers,
        })
    }

    /// Keep `record` beside its program as `json` and count it; `with_driver`: generation
    /// wrote a driver.
    pub(in crate::fuzz) fn driver_generated(
        &mut self,
        json: &Path,
        record: DriverRecord,
        with_driver: bool,
    ) -> Result<()> {
        std::fs::write(json, serde_json::to_string(&record)?)?;
        self.programs_with_drivers += usize::from(with_driver);
        self.drivers.add(record);
        Ok(())
    }

    /// Count the time since `since` toward `phase`; returns now, to time the next phase from.
    pub fn spent(&mut self, phase: &'static str, since: Instant) -> Instant {
        let now = Instant::now();
        *self.phases.entry(phase).or_insert(0.0) += (now - since).as_secs_f64();
        now
    }

    /// [`spent`](Self::spent) on a phase that runs inside `outer`, whose whole span its
    /// caller counts: the time moves from `outer` to `phase`, so phases still add up.
    pub fn spent_within(&mut self, phase: &'static str, since: Instant, outer: &'static str) -> Instant {
        let now = Instant::now();
        let seconds = (now - since).as_secs_f64();
        *self.phases.entry(phase).or_insert(0.0) += seconds;
        *self.phases.entry(outer).or_insert(0.0) -= seconds;
        now
    }

    /// The three phases that took longest, with their share of `elapsed`.
    fn top_phases(&self, elapsed: f64) -> String {
        let mut phases: Vec<(&str, f64)> = self.phases.iter().map(|(k, v)| (*k, *v)).collect();
        phases.sort_by(|a, b| b.1.total_cmp(&a.1));
        let shown: Vec<String> =
            phases.iter().take(3).map(|(k, v)| format!("{k} {:.0}%", 100.0 * v / elapsed.max(1e-9))).collect();
        shown.join(", ")
    }

    fn snapshot(&self, store: &Store, started: Instant, finished: bool) -> Result<Snapshot> {
        let (pairs, programs_tested, failures) = store.counts()?;
        let bugs = store.bugs()?;
        let mut bugs_by_kind = BTreeMap::new();
        for b in &bugs {
            *bugs_by_kind.entry(b.kind.clone()).or_insert(0) += 1;
        }
        let elapsed = started.elapsed().as_secs_f64();
        let this_run = pairs - self.pairs_at_start;
        Ok(Snapshot {
            llvm_version: store::recorded_llvm_version(store)?,
            iteration: self.iteration,
            elapsed_seconds: elapsed,
            pairs,
            pairs_this_run: this_run,
            pairs_per_second: this_run as f64 / elapsed.max(1e-9),
            programs_tested,
            failures,
            rejected_pairs: store.rejected_pairs()?,
            misuse_pairs: store.misuse_pairs()?,
            bugs: bugs.len(),
            bugs_by_kind,
            excluded_sequences: store.excluded()?,
            emi_mismatches: store.programs_with_status("emi-mismatch")?,
            known_elsewhere: store.failures_resolved_as(store::ELSEWHERE)?,
            by_generator: store.by_generator()?,
            programs_with_drivers: self.programs_with_drivers,
            drivers: self.drivers.clone(),
            seconds_by_phase: self.phases.clone(),
            finished,
        })
    }

    /// Update the status line; rewrite stats.json at most every two seconds.
    pub fn tick(&mut self, dir: &Path, store: &Store, started: Instant, phase: &str) -> Result<()> {
        let s = self.snapshot(store, started, false)?;
        let kinds: Vec<String> = s.bugs_by_kind.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let mut rejected =
            if s.rejected_pairs > 0 { format!(" | {} rejected", s.rejected_pairs) } else { String::new() };
        if s.misuse_pairs > 0 {
            rejected.push_str(&format!(" | {} broke a pass's precondition", s.misuse_pairs));
        }
        if s.emi_mismatches > 0 {
            rejected.push_str(&format!(" | {} EMI variants print differently (a ctos bug)", s.emi_mismatches));
        }
        self.bar.set_message(format!(
            "iteration {} {phase} | {} pairs ({:.1}/s){rejected} | {} failures | bugs: {} | time: {}",
            s.iteration,
            s.pairs,
            s.pairs_per_second,
            s.failures,
            if kinds.is_empty() { "none".to_string() } else { kinds.join(", ") },
            self.top_phases(s.elapsed_seconds)
        ));
        self.bar.tick();
        if self.last_write.elapsed().as_secs_f64() >= 2.0 {
            write_json(dir, &s)?;
            self.last_write = Instant::now();
        }
        if self.last_sample.is_none_or(|t| t.elapsed().as_secs_f64() >= SAMPLE_EVERY_SECONDS) {
            self.sample(store, &s)?;
        }
        Ok(())
    }

    fn sample(&mut self, store: &Store, s: &Snapshot) -> Result<()> {
        let at = unix_seconds();
        let row = TimelineRow { run: self.run.clone(), at, pairs: s.pairs, failures: s.failures, bugs: s.bugs as i64 };
        store.add_timeline(&row)?;
        self.last_sample = Some(Instant::now());
        Ok(())
    }

    pub fn write(&mut self, dir: &Path, store: &Store, started: Instant) -> Result<()> {
        let s = self.snapshot(store, started, false)?;
        write_json(dir, &s)?;
        self.sample(store, &s)?;
        self.last_write = Instant::now();
        Ok(())
    }

    pub fn finish(&mut self, dir: &Path, store: &Store, started: Instant) -> Result<()> {
        self.bar.finish_and_clear();
        let s = self.snapshot(store, started, true)?;
        self.sample(store, &s)?;
        write_json(dir, &s)
    }
}

fn unix_seconds() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// Write then rename, so a reader never sees half a file.
fn write_json(dir: &Path, snapshot: &Snapshot) -> Result<()> {
    let tmp = dir.join("stats.json.tmp");
    std::fs::write(&tmp, serde_json::to_string_pretty(snapshot)?)?;
    std::fs::rename(tmp, dir.join("stats.json"))?;
    Ok(())
}
