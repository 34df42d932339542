// Poison tracked through an optimized run. An optimizer may make poison that nothing uses
// (it speculates: a division hoisted above its guard, an `add nsw` computed on both arms),
// so the rules that make poison do not stop the call here as they do in the unoptimized
// run (ub_checks.cpp). Each value gets a shadow: 0 when it is not poison, else the number
// of an instruction that made the poison it carries (its origin), per lane for vectors;
// each byte of the memory the driver knows (its arena, the module's globals, the stack
// under the calls) gets one too. The shadow follows the LangRef: operations pass their
// operands' poison on, `select` only its chosen arm's and its condition's, `freeze` none.
// Only what observes poison stops the call, through `__ctos.poison(kind, origin)`: a
// return to the driver or poison left in memory it prints (the driver's runtime checks
// both after each call), a branch, a divisor, an address, a noundef value, an output
// function's argument. Immediate undefined behaviour stops it as before. What the tracker
// does not model (an indirect call, a masked store) is taken as clean: it can miss poison,
// never invent it.

#include "llvm-c/Core.h"
#include "ub_rules.h"
#include "llvm/ADT/PostOrderIterator.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/ModuleSlotTracker.h"
#include "llvm/Support/CBindingWrapping.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>

using namespace llvm;
using namespace ctos;

namespace {

// Arguments passed with their shadow to a function of the module (the rest are clean).
constexpr unsigned MaxArgs = 16;
// Vectors of up to this many lanes keep a shadow per lane in memory and across calls;
// longer ones one for all.
constexpr unsigned LaneByLane = 16;
// Functions whose arguments are output: poison passed to them is observed.
const std::set<std::string> Output = {"printf", "puts", "putchar", "fputs", "fprintf", "fwrite", "write", "exit"};

enum Role { Makes, HasPoisonOperand };

struct Tracker : Rules {
  LLVMContext &C;
  Type *I32;
  FunctionCallee Report, Access, ShadowLoad, ShadowStore, ShadowCopy, Outside;
  GlobalVariable *ArgOrigins, *RetOrigin, *RetLanes;
  std::map<Value *, Value *> Shadow;
  // The conditions under which a value is made poison (per lane, or for all lanes).
  std::map<Value *, std::vector<Value *>> Made;
  std::map<const Instruction *, std::string> Text;
  std::map<std::pair<Value *, Role>, unsigned> Ids;
  std::vector<std::string> Origins{"(none)"};

  explicit Tracker(Module &M) : Rules(M), C(M.getContext()), I32(Type::getInt32Ty(C)) {
    Type *Void = Type::getVoidTy(C), *I64 = Type::getInt64Ty(C), *I1 = Type::getInt1Ty(C);
    Type *Ptr = PointerType::getUnqual(C);
    Report = M.getOrInsertFunction("__ctos.poison", FunctionType::get(Void, {I32, I32}, false));
    Access = M.getOrInsertFunction("__ctos.access", FunctionType::get(Void, {Ptr, I64, I64}, false));
    ShadowLoad = M.getOrInsertFunction("__ctos.shadow_load", FunctionType::get(I32, {Ptr, I64}, false));
    ShadowStore = M.getOrInsertFunction("__ctos.shadow_store", FunctionType::get(Void, {Ptr, I64, I32}, false));
    ShadowCopy = M.getOrInsertFunction("__ctos.shadow_copy", FunctionType::get(Void, {Ptr, Ptr, I64}, false));
    Outside = M.getOrInsertFunction("__ctos.outside", FunctionType::get(I1, {Ptr, Ptr}, false));
    auto *Args = ArrayType::get(I32, MaxArgs * LaneByLane);
    ArgOrigins = new GlobalVariable(M, Args, false, GlobalValue::ExternalLinkage, nullptr, "__ctos.arg_origins");
    RetOrigin = new GlobalVariable(M, I32, false, GlobalValue::ExternalLinkage, nullptr, "__ctos.ret_origin");
    auto *Lanes = ArrayType::get(I32, LaneByLane);
    RetLanes = new GlobalVariable(M, Lanes, false, GlobalValue::ExternalLinkage, nullptr, "__ctos.ret_lanes");
  }

