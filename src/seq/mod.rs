//! Pass sequences: the catalog, parsing (legacy flags and new-PM text), rendering into a
//! valid nested pipeline, random generation and reduction.
//!
//! A [`Sequence`] is a list of [`Item`]s: bare passes, and adaptors (`function<eager-inv>(…)`,
//! `cgscc(devirt<4>(…))`, `repeat<2>(…)`) kept exactly where a user or `default<O3>`'s
//! expansion wrote them. Bare passes get the adaptors their level needs when rendered, so a
//! flat list like `-loop-unswitch -licm -gvn` becomes a pipeline LLVM runs as intended.

mod catalog;
pub mod parse;
mod print_passes;
pub mod random;
pub mod reduce;
mod render;
pub use parse::{names_pass, pipeline_lines, through_element, top_level_elements};
pub use render::render_with;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use catalog::{precondition_broken, Catalog, Entry, Kind, Legacy, SET_NAMES};
pub use print_passes::{catalog_tables, CatalogTables};
pub use render::{Nesting, RenderOptions};

/// Where a pass runs. Loop passes that need MemorySSA (`licm`, `lnicm`) are their own level
/// because they must sit in `loop-mssa(…)` and every other loop pass must not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    Module,
    Cgscc,
    Function,
    Loop,
    LoopMssa,
}

impl FromStr for Level {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "module" => Level::Module,
            "cgscc" => Level::Cgscc,
            "function" => Level::Function,
            "loop" => Level::Loop,
            "loop-mssa" => Level::LoopMssa,
            other => return Err(format!("unknown level {other:?}")),
        })
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Module => "module",
            Level::Cgscc => "cgscc",
            Level::Function => "function",
            Level::Loop => "loop",
            Level::LoopMssa => "loop-mssa",
        })
    }
}

/// One pass as written in a pipeline: `loop-unroll<O3>` is name `loop-unroll`, params `O3`.
/// Names may themselves contain `<…>` when LLVM registers them so (`print<domtree>`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Pass {
    pub name: String,
    pub params: Option<String>,
}

impl Pass {
    pub fn new(name: &str) -> Pass {
        Pass { name: name.to_string(), params: None }
    }

    pub fn with_params(name: &str, params: Option<String>) -> Pass {
        Pass { name: name.to_string(), params }
    }

    /// Whether running the pass can change the IR: verifiers, printers, `no-op-…` passes
    /// and analyses run for their results (`require<…>`, `invalidate<…>`) cannot.
    pub fn may_change_ir(&self) -> bool {
        let name = self.name.as_str();
        !(matches!(name, "verify" | "require" | "invalidate")
            || name.starts_with("print")
            || name.starts_with("no-op-"))
    }
}

impl fmt::Display for Pass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.params {
            Some(p) => write!(f, "{}<{}>", self.name, p),
            None => f.write_str(&self.name),
        }
    }
}

/// A pass-manager adaptor with its body: `function<eager-inv>(…)`, `loop-mssa(…)`,
/// `devirt<4>(…)`, `repeat<2>(…)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Adaptor {
    pub name: String,
    pub params: Option<String>,
    pub body: Vec<Item>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Item {
    Pass(Pass),
    Adaptor(Adaptor),
}

/// An ordered pass sequence; see the module docs for how it relates to pipeline text.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Sequence {
    pub items: Vec<Item>,
}

impl Sequence {
    pub fn flat(passes: impl IntoIterator<Item = Pass>) -> Sequence {
        Sequence { items: passes.into_iter().map(Item::Pass).collect() }
    }

    /// True when every item is a bare pass (no adaptor kept from the input).
    pub fn is_flat(&self) -> bool {
        self.items.iter().all(|i| matches!(i, Item::Pass(_)))
    }

