//! An owned LLVM module (with its context and an optional driver module), and everything
//! the engine does to it: target set-up, pipelines, verification, printing, hashing,
//! linking and JIT execution of `main`.

use std::mem::ManuallyDrop;
use std::path::Path;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Module;
use inkwell::targets::{CodeModel, RelocMode, Target, TargetMachine, TargetTriple};
use inkwell::OptimizationLevel;
use serde::{Deserialize, Serialize};

use super::frontend::CFrontend;

/// When the verifier runs during a pipeline (it always runs once after it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
#[repr(i32)]
pub enum VerifyEach {
    /// Only after the whole pipeline.
    #[default]
    Off = 0,
    /// After every pass that reports a change: what verify-each can detect, without
    /// re-verifying IR a pass left alone (most of verify-each's cost on long sequences).
    Changed = 1,
    /// After every pass, as `opt -verify-each`.
    Every = 2,
    /// `Changed` with no verification deferred to an adaptor's end: how the sandbox reruns
    /// a `Changed` job whose deferred verification failed, to name the pass exactly.
    #[value(skip)]
    ChangedEachUnit = 3,
}

/// The heap a pipeline runs on (pipeline.h; src/sandbox/heap.rs says when each is used).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[repr(i32)]
pub enum Heap {
    /// glibc's, as plain `opt` has it.
    #[default]
    Plain = 0,
    /// Freed and fresh blocks and the stack below the passes filled with poison, and a
    /// value destroyed while still used stopped as an assertions build stops it.
    Strict = 1,
}

/// An analysis ctos checks against the IR after each pass that changed the IR and kept it
/// (`-ctos-check-preserved`, in pipeline.h): what an assertions build checks under
/// -verify-scev, -verify-dom-info and -verify-loop-info, in release builds too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum CheckedAnalysis {
    /// ScalarEvolution's own verification (trip counts and its caches, against a fresh one).
    Scev,
    /// The dominator tree, against one computed afresh.
    Domtree,
    /// LoopInfo: every block's loop depth and the loop headers, against a fresh LoopInfo.
    Loops,
}

impl CheckedAnalysis {
    /// The LLVM option that turns `checks` on (none for none).
    pub fn llvm_flag(checks: &[CheckedAnalysis]) -> Option<String> {
        let names: Vec<&str> = checks
            .iter()
            .map(|c| match c {
                CheckedAnalysis::Scev => "scev",
                CheckedAnalysis::Domtree => "domtree",
                CheckedAnalysis::Loops => "loops",
            })
            .collect();
        (!names.is_empty()).then(|| format!("-ctos-check-preserved={}", names.join(",")))
    }
}

extern "C" {
    // src/llvm/shim.cpp
    fn ctos_run_passes(
        module: inkwell::llvm_sys::prelude::LLVMModuleRef,
        passes: *const std::ffi::c_char,
        machine: inkwell::llvm_sys::target_machine::LLVMTargetMachineRef,
        verify: i32,
        heap: i32,
        watch: *const RawPassWatch,
        failed: *mut *mut std::ffi::c_char,
    ) -> inkwell::llvm_sys::error::LLVMErrorRef;
    fn ctos_build_subtargets(
        module: inkwell::llvm_sys::prelude::LLVMModuleRef,
        machine: inkwell::llvm_sys::target_machine::LLVMTargetMachineRef,
    );
    fn ctos_ir_hash(module: inkwell::llvm_sys::prelude::LLVMModuleRef) -> u64;
    fn ctos_set_function_attributes(
        module: inkwell::llvm_sys::prelude::LLVMModuleRef,
        cpu: *const std::ffi::c_char,
        features: *const std::ffi::c_char,
    );
    fn ctos_bitcode_with_use_lists(
        module: inkwell::llvm_sys::prelude::LLVMModuleRef,
    ) -> inkwell::llvm_sys::prelude::LLVMMemoryBufferRef;
}

/// `CtosPassWatch` of src/llvm/shim.cpp.
#[repr(C)]
struct RawPassWatch {
    top_level: Option<extern "C" fn(i32)>,
    focus_opened: Option<extern "C" fn(*const std::ffi::c_char, usize)>,
    focus: *const std::ffi::c_char,
    focus_element: i32,
    gate: *mut i32,
    run_limit: i32,
    pass_runs: Option<extern "C" fn(i32)>,
    pass_run: Option<extern "C" fn(i32, i32, *const std::ffi::c_char, usize)>,
}

