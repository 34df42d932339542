// The LangRef's rules for poison and undefined behaviour, as conditions computed just
// before (or after) the instruction they are about. Two instrumenters act on them:
// ub_checks.cpp's, for unoptimized runs, stops a call at any rule broken (a driver keeps
// only calls that break none); poison_checks.cpp's, for optimized runs, stops a call at
// immediate undefined behaviour only and lets poison flow until something observes it
// (optimizers may make poison nobody uses).

#pragma once

#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"
#include "llvm/TargetParser/Triple.h"

#include <optional>

namespace ctos {

using namespace llvm;

// The numbers UB_KINDS in src/program/driver/text.rs names.
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
  // What observes poison (optimized runs only).
  PoisonReturned,
  PoisonStored,   // in memory the driver prints
  PoisonBranch,   // a branch or switch condition
  PoisonDivisor,
  PoisonAddress,
  PoisonNoundef,  // a noundef argument or return value
  PoisonPrinted,  // an argument of a function that writes output
  PoisonAssumed,  // an assume's condition
};

// Whether breaking the rule is undefined behaviour at once, rather than making poison.
inline bool immediate(Kind K) {
  return K == DivByZero || K == DivOverflow || K == AssumeFalse || K == Unreachable || K >= PoisonReturned;
}

inline bool hasFastMath(const Instruction &I) {
  auto *FP = dyn_cast<FPMathOperator>(&I);
  return FP && FP->getFastMathFlags().any();
}

