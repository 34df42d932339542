//! Compiler coverage of the linked LLVM, mapped to LLVM source files, without a
//! coverage-instrumented LLVM: one-shot breakpoints at function entries or block starts
//! of the statically linked LLVM, recorded per sandboxed child.
//!
//! ```ignore
//! let coverage = Coverage::arm(Granularity::Functions);
//! pool.set_observer(coverage.observer());
//! // jobs with `observe: true` come back with `run.trace`
//! let spectrum = coverage.spectrum(run.trace.as_deref().unwrap());
//! ```

mod attribution;
pub mod dwarf;
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

/// Site tables are built once per granularity; one of them is armed at a time.
struct State {
    sites: Vec<&'static Sites>,
    armed: Option<Granularity>,
}

static STATE: Mutex<State> = Mutex::new(State { sites: Vec::new(), armed: None });

impl Coverage {
    /// Arm every site of `granularity` in this process (tens of milliseconds for
    /// functions, a few hundred for blocks, the first time). The process must stay
    /// single-threaded while it forks children; arming what is armed already is free.
    pub fn arm(granularity: Granularity) -> Coverage {
        let mut state = STATE.lock().unwrap();
        if state.armed != Some(granularity) {
            // Block leaders come from decoding the code: it must hold no breakpoint then.
            traps::disarm();
            state.armed = None;
        }
        let sites = match state.sites.iter().find(|s| s.granularity == granularity) {
            Some(s) => *s,
            None => {
                let s: &'static Sites = Box::leak(Box::new(Sites::new(granularity)));
                state.sites.push(s);
                s
            }
        };
        if state.armed.is_none() {
            traps::arm(sites);
            state.armed = Some(granularity);
        }
        Coverage { sites }
    }

    /// An observer for a [`crate::sandbox::Pool`]: each observed child records its hits.
    pub fn observer(&self) -> Box<dyn Observer> {
        Box::new(traps::TrapObserver::new(self.sites.len()))
    }

    pub fn spectrum(&self, trace: &[u32]) -> Spectrum {
        Spectrum::from_trace(trace, self.sites)
    }
}

/// Take every breakpoint out of this process: children run at full speed and record
/// nothing until the next [`Coverage::arm`].
pub fn disarm() {
    let mut state = STATE.lock().unwrap();
    traps::disarm();
    state.armed = None;
}

impl Sites {
    /// Whether the site is in LLVM's error reporting, where a failing run's trace should
    /// be cut (see [`Spectrum::from_failing_trace`]).
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
