//! RecBi's ingredient pool (spec recbi.md §5.2 step 1): `if` conditions, loop conditions and
//! self-contained functions taken from real C code, each with its free variables marked so
//! the structural rules can rename them to a seed's variables.
//!
//! Two sources, both optional:
//! * csmith programs from fixed seeds (`csmith --seed 1..=40`): most loop conditions (its
//!   `for` bounds, `(g_42 <= 47)`), about two thirds of the branch conditions, and every
//!   function: its leaf functions with integer parameters, whose globals are integers
//!   (renamed to the seed's globals); a few call csmith's safe-math wrappers and so only go
//!   into csmith seeds;
//! * the C files installed Debian packages ship (examples under /usr/share/doc, …) that
//!   parse standalone (about 40 of the 109 on a typical machine; the rest miss headers):
//!   hand-written conditions (`num_entries`, `(c & 0x80) == 0`). Their functions take
//!   pointers or use macros, so none is kept.
//!
//! Building parses a bounded, sorted set of files in a couple of threads and takes tens of
//! seconds, so the result is cached as JSON under `$XDG_CACHE_HOME/ctos/`.

mod harvest;
#[cfg(test)]
pub(crate) mod tests;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::mutate::ast::{int_ty, Ty};
use crate::mutate::cint::{IntType, Rank};

pub use harvest::{is_helper, MAX_CONDITION, MAX_FUNCTION};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IngredientKind {
    /// The condition of an `if`.
    Branch,
    /// The condition of a `while`, `for` or `do`.
    Loop,
    Function,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKind {
    Csmith,
    Installed,
}

/// A variable an ingredient uses but does not declare.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FreeVar {
    pub name: String,
    /// Its integer type as C spells it (`unsigned char`).
    pub ty: String,
    /// Assigned, incremented or address-taken: it cannot become a `const` variable.
    pub written: bool,
    /// Address-taken: it can only become a variable of the very same type.
    #[serde(default)]
    pub addressed: bool,
    /// Byte offsets of its occurrences in the ingredient's text.
    pub uses: Vec<usize>,
}

impl FreeVar {
    pub fn int(&self) -> Option<IntType> {
        let ranks = [Rank::Bool, Rank::Char, Rank::Short, Rank::Int, Rank::Long, Rank::LongLong];
        ranks
            .into_iter()
            .flat_map(|r| [IntType::new(r, true), IntType::new(r, false)])
            .find(|t| t.spelling() == self.ty)
    }

    pub fn ty(&self) -> Option<Ty> {
        self.int().map(|t| int_ty(t.rank, t.signed))
    }
}

/// What a function ingredient's call needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionShape {
    /// Its name in its file, at `name_offset` of the text.
    pub name: String,
    pub name_offset: usize,
    /// Each parameter's integer type, as C spells it.
    pub params: Vec<String>,
    pub returns_void: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ingredient {
    pub kind: IngredientKind,
    pub source: SourceKind,
    /// `csmith --seed 7` or the file's path.
    pub origin: String,
    /// A condition without its parentheses, or a whole function definition; integer
    /// typedefs are spelled as builtin types.
    pub text: String,
    /// Free variables: of a condition, the variables it reads or writes; of a function,
    /// the integer globals it uses.
    pub vars: Vec<FreeVar>,
    pub function: Option<FunctionShape>,
    /// Calls csmith's safe-math wrappers: usable only in a program that includes csmith.h.
    pub helpers: bool,
}

impl Ingredient {
    /// The text with free variable `i` renamed to `names[i]`; `None` unless there is one
    /// name per free variable.
    pub fn instantiate(&self, names: &[&str]) -> Option<String> {
        self.substitute(names, None)
    }

    /// A function ingredient's definition named `name`, its free (global) variables
    /// renamed to `names`.
    pub fn renamed_function(&self, name: &str, names: &[&str]) -> Option<String> {
        let f = self.function.as_ref()?;
        self.substitute(names, Some((f.name_offset, f.name.len(), name)))
    }

