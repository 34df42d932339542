//! DiWi's local rules on IR: constants, opcodes, predicates, operand order, flags,
//! `volatile`, value replacement and unary wrapping. Each changes one instruction in place
//! or rebuilds it next to the original.

use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::debuginfo::{LLVMInstructionGetDebugLoc, LLVMInstructionSetDebugLoc};
use inkwell::llvm_sys::prelude::*;
use inkwell::llvm_sys::{LLVMIntPredicate, LLVMOpcode, LLVMRealPredicate, LLVMTypeKind};

use super::walk::{self, opcode, type_kind};
use super::{ConstChange, IrEdit, IrFlag, Parsed, Site, UnaryWrap};

pub(super) fn binary_opcode(name: &str) -> Option<LLVMOpcode> {
    use LLVMOpcode::*;
    Some(match name {
        "add" => LLVMAdd,
        "sub" => LLVMSub,
        "mul" => LLVMMul,
        "sdiv" => LLVMSDiv,
        "udiv" => LLVMUDiv,
        "srem" => LLVMSRem,
        "urem" => LLVMURem,
        "shl" => LLVMShl,
        "lshr" => LLVMLShr,
        "ashr" => LLVMAShr,
        "and" => LLVMAnd,
        "or" => LLVMOr,
        "xor" => LLVMXor,
        "fadd" => LLVMFAdd,
        "fsub" => LLVMFSub,
        "fmul" => LLVMFMul,
        "fdiv" => LLVMFDiv,
        "frem" => LLVMFRem,
        _ => return None,
    })
}

fn int_predicate(name: &str) -> Option<LLVMIntPredicate> {
    use LLVMIntPredicate::*;
    Some(match name {
        "eq" => LLVMIntEQ,
        "ne" => LLVMIntNE,
        "slt" => LLVMIntSLT,
        "sle" => LLVMIntSLE,
        "sgt" => LLVMIntSGT,
        "sge" => LLVMIntSGE,
        "ult" => LLVMIntULT,
        "ule" => LLVMIntULE,
        "ugt" => LLVMIntUGT,
        "uge" => LLVMIntUGE,
        _ => return None,
    })
}

fn real_predicate(name: &str) -> Option<LLVMRealPredicate> {
    use LLVMRealPredicate::*;
    Some(match name {
        "oeq" => LLVMRealOEQ,
        "one" => LLVMRealONE,
        "olt" => LLVMRealOLT,
        "ole" => LLVMRealOLE,
        "ogt" => LLVMRealOGT,
        "oge" => LLVMRealOGE,
        _ => return None,
    })
}

const FLAGS: [IrFlag; 4] = [IrFlag::Nsw, IrFlag::Nuw, IrFlag::Exact, IrFlag::Disjoint];

fn flag_allowed(op: LLVMOpcode, flag: IrFlag) -> bool {
    use LLVMOpcode::*;
    match flag {
        IrFlag::Nsw | IrFlag::Nuw => matches!(op, LLVMAdd | LLVMSub | LLVMMul | LLVMShl),
        IrFlag::Exact => matches!(op, LLVMSDiv | LLVMUDiv | LLVMLShr | LLVMAShr),
        IrFlag::Disjoint => op == LLVMOr,
    }
}

unsafe fn has_flag(inst: LLVMValueRef, flag: IrFlag) -> bool {
    0 != match flag {
        IrFlag::Nsw => LLVMGetNSW(inst),
        IrFlag::Nuw => LLVMGetNUW(inst),
        IrFlag::Exact => LLVMGetExact(inst),
        IrFlag::Disjoint => LLVMGetIsDisjoint(inst),
    }
}

unsafe fn set_flag(inst: LLVMValueRef, flag: IrFlag, on: bool) {
    let on = on as LLVMBool;
    match flag {
        IrFlag::Nsw => LLVMSetNSW(inst, on),
        IrFlag::Nuw => LLVMSetNUW(inst, on),
        IrFlag::Exact => LLVMSetExact(inst, on),
        IrFlag::Disjoint => LLVMSetIsDisjoint(inst, on),
    }
}

