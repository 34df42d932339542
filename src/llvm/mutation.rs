//! Witness mutation of LLVM IR: DiWi's local rules and RecBi's structural ones done on IR
//! instead of C (spec recbi.md §11). Callers speak plain data: an [`IrEdit`] says what to
//! do, the result is the printed mutant. Every attempt parses the program into a fresh
//! context, so a refused attempt leaves nothing behind, and the verifier judges each mutant
//! before it is returned.

mod local;
mod structural;
mod walk;

use inkwell::llvm_sys::analysis::{LLVMVerifierFailureAction, LLVMVerifyModule};
use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::*;
use rand::{Rng, RngExt};

/// What a constant operand becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConstChange {
    PlusOne,
    MinusOne,
    Negate,
    Zero,
}

/// Poison-generating flags of integer instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IrFlag {
    Nsw,
    Nuw,
    Exact,
    Disjoint,
}

/// A unary operation wrapped around an operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryWrap {
    /// `sub 0, x`
    Negate,
    /// `xor x, -1`
    Not,
    /// `fneg x`
    FNeg,
}

/// One mutation, in LLVM's own mnemonics where it names instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IrEdit {
    /// An integer constant operand (not one the IR requires to be constant).
    Constant(ConstChange),
    /// A binary instruction's opcode, e.g. `add` → `sub`; flags the new opcode cannot carry go.
    Opcode {
        from: &'static str,
        to: &'static str,
    },
    /// An `icmp` predicate, e.g. `slt` → `sle`.
    ICmp {
        from: &'static str,
        to: &'static str,
    },
    /// An `fcmp` predicate, e.g. `olt` → `ole`.
    FCmp {
        from: &'static str,
        to: &'static str,
    },
    /// The two operands of a binary instruction or an `icmp` (the predicate stays).
    SwapOperands,
    AddFlag(IrFlag),
    DropFlag(IrFlag),
    MakeVolatile {
        store: bool,
    },
    DropVolatile,
    /// An operand replaced by another value of its type available there.
    ReplaceValue,
    /// An operand `x` replaced by `op x`, computed just before its user.
    WrapOperand(UnaryWrap),
    /// A block behind a never-taken branch on an opaque false that stores a value volatilely.
    GuardBlock,
    /// The same block looping on itself while the opaque value is true.
    LoopBlock,
    /// A call to a new internal function that stores its argument volatilely.
    ExtraCall,
    /// A never-taken branch to another block of the function.
    ExtraEdge,
}

impl IrEdit {
    fn is_structural(self) -> bool {
        matches!(self, IrEdit::GuardBlock | IrEdit::LoopBlock | IrEdit::ExtraCall | IrEdit::ExtraEdge)
    }
}

/// A mutant, with where it was made in the original.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IrMutation {
    /// The whole mutated module, printed.
    pub text: String,
    /// The function changed.
    pub function: String,
    /// The original instruction changed (or the one code was inserted before), as printed.
    pub instruction: String,
    /// The functions the changed instruction calls or feeds with its value (empty for
    /// structural edits): whether that is output is the caller's question.
    pub feeds_calls: Vec<String>,
}

/// Where an edit applies: an instruction and, for operand edits, which operand.
#[derive(Debug, Clone, Copy)]
struct Site {
    inst: LLVMValueRef,
    operand: u32,
}

/// A module in its own context, both freed together.
struct Parsed {
    context: LLVMContextRef,
    module: LLVMModuleRef,
}

impl Drop for Parsed {
    fn drop(&mut self) {
        unsafe {
            LLVMDisposeModule(self.module);
            LLVMContextDispose(self.context);
        }
    }
}

impl Parsed {
    /// Textual IR or bitcode.
    // LLVMParseIRInContext2, its replacement, is not in LLVM 19's C API.
    #[allow(deprecated)]
    fn new(bytes: &[u8]) -> anyhow::Result<Parsed> {
        unsafe {
            let context = LLVMContextCreate();
            // The buffer's name becomes the module's: keep the one the text names.
            let name = std::ffi::CString::new(module_id(bytes)).unwrap_or_default();
            let buffer = LLVMCreateMemoryBufferWithMemoryRangeCopy(
                bytes.as_ptr() as *const std::ffi::c_char,
                bytes.len(),
                name.as_ptr(),
            );
            let mut module = std::ptr::null_mut();
            let mut message = std::ptr::null_mut();
            // The parser takes the buffer.
            if inkwell::llvm_sys::ir_reader::LLVMParseIRInContext(context, buffer, &mut module, &mut message) != 0 {
                let text = walk::take_message(message);
                LLVMContextDispose(context);
                anyhow::bail!("not LLVM IR: {}", text.trim());
            }
            walk::take_message(message);
            Ok(Parsed { context, module })
        }
    }

