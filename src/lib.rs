//! ctos: test and debug LLVM's optimizer under arbitrary pass sequences.
//!
//! Layers, each using only those below it: `seq` (pass catalog, sequences) and `llvm`
//! (the only module that touches inkwell / llvm-sys) at the bottom, `sandbox` (every
//! pipeline run in a forked child) above them, then `coverage`, `oracle`, `embed` and
//! `select`, then `localize`, and the front doors in `src/bin/`.

pub mod cli;
pub mod coverage;
pub mod embed;
pub mod files;
pub mod fuzz;
pub mod html;
pub mod llvm;
pub mod localize;
pub mod mutate;
pub mod oracle;
pub mod output;
pub mod program;
pub mod sandbox;
pub mod select;
pub mod seq;
