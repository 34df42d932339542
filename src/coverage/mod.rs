//! Compiler coverage, mapped to LLVM source files, without a coverage-instrumented LLVM:
//! one-shot breakpoints at function entries or block starts of the statically linked
//! LLVM — or, for a pool inside an external `opt`, of that `opt` and its `libLLVM.so`,
//! armed by the agent there — recorded per sandboxed child.
//!
//! ```ignore
//! let coverage = Coverage::arm_for(&mut pool, Granularity::Functions, Some("x86_64-unknown-linux-gnu"))?;
//! // jobs with `observe: true` come back with `run.trace`
//! let spectrum = coverage.spectrum(run.trace.as_deref().unwrap());
//! ```

mod attribution;
pub mod dwarf;
mod external;
mod sites;
mod spectrum;
mod traps;

use std::sync::Mutex;

use serde::{Deserialize, Serialize};

pub use attribution::{Attribution, LlvmFunction};
pub use sites::Sites;
pub use spectrum::{FileHits, Spectrum, Summary};

use crate::sandbox::{Observer, Pool};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Granularity {
    /// One element per LLVM function.
    Functions,
    /// One element per basic block (leaders from decoding each function): finer, slower.
    Blocks,
}

impl Granularity {
    pub fn as_str(self) -> &'static str {
        match self {
            Granularity::Functions => "functions",
            Granularity::Blocks => "blocks",
        }
    }
}

/// Breakpoints armed in this process for one granularity.
#[derive(Clone, Copy)]
pub struct Coverage {
    pub sites: &'static Sites,
}

/// Where an external `opt`'s code was loaded: (load bias, path) of each object.
type Objects = Vec<(u64, std::path::PathBuf)>;

/// Site tables are built once per granularity; one of them is armed at a time.
struct State {
    sites: Vec<&'static Sites>,
    armed: Option<Granularity>,
    /// Whether only some of the armed granularity's sites are armed ([`Coverage::narrow_for`]).
    narrowed: bool,
    /// Tables of external `opt`s, by granularity and the objects' load biases and paths
    /// (the agent runs `opt` without address randomization, so these repeat).
    external: Vec<((Granularity, Objects), &'static Sites)>,
}

static STATE: Mutex<State> =
    Mutex::new(State { sites: Vec::new(), armed: None, narrowed: false, external: Vec::new() });

impl Coverage {
    /// Arm every site of `granularity` in this process (tens of milliseconds for
    /// functions, a few hundred for blocks, the first time). The process must stay
    /// single-threaded while it forks children; arming what is armed already is free.
    pub fn arm(granularity: Granularity) -> Coverage {
        let mut state = STATE.lock().unwrap();
        let sites = sites_of(&mut state, granularity);
        if state.armed.is_none() {
            traps::arm(sites);
            state.armed = Some(granularity);
        }
        Coverage { sites }
    }

    /// Arm the sites of `granularity` where `pool`'s children run — this process, or the
    /// external `opt` its agent runs in (seconds the first time: its symbols, DWARF and
    /// code are read) — and let the pool record observed jobs. With the program's
    /// `triple`, the other targets' back ends stay unarmed: an optimizer run calls into
    /// its own target's code alone, and every armed page is one more a child's fork copies.
    pub fn arm_for(pool: &mut Pool, granularity: Granularity, triple: Option<&str>) -> anyhow::Result<Coverage> {
        let Some(own) = triple.and_then(backend_dir) else { return Coverage::arm_all_for(pool, granularity, true) };
        let coverage = match pool.external_opt() {
            Some(_) => Coverage::arm_all_for(pool, granularity, false)?,
            None => Coverage { sites: sites_of(&mut STATE.lock().unwrap(), granularity) },
        };
        let sites = coverage.sites;
        let ours = |s: u32| sites.file(s).is_none_or(|f| !other_backend(&sites.attribution.files[f as usize], own));
        coverage.narrow_for(pool, ours)?;
        Ok(coverage)
    }

    /// Every site of `granularity` where `pool`'s children run, armed when `arm` says so
    /// (an external `opt`'s sites are read there; arming them is a step of its own).
    fn arm_all_for(pool: &mut Pool, granularity: Granularity, arm: bool) -> anyhow::Result<Coverage> {
        let coverage = match (pool.external_objects(), pool.external_opt()) {
            (Some(objects), Some(opt)) => {
                let key = (granularity, objects);
                let mut state = STATE.lock().unwrap();
                let sites = match state.external.iter().find(|(k, _)| *k == key) {
                    Some((_, s)) => *s,
                    None => {
                        let s = external::external_sites(&key.1, &opt.version, granularity)?;
                        let s: &'static Sites = Box::leak(Box::new(s));
                        state.external.push((key, s));
                        s
                    }
                };
                drop(state);
                if arm {
                    pool.arm_external(&sites.addrs, &sites.patch_flags())?;
                }
                Coverage { sites }
            }
            _ => Coverage::arm(granularity),
        };
        pool.set_observer(coverage.observer());
        Ok(coverage)
    }

    /// An observer for a [`crate::sandbox::Pool`]: each observed child records its hits.
    pub fn observer(&self) -> Box<dyn Observer> {
        Box::new(traps::TrapObserver::new(self.sites.len(), None))
    }

    /// Arm only the sites `keep` selects where `pool`'s children run, until the next
    /// [`Coverage::arm_for`]: a site no spectrum will count need not stop any child. Traces
    /// still name sites of the whole table; a site left out is never in one.
    pub fn narrow_for(&self, pool: &mut Pool, keep: impl Fn(u32) -> bool) -> anyhow::Result<()> {
        let subset = self.sites.subset(keep);
        match pool.external_opt() {
            Some(_) => pool.arm_external(&subset.addrs, &subset.flags)?,
            None => {
                // Whatever was armed (all of it, another granularity, nothing) goes first.
                let mut state = STATE.lock().unwrap();
                traps::arm_these(&subset.addrs, &subset.flags);
                state.armed = Some(self.sites.granularity);
                state.narrowed = true;
            }
        }
        pool.set_observer(Box::new(traps::TrapObserver::new(self.sites.len(), Some(subset.index))));
        Ok(())
    }

