//! Profiling for live-code mutation (Hermes spec §4): a sample of program points gets calls
//! into a small C runtime that records, per point, the set of values of each integer lvalue
//! in scope; the instrumented program runs once and the runtime writes the sets at exit.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use rand::seq::SliceRandom;
use rand::Rng;

use crate::mutate::ast::{Kind, NodeId};
use crate::mutate::cint::{IntType, Rank, Value};
use crate::mutate::scope::{lvalues, point, statements, Lvalue, Point};
use crate::mutate::{apply, Edit, Tu};

/// Hermes's sparse-profiling probability.
pub const P_PROFILE: f64 = 0.1;
/// Array elements looked at per variable (csmith's global arrays are large).
pub const MAX_ELEMENTS: usize = 8;
/// Distinct values kept per lvalue and point; a set that overflows is not offered.
pub const MAX_VALUES: usize = 32;

const RUNTIME: &str = r#"
/* ctos: Hermes profiling runtime. */
#include <stdio.h>
#include <stdlib.h>
struct ctos_slot { int n, overflow; unsigned long long v[CTOS_MAX_VALUES]; };
static struct ctos_slot ctos_slots[CTOS_SLOTS];
static int ctos_registered;
static void ctos_dump(void) {
  const char *path = getenv("CTOS_PROFILE");
  FILE *f = path ? fopen(path, "w") : 0;
  if (!f) return;
  for (int i = 0; i < CTOS_SLOTS; i++) {
    struct ctos_slot *s = &ctos_slots[i];
    if (!s->n) continue;
    fprintf(f, "%d %d", i, s->overflow);
    for (int j = 0; j < s->n; j++) fprintf(f, " %llu", s->v[j]);
    fputc('\n', f);
  }
  fclose(f);
}
void ctos_record(int slot, unsigned long long value) {
  struct ctos_slot *s = &ctos_slots[slot];
  if (!ctos_registered) { ctos_registered = 1; atexit(ctos_dump); }
  if (s->overflow) return;
  for (int j = 0; j < s->n; j++) if (s->v[j] == value) return;
  if (s->n == CTOS_MAX_VALUES) { s->overflow = 1; return; }
  s->v[s->n++] = value;
}
"#;

/// What a profiled point saw: each recorded lvalue with the set of its values there.
#[derive(Debug, Clone)]
pub struct Env {
    pub point: Point,
    pub vars: Vec<(Lvalue, Vec<Value>)>,
}

/// Integer lvalues recorded per point: a csmith program has hundreds of globals in scope
/// everywhere, and recording all of them at every point made instrumented programs of
/// hundreds of megabytes.
pub const MAX_RECORDED: usize = 48;

/// The lvalues a point records: initialized, integer, not volatile (an extra volatile access
/// is behaviour of its own); the innermost variables' first, then a random sample of the
/// globals, `MAX_RECORDED` in all.
fn recorded(tu: &Tu, point: &Point, rng: &mut (impl Rng + ?Sized)) -> Vec<Lvalue> {
    // `main`'s parameters are the harness's, not the program's: ctos's JIT passes another
    // argc than a shell does, and a predicate on it was true in one and false in the other.
    let in_main = tu.node(point.function).name == "main";
    let usable = |global: bool| {
        point
            .vars
            .iter()
            .filter(move |v| v.initialized && v.global == global)
            .filter(move |v| !(in_main && tu.node(v.decl).kind == Kind::ParmDecl))
            .flat_map(|v| lvalues(tu, v, MAX_ELEMENTS))
            .filter(|l| !l.is_volatile)
    };
    let mut out: Vec<Lvalue> = usable(false).take(MAX_RECORDED / 2).collect();
    let mut globals: Vec<Lvalue> = usable(true).collect();
    globals.shuffle(rng);
    out.extend(globals.into_iter().take(MAX_RECORDED - out.len()));
    out
}

/// The instrumented source, and for each slot its (point index, lvalue) in `chosen`.
pub struct Instrumented {
    pub source: String,
    pub chosen: Vec<Point>,
    pub slots: Vec<(usize, Lvalue)>,
}

/// How many points a program's variants profile: `P_PROFILE` of its own points. Counted on
/// the chain's first program, not on each variant: snippets add points, and a tenth of a
/// variant's points made every variant about a third larger than the one before.
pub fn budget(tu: &Tu) -> usize {
    ((statements(tu).len() as f64 * P_PROFILE).round() as usize).max(1)
}

