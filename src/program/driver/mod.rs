//! Drivers for IR without `main` (LLVM's own tests, their mutants, llvm-stress output):
//! generated `main`s that call the module's functions on chosen inputs and print what
//! they return and write, so that a difference after optimization shows as output. Only
//! calls whose unoptimized run is free of undefined behaviour and poison are kept: each
//! is first run in a copy of the module with src/llvm/ub_checks.cpp's checks, then under
//! poison tracking (src/llvm/poison_checks.cpp: poison no rule makes, as a shuffle's
//! poison lane returned), and then with fresh memory filled two ways (a call that reads
//! memory it never wrote prints differently).

mod stopped;
mod text;

use std::collections::BTreeMap;

use anyhow::{bail, Context as _, Result};
use rand::{Rng, RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::reference_execution_filled;
use crate::llvm::IrModule;
use crate::program::{Subject, SubjectSpec};
use crate::sandbox::{ExecStatus, Execution, Limits, Pool};
pub use stopped::{compare_calls, stopped_calls, CallComparison, Stopped, POISON_OBSERVED, UNDEFINED};
pub use text::{driver_text, ub_kind_name, FIRST_OBSERVED_KIND, RUNTIME_KINDS, UB_KINDS};

/// The bytes fresh stack and heap memory is filled with in the two unoptimized runs.
pub const FILLS: [u8; 2] = [0x5a, 0xa5];

/// The memory the driver gives pointer arguments: one slot each, the pointer in its middle.
pub const SLOT: u64 = 4096;
const SLOTS: u64 = 4;
pub const ARENA: u64 = SLOT * SLOTS;
/// Calls of each function, and of all of them at most.
const CALLS_PER_FUNCTION: usize = 12;
const MAX_CALLS: usize = 256;
/// Rounds of checking: each drops the calls that broke a rule, and the next checks that
/// the others still run clean without them (a dropped call may have set a global).
const ROUNDS: usize = 4;
/// How long one run of all the calls may take.
const CALLS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    Int(u32),
    Float,
    Double,
    Ptr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValueType {
    pub scalar: Scalar,
    pub lanes: Option<u32>,
}

impl ValueType {
    /// From LLVM's printed type: `i32`, `ptr`, `double`, `<4 x i16>`.
    fn parse(text: &str) -> Option<ValueType> {
        let scalar = |t: &str| match t {
            "float" => Some(Scalar::Float),
            "double" => Some(Scalar::Double),
            "ptr" => Some(Scalar::Ptr),
            _ => t.strip_prefix('i')?.parse().ok().filter(|b| (1..=64).contains(b)).map(Scalar::Int),
        };
        match text.strip_prefix('<').and_then(|t| t.strip_suffix('>')) {
            Some(vector) => {
                let (n, element) = vector.split_once(" x ")?;
                Some(ValueType { scalar: scalar(element)?, lanes: Some(n.parse().ok()?) })
            }
            None => Some(ValueType { scalar: scalar(text)?, lanes: None }),
        }
    }
}

/// A function a driver can call.
#[derive(Debug, Clone)]
pub struct Callable {
    pub name: String,
    pub ret: Option<ValueType>,
    pub params: Vec<ValueType>,
    /// Its integer constants: inputs near them reach its comparisons' edges.
    pub constants: Vec<i64>,
}

/// What a module offers a driver.
#[derive(Debug, Clone, Default)]
pub struct Described {
    pub callable: Vec<Callable>,
    /// Functions it cannot call, and why.
    pub refused: Vec<(String, String)>,
    /// Writable globals it reads back after each call (name, bytes).
    pub globals: Vec<(String, u64)>,
    /// Globals it only declares, which the driver defines, fills afresh before each call
    /// and reads back after it (name, bytes, alignment).
    pub externs: Vec<(String, u64, u64)>,
    /// Functions it only declares, for which the driver stands in: each call's arguments
    /// are folded into what the driver prints after the call it happened in.
    pub stubs: Vec<Callable>,
}

impl Described {
    pub fn of(module: &IrModule) -> Described {
        Described::parse(&module.describe_functions())
    }

    fn parse(text: &str) -> Described {
        let mut d = Described::default();
        for line in text.lines() {
            let fields: Vec<&str> = line.split('\t').collect();
            match fields.as_slice() {
                ["function", name, ret, params, why, constants] => {
                    let ret_type = (*ret != "void").then(|| ValueType::parse(ret));
                    let param_types: Option<Vec<ValueType>> =
                        params.split(',').filter(|p| !p.is_empty()).map(ValueType::parse).collect();
                    match (why.is_empty(), ret_type, param_types) {
                        (true, Some(None), _) | (true, _, None) => {
                            d.refused.push((name.to_string(), "its types".into()))
                        }
                        (true, ret, Some(params)) => d.callable.push(Callable {
                            name: name.to_string(),
                            ret: ret.flatten(),
                            params,
                            constants: constants.split(',').filter_map(|c| c.parse().ok()).collect(),
                        }),
                        (false, _, _) => d.refused.push((name.to_string(), why.to_string())),
                    }
                }
                ["global", name, size] => {
                    if let Ok(size) = size.parse() {
                        d.globals.push((name.to_string(), size));
                    }
                }
                ["stub", name, ret, params] => {
                    let ret_type = (*ret != "void").then(|| ValueType::parse(ret));
                    let param_types: Option<Vec<ValueType>> =
                        params.split(',').filter(|p| !p.is_empty()).map(ValueType::parse).collect();
                    if let (Some(ret), Some(params)) = (ret_type.map_or(Some(None), |r| r.map(Some)), param_types) {
                        d.stubs.push(Callable { name: name.to_string(), ret, params, constants: Vec::new() });
                    }
                }
                ["extern", name, size, align] => {
                    if let (Ok(size), Ok(align)) = (size.parse(), align.parse()) {
                        d.externs.push((name.to_string(), size, align));
                    }
                }
                _ => {}
            }
        }
        d
    }
}

/// An argument's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Int(i64),
    Float(f64),
    /// The middle of this slot of the arena.
    Ptr(u64),
    Vector(Vec<Arg>),
}