  // Shadow S handed to a callee or caller through slots From..From+LaneByLane of In: a
  // lane's or field's apart when there are at most LaneByLane (a splat's poison lane,
  // passed to a function a loop was extracted into, must not become its neighbours'),
  // else one for all, poison only where every lane is.
  void put(IRBuilder<> &B, GlobalVariable *In, unsigned From, Value *S) {
    auto *VT = dyn_cast<FixedVectorType>(S->getType());
    auto Slot = [&](unsigned K) { return B.CreateConstInBoundsGEP2_32(In->getValueType(), In, 0, From + K); };
    if (VT && VT->getNumElements() <= LaneByLane) {
      for (unsigned L = 0; L < VT->getNumElements(); ++L)
        B.CreateStore(B.CreateExtractElement(S, L), Slot(L));
      return;
    }
    B.CreateStore(VT ? B.CreateUnaryIntrinsic(Intrinsic::vector_reduce_umin, S) : S, Slot(0));
  }

  // What `put` handed over, as shadow type T, taken: the slots are clean again.
  Value *take(IRBuilder<> &B, GlobalVariable *In, unsigned From, Type *T) {
    auto *VT = dyn_cast<FixedVectorType>(T);
    unsigned Parts = VT && VT->getNumElements() <= LaneByLane ? VT->getNumElements() : 1;
    Value *S = Constant::getNullValue(VT && Parts > 1 ? T : I32);
    for (unsigned L = 0; L < Parts; ++L) {
      Value *Slot = B.CreateConstInBoundsGEP2_32(In->getValueType(), In, 0, From + L);
      Value *O = B.CreateLoad(I32, Slot);
      B.CreateStore(B.getInt32(0), Slot);
      S = S->getType()->isVectorTy() ? B.CreateInsertElement(S, O, L) : O;
    }
    return fit(B, S, T);
  }

  // The number the runtime reports for Subject in Role, with what it prints for it.
  unsigned origin(Value *Subject, Role R) {
    auto [It, New] = Ids.try_emplace({Subject, R}, Origins.size());
    if (!New)
      return It->second;
    std::string Where;
    if (auto *I = dyn_cast<Instruction>(Subject))
      Where = "@" + I->getFunction()->getName().str() + ": `" + Text[I] + "`";
    else if (auto *A = dyn_cast<Argument>(Subject))
      Where = "@" + A->getParent()->getName().str() + ": argument " + std::to_string(A->getArgNo()) +
              " outside what its attributes promise";
    Origins.push_back(R == Makes ? Where : "an undef or poison operand of " + Where);
    return It->second;
  }

  // A shadow per lane of a vector, per field of a struct or element of an array (the
  // top level: an aggregate is built field by field from poison as a vector is lane by
  // lane, `insertvalue { i64 poison, i1 false }, %x, 0`), else one.
  Type *shadowType(Type *T) {
    unsigned Parts = 0;
    if (auto *V = dyn_cast<FixedVectorType>(T))
      Parts = V->getNumElements();
    else if (auto *S = dyn_cast<StructType>(T))
      Parts = S->getNumElements() <= LaneByLane ? S->getNumElements() : 0;
    else if (auto *A = dyn_cast<ArrayType>(T))
      Parts = A->getNumElements() <= LaneByLane ? A->getNumElements() : 0;
    return Parts ? FixedVectorType::get(I32, Parts) : I32;
  }

  static bool isZero(Value *S) {
    auto *K = dyn_cast<Constant>(S);
    return K && K->isNullValue();
  }

  Value *scalar(IRBuilder<> &B, Value *S) {
    return S->getType()->isVectorTy() ? B.CreateUnaryIntrinsic(Intrinsic::vector_reduce_umax, S) : S;
  }

  // Shadow S in the shape of shadow type To: lanes kept when they correspond, else the
  // poison of any lane is every lane's.
  Value *fit(IRBuilder<> &B, Value *S, Type *To) {
    if (S->getType() == To)
      return S;
    if (isZero(S))
      return Constant::getNullValue(To);
    auto *From = dyn_cast<FixedVectorType>(S->getType());
    auto *Into = dyn_cast<FixedVectorType>(To);
    if (From && Into && Into->getNumElements() % From->getNumElements() == 0) {
      // A bitcast to narrower lanes: each lane's poison is its parts'.
      unsigned Parts = Into->getNumElements() / From->getNumElements();
      SmallVector<int> Mask;
      for (unsigned L = 0; L < Into->getNumElements(); ++L)
        Mask.push_back(L / Parts);
      return B.CreateShuffleVector(S, Mask);
    }
    Value *One = scalar(B, S);
    return Into ? B.CreateVectorSplat(Into->getNumElements(), One) : One;
  }

