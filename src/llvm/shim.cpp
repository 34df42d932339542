// The in-process engine's entry point into LLVM's C++ API: the C API has no
// pass-instrumentation hooks. The pipeline code itself is shared with the agent.

#include "pipeline.h"

#include <csetjmp>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

#include "llvm-c/Error.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/PrettyStackTrace.h"
#include "llvm-c/TargetMachine.h"
#include "llvm-c/Types.h"
#include "llvm/Support/CBindingWrapping.h"

// opt's own option (its driver defines it, not the library): reproducers that need it
// (`opt -aa-pipeline= …`) run here as there. pipeline.h reads it.
static cl::opt<std::string> AAPipeline("aa-pipeline", cl::Hidden, cl::init("default"),
                                       cl::desc("The alias analyses, as opt -aa-pipeline takes them"));

// An assertions build of LLVM stops in Value::~Value when a value is destroyed while still
// used ("Uses remain when a value is destroyed!"). A release build goes on, and whatever
// code reads the dangling use first crashes, or not, far from the cause (dev bug 173357:
// the verifier, after loop-deletion freed a value an unreachable block still used). The
// linker routes the release build's calls of the destructor through this check (build.rs:
// --wrap), which stops the run as the assertion would, so the stack names the code that
// destroyed the value. glibc's assertion format, so that the crash is described by it.
extern "C" void __real__ZN4llvm5ValueD2Ev(Value *V);
extern "C" void __wrap__ZN4llvm5ValueD2Ev(Value *V) {
  if (CtosCheckingUses && !V->materialized_use_empty()) {
    errs() << "While deleting: " << *V->getType() << " %" << V->getName() << "\n";
    errs() << "(ctos checks this as an assertions build of LLVM does)\n"
              "ctos: llvm/lib/IR/Value.cpp: llvm::Value::~Value(): Assertion `materialized_use_empty() && "
              "\"Uses remain when a value is destroyed!\"' failed.\n";
    errs().flush();
    abort();
  }
  __real__ZN4llvm5ValueD2Ev(V);
}

static LLVMErrorRef runPasses(LLVMModuleRef ModuleRef, const char *Passes, LLVMTargetMachineRef MachineRef,
                              int Verify, int Heap, const CtosPassWatch *Watch) {
  TargetMachine *Machine = reinterpret_cast<TargetMachine *>(MachineRef);
  if (auto Err = ctosRunPasses(*unwrap(ModuleRef), Passes, Machine, Verify, Heap, Watch))
    return wrap(std::move(Err));
  return nullptr;
}

// A check that fails after a pass (broken IR, a stale analysis) ends the pipeline by a
// jump back into ctos_run_passes, so that a worker (src/sandbox/child.rs) lives on to run
// its next job instead of paying a fork for it. The jump skips the destructors of the pass
// managers, the analyses and everything the passes on the stack held: all of it is leaked,
// and the module must never be used or freed again (value handles that were on the
// abandoned stack are still linked into its values' lists).
static std::jmp_buf *FailJump;
static std::string FailText;

[[noreturn]] static void jumpOut(const std::string &Message) {
  FailText = Message;
  std::longjmp(*FailJump, 1);
}

