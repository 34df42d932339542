//! Rendering a sequence as new-PM pipeline text that LLVM runs as intended.
//!
//! The pipeline parser infers nesting from the first name only, so every bare pass is
//! wrapped explicitly by its level: module passes at the top, CGSCC passes in `cgscc(…)`,
//! function passes in `function(…)`, loop passes in `function(loop(…))`, and only the
//! passes that need MemorySSA in `function(loop-mssa(…))`.

use serde::{Deserialize, Serialize};

use super::{Adaptor, Catalog, Item, Level, Pass, SeqError, Sequence};

/// How consecutive passes of one level share adaptors. The choice changes what LLVM does
/// (which function sees which pass when), so it is recorded with every result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Nesting {
    /// `function(sroa,loop-mssa(licm),gvn)`: runs of same-level passes share one adaptor,
    /// as the legacy pass manager batched them.
    #[default]
    Grouped,
    /// `function(sroa),function(loop-mssa(licm)),function(gvn)`: one adaptor per pass.
    PerPass,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RenderOptions {
    pub nesting: Nesting,
    /// Leave `instcombine`'s text default (abort when it misses a fixpoint). Off by default:
    /// random pipelines hit that abort in a few percent of runs and it is not a bug.
    pub verify_fixpoint: bool,
}

impl RenderOptions {
    /// These options with one adaptor per pass, so that top-level element i is pass i.
    pub fn per_pass(self) -> RenderOptions {
        RenderOptions { nesting: Nesting::PerPass, ..self }
    }

    /// Parameters a bare pass gets under these options.
    pub fn apply_defaults(&self, mut pass: Pass) -> Pass {
        if pass.name == "instcombine" && !self.verify_fixpoint {
            let mentions = pass.params.as_deref().is_some_and(|p| p.contains("verify-fixpoint"));
            if !mentions {
                pass.params = Some(match pass.params.take() {
                    Some(p) if !p.is_empty() => format!("{p};no-verify-fixpoint"),
                    _ => "no-verify-fixpoint".to_string(),
                });
            }
        }
        pass
    }
}

impl Sequence {
    /// The pipeline text, with default options.
    pub fn render(&self, catalog: &Catalog) -> Result<String, SeqError> {
        render_with(self, catalog, &RenderOptions::default())
    }
}

pub fn render_with(seq: &Sequence, catalog: &Catalog, opts: &RenderOptions) -> Result<String, SeqError> {
    if seq.items.is_empty() {
        return Err(SeqError::Empty);
    }
    Renderer { catalog, opts }.items(&seq.items, Level::Module)
}

/// Whether `item` can run inside a pipeline at `context`, bare or wrapped in adaptors.
pub(super) fn can_run_in(catalog: &Catalog, item: &Item, context: Level) -> bool {
    Renderer { catalog, opts: &RenderOptions::default() }.wrapper(item, context).is_ok()
}

/// The level an adaptor's body runs at, given the level it appears at.
pub(super) fn body_level(adaptor: &str, outer: Level) -> Level {
    match adaptor {
        "module" | "coro-cond" => Level::Module,
        "cgscc" | "devirt" => Level::Cgscc,
        "function" => Level::Function,
        "loop" => Level::Loop,
        "loop-mssa" => Level::LoopMssa,
        _ => outer, // repeat
    }
}

/// Where an adaptor itself may appear.
fn adaptor_levels(adaptor: &str) -> &'static [Level] {
    match adaptor {
        "module" | "cgscc" | "coro-cond" => &[Level::Module],
        "function" => &[Level::Module, Level::Cgscc],
        "loop" | "loop-mssa" => &[Level::Function],
        "devirt" => &[Level::Cgscc],
        _ => &[Level::Module, Level::Cgscc, Level::Function, Level::Loop, Level::LoopMssa],
    }
}

/// The adaptor needed to go from `context` one step towards `target`; `Ok(None)` when a
/// `target`-level item can appear in `context` bare.
fn step(context: Level, target: Level) -> Result<Option<&'static str>, ()> {
    use Level::*;
    match (context, target) {
        (c, t) if c == t => Ok(None),
        // The user chose the loop adaptor explicitly; respect it either way.
        (Loop, LoopMssa) | (LoopMssa, Loop) => Ok(None),
        (Module, Cgscc) => Ok(Some("cgscc")),
        (Module | Cgscc, Function | Loop | LoopMssa) => Ok(Some("function")),
        (Function, Loop) => Ok(Some("loop")),
        (Function, LoopMssa) => Ok(Some("loop-mssa")),
        _ => Err(()),
    }
}

struct Renderer<'a> {
    catalog: &'a Catalog,
    opts: &'a RenderOptions,
}

impl Renderer<'_> {
    fn levels_of(&self, item: &Item) -> Vec<Level> {
        match item {
            Item::Adaptor(a) => adaptor_levels(&a.name).to_vec(),
            Item::Pass(p) => {
                let entry = match (p.name.as_str(), p.params.as_deref()) {
                    ("require" | "invalidate", Some(analysis)) => self.catalog.analysis(analysis),
                    (name, _) => self.catalog.get(name),
                };
                entry.map(|e| e.levels.clone()).unwrap_or_default()
            }
        }
    }

    /// The adaptor `item` needs in `context`: its first level reachable bare wins,
    /// else the first reachable by wrapping (levels are listed outermost first).
    fn wrapper(&self, item: &Item, context: Level) -> Result<Option<&'static str>, SeqError> {
        let levels = self.levels_of(item);
        let steps: Vec<_> = levels.iter().filter_map(|&l| step(context, l).ok()).collect();
        if steps.contains(&None) {
            return Ok(None);
        }
        steps.into_iter().next().ok_or_else(|| SeqError::Misplaced {
            what: match item {
                Item::Pass(p) => p.to_string(),
                Item::Adaptor(a) => format!("{}(...)", a.name),
            },
            level: levels.first().copied().unwrap_or(Level::Module),
            context,
        })
    }

    fn items(&self, items: &[Item], context: Level) -> Result<String, SeqError> {
        let mut parts = Vec::new();
        let mut i = 0;
        while i < items.len() {
            match self.wrapper(&items[i], context)? {
                None => {
                    parts.push(self.bare(&items[i], context)?);
                    i += 1;
                }
                Some(adaptor) => {
                    let mut end = i + 1;
                    if self.opts.nesting == Nesting::Grouped {
                        while end < items.len() && self.wrapper(&items[end], context)? == Some(adaptor) {
                            end += 1;
                        }
                    }
                    let inner = self.items(&items[i..end], body_level(adaptor, context))?;
                    parts.push(format!("{adaptor}({inner})"));
                    i = end;
                }
            }
        }
        Ok(parts.join(","))
    }

    fn bare(&self, item: &Item, context: Level) -> Result<String, SeqError> {
        match item {
            // Parsing applied the defaults already; sequences built in code may lack them.
            Item::Pass(p) => Ok(self.opts.apply_defaults(p.clone()).to_string()),
            Item::Adaptor(Adaptor { name, params, body }) => {
                let inner = self.items(body, body_level(name, context))?;
                Ok(match params {
                    Some(p) => format!("{name}<{p}>({inner})"),
                    None => format!("{name}({inner})"),
                })
            }
        }
    }
}