/// Operands that may hold any value of their type: not callees, labels, alloca sizes,
/// switch cases, struct indices of a GEP, intrinsic arguments (some must be immediates) or
/// anything of exception handling. Phi incoming values only when `phis`.
unsafe fn free_operands(inst: LLVMValueRef, phis: bool) -> Vec<u32> {
    use LLVMOpcode::*;
    let op = opcode(inst);
    let candidates: Vec<u32> = match op {
        LLVMAlloca | LLVMIndirectBr => return Vec::new(),
        _ if walk::is_guard(inst) => return Vec::new(),
        LLVMPHI if !phis => return Vec::new(),
        LLVMSwitch => vec![0],
        LLVMGetElementPtr => return gep_free_operands(inst),
        _ if walk::is_eh(inst) => return Vec::new(),
        _ if walk::is_call(op) => {
            // Inline asm constraints may demand immediates the verifier does not check.
            if walk::is_intrinsic_call(inst) || !LLVMIsAInlineAsm(LLVMGetCalledValue(inst)).is_null() {
                return Vec::new();
            }
            (0..LLVMGetNumArgOperands(inst)).collect()
        }
        _ => (0..LLVMGetNumOperands(inst) as u32).collect(),
    };
    candidates
        .into_iter()
        .filter(|&k| {
            let v = LLVMGetOperand(inst, k);
            !v.is_null()
                && !matches!(
                    type_kind(v),
                    LLVMTypeKind::LLVMLabelTypeKind
                        | LLVMTypeKind::LLVMMetadataTypeKind
                        | LLVMTypeKind::LLVMTokenTypeKind
                        | LLVMTypeKind::LLVMVoidTypeKind
                )
        })
        .collect()
}

/// A GEP's pointer and its indices into pointers, arrays and vectors; struct field
/// numbers must stay constant and in range.
unsafe fn gep_free_operands(inst: LLVMValueRef) -> Vec<u32> {
    let n = LLVMGetNumOperands(inst) as u32;
    let mut out = vec![0];
    if n > 1 {
        out.push(1);
    }
    let mut ty = LLVMGetGEPSourceElementType(inst);
    for k in 2..n {
        match LLVMGetTypeKind(ty) {
            LLVMTypeKind::LLVMStructTypeKind => {
                let index = LLVMGetOperand(inst, k);
                if LLVMIsAConstantInt(index).is_null() {
                    break;
                }
                let field = LLVMConstIntGetZExtValue(index);
                if field >= LLVMCountStructElementTypes(ty) as u64 {
                    break;
                }
                ty = LLVMStructGetTypeAtIndex(ty, field as u32);
            }
            LLVMTypeKind::LLVMArrayTypeKind | LLVMTypeKind::LLVMVectorTypeKind => {
                out.push(k);
                ty = LLVMGetElementType(ty);
            }
            _ => break,
        }
    }
    out
}

/// The changed constant, or None when `value` is no integer constant or would not change.
unsafe fn changed_constant(value: LLVMValueRef, change: ConstChange) -> Option<LLVMValueRef> {
    if LLVMIsAConstantInt(value).is_null() || type_kind(value) != LLVMTypeKind::LLVMIntegerTypeKind {
        return None;
    }
    let ty = LLVMTypeOf(value);
    let width = LLVMGetIntTypeWidth(ty);
    if width == 0 || width > 64 {
        return None;
    }
    let old = LLVMConstIntGetSExtValue(value) as i128;
    let new = match change {
        ConstChange::PlusOne => old + 1,
        ConstChange::MinusOne => old - 1,
        ConstChange::Negate => -old,
        ConstChange::Zero => 0,
    };
    // Wrapped to the width: LLVM refuses bits beyond it.
    let mask: u128 = (1u128 << width) - 1;
    let (old, new) = ((old as u128) & mask, (new as u128) & mask);
    (old != new).then(|| LLVMConstInt(ty, new as u64, 0))
}

/// Values that may replace operand `k` of `inst`: same type, available there, not the
/// current one.
unsafe fn replacements(parsed: &Parsed, inst: LLVMValueRef, k: u32) -> Vec<LLVMValueRef> {
    let current = LLVMGetOperand(inst, k);
    let ty = LLVMTypeOf(current);
    let mut out: Vec<LLVMValueRef> = walk::in_scope(inst);
    if LLVMGetTypeKind(ty) == LLVMTypeKind::LLVMPointerTypeKind {
        out.extend(walk::globals(parsed.module));
    }
    out.retain(|&v| v != current && LLVMTypeOf(v) == ty);
    out
}