    /// The passes in execution order, wherever they are nested.
    pub fn passes(&self) -> Vec<&Pass> {
        fn walk<'a>(items: &'a [Item], out: &mut Vec<&'a Pass>) {
            for item in items {
                match item {
                    Item::Pass(p) => out.push(p),
                    Item::Adaptor(a) => walk(&a.body, out),
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.items, &mut out);
        out
    }

    pub fn len(&self) -> usize {
        self.passes().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whole pipelines (`default<O3>`, `lto<O2>` …) replaced by the explicit text
    /// `expand` returns for them (`opt -print-pipeline-passes`), parsed in place.
    pub fn expand_pipelines(
        &self,
        catalog: &Catalog,
        expand: &mut dyn FnMut(&str) -> Result<String, String>,
    ) -> Result<Sequence, String> {
        const PIPELINES: &[&str] =
            &["default", "thinlto-pre-link", "thinlto", "lto-pre-link", "lto", "fatlto-pre-link"];
        fn walk(
            items: &[Item],
            catalog: &Catalog,
            expand: &mut dyn FnMut(&str) -> Result<String, String>,
        ) -> Result<Vec<Item>, String> {
            let mut out = Vec::new();
            for item in items {
                match item {
                    Item::Pass(p) if PIPELINES.contains(&p.name.as_str()) => {
                        let text = expand(&p.to_string())?;
                        out.extend(Sequence::parse(&text, catalog).map_err(|e| e.to_string())?.items);
                    }
                    Item::Pass(p) => out.push(Item::Pass(p.clone())),
                    Item::Adaptor(a) => {
                        out.push(Item::Adaptor(Adaptor { body: walk(&a.body, catalog, expand)?, ..a.clone() }))
                    }
                }
            }
            Ok(out)
        }
        Ok(Sequence { items: walk(&self.items, catalog, expand)? })
    }

    /// The same passes without adaptors: what rendering would nest again by level.
    pub fn flattened(&self) -> Sequence {
        Sequence::flat(self.passes().into_iter().cloned())
    }

    /// The sequence without the passes at its end that cannot change the IR (all of it
    /// when no pass can): what the optimized module is, and so what it prints, does not
    /// depend on them.
    pub fn without_inert_tail(&self) -> Sequence {
        let passes = self.passes();
        let end = passes.iter().rposition(|p| p.may_change_ir()).map_or(passes.len(), |i| i + 1);
        self.retain_passes(|i| i < end)
    }

    /// This sequence without the passes whose execution-order index `keep` rejects;
    /// adaptors left empty disappear.
    pub fn retain_passes(&self, mut keep: impl FnMut(usize) -> bool) -> Sequence {
        fn walk(items: &[Item], next: &mut usize, keep: &mut dyn FnMut(usize) -> bool) -> Vec<Item> {
            let mut out = Vec::new();
            for item in items {
                match item {
                    Item::Pass(p) => {
                        let i = *next;
                        *next += 1;
                        if keep(i) {
                            out.push(Item::Pass(p.clone()));
                        }
                    }
                    Item::Adaptor(a) => {
                        let body = walk(&a.body, next, keep);
                        if !body.is_empty() {
                            out.push(Item::Adaptor(Adaptor { body, ..a.clone() }));
                        }
                    }
                }
            }
            out
        }
        let mut next = 0;
        Sequence { items: walk(&self.items, &mut next, &mut keep) }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SeqError {
    #[error("unknown pass '{name}'{}", suggestion(.suggestions))]
    UnknownPass { name: String, suggestions: Vec<String> },
    #[error("unknown analysis '{name}' in '{text}'{}", suggestion(.suggestions))]
    UnknownAnalysis { name: String, text: String, suggestions: Vec<String> },
    #[error("pass '{name}' no longer exists in LLVM: {reason}")]
    Removed { name: String, reason: String },
    #[error("'{token}' is not a pass{hint}")]
    NotAPass { token: String, hint: String },
    #[error("invalid pipeline text at column {column}: {message} (in '{text}')")]
    Syntax { text: String, column: usize, message: String },
    #[error("'{what}' is a {level}-level pass and cannot run inside {context}(...)")]
    Misplaced { what: String, level: Level, context: Level },
    #[error("unknown pass set '{name}' (known: {known})")]
    UnknownSet { name: String, known: String },
    #[error("no pass catalog for LLVM {0}; this build knows LLVM 19 and 22")]
    NoCatalog(u32),
    /// Reading the catalog of an external `opt` failed.
    #[error("{0}")]
    Opt(String),
    #[error("empty pass sequence")]
    Empty,
}

fn suggestion(names: &[String]) -> String {
    if names.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", "))
    }
}

#[cfg(test)]
mod tests;