    fn substitute(&self, names: &[&str], also: Option<(usize, usize, &str)>) -> Option<String> {
        if names.len() != self.vars.len() {
            return None;
        }
        let mut spots: Vec<(usize, usize, &str)> = self
            .vars
            .iter()
            .zip(names)
            .flat_map(|(v, n)| v.uses.iter().map(move |&u| (u, v.name.len(), *n)))
            .chain(also)
            .collect();
        spots.sort();
        let mut out = String::with_capacity(self.text.len());
        let mut at = 0;
        for (start, len, name) in spots {
            out.push_str(self.text.get(at..start)?);
            out.push_str(name);
            at = start + len;
        }
        out.push_str(self.text.get(at..)?);
        Some(out)
    }
}

/// Where a corpus comes from.
#[derive(Debug, Clone)]
pub struct Sources {
    pub csmith_seeds: Vec<u64>,
    /// C files, parsed with their own folder on the include path.
    pub files: Vec<PathBuf>,
    pub threads: usize,
}

/// csmith programs harvested by default.
const CSMITH_PROGRAMS: u64 = 40;
/// Installed files tried by default.
const INSTALLED_FILES: usize = 200;
/// Folders searched for installed C files.
const INSTALLED_ROOTS: &[&str] = &["/usr/share", "/usr/lib", "/usr/include", "/usr/src"];

impl Sources {
    /// csmith seeds 1..=40 and the first 200 installed `.c` files in path order.
    pub fn standard() -> Sources {
        let mut files = Vec::new();
        for root in INSTALLED_ROOTS {
            find_c_files(Path::new(root), 0, &mut files);
        }
        files.sort();
        files.dedup();
        files.truncate(INSTALLED_FILES);
        Sources { csmith_seeds: (1..=CSMITH_PROGRAMS).collect(), files, threads: 2 }
    }
}

fn find_c_files(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    // Deep trees are package internals (kernel headers, SDKs), not examples.
    if depth > 8 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else { continue };
        let path = entry.path();
        if kind.is_dir() {
            find_c_files(&path, depth + 1, out);
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "c") {
            out.push(path);
        }
    }
}

/// The ingredient pool.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Corpus {
    pub branches: Vec<Ingredient>,
    pub loops: Vec<Ingredient>,
    pub functions: Vec<Ingredient>,
}

/// Changes whenever what is harvested changes, so an old cache is not read.
const CACHE_NAME: &str = "recbi-ingredients-v1.json";

/// Per csmith run: some seeds make csmith slow.
const CSMITH_SECONDS: u32 = 20;

enum Job {
    Csmith(u64),
    File(PathBuf),
}