/// One call of the driver.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub function: usize,
    pub args: Vec<Arg>,
}

/// Signed value of the low `bits` bits.
fn wrap(v: i64, bits: u32) -> i64 {
    if bits >= 64 {
        v
    } else {
        (v << (64 - bits)) >> (64 - bits)
    }
}

const FLOATS: [f64; 9] = [0.0, -0.0, 1.0, -1.0, 0.5, 3.25, 1024.0, -65536.0, 1.0e10];

/// The value every argument of the first calls takes: 0, -1, 1, the minimum, the maximum.
fn edge(scalar: Scalar, slot: u64, k: usize) -> Arg {
    match scalar {
        Scalar::Ptr => Arg::Ptr(slot % SLOTS),
        Scalar::Float | Scalar::Double => Arg::Float([0.0, -1.0, 1.0, -65536.0, 1.0e10][k]),
        Scalar::Int(bits) => {
            let min = i64::MIN >> (64 - bits);
            Arg::Int([0, -1, 1, min, !min][k])
        }
    }
}
const EDGES: usize = 5;

/// An edge value, a value near one of the function's constants, or a random one.
fn random_arg(scalar: Scalar, slot: u64, constants: &[i64], rng: &mut ChaCha8Rng) -> Arg {
    match scalar {
        Scalar::Ptr => Arg::Ptr(slot % SLOTS),
        Scalar::Float | Scalar::Double => Arg::Float(FLOATS[rng.random_range(0..FLOATS.len())]),
        Scalar::Int(bits) => {
            let v = match rng.random_range(0..10) {
                0..=2 => match edge(scalar, slot, rng.random_range(0..EDGES)) {
                    Arg::Int(v) => v + rng.random_range(-1..=1),
                    _ => 0,
                },
                3..=6 if !constants.is_empty() => {
                    constants[rng.random_range(0..constants.len())].wrapping_add(rng.random_range(-1..=1))
                }
                _ => rng.next_u64() as i64,
            };
            Arg::Int(wrap(v, bits))
        }
    }
}

/// Inputs for each callable function: first every argument at one edge (0, -1, 1, the
/// minimum, the maximum; pointers always to memory of their own), then values near the
/// edges and its constants and random ones, from `seed`.
pub fn choose_calls(described: &Described, seed: u64) -> Vec<Call> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut calls = Vec::new();
    for (f, callable) in described.callable.iter().enumerate() {
        for k in 0..CALLS_PER_FUNCTION {
            let args = callable
                .params
                .iter()
                .enumerate()
                .map(|(slot, t)| {
                    let one = |rng: &mut ChaCha8Rng| match k < EDGES {
                        true => edge(t.scalar, slot as u64, k),
                        false => random_arg(t.scalar, slot as u64, &callable.constants, rng),
                    };
                    match t.lanes {
                        Some(n) => Arg::Vector((0..n).map(|_| one(&mut rng)).collect()),
                        None => one(&mut rng),
                    }
                })
                .collect();
            let call = Call { function: f, args };
            // A function of one i1 has two inputs; each is called once.
            if !calls.contains(&call) {
                calls.push(call);
            }
        }
    }
    calls.truncate(MAX_CALLS);
    calls
}