  Value *join(IRBuilder<> &B, Value *A, Value *D) {
    if (isZero(A))
      return D;
    if (isZero(D))
      return A;
    return B.CreateBinaryIntrinsic(Intrinsic::umax, A, D);
  }

  Value *shadowOf(Value *V, Instruction *User) {
    if (auto It = Shadow.find(V); It != Shadow.end())
      return It->second;
    Type *T = shadowType(V->getType());
    auto *K = dyn_cast<Constant>(V);
    if (!K || !holdsUndef(K))
      return Constant::getNullValue(T);
    Constant *Id = ConstantInt::get(I32, origin(User, HasPoisonOperand));
    auto *VT = dyn_cast<FixedVectorType>(T);
    if (!VT)
      return Id;
    std::vector<Constant *> Lanes;
    for (unsigned L = 0; L < VT->getNumElements(); ++L) {
      Constant *E = K->getAggregateElement(L);
      Lanes.push_back(!E || holdsUndef(E) ? Id : ConstantInt::get(I32, 0));
    }
    return ConstantVector::get(Lanes);
  }

  // Stop the call with `K` when the shadow S says poison, reporting its origin.
  void observe(IRBuilder<> &B, Value *V, Instruction *User, Kind K) {
    Value *S = scalar(B, shadowOf(V, User));
    if (isZero(S))
      return;
    Instruction *At = &*B.GetInsertPoint();
    Instruction *Then = splitIf(B.CreateICmpNE(S, B.getInt32(0)), At);
    IRBuilder<> T(Then);
    T.CreateCall(Report, {T.getInt32(K), S});
    B.SetInsertPoint(At);
  }

  void broken(IRBuilder<> &B, Value *Subject, Value *Cond, Kind K) override {
    if (!immediate(K)) {
      Made[Subject].push_back(Cond);
      return;
    }
    Instruction *At = &*B.GetInsertPoint();
    Instruction *Then = splitIf(anyLane(B, Cond), At);
    IRBuilder<> T(Then);
    T.CreateCall(Report, {T.getInt32(K), T.getInt32(origin(Subject, Makes))});
    B.SetInsertPoint(At);
  }

  void access(IRBuilder<> &B, Value *Pointer, Value *Size, uint64_t Align) override {
    B.CreateCall(Access, {Pointer, B.CreateZExtOrTrunc(Size, B.getInt64Ty()), B.getInt64(Align)});
  }

  void inbounds(IRBuilder<> &B, GetElementPtrInst &GEP) override {
    Made[&GEP].push_back(B.CreateCall(Outside, {GEP.getPointerOperand(), &GEP}));
  }

  // S with Subject's origin in the lanes where one of the conditions made it poison.
  Value *withMade(IRBuilder<> &B, Value *Subject, Value *S) {
    auto It = Made.find(Subject);
    if (It == Made.end())
      return S;
    Type *T = S->getType();
    Value *Id = fit(B, B.getInt32(origin(Subject, Makes)), T);
    for (Value *Cond : It->second) {
      Value *Lanes = Cond;
      auto *CT = dyn_cast<FixedVectorType>(Cond->getType());
      auto *ST = dyn_cast<FixedVectorType>(T);
      if (CT && (!ST || CT->getNumElements() != ST->getNumElements()))
        Lanes = anyLane(B, Cond);
      if (ST && !Lanes->getType()->isVectorTy())
        Lanes = B.CreateVectorSplat(ST->getNumElements(), Lanes);
      S = B.CreateSelect(Lanes, Id, S);
    }
    return S;
  }

  // Memory at P holding a value of type T: its shadow, per lane for short vectors.
  template <typename PerPart> void parts(IRBuilder<> &B, Value *P, Type *T, PerPart Each) {
    auto *VT = dyn_cast<FixedVectorType>(T);
    unsigned Bits = VT ? VT->getElementType()->getPrimitiveSizeInBits().getFixedValue() : 0;
    if (!VT || VT->getNumElements() > LaneByLane || Bits % 8 || !Bits)
      return Each(P, B.getInt64(DL.getTypeStoreSize(T)), -1);
    for (unsigned L = 0; L < VT->getNumElements(); ++L)
      Each(B.CreateConstGEP1_64(B.getInt8Ty(), P, L * Bits / 8), B.getInt64(Bits / 8), int(L));
  }

