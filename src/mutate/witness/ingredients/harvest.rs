//! Taking ingredients out of one parsed file. Whatever is kept must compile in any seed once
//! its free variables are renamed, so every identifier of its text is accounted for: a
//! keyword, a standard integer typedef (spelled out as the builtin type it names, so the
//! seed needs no header), a free integer variable (a condition's variables, a function's
//! globals), a name a function declares itself, or one of csmith's safe-math wrappers
//! (then the ingredient is marked for csmith seeds only). Anything else (a macro, a pointer
//! or struct variable, any other call) makes the candidate unusable.

use std::collections::HashSet;

use crate::mutate::ast::{BinOp, Kind, NodeId, Tu, UnOp};

use super::{FreeVar, FunctionShape, Ingredient, IngredientKind, SourceKind};

/// Longest condition kept: long ones are mostly csmith's nested safe-math chains.
pub const MAX_CONDITION: usize = 200;
/// Longest function kept, so one insertion does not swamp a reduced seed.
pub const MAX_FUNCTION: usize = 2000;

/// Words a condition may contain besides its variables.
const CONDITION_WORDS: &[&str] = &[
    "sizeof", "char", "short", "int", "long", "signed", "unsigned", "const", "volatile", "_Bool", "float", "double",
    "void",
];

/// Words a function may also contain: its own statements.
const FUNCTION_WORDS: &[&str] = &[
    "if", "else", "for", "while", "do", "switch", "case", "default", "break", "continue", "return", "static",
    "register", "inline", "goto",
];

/// Integer typedefs from <stdint.h>/<stddef.h> and the builtin type each names on x86-64 Linux.
const TYPEDEFS: &[(&str, &str)] = &[
    ("int8_t", "signed char"),
    ("uint8_t", "unsigned char"),
    ("int16_t", "short"),
    ("uint16_t", "unsigned short"),
    ("int32_t", "int"),
    ("uint32_t", "unsigned int"),
    ("int64_t", "long"),
    ("uint64_t", "unsigned long"),
    ("size_t", "unsigned long"),
    ("ssize_t", "long"),
];

/// Every ingredient of `tu`, tagged with where it came from.
pub fn harvest(tu: &Tu, source: SourceKind, origin: &str) -> Vec<Ingredient> {
    let mut out = Vec::new();
    for (id, node) in tu.nodes.iter().enumerate() {
        let found = match node.kind {
            Kind::IfStmt => first_expression(tu, id).and_then(|c| condition(tu, c, IngredientKind::Branch)),
            Kind::WhileStmt => first_expression(tu, id).and_then(|c| condition(tu, c, IngredientKind::Loop)),
            Kind::DoStmt => node.children.last().copied().and_then(|c| condition(tu, c, IngredientKind::Loop)),
            Kind::ForStmt => for_condition(tu, id).and_then(|c| condition(tu, c, IngredientKind::Loop)),
            Kind::FunctionDecl if node.parent == Some(Tu::ROOT) && tu.body(id).is_some() => function(tu, id),
            _ => None,
        };
        if let Some(mut ingredient) = found {
            ingredient.source = source;
            ingredient.origin = origin.to_string();
            out.push(ingredient);
        }
    }
    out
}

fn first_expression(tu: &Tu, stmt: NodeId) -> Option<NodeId> {
    tu.node(stmt).children.first().copied().filter(|&c| tu.node(c).kind.is_expression())
}

/// libclang leaves a `for`'s missing parts out of its children, so the condition is the
/// expression child between the header's two top-level semicolons.
fn for_condition(tu: &Tu, stmt: NodeId) -> Option<NodeId> {
    let node = tu.node(stmt);
    let bytes = tu.source.as_bytes();
    let mut depth = 0usize;
    let mut semis = Vec::new();
    for (i, &b) in bytes.get(node.start..node.end)?.iter().enumerate() {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    break;
                }
            }
            b';' if depth == 1 => semis.push(node.start + i),
            _ => {}
        }
    }
    let (&first, &second) = (semis.first()?, semis.get(1)?);
    node.children.iter().copied().find(|&c| {
        let n = tu.node(c);
        n.kind.is_expression() && n.start > first && n.end <= second
    })
}

/// A word of C text and where it starts.
struct Word<'a> {
    at: usize,
    text: &'a str,
}

