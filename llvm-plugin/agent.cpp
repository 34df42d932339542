// ctos's agent inside an external `opt`: a fork server, so that any LLVM build (trunk,
// assertions on) gets the in-process engine's speed and isolation.
//
//   opt -load-pass-plugin=ctos-agent.so -passes=ctos-agent -disable-output prog.ll
//
// with CTOS_AGENT_FD naming a SOCK_SEQPACKET socket to ctos. `opt` parses the program
// once; the agent's pass then never returns: for each request it forks a child that runs
// one pipeline on its copy of the module with this LLVM's PassBuilder (the code the
// in-process engine runs, src/llvm/pipeline.h), verifies, hashes, and executes `main` when
// asked. The child reports over the pipe ctos passed with the request, in ctos's wire
// format (src/sandbox/wire.rs); ctos classifies the end exactly as for its own children.
//
// Requests (one datagram each; fields NUL-separated):
//   'R' verify, emit-ir, exec, memory-bytes, focus-pass, focus-element, empty,
//       worker-copy-max, run-limit, heap, skip-hash, track-poison, pipeline, args…
//       with four descriptors: message pipe, command pipe, stdout, stderr → 'P' pid
//       and a fifth, the coverage record, when the child should record coverage
//       With worker-copy-max above zero, and the program's bitcode no larger, the child is
//       a worker: after a job that did not end it, it sends JOB_END and reads its next job
//       from the command pipe ('j', a u32 length, then the same fields).
//   'W' pid → 'S' pid status (waitpid's)
//   'C' with one descriptor: a file of sorted u64 code addresses to arm with one-shot
//       breakpoints (none: disarm) → 'A' count, or 'E' why not
// At start the agent sends 'H' with its LLVM version and the objects it has loaded (load
// bias and path, for symbolizing crash stacks).

#include "../src/coverage/traps.h"
#include "../src/llvm/pipeline.h"

#if __has_include("llvm/Plugins/PassPlugin.h")
#include "llvm/Plugins/PassPlugin.h"
#else
#include "llvm/Passes/PassPlugin.h"
#endif
#include "llvm-c/Core.h"
#include "llvm-c/ExecutionEngine.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/ExecutionEngine.h"
#include "llvm/ExecutionEngine/MCJIT.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CBindingWrapping.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/xxhash.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <new>
#include <string>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>
#include <vector>

// src/llvm/poison_checks.cpp, built into the agent beside this file.
extern "C" unsigned ctos_track_poison(LLVMModuleRef);

