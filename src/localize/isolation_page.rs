//! `locseq isolate … --html OUT.html`: one localization on one page: the failure, the
//! ranking with score bars, the witnesses closest to the failing run, and how the search
//! got there.

use std::path::Path;

use anyhow::Result;

use super::functions::FunctionRule;
use super::isolate::Isolation;
use super::record::Witness;
use crate::html::charts::{line_chart, log_line_chart, Series};
use crate::html::{bar, code_abbreviated, escape, Cell, Page};

/// Witnesses shown, closest first.
const WITNESSES_SHOWN: usize = 15;
/// Functions shown per ranked file.
const FUNCTIONS_SHOWN: usize = 3;

/// `settings`: what the ranking depends on (strategy, formula …) and how to run it again.
pub fn write_isolation_page(i: &Isolation, settings: &[(&str, String)], top: usize, out: &Path) -> Result<()> {
    let title = format!("locseq isolate: {}", i.failure);
    let mut page = Page::new(&title);
    failure(&mut page, i, settings);
    search(&mut page, i)?;
    ranking(&mut page, i, top);
    functions(&mut page, i, top);
    witnesses(&mut page, i);
    page.write(&title, out)
}

fn failure(page: &mut Page, i: &Isolation, settings: &[(&str, String)]) {
    let mut facts: Vec<(&str, String)> = vec![
        ("failure", i.failure.to_string()),
        ("sequence", i.original.clone()),
        ("reduced", format!("{} ({} passes, {} test runs)", i.reduced, i.reduced_passes, i.reduction_tests)),
    ];
    if let Some(c) = &i.culprit {
        let file = i.culprit_file.as_deref().map(|f| format!(", in {f}")).unwrap_or_default();
        facts.push(("culprit", format!("{} (pass {} of {}){file}", c.pass, c.position, c.passes)));
    }
    if let Some(t) = &i.transformation {
        facts.push(("transformation", format!("{t}: opt {}", t.reproduce())));
    }
    facts.push((
        "coverage",
        format!("the failing run covers {} elements in {} files", i.failing_elements, i.failing_files),
    ));
    facts.push(("time", format!("{:.1} s ({:.1} s before the search)", i.seconds_total, i.seconds_before_search())));
    facts.extend(settings.iter().cloned());
    page.facts(&facts);
    for note in &i.notes {
        page.paragraph(&format!("Note: {note}"));
    }
    if let Some(why) = &i.unattributed {
        page.paragraph(&format!("Note: coverage without source files for {why}"));
    }
    if let Some(t) = i.transformation.as_ref().filter(|t| !t.change().is_empty()) {
        page.paragraph("What the step changed (value numbers may differ):");
        page.preformatted(&t.change().join("\n"));
    }
    if let Some(code) = i.transformation.as_ref().and_then(|t| t.code_line()) {
        page.paragraph(&format!("Code the step ran and the run one step short did not (elements): {code}"));
    }
}

fn search(page: &mut Page, i: &Isolation) -> Result<()> {
    page.heading("Search");
    let s = &i.stats;
    let rows: Vec<Vec<Cell>> = [
        ("evaluations", s.evaluations.to_string()),
        ("bug-free (witnesses)", s.passing.to_string()),
        ("failing the same way", s.failing_same.to_string()),
        ("other failures", s.other_failures.to_string()),
        ("seconds", format!("{:.1}", s.seconds)),
        ("best similarity", format!("{:.3}", s.best_similarity)),
    ]
    .into_iter()
    .map(|(k, v)| vec![Cell::Text(k.into()), Cell::Num(v)])
    .collect();
    page.table("search", &["", "value"], &rows);
    let h = &i.history;
    let counts = |name: &str, of: fn(&super::history::ProgressPoint) -> usize| Series {
        name: name.to_string(),
        points: h.progress.iter().map(|p| (p.seconds, of(p) as f64)).collect(),
    };
    let mut charts = vec![line_chart(
        "Search progress",
        "seconds",
        "runs",
        &[
            counts("evaluations", |p| p.evaluations),
            counts("bug-free", |p| p.passing),
            counts("failing alike", |p| p.failing_same),
        ],
    )?];
    let scores: Vec<Series> = h
        .files
        .iter()
        .enumerate()
        .map(|(k, file)| Series {
            name: file.rsplit('/').next().unwrap_or(file).to_string(),
            points: h.scores.iter().map(|p| (p.seconds, p.scores.get(k).copied().unwrap_or(0.0))).collect(),
        })
        .collect();
    if !scores.is_empty() {
        charts.push(log_line_chart("Scores of the final top files as evidence grew", "seconds", "score", &scores)?);
    }
    page.charts(&charts);
    let changes: Vec<String> = h
        .scores
        .windows(2)
        .filter(|w| w[0].leader != w[1].leader)
        .map(|w| format!("{:.1} s: {}", w[1].seconds, w[1].leader.as_deref().unwrap_or("none")))
        .collect();
    let first = h.scores.first().and_then(|p| p.leader.clone()).unwrap_or_else(|| "none".into());
    page.paragraph(&format!(
        "The top file was {first} on the failing run alone{}.",
        if changes.is_empty() { ", and stayed first".to_string() } else { format!("; then {}", changes.join("; ")) }
    ));
    Ok(())
}

