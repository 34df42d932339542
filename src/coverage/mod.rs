//! Compiler coverage of the linked LLVM, mapped to LLVM source files, without a
//! coverage-instrumented LLVM: one-shot breakpoints at function entries or block starts
//! of the statically linked LLVM, recorded per sandboxed child.
//!
//!     let coverage = Coverage::arm(Granularity::Functions);
//!     pool.set_observer(coverage.observer());
//!     // jobs with `observe: true` come back with `run.trace`
//!     let spectrum = coverage.spectrum(run.trace.as_deref().unwrap());

mod attribution;
mod sites;
mod spectrum;
mod traps;

use std::sync::Mutex;

use serde::{Deserialize, Serialize};

pub use attribution::{Attribution, LlvmFunction};
pub use sites::Sites;
pub use spectrum::{FileHits, Spectrum, Summary};

use crate::sandbox::Observer;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Granularity {
    /// Function breakpoints, reported per file.
    Files,
    /// One element per LLVM function.
    Functions,
    /// One element per basic block (leaders from decoding each function): finer, slower.
    Blocks,
}

impl Granularity {
    pub fn as_str(self) -> &'static str {
        match self {
            Granularity::Files => "files",
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

static ARMED: Mutex<Option<Coverage>> = Mutex::new(None);

impl Coverage {
    /// Arm every site of `granularity` in this process (tens of milliseconds for
    /// functions, about a second for blocks). The process must stay single-threaded while
    /// it forks children; arming again with the same granularity is free.
    pub fn arm(granularity: Granularity) -> Coverage {
        let mut armed = ARMED.lock().unwrap();
        if let Some(c) = *armed {
            if c.sites.granularity == granularity {
                return c;
            }
        }
        // Block leaders come from decoding the code: it must hold no breakpoint then.
        traps::disarm();
        let sites: &'static Sites = Box::leak(Box::new(Sites::new(granularity)));
        traps::arm(sites);
        let coverage = Coverage { sites };
        *armed = Some(coverage);
        coverage
    }

    /// An observer for a [`crate::sandbox::Pool`]: each observed child records its hits.
    pub fn observer(&self) -> Box<dyn Observer> {
        Box::new(traps::TrapObserver::new(self.sites.len()))
    }

    pub fn spectrum(&self, trace: &[u32]) -> Spectrum {
        Spectrum::from_trace(trace, self.sites)
    }
}

/// Take every breakpoint out of this process (for measuring runs without coverage).
pub fn disarm() {
    let mut armed = ARMED.lock().unwrap();
    traps::disarm();
    *armed = None;
}

impl Sites {
    /// Whether the site is in LLVM's error reporting, where a failing run's trace should
    /// be cut (see [`Spectrum::from_trace_until_error_reporting`]).
    pub fn is_error_reporting(&self, site: u32) -> bool {
        const REPORTERS: &[&str] = &[
            "report_fatal_error",
            "reportFatalUsageError",
            "reportFatalInternalError",
            "report_bad_alloc_error",
            "llvm_unreachable_internal",
            "VerifierSupport11CheckFailed",
            "VerifierSupport20DebugInfoCheckFailed",
        ];
        let f = &self.attribution.functions[self.function[site as usize] as usize];
        REPORTERS.iter().any(|r| f.mangled.contains(r))
    }
}
