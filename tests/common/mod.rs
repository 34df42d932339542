//! Paths the integration tests share: the checkout, the development bugs beside it, and
//! the csmith program in tests/data.

// Each test file uses what it needs of these.
#![allow(dead_code)]

use std::path::PathBuf;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A file of a development bug in ../shared/bench.
pub fn bug(id: &str, file: &str) -> String {
    let path = root().join("../shared/bench/bugs").join(id).join(file);
    assert!(path.exists(), "{} is missing: ../shared must sit beside the checkout", path.display());
    path.display().to_string()
}

pub fn csmith() -> String {
    root().join("tests/data/csmith-12345.c").display().to_string()
}
