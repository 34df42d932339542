//! The LLVM IR witness mutator: DiWi's local rules and RecBi's structural ones applied to
//! textual IR (spec recbi.md §11, diwi.md §10). For middle-end bugs that reproduce with
//! `opt`, mutating the IR skips the C front end; every mutant passes the verifier.
//!
//! The rule table, per class:
//! * Binary (195): every binary opcode to each other of its group ({add sub mul sdiv udiv
//!   srem urem}: 42, {shl lshr ashr}: 6, {and or xor}: 6, {fadd fsub fmul fdiv frem}: 20),
//!   every `icmp` predicate to each other (90), the ordered `fcmp` ones to each other (30),
//!   and `ir swap operands` (binary instructions and `icmp`; the predicate stays, so the
//!   comparison changes).
//! * Constant (4): an integer constant operand +1, -1, negated, zero.
//! * AddModifier (4): `nsw`, `nuw`, `exact`, `disjoint` added where the opcode takes it.
//! * Remove (5): the same four flags dropped, and `volatile` dropped.
//! * AddQualifier (2): a load or a store made volatile.
//! * Variable (1): an operand replaced by another value of its type available there (an
//!   argument, a global, an earlier instruction of the block or one of the entry block).
//! * Unary (3): an operand `x` replaced by `sub 0, x`, `xor x, -1` or `fneg x`.
//! * AddIf (1), AddWhile (1), AddFunction (1), AddGoto (1): a guarded block, a guarded
//!   self-loop, a call to a new internal function, a never-taken edge to another block. The
//!   guard is a volatile load of an internal global that is always false, so these keep
//!   the program's behaviour.

use rand::Rng;

use super::{Mutant, Mutator, RuleClass, RuleInfo, OUTPUT_CALLS};
use crate::llvm::{mutate_ir, ConstChange, IrEdit, IrFlag, UnaryWrap};

pub use crate::llvm::ir_text_of;

const OPCODE_GROUPS: &[&[&str]] = &[
    &["add", "sub", "mul", "sdiv", "udiv", "srem", "urem"],
    &["shl", "lshr", "ashr"],
    &["and", "or", "xor"],
    &["fadd", "fsub", "fmul", "fdiv", "frem"],
];

const ICMP: &[&str] = &["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"];
const FCMP: &[&str] = &["oeq", "one", "olt", "ole", "ogt", "oge"];

const FLAGS: &[(IrFlag, &str)] =
    &[(IrFlag::Nsw, "nsw"), (IrFlag::Nuw, "nuw"), (IrFlag::Exact, "exact"), (IrFlag::Disjoint, "disjoint")];

/// Rules per class in [`RuleClass::ALL`] order, as the module comment lists them.
pub const RULES_PER_CLASS: [usize; RuleClass::COUNT] = [1, 2, 4, 5, 195, 4, 3, 1, 1, 1, 1];

/// Every (from, to) pair of distinct names.
fn pairs(names: &'static [&'static str]) -> impl Iterator<Item = (&'static str, &'static str)> {
    names.iter().flat_map(move |&a| names.iter().filter(move |&&b| b != a).map(move |&b| (a, b)))
}

