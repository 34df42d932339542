//! The parsed snapshot against a small C file with every shape the mutators care about.

use super::ast::{BinOp, Kind, Shape, UnOp};
use super::cint::{IntType, Rank};
use super::scope::{lvalues, points, visible};
use super::*;

const PROGRAM: &str = r#"#include <stdint.h>
struct S { int a; unsigned b : 3; int8_t c[2]; };
union U { int x; short y; };
static volatile int g = 1;
const long k = 5;
struct S s = {1, 2, {3, 4}};
int f(int p, unsigned char q) {
  int x = p + q;
  int u;
  for (int i = 0; i < 3; i++) {
    int y = i * 2;
    x += y;
  }
  { int x = 7; u = -x; }
  return x - u;
}
int main(void) { union U un; un.x = 1; return f(1, 2) + un.y; }
"#;

fn tu() -> Tu {
    parse_source(PROGRAM, &c_args()).unwrap()
}

fn find(tu: &Tu, text: &str) -> ast::NodeId {
    (0..tu.nodes.len()).find(|&i| tu.text(i) == text).unwrap_or_else(|| panic!("no node spells {text:?}"))
}

#[test]
fn the_tree_has_exact_ranges_operators_and_types() {
    let tu = tu();
    let names: Vec<&str> = tu.functions().iter().map(|&f| tu.node(f).name.as_str()).collect();
    assert_eq!(names, ["f", "main"]);
    assert_eq!(tu.node(find(&tu, "p + q")).binary, Some(BinOp::Add));
    assert_eq!(tu.node(find(&tu, "x += y")).binary, Some(BinOp::AddAssign));
    assert_eq!(tu.node(find(&tu, "i++")).unary, Some(UnOp::PostInc));
    assert_eq!(tu.node(find(&tu, "-x")).unary, Some(UnOp::Minus));
    let q = (0..tu.nodes.len()).find(|&i| tu.node(i).kind == Kind::ParmDecl && tu.node(i).name == "q").unwrap();
    assert_eq!(tu.node(q).ty.as_ref().unwrap().int(), Some(IntType::new(Rank::Char, false)));
    // A reference knows its declaration: the inner x, not the outer one.
    // (through the implicit conversion libclang shows as an unexposed expression)
    let use_of_x = find(&tu, "-x");
    let reference = tu.descendants(use_of_x).into_iter().find(|&d| tu.node(d).kind == Kind::DeclRefExpr).unwrap();
    let decl = tu.node(reference).referenced.unwrap();
    assert_eq!(tu.text(decl), "int x = 7");
}

#[test]
fn each_point_sees_the_innermost_variables_declared_before_it() {
    let tu = tu();
    let all = points(&tu);
    let at = |text: &str| all.iter().find(|p| tu.text(p.stmt) == text).unwrap_or_else(|| panic!("no point {text}"));
    let names = |text: &str| at(text).vars.iter().map(|v| v.name.clone()).collect::<Vec<_>>();
    assert_eq!(names("x += y"), ["y", "i", "u", "x", "p", "q", "s", "k", "g"]);
    assert!(at("x += y").in_loop);
    assert!(!at("return x - u").in_loop);
    let inner = at("u = -x");
    let x = inner.vars.iter().find(|v| v.name == "x").unwrap();
    assert_eq!(tu.text(x.decl), "int x = 7");
    let u = inner.vars.iter().find(|v| v.name == "u").unwrap();
    assert!(!u.initialized && x.initialized);
    // An array size is not an initializer.
    let arrays = parse_source("int main(void) { int a[3]; int b = 1; a[0] = b; return a[0]; }", &c_args()).unwrap();
    let p = points(&arrays).into_iter().find(|p| arrays.text(p.stmt) == "a[0] = b").unwrap();
    let init: Vec<(&str, bool)> = p.vars.iter().map(|v| (v.name.as_str(), v.initialized)).collect();
    assert_eq!(init, [("b", true), ("a", false)]);
    // The first statement of a body sees parameters and globals only.
    assert_eq!(names("int x = p + q;"), ["p", "q", "s", "k", "g"]);
    assert_eq!(visible(&tu, at("un.x = 1").stmt)[0].name, "un");
}

#[test]
fn lvalues_reach_fields_bit_fields_and_elements() {
    let tu = tu();
    let p = points(&tu).into_iter().find(|p| tu.text(p.stmt) == "return x - u").unwrap();
    let s = p.vars.iter().find(|v| v.name == "s").unwrap();
    let exprs: Vec<(String, IntType, bool)> =
        lvalues(&tu, s, 8).into_iter().map(|l| (l.expr, l.ty, l.bit_field)).collect();
    let schar = IntType::new(Rank::Char, true);
    assert_eq!(
        exprs,
        [
            ("s.a".to_string(), IntType::INT, false),
            ("s.b".to_string(), IntType::UINT.bit_field(3), true),
            ("s.c[0]".to_string(), schar, false),
            ("s.c[1]".to_string(), schar, false),
        ]
    );
    let g = p.vars.iter().find(|v| v.name == "g").unwrap();
    assert!(lvalues(&tu, g, 8)[0].is_volatile);
    let k = p.vars.iter().find(|v| v.name == "k").unwrap();
    assert!(lvalues(&tu, k, 8)[0].is_const);
    let main_point = points(&tu).into_iter().find(|p| tu.text(p.stmt) == "un.x = 1").unwrap();
    let un = lvalues(&tu, &main_point.vars[0], 8);
    assert!(un.iter().all(|l| l.in_union) && un.len() == 2);
    assert!(matches!(tu.records[0].fields[2].ty.shape, Shape::Array { len: 2, .. }));
}

#[test]
fn a_rewrite_that_does_not_compile_is_refused() {
    let tu = tu();
    let ret = find(&tu, "return x - u");
    let at = tu.node(ret).start;
    let ok = rewrite(&tu, &[Edit::insert(at, "u = u + 0; ")], &c_args()).unwrap();
    assert!(ok.source.contains("u = u + 0; return x - u;"));
    let err = rewrite(&tu, &[Edit::insert(at, "nosuch = 1; ")], &c_args()).unwrap_err();
    assert!(err.to_string().contains("nosuch"), "{err}");
    let err = parse_source("int main(void) { return undeclared; }", &c_args()).unwrap_err();
    assert!(err.to_string().contains("undeclared"), "{err}");
}

#[test]
fn edits_apply_back_to_front_on_the_original_offsets() {
    let s = "int a = 1; int b = 2;";
    let edits = [Edit::replace(8, 9, "41"), Edit::insert(0, "/*x*/ "), Edit::insert(11, "int c; ")];
    assert_eq!(apply(s, &edits).unwrap(), "/*x*/ int a = 41; int c; int b = 2;");
    assert_eq!(apply(s, &[Edit::replace(4, 9, "x"), Edit::replace(8, 10, "y")]), Err(EditError::Overlap(4, 9, 8, 10)));
    assert!(matches!(apply(s, &[Edit::insert(99, "z")]), Err(EditError::OutOfRange(..))));
    // An insertion where a replacement starts comes first.
    assert_eq!(apply("ab", &[Edit::replace(0, 1, "X"), Edit::insert(0, "<")]).unwrap(), "<Xb");
}