/// A driver that a module's unoptimized functions run clean under.
#[derive(Debug, Clone)]
pub struct GeneratedDriver {
    pub text: String,
    pub calls: usize,
}

/// What [`generate`] made of a module, and what it left out on the way.
#[derive(Debug, Clone)]
pub struct DriverOutcome {
    /// The driver, or why there is none.
    pub driver: std::result::Result<GeneratedDriver, String>,
    /// Functions it could not call, counted by why, names left out (`a call of @…, which
    /// it cannot run`): what a campaign's seeds hold that the checks do not cover.
    pub refused: BTreeMap<String, usize>,
    /// Calls left out, by why: a kind of undefined behaviour or poison ([`ub_kind_name`]),
    /// memory never written, or a crash or timeout of the checked run.
    pub dropped: BTreeMap<String, usize>,
}

/// `why` with the names of functions left out, so that reasons count together.
fn without_names(why: &str) -> String {
    let mut out = String::new();
    let mut in_name = false;
    for ch in why.chars() {
        if ch == '@' {
            in_name = true;
            out.push_str("@…");
        } else if in_name && (ch == ',' || ch == ' ') {
            in_name = false;
        }
        if !in_name {
            out.push(ch);
        }
    }
    out
}

/// Per call index, its printed line.
fn lines_by_call(stdout: &str) -> BTreeMap<usize, &str> {
    stdout
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("call ")?;
            Some((rest.split(':').next()?.parse().ok()?, l))
        })
        .collect()
}

/// The calls `stdout` of the checked run says broke a rule (call index, kind).
fn broken_rules(stdout: &str) -> Vec<(usize, u32)> {
    stdout
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("ctos-ub: call ")?;
            let (call, kind) = rest.split_once(": kind ")?;
            Some((call.parse().ok()?, kind.trim().parse().ok()?))
        })
        .collect()
}

/// The first call of a run that ended badly that printed nothing: the one it ended in.
fn ended_in(execution: &Execution, calls: usize) -> Option<usize> {
    let printed = lines_by_call(&execution.stdout);
    let broken: Vec<usize> = broken_rules(&execution.stdout).into_iter().map(|(c, _)| c).collect();
    (0..calls).find(|c| !printed.contains_key(c) && !broken.contains(c))
}

/// A driver for `module` (which must have no `main`), from `seed`; none, with why, when it
/// has no function a driver can call or every call broke a rule. `limits` bound each run;
/// `fills` are the two bytes fresh memory is filled with.
pub fn generate(
    module: &IrModule,
    llvm_args: &[String],
    limits: Limits,
    seed: u64,
    fills: [u8; 2],
) -> Result<DriverOutcome> {
    let described = Described::of(module);
    let mut refused: BTreeMap<String, usize> = BTreeMap::new();
    for (_, why) in &described.refused {
        *refused.entry(without_names(why)).or_default() += 1;
    }
    let mut dropped = BTreeMap::new();
    let driver = checked_calls(module, &described, llvm_args, limits, seed, fills, &mut dropped)?;
    Ok(DriverOutcome { driver, refused, dropped })
}

