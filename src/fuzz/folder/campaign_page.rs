//! `ctos report DIR --html OUT.html`: a campaign on one page, read without changing
//! anything (the campaign may be running; a merged one works alike).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;

use crate::fuzz::config;
use crate::fuzz::folder::merge;
use crate::fuzz::folder::report::{duration, report_of, BugReport, CampaignReport};
use crate::fuzz::folder::store;
use crate::fuzz::folder::store::{SelectionPoint, Store, TimelineRow};
use crate::html::charts::{bar_chart, line_chart, scatter, Series};
use crate::html::{escape, Cell, Page};
use crate::output::value_name;

/// Write the page of the campaign in `dir` to `out`.
pub fn write_campaign_page(dir: &Path, out: &Path) -> Result<()> {
    crate::html::check_output(out)?;
    let store = store::open_campaign(dir)?;
    let report = report_of(&store, dir)?;
    let title = format!("ctos campaign {}", dir.display());
    let mut page = Page::new(&title);
    overview(&mut page, dir, &store, &report)?;
    bugs(&mut page, dir, out, &report.bugs);
    progress(&mut page, &store, &report)?;
    failures(&mut page, &store)?;
    selection(&mut page, &store)?;
    // Last: triage starts from the bugs; the whole configuration is for reproducing.
    configuration(&mut page, &store, &report)?;
    page.write(&title, out)
}

fn overview(page: &mut Page, dir: &Path, store: &Store, report: &CampaignReport) -> Result<()> {
    let s = &report.summary;
    let stats: Option<serde_json::Value> =
        crate::files::read_regular_text(&dir.join("stats.json")).ok().and_then(|t| serde_json::from_str(&t).ok());
    let merged_from = store.get_meta("merged_from")?;
    let finished = stats.as_ref().and_then(|s| s["finished"].as_bool()) == Some(true);
    let state = match &merged_from {
        Some(from) => format!("merged from {} shards", from.lines().count()),
        None if finished => "finished (resume it with ctos fuzz --resume)".to_string(),
        None if store.iterations()? > 0 => "running, or interrupted (this page shows its last commit)".to_string(),
        None => "not started".to_string(),
    };
    let config: Option<config::CampaignConfig> = store.get_meta("config")?.and_then(|c| serde_json::from_str(&c).ok());
    let how = config.map_or_else(String::new, |c| {
        let options = c.llvm_options();
        format!(
            " Seed {}; selection {}; programs: {}; sequences: {}{}.",
            c.seed,
            value_name(&c.selection),
            c.programs_dir.as_ref().map_or_else(|| c.generator.to_string(), |d| d.display().to_string()),
            c.sequences_file
                .as_ref()
                .map_or_else(|| format!("random, from the {} set", c.pass_set), |f| f.display().to_string()),
            if options.is_empty() { String::new() } else { format!("; LLVM options: {}", options.join(" ")) }
        )
    });
    page.paragraph(&format!("LLVM {}; {state}.{how} (The whole configuration is at the end.)", s.llvm_version));
    let rows: Vec<Vec<Cell>> = [
        ("pairs", s.pairs),
        ("programs tested", s.programs_tested),
        ("failures", s.failures),
        ("unique bugs", s.bugs as i64),
        ("iterations finished", store.finished_iterations()?),
    ]
    .into_iter()
    .map(|(k, v)| vec![Cell::Text(k.into()), Cell::Num(v.to_string())])
    .collect();
    page.table("summary", &["", "count"], &rows);
    if let Some(from) = merged_from {
        page.paragraph(&format!("Shards: {}", from.lines().collect::<Vec<_>>().join(", ")));
    }
    Ok(())
}

fn configuration(page: &mut Page, store: &Store, report: &CampaignReport) -> Result<()> {
    let s = &report.summary;
    page.heading("Configuration");
    let config: serde_json::Value =
        store.get_meta("config")?.and_then(|c| serde_json::from_str(&c).ok()).unwrap_or_default();
    let mut facts: Vec<(&str, String)> = vec![("llvm_version", s.llvm_version.clone())];
    if let Some(object) = config.as_object() {
        for (key, value) in object {
            let text = match value {
                serde_json::Value::String(t) => t.clone(),
                serde_json::Value::Null => "—".to_string(),
                other => other.to_string(),
            };
            facts.push((key.as_str(), text));
        }
    }
    page.facts(&facts);
    Ok(())
}

