//! Live-code EMI variants (Hermes): profile a program, put a snippet at every profiled point
//! that ran — an always-false block (FCB), an always-true guard around the statement (TG), or
//! an always-true block that changes live variables and restores them (TCB) — and chain:
//! each variant is the next one's seed, re-profiled. A variant prints what its seed prints.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rand::{Rng, RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

pub mod profile;
pub mod synth;
#[cfg(test)]
mod tests;

use self::profile::Env;
use self::synth::{values_of, Slot, Synth};
use crate::mutate::ast::Kind;
use crate::mutate::cint::Expr;
use crate::mutate::{apply, parse_source, Edit, Tu};

/// The printf a TCB's never-taken branch calls, declared for programs without <stdio.h>.
const PRINTF: &str = "int printf(const char *, ...);\n";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    Fcb,
    Tg,
    Tcb,
}

/// One snippet of a variant, as the log records it.
#[derive(Debug, Clone, Serialize)]
pub struct Mutation {
    pub strategy: Strategy,
    /// 1-based line of the statement it went before (or around), in the variant's seed.
    pub line: usize,
    pub edit: Edit,
}

#[derive(Debug, Clone, Serialize)]
pub struct Variant {
    pub source: String,
    pub mutations: Vec<Mutation>,
    /// Where each mutation's text is in `source`.
    pub placed: Vec<std::ops::Range<usize>>,
    /// Points profiled, and how many of them ran.
    pub profiled: usize,
    pub executed: usize,
    pub seconds: f64,
}

