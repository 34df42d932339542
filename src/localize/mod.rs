//! Localization: which LLVM source files a failing (program, pass sequence) implicates.
pub mod ga;
pub mod sbfl;
