//! What the integration tests share: the checkout, the development bugs beside it, the
//! csmith program in tests/data, and running ctos.

// Each test file uses what it needs of these.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A file of a development bug, as tests/data/bugs keeps it (copied from the bench).
pub fn bug(id: &str, file: &str) -> String {
    let path = root().join("tests/data/bugs").join(id).join(file);
    assert!(path.exists(), "{} is missing from the checkout", path.display());
    path.display().to_string()
}

pub fn csmith() -> String {
    root().join("tests/data/csmith-12345.c").display().to_string()
}

/// A file of tests/data.
pub fn data(file: &str) -> String {
    root().join("tests/data").join(file).display().to_string()
}

/// `pool` with its jobs on glibc's heap alone: a test that counts a pool's forks counts its
/// workers', not the strict heap's runs after each plain one that ended well.
pub fn one_heap(mut pool: ctos::sandbox::Pool) -> ctos::sandbox::Pool {
    pool.set_heap_policy(ctos::sandbox::HeapPolicy::Plain);
    pool
}

/// Pipelines that end in every way a worker must outlive or not: LLVM's fatal error (LICM
/// without MemorySSA), a crash, IR broken by the end, and good ones (`default<O2>` twice).
pub const ENDINGS: [&str; 8] = [
    "sroa",
    "function(sroa,instcombine<no-verify-fixpoint>,gvn)",
    "function(loop(licm))",
    "default<O2>",
    "function(sroa,trigger-crash-function)",
    "function(trigger-verifier-error)",
    "default<O2>",
    "function(sroa,loop-mssa(licm),gvn)",
];

/// How [`ENDINGS`] end, unverified between passes (`Outcome::as_str`).
pub const ENDINGS_OUTCOMES: [&str; 8] = ["ok", "ok", "fatal", "ok", "crash", "invalid-ir", "ok", "ok"];

/// IR text of thousands of small functions: its bitcode is larger than a worker copies.
pub fn many_functions_ir() -> String {
    (0..6000).map(|i| format!("define i32 @f{i}(i32 %x) {{\n  %y = add i32 %x, {i}\n  ret i32 %y\n}}\n")).collect()
}

/// What headless Chromium makes of a page: its console messages (errors, failed loads)
/// and the DOM it built. The network is cut off, so a page that needs it shows here.
pub struct Loaded {
    pub console: Vec<String>,
    pub dom: String,
}

pub fn load_in_chromium(page: &std::path::Path) -> Loaded {
    let profile = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"])
        .arg("--host-resolver-rules=MAP * ~NOTFOUND")
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", std::fs::canonicalize(page).unwrap().display()))
        .output()
        .expect("chromium is missing: scripts/setup.sh installs it");
    assert!(out.status.success(), "chromium failed: {}", String::from_utf8_lossy(&out.stderr));
    let console = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Failed to load"))
        .map(str::to_string)
        .collect();
    Loaded { console, dom: String::from_utf8_lossy(&out.stdout).into_owned() }
}

/// Text as the HTML pages write it.
pub fn html_escaped(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// `ctos ARGS`: its exit status, standard output and standard error.
pub fn ctos(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ctos")).args(args).output().expect("run ctos");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}