/// What to watch while a pipeline runs. The callbacks run inside LLVM's pass manager
/// (they must not unwind).
pub struct PassWatch<'a> {
    /// Called with the index of each top-level element of the pipeline as it starts.
    pub top_level: Option<extern "C" fn(i32)>,
    /// Called once with LLVM's class name of the focus pass when `gate` first opens.
    pub focus_opened: Option<extern "C" fn(*const std::ffi::c_char, usize)>,
    /// The pass (pipeline name, without parameters) whose runs open `gate`, and the
    /// top-level element it must run in (None: any).
    pub focus: Option<(&'a str, Option<usize>)>,
    /// Set to 1 while a run of the focus pass is on the stack, 0 otherwise; left alone
    /// without a focus.
    pub gate: &'a std::sync::atomic::AtomicI32,
    /// Count the runs of passes that may be skipped, as `-opt-bisect-limit` counts them:
    /// see [`PassRuns`].
    pub runs: Option<PassRuns>,
}

/// Counting pass runs (pipeline.h's CtosPassWatch).
#[derive(Debug, Clone, Copy)]
pub struct PassRuns {
    /// 0: run them all; N > 0: skip every run after the Nth, and call `nth` as it starts.
    /// `count` gets the number of runs counted, skipped ones too, at the end.
    pub limit: u32,
    pub count: extern "C" fn(i32),
    /// The Nth run: its number, its top-level element, its pipeline name.
    pub nth: extern "C" fn(i32, i32, *const std::ffi::c_char, usize),
}

/// Which target to optimize for. Defaults match `opt`: the module's triple (the host's
/// when it names none) and a generic CPU, so `opt-22` reproduces what we report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetSpec {
    /// Overrides the module's triple, like `opt -mtriple`.
    pub triple: Option<String>,
    /// Like `opt -mcpu`; empty means generic, `native` means this host.
    pub cpu: String,
    /// Like `opt -mattr`.
    pub features: String,
}

impl TargetSpec {
    /// Split `opt`-style LLVM flags into the target flags (`-mtriple=`, `-mcpu=`, `-mattr=`,
    /// which `opt` handles itself) and the rest, which are cl::opts of the library.
    pub fn split_flags(args: &[String]) -> (TargetSpec, Vec<String>) {
        let mut target = TargetSpec::default();
        let mut rest = Vec::new();
        for arg in args {
            let bare = arg.trim_start_matches('-');
            if let Some(v) = bare.strip_prefix("mtriple=") {
                target.triple = Some(v.to_string());
            } else if let Some(v) = bare.strip_prefix("mcpu=") {
                target.cpu = v.to_string();
            } else if let Some(v) = bare.strip_prefix("mattr=") {
                target.features = features_as_opt_writes_them(v);
            } else {
                rest.push(arg.clone());
            }
        }
        (target, rest)
    }
}

/// `-mattr=` as opt turns it into a function's `target-features` (LLVM's
/// `SubtargetFeatures::AddFeature`): a feature without a sign is enabled and lowercased
/// (`AVX2` → `+avx2`). The verifier refuses one without a sign, which opt never writes.
fn features_as_opt_writes_them(mattr: &str) -> String {
    let features = mattr.split(',').filter(|f| !f.is_empty()).map(|f| match f.starts_with(['+', '-']) {
        true => f.to_string(),
        false => format!("+{}", f.to_lowercase()),
    });
    features.collect::<Vec<_>>().join(",")
}

impl TargetSpec {
    /// The CPU and features as LLVM gets them: `native` is the host's CPU, with the
    /// host's features unless some are given.
    fn resolved(&self) -> (String, String) {
        if self.cpu != "native" {
            return (self.cpu.clone(), self.features.clone());
        }
        let features = match self.features.is_empty() {
            true => TargetMachine::get_host_cpu_features().to_string(),
            false => self.features.clone(),
        };
        (super::host_cpu(), features)
    }
}

