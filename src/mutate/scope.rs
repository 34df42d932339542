//! Program points and scopes: the statements of function bodies that code can be put in
//! front of, and the variables visible there with their types, down to every integer
//! lvalue a variable holds (struct fields, array elements).

use std::collections::HashSet;

use super::ast::{Kind, NodeId, Shape, Tu, Ty};
use super::cint::IntType;

/// A variable visible at a point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Var {
    pub decl: NodeId,
    pub name: String,
    pub ty: Ty,
    pub global: bool,
    /// Has a value on every path to the point: globals, statics, parameters and locals
    /// declared with an initializer.
    pub initialized: bool,
}

/// The point just before a statement that is a member of a compound statement.
#[derive(Debug, Clone)]
pub struct Point {
    pub stmt: NodeId,
    pub function: NodeId,
    /// Byte offset of the statement: where code is inserted.
    pub offset: usize,
    /// Inside a loop of its function (so `break` and `continue` are allowed here).
    pub in_loop: bool,
    /// Visible variables, innermost first; a shadowed outer variable is left out.
    pub vars: Vec<Var>,
}

/// Every point of every function body, in source order.
pub fn points(tu: &Tu) -> Vec<Point> {
    statements(tu).into_iter().map(|(stmt, function)| point(tu, stmt, function)).collect()
}

/// The statements that have a point before them, with their function, in source order:
/// cheap, for choosing points before computing their scopes.
pub fn statements(tu: &Tu) -> Vec<(NodeId, NodeId)> {
    let mut out = Vec::new();
    for function in tu.functions() {
        for id in tu.descendants(function) {
            if tu.node(id).kind == Kind::CompoundStmt {
                out.extend(tu.node(id).children.iter().map(|&stmt| (stmt, function)));
            }
        }
    }
    out
}

/// The point before `stmt` (a member of a compound statement of `function`).
pub fn point(tu: &Tu, stmt: NodeId, function: NodeId) -> Point {
    Point {
        stmt,
        function,
        offset: tu.node(stmt).start,
        in_loop: tu.ancestors(stmt).take_while(|&a| a != function).any(|a| tu.node(a).kind.is_loop()),
        vars: visible(tu, stmt),
    }
}

fn var(tu: &Tu, decl: NodeId, global: bool) -> Option<Var> {
    let node = tu.node(decl);
    let ty = node.ty.clone()?;
    Some(Var {
        decl,
        name: node.name.clone(),
        ty,
        global,
        initialized: global || node.is_static || node.kind == Kind::ParmDecl || node.has_initializer,
    })
}

/// The variables visible just before `stmt`.
pub fn visible(tu: &Tu, stmt: NodeId) -> Vec<Var> {
    let mut found: Vec<Var> = Vec::new();
    // A set, not a search of `found`: csmith programs have hundreds of globals, and the
    // quadratic search was a third of the CPU of Hermes's variants test (in memcmp).
    let mut names: HashSet<String> = HashSet::new();
    let mut add = |v: Option<Var>, found: &mut Vec<Var>| {
        if let Some(v) = v {
            if names.insert(v.name.clone()) {
                found.push(v);
            }
        }
    };
    let mut child = stmt;
    for ancestor in tu.ancestors(stmt) {
        let node = tu.node(ancestor);
        let before = node.children.iter().copied().take_while(|&c| c != child);
        match node.kind {
            Kind::CompoundStmt | Kind::ForStmt => {
                let earlier: Vec<NodeId> = before.filter(|&c| tu.node(c).kind == Kind::DeclStmt).collect();
                for decl_stmt in earlier.into_iter().rev() {
                    for &d in tu.node(decl_stmt).children.iter().rev() {
                        if tu.node(d).kind == Kind::VarDecl {
                            add(var(tu, d, false), &mut found);
                        }
                    }
                }
            }
            Kind::FunctionDecl => {
                for &p in &node.children {
                    if tu.node(p).kind == Kind::ParmDecl {
                        add(var(tu, p, false), &mut found);
                    }
                }
            }
            Kind::TranslationUnit => {
                let globals: Vec<NodeId> = before.filter(|&c| tu.node(c).kind == Kind::VarDecl).collect();
                for g in globals.into_iter().rev() {
                    add(var(tu, g, true), &mut found);
                }
            }
            _ => {}
        }
        child = ancestor;
    }
    found
}

/// An integer lvalue inside a variable: `g_3[1][0].f2`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lvalue {
    pub expr: String,
    pub ty: IntType,
    /// Declared `const` somewhere along the path.
    pub is_const: bool,
    /// Declared `volatile` somewhere along the path.
    pub is_volatile: bool,
    /// Inside a union (writing it changes its siblings).
    pub in_union: bool,
    pub bit_field: bool,
}

/// The integer lvalues of `v`: itself, its fields, and of each array at most
/// `max_elements` elements (the first ones); pointers and floating point are not followed.
pub fn lvalues(tu: &Tu, v: &Var, max_elements: usize) -> Vec<Lvalue> {
    let mut out = Vec::new();
    let base = Lvalue {
        expr: v.name.clone(),
        ty: IntType::INT,
        is_const: false,
        is_volatile: false,
        in_union: false,
        bit_field: false,
    };
    walk(tu, &v.ty, base, max_elements, &mut out);
    out
}

fn walk(tu: &Tu, ty: &Ty, at: Lvalue, max_elements: usize, out: &mut Vec<Lvalue>) {
    let at = Lvalue { is_const: at.is_const || ty.is_const, is_volatile: at.is_volatile || ty.is_volatile, ..at };
    match &ty.shape {
        Shape::Int(int) => out.push(Lvalue { ty: *int, ..at }),
        Shape::Array { element, len } => {
            for i in 0..(*len as usize).min(max_elements) {
                if out.len() >= max_elements {
                    return;
                }
                walk(tu, element, Lvalue { expr: format!("{}[{i}]", at.expr), ..at.clone() }, max_elements, out);
            }
        }
        Shape::Record(r) => {
            let record = &tu.records[*r];
            for field in &record.fields {
                if field.name.is_empty() {
                    continue;
                }
                let next = Lvalue {
                    expr: format!("{}.{}", at.expr, field.name),
                    in_union: at.in_union || record.is_union,
                    bit_field: field.bit_width.is_some(),
                    ..at.clone()
                };
                walk(tu, &field.ty, next, max_elements, out);
            }
        }
        _ => {}
    }
}
