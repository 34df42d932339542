//! C source mutation: a parsed snapshot of a C file ([`Tu`], through libclang in `clang.rs`
//! only), the statements and program points of its functions with the variables in scope at
//! each ([`scope`]), and byte-range edits applied back to front ([`apply`]). Live-code
//! mutation ([`hermes`]) and the witness mutators of DiWi and RecBi ([`witness`]) are edits at
//! sites found here; the witness mutator of LLVM IR (`witness::ir`) shares their rule table.

pub mod ast;
pub mod cint;
#[cfg(test)]
mod cint_clang_tests;
mod clang;
pub mod hermes;
pub mod scope;
#[cfg(test)]
mod tests;
pub mod witness;

use std::path::Path;

pub use ast::Tu;
pub use clang::ParseError;

/// Replace `start..end` of the source with `text` (an insertion when `start == end`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

impl Edit {
    pub fn insert(at: usize, text: impl Into<String>) -> Edit {
        Edit { start: at, end: at, text: text.into() }
    }

    pub fn replace(start: usize, end: usize, text: impl Into<String>) -> Edit {
        Edit { start, end, text: text.into() }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EditError {
    #[error("edit {0}..{1} is outside the {2}-byte source or not on a character boundary")]
    OutOfRange(usize, usize, usize),
    #[error("edits {0}..{1} and {2}..{3} overlap")]
    Overlap(usize, usize, usize, usize),
}

/// `source` with every edit applied; all offsets refer to `source` as given. Insertions at
/// one offset keep their order; an insertion at the start of a replaced range goes before it.
pub fn apply(source: &str, edits: &[Edit]) -> Result<String, EditError> {
    let mut order: Vec<usize> = (0..edits.len()).collect();
    order.sort_by_key(|&i| (edits[i].start, edits[i].end > edits[i].start, i));
    for &i in &order {
        let e = &edits[i];
        if e.start > e.end
            || e.end > source.len()
            || !source.is_char_boundary(e.start)
            || !source.is_char_boundary(e.end)
        {
            return Err(EditError::OutOfRange(e.start, e.end, source.len()));
        }
    }
    for pair in order.windows(2) {
        let (a, b) = (&edits[pair[0]], &edits[pair[1]]);
        if b.start < a.end {
            return Err(EditError::Overlap(a.start, a.end, b.start, b.end));
        }
    }
    let mut out = String::with_capacity(source.len() + edits.iter().map(|e| e.text.len()).sum::<usize>());
    let mut at = 0;
    for &i in &order {
        let e = &edits[i];
        out.push_str(&source[at..e.start]);
        out.push_str(&e.text);
        at = e.end;
    }
    out.push_str(&source[at..]);
    Ok(out)
}

/// Where each edit's text starts in the result of [`apply`]ing `edits` (same order rules).
pub fn placed(edits: &[Edit]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..edits.len()).collect();
    order.sort_by_key(|&i| (edits[i].start, edits[i].end > edits[i].start, i));
    let mut out = vec![0; edits.len()];
    let mut shift: isize = 0;
    for i in order {
        out[i] = (edits[i].start as isize + shift) as usize;
        shift += edits[i].text.len() as isize - (edits[i].end - edits[i].start) as isize;
    }
    out
}

/// The clang arguments C programs are parsed and compiled with here: csmith's header
/// folder when it is installed, no warnings.
pub fn c_args() -> Vec<String> {
    let mut args = vec!["-w".to_string()];
    if Path::new("/usr/include/csmith").is_dir() {
        args.push("-I/usr/include/csmith".into());
    }
    args
}

/// clang's time on one (possibly instrumented, large) program.
const COMPILE_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Compile C `source` at -O0 into `binary` with `clang` and `args`; clang's first error
/// line when it fails.
pub fn compile_o0(clang: &Path, args: &[String], source: &Path, binary: &Path) -> Result<(), String> {
    let built = std::process::Command::new("timeout")
        .arg(COMPILE_LIMIT.as_secs().to_string())
        .arg(clang)
        .arg("-O0")
        .args(args)
        .arg(source)
        .arg("-o")
        .arg(binary)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", clang.display()))?;
    if built.status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&built.stderr);
    Err(text.lines().find(|l| l.contains("error")).unwrap_or("clang failed or ran out of time").to_string())
}

/// Parse a C file; a file with any compile error is refused with clang's first error.
pub fn parse(path: &Path, args: &[String]) -> Result<Tu, ParseError> {
    clang::parse(path, args)
}

/// Parse C source text (written to a temporary file: libclang reads files).
pub fn parse_source(source: &str, args: &[String]) -> Result<Tu, ParseError> {
    let dir = tempfile::tempdir().map_err(|e| ParseError::Read("a temporary folder".into(), e))?;
    let path = dir.path().join("input.c");
    std::fs::write(&path, source).map_err(|e| ParseError::Read(path.display().to_string(), e))?;
    clang::parse(&path, args).map_err(|e| match e {
        // The temporary file's name means nothing to the reader.
        ParseError::Invalid(text) => ParseError::Invalid(text.replace(&format!("{}:", path.display()), "line ")),
        other => other,
    })
}

/// Apply `edits` to `tu`'s source and parse the result; a result that does not compile
/// cleanly is refused.
pub fn rewrite(tu: &Tu, edits: &[Edit], args: &[String]) -> Result<Tu, RewriteError> {
    let source = apply(&tu.source, edits)?;
    Ok(parse_source(&source, args)?)
}

#[derive(Debug, thiserror::Error)]
pub enum RewriteError {
    #[error(transparent)]
    Edit(#[from] EditError),
    #[error("the edited program does not compile: {0}")]
    Parse(#[from] ParseError),
}
