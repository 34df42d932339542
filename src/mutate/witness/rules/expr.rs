//! DiWi's expression rules (15–132): binary operators replaced within their group, the
//! increment/decrement/`~` operators replaced or deleted, integer constants changed, and a
//! variable replaced by another one in scope (spec diwi.md §3.3–3.4).
//!
//! Unlike the released tool, a rule skips sites where its result could not compile
//! (`%` on a double, `p * 1` on a pointer, `x++` on a value, a variable of another type):
//! spec §3.4 [I], invalid mutants only waste the budget.

use rand::{Rng, RngExt};

use super::Rule;
use crate::mutate::ast::{BinOp, Kind, NodeId, Shape, Tu, UnOp};
use crate::mutate::scope::visible;
use crate::mutate::witness::{RuleClass, RuleInfo};
use crate::mutate::Edit;

/// The operator groups, each member replaceable by every other (88 rules in all).
pub const BINARY_GROUPS: [&[BinOp]; 8] = {
    use BinOp::*;
    [
        &[Add, Sub, Mul, Div, Rem],
        &[Gt, Lt, Le, Ge, Eq, Ne],
        &[And, Xor, Or],
        &[Shl, Shr],
        &[LAnd, LOr],
        &[AddAssign, SubAssign, MulAssign, DivAssign, RemAssign],
        &[ShlAssign, ShrAssign],
        &[AndAssign, XorAssign, OrAssign],
    ]
};

fn shape(tu: &Tu, id: NodeId) -> Option<&Shape> {
    tu.node(id).ty.as_ref().map(|t| &t.shape)
}

/// Whether `op` can take operands of these shapes.
fn operands_fit(op: BinOp, left: Option<&Shape>, right: Option<&Shape>) -> bool {
    use BinOp::*;
    let int = |s: Option<&Shape>| matches!(s, Some(Shape::Int(_)));
    let arithmetic = |s: Option<&Shape>| matches!(s, Some(Shape::Int(_) | Shape::Float));
    match op {
        Rem | And | Xor | Or | Shl | Shr | RemAssign | AndAssign | XorAssign | OrAssign | ShlAssign | ShrAssign => {
            int(left) && int(right)
        }
        Mul | Div | MulAssign | DivAssign => arithmetic(left) && arithmetic(right),
        _ => true,
    }
}

/// The operator token's range between a binary node's operands, when it is spelled there
/// (not inside a macro).
fn operator_range(tu: &Tu, node: NodeId, op: BinOp) -> Option<(usize, usize)> {
    let children = &tu.node(node).children;
    let (left, right) = (*children.first()?, *children.last()?);
    let (from, to) = (tu.node(left).end, tu.node(right).start);
    let gap = tu.source.get(from..to)?;
    let start = from + gap.find(|c: char| !c.is_whitespace())?;
    (gap.trim() == op.token()).then_some((start, start + op.token().len()))
}

pub struct Binary {
    info: RuleInfo,
    from: BinOp,
    to: BinOp,
}

impl Rule for Binary {
    fn info(&self) -> &RuleInfo {
        &self.info
    }

    fn sites(&self, tu: &Tu) -> Vec<NodeId> {
        (0..tu.nodes.len())
            .filter(|&i| {
                let n = tu.node(i);
                n.binary == Some(self.from)
                    && n.children.len() >= 2
                    && operands_fit(self.to, shape(tu, n.children[0]), shape(tu, *n.children.last().unwrap()))
                    && operator_range(tu, i, self.from).is_some()
            })
            .collect()
    }

    fn edits(&self, tu: &Tu, site: NodeId, _rng: &mut dyn Rng) -> Option<Vec<Edit>> {
        let (start, end) = operator_range(tu, site, self.from)?;
        Some(vec![Edit::replace(start, end, self.to.token())])
    }
}

/// The unary operators DiWi rewrites (clang's `UO_Not` is `~`).
pub const UNARY: [UnOp; 5] = [UnOp::PreInc, UnOp::PreDec, UnOp::PostInc, UnOp::PostDec, UnOp::Not];

fn unary_token(op: UnOp) -> &'static str {
    match op {
        UnOp::PreInc | UnOp::PostInc => "++",
        UnOp::PreDec | UnOp::PostDec => "--",
        _ => "~",
    }
}

fn is_postfix(op: UnOp) -> bool {
    matches!(op, UnOp::PostInc | UnOp::PostDec)
}