impl Corpus {
    pub fn of(&self, kind: IngredientKind) -> &[Ingredient] {
        match kind {
            IngredientKind::Branch => &self.branches,
            IngredientKind::Loop => &self.loops,
            IngredientKind::Function => &self.functions,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.branches.is_empty() && self.loops.is_empty() && self.functions.is_empty()
    }

    /// How many ingredients of each kind each source gave.
    pub fn counts(&self) -> BTreeMap<(IngredientKind, SourceKind), usize> {
        let mut out = BTreeMap::new();
        for i in self.branches.iter().chain(&self.loops).chain(&self.functions) {
            *out.entry((i.kind, i.source)).or_insert(0) += 1;
        }
        out
    }

    /// `branch 812 (csmith 790, installed 22); loop …`.
    pub fn summary(&self) -> String {
        let counts = self.counts();
        let get = |k, s| counts.get(&(k, s)).copied().unwrap_or(0);
        [IngredientKind::Branch, IngredientKind::Loop, IngredientKind::Function]
            .iter()
            .map(|&k| {
                let (c, i) = (get(k, SourceKind::Csmith), get(k, SourceKind::Installed));
                format!("{k:?} {} (csmith {c}, installed {i})", c + i).to_lowercase()
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The standard corpus, from the cache when there is one; built and cached otherwise.
    pub fn load_or_build() -> anyhow::Result<Corpus> {
        Corpus::load_or_build_at(cache_path().as_deref(), &Sources::standard())
    }

    /// The corpus cached at `cache` (none: no cache), or built from `sources` and cached there.
    pub fn load_or_build_at(cache: Option<&Path>, sources: &Sources) -> anyhow::Result<Corpus> {
        if let Some(path) = cache {
            if let Some(corpus) = std::fs::read(path)
                .ok()
                .and_then(|bytes| serde_json::from_slice::<Corpus>(&bytes).ok())
                .filter(|c| !c.is_empty())
            {
                return Ok(corpus);
            }
        }
        let corpus = Corpus::build(sources)?;
        if let Some(path) = cache {
            // A cache that cannot be written only costs the next run a rebuild.
            let _ = write_atomically(path, &serde_json::to_vec(&corpus)?);
        }
        Ok(corpus)
    }

    /// Harvest every source; an error only when nothing at all was found.
    pub fn build(sources: &Sources) -> anyhow::Result<Corpus> {
        let args = crate::mutate::c_args();
        // libclang is loaded per thread; the first load, here, sets its path for all.
        crate::mutate::parse_source("int main(void) { return 0; }", &args)?;
        let jobs: Vec<Job> = sources
            .csmith_seeds
            .iter()
            .map(|&s| Job::Csmith(s))
            .chain(sources.files.iter().cloned().map(Job::File))
            .collect();
        let next = AtomicUsize::new(0);
        let found: Mutex<Vec<(usize, Vec<Ingredient>)>> = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for _ in 0..sources.threads.max(1) {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let got = run(job, &args);
                    if let Ok(mut f) = found.lock() {
                        f.push((i, got));
                    }
                });
            }
        });
        let mut found = found.into_inner().unwrap_or_default();
        // Threads finish in any order; the corpus must not depend on it.
        found.sort_by_key(|(i, _)| *i);
        let mut corpus = Corpus::default();
        let mut seen = HashSet::new();
        for ingredient in found.into_iter().flat_map(|(_, v)| v) {
            if !seen.insert((ingredient.kind, ingredient.text.clone())) {
                continue;
            }
            match ingredient.kind {
                IngredientKind::Branch => corpus.branches.push(ingredient),
                IngredientKind::Loop => corpus.loops.push(ingredient),
                IngredientKind::Function => corpus.functions.push(ingredient),
            }
        }
        if corpus.is_empty() {
            anyhow::bail!("no ingredients: csmith and the installed C files gave nothing that parses");
        }
        Ok(corpus)
    }
}

/// A source's ingredients; nothing when it cannot be generated or parsed.
fn run(job: &Job, args: &[String]) -> Vec<Ingredient> {
    match job {
        Job::Csmith(seed) => {
            let Some(text) = csmith(*seed) else { return Vec::new() };
            match crate::mutate::parse_source(&text, args) {
                Ok(tu) => harvest::harvest(&tu, SourceKind::Csmith, &format!("csmith --seed {seed}")),
                Err(_) => Vec::new(),
            }
        }
        Job::File(path) => {
            let mut args = args.to_vec();
            if let Some(dir) = path.parent() {
                args.push(format!("-I{}", dir.display()));
            }
            match crate::mutate::parse(path, &args) {
                Ok(tu) => harvest::harvest(&tu, SourceKind::Installed, &path.display().to_string()),
                Err(_) => Vec::new(),
            }
        }
    }
}

pub(crate) fn csmith(seed: u64) -> Option<String> {
    let out = std::process::Command::new("timeout")
        .arg(CSMITH_SECONDS.to_string())
        .arg("csmith")
        .arg("--seed")
        .arg(seed.to_string())
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    (out.status.success() && !out.stdout.is_empty()).then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `$XDG_CACHE_HOME/ctos/…`, else `$HOME/.cache/ctos/…`.
pub fn cache_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("ctos").join(CACHE_NAME))
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}