    fn verify(&self) -> Result<(), String> {
        unsafe {
            let mut message = std::ptr::null_mut();
            let broken =
                LLVMVerifyModule(self.module, LLVMVerifierFailureAction::LLVMReturnStatusAction, &mut message) != 0;
            let text = walk::take_message(message);
            if broken {
                Err(text)
            } else {
                Ok(())
            }
        }
    }

    fn print(&self) -> String {
        unsafe { walk::take_message(LLVMPrintModuleToString(self.module)) }
    }
}

/// Textual IR of `bytes`, which hold textual IR or bitcode (so `.bc` inputs can be mutated).
pub fn ir_text_of(bytes: &[u8]) -> anyhow::Result<String> {
    Ok(Parsed::new(bytes)?.print())
}

/// Apply `edit` at a site of `program` drawn with `rng`; other sites are tried when the
/// verifier refuses the result. `Ok(None)`: no site, or none gave a valid, different module.
/// `Err`: the program is not valid IR.
pub fn mutate_ir(program: &str, edit: IrEdit, rng: &mut dyn Rng) -> anyhow::Result<Option<IrMutation>> {
    let first = Parsed::new(program.as_bytes())?;
    first.verify().map_err(|e| anyhow::anyhow!("the program is invalid IR: {}", first_line(&e)))?;
    let original = first.print();
    let count = unsafe { sites(&first, edit).len() };
    if count == 0 {
        return Ok(None);
    }
    // Structural edits are refused more often (a new edge can break dominance).
    let attempts = if edit.is_structural() { 8 } else { 3 };
    let mut untried: Vec<usize> = (0..count).collect();
    let mut spare = Some(first);
    for _ in 0..attempts {
        if untried.is_empty() {
            break;
        }
        let site = untried.swap_remove(rng.random_range(0..untried.len()));
        let salt = rng.next_u64();
        let parsed = match spare.take() {
            Some(p) => p,
            None => Parsed::new(program.as_bytes())?,
        };
        if let Some(mutant) = unsafe { attempt(&parsed, edit, site, salt) } {
            if mutant.text != original {
                return Ok(Some(mutant));
            }
        }
    }
    Ok(None)
}

/// The number of sites `edit` has in `program` (for tests and reports).
pub fn ir_site_count(program: &str, edit: IrEdit) -> anyhow::Result<usize> {
    let parsed = Parsed::new(program.as_bytes())?;
    Ok(unsafe { sites(&parsed, edit).len() })
}

/// The `; ModuleID = '…'` a printed module starts with, else `program`.
fn module_id(bytes: &[u8]) -> String {
    let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    let first = String::from_utf8_lossy(first);
    first
        .strip_prefix("; ModuleID = '")
        .and_then(|rest| rest.strip_suffix('\''))
        .filter(|id| !id.contains('\0'))
        .unwrap_or("program")
        .to_string()
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

unsafe fn sites(parsed: &Parsed, edit: IrEdit) -> Vec<Site> {
    if edit.is_structural() {
        structural::sites(parsed, edit)
    } else {
        local::sites(parsed, edit)
    }
}

unsafe fn attempt(parsed: &Parsed, edit: IrEdit, index: usize, salt: u64) -> Option<IrMutation> {
    let site = *sites(parsed, edit).get(index)?;
    let block = LLVMGetInstructionParent(site.inst);
    let function = walk::name_of(LLVMGetBasicBlockParent(block));
    let instruction = walk::print_value(site.inst);
    let feeds_calls = if edit.is_structural() { Vec::new() } else { calls_fed(site.inst) };
    let applied = if edit.is_structural() {
        structural::apply(parsed, edit, site, salt)
    } else {
        local::apply(parsed, edit, site, salt)
    };
    if !applied || parsed.verify().is_err() {
        return None;
    }
    // Printed once more from a parse: the `; preds =` comments follow use-list order, which
    // an edit leaves different from what a parse of its text gives.
    let text = Parsed::new(parsed.print().as_bytes()).ok()?.print();
    Some(IrMutation { text, function, instruction, feeds_calls })
}

unsafe fn called(value: LLVMValueRef) -> Option<String> {
    if LLVMIsAInstruction(value).is_null() {
        return None;
    }
    walk::callee(value).map(|f| walk::name_of(f))
}

/// The callee of the instruction (a call's operands change) and of every call it feeds.
unsafe fn calls_fed(inst: LLVMValueRef) -> Vec<String> {
    std::iter::once(inst).chain(walk::users(inst)).filter_map(|v| called(v)).collect()
}
