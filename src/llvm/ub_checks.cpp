// Undefined behaviour and poison, checked as an unoptimized function runs: generated
// drivers (src/program/driver.rs) call a module's functions on inputs of their own, and a
// difference after optimization is a miscompilation only if the unoptimized run on those
// inputs was free of both. LLVM has no such checks for IR (the sanitizers instrument C),
// so each rule of the LangRef that makes a value poison or behaviour undefined is checked
// here (the rules are ub_rules.h's) by a call into the driver's runtime just before (or
// just after) the instruction: `__ctos.ub(kind)` when the rule is broken, `__ctos.access` and `__ctos.gep` for what only
// the runtime knows (which memory exists). The kinds are UB_KINDS in src/program/driver.rs.

#include "llvm-c/Core.h"
#include "ub_rules.h"
#include "llvm/Support/CBindingWrapping.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <map>
#include <set>

using namespace llvm;
using ctos::holdsUndef;
using ctos::hasFastMath;
using ctos::supportedValueType;

namespace {

// Why the body of F cannot be run and checked here: "" if it can.
std::string bodyProblem(Function &F) {
  for (Instruction &I : instructions(F)) {
    for (unsigned N = 0; N < I.getNumOperands(); ++N) {
      if (!holdsUndef(I.getOperand(N)))
        continue;
      // Building a vector lane by lane, or a shuffle of one vector, starts from poison.
      bool Builds = isa<UndefValue>(I.getOperand(N)) &&
                    ((isa<InsertElementInst>(I) && N == 0) || (isa<ShuffleVectorInst>(I) && N == 1));
      if (!Builds)
        return "an undef or poison operand";
    }
    if (hasFastMath(I))
      return "fast-math flags (not checked)";
    if (I.getType()->isVectorTy() && isa<ScalableVectorType>(I.getType()))
      return "scalable vectors";
    // The checks know the memory of address space 0; another space's pointer may name
    // other memory (a segment, a GPU's local memory) with its own rules.
    for (Value *Op : I.operands())
      if (Op->getType()->isPtrOrPtrVectorTy() && Op->getType()->getPointerAddressSpace() != 0)
        return "pointers of another address space than 0";
    if (I.getType()->isPtrOrPtrVectorTy() && I.getType()->getPointerAddressSpace() != 0)
      return "pointers of another address space than 0";
    auto *Call = dyn_cast<CallBase>(&I);
    if (!Call)
      continue;
    if (isa<InvokeInst>(Call) || isa<CallBrInst>(Call))
      return "invoke or callbr";
    Function *Callee = Call->getCalledFunction();
    if (!Callee)
      return "an indirect call";
    if (Call->getNumOperandBundles() > 0)
      return "operand bundles";
    if (Callee->isIntrinsic()) {
      Intrinsic::ID ID = Callee->getIntrinsicID();
      bool Memory = ID == Intrinsic::memcpy || ID == Intrinsic::memmove || ID == Intrinsic::memset;
      bool Markers = ID == Intrinsic::lifetime_start || ID == Intrinsic::lifetime_end || ID == Intrinsic::assume ||
                     ID == Intrinsic::experimental_noalias_scope_decl || ID == Intrinsic::donothing;
      if (!Memory && !Markers && !Callee->doesNotAccessMemory())
        return ("@" + Callee->getName() + ", which accesses memory unchecked").str();
      if (Callee->getName().starts_with("llvm.experimental."))
        return ("@" + Callee->getName()).str();
      continue;
    }
    if (Callee->isDeclaration() && !ctos::standsIn(*Call))
      return ("a call of @" + Callee->getName() + ", which it cannot run").str();
  }
  return "";
}

void describeType(raw_ostream &Out, Type *T) {
  T->print(Out);
}

// The integer constants of F's instructions, the inputs most likely to reach its edges.
std::set<int64_t> constantsOf(Function &F) {
  std::set<int64_t> Values;
  for (Instruction &I : instructions(F))
    for (Value *Op : I.operands())
      if (auto *C = dyn_cast<ConstantInt>(Op); C && C->getBitWidth() <= 64 && Values.size() < 16)
        Values.insert(C->getSExtValue());
  return Values;
}

// Stops a call at the first rule it breaks: `__ctos.ub(kind)`.
struct Instrumenter : ctos::Rules {
  FunctionCallee UB, Access, Gep;
  unsigned Checks = 0;

  explicit Instrumenter(Module &M) : Rules(M) {
    LLVMContext &C = M.getContext();
    Type *Void = Type::getVoidTy(C), *I32 = Type::getInt32Ty(C), *I64 = Type::getInt64Ty(C);
    Type *Ptr = PointerType::getUnqual(C);
    UB = M.getOrInsertFunction("__ctos.ub", FunctionType::get(Void, {I32}, false));
    Access = M.getOrInsertFunction("__ctos.access", FunctionType::get(Void, {Ptr, I64, I64}, false));
    Gep = M.getOrInsertFunction("__ctos.gep", FunctionType::get(Void, {Ptr, Ptr}, false));
  }

