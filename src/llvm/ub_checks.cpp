// Undefined behaviour and poison, checked as an unoptimized function runs: generated
// drivers (src/program/driver.rs) call a module's functions on inputs of their own, and a
// difference after optimization is a miscompilation only if the unoptimized run on those
// inputs was free of both. LLVM has no such checks for IR (the sanitizers instrument C),
// so each rule of the LangRef that makes a value poison or behaviour undefined is checked
// here by a call into the driver's runtime just before (or just after) the instruction:
// `__ctos.ub(kind)` when the rule is broken, `__ctos.access` and `__ctos.gep` for what only
// the runtime knows (which memory exists). The kinds are UB_KINDS in src/program/driver.rs.

#include "llvm-c/Core.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"
#include "llvm/Support/CBindingWrapping.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <map>
#include <set>

using namespace llvm;

namespace {

enum Kind {
  Overflow = 0,   // nsw / nuw
  Inexact,        // exact
  ShiftAmount,    // shift by the bit width or more
  DivByZero,
  DivOverflow,    // INT_MIN / -1
  AssumeFalse,
  NotDisjoint,    // or disjoint with common bits
  Negative,       // nneg
  TruncLoss,      // trunc nuw / nsw
  ZeroPoison,     // ctlz / cttz of zero with is_zero_poison, abs of INT_MIN with the flag
  LaneIndex,      // extractelement / insertelement past the last lane
  Unreachable,
  OutOfRange,     // range attribute, !range, nonnull, align, nofpclass of an argument or return value
  SameSign,       // icmp samesign on operands of different signs
};

bool supportedScalar(Type *T) { return (T->isIntegerTy() && T->getIntegerBitWidth() <= 64) || T->isFloatTy() || T->isDoubleTy() || T->isPointerTy(); }

// Vectors wider than 128 bits are passed in registers only with AVX, and the driver and
// the function may be compiled with different target features: they would disagree on
// where such a value is.
bool supportedValueType(Type *T) {
  if (auto *V = dyn_cast<FixedVectorType>(T))
    return V->getPrimitiveSizeInBits().getFixedValue() <= 128 && !V->getElementType()->isPointerTy() &&
           supportedScalar(V->getElementType());
  return supportedScalar(T);
}

bool hasFastMath(const Instruction &I) {
  auto *FP = dyn_cast<FPMathOperator>(&I);
  return FP && FP->getFastMathFlags().any();
}

// Whether V is undef or poison, or a constant with an undef or poison part (a vector's
// element, an expression's operand).
bool holdsUndef(Value *V) {
  if (isa<UndefValue>(V))
    return true;
  auto *C = dyn_cast<Constant>(V);
  if (!C || isa<GlobalValue>(C) || isa<ConstantData>(C))
    return false;
  for (Value *Op : C->operands())
    if (holdsUndef(Op))
      return true;
  return false;
}

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
    if (Callee->isDeclaration())
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

Value *anyLane(IRBuilder<> &B, Value *Cond) {
  return Cond->getType()->isVectorTy() ? B.CreateOrReduce(Cond) : Cond;
}

struct Instrumenter {
  Module &M;
  const DataLayout &DL;
  FunctionCallee UB, Access, Gep;
  unsigned Checks = 0;

  explicit Instrumenter(Module &M) : M(M), DL(M.getDataLayout()) {
    LLVMContext &C = M.getContext();
    Type *Void = Type::getVoidTy(C), *I32 = Type::getInt32Ty(C), *I64 = Type::getInt64Ty(C);
    Type *Ptr = PointerType::getUnqual(C);
    UB = M.getOrInsertFunction("__ctos.ub", FunctionType::get(Void, {I32}, false));
    Access = M.getOrInsertFunction("__ctos.access", FunctionType::get(Void, {Ptr, I64, I64}, false));
    Gep = M.getOrInsertFunction("__ctos.gep", FunctionType::get(Void, {Ptr, Ptr}, false));
  }