/// Why an option of the `opt` tool itself (its driver's, not the library's) cannot be an
/// `--llvm-arg`, with what to do instead; None for every other option. `-mtriple=`,
/// `-mcpu=`, `-mattr=` and `-aa-pipeline=` are taken as opt takes them.
pub fn opt_driver_flag_refusal(arg: &str) -> Option<String> {
    let why = match super::process::option_name(arg) {
        "O0" | "O1" | "O2" | "O3" | "Os" | "Oz" => "write the level into the pipeline: default<O2>",
        "passes" | "p" => "give the pipeline as the sequence (--passes, --seq-file, a seq.txt)",
        "S" | "o" | "f" | "disable-output" | "thinlto-bc" | "module-summary" | "output-thinlto-bc" => {
            "ctos keeps the optimized IR itself (ctos run --emit-ir DIR writes it)"
        }
        "verify-each" | "disable-verify" => {
            "ctos verifies as its oracle needs (ctos run --verify-each=changed|every|off)"
        }
        "load-pass-plugin" | "load" => "run that LLVM's opt with --opt PATH",
        "debug-pass-manager" | "print-pipeline-passes" | "print-passes" => {
            "it only prints; run opt itself for its output"
        }
        _ => return None,
    };
    Some(format!("{arg} is an option of the opt tool, not of LLVM's library: {why}"))
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("{0}")]
    Parse(String),
    #[error("{path}: the input IR is invalid (the verifier says: {message})")]
    Invalid { path: String, message: String },
    #[error("{0}")]
    Frontend(String),
    #[error("{0}")]
    Target(String),
    #[error("cannot link {what}: {message}")]
    Link { what: String, message: String },
}

/// A module in its own context. The context is boxed so the modules can borrow it for as
/// long as this value lives (inkwell ties a module's lifetime to its context's).
pub struct IrModule {
    module: ManuallyDrop<Module<'static>>,
    driver: Option<ManuallyDrop<Module<'static>>>,
    /// Shared with [`IrModule::fresh_copy`]s: a target machine does not depend on the
    /// context, and its subtargets, built once, serve every copy.
    machine: Rc<TargetMachine>,
    context: ManuallyDrop<Box<Context>>,
    target: TargetSpec,
    subtargets_built: bool,
    /// Which module this is: a new value whenever its IR may have changed in this process.
    identity: u64,
    /// Bitcode of the module and the driver, use-list order kept, for fresh copies.
    snapshot: Option<(Vec<u8>, Option<Vec<u8>>)>,
    /// A pipeline on it stopped at a failed check (see [`PipelineStop::Failed`]): its IR
    /// is never freed.
    abandoned: bool,
}

/// Why a pipeline stopped before its end without ending the process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PipelineStop {
    /// LLVM rejected the pipeline text.
    Rejected(String),
    /// A check after a pass failed (broken IR under verification after each pass, a stale
    /// analysis): the message LLVM's fatal error would have given. The pipeline was left by
    /// a jump that skipped its destructors, so the module is abandoned: value handles on
    /// the skipped stack are still linked into its values, and freeing them would write
    /// there. Its memory stays allocated until the process ends.
    Failed(String),
}

fn new_identity() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl Drop for IrModule {
    fn drop(&mut self) {
        if self.abandoned {
            return;
        }
        // Modules first: they belong to the context.
        unsafe {
            ManuallyDrop::drop(&mut self.module);
            if let Some(d) = self.driver.as_mut() {
                ManuallyDrop::drop(d);
            }
            ManuallyDrop::drop(&mut self.context);
        }
    }
}

fn parse_in(context: &Context, bytes: &[u8], name: &str) -> Result<Module<'static>, LoadError> {
    let buffer = MemoryBuffer::create_from_memory_range_copy(bytes, name);
    let module = context.create_module_from_ir(buffer).map_err(|e| LoadError::Parse(e.to_string()))?;
    // The context outlives the module: both live in IrModule, dropped in order.
    Ok(unsafe { std::mem::transmute::<Module<'_>, Module<'static>>(module) })
}

impl IrModule {
    /// Load `.ll`, `.bc`, or `.c` (through clang, see [`CFrontend`]).
    pub fn load(path: &Path, frontend: &CFrontend, target: &TargetSpec) -> Result<IrModule, LoadError> {
        IrModule::from_bytes(&frontend.ir_bytes(path)?, &path.display().to_string(), target)
    }

