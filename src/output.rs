//! What commands print. The `--json` convention of every command: JSON Lines on standard output, one object per
//! line, each with `"type"` as its first key. The first line is `begin` (tool, format
//! version, LLVM version, seed, command line), the last is `summary`; between them come
//! the command's records (`run`, `pass`, `bug`, `file` …). Every key of a record type is
//! always written, `null` when it has no value, so scripts never test for presence.

use anyhow::Result;
use serde::Serialize;

use crate::sandbox::Llvm;

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

/// `text` as one word for `sh`, for the commands reports print.
pub fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '=' | ':' | ','));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// This process's command line, each word as `sh` takes it back: what reports and
/// `begin` records say was run. Lossy: an argument that is not UTF-8 (a file name) must
/// not panic here, of all places in the panic hook.
pub fn command_line() -> Vec<String> {
    arguments().iter().map(|a| shell_quote(a)).collect()
}

fn arguments() -> Vec<String> {
    std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect()
}

/// A progress bar on standard error drawn as indicatif's `template`, of `len` steps (None:
/// a spinner); hidden when `quiet` (`--json`, a single step) or standard error is no
/// terminal, so that scripts and logs get none.
pub fn progress_bar(len: Option<u64>, template: &str, quiet: bool) -> indicatif::ProgressBar {
    use std::io::IsTerminal as _;
    if quiet || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = len.map_or_else(indicatif::ProgressBar::new_spinner, indicatif::ProgressBar::new);
    bar.set_style(indicatif::ProgressStyle::with_template(template).expect("a valid progress template"));
    bar
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
pub fn begin(tool: &str, seed: Option<u64>, llvm: &Llvm) -> Result<()> {
    begin_on(tool, seed, &llvm.version(), llvm.external().map(|o| o.opt.as_path()))
}

/// [`begin`] for commands that know which LLVM without starting it: a campaign's record of
/// it, or an `opt` asked only for its passes.
pub fn begin_on(tool: &str, seed: Option<u64>, llvm_version: &str, opt: Option<&std::path::Path>) -> Result<()> {
    let begin = Begin {
        tool,
        format: FORMAT,
        llvm_version: llvm_version.to_string(),
        opt: opt.map(|o| o.display().to_string()),
        seed,
        command: arguments(),
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

    #[test]
    fn shell_quote_leaves_plain_words_and_quotes_the_rest_so_sh_reads_them_back() {
        use super::shell_quote;
        assert_eq!(shell_quote("-passes=function(gvn)"), "'-passes=function(gvn)'");
        assert_eq!(shell_quote("bugs/0001/reduced.ll"), "bugs/0001/reduced.ll");
        assert_eq!(shell_quote(""), "''");
        let tricky = "it's a $HOME `x`";
        let echoed =
            std::process::Command::new("sh").arg("-c").arg(format!("printf %s {}", shell_quote(tricky))).output();
        assert_eq!(String::from_utf8_lossy(&echoed.unwrap().stdout), tricky);
    }

    #[test]
    fn a_quiet_progress_bar_is_hidden() {
        assert!(super::progress_bar(Some(10), "{bar} {pos}/{len}", true).is_hidden());
        assert!(super::progress_bar(None, "{spinner} {msg}", true).is_hidden());
    }
}