  // Report `kind` when Cond (i1 or a vector of them) holds in any lane.
  void when(IRBuilder<> &B, Value *Cond, Kind K) {
    Instruction *At = &*B.GetInsertPoint();
    Value *Any = anyLane(B, Cond);
    Instruction *Then = SplitBlockAndInsertIfThenHere(Any, At);
    IRBuilder<> T(Then);
    T.CreateCall(UB, {T.getInt32(K)});
    B.SetInsertPoint(At);
    ++Checks;
  }

  // A minimal SplitBlockAndInsertIfThen: the check's branch, before At.
  Instruction *SplitBlockAndInsertIfThenHere(Value *Cond, Instruction *At) {
    BasicBlock *Head = At->getParent();
    BasicBlock *Tail = Head->splitBasicBlock(At->getIterator(), Head->getName() + ".ctos");
    BasicBlock *Report = BasicBlock::Create(M.getContext(), "ctos.ub", Head->getParent(), Tail);
    Instruction *Old = Head->getTerminator();
    BranchInst::Create(Report, Tail, Cond, Old->getIterator());
    Old->eraseFromParent();
    return BranchInst::Create(Tail, Report);
  }

  void access(IRBuilder<> &B, Value *Pointer, Value *Size, uint64_t Align) {
    B.CreateCall(Access, {Pointer, B.CreateZExtOrTrunc(Size, B.getInt64Ty()), B.getInt64(Align)});
    ++Checks;
  }

  Value *isNegative(IRBuilder<> &B, Value *V) { return B.CreateICmpSLT(V, Constant::getNullValue(V->getType())); }

  void binary(BinaryOperator &I, IRBuilder<> &B) {
    Value *L = I.getOperand(0), *R = I.getOperand(1);
    Type *T = I.getType();
    if (!T->isIntOrIntVectorTy())
      return;
    unsigned Bits = T->getScalarSizeInBits();
    auto Op = I.getOpcode();
    if (Op == Instruction::Shl || Op == Instruction::LShr || Op == Instruction::AShr)
      when(B, B.CreateICmpUGE(R, ConstantInt::get(T, Bits)), ShiftAmount);
    if (Op == Instruction::UDiv || Op == Instruction::SDiv || Op == Instruction::URem || Op == Instruction::SRem) {
      when(B, B.CreateICmpEQ(R, Constant::getNullValue(T)), DivByZero);
      if (Op == Instruction::SDiv || Op == Instruction::SRem)
        when(B,
             B.CreateAnd(B.CreateICmpEQ(L, ConstantInt::get(T, APInt::getSignedMinValue(Bits))),
                         B.CreateICmpEQ(R, Constant::getAllOnesValue(T))),
             DivOverflow);
    }
    if (isa<OverflowingBinaryOperator>(I)) {
      auto overflows = [&](Intrinsic::ID ID) {
        Value *Pair = B.CreateBinaryIntrinsic(ID, L, R);
        return B.CreateExtractValue(Pair, 1);
      };
      bool NSW = I.hasNoSignedWrap(), NUW = I.hasNoUnsignedWrap();
      if (Op == Instruction::Shl) {
        Value *Shifted = B.CreateShl(L, R);
        if (NSW)
          when(B, B.CreateICmpNE(B.CreateAShr(Shifted, R), L), Overflow);
        if (NUW)
          when(B, B.CreateICmpNE(B.CreateLShr(Shifted, R), L), Overflow);
      } else {
        Intrinsic::ID Signed = Op == Instruction::Add   ? Intrinsic::sadd_with_overflow
                               : Op == Instruction::Sub ? Intrinsic::ssub_with_overflow
                                                        : Intrinsic::smul_with_overflow;
        Intrinsic::ID Unsigned = Op == Instruction::Add   ? Intrinsic::uadd_with_overflow
                                 : Op == Instruction::Sub ? Intrinsic::usub_with_overflow
                                                          : Intrinsic::umul_with_overflow;
        if (NSW)
          when(B, overflows(Signed), Overflow);
        if (NUW)
          when(B, overflows(Unsigned), Overflow);
      }
    }
    if (isa<PossiblyExactOperator>(I) && I.isExact()) {
      Value *Lost = nullptr;
      if (Op == Instruction::UDiv)
        Lost = B.CreateICmpNE(B.CreateURem(L, R), Constant::getNullValue(T));
      else if (Op == Instruction::SDiv)
        Lost = B.CreateICmpNE(B.CreateSRem(L, R), Constant::getNullValue(T));
      else if (Op == Instruction::LShr)
        Lost = B.CreateICmpNE(B.CreateShl(B.CreateLShr(L, R), R), L);
      else if (Op == Instruction::AShr)
        Lost = B.CreateICmpNE(B.CreateShl(B.CreateAShr(L, R), R), L);
      if (Lost)
        when(B, Lost, Inexact);
    }
    if (auto *Or = dyn_cast<PossiblyDisjointInst>(&I); Or && Or->isDisjoint())
      when(B, B.CreateICmpNE(B.CreateAnd(L, R), Constant::getNullValue(T)), NotDisjoint);
  }