  Value *loaded(IRBuilder<> &B, LoadInst &L) {
    Type *T = shadowType(L.getType());
    Value *S = Constant::getNullValue(T);
    parts(B, L.getPointerOperand(), L.getType(), [&](Value *P, Value *Size, int Lane) {
      Value *O = B.CreateCall(ShadowLoad, {P, Size});
      S = Lane < 0 ? fit(B, O, T) : B.CreateInsertElement(S, O, Lane);
    });
    return S;
  }

  void stored(IRBuilder<> &B, Value *V, Value *P, Instruction *User) {
    Value *S = shadowOf(V, User);
    parts(B, P, V->getType(), [&](Value *Q, Value *Size, int Lane) {
      Value *O = Lane < 0 ? scalar(B, S) : B.CreateExtractElement(S, Lane);
      B.CreateCall(ShadowStore, {Q, Size, O});
    });
  }

  // Before a call: observations and the shadows it is passed; the result's shadow is
  // returned (after it, at B), or null for the default.
  void beforeCall(IRBuilder<> &B, CallBase &Call) {
    Function *Callee = Call.getCalledFunction();
    for (unsigned N = 0; N < Call.arg_size(); ++N)
      if (Call.paramHasAttr(N, Attribute::NoUndef))
        observe(B, Call.getArgOperand(N), &Call, PoisonNoundef);
    if (!Callee)
      return;
    if (auto *II = dyn_cast<IntrinsicInst>(&Call)) {
      switch (II->getIntrinsicID()) {
      case Intrinsic::assume:
        observe(B, II->getArgOperand(0), II, PoisonAssumed);
        break;
      case Intrinsic::memcpy:
      case Intrinsic::memmove:
        observe(B, II->getArgOperand(1), II, PoisonAddress);
        observe(B, II->getArgOperand(0), II, PoisonAddress);
        observe(B, II->getArgOperand(2), II, PoisonAddress);
        B.CreateCall(ShadowCopy, {II->getArgOperand(0), II->getArgOperand(1),
                                  B.CreateZExtOrTrunc(II->getArgOperand(2), B.getInt64Ty())});
        break;
      case Intrinsic::memset:
        observe(B, II->getArgOperand(0), II, PoisonAddress);
        observe(B, II->getArgOperand(2), II, PoisonAddress);
        B.CreateCall(ShadowStore, {II->getArgOperand(0), B.CreateZExtOrTrunc(II->getArgOperand(2), B.getInt64Ty()),
                                   scalar(B, shadowOf(II->getArgOperand(1), II))});
        break;
      case Intrinsic::masked_store:
        // What it writes is taken as clean (its mask is not followed).
        B.CreateCall(ShadowStore, {II->getArgOperand(1),
                                   B.getInt64(DL.getTypeStoreSize(II->getArgOperand(0)->getType())), B.getInt32(0)});
        break;
      default:
        break;
      }
      return;
    }
    if (Callee->isDeclaration()) {
      // What a function outside the module is passed, it may print (a driver's stand-in
      // for a declared function does).
      if (Output.count(Callee->getName().str()) || standsIn(Call))
        for (Value *Arg : Call.args())
          observe(B, Arg, &Call, PoisonPrinted);
      return;
    }
    for (unsigned N = 0; N < Call.arg_size() && N < MaxArgs; ++N)
      put(B, ArgOrigins, N * LaneByLane, shadowOf(Call.getArgOperand(N), &Call));
  }

  // A masked load's or gather's lanes: the pass-through value's where the mask is off,
  // the memory's (taken as clean) where it is on, and the mask's own poison; null for
  // other calls. The operands are found by type: the alignment operand comes and goes
  // with the LLVM version.
  Value *maskedLoad(IRBuilder<> &B, CallBase &Call, Type *T) {
    auto *II = dyn_cast<IntrinsicInst>(&Call);
    if (!II || !T->isVectorTy() ||
        (II->getIntrinsicID() != Intrinsic::masked_load && II->getIntrinsicID() != Intrinsic::masked_gather &&
         II->getIntrinsicID() != Intrinsic::masked_expandload))
      return nullptr;
    Value *Mask = nullptr;
    for (Value *Arg : II->args())
      if (auto *VT = dyn_cast<FixedVectorType>(Arg->getType()); VT && VT->getElementType()->isIntegerTy(1))
        Mask = Arg;
    Value *Through = II->args().end()[-1];
    if (!Mask || Through->getType() != II->getType() || Mask->getType()->getScalarSizeInBits() != 1 ||
        cast<FixedVectorType>(Mask->getType())->getNumElements() != cast<FixedVectorType>(T)->getNumElements())
      return nullptr;
    Value *Lanes = B.CreateSelect(Mask, Constant::getNullValue(T), fit(B, shadowOf(Through, II), T));
    return join(B, Lanes, fit(B, shadowOf(Mask, II), T));
  }