fn table() -> Vec<(RuleInfo, IrEdit)> {
    let rule = |name: String, class: RuleClass, edit: IrEdit| (RuleInfo { name, class }, edit);
    let mut out = Vec::new();
    for group in OPCODE_GROUPS {
        for (from, to) in pairs(group) {
            out.push(rule(format!("ir {from} -> {to}"), RuleClass::Binary, IrEdit::Opcode { from, to }));
        }
    }
    for (from, to) in pairs(ICMP) {
        out.push(rule(format!("ir icmp {from} -> {to}"), RuleClass::Binary, IrEdit::ICmp { from, to }));
    }
    for (from, to) in pairs(FCMP) {
        out.push(rule(format!("ir fcmp {from} -> {to}"), RuleClass::Binary, IrEdit::FCmp { from, to }));
    }
    out.push(rule("ir swap operands".into(), RuleClass::Binary, IrEdit::SwapOperands));
    for (change, name) in [
        (ConstChange::PlusOne, "+1"),
        (ConstChange::MinusOne, "-1"),
        (ConstChange::Negate, "negate"),
        (ConstChange::Zero, "0"),
    ] {
        out.push(rule(format!("ir const {name}"), RuleClass::Constant, IrEdit::Constant(change)));
    }
    for &(flag, name) in FLAGS {
        out.push(rule(format!("ir add {name}"), RuleClass::AddModifier, IrEdit::AddFlag(flag)));
    }
    for &(flag, name) in FLAGS {
        out.push(rule(format!("ir drop {name}"), RuleClass::Remove, IrEdit::DropFlag(flag)));
    }
    out.push(rule("ir drop volatile".into(), RuleClass::Remove, IrEdit::DropVolatile));
    out.push(rule("ir volatile load".into(), RuleClass::AddQualifier, IrEdit::MakeVolatile { store: false }));
    out.push(rule("ir volatile store".into(), RuleClass::AddQualifier, IrEdit::MakeVolatile { store: true }));
    out.push(rule("ir replace value".into(), RuleClass::Variable, IrEdit::ReplaceValue));
    for (wrap, name) in [(UnaryWrap::Negate, "negate"), (UnaryWrap::Not, "not"), (UnaryWrap::FNeg, "fneg")] {
        out.push(rule(format!("ir {name} operand"), RuleClass::Unary, IrEdit::WrapOperand(wrap)));
    }
    out.push(rule("ir guard block".into(), RuleClass::AddIf, IrEdit::GuardBlock));
    out.push(rule("ir loop block".into(), RuleClass::AddWhile, IrEdit::LoopBlock));
    out.push(rule("ir extra call".into(), RuleClass::AddFunction, IrEdit::ExtraCall));
    out.push(rule("ir extra edge".into(), RuleClass::AddGoto, IrEdit::ExtraEdge));
    out
}

/// Mutates textual LLVM IR (use [`ir_text_of`] first for bitcode).
pub struct IrMutator {
    rules: Vec<RuleInfo>,
    edits: Vec<IrEdit>,
}

impl IrMutator {
    pub fn new() -> IrMutator {
        let (rules, edits) = table().into_iter().unzip();
        IrMutator { rules, edits }
    }

    /// What rule `rule` does, in the terms of [`crate::llvm::mutate_ir`].
    pub fn edit(&self, rule: usize) -> Option<IrEdit> {
        self.edits.get(rule).copied()
    }
}

impl Default for IrMutator {
    fn default() -> Self {
        IrMutator::new()
    }
}

impl Mutator for IrMutator {
    fn rules(&self) -> &[RuleInfo] {
        &self.rules
    }

    fn mutate(&self, program: &str, rule: usize, rng: &mut dyn Rng) -> anyhow::Result<Option<Mutant>> {
        let (Some(info), Some(&edit)) = (self.rules.get(rule), self.edits.get(rule)) else {
            anyhow::bail!("no IR rule {rule} (there are {})", self.rules.len());
        };
        let Some(m) = mutate_ir(program, edit, rng)? else { return Ok(None) };
        Ok(Some(Mutant {
            description: format!("{} in @{}: {}", info.name, m.function, crate::output::shorten(&m.instruction, 81)),
            line: line_in(program, &m.function, &m.instruction),
            text: m.text,
            touches_output: m.feeds_calls.iter().any(|c| OUTPUT_CALLS.contains(&c.as_str())),
        }))
    }
}

/// The 1-based line of `instruction` (as LLVM prints it) in `program`, searched first
/// inside `function`'s definition; 1 when the text spells it differently.
fn line_in(program: &str, function: &str, instruction: &str) -> usize {
    let needle = instruction.trim();
    if needle.is_empty() {
        return 1;
    }
    let lines: Vec<&str> = program.lines().collect();
    let plain = format!("@{function}(");
    let quoted = format!("@\"{function}\"(");
    let start =
        lines.iter().position(|l| l.starts_with("define") && (l.contains(&plain) || l.contains(&quoted))).unwrap_or(0);
    let matches = |l: &&str| l.trim() == needle || l.trim().starts_with(needle);
    lines[start..]
        .iter()
        .position(matches)
        .map(|i| start + i + 1)
        .or_else(|| lines.iter().position(matches).map(|i| i + 1))
        .unwrap_or(1)
}