  void conversion(CastInst &I, IRBuilder<> &B) {
    Value *V = I.getOperand(0);
    if (auto *NN = dyn_cast<PossiblyNonNegInst>(&I); NN && NN->hasNonNeg() && V->getType()->isIntOrIntVectorTy())
      when(B, isNegative(B, V), Negative);
    if (auto *Trunc = dyn_cast<TruncInst>(&I)) {
      if (Trunc->hasNoUnsignedWrap())
        when(B, B.CreateICmpNE(B.CreateZExt(B.CreateTrunc(V, I.getType()), V->getType()), V), TruncLoss);
      if (Trunc->hasNoSignedWrap())
        when(B, B.CreateICmpNE(B.CreateSExt(B.CreateTrunc(V, I.getType()), V->getType()), V), TruncLoss);
    }
  }

  void call(CallBase &Call, IRBuilder<> &B) {
    auto *II = dyn_cast<IntrinsicInst>(&Call);
    if (!II)
      return;
    switch (II->getIntrinsicID()) {
    case Intrinsic::assume:
      when(B, B.CreateNot(II->getArgOperand(0)), AssumeFalse);
      break;
    case Intrinsic::ctlz:
    case Intrinsic::cttz:
      if (auto *Flag = dyn_cast<ConstantInt>(II->getArgOperand(1)); Flag && Flag->isOne())
        when(B, B.CreateICmpEQ(II->getArgOperand(0), Constant::getNullValue(II->getType())), ZeroPoison);
      break;
    case Intrinsic::abs:
      if (auto *Flag = dyn_cast<ConstantInt>(II->getArgOperand(1)); Flag && Flag->isOne()) {
        Type *T = II->getType();
        when(B, B.CreateICmpEQ(II->getArgOperand(0), ConstantInt::get(T, APInt::getSignedMinValue(T->getScalarSizeInBits()))),
             ZeroPoison);
      }
      break;
    case Intrinsic::memcpy:
    case Intrinsic::memmove:
      access(B, II->getArgOperand(1), II->getArgOperand(2), 1);
      [[fallthrough]];
    case Intrinsic::memset:
      access(B, II->getArgOperand(0), II->getArgOperand(2), 1);
      break;
    default:
      break;
    }
  }

