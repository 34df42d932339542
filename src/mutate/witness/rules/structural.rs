//! RecBi's structural rules (spec recbi.md §5.2): put an `if` or a `while` around a
//! statement, a forward `goto` between two statements, or a call to a copied function in
//! front of one. Conditions and functions come from the ingredient corpus, their free
//! variables renamed to integer variables visible where they land.

use std::sync::Arc;

use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, RngExt};

use super::Rule;
use crate::mutate::ast::{Kind, NodeId, Shape, Tu};
use crate::mutate::scope::{statements, visible, Var};
use crate::mutate::witness::ingredients::{Corpus, FreeVar, Ingredient, IngredientKind};
use crate::mutate::witness::{RuleClass, RuleInfo, OUTPUT_CALLS};
use crate::mutate::Edit;

/// Ingredients tried per site before it is given up: most fit any site with an integer.
const TRIES: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Function,
    If,
    While,
    Goto,
}

struct Structural {
    info: RuleInfo,
    op: Op,
    corpus: Arc<Corpus>,
}

/// addFunction, addIf, addWhile, addGoto, in that order.
pub fn structural_rules(corpus: Arc<Corpus>) -> Vec<Box<dyn Rule>> {
    [
        ("addFunction", RuleClass::AddFunction, Op::Function),
        ("addIf", RuleClass::AddIf, Op::If),
        ("addWhile", RuleClass::AddWhile, Op::While),
        ("addGoto", RuleClass::AddGoto, Op::Goto),
    ]
    .into_iter()
    .map(|(name, class, op)| {
        Box::new(Structural { info: RuleInfo { name: name.into(), class }, op, corpus: corpus.clone() })
            as Box<dyn Rule>
    })
    .collect()
}

/// The statements code may go in front of (spec §5.2 step 2): members of a function's
/// compound statements that are not declarations (an `if` would capture them), labels or
/// case labels (the new code would not be reached the same way), nor the program's oracle:
/// a `return`, or anything that prints or aborts.
pub fn insertable(tu: &Tu) -> Vec<NodeId> {
    statements(tu).into_iter().map(|(stmt, _)| stmt).filter(|&s| is_insertable(tu, s)).collect()
}

fn is_insertable(tu: &Tu, stmt: NodeId) -> bool {
    let kind = tu.node(stmt).kind;
    if matches!(kind, Kind::DeclStmt | Kind::LabelStmt | Kind::CaseStmt | Kind::DefaultStmt | Kind::ReturnStmt) {
        return false;
    }
    !tu.descendants(stmt).into_iter().any(|d| {
        let n = tu.node(d);
        n.kind == Kind::CallExpr && OUTPUT_CALLS.contains(&n.name.as_str())
    })
}

/// Where `stmt` ends, its `;` included: clang's extent of `x = 1;` or `if (c) x = 1;`
/// stops before it. A `;` that starts a sibling is that sibling's own null statement.
fn statement_end(tu: &Tu, stmt: NodeId) -> usize {
    let end = tu.node(stmt).end;
    let Some(rest) = tu.source.get(end..) else { return end };
    let gap = rest.len() - rest.trim_start().len();
    if !rest[gap..].starts_with(';') {
        return end;
    }
    let semi = end + gap;
    let sibling = tu.node(stmt).parent.is_some_and(|p| tu.node(p).children.iter().any(|&c| tu.node(c).start == semi));
    if sibling {
        end
    } else {
        semi + 1
    }
}

/// A `break`, `continue` or case label in `stmt` that an enclosing loop would capture.
fn escapes(tu: &Tu, stmt: NodeId) -> bool {
    let caught = |d: NodeId, by: &dyn Fn(Kind) -> bool| {
        for a in tu.ancestors(d) {
            if by(tu.node(a).kind) {
                return true;
            }
            if a == stmt {
                break;
            }
        }
        false
    };
    tu.descendants(stmt).into_iter().any(|d| match tu.node(d).kind {
        Kind::BreakStmt => !caught(d, &|k| k.is_loop() || k == Kind::SwitchStmt),
        Kind::ContinueStmt => !caught(d, &|k| k.is_loop()),
        Kind::CaseStmt | Kind::DefaultStmt => !caught(d, &|k| k == Kind::SwitchStmt),
        _ => false,
    })
}

