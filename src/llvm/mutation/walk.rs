//! Raw LLVM C API walks over a parsed module: its defined functions, blocks, instructions,
//! users, and the values an instruction can read. Everything here takes handles that belong
//! to one live module.

use std::ffi::CStr;

use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::*;
use inkwell::llvm_sys::{LLVMOpcode, LLVMTypeKind};

/// The items of one of the C API's intrusive lists, from `first` along `next` to null.
unsafe fn list<T>(first: *mut T, next: unsafe extern "C" fn(*mut T) -> *mut T) -> Vec<*mut T> {
    std::iter::successors(Some(first).filter(|p| !p.is_null()), |&p| Some(next(p)).filter(|n| !n.is_null())).collect()
}

/// Functions with a body, in module order.
pub(super) unsafe fn defined_functions(module: LLVMModuleRef) -> Vec<LLVMValueRef> {
    list(LLVMGetFirstFunction(module), LLVMGetNextFunction).into_iter().filter(|&f| LLVMIsDeclaration(f) == 0).collect()
}

pub(super) unsafe fn blocks(function: LLVMValueRef) -> Vec<LLVMBasicBlockRef> {
    list(LLVMGetFirstBasicBlock(function), LLVMGetNextBasicBlock)
}

pub(super) unsafe fn instructions(block: LLVMBasicBlockRef) -> Vec<LLVMValueRef> {
    list(LLVMGetFirstInstruction(block), LLVMGetNextInstruction)
}

/// Every instruction of every defined function, in module order: the order sites are
/// numbered in, so it must not depend on anything but the module.
pub(super) unsafe fn all_instructions(module: LLVMModuleRef) -> Vec<LLVMValueRef> {
    defined_functions(module).into_iter().flat_map(|f| blocks(f)).flat_map(|b| instructions(b)).collect()
}

pub(super) unsafe fn users(value: LLVMValueRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    let mut u = LLVMGetFirstUse(value);
    while !u.is_null() {
        out.push(LLVMGetUser(u));
        u = LLVMGetNextUse(u);
    }
    out
}

/// The name's bytes (LLVM names may hold any byte).
pub(super) unsafe fn name_bytes(value: LLVMValueRef) -> Vec<u8> {
    let mut len = 0;
    let ptr = LLVMGetValueName2(value, &mut len);
    if ptr.is_null() || len == 0 {
        return Vec::new();
    }
    std::slice::from_raw_parts(ptr as *const u8, len).to_vec()
}

pub(super) unsafe fn name_of(value: LLVMValueRef) -> String {
    String::from_utf8_lossy(&name_bytes(value)).into_owned()
}

pub(super) unsafe fn take_message(message: *mut std::ffi::c_char) -> String {
    if message.is_null() {
        return String::new();
    }
    let text = CStr::from_ptr(message).to_string_lossy().into_owned();
    LLVMDisposeMessage(message);
    text
}

pub(super) unsafe fn print_value(value: LLVMValueRef) -> String {
    take_message(LLVMPrintValueToString(value)).trim().to_string()
}

pub(super) unsafe fn opcode(inst: LLVMValueRef) -> LLVMOpcode {
    LLVMGetInstructionOpcode(inst)
}

pub(super) unsafe fn type_kind(value: LLVMValueRef) -> LLVMTypeKind {
    LLVMGetTypeKind(LLVMTypeOf(value))
}

pub(super) fn is_call(op: LLVMOpcode) -> bool {
    matches!(op, LLVMOpcode::LLVMCall | LLVMOpcode::LLVMInvoke | LLVMOpcode::LLVMCallBr)
}

/// The function a call names directly, if any.
pub(super) unsafe fn callee(inst: LLVMValueRef) -> Option<LLVMValueRef> {
    if !is_call(opcode(inst)) {
        return None;
    }
    let called = LLVMGetCalledValue(inst);
    (!called.is_null() && !LLVMIsAFunction(called).is_null()).then_some(called)
}

pub(super) unsafe fn is_intrinsic_call(inst: LLVMValueRef) -> bool {
    callee(inst).is_some_and(|f| LLVMGetIntrinsicID(f) != 0)
}

/// Instructions that must stay first in their block (after phis) or that tie a block to
/// exception handling: nothing is inserted before them and their operands stay.
pub(super) unsafe fn is_eh(inst: LLVMValueRef) -> bool {
    use LLVMOpcode::*;
    matches!(
        opcode(inst),
        LLVMLandingPad | LLVMCatchPad | LLVMCleanupPad | LLVMCatchSwitch | LLVMCatchRet | LLVMCleanupRet
    )
}

pub(super) unsafe fn first_non_phi(block: LLVMBasicBlockRef) -> Option<LLVMValueRef> {
    instructions(block).into_iter().find(|&i| opcode(i) != LLVMOpcode::LLVMPHI)
}

pub(super) unsafe fn phis(block: LLVMBasicBlockRef) -> Vec<LLVMValueRef> {
    instructions(block).into_iter().take_while(|&i| opcode(i) == LLVMOpcode::LLVMPHI).collect()
}

/// Values certainly available just before `inst`: the function's arguments, earlier
/// instructions of its block, and the entry block's (the entry dominates every block).
/// Later blocks' values may dominate too; the verifier would have to judge those.
pub(super) unsafe fn in_scope(inst: LLVMValueRef) -> Vec<LLVMValueRef> {
    let block = LLVMGetInstructionParent(inst);
    let function = LLVMGetBasicBlockParent(block);
    let mut out: Vec<LLVMValueRef> = (0..LLVMCountParams(function)).map(|i| LLVMGetParam(function, i)).collect();
    let entry = LLVMGetEntryBasicBlock(function);
    if entry != block {
        out.extend(instructions(entry).into_iter().filter(|&i| LLVMIsATerminatorInst(i).is_null()));
    }
    out.extend(instructions(block).into_iter().take_while(|&i| i != inst));
    out.retain(|&v| !matches!(type_kind(v), LLVMTypeKind::LLVMVoidTypeKind | LLVMTypeKind::LLVMTokenTypeKind));
    out
}

pub(super) unsafe fn globals(module: LLVMModuleRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    let mut g = LLVMGetFirstGlobal(module);
    while !g.is_null() {
        out.push(g);
        g = LLVMGetNextGlobal(g);
    }
    out
}

/// Part of a structural rule's guard: an access to one of its `__ctos_` globals, or a use
/// of the always-false load. Local rules leave these alone: a later mutation could
/// otherwise open a guarded path or let a pass delete it.
pub(super) unsafe fn is_guard(inst: LLVMValueRef) -> bool {
    let guard_access = |i: LLVMValueRef| {
        let pointer = match opcode(i) {
            LLVMOpcode::LLVMLoad => LLVMGetOperand(i, 0),
            LLVMOpcode::LLVMStore => LLVMGetOperand(i, 1),
            _ => return false,
        };
        !LLVMIsAGlobalVariable(pointer).is_null() && name_bytes(pointer).starts_with(b"__ctos_")
    };
    guard_access(inst)
        || (0..LLVMGetNumOperands(inst).max(0) as u32).any(|k| {
            let v = LLVMGetOperand(inst, k);
            !v.is_null() && !LLVMIsAInstruction(v).is_null() && guard_access(v)
        })
}