    pub fn spectrum(&self, trace: &[u32]) -> Spectrum {
        Spectrum::from_trace(trace, self.sites)
    }
}

/// The site table of `granularity`, built the first time, with nothing armed that would
/// change it (block leaders come from decoding the code, which must hold no breakpoint).
fn sites_of(state: &mut State, granularity: Granularity) -> &'static Sites {
    if state.armed != Some(granularity) || state.narrowed {
        traps::disarm();
        state.armed = None;
        state.narrowed = false;
    }
    match state.sites.iter().find(|s| s.granularity == granularity) {
        Some(s) => s,
        None => {
            let s: &'static Sites = Box::leak(Box::new(Sites::new(granularity)));
            state.sites.push(s);
            s
        }
    }
}

/// The back end's folder among LLVM's sources (`llvm/lib/Target/X86/`) for a target
/// triple's architecture; None for one not known here (every back end stays armed).
pub fn backend_dir(triple: &str) -> Option<&'static str> {
    let arch = triple.split('-').next()?;
    Some(match arch {
        "x86_64" | "i386" | "i486" | "i586" | "i686" => "llvm/lib/Target/X86/",
        "aarch64" | "aarch64_be" | "arm64" | "arm64e" | "aarch64_32" => "llvm/lib/Target/AArch64/",
        a if a.starts_with("arm") || a.starts_with("thumb") => "llvm/lib/Target/ARM/",
        a if a.starts_with("riscv") => "llvm/lib/Target/RISCV/",
        a if a.starts_with("powerpc") || a.starts_with("ppc") => "llvm/lib/Target/PowerPC/",
        a if a.starts_with("mips") => "llvm/lib/Target/Mips/",
        "wasm32" | "wasm64" => "llvm/lib/Target/WebAssembly/",
        "s390x" | "systemz" => "llvm/lib/Target/SystemZ/",
        "amdgcn" | "r600" => "llvm/lib/Target/AMDGPU/",
        "nvptx" | "nvptx64" => "llvm/lib/Target/NVPTX/",
        "loongarch32" | "loongarch64" => "llvm/lib/Target/LoongArch/",
        "hexagon" => "llvm/lib/Target/Hexagon/",
        "sparc" | "sparcv9" | "sparcel" => "llvm/lib/Target/Sparc/",
        "bpf" | "bpfel" | "bpfeb" => "llvm/lib/Target/BPF/",
        _ => return None,
    })
}

/// Whether `path` is in a back end other than the one in `own` (`llvm/lib/Target/X86/`);
/// the files directly in llvm/lib/Target/ serve every target.
fn other_backend(path: &str, own: &str) -> bool {
    path.strip_prefix("llvm/lib/Target/").is_some_and(|rest| rest.contains('/')) && !path.starts_with(own)
}

/// How many sites armed in this process are patched jumps; the others are `int3`s (see
/// src/coverage/traps.h).
pub fn patched_sites() -> usize {
    traps::patched()
}

/// Take every breakpoint out of this process: children run at full speed and record
/// nothing until the next [`Coverage::arm`].
pub fn disarm() {
    let mut state = STATE.lock().unwrap();
    traps::disarm();
    state.armed = None;
    state.narrowed = false;
}

/// Take every breakpoint out of where `pool`'s children run.
pub fn disarm_for(pool: &mut Pool) -> anyhow::Result<()> {
    match pool.external_opt() {
        Some(_) => pool.arm_external(&[], &[])?,
        None => disarm(),
    }
    Ok(())
}

impl Sites {
    /// Whether the site is in LLVM's error reporting, where a failing run's trace should
    /// be cut (see [`Spectrum::from_failing_trace`]).
    pub fn is_error_reporting(&self, site: u32) -> bool {
        self.reports_errors(self.function[site as usize])
    }

    /// Whether the function is one of LLVM's error reporters.
    pub fn reports_errors(&self, function: u32) -> bool {
        const REPORTERS: &[&str] = &[
            "report_fatal_error",
            "reportFatalUsageError",
            "reportFatalInternalError",
            "report_bad_alloc_error",
            "llvm_unreachable_internal",
            "VerifierSupport11CheckFailed",
            "VerifierSupport20DebugInfoCheckFailed",
        ];
        let f = &self.attribution.functions[function as usize];
        REPORTERS.iter().any(|r| f.mangled.contains(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_triple_keeps_its_own_back_end_and_the_code_every_target_shares() {
        let own = backend_dir("x86_64-pc-linux-gnu").unwrap();
        assert!(!other_backend("llvm/lib/Target/X86/X86TargetTransformInfo.cpp", own));
        assert!(!other_backend("llvm/lib/Target/TargetMachine.cpp", own));
        assert!(!other_backend("llvm/lib/Transforms/Vectorize/SLPVectorizer.cpp", own));
        assert!(other_backend("llvm/lib/Target/AArch64/AArch64TargetTransformInfo.cpp", own));
        assert_eq!(backend_dir("thumbv7em-none-eabi"), Some("llvm/lib/Target/ARM/"));
        assert_eq!(backend_dir("riscv64-unknown-linux-gnu"), Some("llvm/lib/Target/RISCV/"));
        // Unknown or no triple: every back end stays armed.
        assert_eq!(backend_dir("xcore"), None);
        assert_eq!(backend_dir(""), None);
    }
}
