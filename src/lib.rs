//! ctos: test and debug LLVM's optimizer under arbitrary pass sequences.
//!
//! Layers, each using only those below it: `seq` (pass catalog, sequences) and `llvm`
//! (the only module that touches inkwell / llvm-sys) at the bottom, `sandbox` (every
//! pipeline run in a forked child) above them, and the front doors in `src/bin/`.

pub mod cli;
pub mod embed;
pub mod llvm;
pub mod sandbox;
pub mod select;
pub mod seq;
