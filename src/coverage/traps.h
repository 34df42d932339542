// One-shot coverage sites in this process's code, shared by the in-process engine
// (src/coverage/traps.cpp, called from src/coverage/traps.rs) and the agent inside an
// external opt (llvm-plugin/agent.cpp). Include it in exactly one translation unit.
//
// A site is armed once in the parent (the fork server); each child inherits the armed
// code, and its first arrival at a site records the site and puts the code back, in the
// child's own copy-on-write page, so the parent stays armed. Two ways to arrive:
//
// * A patched site starts with `jmp rel32` whose four displacement bytes are all 0xCC. The
//   jump goes to the site's slot in a mirror region at a fixed distance below the code,
//   which jumps to the site's stub: skip the red zone, push the site's index, enter
//   `ctos_trap_hit`, which writes the site's code back, records, and returns to the site.
//   No signal, no kernel: a signal costs microseconds, this costs tens of nanoseconds.
// * Everything else is an `int3`: a site whose function (with its alignment padding) is
//   too short for a patch, a short block right before one that a jump reaches (below), or
//   a site whose mirror slot cannot be mapped. The SIGTRAP handler restores and records.
//
// Blocks of one or two instructions are common. A site is patched only if no jump or
// call elsewhere reaches a site inside its patch, and each of those is one the code runs
// into from it, with no branch, call or return between (the stub records those along
// with it), or a fall-through block after a branch (it stays an int3 when the stub writes
// the code back). Otherwise the site is an int3 and the next site may be patched. (Patching
// over a jump's target that the site runs into, too, was measured: 12% more signals, for
// the jump often comes first and then both sites signal.)
//
// * A pun: a short site (1 to 4 bytes) right before a patched one is a jump too, whose
//   displacement is its own bytes followed by the first bytes of the next site's patch
//   ("instruction punning", as E9Patch calls it). Where it lands is fixed by those bytes
//   (the free ones chosen for a free slot, int3s where an instruction starts), inside the
//   mirror, or for 4 bytes a pun mirror of its own. Its stub writes back its own
//   bytes only; the next site's patch stays. When the next site is restored first, the pun
//   would jump through its restored bytes, so that restore puts an int3 over the pun. Most
//   of the signals left were these short blocks (a join after `xor eax,eax`, a loop header
//   after a one-instruction preheader).
// A site at the end of a function may patch the alignment padding after it.
//
// Because the displacement bytes are int3s, a jump into the middle of a patch — to a site
// inside it, or to a block no decoder found (a jump table's target) — traps too: the
// handler takes the patch out (every site inside it an int3) and leaves an int3 at the
// patched site, so nothing executes a half-patched instruction.
//
// The parent, which runs LLVM code too (loading modules), restores what it hits like a
// child and lists it; rearm() puts those sites back before the next fork.

#pragma once

#include <algorithm>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <vector>

extern "C" {
// What ctos_trap_hit (assembly, below) reads and writes; field offsets are spelled out
// there, checked here.
struct CtosTrapState {
  const uint64_t *Sites;        // 0: sorted site addresses
  const uint64_t *Restore;      // 8: per site, the 5 bytes a patched site's hit writes back
  const uint8_t *Follows;       // 16: per site, 1 if the site before runs into it
  uint8_t *Record;              // 24: a child's record, [count: u64][site: u32; count], or null
  uint32_t *Restored;           // 32: restored sites, re-armed before a fork (a parent) or a next job (a child)
  uint64_t NRestored;           // 40
  uint64_t NSites;              // 48
  const volatile uint8_t *Phase; // 56: the child's phase; recorded only when == Optimizing
  const volatile int *Gate;     // 64: the focus gate; recorded only when != 0
  uint8_t Optimizing;           // 72
  uint8_t InChild;              // 73
  uint64_t RestoredCap;         // 80: room in Restored
  const uint32_t *PunKill;      // 88: per site, what to write over a pun on it (see below), or 0
};
__attribute__((visibility("hidden"))) CtosTrapState ctos_trap_state;
__attribute__((visibility("hidden"))) void ctos_trap_hit();
}

static_assert(offsetof(CtosTrapState, Restore) == 8 && offsetof(CtosTrapState, Follows) == 16 &&
                  offsetof(CtosTrapState, Record) == 24 && offsetof(CtosTrapState, Restored) == 32 &&
                  offsetof(CtosTrapState, NRestored) == 40 && offsetof(CtosTrapState, NSites) == 48 &&
                  offsetof(CtosTrapState, Phase) == 56 && offsetof(CtosTrapState, Gate) == 64 &&
                  offsetof(CtosTrapState, Optimizing) == 72 && offsetof(CtosTrapState, InChild) == 73 &&
                  offsetof(CtosTrapState, RestoredCap) == 80 && offsetof(CtosTrapState, PunKill) == 88,
              "ctos_trap_hit reads these offsets");

