// The in-process engine's entry point into LLVM's C++ API: the C API has no
// pass-instrumentation hooks. The pipeline code itself is shared with the agent.

#include "pipeline.h"

#include "llvm-c/Error.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm-c/TargetMachine.h"
#include "llvm-c/Types.h"
#include "llvm/Support/CBindingWrapping.h"

// opt's own option (its driver defines it, not the library): reproducers that need it
// (`opt -aa-pipeline= …`) run here as there. pipeline.h reads it.
static cl::opt<std::string> AAPipeline("aa-pipeline", cl::Hidden, cl::init("default"),
                                       cl::desc("The alias analyses, as opt -aa-pipeline takes them"));

extern "C" LLVMErrorRef ctos_run_passes(LLVMModuleRef ModuleRef, const char *Passes,
                                        LLVMTargetMachineRef MachineRef, int Verify,
                                        const CtosPassWatch *Watch) {
  TargetMachine *Machine = reinterpret_cast<TargetMachine *>(MachineRef);
  if (auto Err = ctosRunPasses(*unwrap(ModuleRef), Passes, Machine, Verify, Watch))
    return wrap(std::move(Err));
  return nullptr;
}

extern "C" uint64_t ctos_ir_hash(LLVMModuleRef ModuleRef) { return ctosIrHash(*unwrap(ModuleRef)); }

// Before the first fork: see ctosBuildSubtargets.
extern "C" void ctos_build_subtargets(LLVMModuleRef ModuleRef, LLVMTargetMachineRef MachineRef) {
  ctosBuildSubtargets(*unwrap(ModuleRef), reinterpret_cast<TargetMachine *>(MachineRef));
}

// Bitcode that keeps each value's use-list order: a child that optimizes a copy parsed
// from it walks users as one that optimizes the original does.
extern "C" LLVMMemoryBufferRef ctos_bitcode_with_use_lists(LLVMModuleRef ModuleRef) {
  SmallVector<char, 0> Bytes;
  raw_svector_ostream Out(Bytes);
  WriteBitcodeToFile(*unwrap(ModuleRef), Out, /*ShouldPreserveUseListOrder=*/true);
  return wrap(MemoryBuffer::getMemBufferCopy(StringRef(Bytes.data(), Bytes.size())).release());
}