namespace {

// Mirrors src/sandbox/wire.rs (a unit test in src/sandbox/agent/mod.rs checks that they agree).
enum Tag : uint8_t {
  TAG_PHASE = 1,
  TAG_OPT_DONE = 2,
  TAG_PIPELINE_ERROR = 3,
  TAG_FATAL = 4,
  TAG_CRASH = 5,
  TAG_EXEC_DONE = 6,
  TAG_OOM = 7,
  TAG_INVALID_IR = 8,
  TAG_EXEC_ERROR = 9,
  TAG_ELEMENT = 10,
  TAG_FOCUS = 11,
  TAG_ARGS_REJECTED = 12,
  TAG_JOB_END = 13,
  TAG_PASS_RUNS = 15,
  TAG_PASS_RUN = 16,
};
const uint8_t LAST_JOB = 1;
enum Phase : uint8_t { PHASE_OPTIMIZING = 1, PHASE_VERIFYING = 2, PHASE_OPTIMIZED = 3, PHASE_CODEGEN = 4, PHASE_EXECUTING = 5 };
enum Exec { EXEC_NEVER = 0, EXEC_ALWAYS = 1, EXEC_ASK = 2 };

int MsgFd = -1;
int Gate = 1;
// The child's phase, for the coverage recorder (src/coverage/traps.h).
volatile uint8_t PhaseNow = 0;

void writeAll(int Fd, const void *Data, size_t Len) {
  const char *P = static_cast<const char *>(Data);
  while (Len > 0) {
    ssize_t N = ::write(Fd, P, Len);
    if (N < 0) {
      if (errno == EINTR)
        continue;
      return;
    }
    P += N;
    Len -= size_t(N);
  }
}

// Async-signal-safe: no allocation.
void sendMsg(uint8_t Tag, const void *Payload, uint32_t Len) {
  unsigned char Header[5] = {Tag, uint8_t(Len), uint8_t(Len >> 8), uint8_t(Len >> 16), uint8_t(Len >> 24)};
  writeAll(MsgFd, Header, 5);
  writeAll(MsgFd, Payload, Len);
}

void sendMsg(uint8_t Tag, StringRef Text) { sendMsg(Tag, Text.data(), uint32_t(Text.size())); }

void setPhase(Phase P) {
  PhaseNow = P;
  uint8_t B = P;
  sendMsg(TAG_PHASE, &B, 1);
}

void onElement(int Index) {
  uint32_t V = uint32_t(Index);
  unsigned char B[4] = {uint8_t(V), uint8_t(V >> 8), uint8_t(V >> 16), uint8_t(V >> 24)};
  sendMsg(TAG_ELEMENT, B, 4);
}

void onFocusOpened(const char *Name, size_t Len) { sendMsg(TAG_FOCUS, Name, uint32_t(Len)); }

void putU32(std::string &Out, uint32_t V) {
  for (int I = 0; I < 4; ++I)
    Out.push_back(char(uint8_t(V >> (8 * I))));
}

void onPassRuns(int Count) {
  std::string B;
  putU32(B, uint32_t(Count));
  sendMsg(TAG_PASS_RUNS, B);
}

void onPassRun(int Index, int Element, const char *Name, size_t Len) {
  std::string B;
  putU32(B, uint32_t(Index));
  putU32(B, uint32_t(Element));
  B.append(Name, Len);
  sendMsg(TAG_PASS_RUN, B);
}

void onFatal(void *, const char *Reason, bool) {
  sendMsg(TAG_FATAL, Reason ? StringRef(Reason) : StringRef("(no message)"));
  _exit(77);
}

void onOutOfMemory() {
  sendMsg(TAG_OOM, "", 0);
  _exit(78);
}

void putU64(unsigned char *At, uint64_t V) {
  for (int I = 0; I < 8; ++I)
    At[I] = uint8_t(V >> (8 * I));
}

// The faulting PC, then return addresses: what src/sandbox/wire.rs decode_crash reads.
void onCrash(int Signal, siginfo_t *Info, void *Context) {
  void *Frames[64];
  int N = backtrace(Frames, 64);
  uint64_t PC = uint64_t(static_cast<ucontext_t *>(Context)->uc_mcontext.gregs[REG_RIP]);
  int Start = 0;
  for (int I = 0; I < N; ++I)
    if (uint64_t(Frames[I]) == PC) {
      Start = I;
      break;
    }
  // Asked where it hangs while in the coverage stubs, which have no unwind tables: ctos
  // asks again (the handler stays installed for it).
  if (Signal == SIGXCPU && Start == N - 1 && uint64_t(Frames[Start]) == PC)
    return;
  unsigned char Buf[12 + 65 * 8];
  for (int I = 0; I < 4; ++I)
    Buf[I] = uint8_t(uint32_t(Signal) >> (8 * I));
  putU64(Buf + 4, uint64_t(Info->si_addr));
  putU64(Buf + 12, PC);
  size_t Used = 20;
  for (int I = Start; I < N && Used + 8 <= sizeof(Buf); ++I)
    if (uint64_t(Frames[I]) != PC || I != Start) {
      putU64(Buf + Used, uint64_t(Frames[I]));
      Used += 8;
    }
  sendMsg(TAG_CRASH, Buf, uint32_t(Used));
  // ctos asked where a hanging optimizer is (src/sandbox/pool.rs), and ends the child.
  if (Signal == SIGXCPU)
    _exit(128 + Signal);
  // SA_RESETHAND restored the default action; unblock and re-raise so that ctos sees the
  // signal itself.
  sigset_t Set;
  sigemptyset(&Set);
  sigaddset(&Set, Signal);
  sigprocmask(SIG_UNBLOCK, &Set, nullptr);
  raise(Signal);
  _exit(128 + Signal);
}

// `exit` as the JIT-compiled program sees it: report the code without running opt's
// atexit handlers and destructors in this child.
void programExit(int Code) {
  fflush(nullptr);
  sendMsg(TAG_EXEC_DONE, &Code, 4);
  _exit(0);
}

void installCrashHandlers() {
  const size_t StackSize = 256 * 1024;
  void *Stack = mmap(nullptr, StackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (Stack != MAP_FAILED) {
    stack_t SS = {};
    SS.ss_sp = Stack;
    SS.ss_size = StackSize;
    sigaltstack(&SS, nullptr);
  }
  struct sigaction Action = {};
  Action.sa_sigaction = onCrash;
  Action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&Action.sa_mask);
  for (int S : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS})
    sigaction(S, &Action, nullptr);
  Action.sa_flags &= ~SA_RESETHAND;
  sigaction(SIGXCPU, &Action, nullptr);
  // backtrace() loads the unwinder on first use; not inside a signal handler.
  void *Warm[1];
  backtrace(Warm, 1);
}