fn unary_name(op: UnOp) -> &'static str {
    match op {
        UnOp::PreInc => "pre++",
        UnOp::PreDec => "pre--",
        UnOp::PostInc => "post++",
        UnOp::PostDec => "post--",
        _ => "~",
    }
}

/// An operand that `++`/`--` can change.
fn is_lvalue(tu: &Tu, mut id: NodeId) -> bool {
    // Through parentheses and implicit conversions (spelled as their operand).
    while tu.node(id).kind == Kind::ParenExpr
        || matches!(tu.node(id).kind, Kind::OtherExpr(_))
            && tu.node(id).children.len() == 1
            && tu.text(id) == tu.text(tu.node(id).children[0])
    {
        match tu.node(id).children.first() {
            Some(&c) => id = c,
            None => return false,
        }
    }
    let node = tu.node(id);
    let scalar = matches!(node.ty.as_ref().map(|t| &t.shape), Some(Shape::Int(_) | Shape::Float | Shape::Pointer));
    let writable = node.ty.as_ref().is_some_and(|t| !t.is_const);
    scalar
        && writable
        && (matches!(node.kind, Kind::DeclRefExpr | Kind::MemberRefExpr | Kind::ArraySubscriptExpr)
            || node.unary == Some(UnOp::Deref))
}

pub struct Unary {
    info: RuleInfo,
    from: UnOp,
    /// `None` deletes the operator.
    to: Option<UnOp>,
}

impl Unary {
    /// The operand's node and whether the operator is spelled where expected.
    fn operand(&self, tu: &Tu, site: NodeId) -> Option<NodeId> {
        let node = tu.node(site);
        let operand = *node.children.first()?;
        let o = tu.node(operand);
        let token =
            if is_postfix(self.from) { tu.source.get(o.end..node.end)? } else { tu.source.get(node.start..o.start)? };
        (token.trim() == unary_token(self.from)).then_some(operand)
    }
}

impl Rule for Unary {
    fn info(&self) -> &RuleInfo {
        &self.info
    }

    fn sites(&self, tu: &Tu) -> Vec<NodeId> {
        (0..tu.nodes.len())
            .filter(|&i| tu.node(i).unary == Some(self.from))
            .filter(|&i| match (self.operand(tu, i), self.to) {
                (None, _) => false,
                (Some(_), None) => true,
                (Some(o), Some(UnOp::Not)) => matches!(shape(tu, o), Some(Shape::Int(_))),
                (Some(o), Some(_)) => is_lvalue(tu, o),
            })
            .collect()
    }

    fn edits(&self, tu: &Tu, site: NodeId, _rng: &mut dyn Rng) -> Option<Vec<Edit>> {
        let operand = tu.text(self.operand(tu, site)?);
        let text = match self.to {
            None => format!("({operand})"),
            Some(op) if is_postfix(op) => format!("({operand}){}", unary_token(op)),
            Some(op) => format!("{}({operand})", unary_token(op)),
        };
        let node = tu.node(site);
        Some(vec![Edit::replace(node.start, node.end, text)])
    }
}

/// How rules 128–131 change an integer constant.
#[derive(Debug, Clone, Copy)]
pub enum ConstantChange {
    PlusOne,
    MinusOne,
    Negate,
    Zero,
}

/// A literal's value and suffix (`0x8F6AL` is (0x8F6A, "L")).
fn literal_value(text: &str) -> Option<(u128, &str)> {
    let digits_end = text.find(['u', 'U', 'l', 'L']).unwrap_or(text.len());
    let (digits, suffix) = text.split_at(digits_end);
    let value = if let Some(hex) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        u128::from_str_radix(hex, 16).ok()?
    } else if digits.len() > 1 && digits.starts_with('0') {
        u128::from_str_radix(&digits[1..], 8).ok()?
    } else {
        digits.parse().ok()?
    };
    Some((value, suffix))
}

pub struct Constant {
    info: RuleInfo,
    change: ConstantChange,
}

impl Rule for Constant {
    fn info(&self) -> &RuleInfo {
        &self.info
    }

    fn sites(&self, tu: &Tu) -> Vec<NodeId> {
        (0..tu.nodes.len())
            .filter(|&i| tu.node(i).kind == Kind::IntegerLiteral)
            .filter(|&i| {
                literal_value(tu.text(i)).is_some_and(|(v, _)| !matches!(self.change, ConstantChange::Zero) || v != 0)
            })
            .collect()
    }

