// The pass-running code shared by the in-process engine (src/llvm/shim.cpp) and the agent
// inside an external opt (llvm-plugin/agent.cpp): one way to run a pipeline, whichever
// LLVM runs it.
//
// LLVM's verify-each (opt -verify-each, LLVMRunPasses' VerifyEach) verifies after every
// pass, also after the many passes of a long random sequence that change nothing. On
// csmith programs that re-verification of unchanged IR is most of the optimizer's time.
// So this is LLVMRunPasses' set-up with one more after-pass callback: verify the IR unit
// when the pass reports a change (its PreservedAnalyses are not "all"). A pass that changes
// IR while claiming to preserve everything is itself a bug; the final verification still
// sees its result.
//
// The same callbacks watch the pipeline for localization: they report each top-level
// element as it starts (so a crash names the pass it happened in) and open a gate while
// one chosen pass runs (so coverage can be recorded for that pass alone).

#ifndef CTOS_PIPELINE_H
#define CTOS_PIPELINE_H

#include "llvm/Analysis/AliasAnalysis.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LazyCallGraph.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/IR/Dominators.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

#include <cstdlib>
#include <cstring>
#include <malloc.h>

using namespace llvm;

namespace {

// VerifyChangedEachUnit is VerifyChanged without the deferrals below: ctos reruns a
// pipeline with it when a deferred verification fails, to name the pass exactly.
enum VerifyMode { VerifyNone = 0, VerifyChanged = 1, VerifyEvery = 2, VerifyChangedEachUnit = 3 };

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

// A CGSCC pass runs once per SCC, so verifying the whole module after each SCC it changed
// is quadratic in the number of functions; a loop pass runs once per loop, and verifying
// its whole function after each loop it changed is quadratic in the number of loops. On
// csmith programs these were most of verify-each's cost. So in VerifyChanged mode an SCC's
// own functions are verified at once, and the rest of the module once when the CGSCC
// adaptor returns; a function that loop passes changed is verified once when the loop
// adaptor returns. A deferred verification that fails says so (DeferredMark), and ctos
// reruns the pipeline in VerifyChangedEachUnit mode to learn which pass broke the IR; it
// does the same when a pass crashes, as a loop pass may have crashed on IR that an earlier
// one broke. Function passes are verified at once: deferring them to the end of their
// `function(...)` lets a later pass repair what an earlier one broke (dev bug 191714's
// slp-vectorizer breakage disappears behind instcombine and simplifycfg).
const char *const DeferredMark = " (verified when its adaptor returned)";

// How a check after a pass ends the run: LLVM's fatal error, unless the in-process engine
// set CtosFailed (shim.cpp), which ends the pipeline and keeps the process for its next
// job. The checks run between passes, so no pass is left half-way through its work.
void (*CtosFailed)(const std::string &Message) = nullptr;

[[noreturn]] void failAfterPass(const std::string &Message) {
  if (CtosFailed)
    CtosFailed(Message);
  report_fatal_error(Twine(Message));
}

void verifyAfterChangingPasses(PassInstrumentationCallbacks &PIC, bool Defer) {
  struct Pending {
    std::string CGSCCPass, LoopPass;
  };
  auto Last = std::make_shared<Pending>();
  PIC.registerAfterPassCallback([Last, Defer](StringRef P, Any IR, const PreservedAnalyses &PA) {
    auto broken = [](const char *Unit, StringRef Pass, const char *Mark) {
      failAfterPass(formatv("Broken {0} found after pass \"{1}\"{2}, compilation aborted!", Unit, Pass, Mark).str());
    };
    if (P.contains("ModuleToPostOrderCGSCCPassAdaptor") || P.contains("FunctionToLoopPassAdaptor")) {
      bool CGSCC = P.contains("CGSCC");
      std::string &Changer = CGSCC ? Last->CGSCCPass : Last->LoopPass;
      if (!Changer.empty()) {
        const Module *M = moduleOf(IR);
        const Function *F = functionOf(IR);
        if ((M && verifyModule(*M, &errs())) || (F && verifyFunction(*F, &errs())))
          broken(M ? "module" : "function", Changer, DeferredMark);
      }
      Changer.clear();
      return;
    }
    // Adaptors and managers report after the passes inside them, verified already.
    if (PA.areAllPreserved() ||
        isSpecialPass(P, {"PassManager", "PassAdaptor", "AnalysisManagerProxy", "DevirtSCCRepeatedPass",
                          "ModuleInlinerWrapperPass", "VerifierPass", "PrintModulePass"}))
      return;
    if (const auto *C = llvm::any_cast<const LazyCallGraph::SCC *>(&IR); C && Defer) {
      for (LazyCallGraph::Node &N : **C)
        if (verifyFunction(N.getFunction(), &errs()))
          broken("function", P, "");
      Last->CGSCCPass = P.str();
    } else if (llvm::any_cast<const Loop *>(&IR) && Defer) {
      Last->LoopPass = P.str();
    } else if (const Function *F = functionOf(IR)) {
      if (verifyFunction(*F, &errs()))
        broken("function", P, "");
    } else if (const Module *M = moduleOf(IR)) {
      if (verifyModule(*M, &errs()))
        broken("module", P, "");
    }
  });
}

bool isContainer(StringRef P) {
  return isSpecialPass(P, {"PassManager", "PassAdaptor", "AnalysisManagerProxy", "DevirtSCCRepeatedPass",
                           "ModuleInlinerWrapperPass", "RepeatedPass"});
}

// Analyses a pass that changed the IR left cached, so claimed to preserve, checked against
// the IR after it: what an assertions build of LLVM checks after each loop pass under
// -verify-scev, -verify-dom-info and -verify-loop-info. Release builds compile those
// checks out (and the verify<domtree> and verify<loops> passes do nothing there), but
// ScalarEvolution::verify and the dominator tree's own verification are library code
// that release builds keep; LoopInfo is compared here with one computed afresh. An LLVM
// option, as LLVM's own -verify-scev is: every ctos command takes it as
// --llvm-arg=-ctos-check-preserved=scev,domtree,loops, and the agent registers it in opt.
enum AnalysisCheck { CheckSCEV, CheckDomTree, CheckLoops };

cl::bits<AnalysisCheck> CheckPreserved(
    "ctos-check-preserved", cl::CommaSeparated,
    cl::desc("After each pass that changed the IR, check the analyses it kept against the IR"),
    cl::values(clEnumValN(CheckSCEV, "scev", "ScalarEvolution (its own verify: trip counts and caches)"),
               clEnumValN(CheckDomTree, "domtree", "the dominator tree"),
               clEnumValN(CheckLoops, "loops", "LoopInfo: loop depths and headers")));

// Whether `LI` describes the loops of `F` as they are: every block in as many loops, and
// the same blocks loop headers, as in a LoopInfo computed now.
bool loopsMatch(Function &F, const LoopInfo &LI) {
  DominatorTree DT(F);
  LoopInfo Fresh(DT);
  for (BasicBlock &BB : F)
    if (LI.getLoopDepth(&BB) != Fresh.getLoopDepth(&BB) || LI.isLoopHeader(&BB) != Fresh.isLoopHeader(&BB))
      return false;
  return true;
}

void checkPreservedAnalyses(PassInstrumentationCallbacks &PIC, FunctionAnalysisManager &FAM, unsigned Checks) {
  PIC.registerAfterPassCallback([&FAM, Checks](StringRef P, Any IR, const PreservedAnalyses &PA) {
    if (PA.areAllPreserved() || isContainer(P) || isSpecialPass(P, {"VerifierPass", "PrintModulePass"}))
      return;
    auto stale = [&P](const char *Analysis, const Function &F) {
      errs() << "ctos: " << Analysis << " of function " << F.getName() << " no longer matches the IR\n";
      failAfterPass(formatv("{0} is stale after pass \"{1}\", which kept it", Analysis, P).str());
    };
    auto check = [&](Function &F) {
      if (F.isDeclaration())
        return;
      if (Checks & (1u << CheckDomTree))
        if (auto *DT = FAM.getCachedResult<DominatorTreeAnalysis>(F))
          if (!DT->verify(DominatorTree::VerificationLevel::Fast))
            stale("DominatorTree", F);
      if (Checks & (1u << CheckLoops))
        if (auto *LI = FAM.getCachedResult<LoopAnalysis>(F))
          if (!loopsMatch(F, *LI))
            stale("LoopInfo", F);
      // Aborts, naming the loop whose trip count changed (the campaign keys it by pass).
      if (Checks & (1u << CheckSCEV))
        if (auto *SE = FAM.getCachedResult<ScalarEvolutionAnalysis>(F))
          SE->verify();
    };
    if (const Function *F = functionOf(IR))
      check(const_cast<Function &>(*F));
    else if (const auto *C = llvm::any_cast<const LazyCallGraph::SCC *>(&IR))
      for (LazyCallGraph::Node &N : **C)
        check(N.getFunction());
    else if (const Module *M = moduleOf(IR))
      for (const Function &F : *M)
        check(const_cast<Function &>(F));
  });
}

} // namespace