// Coverage: src/coverage/traps.h, armed in this fork server as the in-process engine arms
// it. A child records into the shared file ctos passed with its request
// (`[count: u64][site: u32; count]`, surviving a crash) while the optimizer runs and the
// gate is open.
namespace traps {

// Arm the sorted addresses in file `Fd` (the top byte of each: its flags, CTOS_MAY_PATCH and
// CTOS_FOLLOWS); returns why not, or "".
std::string arm(int Fd) {
  struct stat St;
  if (fstat(Fd, &St) != 0 || St.st_size % 8 != 0)
    return "the site file is not a list of addresses";
  std::vector<uint64_t> Addrs(size_t(St.st_size) / 8);
  size_t Done = 0, Bytes = Addrs.size() * 8;
  while (Done < Bytes) {
    ssize_t N = pread(Fd, reinterpret_cast<char *>(Addrs.data()) + Done, Bytes - Done, off_t(Done));
    if (N <= 0)
      return "cannot read the site file";
    Done += size_t(N);
  }
  std::vector<uint8_t> Flags(Addrs.size());
  for (size_t I = 0; I < Addrs.size(); ++I) {
    Flags[I] = uint8_t(Addrs[I] >> 56);
    Addrs[I] &= (uint64_t(1) << 56) - 1;
  }
  return ctos_traps::arm(Addrs.data(), Flags.data(), Addrs.size());
}

// In a child: record into the shared file `Fd`, sized for every site.
void recordTo(int Fd) {
  size_t Bytes = 8 + 4 * ctos_traps::Sites.size();
  struct stat St;
  if (ctos_traps::Sites.empty() || fstat(Fd, &St) != 0 || size_t(St.st_size) < Bytes)
    return;
  void *P = mmap(nullptr, Bytes, PROT_READ | PROT_WRITE, MAP_SHARED, Fd, 0);
  if (P != MAP_FAILED)
    ctos_traps::enterChild(static_cast<uint8_t *>(P), &PhaseNow, PHASE_OPTIMIZING, &Gate);
}
} // namespace traps

struct Request {
  int Verify = 1;
  bool EmitIr = false;
  int Exec = EXEC_NEVER;
  uint64_t MemoryBytes = 0;
  std::string Focus;
  int FocusElement = -1;
  // Runs of passes counted (0) or limited (N > 0), as CtosPassWatch's run_limit; -1: not.
  int RunLimit = -1;
  // Check the pipeline and flags on an empty module, not the program.
  bool Empty = false;
  // Run further jobs after this one, each on a fresh copy of the program, if its bitcode
  // is at most this many bytes (0: not a worker).
  uint64_t WorkerCopyMax = 0;
  // The heap the passes run on (pipeline.h's HeapPolicy).
  int Heap = HeapPlain;
  // Only how the optimizer ends matters: no IR printed and hashed.
  bool SkipHash = false;
  // Track poison through the program's run when its driver is one ctos generated.
  bool TrackPoison = false;
  std::string Pipeline;
  std::vector<std::string> Args;
  int Msg = -1, Cmd = -1, Out = -1, Err = -1, Record = -1;
};