/// Instrument `count` points drawn uniformly (all of them when there are fewer).
pub fn instrument(tu: &Tu, rng: &mut (impl Rng + ?Sized), count: usize) -> Instrumented {
    let statements = statements(tu);
    let mut drawn = rand::seq::index::sample(rng, statements.len(), count.min(statements.len())).into_vec();
    drawn.sort_unstable();
    instrument_statements(tu, rng, drawn.into_iter().map(|i| statements[i]))
}

/// Instrument the points of `picked`, (statement, function) pairs in source order.
pub fn instrument_statements(
    tu: &Tu,
    rng: &mut (impl Rng + ?Sized),
    picked: impl IntoIterator<Item = (NodeId, NodeId)>,
) -> Instrumented {
    let mut chosen = Vec::new();
    let mut slots = Vec::new();
    let mut edits = vec![Edit::insert(0, "void ctos_record(int, unsigned long long);\n")];
    for (stmt, function) in picked {
        let point = point(tu, stmt, function);
        let recorded = recorded(tu, &point, rng);
        if recorded.is_empty() {
            continue;
        }
        let mut calls = String::new();
        for l in recorded {
            calls.push_str(&format!("ctos_record({}, (unsigned long long)({})); ", slots.len(), l.expr));
            slots.push((chosen.len(), l));
        }
        edits.push(Edit::insert(point.offset, calls));
        chosen.push(point);
    }
    let runtime = RUNTIME
        .replace("CTOS_SLOTS", &slots.len().max(1).to_string())
        .replace("CTOS_MAX_VALUES", &MAX_VALUES.to_string());
    edits.push(Edit::insert(tu.source.len(), runtime));
    let source = apply(&tu.source, &edits).expect("insertions at statement starts never overlap");
    Instrumented { source, chosen, slots }
}

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("the instrumented program does not compile: {0}")]
    Compile(String),
    #[error("the instrumented program {0}")]
    Run(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Compile `instrumented` with `clang`, run it once, and read what each point saw. Points
/// that never ran are left out.
pub fn run(
    instrumented: &Instrumented,
    clang: &Path,
    args: &[String],
    timeout: Duration,
) -> Result<Vec<Env>, ProfileError> {
    let dir = tempfile::tempdir()?;
    let (source, binary, profile) = (dir.path().join("p.c"), dir.path().join("p"), dir.path().join("profile"));
    std::fs::write(&source, &instrumented.source)?;
    crate::mutate::compile_o0(clang, args, &source, &binary).map_err(ProfileError::Compile)?;
    let status = Command::new("timeout")
        .arg(format!("{}", timeout.as_secs_f64()))
        .arg(&binary)
        .env("CTOS_PROFILE", &profile)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    if !status.success() {
        return Err(ProfileError::Run(format!("ended with {status}")));
    }
    let text = std::fs::read_to_string(&profile).unwrap_or_default();
    Ok(read(instrumented, &text))
}

/// The runtime's file (`slot overflow v1 v2 …` per line) as environments.
fn read(instrumented: &Instrumented, text: &str) -> Vec<Env> {
    let wide = IntType::new(Rank::LongLong, false);
    let mut by_point: HashMap<usize, Vec<(Lvalue, Vec<Value>)>> = HashMap::new();
    for line in text.lines() {
        let mut fields = line.split(' ');
        let (Some(Ok(slot)), Some(overflow)) = (fields.next().map(str::parse::<usize>), fields.next()) else {
            continue;
        };
        let Some((point, lvalue)) = instrumented.slots.get(slot) else { continue };
        let entry = by_point.entry(*point).or_default();
        if overflow != "0" {
            continue;
        }
        let values = fields
            .filter_map(|f| f.parse::<u64>().ok())
            .map(|bits| Value::new(wide.convert(bits as i128), lvalue.ty))
            .collect();
        entry.push((lvalue.clone(), values));
    }
    let mut envs: Vec<Env> =
        by_point.into_iter().map(|(k, vars)| Env { point: instrumented.chosen[k].clone(), vars }).collect();
    envs.sort_by_key(|e| e.point.offset);
    envs
}