// Whether V is undef or poison, or a constant with an undef or poison part (a vector's
// element, an expression's operand).
inline bool holdsUndef(Value *V) {
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

// A global the module only declares that a generated driver defines (tests declare the
// arrays their functions work on: `@A = external global [1024 x i64]`).
inline bool driverDefines(const GlobalVariable &G) {
  return G.isDeclaration() && G.getValueType()->isSized() && G.getAddressSpace() == 0 && !G.isThreadLocal() &&
         !G.getName().empty() && !G.getName().starts_with("__ctos.");
}

// The bytes of memory global G is: its type's, or for an array of unknown length
// (`[0 x i32]`) a driver's 4 KiB.
inline uint64_t memoryBytes(const GlobalVariable &G, const DataLayout &DL) {
  uint64_t Size = DL.getTypeAllocSize(G.getValueType());
  return Size == 0 && G.isDeclaration() ? 4096 : Size;
}

// Whether G is memory a run may touch: a global the module defines, or one the driver does.
inline bool isMemory(const GlobalVariable &G) {
  return (!G.isDeclaration() && G.getValueType()->isSized() && !G.getName().starts_with("__ctos.")) ||
         driverDefines(G);
}

inline bool supportedScalar(Type *T) {
  return (T->isIntegerTy() && T->getIntegerBitWidth() <= 64) || T->isFloatTy() || T->isDoubleTy() || T->isPointerTy();
}

// Vectors wider than 128 bits are passed in registers only with AVX, and the driver and
// the function may be compiled with different target features: they would disagree on
// where such a value is.
inline bool supportedValueType(Type *T) {
  if (auto *V = dyn_cast<FixedVectorType>(T))
    return V->getPrimitiveSizeInBits().getFixedValue() <= 128 && !V->getElementType()->isPointerTy() &&
           supportedScalar(V->getElementType());
  return supportedScalar(T);
}

// Whether attributes (a declaration's or a call's) promise nothing a stand-in would break:
// what the call returns (its range, `returned` argument) or that it leaves memory alone.
inline bool promisesNothing(const AttributeList &Attrs) {
  for (Attribute::AttrKind Kind : {Attribute::Range, Attribute::NonNull, Attribute::Alignment,
                                   Attribute::Dereferenceable, Attribute::NoFPClass})
    if (Attrs.hasRetAttr(Kind))
      return false;
  return !Attrs.hasAttrSomewhere(Attribute::Returned) && !Attrs.hasFnAttr(Attribute::Memory) &&
         !Attrs.hasFnAttr(Attribute::ReadNone) && !Attrs.hasFnAttr(Attribute::ReadOnly);
}

// Whether a generated driver stands in for F, a function the module only declares (LLVM's
// tests call `@use(i8 %x)` to keep a value alive): it may do anything to memory, so no pass
// may drop, repeat or reorder its calls; it is no library function whose meaning passes
// know; it returns, and what it takes and returns a driver handles. The driver's stand-in
// folds its arguments into what the call prints: they are output.
inline bool stubbable(const Function &F) {
  if (!F.isDeclaration() || F.isIntrinsic() || F.isVarArg() || F.getName().empty() ||
      F.getName().starts_with("__ctos.") || F.getName().starts_with("llvm."))
    return false;
  if (F.getMemoryEffects() != MemoryEffects::unknown() || F.doesNotReturn() || F.hasFnAttribute(Attribute::ReturnsTwice))
    return false;
  TargetLibraryInfoImpl Impl{Triple(F.getParent()->getTargetTriple())};
  TargetLibraryInfo Library(Impl);
  LibFunc Known;
  if (Library.getLibFunc(F, Known))
    return false;
  Type *R = F.getReturnType();
  if (!R->isVoidTy() && !(R->isIntegerTy() && R->getIntegerBitWidth() <= 64))
    return false;
  for (const Argument &A : F.args())
    if (!supportedValueType(A.getType()) || A.hasByValAttr() || A.hasStructRetAttr() || A.hasInAllocaAttr() ||
        A.hasPreallocatedAttr() || A.hasReturnedAttr())
      return false;
  return promisesNothing(F.getAttributes());
}

// Whether a call of a declared function the driver stands in for keeps to it: the call
// site promises no more than the declaration (a `memory(none)` call may be merged with
// another, and the stand-in's output would count one call less).
inline bool standsIn(const CallBase &Call) {
  const Function *Callee = Call.getCalledFunction();
  return Callee && stubbable(*Callee) && promisesNothing(Call.getAttributes()) &&
         Call.getMemoryEffects() == MemoryEffects::unknown();
}

// Whether I has a pointer of another address space than 0: the checks know that memory
// only, and a function with one is never called (ub_checks.cpp's bodyProblem).
inline bool otherAddressSpace(const Instruction &I) {
  auto other = [](const Value *V) {
    return V->getType()->isPtrOrPtrVectorTy() && V->getType()->getPointerAddressSpace() != 0;
  };
  if (other(&I))
    return true;
  for (const Value *Op : I.operands())
    if (other(Op))
      return true;
  return false;
}

inline Value *anyLane(IRBuilder<> &B, Value *Cond) {
  return Cond->getType()->isVectorTy() ? B.CreateOrReduce(Cond) : Cond;
}

// Each rule, computed where it applies; what breaking one does is the instrumenter's.
struct Rules {
  Module &M;
  const DataLayout &DL;

  explicit Rules(Module &M) : M(M), DL(M.getDataLayout()) {}
  virtual ~Rules() = default;

  // `Subject` (an instruction, argument or return) breaks rule `K` when Cond holds, in
  // the lanes where it holds.
  virtual void broken(IRBuilder<> &B, Value *Subject, Value *Cond, Kind K) = 0;
  // An access of Size bytes at Pointer, aligned to Align.
  virtual void access(IRBuilder<> &B, Value *Pointer, Value *Size, uint64_t Align) = 0;
  // An inbounds GEP, whose result must stay inside its base's object (after it).
  virtual void inbounds(IRBuilder<> &B, GetElementPtrInst &GEP) = 0;

  // Before At: a block that runs only when Cond holds (its terminator returned).
  Instruction *splitIf(Value *Cond, Instruction *At) {
    BasicBlock *Head = At->getParent();
    BasicBlock *Tail = Head->splitBasicBlock(At->getIterator(), Head->getName() + ".ctos");
    BasicBlock *Report = BasicBlock::Create(M.getContext(), "ctos.ub", Head->getParent(), Tail);
    Instruction *Old = Head->getTerminator();
    BranchInst::Create(Report, Tail, Cond, Old->getIterator());
    Old->eraseFromParent();
    return BranchInst::Create(Tail, Report);
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
      broken(B, &I, B.CreateICmpUGE(R, ConstantInt::get(T, Bits)), ShiftAmount);
    if (Op == Instruction::UDiv || Op == Instruction::SDiv || Op == Instruction::URem || Op == Instruction::SRem) {
      broken(B, &I, B.CreateICmpEQ(R, Constant::getNullValue(T)), DivByZero);
      if (Op == Instruction::SDiv || Op == Instruction::SRem)
        broken(B, &I,
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
          broken(B, &I, B.CreateICmpNE(B.CreateAShr(Shifted, R), L), Overflow);
        if (NUW)
          broken(B, &I, B.CreateICmpNE(B.CreateLShr(Shifted, R), L), Overflow);
      } else {
        Intrinsic::ID Signed = Op == Instruction::Add   ? Intrinsic::sadd_with_overflow
                               : Op == Instruction::Sub ? Intrinsic::ssub_with_overflow
                                                        : Intrinsic::smul_with_overflow;
        Intrinsic::ID Unsigned = Op == Instruction::Add   ? Intrinsic::uadd_with_overflow
                                 : Op == Instruction::Sub ? Intrinsic::usub_with_overflow
                                                          : Intrinsic::umul_with_overflow;
        if (NSW)
          broken(B, &I, overflows(Signed), Overflow);
        if (NUW)
          broken(B, &I, overflows(Unsigned), Overflow);
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
        broken(B, &I, Lost, Inexact);
    }
    if (auto *Or = dyn_cast<PossiblyDisjointInst>(&I); Or && Or->isDisjoint())
      broken(B, &I, B.CreateICmpNE(B.CreateAnd(L, R), Constant::getNullValue(T)), NotDisjoint);
  }

  void conversion(CastInst &I, IRBuilder<> &B) {
    Value *V = I.getOperand(0);
    if (auto *NN = dyn_cast<PossiblyNonNegInst>(&I); NN && NN->hasNonNeg() && V->getType()->isIntOrIntVectorTy())
      broken(B, &I, isNegative(B, V), Negative);
    if (auto *Trunc = dyn_cast<TruncInst>(&I)) {
      if (Trunc->hasNoUnsignedWrap())
        broken(B, &I, B.CreateICmpNE(B.CreateZExt(B.CreateTrunc(V, I.getType()), V->getType()), V), TruncLoss);
      if (Trunc->hasNoSignedWrap())
        broken(B, &I, B.CreateICmpNE(B.CreateSExt(B.CreateTrunc(V, I.getType()), V->getType()), V), TruncLoss);
    }
  }

  void call(CallBase &Call, IRBuilder<> &B) {
    auto *II = dyn_cast<IntrinsicInst>(&Call);
    if (!II)
      return;
    switch (II->getIntrinsicID()) {
    case Intrinsic::assume:
      broken(B, II, B.CreateNot(II->getArgOperand(0)), AssumeFalse);
      break;
    case Intrinsic::ctlz:
    case Intrinsic::cttz:
      if (auto *Flag = dyn_cast<ConstantInt>(II->getArgOperand(1)); Flag && Flag->isOne())
        broken(B, II, B.CreateICmpEQ(II->getArgOperand(0), Constant::getNullValue(II->getType())), ZeroPoison);
      break;
    case Intrinsic::abs:
      if (auto *Flag = dyn_cast<ConstantInt>(II->getArgOperand(1)); Flag && Flag->isOne()) {
        Type *T = II->getType();
        broken(B, II,
               B.CreateICmpEQ(II->getArgOperand(0),
                              ConstantInt::get(T, APInt::getSignedMinValue(T->getScalarSizeInBits()))),
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
  void promised(IRBuilder<> &B, Value *Subject, Value *V, const ConstantRange *Range, bool NonNull, uint64_t Align) {
    if (Range && V->getType()->isIntOrIntVectorTy() && !Range->isFullSet()) {
      Value *Low = ConstantInt::get(V->getType(), Range->getLower());
      Value *Width = ConstantInt::get(V->getType(), Range->getUpper() - Range->getLower());
      broken(B, Subject, B.CreateICmpUGE(B.CreateSub(V, Low), Width), OutOfRange);
    }
    if (V->getType()->isPointerTy() && (NonNull || Align > 1)) {
      Value *Address = B.CreatePtrToInt(V, B.getInt64Ty());
      if (NonNull)
        broken(B, Subject, B.CreateICmpEQ(Address, B.getInt64(0)), OutOfRange);
      if (Align > 1)
        broken(B, Subject, B.CreateICmpNE(B.CreateAnd(Address, B.getInt64(Align - 1)), B.getInt64(0)), OutOfRange);
    }
  }

  // A value of a class its nofpclass attribute rules out is poison.
  void notOfClass(IRBuilder<> &B, Value *Subject, Value *V, FPClassTest Excluded) {
    if (Excluded == fcNone || !V->getType()->isFPOrFPVectorTy())
      return;
    broken(B, Subject, B.CreateIntrinsic(Intrinsic::is_fpclass, {V->getType()}, {V, B.getInt32(Excluded)}),
           OutOfRange);
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
    promised(B, &Ret, V, Range ? &*Range : nullptr, Attrs.hasRetAttr(Attribute::NonNull), Align ? Align->value() : 1);
    notOfClass(B, &Ret, V, Attrs.getRetNoFPClass());
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
      promised(B, &A, &A, Range, A.hasNonNullAttr(), A.getParamAlign() ? A.getParamAlign()->value() : 1);
      notOfClass(B, &A, &A, A.getNoFPClass());
    }
  }

  void lane(IRBuilder<> &B, Instruction &I, VectorType *T, Value *Index) {
    if (auto *Fixed = dyn_cast<FixedVectorType>(T))
      broken(B, &I, B.CreateICmpUGE(Index, ConstantInt::get(Index->getType(), Fixed->getNumElements())), LaneIndex);
  }

  // The module's globals (and those the driver defines), as memory a checked access may touch: `__ctos.regions`, with
  // their number in `__ctos.nregions`, for the driver's runtime.
  void regionTable() {
    LLVMContext &C = M.getContext();
    Type *Ptr = PointerType::getUnqual(C), *I64 = Type::getInt64Ty(C);
    StructType *Region = StructType::get(C, {Ptr, I64});
    std::vector<Constant *> Entries;
    for (GlobalVariable &G : M.globals())
      if (isMemory(G))
        Entries.push_back(ConstantStruct::get(Region, {&G, ConstantInt::get(I64, memoryBytes(G, DL))}));
    ArrayType *Table = ArrayType::get(Region, Entries.size());
    new GlobalVariable(M, Table, true, GlobalValue::ExternalLinkage, ConstantArray::get(Table, Entries), "__ctos.regions");
    new GlobalVariable(M, I64, true, GlobalValue::ExternalLinkage, ConstantInt::get(I64, Entries.size()),
                       "__ctos.nregions");
  }

  // Every rule about I: those about its operands before it, those about its result after.
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
      lane(B, I, Extract->getVectorOperandType(), Extract->getIndexOperand());
    else if (auto *Insert = dyn_cast<InsertElementInst>(&I))
      lane(B, I, cast<VectorType>(Insert->getType()), Insert->getOperand(2));
    else if (isa<UnreachableInst>(I))
      broken(B, &I, B.getTrue(), Unreachable);
    else if (auto *Ret = dyn_cast<ReturnInst>(&I); Ret && Ret->getReturnValue())
      returned(B, *Ret);
#if LLVM_VERSION_MAJOR >= 20
    else if (auto *Cmp = dyn_cast<ICmpInst>(&I); Cmp && Cmp->hasSameSign())
      broken(B, &I, B.CreateXor(isNegative(B, Cmp->getOperand(0)), isNegative(B, Cmp->getOperand(1))), SameSign);
#endif
    if (auto *GEP = dyn_cast<GetElementPtrInst>(&I); GEP && GEP->isInBounds() && GEP->getType()->isPointerTy()) {
      B.SetInsertPoint(I.getNextNode());
      inbounds(B, *GEP);
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
        promised(B, Load, Load, Range ? &*Range : nullptr, NonNull, 1);
      }
    }
  }
};

} // namespace ctos