fn wraps(kind: LLVMTypeKind, wrap: UnaryWrap) -> bool {
    match wrap {
        UnaryWrap::Negate | UnaryWrap::Not => kind == LLVMTypeKind::LLVMIntegerTypeKind,
        UnaryWrap::FNeg => matches!(
            kind,
            LLVMTypeKind::LLVMHalfTypeKind
                | LLVMTypeKind::LLVMBFloatTypeKind
                | LLVMTypeKind::LLVMFloatTypeKind
                | LLVMTypeKind::LLVMDoubleTypeKind
                | LLVMTypeKind::LLVMX86_FP80TypeKind
                | LLVMTypeKind::LLVMFP128TypeKind
                | LLVMTypeKind::LLVMPPC_FP128TypeKind
        ),
    }
}

pub(super) unsafe fn sites(parsed: &Parsed, edit: IrEdit) -> Vec<Site> {
    let mut out = Vec::new();
    for inst in walk::all_instructions(parsed.module) {
        let op = opcode(inst);
        let whole = Site { inst, operand: 0 };
        match edit {
            IrEdit::Constant(change) => {
                for k in free_operands(inst, true) {
                    if changed_constant(LLVMGetOperand(inst, k), change).is_some() {
                        out.push(Site { inst, operand: k });
                    }
                }
            }
            IrEdit::ReplaceValue => {
                for k in free_operands(inst, false) {
                    if !replacements(parsed, inst, k).is_empty() {
                        out.push(Site { inst, operand: k });
                    }
                }
            }
            IrEdit::WrapOperand(wrap) => {
                for k in free_operands(inst, false) {
                    let x = LLVMGetOperand(inst, k);
                    // The builder folds constants, and 0, INT_MIN and every i1 are their own negation.
                    let identity = wrap == UnaryWrap::Negate
                        && (!LLVMIsAConstantInt(x).is_null() && changed_constant(x, ConstChange::Negate).is_none()
                            || type_kind(x) == LLVMTypeKind::LLVMIntegerTypeKind
                                && LLVMGetIntTypeWidth(LLVMTypeOf(x)) == 1);
                    if wraps(type_kind(x), wrap) && !identity {
                        out.push(Site { inst, operand: k });
                    }
                }
            }
            IrEdit::Opcode { from, to } => {
                if binary_opcode(from) == Some(op) && binary_opcode(to).is_some() && from != to {
                    out.push(whole);
                }
            }
            IrEdit::ICmp { from, to } => {
                if op == LLVMOpcode::LLVMICmp
                    && int_predicate(from) == Some(LLVMGetICmpPredicate(inst))
                    && int_predicate(to).is_some()
                    && from != to
                {
                    out.push(whole);
                }
            }
            IrEdit::FCmp { from, to } => {
                if op == LLVMOpcode::LLVMFCmp
                    && real_predicate(from) == Some(LLVMGetFCmpPredicate(inst))
                    && real_predicate(to).is_some()
                    && from != to
                {
                    out.push(whole);
                }
            }
            IrEdit::SwapOperands => {
                if (!LLVMIsABinaryOperator(inst).is_null() || op == LLVMOpcode::LLVMICmp)
                    && LLVMGetOperand(inst, 0) != LLVMGetOperand(inst, 1)
                {
                    out.push(whole);
                }
            }
            IrEdit::AddFlag(flag) | IrEdit::DropFlag(flag) => {
                let add = matches!(edit, IrEdit::AddFlag(_));
                if flag_allowed(op, flag) && has_flag(inst, flag) != add {
                    out.push(whole);
                }
            }
            IrEdit::MakeVolatile { store } => {
                let wanted = if store { LLVMOpcode::LLVMStore } else { LLVMOpcode::LLVMLoad };
                if op == wanted && LLVMGetVolatile(inst) == 0 {
                    out.push(whole);
                }
            }
            IrEdit::DropVolatile => {
                if matches!(op, LLVMOpcode::LLVMLoad | LLVMOpcode::LLVMStore)
                    && LLVMGetVolatile(inst) != 0
                    && !walk::is_guard(inst)
                {
                    out.push(whole);
                }
            }
            IrEdit::GuardBlock | IrEdit::LoopBlock | IrEdit::ExtraCall | IrEdit::ExtraEdge => {}
        }
    }
    out
}

struct Builder(LLVMBuilderRef);

impl Builder {
    unsafe fn before(parsed: &Parsed, inst: LLVMValueRef) -> Builder {
        let b = LLVMCreateBuilderInContext(parsed.context);
        LLVMPositionBuilderBefore(b, inst);
        Builder(b)
    }
}