std::vector<std::string> splitFields(const char *Data, size_t Len) {
  std::vector<std::string> Fields;
  size_t Begin = 0;
  for (size_t I = 0; I <= Len; ++I)
    if (I == Len || Data[I] == '\0') {
      Fields.emplace_back(Data + Begin, I - Begin);
      Begin = I + 1;
    }
  return Fields;
}

// A job's fields, as ctos sends them (src/sandbox/agent/mod.rs job_fields); false if
// there are too few.
bool parseJob(const char *Data, size_t Len, Request &R) {
  auto F = splitFields(Data, Len);
  if (F.size() < 13)
    return false;
  R.Verify = atoi(F[0].c_str());
  R.EmitIr = F[1] == "1";
  R.Exec = atoi(F[2].c_str());
  R.MemoryBytes = strtoull(F[3].c_str(), nullptr, 10);
  R.Focus = F[4];
  R.FocusElement = atoi(F[5].c_str());
  R.Empty = F[6] == "1";
  R.WorkerCopyMax = strtoull(F[7].c_str(), nullptr, 10);
  R.RunLimit = atoi(F[8].c_str());
  R.Heap = atoi(F[9].c_str());
  R.SkipHash = F[10] == "1";
  R.TrackPoison = F[11] == "1";
  R.Pipeline = F[12];
  R.Args.assign(F.begin() + 13, F.end());
  return true;
}

bool readExact(int Fd, void *Data, size_t Len) {
  char *P = static_cast<char *>(Data);
  while (Len > 0) {
    ssize_t N = ::read(Fd, P, Len);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return false;
    P += N;
    Len -= size_t(N);
  }
  return true;
}

// A worker's next job from ctos ('j', length, fields); false: there is none.
bool nextJob(int Cmd, Request &R) {
  unsigned char Head[5];
  if (!readExact(Cmd, Head, 5) || Head[0] != 'j')
    return false;
  uint32_t Len = uint32_t(Head[1]) | uint32_t(Head[2]) << 8 | uint32_t(Head[3]) << 16 | uint32_t(Head[4]) << 24;
  std::string Fields(Len, '\0');
  if (!readExact(Cmd, Fields.data(), Len))
    return false;
  return parseJob(Fields.data(), Len, R);
}

// Bitcode with use-list order: a copy parsed from it walks users as the program does.
std::string bitcodeOf(const Module &Mod) {
  std::string Bytes;
  raw_string_ostream OS(Bytes);
  WriteBitcodeToFile(Mod, OS, /*ShouldPreserveUseListOrder=*/true);
  return OS.str();
}

// The address space, as RLIMIT_AS counts it.
uint64_t addressSpaceBytes() {
  FILE *F = fopen("/proc/self/statm", "r");
  unsigned long long Pages = 0;
  if (F) {
    if (fscanf(F, "%llu", &Pages) != 1)
      Pages = 0;
    fclose(F);
  }
  return Pages * uint64_t(sysconf(_SC_PAGESIZE));
}

double millisSince(std::chrono::steady_clock::time_point T) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - T).count();
}

struct Agent {
  Module &M;
  TargetMachine *Machine = nullptr;
  std::unique_ptr<Module> Driver;
  int Control;
  // The program before any job, for workers' fresh copies (made before the first worker).
  std::string Snapshot;