    /// Textual IR or bitcode (recognised by its magic number).
    pub fn from_bytes(bytes: &[u8], name: &str, target: &TargetSpec) -> Result<IrModule, LoadError> {
        super::init();
        let context = Box::new(Context::create());
        let ctx: &'static Context = unsafe { &*(context.as_ref() as *const Context) };
        let module = parse_in(ctx, bytes, name)?;
        // Passes that write files (dot-callgraph) name them after the module identifier;
        // a bare file name keeps them in the sandbox's scratch directory.
        let base = std::path::Path::new(name).file_name().map_or(name.to_string(), |b| b.to_string_lossy().into());
        module.set_name(&base);
        let machine = configure_target(&module, target)?;
        set_function_attributes(&module, target)?;
        module
            .verify()
            .map_err(|m| LoadError::Invalid { path: name.to_string(), message: first_lines(&m.to_string(), 3) })?;
        Ok(IrModule {
            module: ManuallyDrop::new(module),
            driver: None,
            machine: Rc::new(machine),
            context: ManuallyDrop::new(context),
            target: target.clone(),
            subtargets_built: false,
            identity: new_identity(),
            snapshot: None,
            abandoned: false,
        })
    }

    /// Run `default<O3>` on a small loop of this module's target, in a context of its own:
    /// what LLVM initializes once per process on first use (its command-line registry,
    /// the library-function table, cost-model tables) is initialized then, for every
    /// child forked afterwards (see src/sandbox/pool.rs).
    pub fn warm_up(&self) {
        // The module's triple: a target's features mean nothing to another target.
        let target = TargetSpec { triple: Some(self.triple()), ..self.target.clone() };
        if let Ok(mut small) = IrModule::from_bytes(WARM_UP_IR.as_bytes(), "warm-up", &target) {
            small.machine = Rc::clone(&self.machine);
            let _ = small.run_pipeline("default<O3>", VerifyEach::Off, Heap::Plain, None);
        }
    }

    /// Which module this is, in this process: equal values, the same IR.
    pub fn identity(&self) -> u64 {
        self.identity
    }

    /// Keep this module's bitcode for [`IrModule::fresh_copy`] (once; in the process that
    /// forks the children which copy it). Returns its size in bytes.
    pub fn keep_snapshot(&mut self) -> usize {
        let (module, _) = self.snapshot.get_or_insert_with(|| {
            let driver = self.driver.as_deref().map(bitcode_with_use_lists);
            (bitcode_with_use_lists(&self.module), driver)
        });
        module.len()
    }

    /// The module as it was when [`IrModule::keep_snapshot`] ran, in a context of its own,
    /// sharing this one's target machine: what a child that optimizes many copies runs
    /// each on. Use-list order is kept, so passes that walk users walk them alike.
    pub fn fresh_copy(&self) -> Result<IrModule, String> {
        let (bytes, driver) = self.snapshot.as_ref().ok_or("no snapshot of the module was kept")?;
        let context = Box::new(Context::create());
        let ctx: &'static Context = unsafe { &*(context.as_ref() as *const Context) };
        let name = self.module.get_name().to_string_lossy().into_owned();
        let module = parse_in(ctx, bytes, &name).map_err(|e| e.to_string())?;
        module.set_name(&name);
        let driver = match driver {
            Some(d) => Some(ManuallyDrop::new(parse_in(ctx, d, "driver").map_err(|e| e.to_string())?)),
            None => None,
        };
        Ok(IrModule {
            module: ManuallyDrop::new(module),
            driver,
            machine: Rc::clone(&self.machine),
            context: ManuallyDrop::new(context),
            target: self.target.clone(),
            subtargets_built: self.subtargets_built,
            identity: self.identity,
            snapshot: None,
            abandoned: false,
        })
    }

