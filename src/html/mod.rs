//! Self-contained HTML pages (`ctos report --html`, `locseq isolate --html`): one file, no
//! network, no scripts, no fonts to fetch; plots are inline SVG drawn by `plotters`.
//!
//! The page is built as text: a template engine would add a dependency for a handful of
//! tables, and every value that reaches the page goes through [`escape`].

pub mod charts;

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context as _, Result};

/// Text made safe for HTML content and quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
body { font-family: sans-serif; margin: 2em auto; max-width: 1200px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
table.wide { width: 100%; }
td, th { border: 1px solid #ddd; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre { font-family: monospace; font-size: 0.9em; background: #f6f6f6; }
pre { padding: 0.5em; overflow-x: auto; white-space: pre-wrap; word-break: break-all; }
.bar { display: inline-block; height: 0.8em; background: #4a78b5; vertical-align: middle; }
.dim { color: #777; }
.nowrap { white-space: nowrap; }
.charts { display: flex; flex-wrap: wrap; gap: 1em; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }
dt { font-weight: bold; } dd { margin: 0; }
";

/// A page under construction: sections are appended in reading order.
pub struct Page {
    body: String,
}

/// A table cell: text (escaped), a number (right-aligned), or HTML built by the caller.
pub enum Cell {
    Text(String),
    Num(String),
    Html(String),
}

impl Page {
    pub fn new(title: &str) -> Page {
        Page { body: format!("<h1>{}</h1>\n", escape(title)) }
    }

    pub fn heading(&mut self, text: &str) {
        let _ = writeln!(self.body, "<h2>{}</h2>", escape(text));
    }

    pub fn paragraph(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p>{}</p>", escape(text));
    }

    /// HTML the caller built (from escaped parts).
    pub fn raw(&mut self, html: &str) {
        self.body.push_str(html);
        self.body.push('\n');
    }

    /// A list of (term, value) pairs.
    pub fn facts(&mut self, facts: &[(&str, String)]) {
        self.body.push_str("<dl>\n");
        for (term, value) in facts {
            let _ = writeln!(self.body, "<dt>{}</dt><dd>{}</dd>", escape(term), escape(value));
        }
        self.body.push_str("</dl>\n");
    }

    pub fn preformatted(&mut self, text: &str) {
        let _ = writeln!(self.body, "<pre>{}</pre>", escape(text));
    }

    /// `id` names the table for tests and scripts that read the page; a table of more
    /// than four columns takes the page's width.
    pub fn table(&mut self, id: &str, headers: &[&str], rows: &[Vec<Cell>]) {
        let class = if headers.len() > 4 { " class=\"wide\"" } else { "" };
        let _ = write!(self.body, "<table id=\"{}\"{class}>\n<tr>", escape(id));
        for h in headers {
            let _ = write!(self.body, "<th>{}</th>", escape(h));
        }
        self.body.push_str("</tr>\n");
        for row in rows {
            self.body.push_str("<tr>");
            for cell in row {
                let _ = match cell {
                    Cell::Text(t) => write!(self.body, "<td>{}</td>", escape(t)),
                    Cell::Num(n) => write!(self.body, "<td class=\"num\">{}</td>", escape(n)),
                    Cell::Html(h) => write!(self.body, "<td>{h}</td>"),
                };
            }
            self.body.push_str("</tr>\n");
        }
        self.body.push_str("</table>\n");
    }

    /// Charts side by side (each an SVG from [`charts`]).
    pub fn charts(&mut self, svgs: &[String]) {
        self.body.push_str("<div class=\"charts\">\n");
        for svg in svgs {
            self.body.push_str(svg);
            self.body.push('\n');
        }
        self.body.push_str("</div>\n");
    }

    pub fn render(&self, title: &str) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n\
             <style>{STYLE}</style>\n</head>\n<body>\n{}</body>\n</html>\n",
            escape(title),
            self.body
        )
    }

    /// Write the page through a temporary file and a rename: a reader (a browser that
    /// reloads) never sees half a page.
    pub fn write(&self, title: &str, path: &Path) -> Result<()> {
        let tmp = path.with_extension("html.tmp");
        std::fs::write(&tmp, self.render(title)).with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
    }
}

/// A horizontal bar `fraction` (0..1) of full width, for scores in a table.
pub fn bar(fraction: f64, width_px: u32) -> String {
    let w = (fraction.clamp(0.0, 1.0) * width_px as f64).round() as u32;
    format!("<span class=\"bar\" style=\"width:{w}px\"></span>")
}

/// `text` as code, cut to `max` characters; the whole text shows on hover.
pub fn code_abbreviated(text: &str, max: usize) -> String {
    format!("<code title=\"{}\">{}</code>", escape(text), escape(&crate::output::shorten(text, max)))
}

/// Whether an HTML output path can be written: its folder exists. Checked before any work.
pub fn check_output(path: &Path) -> Result<()> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !parent.is_dir() {
        anyhow::bail!("--html {}: the folder {} does not exist", path.display(), parent.display());
    }
    if path.is_dir() {
        anyhow::bail!("--html {}: is a folder; give a file name such as report.html", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_markup_and_quotes() {
        assert_eq!(escape("<a href=\"x\">&'</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
    }

    #[test]
    fn a_table_escapes_text_cells_and_keeps_html_cells() {
        let mut page = Page::new("t");
        page.table("bugs", &["kind"], &[vec![Cell::Text("<crash>".into())], vec![Cell::Html("<b>x</b>".into())]]);
        let html = page.render("t");
        assert!(html.contains("<td>&lt;crash&gt;</td>"), "{html}");
        assert!(html.contains("<td><b>x</b></td>"), "{html}");
        assert!(html.contains("<table id=\"bugs\">"), "{html}");
    }
}