/// Whether the program can call csmith's safe-math wrappers.
fn has_helpers(tu: &Tu) -> bool {
    tu.source.contains("csmith.h")
}

/// The integer variables at `stmt`, the initialized ones only when there are any: reading
/// an uninitialized one would be undefined.
fn integers(tu: &Tu, stmt: NodeId, globals_only: bool) -> Vec<Var> {
    let mut vars: Vec<Var> = visible(tu, stmt)
        .into_iter()
        .filter(|v| matches!(v.ty.shape, Shape::Int(_)) && (v.global || !globals_only))
        .collect();
    if vars.iter().any(|v| v.initialized) {
        vars.retain(|v| v.initialized);
    }
    vars
}

/// A seed variable for each free variable: writable where the ingredient writes, of the
/// same type more often than not (any integer type is valid C) and always when the
/// ingredient takes its address (pointer types must match).
fn bind(free: &[FreeVar], vars: &[Var], rng: &mut dyn Rng) -> Option<Vec<String>> {
    free.iter()
        .map(|f| {
            let fits: Vec<&Var> = vars.iter().filter(|v| !f.written || !v.ty.is_const).collect();
            let same: Vec<&Var> = fits.iter().copied().filter(|v| v.ty.int() == f.int()).collect();
            let pool = if f.addressed || (!same.is_empty() && rng.random_bool(0.7)) { &same } else { &fits };
            pool.choose(rng).map(|v| v.name.clone())
        })
        .collect()
}

/// An ingredient of `kind` that fits the program, with its free variables bound to `vars`.
fn pick<'a>(
    corpus: &'a Corpus,
    kind: IngredientKind,
    helpers: bool,
    vars: &[Var],
    rng: &mut dyn Rng,
) -> Option<(&'a Ingredient, Vec<String>)> {
    let pool: Vec<&Ingredient> = corpus.of(kind).iter().filter(|i| helpers || !i.helpers).collect();
    for _ in 0..TRIES {
        let ingredient = *pool.choose(rng)?;
        // A function's own parameter or local of the same name would capture the renamed use.
        let unclaimed: Vec<Var> = vars
            .iter()
            .filter(|v| kind != IngredientKind::Function || !mentions(&ingredient.text, &v.name))
            .cloned()
            .collect();
        if let Some(names) = bind(&ingredient.vars, &unclaimed, rng) {
            return Some((ingredient, names));
        }
    }
    None
}

/// Whether `name` occurs in `text` as a whole identifier.
pub(crate) fn mentions(text: &str, name: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        !text[..at].chars().next_back().is_some_and(ident) && !text[at + name.len()..].chars().next().is_some_and(ident)
    })
}

/// A name starting with `prefix` that occurs nowhere in the program.
fn fresh(tu: &Tu, prefix: &str) -> String {
    (0..).map(|n| format!("{prefix}{n}")).find(|name| !tu.source.contains(name.as_str())).unwrap_or_default()
}

impl Structural {
    fn condition(&self, tu: &Tu, stmt: NodeId, kind: IngredientKind, rng: &mut dyn Rng) -> Option<String> {
        let vars = integers(tu, stmt, false);
        if vars.is_empty() {
            return None;
        }
        let (ingredient, names) = pick(&self.corpus, kind, has_helpers(tu), &vars, rng)?;
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        ingredient.instantiate(&names)
    }

    fn add_if(&self, tu: &Tu, stmt: NodeId, rng: &mut dyn Rng) -> Option<Vec<Edit>> {
        let cond = self.condition(tu, stmt, IngredientKind::Branch, rng)?;
        Some(vec![Edit::insert(tu.node(stmt).start, format!("if ({cond}) "))])
    }