    /// A module linked in after optimization, before execution: typically a `main` that
    /// calls the optimized code, as LLVM bug reports attach `driver.ll`.
    pub fn set_driver(&mut self, path: &Path) -> Result<(), LoadError> {
        let name = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| LoadError::Read { path: name.clone(), source })?;
        self.set_driver_bytes(&bytes, &name)
    }

    /// [`IrModule::set_driver`] from IR text or bitcode in memory.
    pub fn set_driver_bytes(&mut self, bytes: &[u8], name: &str) -> Result<(), LoadError> {
        let ctx: &'static Context = unsafe { &*(self.context.as_ref() as *const Context) };
        let driver = parse_in(ctx, bytes, name)?;
        driver.set_triple(&self.module.get_triple());
        driver.set_data_layout(&self.module.get_data_layout());
        self.driver = Some(ManuallyDrop::new(driver));
        self.identity = new_identity();
        self.snapshot = None;
        Ok(())
    }

    pub(super) fn module(&self) -> &Module<'static> {
        &self.module
    }

    pub(super) fn target(&self) -> &TargetSpec {
        &self.target
    }

    pub fn has_driver(&self) -> bool {
        self.driver.is_some()
    }

    /// The driver's bitcode, if there is one.
    pub fn driver_bitcode(&self) -> Option<Vec<u8>> {
        self.driver.as_ref().map(|d| d.write_bitcode_to_memory().as_slice().to_vec())
    }

    /// Link the driver into the module now: its functions become the module's.
    pub fn link_driver(&mut self) -> Result<(), String> {
        if let Some(driver) = self.driver.take() {
            self.module
                .link_in_module(ManuallyDrop::into_inner(driver))
                .map_err(|e| format!("cannot link the driver: {e}"))?;
        }
        Ok(())
    }

    /// Whether the driver defines function `name`.
    /// Whether the driver defines a function or a global of this name.
    pub fn driver_defines(&self, name: &str) -> bool {
        self.driver.as_ref().is_some_and(|d| {
            d.get_function(name).is_some_and(|f| f.count_basic_blocks() > 0)
                || d.get_global(name).is_some_and(|g| g.get_initializer().is_some())
        })
    }

    pub fn has_main(&self) -> bool {
        let defines = |m: &Module| m.get_function("main").is_some_and(|f| f.count_basic_blocks() > 0);
        defines(&self.module) || self.driver.as_deref().is_some_and(defines)
    }

    /// Whether this module is for the host's architecture (see [`super::executes_here`]).
    pub fn for_host(&self) -> bool {
        super::executes_here(&self.triple())
    }

    /// Whether its `main` can run here: it has one, for this host (see [`IrModule::for_host`]).
    pub fn can_execute(&self) -> bool {
        self.has_main() && self.for_host()
    }

    pub fn triple(&self) -> String {
        self.module.get_triple().as_str().to_string_lossy().into_owned()
    }

    pub fn instruction_count(&self) -> usize {
        self.module.get_functions().flat_map(|f| f.get_basic_blocks()).map(|b| b.get_instructions().count()).sum()
    }

    /// Build the target's subtargets of the module's functions (src/llvm/pipeline.h) in the
    /// process that forks its runs, once, before the first fork: every run finds them built
    /// instead of building them (a tenth of a short run, and many of its coverage traps).
    pub fn build_subtargets_once(&mut self) {
        if !std::mem::replace(&mut self.subtargets_built, true) {
            unsafe { ctos_build_subtargets(self.module.as_mut_ptr(), self.machine.as_mut_ptr()) };
        }
    }

    /// In a forked run that has set LLVM options: a target machine of its own, whose
    /// subtargets are built anew under them (LLVM reads some of its options as it builds
    /// one), if the parent's were built without.
    pub fn own_subtargets_under_new_options(&mut self) {
        if std::mem::replace(&mut self.subtargets_built, false) {
            // It was made from the same module and spec once already.
            if let Ok(machine) = configure_target(&self.module, &self.target) {
                self.machine = Rc::new(machine);
            }
        }
    }

    /// Run a new-PM pipeline. It stops short when LLVM rejects the text or a check after
    /// a pass fails ([`PipelineStop`]); everything else LLVM does wrong (a crash, a fatal
    /// error inside a pass) ends the process.
    pub fn run_pipeline(
        &mut self,
        pipeline: &str,
        verify: VerifyEach,
        heap: Heap,
        watch: Option<&PassWatch>,
    ) -> Result<(), PipelineStop> {
        let rejected = |what: &str| PipelineStop::Rejected(format!("NUL in the {what}"));
        let text = std::ffi::CString::new(pipeline).map_err(|_| rejected("pipeline text"))?;
        let focus = match watch.and_then(|w| w.focus) {
            Some((name, _)) => Some(std::ffi::CString::new(name).map_err(|_| rejected("focus pass"))?),
            None => None,
        };
        let raw = watch.map(|w| RawPassWatch {
            top_level: w.top_level,
            focus_opened: w.focus_opened,
            focus: focus.as_ref().map_or(std::ptr::null(), |f| f.as_ptr()),
            focus_element: w.focus.and_then(|(_, e)| e).map_or(-1, |e| e as i32),
            gate: w.gate.as_ptr(),
            run_limit: w.runs.map_or(-1, |r| r.limit.min(i32::MAX as u32) as i32),
            pass_runs: w.runs.map(|r| r.count),
            pass_run: w.runs.map(|r| r.nth),
        });
        let raw_ptr = raw.as_ref().map_or(std::ptr::null(), |r| r as *const RawPassWatch);
        let mut failed: *mut std::ffi::c_char = std::ptr::null_mut();
        let error = unsafe {
            ctos_run_passes(
                self.module.as_mut_ptr(),
                text.as_ptr(),
                self.machine.as_mut_ptr(),
                verify as i32,
                heap as i32,
                raw_ptr,
                &mut failed,
            )
        };
        if !failed.is_null() {
            self.abandoned = true;
            let message = unsafe { std::ffi::CStr::from_ptr(failed) }.to_string_lossy().into_owned();
            unsafe { libc::free(failed.cast()) };
            return Err(PipelineStop::Failed(message));
        }
        if error.is_null() {
            return Ok(());
        }
        unsafe {
            let message = inkwell::llvm_sys::error::LLVMGetErrorMessage(error);
            let text = std::ffi::CStr::from_ptr(message).to_string_lossy().into_owned();
            inkwell::llvm_sys::error::LLVMDisposeErrorMessage(message);
            Err(PipelineStop::Rejected(text))
        }
    }

    /// The verifier's complaint, if the module is broken.
    pub fn verify(&self) -> Result<(), String> {
        self.module.verify().map_err(|e| e.to_string())
    }

    pub fn bitcode(&self) -> Vec<u8> {
        self.module.write_bitcode_to_memory().as_slice().to_vec()
    }

    pub fn ir_text(&self) -> String {
        self.module.print_to_string().to_string()
    }

    /// A stable hash of the printed IR: equal modules, equal hashes, across runs.
    pub fn ir_hash(&self) -> u64 {
        unsafe { ctos_ir_hash(self.module.as_mut_ptr()) }
    }

    /// Link the driver (if any) into the module, compile it in a JIT, call `compiled`,
    /// and run `main`, returning its exit code. With `stack_fill`, the stack `main`'s
    /// frames will use holds that byte when it starts. The module then belongs to the
    /// JIT: call this only in a child process that exits afterwards.
    pub fn jit_main(&mut self, compiled: impl FnOnce(), stack_fill: Option<u8>) -> Result<i32, String> {
        self.link_driver()?;
        let engine = self.module.create_jit_execution_engine(OptimizationLevel::None).map_err(|e| e.to_string())?;
        let main = engine.get_function_value("main").map_err(|_| "the program has no main function".to_string())?;
        // Asking for an address makes MCJIT generate code for the whole module now.
        engine.get_function_address("main").map_err(|e| format!("code generation failed: {e:?}"))?;
        compiled();
        engine.run_static_constructors();
        // argc 1 and argv[0] set, as a shell and lli run it: a program whose behaviour depends
        // on argc (csmith's print_hash_value test does) behaves here as in its bug report.
        let Some(byte) = stack_fill else {
            return Ok(unsafe { engine.run_function_as_main(main, &["program"]) });
        };
        let address = engine.get_function_address("main").map_err(|e| format!("code generation failed: {e:?}"))?;
        // Safety: the address is the JIT's code for `main`, which C calls this way whatever
        // parameters it declares.
        let main: CMain = unsafe { std::mem::transmute::<usize, CMain>(address) };
        fill_stack(byte);
        Ok(call_below_gap(main))
    }
}

