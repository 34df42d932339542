//! The integration tests, one binary: each test binary links all of LLVM statically,
//! so one link per build instead of one per file (issue 46, CI time).

mod common;

mod agent;
mod bad_input;
mod bug_folders;
mod catalog;
mod coverage;
mod engine;
mod fuzz;
mod generators;
mod house;
mod locseq;
mod preserved;
mod shards;