/// The `sh` blocks of a bug folder's README that reproduce it: those of its reduced
/// reproducer when it has one, else all before its Localize section.
fn reproducer_commands(readme: &str) -> String {
    let mut commands = Vec::new();
    let mut inside = false;
    let (start, end) = match readme.find("## Reduced reproducer\n") {
        Some(at) => (at, "## Reproduce"),
        None => (0, "## Localize"),
    };
    for line in readme[start..].lines().take_while(|l| !l.starts_with(end)) {
        match line.trim() {
            "```sh" => inside = true,
            "```" => inside = false,
            _ if inside => commands.push(line),
            _ => {}
        }
    }
    commands.join("\n")
}

fn bugs(page: &mut Page, dir: &Path, out: &Path, bugs: &[BugReport]) {
    page.heading("Unique bugs");
    if bugs.is_empty() {
        page.paragraph("None yet.");
        return;
    }
    // Links work from wherever the page was written, and keep working if both move together.
    let here = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let link = |folder: &Path| {
        let (Ok(to), Ok(from)) = (std::fs::canonicalize(folder), std::fs::canonicalize(here)) else {
            return folder.display().to_string();
        };
        pathdiff::diff_paths(&to, &from).unwrap_or(to).display().to_string()
    };
    let rows: Vec<Vec<Cell>> = bugs
        .iter()
        .map(|b| {
            let folder = dir.join(&b.dir);
            let readme = crate::files::read_regular_text(&folder.join("README.md")).unwrap_or_default();
            let mut signature = escape(&b.signature);
            for v in &b.variants {
                signature.push_str(&format!(
                    "<br><span class=\"dim\">also: {} ({}/)</span>",
                    escape(&v.signature),
                    escape(&v.dir)
                ));
            }
            vec![
                Cell::Html(format!("<a href=\"{}/\">{}</a>", escape(&link(&folder)), escape(&b.dir))),
                Cell::Text(b.kind.clone()),
                Cell::Text(b.pass.clone()),
                Cell::Html(format!("<code>{}</code>", escape(&b.reduced))),
                Cell::Html(signature),
                Cell::Num(duration(b.first_seen)),
                Cell::Num(b.count.to_string()),
                Cell::Html(format!("<pre>{}</pre>", escape(&reproducer_commands(&readme)))),
                Cell::Html(format!("<code>{}</code>", escape(&b.localize))),
                Cell::Html(findings_cell(b, &folder, &link)),
            ]
        })
        .collect();
    let headers = [
        "folder",
        "kind",
        "pass",
        "reduced sequence",
        "signature",
        "first seen",
        "occurrences",
        "reproduce",
        "localize",
        "reduced IR, fires on, suspects",
    ];
    page.table("bugs", &headers, &rows);
}

/// A bug's findings one a line, with a link to its draft report when it has one.
fn findings_cell(bug: &BugReport, folder: &Path, link: &dyn Fn(&Path) -> String) -> String {
    let mut lines: Vec<String> = bug.findings.summary_lines().iter().map(|l| escape(l)).collect();
    if folder.join("ISSUE.md").is_file() {
        lines.push(format!("<a href=\"{}\">ISSUE.md</a>", escape(&link(&folder.join("ISSUE.md")))));
    }
    lines.join("<br>")
}

/// The time unit that keeps a span's numbers readable.
fn unit_for(span_seconds: f64) -> (&'static str, f64) {
    if span_seconds < 600.0 {
        ("seconds", 1.0)
    } else if span_seconds < 3.0 * 3600.0 {
        ("minutes", 60.0)
    } else {
        ("hours", 3600.0)
    }
}