  bool tracked(Function *Callee) { return Callee && !Callee->isDeclaration() && !Callee->getName().starts_with("__ctos."); }

  // The shadow of I's result (at B, after I), before the rules that make it poison.
  Value *propagated(IRBuilder<> &B, Instruction &I) {
    Type *T = shadowType(I.getType());
    auto all = [&](auto Operands) {
      Value *S = Constant::getNullValue(T);
      for (Value *Op : Operands)
        S = join(B, S, fit(B, shadowOf(Op, &I), T));
      return S;
    };
    switch (I.getOpcode()) {
    case Instruction::Freeze:
    case Instruction::Alloca:
      return Constant::getNullValue(T);
    case Instruction::Select: {
      auto &S = cast<SelectInst>(I);
      Value *Picked = B.CreateSelect(S.getCondition(), fit(B, shadowOf(S.getTrueValue(), &I), T),
                                     fit(B, shadowOf(S.getFalseValue(), &I), T));
      return join(B, fit(B, shadowOf(S.getCondition(), &I), T), Picked);
    }
    case Instruction::ExtractElement: {
      auto &E = cast<ExtractElementInst>(I);
      Value *Lane = B.CreateExtractElement(shadowOf(E.getVectorOperand(), &I), E.getIndexOperand());
      return join(B, Lane, shadowOf(E.getIndexOperand(), &I));
    }
    case Instruction::InsertElement: {
      Value *S = B.CreateInsertElement(fit(B, shadowOf(I.getOperand(0), &I), T),
                                       scalar(B, shadowOf(I.getOperand(1), &I)), I.getOperand(2));
      return join(B, S, fit(B, shadowOf(I.getOperand(2), &I), T));
    }
    case Instruction::ShuffleVector: {
      auto &SV = cast<ShuffleVectorInst>(I);
      Type *From = shadowType(SV.getOperand(0)->getType());
      SmallVector<int> Mask;
      std::vector<Constant *> Undefined;
      for (int M : SV.getShuffleMask()) {
        Mask.push_back(M < 0 ? 0 : M);
        Undefined.push_back(ConstantInt::get(I32, M < 0 ? origin(&I, HasPoisonOperand) : 0));
      }
      Value *S = B.CreateShuffleVector(fit(B, shadowOf(SV.getOperand(0), &I), From),
                                       fit(B, shadowOf(SV.getOperand(1), &I), From), Mask);
      return join(B, S, ConstantVector::get(Undefined));
    }
    case Instruction::ExtractValue: {
      auto &E = cast<ExtractValueInst>(I);
      Value *S = shadowOf(E.getAggregateOperand(), &I);
      Value *Field = S->getType()->isVectorTy() ? B.CreateExtractElement(S, uint64_t(E.getIndices()[0])) : S;
      return fit(B, Field, T);
    }
    case Instruction::InsertValue: {
      auto &In = cast<InsertValueInst>(I);
      Value *S = fit(B, shadowOf(In.getAggregateOperand(), &I), T);
      Value *V = scalar(B, shadowOf(In.getInsertedValueOperand(), &I));
      if (!T->isVectorTy())
        return join(B, S, V);
      uint64_t Field = In.getIndices()[0];
      // A nested field's poison joins its top-level field's: the others may be poison yet.
      if (In.getNumIndices() > 1)
        V = join(B, B.CreateExtractElement(S, Field), V);
      return B.CreateInsertElement(S, V, Field);
    }
    case Instruction::Load:
      return loaded(B, cast<LoadInst>(I));
    case Instruction::Call: {
      auto &Call = cast<CallBase>(I);
      if (tracked(Call.getCalledFunction())) {
        B.CreateStore(B.getInt32(0), RetOrigin);
        return take(B, RetLanes, 0, T);
      }
      if (Call.getCalledFunction() && Output.count(Call.getCalledFunction()->getName().str()))
        return Constant::getNullValue(T);
      if (Value *S = maskedLoad(B, Call, T))
        return S;
      return all(Call.args());
    }
    default:
      return all(I.operands());
    }
  }

