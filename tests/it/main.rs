//! The integration tests, one binary: each test binary links all of LLVM statically,
//! so one link per build instead of one per file (issue 46, CI time).

mod common;

mod agent;
mod bad_input;
mod bug_folders;
// Not `shards`: libtest starts tests in the order of their names, and this one (19 s), last
// of all, ran alone for its final 11 s.
mod campaign_shards;
mod catalog;
mod coverage;
mod engine;
mod fuzz;
mod generators;
mod house;
mod locseq;
mod preserved;
mod readme;