impl Drop for Builder {
    fn drop(&mut self) {
        unsafe { LLVMDisposeBuilder(self.0) }
    }
}

/// `old` replaced everywhere by `new`, which takes its name and debug location. The
/// builder may have folded `new` into a constant.
unsafe fn replace(old: LLVMValueRef, new: LLVMValueRef) {
    let name = walk::name_bytes(old);
    if !LLVMIsAInstruction(new).is_null() {
        let location = LLVMInstructionGetDebugLoc(old);
        if !location.is_null() {
            LLVMInstructionSetDebugLoc(new, location);
        }
        if LLVMCanValueUseFastMathFlags(old) != 0 && LLVMCanValueUseFastMathFlags(new) != 0 {
            LLVMSetFastMathFlags(new, LLVMGetFastMathFlags(old));
        }
    }
    LLVMReplaceAllUsesWith(old, new);
    LLVMInstructionEraseFromParent(old);
    if !LLVMIsAInstruction(new).is_null() && !name.is_empty() {
        LLVMSetValueName2(new, name.as_ptr() as *const std::ffi::c_char, name.len());
    }
}

pub(super) unsafe fn apply(parsed: &Parsed, edit: IrEdit, site: Site, salt: u64) -> bool {
    let inst = site.inst;
    let k = site.operand;
    let empty = c"".as_ptr();
    match edit {
        IrEdit::Constant(change) => match changed_constant(LLVMGetOperand(inst, k), change) {
            Some(c) => LLVMSetOperand(inst, k, c),
            None => return false,
        },
        IrEdit::ReplaceValue => {
            let options = replacements(parsed, inst, k);
            if options.is_empty() {
                return false;
            }
            LLVMSetOperand(inst, k, options[(salt % options.len() as u64) as usize]);
        }
        IrEdit::WrapOperand(wrap) => {
            let b = Builder::before(parsed, inst);
            let x = LLVMGetOperand(inst, k);
            let wrapped = match wrap {
                UnaryWrap::Negate => LLVMBuildNeg(b.0, x, empty),
                UnaryWrap::Not => LLVMBuildNot(b.0, x, empty),
                UnaryWrap::FNeg => LLVMBuildFNeg(b.0, x, empty),
            };
            LLVMSetOperand(inst, k, wrapped);
        }
        IrEdit::Opcode { to, .. } => {
            let Some(to) = binary_opcode(to) else { return false };
            let from = opcode(inst);
            let b = Builder::before(parsed, inst);
            let new = LLVMBuildBinOp(b.0, to, LLVMGetOperand(inst, 0), LLVMGetOperand(inst, 1), empty);
            if !LLVMIsAInstruction(new).is_null() {
                for flag in FLAGS {
                    if flag_allowed(from, flag) && flag_allowed(to, flag) && has_flag(inst, flag) {
                        set_flag(new, flag, true);
                    }
                }
            }
            replace(inst, new);
        }
        IrEdit::ICmp { to, .. } => {
            let Some(to) = int_predicate(to) else { return false };
            let b = Builder::before(parsed, inst);
            replace(inst, LLVMBuildICmp(b.0, to, LLVMGetOperand(inst, 0), LLVMGetOperand(inst, 1), empty));
        }
        IrEdit::FCmp { to, .. } => {
            let Some(to) = real_predicate(to) else { return false };
            let b = Builder::before(parsed, inst);
            replace(inst, LLVMBuildFCmp(b.0, to, LLVMGetOperand(inst, 0), LLVMGetOperand(inst, 1), empty));
        }
        IrEdit::SwapOperands => {
            let (a, b) = (LLVMGetOperand(inst, 0), LLVMGetOperand(inst, 1));
            LLVMSetOperand(inst, 0, b);
            LLVMSetOperand(inst, 1, a);
        }
        IrEdit::AddFlag(flag) => set_flag(inst, flag, true),
        IrEdit::DropFlag(flag) => set_flag(inst, flag, false),
        IrEdit::MakeVolatile { .. } => LLVMSetVolatile(inst, 1),
        IrEdit::DropVolatile => LLVMSetVolatile(inst, 0),
        IrEdit::GuardBlock | IrEdit::LoopBlock | IrEdit::ExtraCall | IrEdit::ExtraEdge => return false,
    }
    true
}
