//! The structural rules on a hand-written program and a csmith program: their mutants
//! compile, inserted conditions name variables visible where they land, gotos skip no
//! declaration, and most csmith mutants still terminate.

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::structural::insertable;
use super::{structural_rules, CMutator};
use crate::mutate::ast::Kind;
use crate::mutate::hermes::{output_at_o0, EmiConfig};
use crate::mutate::scope::visible;
use crate::mutate::witness::ingredients::tests::test_corpus;
use crate::mutate::witness::Mutator;
use crate::mutate::{apply, c_args, parse_source};

const HAND: &str = r#"int printf(const char *, ...);
int g = 3;
unsigned char h = 7;

static int sum(int n) {
    int s = 0;
    int i;
    for (i = 0; i < n; i++) {
        s += i;
        if (s > 100)
            break;
    }
    s = s * 2;
    return s;
}

int main(void) {
    int a = 1, b = 2;
    long c = 5;
    a = a + b;
    b = sum(a);
    if (a < b) { c = c - 1; } else c++;
    while (c > 0) { c--; g++; }
    h = h ^ 3;
    printf("%d %d %ld %d %d\n", a, b, c, g, h);
    return 0;
}
"#;

fn csmith3() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| crate::mutate::witness::ingredients::csmith(3).expect("csmith --seed 3"))
}

const NAMES: [&str; 4] = ["addFunction", "addIf", "addWhile", "addGoto"];

/// Per rule: mutants returned, mutants that compile, and the first few clang errors.
fn compile_rates(program: &str, draws: u64) -> Vec<(usize, usize, Vec<String>)> {
    let mutator = CMutator::new(structural_rules(test_corpus()), c_args());
    (0..NAMES.len())
        .map(|rule| {
            let (mut returned, mut compiled, mut errors) = (0, 0, Vec::new());
            for seed in 0..draws {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let Some(m) = mutator.mutate(program, rule, &mut rng).expect("the program parses") else { continue };
                returned += 1;
                match parse_source(&m.text, &c_args()) {
                    Ok(_) => compiled += 1,
                    Err(e) if errors.len() < 3 => errors.push(format!("{}: {e}", m.description)),
                    Err(_) => {}
                }
            }
            (returned, compiled, errors)
        })
        .collect()
}

