//! DiWi's rule table against a program that has a site for every rule.

use std::collections::HashMap;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::mutate::witness::{Mutator, RuleClass};
use crate::mutate::{c_args, parse_source};

/// Every operator, qualifier and modifier DiWi rewrites, on variables of fitting types.
const PROGRAM: &str = r#"#include <stdio.h>
#include <stdint.h>
static int32_t g = 3;
volatile unsigned long vl = 7UL;
const short cs = 2;
signed char sc = 1;
long long ll = 5;
int sum(int *restrict p, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += p[i];
  return s;
}
int main(void) {
  int a = 12, b = 5, c = 0;
  unsigned u = 9u;
  int arr[4] = {1, 2, 3, 4};
  int *q = arr;
  c = a + b; c = a - b; c = a * b; c = a / b; c = a % b;
  c = a > b; c = a < b; c = a <= b; c = a >= b; c = a == b; c = a != b;
  c = a & b; c = a ^ b; c = a | b; c = a << 1; c = a >> 1;
  c = a && b; c = a || b;
  c += a; c -= b; c *= 2; c /= 3; c %= 5;
  c <<= 1; c >>= 1; c &= a; c ^= b; c |= a;
  ++a; --b; a++; b--; c = ~a;
  u = u + 0x10;
  printf("%d %d %d %u %d %d\n", a, b, c, u, sum(q, 4), g + cs + sc + (int)ll + (int)vl);
  return 0;
}
"#;

#[test]
fn diwi_has_132_rules_in_the_papers_families() {
    let rules = diwi_rules();
    assert_eq!(rules.len(), 132);
    let mut by_class: HashMap<RuleClass, usize> = HashMap::new();
    for r in &rules {
        *by_class.entry(r.info().class).or_default() += 1;
    }
    let expected = [
        (RuleClass::AddQualifier, 3),
        (RuleClass::AddModifier, 4),
        (RuleClass::Remove, 7),
        (RuleClass::Binary, 88),
        (RuleClass::Unary, 25),
        (RuleClass::Constant, 4),
        (RuleClass::Variable, 1),
    ];
    assert_eq!(by_class, expected.into_iter().collect());
    let names: std::collections::HashSet<&str> = rules.iter().map(|r| r.info().name.as_str()).collect();
    assert_eq!(names.len(), 132, "rule names are unique");
    // The paper's numbering: rule 1 adds volatile, 15 is the first binary, 132 renames.
    assert_eq!(rules[0].info().name, "add volatile");
    assert_eq!(rules[14].info().name, "binary + -> -");
    assert_eq!(rules[102].info().name, "unary pre++ -> pre--");
    assert_eq!(rules[131].info().name, "replace variable");
}

#[test]
fn every_rule_makes_a_compiling_mutant_of_a_program_with_all_its_sites() {
    let mutator = CMutator::new(diwi_rules(), c_args());
    let mut failures = Vec::new();
    for (i, info) in mutator.rules().to_vec().iter().enumerate() {
        let mut compiled = 0;
        let mut errors = Vec::new();
        for seed in 0..6 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let Some(m) = mutator.mutate(PROGRAM, i, &mut rng).unwrap() else { continue };
            assert_ne!(m.text, PROGRAM, "{}: a mutant differs from its program", info.name);
            match parse_source(&m.text, &c_args()) {
                Ok(_) => compiled += 1,
                Err(e) => errors.push(format!("{} ({e})", m.description)),
            }
        }
        if compiled == 0 {
            failures.push(format!("rule {} '{}': no compiling mutant; {errors:?}", i + 1, info.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn edits_are_the_ones_the_paper_names() {
    let mutator = CMutator::new(diwi_rules(), c_args());
    let by_name = |name: &str| mutator.rules().iter().position(|r| r.name == name).unwrap();
    let once = |name: &str, program: &str| {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        mutator.mutate(program, by_name(name), &mut rng).unwrap().map(|m| m.text)
    };
    let p = "int f(int a) { int x = a + 1; return x; }\n";
    assert_eq!(once("binary + -> *", p).unwrap(), "int f(int a) { int x = a * 1; return x; }\n");
    assert_eq!(once("constant c-1", p).unwrap(), "int f(int a) { int x = a + 0; return x; }\n");
    assert_eq!(once("constant -c", p).unwrap(), "int f(int a) { int x = a + (-1); return x; }\n");
    assert_eq!(once("add unsigned", p).unwrap(), "int f(int a) { unsigned int x = a + 1; return x; }\n");
    assert_eq!(once("add long", p).unwrap(), "int f(int a) { long int x = a + 1; return x; }\n");
    let t = "#include <stdint.h>\nint32_t g = 1;\nint main(void) { return g; }\n";
    assert!(once("add unsigned", t).unwrap().contains("uint32_t g = 1;"));
    assert!(once("add short", t).unwrap().contains("int16_t g = 1;"));
    assert_eq!(once("remove long", t), None, "int32_t has no long to remove");
    let u = "unsigned x = 3;\nint main(void) { return x; }\n";
    assert!(once("remove unsigned", u).unwrap().starts_with("int x = 3;"), "{:?}", once("remove unsigned", u));
    let v = "int main(void) { int i = 0; i++; return ~i; }\n";
    assert!(once("unary post++ -> pre--", v).unwrap().contains("--(i);"));
    assert!(once("unary delete ~", v).unwrap().contains("return (i);"));
    // No initialized variable of the same type: nothing to rename to.
    let w = "int main(void) { double d = 1.0; int k; int j = 2; k = j; return k; }\n";
    let renamed = once("replace variable", w);
    assert!(renamed.as_deref().is_none_or(|t| !t.contains("k = k") && !t.contains("= d")), "{renamed:?}");
}

#[test]
fn a_change_inside_what_the_program_prints_is_marked() {
    let mutator = CMutator::new(diwi_rules(), c_args());
    let rule = mutator.rules().iter().position(|r| r.name == "constant c+1").unwrap();
    let p = "#include <stdio.h>\nint main(void) { printf(\"%d\\n\", 41); }\n";
    let m = mutator.mutate(p, rule, &mut ChaCha8Rng::seed_from_u64(0)).unwrap().unwrap();
    assert!(m.text.contains("42") && m.touches_output, "{m:?}");
    let q = "#include <stdio.h>\nint main(void) { int x = 41; printf(\"%d\\n\", x); }\n";
    let m = mutator.mutate(q, rule, &mut ChaCha8Rng::seed_from_u64(0)).unwrap().unwrap();
    assert!(m.text.contains("x = 42") && !m.touches_output, "{m:?}");
    assert_eq!(m.line, 2);
}
