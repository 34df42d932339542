//! What of a seed's RUN line may run here. A folder of lit tests comes from anywhere, so its
//! RUN lines are input, not commands: an option whose value LLVM takes as free text may name
//! a file to write or read (`-cfg-dot-filename-prefix=/some/dir/cfg`, `-pass-remarks-output`)
//! or a program to start or load (`-exec-on-ir-change`, `-x86-lvi-load-opt-plugin`), and a
//! pass may write files or start a viewer (`passes/outside.tsv`). Such options and passes are
//! left out, each with its reason, and the rest runs as the test meant.

use std::collections::BTreeMap;

use crate::seq::{Adaptor, Catalog, Item, Sequence};

/// Options whose free-text value is no file or program: the target, the alias analyses,
/// the layout, and passes to print after (to stderr, which ctos keeps).
const TEXT_KEPT: &[&str] = &["mtriple", "mcpu", "mattr", "aa-pipeline", "data-layout", "print-after", "print-before"];

/// How `opt --help-hidden` writes a value that cannot name a file or a program: numbers,
/// one of a list of choices (`<value>`), regular expressions, and names of passes,
/// functions and formats.
const VALUE_KINDS_KEPT: &[&str] = &[
    "uint",
    "int",
    "number",
    "ulong",
    "long",
    "N",
    "x",
    "seed",
    "value",
    "pattern",
    "regex",
    "pass-name",
    "pass names",
    "function name",
    "function names",
    "format",
    "list",
    "identifier",
];

/// The value each option of an LLVM takes, as its `opt --help-hidden` writes it (`uint`,
/// `filename`, …); None for a flag.
#[derive(Debug, Default)]
pub struct OptionKinds {
    kinds: BTreeMap<String, Option<String>>,
}

impl OptionKinds {
    /// From `opt --help-hidden`'s text.
    pub fn from_help(help: &str) -> OptionKinds {
        let mut kinds = BTreeMap::new();
        for line in help.lines() {
            let Some(spec) = line.trim_start().strip_prefix('-').map(|s| s.trim_start_matches('-')) else { continue };
            let spec = spec.split("  ").next().unwrap_or("").trim_end();
            let (name, value) = match spec.find(['=', '[']) {
                Some(at) => {
                    let value = spec[at..].trim_start_matches(['[', '=']);
                    (&spec[..at], value.strip_prefix('<').and_then(|v| v.split('>').next()))
                }
                None => (spec, None),
            };
            if !name.is_empty() && !name.contains(' ') {
                kinds.entry(name.to_string()).or_insert(value.map(str::to_string));
            }
        }
        OptionKinds { kinds }
    }

    /// `-name=<kind>` when `option` (`-name=value`, `-name`) must not run: LLVM takes its
    /// value as free text, which may name a file or a program; None when it may run. An option this LLVM does not know runs (LLVM refuses
    /// it, and the seed is skipped for it).
    pub fn refusal(&self, option: &str) -> Option<String> {
        let name = option.trim_start_matches('-');
        let (name, value) = name.split_once('=').map_or((name, None), |(n, v)| (n, Some(v)));
        if TEXT_KEPT.contains(&name) {
            return None;
        }
        let kind = match self.kinds.get(name) {
            None => return None,
            Some(None) => return None,
            Some(Some(kind)) => kind.as_str(),
        };
        // A number or a boolean names nothing, whatever type holds it (LLVM 23 gives the
        // vectorizer's widths as <ElementCount>).
        let plain_value = value.is_some_and(|v| v.parse::<f64>().is_ok() || matches!(v, "true" | "false"));
        if VALUE_KINDS_KEPT.contains(&kind) || plain_value {
            return None;
        }
        Some(format!("-{name}=<{kind}>"))
    }
}

/// `seq` without the passes that reach outside the process (`passes/outside.tsv`), and the
/// reasons for those it left out; None when nothing of it would run.
pub fn without_outside_passes(seq: &Sequence, catalog: &Catalog) -> (Option<Sequence>, Vec<String>) {
    let mut reasons = Vec::new();
    let items = kept(&seq.items, catalog, &mut reasons);
    (Some(Sequence { items }).filter(|s| !s.passes().is_empty()), reasons)
}

fn kept(items: &[Item], catalog: &Catalog, reasons: &mut Vec<String>) -> Vec<Item> {
    let mut out = Vec::new();
    for item in items {
        match item {
            Item::Pass(p) => match catalog.reaches_outside(&p.name) {
                Some(what) => reasons.push(format!("{} ({what})", p.name)),
                None => out.push(item.clone()),
            },
            Item::Adaptor(a) => {
                let body = kept(&a.body, catalog, reasons);
                if !body.is_empty() {
                    out.push(Item::Adaptor(Adaptor { body, ..a.clone() }));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HELP: &str = "OVERVIEW: llvm .ll -> .bc modular optimizer and analysis printer\n\
        \x20 --cfg-dot-filename-prefix=<string>                       - The prefix used for the CFG dot file names.\n\
        \x20 --force-vector-width=<uint>                              - Sets the SIMD width.\n\
        \x20 --info-output-file=<filename>                            - File to append -stats and -timer output to\n\
        \x20 --prefer-predicate-over-epilogue=<value>                 - Tail-folding and predication preferences\n\
        \x20   =scalar-epilogue                                       -   Don't tail-predicate loops\n\
        \x20 --slp-threshold=<int>                                    - Only vectorize if you gain more than this\n\
        \x20 --enable-epilogue-vectorization                          - Enable vectorization of epilogue loops.\n\
        \x20 --mtriple=<string>                                       - Override target triple for module\n\
        \x20 --pass-remarks-output=<filename>                         - Output filename for pass remarks\n\
        \x20 --amdgpu-use-native[=<string>]                           - Comma separated list of functions\n\
        \x20 --dot-cfg-mssa=<file name for generated dot file>        - file name for generated dot file\n\
        \x20 --epilogue-vectorization-force-VF=<ElementCount>         - When epilogue vectorization is enabled\n";

    #[test]
    fn options_whose_value_may_name_a_file_are_refused_the_rest_run() {
        let kinds = OptionKinds::from_help(HELP);
        for kept in [
            "-force-vector-width=8",
            "-prefer-predicate-over-epilogue=scalar-epilogue",
            "-slp-threshold=-50",
            "-enable-epilogue-vectorization",
            "-enable-epilogue-vectorization=false",
            "-mtriple=x86_64--",
            "-not-an-llvm-option=/etc/passwd",
            "-epilogue-vectorization-force-VF=4",
        ] {
            assert_eq!(kinds.refusal(kept), None, "{kept}");
        }
        for (refused, kind) in [
            ("-cfg-dot-filename-prefix=/some/dir/cfg", "string"),
            ("-info-output-file=/tmp/x", "filename"),
            ("--pass-remarks-output=%t", "filename"),
            ("-amdgpu-use-native=all", "string"),
            ("-dot-cfg-mssa=m.dot", "file name for generated dot file"),
            ("-pass-remarks-output", "filename"),
            ("-epilogue-vectorization-force-VF=/tmp/w", "ElementCount"),
        ] {
            let why = kinds.refusal(refused).unwrap_or_else(|| panic!("{refused} runs"));
            assert!(why.ends_with(&format!("=<{kind}>")), "{why}");
        }
    }
}