type CMain = unsafe extern "C" fn(i32, *const *const std::ffi::c_char, *const *const std::ffi::c_char) -> i32;

/// Fill the stack below this frame with `byte` (what the next calls' frames find).
#[inline(never)]
fn fill_stack(byte: u8) {
    let mut area = [0u8; 256 * 1024];
    area.fill(byte);
    std::hint::black_box(&mut area);
}

/// Call `main` below a gap, so that its frames lie where [`fill_stack`] wrote `byte`, not
/// where the return addresses and saved registers of the calls before it were. Nothing
/// is called before `main` here: any call (a `memset`) would leave its own traces there.
#[inline(never)]
fn call_below_gap(main: CMain) -> i32 {
    let gap = std::mem::MaybeUninit::<[u8; 4096]>::uninit();
    std::hint::black_box(&gap);
    let argv = [c"program".as_ptr(), std::ptr::null()];
    let envp = [std::ptr::null()];
    // Safety: `main` is the JIT's code for the program's `main`.
    unsafe { main(1, argv.as_ptr(), envp.as_ptr()) }
}

/// A loop over memory with a library call: enough for the scalar, loop and vector passes
/// of `default<O3>` to build their analyses and cost models.
const WARM_UP_IR: &str = r#"
declare ptr @memcpy(ptr, ptr, i64)
define i32 @warm_up(ptr %a, ptr %b, i32 %n) {
entry:
  %c = icmp sgt i32 %n, 0
  br i1 %c, label %loop, label %exit
loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  %s = phi i32 [ 0, %entry ], [ %s.next, %loop ]
  %p = getelementptr inbounds i32, ptr %a, i32 %i
  %v = load i32, ptr %p
  %m = mul i32 %v, 3
  %s.next = add i32 %s, %m
  %q = getelementptr inbounds i32, ptr %b, i32 %i
  store i32 %s.next, ptr %q
  %i.next = add nuw nsw i32 %i, 1
  %done = icmp eq i32 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  %r = phi i32 [ 0, %entry ], [ %s.next, %loop ]
  %x = call ptr @memcpy(ptr %b, ptr %a, i64 64)
  ret i32 %r
}
"#;

