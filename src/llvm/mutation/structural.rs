//! RecBi's structural rules on IR. Each new path hangs on a volatile load of
//! `@__ctos_opaque`, an internal global that is always false: no pass may fold a volatile
//! load, so the path stays in the program, and it never runs, so the output stays.

use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::*;
use inkwell::llvm_sys::{LLVMLinkage, LLVMOpcode, LLVMTailCallKind, LLVMTypeKind};

use super::walk::{self, opcode};
use super::{IrEdit, Parsed, Site};

pub(super) const OPAQUE: &std::ffi::CStr = c"__ctos_opaque";

/// Instructions code can go before: not phis or EH pads, not the `ret` a `musttail` call
/// needs right after it.
unsafe fn insertion_point(inst: LLVMValueRef) -> bool {
    if opcode(inst) == LLVMOpcode::LLVMPHI || walk::is_eh(inst) {
        return false;
    }
    let previous = LLVMGetPreviousInstruction(inst);
    previous.is_null()
        || LLVMIsACallInst(previous).is_null()
        || LLVMGetTailCallKind(previous) != LLVMTailCallKind::LLVMTailCallKindMustTail
}

/// Blocks reached only through terminators: a `blockaddress` would still name the tail
/// after a split, not the new head.
unsafe fn splittable(block: LLVMBasicBlockRef) -> bool {
    walk::users(LLVMBasicBlockAsValue(block)).into_iter().all(|u| !LLVMIsATerminatorInst(u).is_null())
}

/// Blocks a new edge from `block` may enter: not the entry (which has no predecessors),
/// not `block` itself, not an EH pad's block.
unsafe fn edge_targets(block: LLVMBasicBlockRef) -> Vec<LLVMBasicBlockRef> {
    let function = LLVMGetBasicBlockParent(block);
    let entry = LLVMGetEntryBasicBlock(function);
    walk::blocks(function)
        .into_iter()
        .filter(|&t| t != entry && t != block && walk::first_non_phi(t).is_some_and(|i| !walk::is_eh(i)))
        .collect()
}

pub(super) unsafe fn sites(parsed: &Parsed, edit: IrEdit) -> Vec<Site> {
    let mut out = Vec::new();
    for function in walk::defined_functions(parsed.module) {
        for block in walk::blocks(function) {
            let usable = match edit {
                IrEdit::ExtraCall => true,
                IrEdit::ExtraEdge => splittable(block) && !edge_targets(block).is_empty(),
                _ => splittable(block),
            };
            if !usable {
                continue;
            }
            for inst in walk::instructions(block) {
                if insertion_point(inst) {
                    out.push(Site { inst, operand: 0 });
                }
            }
        }
    }
    out
}

struct Builder(LLVMBuilderRef);

impl Drop for Builder {
    fn drop(&mut self) {
        unsafe { LLVMDisposeBuilder(self.0) }
    }
}

/// `inst`'s block split in two: everything before `inst` moves into a new block put
/// before it, which its predecessors now enter. Moving the head rather than the tail
/// keeps the phis of the successors valid (their incoming block stays the same). The
/// builder is left at the end of the new block, which has no terminator yet.
unsafe fn split_before(parsed: &Parsed, inst: LLVMValueRef) -> (LLVMBasicBlockRef, Builder) {
    let block = LLVMGetInstructionParent(inst);
    let predecessors = walk::users(LLVMBasicBlockAsValue(block));
    let head = LLVMInsertBasicBlockInContext(parsed.context, block, c"ctos.split".as_ptr());
    for t in predecessors {
        for i in 0..LLVMGetNumSuccessors(t) {
            if LLVMGetSuccessor(t, i) == block {
                LLVMSetSuccessor(t, i, head);
            }
        }
    }
    let b = Builder(LLVMCreateBuilderInContext(parsed.context));
    LLVMPositionBuilderAtEnd(b.0, head);
    let moving: Vec<LLVMValueRef> = walk::instructions(block).into_iter().take_while(|&i| i != inst).collect();
    for i in moving {
        // The builder names what it inserts: give the instruction its own name back.
        let name = walk::name_bytes(i);
        LLVMInstructionRemoveFromParent(i);
        LLVMInsertIntoBuilder(b.0, i);
        if !name.is_empty() {
            LLVMSetValueName2(i, name.as_ptr() as *const std::ffi::c_char, name.len());
        }
    }
    (head, b)
}

/// An internal global of type `ty` named `name`, zero at start; reused if present.
unsafe fn internal_global(parsed: &Parsed, name: &std::ffi::CStr, ty: LLVMTypeRef) -> LLVMValueRef {
    let existing = LLVMGetNamedGlobal(parsed.module, name.as_ptr());
    if !existing.is_null() && LLVMGlobalGetValueType(existing) == ty {
        return existing;
    }
    let global = LLVMAddGlobal(parsed.module, ty, name.as_ptr());
    LLVMSetInitializer(global, LLVMConstNull(ty));
    LLVMSetLinkage(global, LLVMLinkage::LLVMInternalLinkage);
    global
}

