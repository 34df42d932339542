//! What becomes of a failure: keyed and cross-reproduced (`bugs`, `cross`), its sequence
//! and program reduced (`bugs`, `reduce_ir`, `cvise`, with `interesting` as the test), then
//! where it fires (`fires`), its suspects (`suspects`) and its draft `ISSUE.md` (`issue`),
//! all finished by `finish`.

pub(in crate::fuzz) mod bugs;
pub(in crate::fuzz) mod cross;
pub mod cvise;
pub(in crate::fuzz) mod failure;
pub(in crate::fuzz) mod finish;
pub(in crate::fuzz) mod fires;
pub mod interesting;
pub(in crate::fuzz) mod issue;
pub mod lit_test;
pub(in crate::fuzz) mod reduce_ir;
pub(in crate::fuzz) mod stale_loop;
pub(in crate::fuzz) mod suspects;

/// A bug folder's generated driver (see [`crate::program::driver`]), if its program had none.
pub(in crate::fuzz) const DRIVER: &str = "driver.ll";