fn bitcode_with_use_lists(module: &Module) -> Vec<u8> {
    // Safety: the shim returns a buffer it allocated, which MemoryBuffer takes and frees.
    let buffer = unsafe { MemoryBuffer::new(ctos_bitcode_with_use_lists(module.as_mut_ptr())) };
    buffer.as_slice().to_vec()
}

fn first_lines(text: &str, n: usize) -> String {
    text.lines().take(n).collect::<Vec<_>>().join(" | ")
}

/// What `opt -mcpu= -mattr=` writes on every function: the CPU given (the host's for
/// `native`), the features given (the host's too for `native`).
fn set_function_attributes(module: &Module, spec: &TargetSpec) -> Result<(), LoadError> {
    let (cpu, features) = spec.resolved();
    if cpu.is_empty() && features.is_empty() {
        return Ok(());
    }
    let named = |text: &str| std::ffi::CString::new(text).map_err(|_| LoadError::Target(format!("NUL in '{text}'")));
    let (cpu, features) = (named(&cpu)?, named(&features)?);
    unsafe { ctos_set_function_attributes(module.as_mut_ptr(), cpu.as_ptr(), features.as_ptr()) };
    Ok(())
}

/// Give the module a triple and data layout if it lacks them, and build the target
/// machine the passes' cost models will see.
fn configure_target(module: &Module, spec: &TargetSpec) -> Result<TargetMachine, LoadError> {
    let current = module.get_triple().as_str().to_string_lossy().into_owned();
    let triple_text = match (&spec.triple, current.is_empty()) {
        (Some(t), _) => t.clone(),
        (None, true) => super::host_triple(),
        (None, false) => current,
    };
    let triple = TargetTriple::create(&triple_text);
    module.set_triple(&triple);
    let target = Target::from_triple(&triple).map_err(|e| {
        LoadError::Target(format!("no LLVM target for triple '{triple_text}': {}", e.to_string_lossy()))
    })?;
    let (cpu, features) = spec.resolved();
    let machine = target
        .create_target_machine(
            &triple,
            &cpu,
            &features,
            OptimizationLevel::Default,
            RelocMode::Default,
            CodeModel::Default,
        )
        .ok_or_else(|| LoadError::Target(format!("cannot create a target machine for '{triple_text}' cpu '{cpu}'")))?;
    if module.get_data_layout().as_str().to_bytes().is_empty() {
        module.set_data_layout(&machine.get_target_data().get_data_layout());
    }
    Ok(machine)
}

#[cfg(test)]
mod tests {
    #[test]
    fn features_without_a_sign_are_enabled_and_lowercased_as_opt_writes_them() {
        assert_eq!(super::features_as_opt_writes_them("AVX2,-sse4.2,+FMA,,avx512vl"), "+avx2,-sse4.2,+FMA,+avx512vl");
        assert_eq!(super::features_as_opt_writes_them(""), "");
    }
}