/// [`generate`]'s driver: the calls chosen for `described`, less those whose checked or
/// twice-filled runs are not clean (counted in `dropped`), until a round drops none.
fn checked_calls(
    module: &IrModule,
    described: &Described,
    llvm_args: &[String],
    limits: Limits,
    seed: u64,
    fills: [u8; 2],
    dropped: &mut BTreeMap<String, usize>,
) -> Result<std::result::Result<GeneratedDriver, String>> {
    if described.callable.is_empty() {
        let why: Vec<String> = described.refused.iter().map(|(f, why)| format!("@{f}: {why}")).collect();
        return Ok(Err(match why.is_empty() {
            true => "no externally visible function to call".to_string(),
            false => format!("no function a driver can call ({})", why.join("; ")),
        }));
    }
    let mut calls = choose_calls(described, seed);
    // The functions of LLVM's tests run in microseconds: a run of all their calls (code
    // generation included) still going after two seconds loops (on a trip count from an
    // edge input, say).
    let limits = Limits { exec_timeout: limits.exec_timeout.min(CALLS_TIMEOUT), ..limits };
    let mut pool = Pool::new(1, limits, llvm_args.to_vec())?;
    for round in 0.. {
        if calls.is_empty() {
            return Ok(Err(format!("no call ran clean ({})", summary(dropped))));
        }
        if round == ROUNDS {
            return Ok(Err(format!("calls still broke rules after {ROUNDS} rounds of checking")));
        }
        let mut bad: BTreeMap<usize, String> = BTreeMap::new();
        let (mut checked, _) = module.instrumented_for_ub()?;
        checked.set_driver_bytes(driver_text(described, &calls).as_bytes(), "driver.ll")?;
        let run = reference_execution_filled(&mut pool, &mut checked, Some(fills[0]))?;
        for (call, kind) in broken_rules(&run.stdout) {
            bad.insert(call, ub_kind_name(kind).to_string());
        }
        if run.status != ExecStatus::Exited(0) {
            let Some(call) = ended_in(&run, calls.len()) else {
                bail!("the checked run {} after every call", run.status.describe());
            };
            let why = format!("the checked run {}", run.status.describe());
            // A function that loops on one input mostly loops on the next edge too, and
            // each such run costs the whole timeout: its later calls go with it.
            let later = (call..calls.len()).filter(|&k| calls[k].function == calls[call].function);
            let dropped_calls: Vec<usize> =
                if run.status == ExecStatus::Timeout { later.collect() } else { vec![call] };
            for k in dropped_calls {
                bad.insert(k, why.clone());
            }
        }
        if bad.is_empty() {
            // Poison no rule makes: a poison or undef constant, a shuffle's poison lane, a
            // vector built lane by lane and returned unfinished. The checks above cannot see
            // where it goes; poison tracking can.
            let mut tracked = module.copy_without_driver()?;
            tracked.track_poison()?;
            tracked.set_driver_bytes(driver_text(described, &calls).as_bytes(), "driver.ll")?;
            let run = reference_execution_filled(&mut pool, &mut tracked, Some(fills[0]))?;
            for stopped in stopped_calls(&run.stdout) {
                bad.insert(stopped.call, ub_kind_name(stopped.kind).to_string());
            }
        }
        if bad.is_empty() {
            // Memory never written: the plain driver with fresh memory filled two ways.
            let plain = driver_text(described, &calls);
            // Runs that end differently (one killed on a busy machine) print different
            // lines whatever memory they read: the pair runs again once before it counts.
            let mut outputs = Vec::new();
            for _ in 0..2 {
                outputs.clear();
                for fill in fills {
                    let mut copy = module.copy_without_driver()?;
                    copy.set_driver_bytes(plain.as_bytes(), "driver.ll")?;
                    outputs.push(reference_execution_filled(&mut pool, &mut copy, Some(fill))?);
                }
                if outputs[0].status == outputs[1].status {
                    break;
                }
            }
            let [first, second] = [&outputs[0], &outputs[1]];
            if first.status != second.status {
                bail!("the unoptimized run ends differently with fresh memory filled two ways");
            }
            let (a, b) = (lines_by_call(&first.stdout), lines_by_call(&second.stdout));
            // A call one run did not reach because both were stopped (at the time limit of a
            // busy machine) says nothing of memory; one printed differently does.
            let ended = matches!(first.status, ExecStatus::Exited(_));
            for call in 0..calls.len() {
                let (x, y) = (a.get(&call), b.get(&call));
                if x != y && (ended || (x.is_some() && y.is_some())) {
                    bad.insert(call, "a read of memory it never wrote".to_string());
                }
            }
        }
        if bad.is_empty() {
            break;
        }
        for why in bad.values() {
            *dropped.entry(why.clone()).or_default() += 1;
        }
        calls = calls.into_iter().enumerate().filter(|(k, _)| !bad.contains_key(k)).map(|(_, c)| c).collect();
    }
    Ok(Ok(GeneratedDriver { text: driver_text(described, &calls), calls: calls.len() }))
}

/// Whether the calls of `module`'s generated driver run free of undefined behaviour and
/// poison in its unoptimized code (fresh memory filled with `fill`); None when its driver
/// is not one ctos generated (it has no checks' runtime).
pub fn runs_clean(pool: &mut Pool, module: &IrModule, fill: u8) -> Result<Option<bool>> {
    Ok(first_broken_rule(pool, module, fill)?.map(|broken| broken.is_none()))
}

/// The first rule the calls of `module`'s generated driver break under the checks, as
/// "call 0: a division by zero" (or how the checked run ended, when it ended badly without
/// naming one); Some(None) when they run clean; None when its driver is not one ctos
/// generated. Every poison made counts: for unoptimized code.
pub fn first_broken_rule(pool: &mut Pool, module: &IrModule, fill: u8) -> Result<Option<Option<String>>> {
    checked_run(pool, module, fill, Checks::EveryRule)
}