// Mirrored by PassWatch in src/llvm/module.rs.
struct CtosPassWatch {
  // Called as top-level element `index` (0-based) of the pipeline starts.
  void (*top_level)(int index);
  // Called once, with LLVM's class name of the focus pass, when the gate first opens.
  void (*focus_opened)(const char *name, size_t len);
  // Pipeline name of the pass (`slp-vectorizer`) whose runs open the gate; null: no gate.
  const char *focus;
  // Only inside this top-level element; -1: wherever the pass runs.
  int focus_element;
  // 1 while a run of the focus pass is on the stack, else 0.
  int *gate;
  // Runs of passes that may be skipped, counted as -opt-bisect-limit counts them: -1, not
  // counted; 0, all run; N > 0, those after the Nth skipped, and the Nth reported as it
  // starts (pass_run). Counted runs, skipped ones too, are reported at the end (pass_runs).
  int run_limit;
  void (*pass_runs)(int count);
  // The Nth run: its number, its top-level element, its pipeline name.
  void (*pass_run)(int index, int element, const char *name, size_t len);
};

namespace {

struct CtosWatchState {
  int depth = 0;
  int element = -1;
  int gateDepth = -1;
  bool reported = false;
  int runs = 0;
};

void watchPasses(PassInstrumentationCallbacks &PIC, const CtosPassWatch &W, std::shared_ptr<CtosWatchState> S) {
  PassInstrumentationCallbacks *Callbacks = &PIC;
  if (W.run_limit >= 0)
    PIC.registerShouldRunOptionalPassCallback([S, W, Callbacks](StringRef P, Any) {
      int Run = ++S->runs;
      if (W.run_limit > 0 && Run > W.run_limit)
        return false;
      if (Run == W.run_limit && W.pass_run) {
        StringRef Name = Callbacks->getPassNameForClassName(P);
        Name = Name.empty() ? P : Name;
        // A pass at the top level starts the next element.
        W.pass_run(Run, S->depth == 0 ? S->element + 1 : S->element, Name.data(), Name.size());
      }
      return true;
    });
  PIC.registerBeforeNonSkippedPassCallback([S, W, Callbacks](StringRef P, Any) {
    if (S->depth == 0) {
      ++S->element;
      if (W.top_level)
        W.top_level(S->element);
    }
    if (W.focus && S->gateDepth < 0 && (W.focus_element < 0 || W.focus_element == S->element) &&
        !isContainer(P)) {
      StringRef Name = Callbacks->getPassNameForClassName(P);
      if ((Name.empty() ? P : Name) == W.focus) {
        S->gateDepth = S->depth;
        *W.gate = 1;
        if (!S->reported && W.focus_opened) {
          S->reported = true;
          W.focus_opened(P.data(), P.size());
        }
      }
    }
    ++S->depth;
  });
  auto after = [S, W]() {
    --S->depth;
    if (S->depth == S->gateDepth) {
      S->gateDepth = -1;
      *W.gate = 0;
    }
  };
  PIC.registerAfterPassCallback([after](StringRef, Any, const PreservedAnalyses &) { after(); });
  PIC.registerAfterPassInvalidatedCallback([after](StringRef, const PreservedAnalyses &) { after(); });
}

} // namespace

