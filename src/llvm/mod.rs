//! The only module that touches inkwell and llvm-sys.
//!
//! Nothing here isolates anything: a pipeline can crash or `exit` the calling process.
//! Callers run pipelines through `crate::sandbox`, which forks first.

mod cfg;
mod frontend;
mod module;
mod mutation;
mod poison_runtime;
mod process;
mod ub;

use std::sync::Once;

use inkwell::targets::{InitializationConfig, Target, TargetMachine};

pub use cfg::{opcode_name, BlockCfg, FunctionCfg};
pub use frontend::{clang_for_this_llvm, linked_opt, opt_hidden_options, print_pipeline_passes, CFrontend};
pub use module::{
    opt_driver_flag_refusal, CheckedAnalysis, Heap, IrModule, LoadError, PassRuns, PassWatch, PipelineStop, TargetSpec,
    VerifyEach,
};
pub use mutation::{ir_site_count, ir_text_of, mutate_ir, ConstChange, IrEdit, IrFlag, IrMutation, UnaryWrap};
pub use poison_runtime::shadow_runtime;
pub use process::{
    buffer_llvm_errors, debug_counter_counts, debug_counter_limits, flush_llvm_errors, install_fatal_error_handler,
    option_name, override_symbol, parse_counter_counts, parse_llvm_args, reset_debug_counters, FatalHandler,
    SavedOptions,
};
pub use ub::TRACKING_RUNTIME;

/// (major, minor, patch) of the LLVM linked into this binary.
pub fn version() -> (u32, u32, u32) {
    inkwell::support::get_llvm_version()
}

pub fn version_string() -> String {
    let (a, b, c) = version();
    format!("{a}.{b}.{c}")
}

/// Initialise the native target once per process. Call before forking so children
/// inherit it rather than each paying for it.
pub fn init() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        Target::initialize_native(&InitializationConfig::default()).expect("LLVM has no native target");
        unsafe {
            use inkwell::llvm_sys::target::*;
            LLVM_InitializeAllTargetInfos();
            LLVM_InitializeAllTargets();
            LLVM_InitializeAllTargetMCs();
        }
        unsafe { inkwell::llvm_sys::execution_engine::LLVMLinkInMCJIT() };
    });
}

/// The triple a module that names none gets: ours, since we execute on this host.
pub fn host_triple() -> String {
    TargetMachine::get_default_triple().as_str().to_string_lossy().into_owned()
}

/// Where ctos keeps what it learns about an LLVM once (`agents` built for it, `catalogs`
/// read from its opt): `$XDG_CACHE_HOME/ctos/WHAT`, else `~/.cache/ctos/WHAT`; None when
/// neither variable is set.
pub fn cache_dir(what: &str) -> Option<std::path::PathBuf> {
    let base = match (std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME")) {
        (Some(x), _) if !x.is_empty() => std::path::PathBuf::from(x),
        (_, Some(h)) => std::path::PathBuf::from(h).join(".cache"),
        _ => return None,
    };
    Some(base.join("ctos").join(what))
}

/// Where in ctos's cache `what` facts about the file at `path` are kept: keyed by its path,
/// size and modification time (a rebuilt LLVM gets new facts) and by `code`, the source of
/// what derives them (changed code, new facts).
pub fn cache_file_about(what: &str, path: &std::path::Path, code: &[&str], ext: &str) -> Option<std::path::PathBuf> {
    let meta = std::fs::metadata(path).ok()?;
    let modified = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos();
    let mut key = [path.as_os_str().as_encoded_bytes(), &meta.len().to_le_bytes(), &modified.to_le_bytes()].concat();
    key.extend(code.iter().flat_map(|c| c.as_bytes()));
    Some(cache_dir(what)?.join(format!("{:016x}.{ext}", xxhash_rust::xxh3::xxh3_64(&key))))
}

/// Keep `bytes` at `file` in the cache, or nothing: written aside and renamed, so that two
/// ctos starting at once each read a whole file.
pub fn store_in_cache(file: &std::path::Path, bytes: &[u8]) {
    let aside = file.with_extension(format!("tmp.{}", std::process::id()));
    let stored = file.parent().is_some_and(|d| std::fs::create_dir_all(d).is_ok())
        && std::fs::write(&aside, bytes).is_ok()
        && std::fs::rename(&aside, file).is_ok();
    if !stored {
        let _ = std::fs::remove_file(&aside);
    }
}

/// Whether a module for `triple` can run here: programs execute on this host only (the
/// JIT has no other architecture's machine to run on).
pub fn executes_here(triple: &str) -> bool {
    let arch = |triple: &str| match triple.split('-').next().unwrap_or("") {
        "amd64" => "x86_64".to_string(),
        a => a.to_string(),
    };
    arch(triple) == arch(&host_triple())
}

pub fn host_cpu() -> String {
    TargetMachine::get_host_cpu_name().to_string()
}

/// Whether code built for `cpu` with `features` (as `-mcpu=`/`-mattr=` give them) can run
/// on this host: a generic or this host's CPU, and no feature the host lacks. Code for
/// another CPU may use its instructions (SIGILL here), so it is not run.
pub fn runs_on_host(cpu: &str, features: &str) -> bool {
    let host = TargetMachine::get_host_cpu_features().to_string();
    let has: std::collections::HashSet<&str> = host.split(',').filter_map(|f| f.strip_prefix('+')).collect();
    let cpu_ok = matches!(cpu, "" | "generic" | "native" | "x86-64") || cpu == host_cpu();
    cpu_ok && features.split(',').filter_map(|f| f.trim().strip_prefix('+')).all(|f| has.contains(f))
}
