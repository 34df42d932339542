//! Parsing pass sequences: legacy flag lists (`-loop-unswitch -licm -gvn`, as in papers and
//! old bug reports) and new-PM pipeline text (`function(loop-mssa(licm)),default<O2>`).

use super::render::{render_with, RenderOptions};
use super::{Adaptor, Catalog, Item, Legacy, Pass, SeqError, Sequence};

/// Adaptor names the pass builder accepts with a parenthesised body.
pub(super) const ADAPTORS: &[&str] =
    &["module", "cgscc", "function", "loop", "loop-mssa", "devirt", "repeat", "coro-cond"];

/// `loop-unroll<O3>` -> ("loop-unroll", Some("O3")); `print<structural-hash><detailed>` ->
/// ("print<structural-hash>", Some("detailed")). Only the last `<…>` group is split off.
pub fn split_last_params(text: &str) -> (&str, Option<&str>) {
    if !text.ends_with('>') {
        return (text, None);
    }
    let mut depth = 0;
    for (i, c) in text.char_indices().rev() {
        match c {
            '>' => depth += 1,
            '<' => {
                depth -= 1;
                if depth == 0 {
                    return (&text[..i], Some(&text[i + 1..text.len() - 1]));
                }
            }
            _ => {}
        }
    }
    (text, None)
}

impl Sequence {
    /// Parse a sequence in either syntax (see the module docs), with default rendering
    /// options. Comments (`# …`) and line breaks are allowed, as in a `seq.txt` file.
    pub fn parse(text: &str, catalog: &Catalog) -> Result<Sequence, SeqError> {
        Sequence::parse_with(text, catalog, &RenderOptions::default())
    }

    pub fn parse_with(text: &str, catalog: &Catalog, opts: &RenderOptions) -> Result<Sequence, SeqError> {
        let cleaned = strip_comments(text);
        let mut body = cleaned.trim();
        for prefix in ["--passes=", "-passes=", "-p="] {
            if let Some(rest) = body.strip_prefix(prefix) {
                body = rest.trim_matches(|c| c == '\'' || c == '"');
            }
        }
        if body.is_empty() {
            return Err(SeqError::Empty);
        }
        let raw = if body.starts_with('-') {
            parse_legacy(body, catalog, opts)?
        } else {
            let joined = body.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(",");
            Parser { text: &joined, pos: 0, catalog, opts }.parse_all()?
        };
        if raw.is_empty() {
            return Err(SeqError::Empty);
        }
        normalize(raw, catalog, opts)
    }
}

/// Keep the flat form when it renders to the same pipeline as what was written: then the
/// adaptors carried nothing rendering does not recreate. Otherwise keep the tree, with the
/// adaptors rendering added made explicit, so that parse(render(s)) == s either way.
fn normalize(raw: Sequence, catalog: &Catalog, opts: &RenderOptions) -> Result<Sequence, SeqError> {
    let text = render_with(&raw, catalog, opts)?;
    let flat = Sequence::flat(raw.passes().into_iter().cloned());
    if flat == raw || render_with(&flat, catalog, opts)? == text {
        return Ok(flat);
    }
    // Re-reading the rendered text gives the tree with every adaptor explicit, which
    // renders to itself.
    Parser { text: &text, pos: 0, catalog, opts }.parse_all()
}

/// The pipelines of a file that holds one per line: (line number from 1, text), with `#`
/// comments and blank lines left out.
pub fn pipeline_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.split('#').next().unwrap_or("").trim()))
        .filter(|(_, l)| !l.is_empty())
}

/// The part of `seq` that ran when the optimizer stopped in top-level element `element`
/// of its rendering: the elements after it never started. None when nothing follows it
/// (or the text does not parse back).
pub fn through_element(seq: &Sequence, element: usize, catalog: &Catalog, opts: &RenderOptions) -> Option<Sequence> {
    let text = render_with(seq, catalog, opts).ok()?;
    let elements = top_level_elements(&text);
    if element + 1 >= elements.len() {
        return None;
    }
    Sequence::parse_with(&elements[..=element].join(","), catalog, opts).ok()
}