namespace {

// What opt uses, so that `default<O3>` here and there is one pipeline.
PipelineTuningOptions optTuning() {
  PipelineTuningOptions PTO;
  PTO.LoopInterleaving = true;
  PTO.LoopVectorization = true;
  PTO.SLPVectorization = true;
  PTO.LoopUnrolling = true;
  return PTO;
}

// opt's `-aa-pipeline` (LLVM's default alias analyses unless set; `-aa-pipeline=` is none
// at all). opt registers the option in its driver and ctos in shim.cpp; the agent runs
// inside opt and cannot register it again, so both read it by name.
std::string ctosAAPipeline() {
  auto &Options = cl::getRegisteredOptions();
  auto It = Options.find("aa-pipeline");
  if (It == Options.end())
    return "default";
  return static_cast<cl::opt<std::string> *>(It->second)->getValue();
}

// A function's subtarget (with the target's legalizer and lowering tables) is built on
// first use, inside whichever pass asks first: a run whose culprit asks records the
// construction, a run whose earlier pass asked does not, and spectra would blame the
// target's constructors. Built before any pass, it is in no pass's trace; built by the
// process that forks the runs, before its first fork, the machine's cache hands it to
// every run (it was a tenth of a short run, and most of the coverage sites every run hit).
void ctosBuildSubtargets(Module &Mod, TargetMachine *Machine) {
  if (Machine)
    for (Function &F : Mod)
      if (!F.isDeclaration())
        (void)Machine->getSubtargetImpl(F);
}

// What opt does with -mcpu= and -mattr= besides building its target machine
// (codegen::setFunctionAttributes, whose other flags ctos does not take): every function
// gets the CPU, unless it names one, and the features after its own. Cost models read
// them per function, and the optimized IR carries them, as opt's does.
void ctosSetFunctionAttributes(Module &Mod, StringRef CPU, StringRef Features) {
  if (CPU.empty() && Features.empty())
    return;
  for (Function &F : Mod) {
    AttrBuilder NewAttrs(F.getContext());
    if (!CPU.empty() && !F.hasFnAttribute("target-cpu"))
      NewAttrs.addAttribute("target-cpu", CPU);
    if (!Features.empty()) {
      StringRef Old = F.getFnAttribute("target-features").getValueAsString();
      NewAttrs.addAttribute("target-features", Old.empty() ? Features.str() : (Old + "," + Features).str());
    }
    F.setAttributes(F.getAttributes().addFnAttributes(F.getContext(), NewAttrs));
  }
}

// A string stream with a buffer. Module::print writes through a formatted_raw_ostream,
// which buffers only when the stream under it does: over raw_string_ostream (unbuffered)
// every token was a call that scanned it for line and column and grew the string, a fifth
// of a short run's child. Here the same bytes arrive in 64 KiB chunks.
class CtosStringStream : public raw_ostream {
  std::string &Text;
  void write_impl(const char *Ptr, size_t Size) override { Text.append(Ptr, Size); }
  uint64_t current_pos() const override { return Text.size(); }

public:
  explicit CtosStringStream(std::string &Text) : Text(Text) { SetBufferSize(1 << 16); }
  ~CtosStringStream() override { flush(); }
};

// The module as `opt -S` prints it.
std::string ctosPrintModule(const Module &Mod) {
  std::string Text;
  {
    CtosStringStream OS(Text);
    Mod.print(OS, nullptr);
  }
  return Text;
}

// The IR hash: XXH3-64 of the printed module (what ctos's tests compare with opt's output).
uint64_t ctosIrHash(const Module &Mod) { return xxh3_64bits(StringRef(ctosPrintModule(Mod))); }

// A pass that reads memory it never wrote (past the end of a small vector on the stack, a
// freed or fresh heap block) sees what happens to be there: in plain opt, what opt's own
// start-up left; in a forked child, what ctos left, often zeros, and zeros read as null
// pointers and empty lists that make the pass do nothing visible (dev bug 179880: the
// scalarizer reads 800 bytes past a stack vector; opt-22 aborts on one machine and not
// on another). So on the strict heap (src/sandbox/heap.rs), while the passes run, every
// such read sees poison: the stack below this frame is painted and each heap block is
// filled as it is handed out and as it is freed (src/sandbox/heap.c). A poison pointer is
// non-canonical, so using it faults at once, inside the pass that read it. The plain heap
// is opt's: a poisoned block also changes what a dangling read decides (dev bug 219885:
// a freed instruction whose kind reads as poison is skipped where opt crashes on it), so
// ctos runs the plain one too when the strict one shows nothing.
enum HeapPolicy { HeapPlain = 0, HeapStrict = 1 };
constexpr unsigned char CtosPoison = 0xa5;

// src/sandbox/heap.c: in the front doors, and preloaded into an external opt; an agent in
// an opt started without it falls back to glibc's fill, which the per-thread cache escapes.
extern "C" void ctos_heap_fill(int Byte) __attribute__((weak));

void ctosFillHeap(int Byte) {
  if (ctos_heap_fill)
    ctos_heap_fill(Byte);
  else
    mallopt(M_PERTURB, Byte < 0 ? 0 : Byte);
}

// Deeper than the passes' own frames go, but a few dozen pages: their first write in a
// fresh child is a page fault each.
__attribute__((noinline)) void ctosPaintStack() {
  volatile unsigned char Area[256 * 1024];
  unsigned char *P = const_cast<unsigned char *>(Area);
  memset(P, CtosPoison, sizeof Area);
  asm volatile("" : : "r"(P) : "memory");
}

// Whether a value destroyed while still used stops the run as an assertions build of LLVM
// does (only the in-process engine has the check: src/llvm/shim.cpp). Only while passes
// run on the strict heap: ctos's own code outside them (mutations, modules it builds) is
// not LLVM's to judge, and the plain heap is opt's, which goes on.
inline bool CtosCheckingUses = false;

// Back to the plain heap: also where a pipeline left by a jump (a failed check) skipped
// the destructor below, before a worker's next job.
void ctosPlainHeap() {
  ctosFillHeap(-1);
  CtosCheckingUses = false;
}

struct CtosPoisonedMemory {
  const bool Strict;
  explicit CtosPoisonedMemory(int Heap) : Strict(Heap == HeapStrict) {
    if (!Strict)
      return;
    ctosPaintStack();
    ctosFillHeap(CtosPoison);
    CtosCheckingUses = true;
  }
  // A program the child runs afterwards gets glibc's heap (or its own fill).
  ~CtosPoisonedMemory() {
    if (Strict)
      ctosPlainHeap();
  }
};

// Run `Passes` on `Mod`: an error only when LLVM rejects the text; whatever the passes do
// wrong ends the process (the caller is a sandboxed child).
Error ctosRunPasses(Module &Mod, StringRef Passes, TargetMachine *Machine, int Verify, int Heap,
                    const CtosPassWatch *Watch) {
  // Already built by the forking process, if it did: a cache lookup then.
  ctosBuildSubtargets(Mod, Machine);
  CtosPoisonedMemory Poisoned(Heap);
  PassInstrumentationCallbacks PIC;
  PassBuilder PB(Machine, optTuning(), std::nullopt, &PIC);
  LoopAnalysisManager LAM;
  FunctionAnalysisManager FAM;
  CGSCCAnalysisManager CGAM;
  ModuleAnalysisManager MAM;
  // As opt does, the library-function table is built here, before any pass; built lazily
  // inside whichever pass asks first, its construction (triple parsing) would be in that
  // pass's trace only when no earlier pass had asked.
  TargetLibraryInfoImpl TLII(Triple(Mod.getTargetTriple()));
  FAM.registerPass([&] { return TargetLibraryAnalysis(TLII); });
  // Registered before the default analyses, as opt does, so that these are used.
  AAManager AA;
  if (auto Err = PB.parseAAPipeline(AA, ctosAAPipeline()))
    return Err;
  FAM.registerPass([&] { return std::move(AA); });
  PB.registerLoopAnalyses(LAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerModuleAnalyses(MAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);

  // First, so that its after-pass callback closes the gate before any verification runs:
  // the verifier is the oracle's code, not the pass's.
  auto Watched = std::make_shared<CtosWatchState>();
  if (Watch)
    watchPasses(PIC, *Watch, Watched);
  StandardInstrumentations SI(Mod.getContext(), /*DebugLogging=*/false, Verify == VerifyEvery);
  SI.registerCallbacks(PIC, &MAM);
  if (Verify == VerifyChanged || Verify == VerifyChangedEachUnit)
    verifyAfterChangingPasses(PIC, Verify == VerifyChanged);
  // After the IR verifier: an analysis of broken IR means nothing.
  if (unsigned Checks = CheckPreserved.getBits())
    checkPreservedAnalyses(PIC, FAM, Checks);

  ModulePassManager MPM;
  if (auto Err = PB.parsePassPipeline(MPM, Passes))
    return Err;
  MPM.run(Mod, MAM);
  if (Watch && Watch->run_limit >= 0 && Watch->pass_runs)
    Watch->pass_runs(Watched->runs);
  return Error::success();
}

} // namespace

#endif
