// Running a new-PM pipeline with verification after the passes that changed the IR.
//
// LLVM's verify-each (opt -verify-each, LLVMRunPasses' VerifyEach) verifies after every
// pass, also after the many passes of a long random sequence that change nothing. On
// csmith programs that re-verification of unchanged IR is most of the optimizer's time.
// The C API has no pass-instrumentation hooks, so this is LLVMRunPasses' set-up done
// here with one more after-pass callback: verify the IR unit when the pass reports a
// change (its PreservedAnalyses are not "all"). A pass that changes IR while claiming
// to preserve everything is itself a bug; the final verification still sees its result.

#include "llvm-c/Error.h"
#include "llvm-c/TargetMachine.h"
#include "llvm-c/Types.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LazyCallGraph.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/CBindingWrapping.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

using namespace llvm;

namespace {

enum VerifyMode { VerifyNone = 0, VerifyChanged = 1, VerifyEvery = 2 };

// The IR unit a pass ran on, as the instrumentation hands it over.
const Function *functionOf(Any IR) {
  if (const auto *F = llvm::any_cast<const Function *>(&IR))
    return *F;
  if (const auto *L = llvm::any_cast<const Loop *>(&IR))
    return (*L)->getHeader()->getParent();
  return nullptr;
}

const Module *moduleOf(Any IR) {
  if (const auto *M = llvm::any_cast<const Module *>(&IR))
    return *M;
  if (const auto *C = llvm::any_cast<const LazyCallGraph::SCC *>(&IR))
    return (*C)->begin()->getFunction().getParent();
  return nullptr;
}

void verifyAfterChangingPasses(PassInstrumentationCallbacks &PIC) {
  PIC.registerAfterPassCallback([](StringRef P, Any IR, const PreservedAnalyses &PA) {
    // Adaptors and managers report after the passes inside them, verified already.
    if (PA.areAllPreserved() ||
        isSpecialPass(P, {"PassManager", "PassAdaptor", "AnalysisManagerProxy", "DevirtSCCRepeatedPass",
                          "ModuleInlinerWrapperPass", "VerifierPass", "PrintModulePass"}))
      return;
    if (const Function *F = functionOf(IR)) {
      if (verifyFunction(*F, &errs()))
        report_fatal_error(formatv("Broken function found after pass \"{0}\", compilation aborted!", P));
    } else if (const Module *M = moduleOf(IR)) {
      if (verifyModule(*M, &errs()))
        report_fatal_error(formatv("Broken module found after pass \"{0}\", compilation aborted!", P));
    }
  });
}

} // namespace

extern "C" LLVMErrorRef ctos_run_passes(LLVMModuleRef ModuleRef, const char *Passes,
                                        LLVMTargetMachineRef MachineRef, int Verify) {
  Module *Mod = unwrap(ModuleRef);
  TargetMachine *Machine = reinterpret_cast<TargetMachine *>(MachineRef);

  // What opt uses, so that `default<O3>` here and there is one pipeline.
  PipelineTuningOptions PTO;
  PTO.LoopInterleaving = true;
  PTO.LoopVectorization = true;
  PTO.SLPVectorization = true;
  PTO.LoopUnrolling = true;

  PassInstrumentationCallbacks PIC;
  PassBuilder PB(Machine, PTO, std::nullopt, &PIC);
  LoopAnalysisManager LAM;
  FunctionAnalysisManager FAM;
  CGSCCAnalysisManager CGAM;
  ModuleAnalysisManager MAM;
  PB.registerLoopAnalyses(LAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerModuleAnalyses(MAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);

  StandardInstrumentations SI(Mod->getContext(), /*DebugLogging=*/false, Verify == VerifyEvery);
  SI.registerCallbacks(PIC, &MAM);
  if (Verify == VerifyChanged)
    verifyAfterChangingPasses(PIC);

  ModulePassManager MPM;
  if (auto Err = PB.parsePassPipeline(MPM, Passes))
    return wrap(std::move(Err));
  MPM.run(*Mod, MAM);
  return nullptr;
}