  // What the in-process engine does on load (src/llvm/module.rs configure_target): the
  // host triple when the module names none, the target's data layout when it has none.
  std::string configureTarget() {
#if LLVM_VERSION_MAJOR >= 21
    if (M.getTargetTriple().str().empty())
      M.setTargetTriple(Triple(sys::getDefaultTargetTriple()));
    Triple TT = M.getTargetTriple();
    std::string Error;
    const Target *T = TargetRegistry::lookupTarget(TT, Error);
#else
    if (M.getTargetTriple().empty())
      M.setTargetTriple(sys::getDefaultTargetTriple());
    Triple TT(M.getTargetTriple());
    std::string Error;
    const Target *T = TargetRegistry::lookupTarget(TT.str(), Error);
#endif
    if (!T)
      return "no LLVM target for triple '" + TT.str() + "': " + Error;
    const char *CpuEnv = getenv("CTOS_AGENT_CPU");
    const char *FeaturesEnv = getenv("CTOS_AGENT_FEATURES");
    std::string Cpu = CpuEnv ? CpuEnv : "";
    std::string Features = FeaturesEnv ? FeaturesEnv : "";
    if (Cpu == "native") {
      Cpu = sys::getHostCPUName().str();
      if (Features.empty()) {
        SubtargetFeatures F;
        for (auto &Entry : sys::getHostCPUFeatures())
          F.AddFeature(Entry.first(), Entry.second);
        Features = F.getString();
      }
    }
#if LLVM_VERSION_MAJOR >= 21
    Machine = T->createTargetMachine(TT, Cpu, Features, TargetOptions(), std::nullopt);
#else
    Machine = T->createTargetMachine(TT.str(), Cpu, Features, TargetOptions(), std::nullopt);
#endif
    if (!Machine)
      return "cannot create a target machine for '" + TT.str() + "' cpu '" + Cpu + "'";
    if (M.getDataLayout().isDefault())
      M.setDataLayout(Machine->createDataLayout());
    ctosSetFunctionAttributes(M, Cpu, Features);
    ctosBuildSubtargets(M, Machine);
    return "";
  }

  std::string loadDriver() {
    const char *Path = getenv("CTOS_AGENT_DRIVER");
    if (!Path || !*Path)
      return "";
    SMDiagnostic Diag;
    Driver = parseIRFile(Path, Diag, M.getContext());
    if (!Driver) {
      std::string Text;
      raw_string_ostream OS(Text);
      Diag.print("driver", OS);
      return OS.str();
    }
    return "";
  }

  void reply(const std::string &Payload) { ::send(Control, Payload.data(), Payload.size(), MSG_NOSIGNAL); }

  void hello(const std::string &Problem) {
    std::string Text = std::string(LLVM_VERSION_STRING) + "\n" + Problem + "\n";
    dl_iterate_phdr(
        [](dl_phdr_info *Info, size_t, void *Out) {
          std::string &T = *static_cast<std::string *>(Out);
          std::string Path = Info->dlpi_name ? Info->dlpi_name : "";
          if (Path.empty()) {
            char Buf[4096];
            ssize_t N = readlink("/proc/self/exe", Buf, sizeof(Buf));
            Path = N > 0 ? std::string(Buf, size_t(N)) : "";
          }
          T += std::to_string(uint64_t(Info->dlpi_addr)) + " " + Path + "\n";
          return 0;
        },
        &Text);
    reply("H" + Text);
  }