  void function(Function &F) {
    ModuleSlotTracker Slots(&M);
    Slots.incorporateFunction(F);
    for (Instruction &I : instructions(F)) {
      std::string S;
      raw_string_ostream Out(S);
      I.print(Out, Slots);
      Out.flush();
      S = StringRef(S).trim().str();
      Text[&I] = S.size() > 160 ? S.substr(0, 157) + "..." : S;
    }
    std::vector<Instruction *> Order;
    for (BasicBlock *BB : ReversePostOrderTraversal<Function *>(&F))
      for (Instruction &I : *BB)
        Order.push_back(&I);
    // The arguments' shadows, passed by the caller (the driver passes none).
    Instruction *First = &*F.getEntryBlock().getFirstInsertionPt();
    IRBuilder<> B(First);
    for (Argument &A : F.args()) {
      Type *T = shadowType(A.getType());
      Shadow[&A] = A.getArgNo() < MaxArgs ? take(B, ArgOrigins, A.getArgNo() * LaneByLane, T) : Constant::getNullValue(T);
    }
    arguments(F);
    B.SetInsertPoint(First);
    for (Argument &A : F.args())
      Shadow[&A] = withMade(B, &A, Shadow[&A]);
    std::vector<std::pair<PHINode *, PHINode *>> Phis;
    for (Instruction *I : Order) {
      if (auto *Phi = dyn_cast<PHINode>(I)) {
        PHINode *S = PHINode::Create(shadowType(Phi->getType()), Phi->getNumIncomingValues());
        S->insertAfter(Phi);
        Shadow[Phi] = S;
        Phis.push_back({Phi, S});
        continue;
      }
      if (I->isEHPad() || isa<DbgInfoIntrinsic>(I) || otherAddressSpace(*I))
        continue;
      instrument(*I);
    }
    for (auto [Phi, S] : Phis)
      for (unsigned N = 0; N < Phi->getNumIncomingValues(); ++N)
        S->addIncoming(shadowOf(Phi->getIncomingValue(N), Phi), Phi->getIncomingBlock(N));
  }

  void instrument(Instruction &I) {
    Instruction *Next = I.getNextNode();
    IRBuilder<> B(&I);
    if (auto *Br = dyn_cast<BranchInst>(&I); Br && Br->isConditional())
      observe(B, Br->getCondition(), &I, PoisonBranch);
    else if (auto *Switch = dyn_cast<SwitchInst>(&I))
      observe(B, Switch->getCondition(), &I, PoisonBranch);
    else if (auto *Indirect = dyn_cast<IndirectBrInst>(&I))
      observe(B, Indirect->getAddress(), &I, PoisonBranch);
    else if (auto *Bin = dyn_cast<BinaryOperator>(&I)) {
      auto Op = Bin->getOpcode();
      if (Op == Instruction::UDiv || Op == Instruction::SDiv || Op == Instruction::URem || Op == Instruction::SRem)
        observe(B, Bin->getOperand(1), &I, PoisonDivisor);
    } else if (auto *Load = dyn_cast<LoadInst>(&I))
      observe(B, Load->getPointerOperand(), &I, PoisonAddress);
    else if (auto *Store = dyn_cast<StoreInst>(&I))
      observe(B, Store->getPointerOperand(), &I, PoisonAddress);
    else if (auto *RMW = dyn_cast<AtomicRMWInst>(&I))
      observe(B, RMW->getPointerOperand(), &I, PoisonAddress);
    else if (auto *CX = dyn_cast<AtomicCmpXchgInst>(&I))
      observe(B, CX->getPointerOperand(), &I, PoisonAddress);
    instruction(I);
    B.SetInsertPoint(&I);
    if (auto *Store = dyn_cast<StoreInst>(&I))
      stored(B, Store->getValueOperand(), Store->getPointerOperand(), &I);
    else if (auto *RMW = dyn_cast<AtomicRMWInst>(&I))
      stored(B, RMW->getValOperand(), RMW->getPointerOperand(), &I);
    else if (auto *CX = dyn_cast<AtomicCmpXchgInst>(&I))
      stored(B, CX->getNewValOperand(), CX->getPointerOperand(), &I);
    else if (auto *Call = dyn_cast<CallBase>(&I))
      beforeCall(B, *Call);
    else if (auto *Ret = dyn_cast<ReturnInst>(&I); Ret && Ret->getReturnValue()) {
      Value *S = withMade(B, Ret, shadowOf(Ret->getReturnValue(), &I));
      Shadow[Ret] = S;
      // What `main` returns is its exit status: observed.
      if (Ret->getFunction()->getName() == "main")
        observe(B, Ret, &I, PoisonReturned);
      else if (Ret->getFunction()->hasRetAttribute(Attribute::NoUndef))
        observe(B, Ret, &I, PoisonNoundef);
      // The driver reads one for all (poison in any lane it prints is observed); a caller
      // in the module the lanes.
      B.CreateStore(scalar(B, S), RetOrigin);
      put(B, RetLanes, 0, S);
    }
    if (!Next || I.getType()->isVoidTy())
      return;
    B.SetInsertPoint(Next);
    if (auto *Alloca = dyn_cast<AllocaInst>(&I)) {
      Value *Count = B.CreateZExtOrTrunc(Alloca->getArraySize(), B.getInt64Ty());
      Value *Size = B.CreateMul(Count, B.getInt64(DL.getTypeAllocSize(Alloca->getAllocatedType())));
      B.CreateCall(ShadowStore, {Alloca, Size, B.getInt32(0)});
    }
    if (I.getType()->isTokenTy() || I.getType()->isMetadataTy())
      return;
    Shadow[&I] = withMade(B, &I, propagated(B, I));
  }