/// The first call of `module`'s generated driver that observes poison or behaves
/// undefinedly under poison tracking, in a sentence (what made the poison); Some(None) when
/// none does; None when its driver is not one ctos generated. For optimized code: poison
/// made and never observed does not count. Run after each pass, it tells which pass made
/// the calls observe poison. `driver` is the text of the driver, which names each call.
pub fn first_observed(pool: &mut Pool, module: &IrModule, fill: u8, driver: &str) -> Result<Option<Option<String>>> {
    checked_run(pool, module, fill, Checks::PoisonObserved(&calls_of_driver(driver)))
}

/// `call 3: @f(i32 0)` for each call a generated driver's text makes, as its output names it.
fn calls_of_driver(driver: &str) -> String {
    let call = |l: &str| {
        let text = l.split_once("c\"call ")?.1;
        let end = text.find(" -> ").or_else(|| text.find(" mem="))?;
        Some(format!("call {}\n", &text[..end]))
    };
    driver.lines().filter_map(call).collect()
}

enum Checks<'a> {
    EveryRule,
    /// With the driver's calls, one per line.
    PoisonObserved(&'a str),
}

fn checked_run(pool: &mut Pool, module: &IrModule, fill: u8, checks: Checks) -> Result<Option<Option<String>>> {
    let Some(driver) = module.driver_bitcode().filter(|_| has_generated_driver(module)) else {
        return Ok(None);
    };
    let mut checked = match checks {
        Checks::EveryRule => module.instrumented_for_ub()?.0,
        Checks::PoisonObserved(_) if module.driver_defines(crate::llvm::TRACKING_RUNTIME) => {
            let mut copy = module.copy_without_driver()?;
            copy.track_poison()?;
            copy
        }
        // A driver of an earlier ctos, without poison tracking's runtime.
        Checks::PoisonObserved(_) => return Ok(None),
    };
    checked.set_driver_bytes(&driver, "driver.bc")?;
    // The checks are the linked LLVM's code in a copy of the module, and an external
    // opt's children run the program it started with: the copy runs in-process. Its
    // optimization options are not needed to run unoptimized code.
    let mut local;
    let pool = match pool.external_opt() {
        Some(_) => {
            local = Pool::new(1, *pool.limits(), Vec::new())?;
            &mut local
        }
        None => pool,
    };
    let run = reference_execution_filled(pool, &mut checked, Some(fill))?;
    let first = stopped_calls(&run.stdout).into_iter().min_by_key(|s| s.call);
    Ok(Some(match first {
        Some(stopped) => Some(match checks {
            Checks::EveryRule => format!("call {}: {}", stopped.call, ub_kind_name(stopped.kind)),
            Checks::PoisonObserved(calls) => stopped.sentence(calls),
        }),
        None if run.status != ExecStatus::Exited(0) => Some(format!("the checked run {}", run.status.describe())),
        None => None,
    }))
}

/// Whether `module`'s driver is one ctos generated: only such a driver carries the checks'
/// runtime (`__ctos.ub`).
pub fn has_generated_driver(module: &IrModule) -> bool {
    module.driver_defines("__ctos.ub")
}

/// For a program without `main` whose optimized code is to be run (`ctos run --exec`,
/// `locseq isolate` of wrong code): a driver generated for it from `seed`, as a campaign
/// generates one, written to `path`; the program loaded again with it (`spec` then names
/// it). A program with `main`, or for another host, comes back as it was, with None.
pub fn load_with_generated_driver(
    spec: &mut SubjectSpec,
    subject: Subject,
    jobs: usize,
    limits: Limits,
    seed: u64,
    path: &std::path::Path,
) -> Result<(Subject, Option<GeneratedDriver>)> {
    if subject.module.has_main() || !subject.module.for_host() {
        return Ok((subject, None));
    }
    let target_free = crate::llvm::TargetSpec::split_flags(&spec.llvm_args).1;
    let outcome = generate(&subject.module, &target_free, limits, seed, FILLS)?;
    let driver = outcome.driver.map_err(|why| anyhow::anyhow!("ctos cannot generate a driver for it: {why}"))?;
    std::fs::write(path, &driver.text).with_context(|| format!("cannot write {}", path.display()))?;
    spec.driver = Some(path.to_path_buf());
    drop(subject);
    Ok((Subject::load(spec, jobs, limits)?, Some(driver)))
}

/// "3 × a division by zero, 1 × …".
pub fn summary(dropped: &BTreeMap<String, usize>) -> String {
    let parts: Vec<String> = dropped.iter().map(|(why, n)| format!("{n} × {why}")).collect();
    if parts.is_empty() {
        "none".to_string()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests;