// `*Failed`: the failed check's message (malloc'd), if one ended the pipeline.
extern "C" LLVMErrorRef ctos_run_passes(LLVMModuleRef ModuleRef, const char *Passes,
                                        LLVMTargetMachineRef MachineRef, int Verify, int Heap,
                                        const CtosPassWatch *Watch, char **Failed) {
  std::jmp_buf Env;
  const void *Stack = SavePrettyStackState();
  *Failed = nullptr;
  if (setjmp(Env)) {
    CtosFailed = nullptr;
    ctosPlainHeap();
    RestorePrettyStackState(Stack);
    *Failed = strdup(FailText.c_str());
    return nullptr;
  }
  FailJump = &Env;
  CtosFailed = jumpOut;
  LLVMErrorRef Err = runPasses(ModuleRef, Passes, MachineRef, Verify, Heap, Watch);
  CtosFailed = nullptr;
  return Err;
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

// A worker (src/sandbox/child.rs) runs jobs that set LLVM options of their own one after
// another: it puts each option back after the job, and checks that it prints as before.

static cl::Option *registeredOption(const char *Name) {
  auto &Options = cl::getRegisteredOptions();
  auto It = Options.find(Name);
  return It == Options.end() ? nullptr : It->second;
}

// Option::printOptionValue writes to outs() only: fd 1 is pointed at a memory file while
// it does. Null if that cannot be done: the value is then unknown, and equals nothing.
static char *printedValue(const cl::Option &O) {
  std::string Text;
  outs().flush();
  int Saved = dup(1), Memory = memfd_create("ctos-option", 0);
  if (Saved < 0 || Memory < 0 || dup2(Memory, 1) < 0) {
    if (Saved >= 0)
      close(Saved);
    if (Memory >= 0)
      close(Memory);
    return nullptr;
  }
  // The width of the name column: less than the name's length would pad by (size_t)-n.
  O.printOptionValue(O.ArgStr.size() + 16, /*Force=*/true);
  outs().flush();
  dup2(Saved, 1);
  close(Saved);
  char Buffer[512];
  ssize_t N;
  lseek(Memory, 0, SEEK_SET);
  while ((N = read(Memory, Buffer, sizeof Buffer)) > 0)
    Text.append(Buffer, N);
  close(Memory);
  return strdup(Text.c_str());
}

// The value of option `Name` as -print-options prints it (malloc'd); null: no such option,
// or its value could not be read.
extern "C" char *ctos_option_value(const char *Name) {
  const cl::Option *O = registeredOption(Name);
  return O ? printedValue(*O) : nullptr;
}

// Option `Name` as if never given: its default value, no occurrences. False: no such option.
extern "C" bool ctos_reset_option(const char *Name) {
  cl::Option *O = registeredOption(Name);
  if (O)
    O->reset();
  return O != nullptr;
}

// See ctosSetFunctionAttributes.
extern "C" void ctos_set_function_attributes(LLVMModuleRef ModuleRef, const char *CPU, const char *Features) {
  ctosSetFunctionAttributes(*unwrap(ModuleRef), CPU, Features);
}

// A child's stderr is a file its parent reads at the end of each job: buffered, a printer
// pass writes it in blocks instead of a system call per token (print<da> made 1.3 million
// on a csmith program). The sandbox flushes before each message to the parent.
extern "C" void ctos_buffer_errs() { errs().SetBuffered(); }
extern "C" void ctos_flush_errs() { errs().flush(); }

// LLVM's debug counters (-debug-counter=instcombine-visit=0-41) name the one transformation
// of a pass run after which a failure shows. Their counts and limits outlive a job in a
// worker that runs many, so each job starts from here: counts at zero and, with `Release`,
// a counter an earlier job limited lets every step run again (limits cannot be cleared,
// only widened). With `Count`, every counter counts its steps. False: this LLVM's release
// build has no counters (before LLVM 20, they were compiled out with assertions).
#if LLVM_VERSION_MAJOR >= 22
#include "llvm/Support/DebugCounter.h"

static const char EveryStep[] = "=0-9000000000000000000";

extern "C" bool ctos_counters_reset(bool Count, bool Release) {
  DebugCounter &Counters = DebugCounter::instance();
  for (auto &[Name, Info] : Counters) {
    if (Release && DebugCounter::isCounterSet(*Info))
      Counters.push_back((Name + EveryStep).str());
    DebugCounter::setCounterState(*Info, {0, 0});
  }
  if (Count)
    Counters.activateAllCounters();
  return true;
}

// Every counter's steps so far, "name count" lines (malloc'd).
extern "C" char *ctos_counter_counts() {
  std::string Text;
  for (auto &[Name, Info] : DebugCounter::instance())
    Text += (Name + " " + Twine(DebugCounter::getCounterState(*Info).Count) + "\n").str();
  return strdup(Text.c_str());
}
#else
extern "C" bool ctos_counters_reset(bool, bool) { return false; }
extern "C" char *ctos_counter_counts() { return strdup(""); }
#endif