  [[noreturn]] void serve() {
    std::vector<char> Buf(1 << 20);
    while (true) {
      union {
        cmsghdr Align;
        char Space[CMSG_SPACE(5 * sizeof(int))];
      } Control_;
      iovec IO = {Buf.data(), Buf.size()};
      msghdr Msg = {};
      Msg.msg_iov = &IO;
      Msg.msg_iovlen = 1;
      Msg.msg_control = Control_.Space;
      Msg.msg_controllen = sizeof(Control_.Space);
      ssize_t N = recvmsg(Control, &Msg, MSG_CMSG_CLOEXEC);
      if (N < 0 && errno == EINTR)
        continue;
      if (N <= 0)
        _exit(0); // ctos is gone; children die with us (PR_SET_PDEATHSIG)
      std::vector<int> Fds;
      for (cmsghdr *C = CMSG_FIRSTHDR(&Msg); C; C = CMSG_NXTHDR(&Msg, C))
        if (C->cmsg_level == SOL_SOCKET && C->cmsg_type == SCM_RIGHTS)
          for (size_t I = 0; I < (C->cmsg_len - CMSG_LEN(0)) / sizeof(int); ++I)
            Fds.push_back(reinterpret_cast<int *>(CMSG_DATA(C))[I]);
      char Kind = Buf[0];
      if (Kind == 'W' && N >= 5) {
        int Pid, Status = 0;
        memcpy(&Pid, &Buf[1], 4);
        while (waitpid(Pid, &Status, 0) < 0 && errno == EINTR) {
        }
        char Out[9] = {'S'};
        memcpy(Out + 1, &Pid, 4);
        memcpy(Out + 5, &Status, 4);
        reply(std::string(Out, 9));
      } else if (Kind == 'C' && Fds.size() == 1) {
        std::string Why = traps::arm(Fds[0]);
        close(Fds[0]);
        reply(Why.empty() ? "A" + std::to_string(ctos_traps::Sites.size()) : "E" + Why);
      } else if (Request R; Kind == 'R' && (Fds.size() == 4 || Fds.size() == 5) && parseJob(&Buf[1], size_t(N - 1), R)) {
        R.Msg = Fds[0], R.Cmd = Fds[1], R.Out = Fds[2], R.Err = Fds[3];
        if (Fds.size() == 5)
          R.Record = Fds[4];
        if (R.WorkerCopyMax && Snapshot.empty())
          Snapshot = bitcodeOf(M);
        if (Snapshot.size() > R.WorkerCopyMax)
          R.WorkerCopyMax = 0;
        ctos_traps::rearm();
        pid_t Pid = fork();
        if (Pid == 0)
          child(R);
        for (int Fd : Fds)
          close(Fd);
        char Out[5] = {'P'};
        memcpy(Out + 1, &Pid, 4);
        reply(std::string(Out, 5));
      } else {
        for (int Fd : Fds)
          close(Fd);
        reply("E" + std::string("malformed request"));
      }
    }
  }

  [[noreturn]] void child(const Request &R) {
    close(Control);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (R.Record >= 0)
      traps::recordTo(R.Record);
    if (R.MemoryBytes) {
      rlimit Limit = {R.MemoryBytes, R.MemoryBytes};
      setrlimit(RLIMIT_AS, &Limit);
    }
    MsgFd = R.Msg;
    int Null = open("/dev/null", O_RDONLY);
    dup2(Null, 0);
    dup2(R.Out, 1);
    dup2(R.Err, 2);
    setvbuf(stdout, nullptr, _IOLBF, 0);
    installCrashHandlers();
    std::set_new_handler(onOutOfMemory);
    remove_fatal_error_handler();
    install_fatal_error_handler(onFatal, nullptr);
    if (!R.Args.empty()) {
      std::vector<const char *> Argv = {"opt"};
      for (const auto &A : R.Args)
        Argv.push_back(A.c_str());
      if (!cl::ParseCommandLineOptions(int(Argv.size()), Argv.data(), "", &errs())) {
        sendMsg(TAG_ARGS_REJECTED, "", 0);
        _exit(77);
      }
      // The agent built its subtargets without these options, and LLVM reads some of
      // them as it builds one: a machine of this run's own.
      configureTarget();
    }

    if (!R.WorkerCopyMax) {
      runJob(M, R);
      _exit(0);
    }
    // As a worker in ctos's own process does (src/sandbox/child.rs): every job after the
    // first on a fresh copy in a context of its own, ended when the heap has grown.
    uint64_t StartSize = addressSpaceBytes();
    std::unique_ptr<LLVMContext> CopyContext;
    std::unique_ptr<Module> Copy;
    Module *Target = &M;
    // Its later jobs carry no options: those of the first stay set, and ctos gives a worker
    // no job with options of its own.
    Request Job = R;
    while (true) {
      runJob(*Target, Job);
      uint64_t Size = addressSpaceBytes();
      if (R.MemoryBytes && Size > StartSize && Size - StartSize > R.MemoryBytes / 16) {
        sendMsg(TAG_JOB_END, &LAST_JOB, 1);
        _exit(0);
      }
      sendMsg(TAG_JOB_END, "", 0);
      if (!nextJob(R.Cmd, Job))
        _exit(0);
      for (int Fd : {1, 2}) {
        ftruncate(Fd, 0);
        lseek(Fd, 0, SEEK_SET);
      }
      Gate = 1;
      Copy.reset();
      CopyContext = std::make_unique<LLVMContext>();
      CopyContext->setDiscardValueNames(M.getContext().shouldDiscardValueNames());
      auto Parsed = parseBitcodeFile(MemoryBufferRef(Snapshot, M.getModuleIdentifier()), *CopyContext);
      if (!Parsed) {
        sendMsg(TAG_FATAL, "cannot copy the module for the next job: " + toString(Parsed.takeError()));
        _exit(77);
      }
      Copy = std::move(*Parsed);
      Copy->setModuleIdentifier(M.getModuleIdentifier());
      Target = Copy.get();
    }
  }