  // The module's globals with their shadows: `__ctos.shadow_regions` (start, bytes,
  // shadow, whether the driver prints it), their number in `__ctos.nshadow_regions`; and what each origin number names.
  void tables() {
    Type *Ptr = PointerType::getUnqual(C), *I64 = Type::getInt64Ty(C);
    StructType *Region = StructType::get(C, {Ptr, I64, Ptr, I64});
    std::vector<Constant *> Entries;
    std::vector<GlobalVariable *> Globals;
    for (GlobalVariable &G : M.globals())
      if (isMemory(G))
        Globals.push_back(&G);
    for (GlobalVariable *G : Globals) {
      uint64_t Size = memoryBytes(*G, DL);
      auto *ShadowType = ArrayType::get(I32, Size);
      auto *S = new GlobalVariable(M, ShadowType, false, GlobalValue::PrivateLinkage,
                                   Constant::getNullValue(ShadowType), "ctos.shadow");
      bool Printed = G->hasExternalLinkage() && !G->isConstant();
      Entries.push_back(ConstantStruct::get(Region, {G, ConstantInt::get(I64, Size), S, ConstantInt::get(I64, Printed)}));
    }
    ArrayType *Table = ArrayType::get(Region, Entries.size());
    new GlobalVariable(M, Table, true, GlobalValue::ExternalLinkage, ConstantArray::get(Table, Entries),
                       "__ctos.shadow_regions");
    new GlobalVariable(M, I64, true, GlobalValue::ExternalLinkage, ConstantInt::get(I64, Entries.size()),
                       "__ctos.nshadow_regions");
    std::vector<Constant *> Names;
    for (const std::string &O : Origins) {
      Constant *Text = ConstantDataArray::getString(C, O);
      Names.push_back(new GlobalVariable(M, Text->getType(), true, GlobalValue::PrivateLinkage, Text, "ctos.origin"));
    }
    ArrayType *NameTable = ArrayType::get(Ptr, Names.size());
    new GlobalVariable(M, NameTable, true, GlobalValue::ExternalLinkage, ConstantArray::get(NameTable, Names),
                       "__ctos.origins");
  }
};

} // namespace

// Track poison through every function the module defines (see the top of this file);
// the number of instructions that may make it.
extern "C" unsigned ctos_track_poison(LLVMModuleRef ModuleRef) {
  Module &M = *unwrap(ModuleRef);
  Tracker T(M);
  std::vector<Function *> Defined;
  for (Function &F : M)
    if (T.tracked(&F))
      Defined.push_back(&F);
  for (Function *F : Defined) {
    bool Scalable = false;
    for (Instruction &I : instructions(*F))
      Scalable |= isa<ScalableVectorType>(I.getType());
    if (!Scalable)
      T.function(*F);
  }
  T.regionTable();
  T.tables();
  return T.Origins.size() - 1;
}