    fn edits(&self, tu: &Tu, site: NodeId, _rng: &mut dyn Rng) -> Option<Vec<Edit>> {
        let text = tu.text(site);
        let (value, suffix) = literal_value(text)?;
        let new = match self.change {
            ConstantChange::PlusOne => format!("{}{suffix}", value.checked_add(1).filter(|v| *v <= u64::MAX as u128)?),
            ConstantChange::MinusOne if value == 0 => format!("(-1{suffix})"),
            ConstantChange::MinusOne => format!("{}{suffix}", value - 1),
            ConstantChange::Negate => format!("(-{text})"),
            ConstantChange::Zero => format!("0{suffix}"),
        };
        let node = tu.node(site);
        Some(vec![Edit::replace(node.start, node.end, new)])
    }
}

/// Rule 132: a variable occurrence renamed to another variable visible there, of the same
/// type and initialized (reading an uninitialized local is undefined, and no sanitizer
/// that screens witnesses would see it).
pub struct Variable {
    info: RuleInfo,
}

/// The statement (a member of a compound statement) that holds `id`.
fn enclosing_statement(tu: &Tu, id: NodeId) -> Option<NodeId> {
    std::iter::once(id).chain(tu.ancestors(id)).find(|&a| {
        tu.node(a).parent.is_some_and(|p| tu.node(p).kind == Kind::CompoundStmt && tu.function_of(p).is_some())
    })
}

impl Variable {
    fn candidates(&self, tu: &Tu, site: NodeId) -> Vec<String> {
        let node = tu.node(site);
        let (Some(ty), Some(stmt)) = (node.ty.as_ref(), enclosing_statement(tu, site)) else { return Vec::new() };
        if !matches!(ty.shape, Shape::Int(_) | Shape::Float) {
            return Vec::new();
        }
        visible(tu, stmt)
            .into_iter()
            .filter(|v| v.initialized && v.name != node.name && v.ty.shape == ty.shape)
            .map(|v| v.name)
            .collect()
    }
}

impl Rule for Variable {
    fn info(&self) -> &RuleInfo {
        &self.info
    }

    fn sites(&self, tu: &Tu) -> Vec<NodeId> {
        (0..tu.nodes.len())
            .filter(|&i| {
                let n = tu.node(i);
                n.kind == Kind::DeclRefExpr
                    && n.referenced.is_some_and(|d| matches!(tu.node(d).kind, Kind::VarDecl | Kind::ParmDecl))
                    && tu.text(i) == n.name
            })
            .collect()
    }

    fn edits(&self, tu: &Tu, site: NodeId, rng: &mut dyn Rng) -> Option<Vec<Edit>> {
        let candidates = self.candidates(tu, site);
        if candidates.is_empty() {
            return None;
        }
        let name = &candidates[rng.random_range(0..candidates.len())];
        let node = tu.node(site);
        Some(vec![Edit::replace(node.start, node.end, name.clone())])
    }
}

/// Rules 15–132 in DiWi's order.
pub fn rules() -> Vec<Box<dyn Rule>> {
    let mut out: Vec<Box<dyn Rule>> = Vec::new();
    for group in BINARY_GROUPS {
        for &from in group {
            for &to in group.iter().filter(|&&t| t != from) {
                let name = format!("binary {} -> {}", from.token(), to.token());
                out.push(Box::new(Binary { info: RuleInfo { name, class: RuleClass::Binary }, from, to }));
            }
        }
    }
    for from in UNARY {
        for to in UNARY.iter().filter(|&&t| t != from).map(|&t| Some(t)).chain([None]) {
            let name = match to {
                Some(t) => format!("unary {} -> {}", unary_name(from), unary_name(t)),
                None => format!("unary delete {}", unary_name(from)),
            };
            out.push(Box::new(Unary { info: RuleInfo { name, class: RuleClass::Unary }, from, to }));
        }
    }
    for (change, name) in [
        (ConstantChange::PlusOne, "constant c+1"),
        (ConstantChange::MinusOne, "constant c-1"),
        (ConstantChange::Negate, "constant -c"),
        (ConstantChange::Zero, "constant 0"),
    ] {
        out.push(Box::new(Constant { info: RuleInfo { name: name.into(), class: RuleClass::Constant }, change }));
    }
    out.push(Box::new(Variable { info: RuleInfo { name: "replace variable".into(), class: RuleClass::Variable } }));
    out
}