  void broken(IRBuilder<> &B, Value *, Value *Cond, ctos::Kind K) override {
    Instruction *At = &*B.GetInsertPoint();
    Instruction *Then = splitIf(ctos::anyLane(B, Cond), At);
    IRBuilder<> T(Then);
    T.CreateCall(UB, {T.getInt32(K)});
    B.SetInsertPoint(At);
    ++Checks;
  }

  void access(IRBuilder<> &B, Value *Pointer, Value *Size, uint64_t Align) override {
    B.CreateCall(Access, {Pointer, B.CreateZExtOrTrunc(Size, B.getInt64Ty()), B.getInt64(Align)});
    ++Checks;
  }

  void inbounds(IRBuilder<> &B, GetElementPtrInst &GEP) override {
    B.CreateCall(Gep, {GEP.getPointerOperand(), &GEP});
    ++Checks;
  }
};

} // namespace

// One line per function of the module that a driver could call, and per global it could
// read back (malloc'd text; src/program/driver.rs parses it):
//   function<TAB>name<TAB>return type<TAB>parameter types, comma-separated<TAB>why it cannot run ("" if it can)<TAB>its integer constants
//   global<TAB>name<TAB>size in bytes
//   extern<TAB>name<TAB>size in bytes<TAB>alignment (a global it declares, which the driver defines)
//   stub<TAB>name<TAB>return type<TAB>parameter types (a function it declares, for which the driver stands in)
extern "C" char *ctos_describe_functions(LLVMModuleRef ModuleRef) {
  Module &M = *unwrap(ModuleRef);
  std::map<Function *, std::string> Problem;
  for (Function &F : M)
    if (!F.isDeclaration())
      Problem[&F] = bodyProblem(F);
  // A function runs what it calls: a callee's problem is its caller's.
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (auto &[F, Why] : Problem) {
      if (!Why.empty())
        continue;
      for (Instruction &I : instructions(*F))
        if (auto *Call = dyn_cast<CallBase>(&I))
          if (Function *Callee = Call->getCalledFunction(); Callee && Problem.count(Callee) && !Problem[Callee].empty()) {
            Why = ("it calls @" + Callee->getName() + ", which has " + Problem[Callee]).str();
            Changed = true;
            break;
          }
    }
  }
  std::string Text;
  raw_string_ostream Out(Text);
  for (Function &F : M) {
    if (F.isDeclaration() || !F.hasExternalLinkage() || F.getName().empty())
      continue;
    std::string Why = Problem[&F];
    if (Why.empty() && F.isVarArg())
      Why = "variadic";
    if (Why.empty() && !F.getReturnType()->isVoidTy() && !supportedValueType(F.getReturnType()))
      Why = "its return type";
    for (Argument &A : F.args())
      if (Why.empty() && (!supportedValueType(A.getType()) || A.hasByValAttr() || A.hasStructRetAttr() ||
                          A.hasInAllocaAttr() || A.hasPreallocatedAttr()))
        Why = "a parameter's type or attributes";
    Out << "function\t" << F.getName() << "\t";
    describeType(Out, F.getReturnType());
    Out << "\t";
    for (Argument &A : F.args()) {
      if (A.getArgNo())
        Out << ",";
      describeType(Out, A.getType());
    }
    Out << "\t" << Why << "\t";
    bool First = true;
    for (int64_t V : constantsOf(F)) {
      Out << (First ? "" : ",") << V;
      First = false;
    }
    Out << "\n";
  }
  for (GlobalVariable &G : M.globals())
    if (!G.isDeclaration() && G.hasExternalLinkage() && !G.isConstant() && G.getValueType()->isSized() &&
        !G.getName().empty())
      Out << "global\t" << G.getName() << "\t" << M.getDataLayout().getTypeAllocSize(G.getValueType()) << "\n";
  for (Function &F : M)
    if (ctos::stubbable(F)) {
      Out << "stub\t" << F.getName() << "\t";
      describeType(Out, F.getReturnType());
      Out << "\t";
      for (Argument &A : F.args()) {
        if (A.getArgNo())
          Out << ",";
        describeType(Out, A.getType());
      }
      Out << "\n";
    }
  for (GlobalVariable &G : M.globals())
    if (ctos::driverDefines(G))
      Out << "extern\t" << G.getName() << "\t" << ctos::memoryBytes(G, M.getDataLayout()) << "\t"
          << G.getAlign().value_or(M.getDataLayout().getPrefTypeAlign(G.getValueType())).value() << "\n";
  Out.flush();
  return strdup(Text.c_str());
}

// Insert the checks into every function the module defines; how many.
extern "C" unsigned ctos_instrument_ub(LLVMModuleRef ModuleRef) {
  Module &M = *unwrap(ModuleRef);
  Instrumenter Checker(M);
  std::vector<Function *> Defined;
  for (Function &F : M)
    if (!F.isDeclaration() && !F.getName().starts_with("__ctos."))
      Defined.push_back(&F);
  for (Function *F : Defined) {
    std::vector<Instruction *> Original;
    for (Instruction &I : instructions(*F))
      if (!isa<PHINode>(I) && !I.isEHPad() && !ctos::otherAddressSpace(I))
        Original.push_back(&I);
    for (Instruction *I : Original)
      Checker.instruction(*I);
    Checker.arguments(*F);
  }
  Checker.regionTable();
  return Checker.Checks;
}
