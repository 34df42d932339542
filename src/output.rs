//! What commands print. The `--json` convention of every command: JSON Lines on standard output, one object per
//! line, each with `"type"` as its first key. The first line is `begin` (tool, format
//! version, LLVM version, seed, command line), the last is `summary`; between them come
//! the command's records (`run`, `pass`, `bug`, `file` …). Every key of a record type is
//! always written, `null` when it has no value, so scripts never test for presence.

use anyhow::Result;
use serde::Serialize;

use crate::sandbox::agent::ExternalOpt;

/// `println!` that hands back the write error instead of panicking, so that a reader who
/// closes the pipe (`ctos passes | head`) ends the program quietly through `?`.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// `print!` with the same contract as [`outln!`].
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// `text` cut to at most `max` characters, the cut marked with `…`: template arguments
/// and long messages make tables unreadable (`--json` keeps them whole).
pub fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max.saturating_sub(1)) {
        Some((at, _)) if text.chars().count() > max => format!("{}…", &text[..at]),
        _ => text.to_string(),
    }
}

/// How the command line spells an option's value (`ctos`, `cga-wc`).
pub fn value_name<T: clap::ValueEnum>(value: &T) -> String {
    value.to_possible_value().map_or_else(String::new, |v| v.get_name().to_string())
}

/// Bumped when a record type loses or renames a key.
pub const FORMAT: u32 = 1;

#[derive(Serialize)]
struct Begin<'a> {
    tool: &'a str,
    format: u32,
    llvm_version: String,
    /// The external `opt` that ran the pipelines (`--opt`), or null: the linked LLVM.
    opt: Option<String>,
    seed: Option<u64>,
    command: Vec<String>,
}

/// One line `{"type": kind, …fields of value}`.
pub fn emit<T: Serialize>(kind: &str, value: &T) -> Result<()> {
    let mut object = serde_json::Map::new();
    object.insert("type".into(), kind.into());
    match serde_json::to_value(value)? {
        serde_json::Value::Object(fields) => object.extend(fields),
        other => {
            object.insert("value".into(), other);
        }
    }
    crate::outln!("{}", serde_json::Value::Object(object))?;
    Ok(())
}

/// The `begin` line: which tool, which LLVM (the linked one, or the `opt` given), which
/// seed (`None` for commands that draw nothing at random), and the exact command line
/// that reproduces the output.
pub fn begin(tool: &str, seed: Option<u64>, opt: Option<&ExternalOpt>) -> Result<()> {
    let begin = Begin {
        tool,
        format: FORMAT,
        llvm_version: ExternalOpt::version_or_linked(opt),
        opt: opt.map(|o| o.opt.display().to_string()),
        seed,
        command: std::env::args().collect(),
    };
    emit("begin", &begin)
}

#[cfg(test)]
mod tests {
    #[test]
    fn shorten_cuts_long_text_to_its_limit_with_a_mark_and_leaves_short_text_alone() {
        assert_eq!(super::shorten("llvm::Foo<int>::bar", 10), "llvm::Foo…");
        assert_eq!(super::shorten("llvm::Foo<int>::bar", 10).chars().count(), 10);
        assert_eq!(super::shorten("short", 10), "short");
        assert_eq!(super::shorten("exactly10!", 10), "exactly10!");
        assert_eq!(super::shorten("ümläüte ünd mehr", 5), "ümlä…");
    }
}
