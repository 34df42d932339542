//! Localization: which LLVM source files a failing (program, pass sequence) implicates.
//!
//! LocSeq's loop: reduce the failing sequence, search for passing sequences whose
//! compiler coverage is close to the failing run's (`search`, with the genetic operators
//! of `ga`), and rank files by spectrum-based fault localization (`sbfl`, `rank`). The
//! searches (sequences, configurations, witness programs) share one `record` of evidence,
//! budget and counts, and import nothing of one another (`house_tests`).
pub mod bug_folder;
pub mod configs;
pub mod culprit;
pub mod eval;
pub mod eval_classes;
pub mod evidence;
pub mod files;
pub mod function_eval;
pub mod functions;
pub mod ga;
pub mod history;
pub mod isolate;
pub mod isolation_page;
pub mod rank;
pub mod record;
mod runner;
pub mod sbfl;
pub mod sequence_search;
pub mod similarity;
pub mod transformation;
pub mod witness_programs;

#[cfg(test)]
mod house_tests;