  // Optimize, verify, hash and maybe execute `Mod`. Returns when the job ended and the
  // process need not: the pipeline text was rejected, the IR is broken, or the module was
  // optimized and not executed.
  void runJob(Module &Mod, const Request &R) {
    if (R.Empty)
      empty(Mod);
    setPhase(PHASE_OPTIMIZING);
    auto T = std::chrono::steady_clock::now();
    if (!R.Pipeline.empty()) {
      CtosPassWatch Watch = {onElement,  onFocusOpened, R.Focus.empty() ? nullptr : R.Focus.c_str(),
                             R.FocusElement, &Gate, R.RunLimit, onPassRuns, onPassRun};
      if (!R.Focus.empty())
        Gate = 0;
      if (auto Err = ctosRunPasses(Mod, R.Pipeline, Machine, R.Verify, R.Heap, &Watch)) {
        sendMsg(TAG_PIPELINE_ERROR, toString(std::move(Err)));
        return;
      }
    }
    double PassMillis = millisSince(T);
    setPhase(PHASE_VERIFYING);
    T = std::chrono::steady_clock::now();
    {
      std::string Text;
      raw_string_ostream OS(Text);
      if (verifyModule(Mod, &OS)) {
        sendMsg(TAG_INVALID_IR, OS.str());
        return;
      }
    }
    double VerifyMillis = millisSince(T);
    T = std::chrono::steady_clock::now();
    std::string Ir = R.SkipHash ? std::string() : ctosPrintModule(Mod);
    uint64_t Hash = R.SkipHash ? 0 : xxh3_64bits(StringRef(Ir));
    uint64_t Instructions = 0;
    for (const Function &Fn : Mod)
      Instructions += Fn.getInstructionCount();
    json::Object Done{{"ir_hash", Hash},
                      {"instructions", Instructions},
                      {"ir", R.EmitIr ? json::Value(json::fixUTF8(Ir)) : json::Value(nullptr)},
                      {"pass_millis", PassMillis},
                      {"verify_millis", VerifyMillis},
                      {"hash_millis", millisSince(T)}};
    std::string DoneText;
    raw_string_ostream DoneOS(DoneText);
    DoneOS << json::Value(std::move(Done));
    sendMsg(TAG_OPT_DONE, DoneOS.str());

    bool Execute = R.Exec == EXEC_ALWAYS;
    if (R.Exec == EXEC_ASK) {
      setPhase(PHASE_OPTIMIZED);
      char B = 'q';
      while (::read(R.Cmd, &B, 1) < 0 && errno == EINTR) {
      }
      Execute = B == 'x';
    }
    if (!Execute)
      return;
    setPhase(PHASE_CODEGEN);
    sys::DynamicLibrary::AddSymbol("exit", reinterpret_cast<void *>(programExit));
    // ctos gives workers no job that executes: the driver is in the program's context.
    std::string Error = &Mod == &M ? execute(R.TrackPoison) : "a worker of the agent does not execute programs";
    sendMsg(TAG_EXEC_ERROR, Error);
    _exit(0);
  }