    fn add_while(&self, tu: &Tu, stmt: NodeId, rng: &mut dyn Rng) -> Option<Vec<Edit>> {
        if escapes(tu, stmt) {
            return None;
        }
        let cond = self.condition(tu, stmt, IngredientKind::Loop, rng)?;
        Some(vec![
            Edit::insert(tu.node(stmt).start, format!("while ({cond}) {{ ")),
            Edit::insert(statement_end(tu, stmt), " }"),
        ])
    }

    fn add_function(&self, tu: &Tu, stmt: NodeId, rng: &mut dyn Rng) -> Option<Vec<Edit>> {
        let function = tu.function_of(stmt)?;
        let globals = integers(tu, stmt, true);
        let (ingredient, names) = pick(&self.corpus, IngredientKind::Function, has_helpers(tu), &globals, rng)?;
        let shape = ingredient.function.as_ref()?;
        let name = fresh(tu, "ctos_fn_");
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let definition = ingredient.renamed_function(&name, &names)?;
        let vars = integers(tu, stmt, false);
        let args: Vec<String> = shape
            .params
            .iter()
            .map(|_| match vars.choose(rng) {
                Some(v) => v.name.clone(),
                None => rng.random_range(0..10).to_string(),
            })
            .collect();
        Some(vec![
            Edit::insert(tu.node(function).start, format!("{definition}\n\n")),
            Edit::insert(tu.node(stmt).start, format!("{name}({});\n", args.join(", "))),
        ])
    }

    /// `goto L;` at `from`, `L:` at a later statement of the same function that the jump
    /// reaches without entering the scope of a declaration it skips: such a variable would
    /// be read uninitialized, and a variable-length array's scope cannot be entered.
    /// Backward jumps are not made: they can loop forever.
    fn add_goto(&self, tu: &Tu, from: NodeId, rng: &mut dyn Rng) -> Option<Vec<Edit>> {
        let function = tu.function_of(from)?;
        let start = tu.node(from).start;
        let mut targets: Vec<NodeId> = statements(tu)
            .into_iter()
            .filter(|&(s, f)| f == function && tu.node(s).start > start && is_insertable(tu, s))
            .map(|(s, _)| s)
            .collect();
        targets.shuffle(rng);
        let to = targets.into_iter().find(|&to| !skips_declaration(tu, start, to))?;
        let label = fresh(tu, "ctos_label_");
        Some(vec![
            Edit::insert(start, format!("goto {label}; ")),
            Edit::insert(tu.node(to).start, format!("{label}: ")),
        ])
    }
}

/// Whether a variable in scope at `to` is declared after `from`: a jump from `from` skips it.
fn skips_declaration(tu: &Tu, from: usize, to: NodeId) -> bool {
    visible(tu, to).iter().any(|v| {
        let decl = tu.node(v.decl);
        !v.global && decl.kind == Kind::VarDecl && !decl.is_static && decl.start > from
    })
}

impl Rule for Structural {
    fn info(&self) -> &RuleInfo {
        &self.info
    }

    fn sites(&self, tu: &Tu) -> Vec<NodeId> {
        let mut sites = insertable(tu);
        match self.op {
            Op::While => sites.retain(|&s| !escapes(tu, s)),
            Op::Goto => {
                // A goto needs a later statement of its function to land on.
                let ends: Vec<(Option<NodeId>, usize)> = tu
                    .functions()
                    .into_iter()
                    .filter_map(|f| {
                        let starts = sites.iter().filter(|&&s| tu.function_of(s) == Some(f));
                        starts.map(|&s| tu.node(s).start).max().map(|at| (Some(f), at))
                    })
                    .collect();
                sites.retain(|&s| {
                    let f = tu.function_of(s);
                    ends.iter().any(|&(ef, at)| ef == f && tu.node(s).start < at)
                });
            }
            Op::If | Op::Function => {}
        }
        sites
    }

    fn edits(&self, tu: &Tu, site: NodeId, rng: &mut dyn Rng) -> Option<Vec<Edit>> {
        match self.op {
            Op::Function => self.add_function(tu, site, rng),
            Op::If => self.add_if(tu, site, rng),
            Op::While => self.add_while(tu, site, rng),
            Op::Goto => self.add_goto(tu, site, rng),
        }
    }
}