/// `load volatile i1, ptr @__ctos_opaque`: false at run time, unknown to every pass.
unsafe fn opaque_false(parsed: &Parsed, b: &Builder) -> LLVMValueRef {
    let i1 = LLVMInt1TypeInContext(parsed.context);
    let global = internal_global(parsed, OPAQUE, i1);
    let load = LLVMBuildLoad2(b.0, i1, global, c"ctos.opaque".as_ptr());
    LLVMSetVolatile(load, 1);
    load
}

/// A volatile store of `value` (an integer) to an internal global of its own: a side
/// effect no pass may remove, invisible in the output.
unsafe fn sink(parsed: &Parsed, b: &Builder, value: LLVMValueRef) {
    let ty = LLVMTypeOf(value);
    let name = std::ffi::CString::new(format!("__ctos_sink.i{}", LLVMGetIntTypeWidth(ty))).unwrap_or_default();
    let global = internal_global(parsed, &name, ty);
    let store = LLVMBuildStore(b.0, value, global);
    LLVMSetVolatile(store, 1);
}

/// An integer available before `inst`, drawn with `salt`.
unsafe fn integer_in_scope(inst: LLVMValueRef, salt: u64) -> Option<LLVMValueRef> {
    let ints: Vec<LLVMValueRef> =
        walk::in_scope(inst).into_iter().filter(|&v| walk::type_kind(v) == LLVMTypeKind::LLVMIntegerTypeKind).collect();
    (!ints.is_empty()).then(|| ints[(salt % ints.len() as u64) as usize])
}

/// `define internal void @__ctos_call.iN(iN %x)` storing `%x` volatilely; reused if present.
unsafe fn sink_function(parsed: &Parsed, ty: LLVMTypeRef) -> (LLVMTypeRef, LLVMValueRef) {
    let mut params = [ty];
    let fn_ty = LLVMFunctionType(LLVMVoidTypeInContext(parsed.context), params.as_mut_ptr(), 1, 0);
    let name = std::ffi::CString::new(format!("__ctos_call.i{}", LLVMGetIntTypeWidth(ty))).unwrap_or_default();
    let existing = LLVMGetNamedFunction(parsed.module, name.as_ptr());
    if !existing.is_null() && LLVMGlobalGetValueType(existing) == fn_ty {
        return (fn_ty, existing);
    }
    let function = LLVMAddFunction(parsed.module, name.as_ptr(), fn_ty);
    LLVMSetLinkage(function, LLVMLinkage::LLVMInternalLinkage);
    let body = LLVMAppendBasicBlockInContext(parsed.context, function, c"entry".as_ptr());
    let b = Builder(LLVMCreateBuilderInContext(parsed.context));
    LLVMPositionBuilderAtEnd(b.0, body);
    sink(parsed, &b, LLVMGetParam(function, 0));
    LLVMBuildRetVoid(b.0);
    (fn_ty, function)
}

pub(super) unsafe fn apply(parsed: &Parsed, edit: IrEdit, site: Site, salt: u64) -> bool {
    let inst = site.inst;
    let block = LLVMGetInstructionParent(inst);
    let value = integer_in_scope(inst, salt);
    match edit {
        IrEdit::ExtraCall => {
            let value = value.unwrap_or_else(|| LLVMConstInt(LLVMInt32TypeInContext(parsed.context), 0, 0));
            let (fn_ty, function) = sink_function(parsed, LLVMTypeOf(value));
            let b = Builder(LLVMCreateBuilderInContext(parsed.context));
            LLVMPositionBuilderBefore(b.0, inst);
            let mut args = [value];
            LLVMBuildCall2(b.0, fn_ty, function, args.as_mut_ptr(), 1, c"".as_ptr());
        }
        IrEdit::GuardBlock | IrEdit::LoopBlock => {
            let (_head, b) = split_before(parsed, inst);
            let condition = opaque_false(parsed, &b);
            let guarded = LLVMInsertBasicBlockInContext(parsed.context, block, c"ctos.guard".as_ptr());
            LLVMBuildCondBr(b.0, condition, guarded, block);
            LLVMPositionBuilderAtEnd(b.0, guarded);
            sink(parsed, &b, value.unwrap_or(condition));
            if edit == IrEdit::LoopBlock {
                let again = opaque_false(parsed, &b);
                LLVMBuildCondBr(b.0, again, guarded, block);
            } else {
                LLVMBuildBr(b.0, block);
            }
        }
        IrEdit::ExtraEdge => {
            let targets = edge_targets(block);
            if targets.is_empty() {
                return false;
            }
            let target = targets[(salt % targets.len() as u64) as usize];
            let (head, b) = split_before(parsed, inst);
            let condition = opaque_false(parsed, &b);
            LLVMBuildCondBr(b.0, condition, target, block);
            // The edge is never taken: any incoming value will do.
            for phi in walk::phis(target) {
                let mut values = [LLVMGetPoison(LLVMTypeOf(phi))];
                let mut blocks = [head];
                LLVMAddIncoming(phi, values.as_mut_ptr(), blocks.as_mut_ptr(), 1);
            }
        }
        _ => return false,
    }
    true
}