#[derive(Debug, thiserror::Error)]
pub enum EmiError {
    #[error(transparent)]
    Parse(#[from] crate::mutate::ParseError),
    #[error(transparent)]
    Profile(#[from] profile::ProfileError),
    #[error("variant {0} does not compile: {1}")]
    Invalid(usize, String),
}

/// How variants are made: the clang that profiles, its arguments, the run's time limit.
#[derive(Debug, Clone)]
pub struct EmiConfig {
    pub clang: PathBuf,
    pub args: Vec<String>,
    pub timeout: Duration,
}

impl Default for EmiConfig {
    fn default() -> Self {
        EmiConfig {
            clang: crate::llvm::clang_for_this_llvm(),
            args: crate::mutate::c_args(),
            timeout: Duration::from_secs(10),
        }
    }
}

/// A chain of variants of a C program, deterministic from its seed: each `next` profiles
/// the latest variant (the program itself first) and mutates it.
pub struct Chain {
    rng: ChaCha8Rng,
    current: Tu,
    /// Points profiled per variant.
    budget: usize,
    step: usize,
    config: EmiConfig,
}

impl Chain {
    pub fn new(source: &str, seed: u64, config: &EmiConfig) -> Result<Chain, EmiError> {
        let current = parse_source(source, &config.args)?;
        let budget = profile::budget(&current);
        Ok(Chain { rng: ChaCha8Rng::seed_from_u64(seed), current, budget, step: 0, config: config.clone() })
    }

    pub fn next_variant(&mut self) -> Result<Variant, EmiError> {
        let started = Instant::now();
        let step = self.step;
        self.step += 1;
        let instrumented = profile::instrument(&self.current, &mut self.rng, self.budget);
        let envs = profile::run(&instrumented, &self.config.clang, &self.config.args, self.config.timeout)?;
        let mutations = mutate(&self.current, &envs, step, &mut self.rng);
        let mut edits: Vec<Edit> = mutations.iter().map(|m| m.edit.clone()).collect();
        if !self.current.source.starts_with(PRINTF) {
            edits.push(Edit::insert(0, PRINTF));
        }
        let text = apply(&self.current.source, &edits).map_err(|e| EmiError::Invalid(step + 1, e.to_string()))?;
        let placed = crate::mutate::placed(&edits)
            .into_iter()
            .zip(&mutations)
            .map(|(at, m)| at..at + m.edit.text.len())
            .collect();
        self.current =
            parse_source(&text, &self.config.args).map_err(|e| EmiError::Invalid(step + 1, e.to_string()))?;
        Ok(Variant {
            source: text,
            mutations,
            placed,
            profiled: instrumented.chosen.len(),
            executed: envs.len(),
            seconds: started.elapsed().as_secs_f64(),
        })
    }
}

/// The first `n` variants of `source`'s chain.
pub fn chain(source: &str, n: usize, seed: u64, config: &EmiConfig) -> Result<Vec<Variant>, EmiError> {
    let mut chain = Chain::new(source, seed, config)?;
    (0..n).map(|_| chain.next_variant()).collect()
}

/// A snippet for every executed point with profiled values.
fn mutate(tu: &Tu, envs: &[Env], step: usize, rng: &mut (impl Rng + ?Sized)) -> Vec<Mutation> {
    let mut out = Vec::new();
    for (k, env) in envs.iter().enumerate() {
        let slots: Vec<Slot> = env
            .vars
            .iter()
            .filter(|(_, values)| !values.is_empty())
            .map(|(lvalue, values)| Slot { lvalue: lvalue.clone(), values: values.clone() })
            .collect();
        if slots.is_empty() {
            continue;
        }
        let stmt_kind = tu.node(env.point.stmt).kind;
        let guardable = !matches!(stmt_kind, Kind::DeclStmt | Kind::LabelStmt | Kind::CaseStmt | Kind::DefaultStmt);
        let strategies: Vec<Strategy> = [Strategy::Fcb, Strategy::Tg, Strategy::Tcb]
            .into_iter()
            .filter(|s| *s != Strategy::Tg || guardable)
            .collect();
        let strategy = strategies[rng.random_range(0..strategies.len())];
        let mut synth = Synth { rng: &mut *rng };
        let text = match strategy {
            Strategy::Fcb => Some(fcb(&mut synth, &slots, env.point.in_loop)),
            Strategy::Tg => {
                let depth = synth.rng.random_range(0..=2);
                Some(format!("if ({}) ", render(&synth.predicate(&slots, true, depth), &slots)))
            }
            Strategy::Tcb => tcb(&mut synth, slots, &format!("ctos_b{step}_{k}")),
        };
        let Some(text) = text else { continue };
        let line = tu.source[..env.point.offset].matches('\n').count() + 1;
        out.push(Mutation { strategy, line, edit: Edit::insert(env.point.offset, text) });
    }
    out
}

fn render(e: &Expr, slots: &[Slot]) -> String {
    e.render(&|i| slots[i].lvalue.expr.clone())
}

/// `if|while (false) { … }`: a body that never runs, so it only has to compile.
fn fcb<R: Rng + ?Sized>(s: &mut Synth<'_, R>, slots: &[Slot], in_loop: bool) -> String {
    let depth = s.rng.random_range(0..=2);
    let guard = render(&s.predicate(slots, false, depth), slots);
    let is_while = s.rng.random_bool(0.5);
    let writable: Vec<usize> = (0..slots.len()).filter(|&i| slots[i].writable()).collect();
    let mut body = String::new();
    for _ in 0..s.rng.random_range(1..=3) {
        let e = render(&s.dead_expression(slots, 2), slots);
        let statement = match (writable.is_empty(), s.rng.random_range(0..4)) {
            (false, 0) => {
                let target = &slots[writable[s.rng.random_range(0..writable.len())]].lvalue.expr;
                let value = render(&s.dead_expression(slots, 2), slots);
                format!("if ({e}) {{ {target} = {value}; }}")
            }
            (false, 1 | 2) => {
                let target = &slots[writable[s.rng.random_range(0..writable.len())]].lvalue.expr;
                format!("{target} = {e};")
            }
            _ if (in_loop || is_while) && s.rng.random_bool(0.3) => "break;".to_string(),
            _ => format!("(void)({e});"),
        };
        body.push_str(&statement);
        body.push(' ');
    }
    format!("{} ({guard}) {{ {body}}}\n", if is_while { "while" } else { "if" })
}

/// `{ T b = e0; if (true) { b = v; v = e1; if (false) printf(v); } v = b; }` for one or two
/// live variables; every expression that runs is defined on the profiled values.
fn tcb<R: Rng + ?Sized>(s: &mut Synth<'_, R>, mut slots: Vec<Slot>, name: &str) -> Option<String> {
    let writable: Vec<usize> = (0..slots.len()).filter(|&i| slots[i].writable()).collect();
    if writable.is_empty() {
        return None;
    }
    let count = s.rng.random_range(1..=writable.len().min(2));
    let targets: Vec<usize> =
        rand::seq::index::sample(s.rng, writable.len(), count).into_iter().map(|i| writable[i]).collect();
    let depth = s.rng.random_range(0..=2);
    let guard = render(&s.predicate(&slots, true, depth), &slots);
    let mut head = String::new();
    let mut inner = String::new();
    let mut restore = String::new();
    // The backups' initializers run before anything changes: synthesized on the entry values.
    let inits: Vec<Expr> = targets.iter().map(|_| s.expression(&slots)).collect::<Option<_>>()?;
    for (j, (&t, init)) in targets.iter().zip(&inits).enumerate() {
        let backup = format!("{name}_{j}");
        let (lvalue, declared) = (slots[t].lvalue.expr.clone(), slots[t].lvalue.ty);
        let change = s.expression(&slots)?;
        let new_values = values_of(&change, &slots)?;
        head.push_str(&format!("{} {backup} = {}; ", declared.spelling(), render(init, &slots)));
        inner.push_str(&format!("{backup} = {lvalue}; {lvalue} = {}; ", render(&change, &slots)));
        restore.push_str(&format!("{lvalue} = {backup}; "));
        // What the variable holds from here on, for the predicates that follow.
        let mut converted: Vec<crate::mutate::cint::Value> = Vec::new();
        for v in new_values.iter().map(|v| crate::mutate::cint::Value::new(v.v, declared)) {
            if !converted.contains(&v) {
                converted.push(v);
            }
        }
        slots[t].values = converted;
    }
    let depth = s.rng.random_range(0..=2);
    let never = render(&s.predicate(&slots, false, depth), &slots);
    let shown = &slots[targets[0]].lvalue.expr;
    Some(format!(
        "{{ {head}if ({guard}) {{ {inner}if ({never}) {{ printf(\"%llu\\n\", (unsigned long long)({shown})); }} }} {restore}}}\n"
    ))
}

/// Compile `source` at -O0 and run it: its standard output, or why there is none.
pub fn output_at_o0(source: &str, config: &EmiConfig) -> Result<String, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (path, binary) = (dir.path().join("v.c"), dir.path().join("v"));
    std::fs::write(&path, source).map_err(|e| e.to_string())?;
    compile_and_run(&path, &binary, config)
}

fn compile_and_run(path: &Path, binary: &Path, config: &EmiConfig) -> Result<String, String> {
    crate::mutate::compile_o0(&config.clang, &config.args, path, binary)?;
    let run = Command::new("timeout")
        .arg(config.timeout.as_secs_f64().to_string())
        .arg(binary)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    if !run.status.success() {
        return Err(format!("the program ended with {}", run.status));
    }
    Ok(String::from_utf8_lossy(&run.stdout).into_owned())
}
