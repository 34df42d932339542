//! The control-flow and call structure of a module, in plain data: what CTOS's program
//! embedding reads (region graphs of functions, the call graph).

use std::collections::HashMap;

use inkwell::llvm_sys::core::{
    LLVMGetCalledValue, LLVMGetNumSuccessors, LLVMGetSuccessor, LLVMIsAFunction, LLVMIsDeclaration,
};
use inkwell::values::{AsValueRef, InstructionOpcode};
use serde::{Deserialize, Serialize};

use super::IrModule;

/// One basic block: its opcode mnemonics in order and its distinct successors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockCfg {
    pub name: String,
    /// LLVM's mnemonics (`alloca`, `getelementptr`, `icmp`, `br`, …), no operands or types.
    pub opcodes: Vec<String>,
    /// Indices into the function's blocks, in terminator order, without repeats (a switch
    /// with several cases to one block gives one edge).
    pub successors: Vec<usize>,
}

/// A defined function. `blocks[0]` is the entry block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionCfg {
    pub name: String,
    pub blocks: Vec<BlockCfg>,
    /// Defined functions this one calls directly, in first-call order, without repeats.
    /// Declarations (`printf`) and intrinsics are left out.
    pub callees: Vec<String>,
}

/// `Instruction::getOpcodeName` for each opcode the C API exposes.
pub fn opcode_name(op: InstructionOpcode) -> String {
    match op {
        InstructionOpcode::Return => "ret".into(),
        InstructionOpcode::VAArg => "va_arg".into(),
        InstructionOpcode::AtomicCmpXchg => "cmpxchg".into(),
        other => format!("{other:?}").to_lowercase(),
    }
}

impl IrModule {
    /// Every function with a body, in module order.
    pub fn function_cfgs(&self) -> Vec<FunctionCfg> {
        let mut out = Vec::new();
        for function in self.module().get_functions() {
            let blocks = function.get_basic_blocks();
            if blocks.is_empty() {
                continue;
            }
            let index: HashMap<_, usize> = blocks.iter().enumerate().map(|(i, b)| (b.as_mut_ptr(), i)).collect();
            let mut callees: Vec<String> = Vec::new();
            let mut cfg_blocks = Vec::with_capacity(blocks.len());
            for block in &blocks {
                let mut opcodes = Vec::new();
                let mut successors = Vec::new();
                for inst in block.get_instructions() {
                    let op = inst.get_opcode();
                    opcodes.push(opcode_name(op));
                    let raw = inst.as_value_ref();
                    if matches!(op, InstructionOpcode::Call | InstructionOpcode::Invoke | InstructionOpcode::CallBr) {
                        unsafe {
                            let callee = LLVMGetCalledValue(raw);
                            if !callee.is_null() && !LLVMIsAFunction(callee).is_null() && LLVMIsDeclaration(callee) == 0
                            {
                                let name = inkwell::values::FunctionValue::new(callee)
                                    .map(|f| f.get_name().to_string_lossy().into_owned());
                                if let Some(name) = name.filter(|n| !callees.contains(n)) {
                                    callees.push(name);
                                }
                            }
                        }
                    }
                    if inst.is_terminator() {
                        let n = unsafe { LLVMGetNumSuccessors(raw) };
                        for i in 0..n {
                            let succ = unsafe { LLVMGetSuccessor(raw, i) };
                            if let Some(&j) = index.get(&succ) {
                                if !successors.contains(&j) {
                                    successors.push(j);
                                }
                            }
                        }
                    }
                }
                cfg_blocks.push(BlockCfg {
                    name: block.get_name().to_string_lossy().into_owned(),
                    opcodes,
                    successors,
                });
            }
            out.push(FunctionCfg {
                name: function.get_name().to_string_lossy().into_owned(),
                blocks: cfg_blocks,
                callees,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llvm::TargetSpec;

    const IR: &str = r#"
declare i32 @printf(ptr, ...)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
define i32 @leaf(i32 %x) {
  ret i32 %x
}
define i32 @main(i32 %n) {
entry:
  %a = alloca i32
  call void @llvm.memset.p0.i64(ptr %a, i8 0, i64 4, i1 false)
  switch i32 %n, label %done [ i32 1, label %one
                               i32 2, label %one ]
one:
  %r = call i32 @leaf(i32 %n)
  %s = call i32 @leaf(i32 %r)
  br label %done
done:
  %p = phi i32 [ 0, %entry ], [ %s, %one ]
  %q = call i32 (ptr, ...) @printf(ptr null)
  ret i32 %p
}
"#;

    #[test]
    fn blocks_successors_opcodes_and_defined_callees() {
        let module = IrModule::from_bytes(IR.as_bytes(), "t.ll", &TargetSpec::default()).unwrap();
        let cfgs = module.function_cfgs();
        assert_eq!(cfgs.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["leaf", "main"]);
        let main = &cfgs[1];
        assert_eq!(main.callees, ["leaf"]);
        assert_eq!(main.blocks[0].name, "entry");
        assert_eq!(main.blocks[0].opcodes, ["alloca", "call", "switch"]);
        assert_eq!(main.blocks[0].successors, [2, 1], "default first, duplicate cases once");
        assert_eq!(main.blocks[1].successors, [2]);
        assert!(main.blocks[2].successors.is_empty());
        assert_eq!(main.blocks[2].opcodes, ["phi", "call", "ret"]);
    }
}