  // Everything out of the module (the child's copy), as if it were an empty file.
  static void empty(Module &Mod) {
    Mod.dropAllReferences();
    while (!Mod.empty())
      Mod.begin()->eraseFromParent();
    while (!Mod.global_empty())
      Mod.global_begin()->eraseFromParent();
    while (!Mod.alias_empty())
      Mod.alias_begin()->eraseFromParent();
    while (!Mod.ifunc_empty())
      Mod.ifunc_begin()->eraseFromParent();
    while (!Mod.named_metadata_empty())
      Mod.eraseNamedMetadata(&*Mod.named_metadata_begin());
  }

  // Returns only with the reason it could not run `main`.
  std::string execute(bool TrackPoison) {
    // As src/sandbox/child.rs: the program's own functions, not the driver's, and not
    // when they carry the unoptimized run's checks already; a driver of an earlier ctos,
    // whose runtime hands results over in one value for all lanes, runs untracked.
    Function *Runtime = Driver ? Driver->getFunction("__ctos.poison") : nullptr;
    if (TrackPoison && Runtime && !Runtime->isDeclaration() && Driver->getNamedGlobal("__ctos.ret_lanes") &&
        !M.getFunction("__ctos.ub") &&
        !M.getFunction("__ctos.poison")) {
      ctos_track_poison(wrap(&M));
      if (verifyModule(M, &errs()))
        return "the poison tracking broke the module";
    }
    if (Driver && Linker::linkModules(M, std::move(Driver)))
      return "cannot link the driver";
    Function *Main = M.getFunction("main");
    if (!Main || Main->isDeclaration())
      return "the program has no main function";
    std::string Error;
    // The module belongs to opt, which never frees it once this child `_exit`s.
    std::unique_ptr<Module> Owned(&M);
    std::unique_ptr<ExecutionEngine> Engine(EngineBuilder(std::move(Owned))
                                                .setEngineKind(EngineKind::JIT)
                                                .setErrorStr(&Error)
                                                .setOptLevel(CodeGenOptLevel::None)
                                                .create());
    if (!Engine)
      return Error;
    // Asking for an address makes MCJIT generate code for the whole module now.
    if (!Engine->getFunctionAddress("main"))
      return "code generation failed";
    setPhase(PHASE_EXECUTING);
    Engine->runStaticConstructorsDestructors(false);
    programExit(Engine->runFunctionAsMain(Main, {}, nullptr));
    return "";
  }
};

struct AgentPass : PassInfoMixin<AgentPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    const char *Fd = getenv("CTOS_AGENT_FD");
    if (!Fd) {
      errs() << "ctos-agent: this pass is ctos's fork server; run it through `ctos … --opt PATH`\n";
      exit(2);
    }
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
    LLVMLinkInMCJIT();
    // As the in-process engine names modules: passes that write files (dot-callgraph) name
    // them after the module, and a bare name keeps them in the scratch folder.
    M.setModuleIdentifier(sys::path::filename(M.getModuleIdentifier()).str());
    Agent A{M};
    A.Control = atoi(Fd);
    std::string Problem = A.configureTarget();
    if (Problem.empty())
      Problem = A.loadDriver();
    A.hello(Problem);
    if (!Problem.empty())
      exit(2);
    A.serve();
  }
  static bool isRequired() { return true; }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "ctos-agent", LLVM_VERSION_STRING, [](PassBuilder &PB) {
            PB.registerPipelineParsingCallback(
                [](StringRef Name, ModulePassManager &MPM, ArrayRef<PassBuilder::PipelineElement>) {
                  if (Name != "ctos-agent")
                    return false;
                  MPM.addPass(AgentPass());
                  return true;
                });
          }};
}