/// The top-level elements of new-PM pipeline text, as LLVM counts them (the sandbox's
/// `failed_in_element` indexes these).
pub fn top_level_elements(pipeline: &str) -> Vec<&str> {
    let mut elements = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, ch) in pipeline.char_indices() {
        match ch {
            '(' | '<' => depth += 1,
            ')' | '>' => depth -= 1,
            ',' if depth == 0 => {
                elements.push(&pipeline[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    elements.push(&pipeline[start..]);
    elements
}

/// Whether new-PM pipeline text names the pass `name` (adaptors and parameters aside, no
/// catalog needed): `function(loop(licm<allowspeculation>))` names `licm`.
pub fn names_pass(pipeline: &str, name: &str) -> bool {
    let mut params = 0i32;
    let mut word = String::new();
    for ch in pipeline.chars().chain(std::iter::once(',')) {
        if params > 0 {
            params += match ch {
                '<' => 1,
                '>' => -1,
                _ => 0,
            };
            continue;
        }
        match ch {
            '(' | ')' | ',' | '<' => {
                if word.trim() == name {
                    return true;
                }
                word.clear();
                params = i32::from(ch == '<');
            }
            _ => word.push(ch),
        }
    }
    false
}

fn strip_comments(text: &str) -> String {
    text.lines().map(|l| l.split('#').next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

fn parse_legacy(text: &str, catalog: &Catalog, opts: &RenderOptions) -> Result<Sequence, SeqError> {
    let mut items = Vec::new();
    for token in text.split_whitespace() {
        let name = token.trim_start_matches('-');
        if token == name {
            return Err(SeqError::NotAPass {
                token: token.to_string(),
                hint: " (legacy sequences are flags like -licm; do not mix in new-PM text)".into(),
            });
        }
        if let Some(level) = name.strip_prefix('O').filter(|l| matches!(*l, "0" | "1" | "2" | "3" | "s" | "z")) {
            items.push(Item::Pass(Pass::with_params("default", Some(format!("O{level}")))));
            continue;
        }
        if name.contains('=') || OPT_FLAGS.contains(&name) {
            return Err(SeqError::NotAPass {
                token: token.to_string(),
                hint: " (it is an opt option; give LLVM options with --llvm-arg)".into(),
            });
        }
        let text = match catalog.legacy(name) {
            Some(Legacy::Removed(reason)) => {
                return Err(SeqError::Removed { name: name.to_string(), reason: reason.clone() })
            }
            Some(Legacy::Renamed(new)) => new.clone(),
            None if catalog.get(name).is_some() => name.to_string(),
            None if catalog.analysis(name).is_some() => format!("require<{name}>"),
            None => return Err(SeqError::UnknownPass { name: token.to_string(), suggestions: catalog.suggest(name) }),
        };
        items.extend(Parser { text: &text, pos: 0, catalog, opts }.parse_all()?.items);
    }
    Ok(Sequence { items })
}

/// opt flags that show up in copied command lines but are not passes.
const OPT_FLAGS: &[&str] =
    &["S", "o", "disable-output", "verify-each", "print-after-all", "print-before-all", "debug-pass-manager"];

struct Parser<'a> {
    text: &'a str,
    pos: usize,
    catalog: &'a Catalog,
    opts: &'a RenderOptions,
}

impl Parser<'_> {
    fn parse_all(mut self) -> Result<Sequence, SeqError> {
        let items = self.list()?;
        self.skip_ws();
        if self.pos < self.text.len() {
            return Err(self.error("unexpected ')'"));
        }
        Ok(Sequence { items })
    }

    fn error(&self, message: &str) -> SeqError {
        let column = self.text[..self.pos].chars().count() + 1;
        SeqError::Syntax { text: self.text.to_string(), column, message: message.to_string() }
    }

    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    /// Step over the character at `pos`: positions are byte offsets, characters are not
    /// all one byte (a curly quote pasted from a web page is three).
    fn bump(&mut self) {
        self.pos += self.peek().map_or(0, char::len_utf8);
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.bump();
        }
    }

    /// Comma-separated elements up to `)` or the end. Empty elements are skipped, so that
    /// a file with one pass per line (joined with commas) parses.
    fn list(&mut self) -> Result<Vec<Item>, SeqError> {
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                None | Some(')') => return Ok(items),
                Some(',') => self.bump(),
                Some(_) => {
                    items.push(self.element()?);
                    self.skip_ws();
                    match self.peek() {
                        None | Some(')') | Some(',') => {}
                        Some(c) => return Err(self.error(&format!("expected ',' or ')', found '{c}'"))),
                    }
                }
            }
        }
    }

    fn element(&mut self) -> Result<Item, SeqError> {
        let start = self.pos;
        while self.peek().is_some_and(|c| !matches!(c, '<' | '(' | ',' | ')') && !c.is_whitespace()) {
            self.bump();
        }
        let name_end = self.pos;
        let mut groups = Vec::new();
        while self.peek() == Some('<') {
            let group_start = self.pos + 1;
            let mut depth = 0;
            loop {
                match self.peek() {
                    None => return Err(self.error("unclosed '<'")),
                    Some('<') => depth += 1,
                    Some('>') => depth -= 1,
                    _ => {}
                }
                self.bump();
                if depth == 0 {
                    break;
                }
            }
            groups.push(&self.text[group_start..self.pos - 1]);
        }
        let name = &self.text[start..name_end];
        if name.is_empty() {
            return Err(self.error("expected a pass name"));
        }
        if self.peek() == Some('(') {
            if !ADAPTORS.contains(&name) || groups.len() > 1 {
                self.pos = start;
                return Err(
                    self.error(&format!("'{name}' is not a pass-manager adaptor (those are: {})", ADAPTORS.join(", ")))
                );
            }
            self.bump();
            let body = self.list()?;
            if self.peek() != Some(')') {
                return Err(self.error("missing ')'"));
            }
            self.bump();
            let params = groups.first().map(|g| g.to_string());
            return Ok(Item::Adaptor(Adaptor { name: name.to_string(), params, body }));
        }
        let full = &self.text[start..self.pos];
        self.resolve_pass(name, full, &groups).map(Item::Pass)
    }

    fn resolve_pass(&self, name: &str, full: &str, groups: &[&str]) -> Result<Pass, SeqError> {
        let pass = if self.catalog.get(full).is_some() {
            Pass::new(full)
        } else if let Some((last, _)) = groups.split_last() {
            let base = &full[..full.len() - last.len() - 2];
            if matches!(base, "require" | "invalidate") {
                if self.catalog.analysis(last).is_none() {
                    let suggestions = suggest_analysis(self.catalog, last);
                    return Err(SeqError::UnknownAnalysis { name: last.to_string(), text: full.into(), suggestions });
                }
            } else if self.catalog.get(base).is_none() {
                return Err(SeqError::UnknownPass { name: name.to_string(), suggestions: self.catalog.suggest(name) });
            }
            Pass::with_params(base, Some(last.to_string()))
        } else {
            match self.catalog.legacy(name) {
                Some(Legacy::Removed(reason)) => {
                    return Err(SeqError::Removed { name: name.to_string(), reason: reason.clone() })
                }
                Some(Legacy::Renamed(new)) if new != name => {
                    let (n, p) = split_last_params(new);
                    Pass::with_params(n, p.map(str::to_string))
                }
                _ => {
                    return Err(SeqError::UnknownPass {
                        name: name.to_string(),
                        suggestions: self.catalog.suggest(name),
                    })
                }
            }
        };
        Ok(self.opts.apply_defaults(pass))
    }
}

fn suggest_analysis(catalog: &Catalog, name: &str) -> Vec<String> {
    let mut scored: Vec<(f64, String)> = catalog
        .entries()
        .iter()
        .filter(|e| e.kind == super::Kind::Analysis)
        .map(|e| (strsim::jaro_winkler(name, &e.name), e.name.clone()))
        .filter(|(s, _)| *s > 0.8)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().take(3).map(|(_, n)| n).collect()
}