  // What a value's range attribute or metadata, nonnull or align promise about it.
  void promised(IRBuilder<> &B, Value *V, const ConstantRange *Range, bool NonNull, uint64_t Align) {
    if (Range && V->getType()->isIntOrIntVectorTy() && !Range->isFullSet()) {
      Value *Low = ConstantInt::get(V->getType(), Range->getLower());
      Value *Width = ConstantInt::get(V->getType(), Range->getUpper() - Range->getLower());
      when(B, B.CreateICmpUGE(B.CreateSub(V, Low), Width), OutOfRange);
    }
    if (V->getType()->isPointerTy() && (NonNull || Align > 1)) {
      Value *Address = B.CreatePtrToInt(V, B.getInt64Ty());
      if (NonNull)
        when(B, B.CreateICmpEQ(Address, B.getInt64(0)), OutOfRange);
      if (Align > 1)
        when(B, B.CreateICmpNE(B.CreateAnd(Address, B.getInt64(Align - 1)), B.getInt64(0)), OutOfRange);
    }
  }

  // A value of a class its nofpclass attribute rules out is poison.
  void notOfClass(IRBuilder<> &B, Value *V, FPClassTest Excluded) {
    if (Excluded == fcNone || !V->getType()->isFPOrFPVectorTy())
      return;
    when(B, B.CreateIntrinsic(Intrinsic::is_fpclass, {V->getType()}, {V, B.getInt32(Excluded)}), OutOfRange);
  }

  // What the function's return attributes promise about the value `Ret` returns: a
  // function returning `0.0` under `nofpclass(pzero)` returns poison, which a pass may
  // rightly replace by anything.
  void returned(IRBuilder<> &B, ReturnInst &Ret) {
    Value *V = Ret.getReturnValue();
    AttributeList Attrs = Ret.getFunction()->getAttributes();
    std::optional<ConstantRange> Range;
    if (Attrs.hasRetAttr(Attribute::Range))
      Range = Attrs.getRetAttrs().getAttribute(Attribute::Range).getRange();
    MaybeAlign Align = Attrs.getRetAlignment();
    promised(B, V, Range ? &*Range : nullptr, Attrs.hasRetAttr(Attribute::NonNull), Align ? Align->value() : 1);
    notOfClass(B, V, Attrs.getRetNoFPClass());
  }

  void arguments(Function &F) {
    IRBuilder<> B(&*F.getEntryBlock().getFirstInsertionPt());
    for (Argument &A : F.args()) {
      const ConstantRange *Range = nullptr;
      std::optional<ConstantRange> Stored;
      if (A.hasAttribute(Attribute::Range)) {
        Stored = A.getAttribute(Attribute::Range).getRange();
        Range = &*Stored;
      }
      promised(B, &A, Range, A.hasNonNullAttr(), A.getParamAlign() ? A.getParamAlign()->value() : 1);
      notOfClass(B, &A, A.getNoFPClass());
    }
  }