/// The identifiers and keywords of `text`, skipping comments, literals and numbers; `None`
/// when it holds something no ingredient should: a preprocessor line, a line continuation,
/// bytes outside ASCII outside comments.
fn words(text: &str) -> Option<Vec<Word<'_>>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            i = text[i..].find('\n').map_or(b.len(), |n| i + n);
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = text[i + 2..].find("*/").map(|n| i + 2 + n + 2)?;
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Word { at: start, text: &text[start..i] });
        } else if c == b'#' || c == b'\\' || c == b'$' || c == b'@' || !c.is_ascii() {
            return None;
        } else {
            i += 1;
        }
    }
    Some(out)
}

/// csmith's safe-math wrappers (`safe_add_func_int32_t_s_s`): pure, and declared in every
/// csmith program through csmith.h, so an ingredient calling them fits csmith seeds only.
pub fn is_helper(name: &str) -> bool {
    name.starts_with("safe_") && name.contains("_func_")
}

fn typedef(word: &str) -> Option<&'static str> {
    TYPEDEFS.iter().find(|(name, _)| *name == word).map(|(_, builtin)| *builtin)
}

/// `text` with its typedef words spelled out; `keep(word)` says where every other word
/// goes in the result, by the word's offset in the original; `None` when a word is
/// neither. Returns the new text and, per original offset that `keep` accepted, the new one.
fn spell_out(text: &str, mut keep: impl FnMut(&Word<'_>) -> bool) -> Option<(String, Vec<(usize, usize)>)> {
    let mut out = String::with_capacity(text.len());
    let mut moved = Vec::new();
    let mut at = 0;
    for w in words(text)? {
        if let Some(builtin) = typedef(w.text) {
            out.push_str(&text[at..w.at]);
            out.push_str(builtin);
            at = w.at + w.text.len();
        } else if keep(&w) {
            out.push_str(&text[at..w.at]);
            moved.push((w.at, out.len()));
            out.push_str(w.text);
            at = w.at + w.text.len();
        } else {
            return None;
        }
    }
    out.push_str(&text[at..]);
    Some((out, moved))
}

/// How an ingredient uses a reference.
#[derive(Clone, Copy, Default)]
struct Access {
    /// Assigned, incremented or address-taken.
    written: bool,
    /// Address taken: a pointer of its exact type is made.
    addressed: bool,
}

fn access(tu: &Tu, id: NodeId) -> Access {
    let mut child = id;
    let mut parent = tu.node(id).parent;
    while let Some(p) = parent.filter(|&p| tu.node(p).kind == Kind::ParenExpr) {
        child = p;
        parent = tu.node(p).parent;
    }
    let Some(p) = parent else { return Access::default() };
    let node = tu.node(p);
    match node.kind {
        Kind::UnaryOperator => Access {
            written: matches!(
                node.unary,
                Some(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec | UnOp::AddrOf)
            ),
            addressed: node.unary == Some(UnOp::AddrOf),
        },
        Kind::BinaryOperator | Kind::CompoundAssignOperator => Access {
            written: node.children.first() == Some(&child)
                && matches!(node.binary, Some(op) if op != BinOp::Comma && op.token().ends_with('=')
                    && !matches!(op, BinOp::Eq | BinOp::Ne | BinOp::Le | BinOp::Ge)),
            addressed: false,
        },
        _ => Access::default(),
    }
}

/// The condition expression `cond` as an ingredient, when every variable it names is an
/// integer declared outside it and it calls nothing.
fn condition(tu: &Tu, cond: NodeId, kind: IngredientKind) -> Option<Ingredient> {
    let node = tu.node(cond);
    let text = tu.source.get(node.start..node.end)?;
    if text.trim().is_empty() || text.trim() != text || text.len() > MAX_CONDITION {
        return None;
    }
    let mut vars: Vec<(NodeId, FreeVar, Vec<usize>)> = Vec::new();
    let mut helpers = false;
    for id in tu.descendants(cond) {
        let n = tu.node(id);
        if n.start < node.start || n.end > node.end || (n.kind == Kind::CallExpr && !is_helper(&n.name)) {
            return None;
        }
        if n.kind != Kind::DeclRefExpr {
            continue;
        }
        if is_helper(&n.name) && n.referenced.is_none() {
            helpers = true;
            continue;
        }
        let decl = n.referenced?;
        let d = tu.node(decl);
        let int = d.ty.as_ref().and_then(|t| t.int()).filter(|_| matches!(d.kind, Kind::VarDecl | Kind::ParmDecl))?;
        if tu.source.get(n.start..n.end)? != n.name {
            return None;
        }
        note_use(&mut vars, decl, &n.name, int.spelling(), access(tu, id), n.start - node.start);
    }
    if vars.is_empty() {
        return None;
    }
    let (text, moved) =
        spell_out(text, |w| CONDITION_WORDS.contains(&w.text) || is_use(&vars, w) || is_helper(w.text))?;
    let vars = relocate(vars, &moved);
    Some(Ingredient { kind, source: SourceKind::Csmith, origin: String::new(), text, vars, function: None, helpers })
}

type Uses = Vec<(NodeId, FreeVar, Vec<usize>)>;

fn note_use(vars: &mut Uses, decl: NodeId, name: &str, ty: &str, access: Access, at: usize) {
    match vars.iter_mut().find(|(d, _, _)| *d == decl) {
        Some((_, v, uses)) => {
            v.written |= access.written;
            v.addressed |= access.addressed;
            uses.push(at);
        }
        None => vars.push((
            decl,
            FreeVar {
                name: name.to_string(),
                ty: ty.to_string(),
                written: access.written,
                addressed: access.addressed,
                uses: Vec::new(),
            },
            vec![at],
        )),
    }
}

fn is_use(vars: &Uses, w: &Word<'_>) -> bool {
    vars.iter().any(|(_, v, uses)| v.name == w.text && uses.contains(&w.at))
}

/// The free variables with their uses moved to where [`spell_out`] put them.
fn relocate(vars: Uses, moved: &[(usize, usize)]) -> Vec<FreeVar> {
    vars.into_iter()
        .map(|(_, v, uses)| {
            let uses = uses.iter().filter_map(|u| moved.iter().find(|(old, _)| old == u).map(|(_, new)| *new));
            FreeVar { uses: uses.collect(), ..v }
        })
        .collect()
}

/// A function that needs nothing from its file: integer (or no) parameters, an integer or
/// void result, no calls, no names but its own.
fn function(tu: &Tu, f: NodeId) -> Option<Ingredient> {
    let node = tu.node(f);
    let text = tu.source.get(node.start..node.end)?;
    if text.len() > MAX_FUNCTION || node.name == "main" || text.contains("...") {
        return None;
    }
    let mut declared: HashSet<&str> = HashSet::new();
    declared.insert(node.name.as_str());
    let mut params = Vec::new();
    let mut vars: Vec<(NodeId, FreeVar, Vec<usize>)> = Vec::new();
    let mut helpers = false;
    for id in tu.descendants(f) {
        let n = tu.node(id);
        if id != f && (n.start < node.start || n.end > node.end) {
            return None;
        }
        match n.kind {
            Kind::CallExpr if !is_helper(&n.name) => return None,
            Kind::ParmDecl => {
                params.push(n.ty.as_ref()?.int()?.spelling().to_string());
                declared.insert(n.name.as_str());
            }
            Kind::VarDecl | Kind::LabelStmt => {
                declared.insert(n.name.as_str());
            }
            Kind::DeclRefExpr if is_helper(&n.name) && n.referenced.is_none() => helpers = true,
            Kind::DeclRefExpr => {
                let decl = n.referenced?;
                let d = tu.node(decl);
                if tu.source.get(n.start..n.end)? != n.name {
                    return None;
                }
                if d.start >= node.start && d.end <= node.end {
                    continue;
                }
                // A global integer is a free variable, renamed to one of the seed's.
                let int =
                    d.ty.as_ref()
                        .and_then(|t| t.int())
                        .filter(|_| d.kind == Kind::VarDecl && d.parent == Some(Tu::ROOT))?;
                note_use(&mut vars, decl, &n.name, int.spelling(), access(tu, id), n.start - node.start);
            }
            _ => {}
        }
    }
    let words = words(text)?;
    let name = words.iter().position(|w| w.text == node.name)?;
    // Only type words before the name: no pointer result, no attributes.
    let head = &text[..words[name].at];
    if head.contains('*') || head.contains('(') {
        return None;
    }
    let returns_void = words[..name].iter().any(|w| w.text == "void");
    let name_at = words[name].at;
    let (text, moved) = spell_out(text, |w| {
        is_use(&vars, w)
            || CONDITION_WORDS.contains(&w.text)
            || FUNCTION_WORDS.contains(&w.text)
            || declared.contains(w.text)
            || is_helper(w.text)
    })?;
    let name_offset = moved.iter().find(|(old, _)| *old == name_at)?.1;
    let vars = relocate(vars, &moved);
    Some(Ingredient {
        kind: IngredientKind::Function,
        source: SourceKind::Csmith,
        origin: String::new(),
        text,
        vars,
        function: Some(FunctionShape { name: node.name.clone(), name_offset, params, returns_void }),
        helpers,
    })
}