/// Pairs per second between consecutive samples of each run, and bugs found over time.
fn progress(page: &mut Page, store: &Store, report: &CampaignReport) -> Result<()> {
    page.heading("Progress");
    let timeline = store.timeline()?;
    let created: f64 = store.get_meta("created")?.and_then(|c| c.parse().ok()).unwrap_or(0.0);
    // Bugs are timed from the campaign's creation; a store without it starts at its first sample.
    let start = if created > 0.0 { created } else { timeline.iter().map(|r| r.at).fold(f64::INFINITY, f64::min) };
    let end = timeline.iter().map(|r| r.at - start).fold(0.0, f64::max);
    let bug_times: Vec<f64> = report.bugs.iter().map(|b| b.first_seen as f64).collect();
    let span = bug_times.iter().copied().fold(end, f64::max);
    let (unit, per) = unit_for(span);
    let mut runs: BTreeMap<&str, Vec<&TimelineRow>> = BTreeMap::new();
    for row in &timeline {
        runs.entry(row.run.as_str()).or_default().push(row);
    }
    let mut runs_of_shard: BTreeMap<&str, usize> = BTreeMap::new();
    let mut rates: Vec<Series> = runs
        .iter()
        .map(|(run, rows)| {
            let points = rows
                .windows(2)
                .filter(|w| w[1].at > w[0].at)
                .map(|w| ((w[1].at - start) / per, (w[1].pairs - w[0].pairs) as f64 / (w[1].at - w[0].at)))
                .collect();
            // A merged campaign's runs are named "shard I/N, <start>".
            let shard = run.split_once(", ").map(|(shard, _)| shard);
            let k = runs_of_shard.entry(shard.unwrap_or("")).or_insert(0);
            *k += 1;
            let name = match shard {
                Some(shard) => format!("{shard}, run {k}"),
                None => format!("run {k}"),
            };
            Series { name, points }
        })
        .collect();
    // Planning, compiling and reduction come between bursts of testing: a single run also
    // gets its mean rate so far, which the bursts hide.
    if let [(_, rows)] = runs.iter().collect::<Vec<_>>().as_slice() {
        let first = rows[0];
        let points = rows
            .iter()
            .filter(|r| r.at > first.at)
            .map(|r| ((r.at - start) / per, (r.pairs - first.pairs) as f64 / (r.at - first.at)))
            .collect();
        rates.push(Series { name: "mean so far".into(), points });
    }
    let mut found = vec![(0.0, 0.0)];
    let mut times = bug_times.clone();
    times.sort_by(f64::total_cmp);
    for (i, t) in times.iter().enumerate() {
        found.push((t / per, i as f64));
        found.push((t / per, (i + 1) as f64));
    }
    found.push((span / per, times.len() as f64));
    let mut charts =
        vec![line_chart("Unique bugs found", unit, "bugs", &[Series { name: "bugs".into(), points: found }])?];
    if timeline.is_empty() {
        page.paragraph("This campaign kept no timeline (made by an older ctos): only the bugs' times are known.");
    } else {
        charts.insert(0, line_chart("Throughput", unit, "pairs per second", &rates)?);
    }
    page.charts(&charts);
    Ok(())
}

fn failures(page: &mut Page, store: &Store) -> Result<()> {
    page.heading("Failures by pass and by kind");
    let counts = merge::failure_counts(store)?;
    if counts.is_empty() {
        page.paragraph("No failures.");
        return Ok(());
    }
    let mut by_pass: BTreeMap<String, f64> = BTreeMap::new();
    let mut by_kind: BTreeMap<String, f64> = BTreeMap::new();
    for c in &counts {
        *by_pass.entry(c.pass.clone()).or_default() += c.count as f64;
        *by_kind.entry(c.kind.clone()).or_default() += c.count as f64;
    }
    let sorted = |m: BTreeMap<String, f64>| {
        let mut v: Vec<(String, f64)> = m.into_iter().collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    };
    page.paragraph("A failure counts under the culprit pass of the bug it was reduced to.");
    page.charts(&[
        bar_chart("Failures by culprit pass", "failures", &sorted(by_pass))?,
        bar_chart("Failures by kind", "failures", &sorted(by_kind))?,
    ]);
    let rows: Vec<Vec<Cell>> = counts
        .iter()
        .map(|c| vec![Cell::Text(c.kind.clone()), Cell::Text(c.pass.clone()), Cell::Num(c.count.to_string())])
        .collect();
    page.table("failures", &["kind", "pass", "failures"], &rows);
    Ok(())
}

fn selection(page: &mut Page, store: &Store) -> Result<()> {
    page.heading("Selection");
    let mut charts = Vec::new();
    let mut said = Vec::new();
    for (kind, plural) in [("sequence", "sequences"), ("program", "programs")] {
        let points: Vec<SelectionPoint> = store.latest_selection(kind)?;
        let Some(first) = points.first() else { continue };
        let xy: Vec<(f64, f64)> = points.iter().map(|p| (p.x, p.y)).collect();
        let marked: Vec<bool> = points.iter().map(|p| p.selected).collect();
        let chosen = marked.iter().filter(|m| **m).count();
        said.push(format!("{chosen} of {} {plural} (iteration {})", points.len(), first.iteration));
        charts.push(scatter(&format!("{plural}, iteration {}", first.iteration), &xy, &marked)?);
    }
    if charts.is_empty() {
        page.paragraph(
            "Nothing to show: this campaign embeds nothing (random selection, or fixed --programs/--sequences \
             with nothing generated), or it was made by an older ctos.",
        );
        return Ok(());
    }
    page.paragraph(&format!(
        "The newest iteration's pools in the first two principal components of their embeddings (doc2vec for \
         sequences, region graphs and call graph for programs); the selected ones are marked: {}.",
        said.join("; ")
    ));
    page.charts(&charts);
    Ok(())
}