  void instruction(Instruction &I) {
    IRBuilder<> B(&I);
    if (auto *Bin = dyn_cast<BinaryOperator>(&I))
      binary(*Bin, B);
    else if (auto *Cast = dyn_cast<CastInst>(&I))
      conversion(*Cast, B);
    else if (auto *Call = dyn_cast<CallBase>(&I))
      call(*Call, B);
    else if (auto *Load = dyn_cast<LoadInst>(&I))
      access(B, Load->getPointerOperand(), B.getInt64(DL.getTypeStoreSize(Load->getType())), Load->getAlign().value());
    else if (auto *Store = dyn_cast<StoreInst>(&I))
      access(B, Store->getPointerOperand(), B.getInt64(DL.getTypeStoreSize(Store->getValueOperand()->getType())),
             Store->getAlign().value());
    else if (auto *RMW = dyn_cast<AtomicRMWInst>(&I))
      access(B, RMW->getPointerOperand(), B.getInt64(DL.getTypeStoreSize(RMW->getType())), RMW->getAlign().value());
    else if (auto *CX = dyn_cast<AtomicCmpXchgInst>(&I))
      access(B, CX->getPointerOperand(), B.getInt64(DL.getTypeStoreSize(CX->getNewValOperand()->getType())),
             CX->getAlign().value());
    else if (auto *Extract = dyn_cast<ExtractElementInst>(&I))
      lane(B, Extract->getVectorOperandType(), Extract->getIndexOperand());
    else if (auto *Insert = dyn_cast<InsertElementInst>(&I))
      lane(B, cast<VectorType>(Insert->getType()), Insert->getOperand(2));
    else if (isa<UnreachableInst>(I))
      when(B, B.getTrue(), Unreachable);
    else if (auto *Ret = dyn_cast<ReturnInst>(&I); Ret && Ret->getReturnValue())
      returned(B, *Ret);
#if LLVM_VERSION_MAJOR >= 20
    else if (auto *Cmp = dyn_cast<ICmpInst>(&I); Cmp && Cmp->hasSameSign())
      when(B, B.CreateXor(isNegative(B, Cmp->getOperand(0)), isNegative(B, Cmp->getOperand(1))), SameSign);
#endif
    if (auto *GEP = dyn_cast<GetElementPtrInst>(&I); GEP && GEP->isInBounds() && GEP->getType()->isPointerTy()) {
      B.SetInsertPoint(I.getNextNode());
      B.CreateCall(Gep, {GEP->getPointerOperand(), GEP});
      ++Checks;
    }
    // What a load's metadata promises about the loaded value.
    if (auto *Load = dyn_cast<LoadInst>(&I)) {
      std::optional<ConstantRange> Range;
      if (MDNode *MD = Load->getMetadata(LLVMContext::MD_range); MD && MD->getNumOperands() == 2)
        Range = ConstantRange(mdconst::extract<ConstantInt>(MD->getOperand(0))->getValue(),
                              mdconst::extract<ConstantInt>(MD->getOperand(1))->getValue());
      bool NonNull = Load->hasMetadata(LLVMContext::MD_nonnull);
      if (Range || NonNull) {
        B.SetInsertPoint(Load->getNextNode());
        promised(B, Load, Range ? &*Range : nullptr, NonNull, 1);
      }
    }
  }

  void lane(IRBuilder<> &B, VectorType *T, Value *Index) {
    if (auto *Fixed = dyn_cast<FixedVectorType>(T))
      when(B, B.CreateICmpUGE(Index, ConstantInt::get(Index->getType(), Fixed->getNumElements())), LaneIndex);
  }

  // The module's globals, as memory a checked access may touch: `__ctos.regions`, with
  // their number in `__ctos.nregions`, for the driver's runtime.
  void regions() {
    LLVMContext &C = M.getContext();
    Type *Ptr = PointerType::getUnqual(C), *I64 = Type::getInt64Ty(C);
    StructType *Region = StructType::get(C, {Ptr, I64});
    std::vector<Constant *> Entries;
    for (GlobalVariable &G : M.globals())
      if (!G.isDeclaration() && G.getValueType()->isSized())
        Entries.push_back(ConstantStruct::get(Region, {&G, ConstantInt::get(I64, DL.getTypeAllocSize(G.getValueType()))}));
    ArrayType *Table = ArrayType::get(Region, Entries.size());
    new GlobalVariable(M, Table, true, GlobalValue::ExternalLinkage, ConstantArray::get(Table, Entries), "__ctos.regions");
    new GlobalVariable(M, I64, true, GlobalValue::ExternalLinkage, ConstantInt::get(I64, Entries.size()),
                       "__ctos.nregions");
  }
};

} // namespace

// One line per function of the module that a driver could call, and per global it could
// read back (malloc'd text; src/program/driver.rs parses it):
//   function<TAB>name<TAB>return type<TAB>parameter types, comma-separated<TAB>why it cannot run ("" if it can)<TAB>its integer constants
//   global<TAB>name<TAB>size in bytes
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
      if (!isa<PHINode>(I) && !I.isEHPad())
        Original.push_back(&I);
    for (Instruction *I : Original)
      Checker.instruction(*I);
    Checker.arguments(*F);
  }
  Checker.regions();
  return Checker.Checks;
}
