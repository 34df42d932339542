//! Which LLVM runs the passes: the one linked into ctos, or an `opt` the user named (the
//! agent loaded into it). Decided once, from `--opt` or a bug folder; the version a report
//! names, the major version a bug folder is read for, the clang that compiles C for it and
//! the `opt` a reproducer calls are all read from this one value.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::agent::ExternalOpt;
use crate::llvm::CFrontend;

#[derive(Debug, Clone, Default)]
pub enum Llvm {
    /// The LLVM statically linked into ctos.
    #[default]
    Linked,
    /// An `opt` given with `--opt`, run through the agent.
    External(ExternalOpt),
}

impl Llvm {
    /// The LLVM of `--opt PATH`, or the linked one without it. Builds the agent for that
    /// `opt` if the cache has none.
    pub fn from_opt(path: Option<&Path>) -> Result<Llvm> {
        Ok(match path {
            None => Llvm::Linked,
            Some(path) => Llvm::External(ExternalOpt::locate(path)?),
        })
    }

    pub fn external(&self) -> Option<&ExternalOpt> {
        match self {
            Llvm::Linked => None,
            Llvm::External(opt) => Some(opt),
        }
    }

    /// `X.Y.Z`.
    pub fn version(&self) -> String {
        match self {
            Llvm::Linked => crate::llvm::version_string(),
            Llvm::External(opt) => opt.version.clone(),
        }
    }

    pub fn major(&self) -> u32 {
        match self {
            Llvm::Linked => crate::llvm::version().0,
            Llvm::External(opt) => opt.major(),
        }
    }

    /// For people: `22.1.8`, or `23.0.0 (/path/to/opt)`.
    pub fn describe(&self) -> String {
        match self {
            Llvm::Linked => self.version(),
            Llvm::External(opt) => format!("{} ({})", opt.version, opt.opt.display()),
        }
    }

    /// The `opt` a reproducer runs: the external one, else Debian's `opt` of the linked
    /// version.
    pub fn opt_path(&self) -> PathBuf {
        match self {
            Llvm::Linked => crate::llvm::linked_opt(),
            Llvm::External(opt) => opt.opt.clone(),
        }
    }

    /// A clang whose IR this LLVM reads (see [`ExternalOpt::clang`]).
    pub fn clang(&self) -> Result<PathBuf> {
        match self {
            Llvm::Linked => Ok(crate::llvm::clang_for_this_llvm()),
            Llvm::External(opt) => opt.clang(),
        }
    }

    /// The default C front end, with [`Llvm::clang`].
    pub fn frontend(&self) -> Result<CFrontend> {
        Ok(CFrontend { clang: self.clang()?, ..CFrontend::default() })
    }
}