fn ranking(page: &mut Page, i: &Isolation, top: usize) {
    page.heading("Ranked files");
    let best = i.ranking.iter().map(|f| f.score).fold(1e-12, f64::max);
    let rows: Vec<Vec<Cell>> = i
        .ranking
        .iter()
        .take(top)
        .map(|f| {
            let functions: Vec<String> =
                f.top_functions.iter().take(FUNCTIONS_SHOWN).map(|name| code_abbreviated(name, 90)).collect();
            vec![
                Cell::Num(f.rank.to_string()),
                Cell::Html(format!("<span class=\"nowrap\">{} {:.4}</span>", bar(f.score / best, 160), f.score)),
                Cell::Num(f.elements.to_string()),
                Cell::Html(
                    f.evidence
                        .parts()
                        .iter()
                        .map(|p| format!("<span class=\"nowrap\">{}</span>", escape(p)))
                        .chain(
                            f.evidence
                                .against_first
                                .iter()
                                .filter(|_| f.rank <= 3)
                                .map(|a| format!("behind the first: {}", escape(a))),
                        )
                        .collect::<Vec<_>>()
                        .join("<br>"),
                ),
                Cell::Text(f.path.clone()),
                Cell::Html(functions.join("<br>")),
            ]
        })
        .collect();
    page.table("ranking", &["rank", "score", "elements", "evidence", "file", "most suspicious functions"], &rows);
    if i.ranking.len() > top {
        page.paragraph(&format!("{} more files (--top N shows more).", i.ranking.len() - top));
    }
}

fn functions(page: &mut Page, i: &Isolation, top: usize) {
    page.heading("Ranked functions");
    let rows: Vec<Vec<Cell>> = i
        .functions
        .iter()
        .take(top)
        .map(|f| {
            let e = &f.evidence;
            vec![
                Cell::Num(f.rank.to_string()),
                Cell::Html(code_abbreviated(&e.name, 90)),
                Cell::Text(format!("{} (file rank {})", e.file, e.file_rank)),
                Cell::Text(e.describe()),
            ]
        })
        .collect();
    page.table("functions", &["rank", "function", "file", "evidence"], &rows);
    page.paragraph(&format!("One list across files: {}.", FunctionRule::DEFAULT.explain()));
}

fn witnesses(page: &mut Page, i: &Isolation) {
    page.heading("Witnesses closest to the failing run");
    if i.witnesses.is_empty() {
        page.paragraph("None: no bug-free run was found.");
        return;
    }
    // The closest of each kind (sequences, configurations, programs): configurations of the
    // failing sequence are often all closer than any other sequence, and say less alone.
    let kind = |w: &&Witness| (w.mutation.is_some(), w.configuration);
    let mut shown: Vec<&Witness> = Vec::new();
    for k in [(false, false), (false, true), (true, false)] {
        shown.extend(i.witnesses.iter().filter(|w| kind(w) == k).take(WITNESSES_SHOWN / 3));
    }
    shown.sort_by(|a, b| b.similarity.total_cmp(&a.similarity));
    let rows: Vec<Vec<Cell>> = shown
        .into_iter()
        .map(|w| {
            let what = match (&w.mutation, w.configuration) {
                (Some(m), _) => format!("program: {m}"),
                (None, true) => format!("configuration: {} {}", w.pipeline, w.llvm_args.join(" ")),
                (None, false) => format!("sequence: {}", w.pipeline),
            };
            vec![
                Cell::Html(format!("<span class=\"nowrap\">{} {:.3}</span>", bar(w.similarity, 100), w.similarity)),
                Cell::Num(format!("{:.3}", w.file_jaccard)),
                Cell::Html(code_abbreviated(&what, 160)),
            ]
        })
        .collect();
    page.table("witnesses", &["similarity", "file Jaccard", "witness"], &rows);
    page.paragraph(&format!(
        "The closest {} of each kind; {} witnesses in all (--json lists every one).",
        WITNESSES_SHOWN / 3,
        i.witnesses.len()
    ));
}