fn check_rates(program: &str) {
    let rates = compile_rates(program, 10);
    let mut problems = Vec::new();
    for (name, (returned, compiled, errors)) in NAMES.iter().zip(&rates) {
        eprintln!("{name}: {compiled} of {returned} mutants compile {errors:?}");
        if *compiled == 0 || compiled * 5 < returned * 4 {
            problems.push(format!("{name}: {compiled} of {returned} compile; {errors:#?}"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn the_four_rules_come_in_order_with_their_classes() {
    let rules = structural_rules(test_corpus());
    let names: Vec<&str> = rules.iter().map(|r| r.info().name.as_str()).collect();
    assert_eq!(names, NAMES);
    assert!(rules.iter().all(|r| r.info().class.is_structural()));
}

#[test]
fn mutants_of_a_hand_written_program_compile() {
    check_rates(HAND);
}

#[test]
fn mutants_of_a_csmith_program_compile() {
    check_rates(csmith3());
}

#[test]
fn no_location_is_a_declaration_a_label_or_the_oracle() {
    let tu = parse_source(csmith3(), &c_args()).unwrap();
    let sites = insertable(&tu);
    assert!(sites.len() > 20, "{} sites", sites.len());
    for s in sites {
        let n = tu.node(s);
        assert!(!matches!(n.kind, Kind::DeclStmt | Kind::LabelStmt | Kind::ReturnStmt | Kind::CaseStmt), "{n:?}");
        assert!(!tu.text(s).contains("printf") && !tu.text(s).contains("transparent_crc"), "{}", tu.text(s));
    }
}

/// The condition of the `if`/`while` that `rule` inserts, from a few draws: every
/// variable it names is a declaration visible at the statement it guards.
fn inserted_conditions_resolve(program: &str, rule: usize, kind: Kind) -> usize {
    let rules = structural_rules(test_corpus());
    let tu = parse_source(program, &c_args()).unwrap();
    let sites = rules[rule].sites(&tu);
    let mut checked = 0;
    for seed in 0..12u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let site = sites[(seed as usize * 7919) % sites.len()];
        let Some(edits) = rules[rule].edits(&tu, site, &mut rng) else { continue };
        let text = apply(&tu.source, &edits).unwrap();
        let Ok(mutant) = parse_source(&text, &c_args()) else { continue };
        let at = tu.node(site).start;
        let inserted = (0..mutant.nodes.len()).find(|&i| mutant.node(i).kind == kind && mutant.node(i).start == at);
        let inserted = inserted.unwrap_or_else(|| panic!("no {kind:?} at {at} in\n{text}"));
        let cond = mutant.node(inserted).children[0];
        let seen: Vec<(String, usize)> =
            visible(&tu, site).into_iter().map(|v| (v.name, tu.node(v.decl).start)).collect();
        for d in mutant.descendants(cond) {
            let n = mutant.node(d);
            if n.kind != Kind::DeclRefExpr || crate::mutate::witness::ingredients::is_helper(&n.name) {
                continue;
            }
            let decl = n.referenced.map(|r| mutant.node(r).start);
            assert!(
                decl.is_some_and(|start| seen.contains(&(n.name.clone(), start))),
                "{} in `{}` is not a variable visible at the statement",
                n.name,
                mutant.text(cond)
            );
        }
        checked += 1;
    }
    checked
}

#[test]
fn inserted_conditions_name_visible_variables() {
    for program in [HAND, csmith3()] {
        assert!(inserted_conditions_resolve(program, 1, Kind::IfStmt) > 0);
        assert!(inserted_conditions_resolve(program, 2, Kind::WhileStmt) > 0);
    }
}

const GOTO: &str = r#"int main(void) {
    int a = 1;
    a = a + 1;
    int b = a * 2;
    b = b + a;
    { int c = b; c++; a = c; }
    a = b;
    return a;
}
"#;

#[test]
fn goto_never_skips_an_initialized_declaration() {
    let rules = structural_rules(test_corpus());
    let tu = parse_source(GOTO, &c_args()).unwrap();
    let at = |s: &str| GOTO.find(s).unwrap();
    let (first, second, block) = (at("a = a + 1"), at("b = b + a"), at("{ int c"));
    let safe_labels = [block, at("a = b;")];
    let mut landed = Vec::new();
    for site in rules[3].sites(&tu) {
        for seed in 0..8u64 {
            let edits = rules[3].edits(&tu, site, &mut ChaCha8Rng::seed_from_u64(seed));
            let from = tu.node(site).start;
            if from == first {
                assert_eq!(edits, None, "a goto before `int b = …` skips it whatever label follows");
                continue;
            }
            let Some(edits) = edits else { continue };
            let label = edits.iter().find(|e| e.text.ends_with(": ")).unwrap().start;
            // Inside the block only a goto that is itself past `int c` may land.
            let safe = safe_labels.contains(&label) || (from > block && label > from);
            assert!(safe, "goto at {from}, label at {label}: {}", &GOTO[label..]);
            parse_source(&apply(GOTO, &edits).unwrap(), &c_args()).unwrap();
            landed.push((from, label));
        }
    }
    assert!(landed.iter().any(|&(from, _)| from == second), "the safe goto after `int b` was never made");
}

#[test]
fn most_csmith_mutants_terminate() {
    let config = EmiConfig { timeout: Duration::from_secs(3), ..EmiConfig::default() };
    let mutator = CMutator::new(structural_rules(test_corpus()), c_args());
    let mut mutants = Vec::new();
    for rule in 0..NAMES.len() {
        for seed in 0..4u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(100 + seed);
            if let Ok(Some(m)) = mutator.mutate(csmith3(), rule, &mut rng) {
                mutants.push((rule, m.text));
            }
        }
    }
    let next = Mutex::new(mutants.iter());
    let ended = Mutex::new(vec![(0usize, 0usize); NAMES.len()]);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let Some((rule, text)) = next.lock().unwrap().next() else { break };
                let ok = output_at_o0(text, &config).is_ok();
                let mut e = ended.lock().unwrap();
                e[*rule].0 += usize::from(ok);
                e[*rule].1 += 1;
            });
        }
    });
    let ended = ended.into_inner().unwrap();
    for (name, (ok, all)) in NAMES.iter().zip(&ended) {
        eprintln!("{name}: {ok} of {all} csmith mutants ran to the end within 3 s");
    }
    let (ok, all) = ended.iter().fold((0, 0), |(a, b), (x, y)| (a + x, b + y));
    assert!(all >= 8 && ok * 2 >= all, "{ok} of {all} mutants terminated");
}

#[test]
fn a_copied_function_does_not_capture_the_global_it_is_given() {
    let text = "static int ctos_fn_0(int x) { int g = x; return g + 1; }";
    assert!(super::structural::mentions(text, "g") && super::structural::mentions(text, "x"));
    assert!(!super::structural::mentions(text, "ctos") && !super::structural::mentions(text, "fn_0"));
}
