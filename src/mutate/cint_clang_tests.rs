//! The integer model against clang itself: random expressions over `volatile` variables
//! (nothing folds), compiled with UBSan that stops at the first undefined operation. Every
//! expression the model calls defined must run clean with the model's value and type; every
//! one it calls undefined must stop UBSan.

use std::collections::HashMap;
use std::process::Command;

use rand::{Rng, RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::cint::{Binary, Expr, IntType, Rank, Unary, Value};

const TYPES: [(Rank, bool); 11] = [
    (Rank::Bool, false),
    (Rank::Char, true),
    (Rank::Char, false),
    (Rank::Short, true),
    (Rank::Short, false),
    (Rank::Int, true),
    (Rank::Int, false),
    (Rank::Long, true),
    (Rank::Long, false),
    (Rank::LongLong, true),
    (Rank::LongLong, false),
];

fn type_code(t: IntType) -> usize {
    1 + TYPES.iter().position(|&(r, s)| r == t.rank && s == t.signed).unwrap()
}

const GENERIC: &str = "_Bool: 1, signed char: 2, unsigned char: 3, short: 4, unsigned short: 5, int: 6, \
                       unsigned int: 7, long: 8, unsigned long: 9, long long: 10, unsigned long long: 11, default: 0";

fn any_type(rng: &mut (impl Rng + ?Sized)) -> IntType {
    let (rank, signed) = TYPES[rng.random_range(0..TYPES.len())];
    IntType::new(rank, signed)
}

/// Mostly the values where C's rules bite: 0, ±1, the extremes and their neighbours.
fn edgy(rng: &mut (impl Rng + ?Sized), ty: IntType) -> i128 {
    let v = match rng.random_range(0..8) {
        0 => 0,
        1 => 1,
        2 => -1,
        3 => ty.min(),
        4 => ty.max(),
        5 => ty.min() + 1,
        6 => rng.random_range(-40..40),
        _ => rng.random_range(ty.min()..=ty.max()),
    };
    ty.convert(v)
}

fn expr(rng: &mut (impl Rng + ?Sized), vars: usize, depth: u32) -> Expr {
    if depth == 0 || rng.random_range(0..4) == 0 {
        return if rng.random_range(0..5) == 0 {
            let ty = any_type(rng);
            Expr::Const(Value::new(edgy(rng, ty), ty))
        } else {
            Expr::Var(rng.random_range(0..vars))
        };
    }
    match rng.random_range(0..6) {
        0 => Expr::Unary(Unary::ALL[rng.random_range(0..3)], Box::new(expr(rng, vars, depth - 1))),
        1 => Expr::Cast(any_type(rng), Box::new(expr(rng, vars, depth - 1))),
        _ => Expr::Binary(
            Binary::ALL[rng.random_range(0..Binary::ALL.len())],
            Box::new(expr(rng, vars, depth - 1)),
            Box::new(expr(rng, vars, depth - 1)),
        ),
    }
}

struct Case {
    text: String,
    model: Result<Value, super::cint::Undefined>,
}

#[test]
fn the_integer_model_agrees_with_clang_and_ubsan() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut globals = String::new();
    let mut cases = Vec::new();
    for k in 0..3000 {
        let vars: Vec<Value> = (0..4)
            .map(|_| {
                let ty = any_type(&mut rng);
                Value::new(edgy(&mut rng, ty), ty)
            })
            .collect();
        for (i, v) in vars.iter().enumerate() {
            globals.push_str(&format!(
                "volatile {} e{k}_{i} = {};\n",
                v.ty.spelling(),
                super::cint::literal(v.v, v.ty)
            ));
        }
        let e = expr(&mut rng, vars.len(), 3);
        cases.push(Case { text: e.render(&|i| format!("e{k}_{i}")), model: e.eval(&vars) });
    }
    let mut body = String::new();
    let mut line_of = HashMap::new();
    let header_lines = 3 + globals.lines().count();
    for (k, c) in cases.iter().enumerate() {
        let guard = if c.model.is_ok() { format!("which < 0 || which == {k}") } else { format!("which == {k}") };
        line_of.insert(header_lines + 3 + k, k);
        body.push_str(&format!(
            "  if ({guard}) printf(\"{k} %llu %d\\n\", (unsigned long long)({}), _Generic(({}), {GENERIC}));\n",
            c.text, c.text
        ));
    }
    let program = format!(
        "#include <stdio.h>\n#include <stdlib.h>\n\n{globals}int main(int argc, char **argv) {{\n  int which = argc > 1 ? atoi(argv[1]) : -1;\n{body}  return 0;\n}}\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let (source, binary) = (dir.path().join("model.c"), dir.path().join("model"));
    std::fs::write(&source, &program).unwrap();
    let clang = crate::llvm::clang_for_this_llvm();
    let built = Command::new(&clang)
        .args(["-O0", "-w", "-fsanitize=undefined", "-fno-sanitize-recover=all"])
        .arg(&source)
        .arg("-o")
        .arg(&binary)
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));

    let all = Command::new(&binary).output().unwrap();
    let stderr = String::from_utf8_lossy(&all.stderr);
    if !all.status.success() {
        let line: usize = stderr.split(':').nth(1).and_then(|l| l.parse().ok()).unwrap_or(0);
        let k = line_of.get(&line).copied();
        panic!("UBSan stopped a run the model calls defined: {stderr}\n{:?}", k.map(|k| &cases[k].text));
    }
    let mut mismatches = Vec::new();
    let mut defined = 0;
    for line in String::from_utf8_lossy(&all.stdout).lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let (k, bits, code): (usize, u64, usize) =
            (f[0].parse().unwrap(), f[1].parse().unwrap(), f[2].parse().unwrap());
        let value = cases[k].model.unwrap();
        let expected = IntType::new(Rank::LongLong, false).convert(value.v) as u64;
        defined += 1;
        if bits != expected || code != type_code(value.ty) {
            mismatches
                .push(format!("{}: clang {bits} (type {code}), model {expected} ({:?})", cases[k].text, value.ty));
        }
    }
    assert_eq!(defined, cases.iter().filter(|c| c.model.is_ok()).count());
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches[..mismatches.len().min(10)].join("\n")
    );

    let undefined: Vec<usize> = (0..cases.len()).filter(|&k| cases[k].model.is_err()).collect();
    assert!(undefined.len() > 200, "too few undefined cases to test: {}", undefined.len());
    let missed: Vec<String> = undefined
        .iter()
        .filter(|&&k| {
            let run = Command::new(&binary).arg(k.to_string()).output().unwrap();
            run.status.success() || !String::from_utf8_lossy(&run.stderr).contains("runtime error")
        })
        .map(|&k| format!("{} ({:?})", cases[k].text, cases[k].model))
        .collect();
    assert!(
        missed.is_empty(),
        "UBSan finds nothing undefined in {}:\n{}",
        missed.len(),
        missed[..missed.len().min(10)].join("\n")
    );
}