// Entered from a stub with the red zone skipped (128 bytes) and the site's index pushed.
// Writes the site's code back (and, when a live pun leads into it, an int3 over the pun:
// its jump's displacement was this site's patch), lists the site as restored (the patched
// site alone), records it and the sites inside its patch that it runs into (a child's
// record while optimizing with the gate open), and returns to the site through the
// index's slot, freeing the red-zone skip with `ret $128`.
asm(R"(
  .text
  .p2align 4
  .type ctos_trap_hit,@function
ctos_trap_hit:
  pushfq
  push %rax
  push %rcx
  push %rdx
  push %rsi
  movl 40(%rsp), %eax
  movq ctos_trap_state+0(%rip), %rcx
  movq (%rcx,%rax,8), %rdx
  movq ctos_trap_state+8(%rip), %rcx
  movq (%rcx,%rax,8), %rcx
  movl %ecx, (%rdx)
  shrq $32, %rcx
  movb %cl, 4(%rdx)
  movq ctos_trap_state+88(%rip), %rcx
  movl (%rcx,%rax,4), %ecx
  testl %ecx, %ecx
  je 2f
  movq ctos_trap_state+0(%rip), %rsi
  movq -8(%rsi,%rax,8), %rsi
  cmpb $0xE9, (%rsi)
  jne 2f
  movl %ecx, (%rsi)
2:
  movq %rdx, 40(%rsp)
  movq ctos_trap_state+40(%rip), %rcx
  cmpq ctos_trap_state+80(%rip), %rcx
  jae 3f
  movq ctos_trap_state+32(%rip), %rsi
  movl %eax, (%rsi,%rcx,4)
  incq %rcx
  movq %rcx, ctos_trap_state+40(%rip)
3:
  cmpb $0, ctos_trap_state+73(%rip)
  je 9f
  movq ctos_trap_state+56(%rip), %rcx
  movb (%rcx), %cl
  cmpb ctos_trap_state+72(%rip), %cl
  jne 9f
  movq ctos_trap_state+64(%rip), %rcx
  cmpl $0, (%rcx)
  je 9f
  movq ctos_trap_state+24(%rip), %rcx
  testq %rcx, %rcx
  je 9f
  addq $5, %rdx
1:
  movq (%rcx), %rsi
  cmpq ctos_trap_state+48(%rip), %rsi
  jae 9f
  movl %eax, 8(%rcx,%rsi,4)
  incq %rsi
  movq %rsi, (%rcx)
  incq %rax
  cmpq ctos_trap_state+48(%rip), %rax
  jae 9f
  movq ctos_trap_state+0(%rip), %rsi
  cmpq %rdx, (%rsi,%rax,8)
  jae 9f
  movq ctos_trap_state+16(%rip), %rsi
  cmpb $0, (%rsi,%rax)
  je 9f
  jmp 1b
9:
  pop %rsi
  pop %rdx
  pop %rcx
  pop %rax
  popfq
  ret $128
  .size ctos_trap_hit, .-ctos_trap_hit
)");

namespace ctos_traps {

const uint8_t Int3 = 0xCC;
const uint8_t Jmp = 0xE9;
// A patch's displacement: its bytes are all int3s. The jump lands this far from the site.
const int64_t Displacement = int64_t(int32_t(0xCCCCCCCCu));
// Where a 4-byte pun's jump lands, with its free bytes int3s too.
const int64_t FourDisplacement = int64_t(int32_t(0xE9CCCCCCu));
const size_t PatchBytes = 5;
const size_t StubBytes = 16;
// Sites further apart than this get mirror regions of their own (another object).
const uint64_t MaxMirrorSpan = uint64_t(1) << 30;

enum Kind : uint8_t { Plain, Patched, Punned };
// Flags of a site, from the caller (src/coverage/sites.rs: MAY_PATCH, FOLLOWS, TARGET,
// FALLS_IN, STARTS_AFTER: `StartsAfter << K`, an instruction starts K + 1 bytes on).
const uint8_t MayPatch = 1, FollowsBefore = 2, Target = 4, FallsIn = 8, StartsAfter = 16;

struct Region {
  void *Base;
  size_t Size;
};

const uint64_t HugePage = uint64_t(2) << 20;

// A private anonymous mapping of `Bytes` (a multiple of 2 MiB) at a 2 MiB boundary, in
// huge pages where the kernel gives them; null if none.
inline void *mapHugeAligned(size_t Bytes) {
  void *P = mmap(nullptr, Bytes + HugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (P == MAP_FAILED)
    return nullptr;
  uint64_t At = reinterpret_cast<uint64_t>(P), Start = (At + HugePage - 1) & ~(HugePage - 1);
  if (Start > At)
    munmap(P, Start - At);
  if (At + HugePage > Start)
    munmap(reinterpret_cast<void *>(Start + Bytes), At + HugePage - Start);
  madvise(reinterpret_cast<void *>(Start), Bytes, MADV_HUGEPAGE);
  return reinterpret_cast<void *>(Start);
}

// A zero-filled array in a mapping of its own, in huge pages where the kernel gives them:
// a fork copies one entry per 2 MiB of it instead of 512 (the tables hold millions of
// sites), and pages never written are never present.
template <typename T> class Table {
  T *Data = nullptr;
  size_t N = 0, Bytes = 0;

public:
  void reset(size_t Count) {
    release();
    if (Count == 0)
      return;
    Bytes = (Count * sizeof(T) + HugePage - 1) & ~(HugePage - 1);
    Data = static_cast<T *>(mapHugeAligned(Bytes));
    if (!Data)
      abort();
    N = Count;
  }
  void release() {
    if (Data)
      munmap(Data, Bytes);
    Data = nullptr;
    N = 0;
  }
  T &operator[](size_t I) { return Data[I]; }
  const T &operator[](size_t I) const { return Data[I]; }
  T *data() { return Data; }
  T *begin() { return Data; }
  T *end() { return Data + N; }
  size_t size() const { return N; }
  bool empty() const { return N == 0; }
};

Table<uint64_t> Sites;
Table<uint8_t> Kinds;
Table<uint8_t> Original;     // per site: its first byte
Table<uint64_t> RestoreCode; // per site: its first 5 bytes, 0xCC where a site it does not run into is
Table<uint8_t> Follows;
Table<uint32_t> Restored;
Table<uint64_t> PunCode;  // per punned site: its own bytes as armed
Table<uint32_t> PunKill;  // per site with a pun before it: the pun's 4 bytes once it is taken out
std::vector<Region> Regions;

inline void writeN(uint64_t At, uint64_t Bytes, size_t N) {
  auto *P = reinterpret_cast<volatile uint8_t *>(At);
  for (size_t I = 0; I < N; ++I)
    P[I] = uint8_t(Bytes >> (8 * I));
}

inline void write5(uint64_t At, uint64_t Bytes) { writeN(At, Bytes, PatchBytes); }

inline uint64_t patchCode() {
  uint64_t Code = Jmp;
  for (size_t I = 1; I < PatchBytes; ++I)
    Code |= uint64_t(Int3) << (8 * I);
  return Code;
}

inline void restored(size_t I) {
  CtosTrapState &S = ctos_trap_state;
  if (S.NRestored < S.RestoredCap)
    Restored[S.NRestored++] = uint32_t(I);
}

inline void record(size_t I) {
  CtosTrapState &S = ctos_trap_state;
  restored(I);
  if (!S.InChild)
    return;
  if (!S.Record || !S.Phase || *S.Phase != S.Optimizing || !S.Gate || !*S.Gate)
    return;
  auto *Count = reinterpret_cast<volatile uint64_t *>(S.Record);
  uint64_t N = *Count;
  if (N < S.NSites) {
    reinterpret_cast<volatile uint32_t *>(S.Record + 8)[N] = uint32_t(I);
    *Count = N + 1;
  }
}

inline size_t indexOf(uint64_t Addr) {
  return size_t(std::lower_bound(Sites.begin(), Sites.end(), Addr) - Sites.begin());
}

// A punned site's own bytes: up to the patched site it runs into.
inline size_t punLength(size_t X) { return size_t(Sites[X + 1] - Sites[X]); }

inline bool livePun(size_t X) {
  return Kinds[X] == Punned && *reinterpret_cast<const volatile uint8_t *>(Sites[X]) == Jmp;
}

// The pun at `X` taken out: its own bytes as they were, behind an int3 that still counts.
inline void killPun(size_t X) { writeN(Sites[X], PunKill[X + 1], punLength(X)); }

inline bool intact(size_t P) {
  auto *At = reinterpret_cast<const volatile uint8_t *>(Sites[P]);
  uint64_t Code = patchCode();
  for (size_t B = 0; B < PatchBytes; ++B)
    if (At[B] != uint8_t(Code >> (8 * B)))
      return false;
  return true;
}

// A jump into the middle of site `P`'s intact patch: take the patch out with an int3 at
// every site inside it and at the site itself (each first arrival still counts on its
// own), and let the caller handle `Pc`.
inline void unpatch(size_t P) {
  write5(Sites[P], RestoreCode[P]);
  for (size_t J = P + 1; J < Sites.size() && Sites[J] < Sites[P] + PatchBytes; ++J)
    *reinterpret_cast<volatile uint8_t *>(Sites[J]) = Int3;
  *reinterpret_cast<volatile uint8_t *>(Sites[P]) = Int3;
  restored(P);
  if (PunKill[P] && livePun(P - 1))
    killPun(P - 1);
}

inline void onTrap(int Signal, siginfo_t *, void *Context) {
  auto *UC = static_cast<ucontext_t *>(Context);
  uint64_t Pc = uint64_t(UC->uc_mcontext.gregs[REG_RIP]) - 1;
  size_t I = indexOf(Pc);
  // The patched site whose bytes hold Pc, if any: at most 4 bytes before it.
  for (size_t K = I; K > 0 && Sites[K - 1] + PatchBytes > Pc; --K) {
    size_t P = K - 1;
    if (Sites[P] < Pc && Kinds[P] == Patched && intact(P)) {
      unpatch(P);
      break;
    }
    // A jump into a pun's own bytes: they are its displacement, take it out.
    if (livePun(P) && Sites[P] < Pc && Pc < Sites[P + 1]) {
      killPun(P);
      restored(P);
      break;
    }
  }
  bool Site = I < Sites.size() && Sites[I] == Pc;
  if (Site && *reinterpret_cast<volatile uint8_t *>(Pc) == Int3) {
    *reinterpret_cast<volatile uint8_t *>(Pc) = Original[I];
    record(I);
  } else if (*reinterpret_cast<volatile uint8_t *>(Pc) == Int3) {
    // Not ours (a trap compiled into the code): die as it would have.
    signal(Signal, SIG_DFL);
    raise(Signal);
    return;
  }
  UC->uc_mcontext.gregs[REG_RIP] = int64_t(Pc);
}

inline void unmapRegions() {
  for (const Region &R : Regions)
    munmap(R.Base, R.Size);
  Regions.clear();
}

inline void disarm() {
  for (size_t I = 0; I < Sites.size(); ++I) {
    if (Kinds[I] == Patched && intact(I))
      write5(Sites[I], RestoreCode[I]);
    if (livePun(I))
      writeN(Sites[I], RestoreCode[I], punLength(I));
    *reinterpret_cast<volatile uint8_t *>(Sites[I]) = Original[I];
  }
  // Sites inside a patch were restored with it; their own byte is put back above.
  unmapRegions();
  Sites.release();
  Kinds.release();
  Original.release();
  RestoreCode.release();
  Follows.release();
  Restored.release();
  PunCode.release();
  PunKill.release();
  ctos_trap_state.NSites = 0;
  ctos_trap_state.NRestored = 0;
}

inline void arm(size_t I) {
  if (Kinds[I] == Patched)
    write5(Sites[I], patchCode());
  else if (Kinds[I] == Punned)
    writeN(Sites[I], PunCode[I], punLength(I));
  else
    *reinterpret_cast<volatile uint8_t *>(Sites[I]) = Int3;
}

// Put back what was restored since the last call, and the pun before a restored site,
// which its restore took out: in a parent before a fork (what its own LLVM calls hit), in
// a child before its next job (what its last one hit).
inline void rearm() {
  CtosTrapState &S = ctos_trap_state;
  for (size_t K = 0; K < S.NRestored; ++K) {
    size_t I = Restored[K];
    arm(I);
    if (PunKill[I])
      arm(I - 1);
  }
  S.NRestored = 0;
}

// Code for stubs at exactly `Addr`, in huge pages where the kernel gives them: a fork
// copies one entry per 2 MiB of them instead of 512, and children read them unfaulted.
inline void *mapAt(uint64_t Addr, size_t Size) {
  void *P = mmap(reinterpret_cast<void *>(Addr), Size, PROT_READ | PROT_WRITE | PROT_EXEC,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (P == MAP_FAILED)
    return nullptr;
  if (P != reinterpret_cast<void *>(Addr)) { // a kernel without MAP_FIXED_NOREPLACE
    munmap(P, Size);
    return nullptr;
  }
  madvise(P, Size, MADV_HUGEPAGE);
  Regions.push_back({P, Size});
  return P;
}

// The whole 2 MiB ranges inside this process's mappings that `Wanted(Perms, Name)`
// chooses (`Perms` as /proc/self/maps writes them, `Name` the path or "[heap]", "" if none).
template <typename F> std::vector<std::pair<uint64_t, uint64_t>> hugeRangesOf(F Wanted) {
  std::vector<std::pair<uint64_t, uint64_t>> Ranges;
  FILE *Maps = fopen("/proc/self/maps", "r");
  if (!Maps)
    return Ranges;
  char Line[512];
  while (fgets(Line, sizeof Line, Maps)) {
    unsigned long long Start, End;
    char Perms[5] = {};
    int Name = 0;
    if (sscanf(Line, "%llx-%llx %4s %*s %*s %*s %n", &Start, &End, Perms, &Name) < 3 || Name == 0)
      continue;
    Line[strcspn(Line, "\n")] = '\0';
    uint64_t A = (uint64_t(Start) + HugePage - 1) & ~(HugePage - 1), B = uint64_t(End) & ~(HugePage - 1);
    if (A < B && Wanted(Perms, Line + Name))
      Ranges.push_back({A, B});
  }
  fclose(Maps);
  return Ranges;
}

// The parent's private memory in huge pages where it is 2 MiB-aligned and whole (the
// heap with the module, the site tables): a fork copies its page table too, and what
// the parent no longer writes stays huge. Costs a copy of it, once per arm.
inline void dataInHugePages() {
  const int Collapse = 25; // MADV_COLLAPSE, Linux 6.1; older kernels refuse it, harmlessly
  // Private, writable, not code, and anonymous (no path) or the heap.
  auto Ranges = hugeRangesOf([](const char *Perms, const char *Name) {
    return Perms[1] == 'w' && Perms[2] != 'x' && Perms[3] == 'p' && (!*Name || strcmp(Name, "[heap]") == 0);
  });
  for (auto [A, B] : Ranges) {
    madvise(reinterpret_cast<void *>(A), B - A, MADV_HUGEPAGE);
    madvise(reinterpret_cast<void *>(A), B - A, Collapse);
  }
}

// The code that holds [Lo, Hi], moved once into anonymous huge pages, with the same bytes
// at the same addresses, writable. A fork copies the page table of everything a parent
// has written: armed code, nearly all of it, was one entry per 4 KiB (perf: fork's
// copy_page_range took an eighth of a search's CPU); in huge pages it is one per 2 MiB.
// A child's first write to one splits that entry in the child alone. Only whole 2 MiB
// inside one executable mapping move; mremap swaps the copy in at once, so code that
// runs meanwhile (this function's caller, other threads) finds the same bytes.
inline void codeInHugePages(uint64_t Lo, uint64_t Hi) {
  static bool Done = false;
  if (Done)
    return;
  Done = true;
  auto Moves = hugeRangesOf([](const char *Perms, const char *) { return Perms[2] == 'x'; });
  for (auto [A, B] : Moves) {
    if (A > Hi || B <= Lo)
      continue;
    size_t Size = B - A;
    void *T = mapHugeAligned(Size);
    if (!T)
      continue;
    memcpy(T, reinterpret_cast<const void *>(A), Size);
    if (mprotect(T, Size, PROT_READ | PROT_WRITE | PROT_EXEC) != 0 ||
        mremap(T, Size, Size, MREMAP_MAYMOVE | MREMAP_FIXED, reinterpret_cast<void *>(A)) == MAP_FAILED)
      munmap(T, Size);
  }
}

inline bool nearEnough(uint64_t From, uint64_t To) {
  int64_t D = int64_t(To) - int64_t(From + PatchBytes);
  return D >= INT32_MIN && D <= INT32_MAX;
}

inline void put(uint8_t *At, std::initializer_list<uint8_t> Bytes) { memcpy(At, Bytes.begin(), Bytes.size()); }

inline void putJump(uint8_t *At, uint64_t Target) {
  int32_t Rel = int32_t(int64_t(Target) - int64_t(reinterpret_cast<uint64_t>(At) + PatchBytes));
  At[0] = Jmp;
  memcpy(At + 1, &Rel, 4);
}

// Where pun `X`'s jump can land: its free displacement bytes (its own, after the opcode;
// int3s first, as in a patch) chosen so that the slot lies in the mirror `Main` (and is no
// patched site's slot there) or in the pun mirror `Four`, and overlaps no other pun's slot.
// A byte where another of its instructions starts stays an int3 (`Flags`' StartsAfter
// bits): a jump there no decoder found traps, as inside a patch. Its code, and the slot; or 0.
inline std::pair<uint64_t, uint64_t> punSlot(size_t X, uint8_t Flags, Region Main, Region Four,
                                             std::vector<uint64_t> &Taken) {
  size_t Free = punLength(X) - 1;
  uint32_t KeepInt3 = 0;
  for (size_t B = 0; B < Free; ++B)
    if (Flags & (StartsAfter << B))
      KeepInt3 |= uint32_t(0xFF) << (8 * B);
  auto In = [](Region R, uint64_t Slot) {
    uint64_t Base = reinterpret_cast<uint64_t>(R.Base);
    return R.Base && Slot >= Base && Slot + PatchBytes <= Base + R.Size;
  };
  auto Clear = [&](uint64_t Slot) {
    // A patched site's slot in the mirror is at its own address plus the displacement.
    uint64_t Image = Slot - PatchBytes - Displacement;
    if (In(Main, Slot))
      for (size_t J = indexOf(Image - (PatchBytes - 1)); J < Sites.size() && Sites[J] < Image + PatchBytes; ++J)
        if (Kinds[J] == Patched)
          return false;
    auto Near = std::lower_bound(Taken.begin(), Taken.end(), Slot - (PatchBytes - 1));
    return Near == Taken.end() || *Near >= Slot + PatchBytes;
  };
  const uint32_t Int3s = 0xCCCCCCCCu & ((uint64_t(1) << (8 * Free)) - 1);
  // A few thousand tries: a pun that finds no slot in them stays an int3.
  const uint32_t Tries = std::min<uint64_t>(uint64_t(1) << (8 * Free), 4096);
  for (uint32_t V = 0; V < Tries; ++V) {
    if (V & KeepInt3)
      continue;
    uint32_t Disp = (V ^ Int3s) | uint32_t(patchCode() << (8 * Free));
    uint64_t Slot = Sites[X] + PatchBytes + int64_t(int32_t(Disp));
    if (!(In(Main, Slot) || In(Four, Slot)) || !Clear(Slot))
      continue;
    Taken.insert(std::lower_bound(Taken.begin(), Taken.end(), Slot), Slot);
    uint64_t Code = Jmp;
    for (size_t B = 0; B < Free; ++B)
      Code |= uint64_t(uint8_t(Disp >> (8 * B))) << (8 * (B + 1));
    return {Code, Slot};
  }
  return {0, 0};
}

// Patch the sites [First, Last) that may be patched or punned: map their mirror slots and
// a stub area near them. Sites whose slots cannot be mapped stay int3s.
inline void patchGroup(size_t First, size_t Last, const uint8_t *Flags) {
  std::vector<size_t> Chosen;
  for (size_t I = First; I < Last; ++I)
    if (Kinds[I] != Plain)
      Chosen.push_back(I);
  if (Chosen.empty())
    return;
  uint64_t Lo = (Sites[Chosen.front()] + PatchBytes + Displacement) & ~(HugePage - 1);
  uint64_t Hi = (Sites[Chosen.back()] + 2 * PatchBytes + Displacement + HugePage - 1) & ~(HugePage - 1);
  size_t StubSize = ((16 + Chosen.size() * StubBytes) + HugePage - 1) & ~(HugePage - 1);
  // A 3-byte pun's slot is 1.8 MiB above its own mirror address: the mirror reaches past
  // the last one's, where there is room.
  uint64_t Reach = Hi;
  for (size_t I : Chosen)
    if (Kinds[I] == Punned && punLength(I) == 3)
      Reach = std::max(Reach, (Sites[I] + 2 * PatchBytes + Displacement + 0x1E0000 + HugePage - 1) & ~(HugePage - 1));
  uint8_t *Mirror = static_cast<uint8_t *>(mapAt(Lo, Reach - Lo));
  if (Mirror)
    Hi = Reach;
  else
    Mirror = static_cast<uint8_t *>(mapAt(Lo, Hi - Lo));
  uint8_t *Stubs = nullptr;
  // The stubs go just below the mirror (or above it), within a jump's reach of every slot.
  for (uint64_t Gap = HugePage; Mirror && !Stubs && Gap < (uint64_t(1) << 30); Gap <<= 1) {
    if (Lo > StubSize + Gap && nearEnough(Hi, Lo - Gap - StubSize))
      Stubs = static_cast<uint8_t *>(mapAt(Lo - Gap - StubSize, StubSize));
    if (!Stubs && nearEnough(Lo, Hi + Gap + StubSize))
      Stubs = static_cast<uint8_t *>(mapAt(Hi + Gap, StubSize));
  }
  if (!Mirror || !Stubs) {
    for (size_t I : Chosen)
      Kinds[I] = Plain;
    return;
  }
  // jmp *0(%rip); .quad ctos_trap_hit
  put(Stubs, {0xFF, 0x25, 0, 0, 0, 0});
  uint64_t Hit = reinterpret_cast<uint64_t>(&ctos_trap_hit);
  memcpy(Stubs + 6, &Hit, 8);
  // A pun of 4 bytes has the next site's 0xE9 as its displacement's top byte: its slot
  // lies 368 MiB above the mirror, in a pun mirror of its own (0xE9CCCCCC).
  Region Four = {nullptr, 0};
  std::vector<size_t> Fours;
  for (size_t I : Chosen)
    if (Kinds[I] == Punned && punLength(I) == PatchBytes - 1)
      Fours.push_back(I);
  if (!Fours.empty()) {
    uint64_t Lo4 = (Sites[Fours.front()] + PatchBytes + FourDisplacement) & ~(HugePage - 1);
    uint64_t Hi4 = (Sites[Fours.back()] + 2 * PatchBytes + FourDisplacement + HugePage - 1) & ~(HugePage - 1);
    Four = {mapAt(Lo4, Hi4 - Lo4), Hi4 - Lo4};
  }
  std::vector<uint64_t> Taken; // pun slots, sorted
  for (size_t N = 0; N < Chosen.size(); ++N) {
    size_t I = Chosen[N];
    uint8_t *Stub = Stubs + 16 + N * StubBytes;
    put(Stub, {0x48, 0x8D, 0x64, 0x24, 0x80}); // lea -128(%rsp), %rsp
    Stub[5] = 0x68;                            // push $index
    uint32_t Index = uint32_t(I);
    memcpy(Stub + 6, &Index, 4);
    putJump(Stub + 10, reinterpret_cast<uint64_t>(Stubs));
    Stub[15] = Int3;
    if (Kinds[I] == Patched) {
      putJump(Mirror + (Sites[I] + PatchBytes + Displacement - Lo), reinterpret_cast<uint64_t>(Stub));
      continue;
    }
    auto [Code, Slot] = punSlot(I, Flags[I], {Mirror, Hi - Lo}, Four, Taken);
    if (!Slot || !nearEnough(Slot, reinterpret_cast<uint64_t>(Stub))) {
      Kinds[I] = Plain;
      continue;
    }
    putJump(reinterpret_cast<uint8_t *>(Slot), reinterpret_cast<uint64_t>(Stub));
    PunCode[I] = Code;
    // Taken out: an int3, its own bytes, then the next site's first bytes as it restores them.
    uint64_t Out = (RestoreCode[I] & ~uint64_t(0xFF)) | Int3;
    size_t L = punLength(I);
    Out = (Out & ((uint64_t(1) << (8 * L)) - 1)) | (RestoreCode[I + 1] << (8 * L));
    PunKill[I + 1] = uint32_t(Out);
    // The pun's stub records it alone: the next site's patch stays, and counts for itself.
    Follows[I + 1] = 0;
  }
}

// Arm the sorted sites with their `Flags` (MayPatch: 5 bytes of the site's own function
// from its start; FollowsBefore; Target). Returns why not, or "".
inline std::string arm(const uint64_t *Addrs, const uint8_t *Flags, size_t N) {
  disarm();
  for (size_t I = 1; I < N; ++I)
    if (Addrs[I] <= Addrs[I - 1])
      return "the sites are not sorted";
  if (N == 0)
    return "";
  // CTOS_COVERAGE_SMALL_PAGES=1: pages as they were, to measure what huge ones save.
  const bool Huge = !getenv("CTOS_COVERAGE_SMALL_PAGES");
  if (Huge)
    codeInHugePages(Addrs[0], Addrs[N - 1]);
  const uint64_t Page = uint64_t(sysconf(_SC_PAGESIZE));
  uint64_t Last = ~uint64_t(0);
  for (size_t I = 0; I < N; ++I) {
    uint64_t First = Addrs[I] & ~(Page - 1), End = (Addrs[I] + PatchBytes - 1) & ~(Page - 1);
    for (uint64_t P = First; P <= End; P += Page) {
      if (P == Last)
        continue;
      if (mprotect(reinterpret_cast<void *>(P), Page, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
        return "cannot make the code at " + std::to_string(Addrs[I]) + " writable: " + strerror(errno);
      Last = P;
    }
  }
  struct sigaction Action = {};
  Action.sa_sigaction = onTrap;
  // The signal frame (a few KiB with the FPU state) goes on the signal stack a child sets
  // up: on the optimizer's own stack, a deep recursion would overflow at another frame.
  Action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&Action.sa_mask);
  sigaction(SIGTRAP, &Action, nullptr);

  Sites.reset(N);
  memcpy(Sites.data(), Addrs, N * sizeof(uint64_t));
  Kinds.reset(N);
  Original.reset(N);
  RestoreCode.reset(N);
  Follows.reset(N);
  PunCode.reset(N);
  PunKill.reset(N);
  // A patched site is listed at most twice between two rearms (taken out by a jump into
  // it, then hit at its int3), every other site once.
  Restored.reset(2 * N);
  // A patch may not overlap another patch; sites inside one become its int3 bytes.
  uint64_t PatchEnd = 0;
  for (size_t I = 0; I < N; ++I) {
    Original[I] = *reinterpret_cast<const uint8_t *>(Sites[I]);
    Follows[I] = Flags && (Flags[I] & FollowsBefore) ? 1 : 0;
    if (!Flags || !(Flags[I] & MayPatch) || Sites[I] < PatchEnd)
      continue;
    // Only sites reached through this one inside its patch: a jump into a patch is a
    // signal, and takes the patch out. One it runs into is recorded with it; one it may
    // branch past (a fall-through block) stays an int3 inside the patch, which signals
    // only if the code goes on into it: never more often than an int3 here would.
    bool Alone = true;
    for (size_t J = I + 1; J < N && Sites[J] < Sites[I] + PatchBytes; ++J)
      Alone = Alone && (Flags[J] & (FollowsBefore | FallsIn)) && !(Flags[J] & Target);
    if (Alone) {
      Kinds[I] = Patched;
      PatchEnd = Sites[I] + PatchBytes;
    }
  }
  for (size_t I = 0; I < N; ++I) {
    if (Kinds[I] != Patched)
      continue;
    uint64_t Code = 0;
    for (size_t B = 0; B < PatchBytes; ++B)
      Code |= uint64_t(*reinterpret_cast<const uint8_t *>(Sites[I] + B)) << (8 * B);
    // Code that already reads as the patch could not be told from it.
    if (Code == patchCode()) {
      Kinds[I] = Plain;
      continue;
    }
    // The sites it runs into are recorded with it; the rest inside stay int3s.
    bool Chain = true;
    for (size_t J = I + 1; J < N && Sites[J] < Sites[I] + PatchBytes; ++J) {
      Chain = Chain && Follows[J];
      if (!Chain) {
        size_t B = size_t(Sites[J] - Sites[I]);
        Code = (Code & ~(uint64_t(0xFF) << (8 * B))) | (uint64_t(Int3) << (8 * B));
      }
    }
    RestoreCode[I] = Code;
  }
  // Puns: a short site right before a patched one, not an int3 inside a patch itself.
  PatchEnd = 0;
  for (size_t I = 0; I + 1 < N; ++I) {
    if (Kinds[I] == Patched)
      PatchEnd = Sites[I] + PatchBytes;
    size_t L = size_t(Sites[I + 1] - Sites[I]);
    if (!Flags || Kinds[I] != Plain || Kinds[I + 1] != Patched || L >= PatchBytes || Sites[I] < PatchEnd ||
        !(Flags[I] & MayPatch) || Original[I] == Jmp)
      continue;
    Kinds[I] = Punned;
    // Its stub writes back its own bytes and leaves the next site's patch as it is.
    uint64_t Code = patchCode() << (8 * L);
    for (size_t B = 0; B < L; ++B)
      Code |= uint64_t(*reinterpret_cast<const uint8_t *>(Sites[I] + B)) << (8 * B);
    RestoreCode[I] = Code & ((uint64_t(1) << (8 * PatchBytes)) - 1);
  }
  for (size_t First = 0; First < N;) {
    size_t Last = First + 1;
    while (Last < N && Sites[Last] - Sites[First] < MaxMirrorSpan && Sites[Last] - Sites[Last - 1] < (1u << 24))
      ++Last;
    patchGroup(First, Last, Flags);
    First = Last;
  }
  // A pun whose next site found no slot (in a group of its own) would jump through an int3.
  for (size_t I = 0; I + 1 < N; ++I)
    if (Kinds[I] == Punned && Kinds[I + 1] != Patched) {
      Kinds[I] = Plain;
      PunKill[I + 1] = 0;
    }
  CtosTrapState &S = ctos_trap_state;
  S.Sites = Sites.data();
  S.Restore = RestoreCode.data();
  S.Follows = Follows.data();
  S.Restored = Restored.data();
  S.RestoredCap = Restored.size();
  S.PunKill = PunKill.data();
  S.NRestored = 0;
  S.NSites = N;
  for (size_t I = 0; I < N; ++I)
    arm(I);
  if (Huge)
    dataInHugePages();
  return "";
}

// In a child, after the fork: record into `Record` (sized for every site) while `*Phase`
// is `Optimizing` and `*Gate` is open.
inline void enterChild(uint8_t *Record, const volatile uint8_t *Phase, uint8_t Optimizing, const volatile int *Gate) {
  CtosTrapState &S = ctos_trap_state;
  S.Record = Record;
  S.Phase = Phase;
  S.Optimizing = Optimizing;
  S.Gate = Gate;
  S.InChild = 1;
}

inline size_t patched() { return size_t(Kinds.size() - std::count(Kinds.begin(), Kinds.end(), uint8_t(Plain))); }

} // namespace ctos_traps
