//! C programs become IR through the clang of the same LLVM version (its bitcode is what
//! this LLVM reads without upgrade surprises).

use std::path::{Path, PathBuf};
use std::process::Command;

/// How `.c` inputs are compiled to unoptimized IR.
#[derive(Debug, Clone)]
pub struct CFrontend {
    pub clang: PathBuf,
    /// Flags before the input file. The default keeps the IR unoptimized but optimizable:
    /// plain `-O0` marks every function `optnone` and the new PM then skips most passes.
    pub flags: Vec<String>,
}

pub const DEFAULT_C_FLAGS: &[&str] = &["-O0", "-Xclang", "-disable-O0-optnone"];

/// `clang-22` for the LLVM 22 build, `clang-19` for the LLVM 19 one.
pub fn clang_for_this_llvm() -> PathBuf {
    let major = super::version().0;
    let in_tree = PathBuf::from(format!("/usr/lib/llvm-{major}/bin/clang"));
    if in_tree.exists() {
        in_tree
    } else {
        PathBuf::from(format!("clang-{major}"))
    }
}

impl Default for CFrontend {
    fn default() -> Self {
        CFrontend { clang: clang_for_this_llvm(), flags: DEFAULT_C_FLAGS.iter().map(|s| s.to_string()).collect() }
    }
}

impl CFrontend {
    /// Replace the optimization flags (e.g. `-O2 -Xclang -disable-llvm-passes`, which keeps
    /// TBAA metadata that some bugs need).
    pub fn with_flags(clang: Option<PathBuf>, flags: Option<&str>) -> CFrontend {
        let mut fe = CFrontend::default();
        if let Some(c) = clang {
            fe.clang = c;
        }
        if let Some(f) = flags {
            fe.flags = f.split_whitespace().map(str::to_string).collect();
        }
        fe
    }

    /// Compile to bitcode in memory.
    pub fn compile(&self, source: &Path) -> Result<Vec<u8>, String> {
        let mut cmd = Command::new(&self.clang);
        cmd.args(&self.flags).args(["-emit-llvm", "-c", "-w", "-o", "-"]);
        // csmith programs include "csmith.h"; harmless for other programs.
        if Path::new("/usr/include/csmith").is_dir() {
            cmd.arg("-I/usr/include/csmith");
        }
        cmd.arg(source);
        let out = cmd.output().map_err(|e| {
            format!("cannot run {}: {e} (install it with scripts/setup.sh, or pass --clang PATH)", self.clang.display())
        })?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let first: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).take(3).collect();
            let shown = if first.is_empty() { stderr.lines().take(3).collect::<Vec<_>>() } else { first };
            return Err(format!("clang failed on {}: {}", source.display(), shown.join(" | ")));
        }
        Ok(out.stdout)
    }

    /// [`compile`](Self::compile) each source, `jobs` clang processes at a time; results in
    /// input order. The threads are gone when it returns, so the caller may fork again.
    pub fn compile_many(&self, sources: &[PathBuf], jobs: usize) -> Vec<Result<Vec<u8>, String>> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let next = AtomicUsize::new(0);
        let mut results: Vec<Option<Result<Vec<u8>, String>>> = vec![None; sources.len()];
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..jobs.clamp(1, sources.len().max(1)))
                .map(|_| {
                    scope.spawn(|| {
                        let mut done = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(source) = sources.get(i) else { return done };
                            done.push((i, self.compile(source)));
                        }
                    })
                })
                .collect();
            for worker in workers {
                for (i, result) in worker.join().expect("compiling does not panic") {
                    results[i] = Some(result);
                }
            }
        });
        results.into_iter().map(|r| r.expect("every source is taken by a worker")).collect()
    }

    /// The IR of `path` as bytes: compiled when it is C, else read (text or bitcode).
    pub fn ir_bytes(&self, path: &Path) -> Result<Vec<u8>, super::LoadError> {
        if path.extension().is_some_and(|e| e == "c") {
            self.compile(path).map_err(super::LoadError::Frontend)
        } else {
            std::fs::read(path).map_err(|source| super::LoadError::Read { path: path.display().to_string(), source })
        }
    }

    /// The command line, for reproduction instructions.
    pub fn command_line(&self, source: &Path, output: &str) -> String {
        let mut parts = vec![self.clang.display().to_string()];
        parts.extend(self.flags.iter().cloned());
        parts.extend(["-emit-llvm", "-c", "-w"].map(String::from));
        if Path::new("/usr/include/csmith").is_dir() {
            parts.push("-I/usr/include/csmith".into());
        }
        parts.push(source.display().to_string());
        parts.extend(["-o".to_string(), output.to_string()]);
        parts.join(" ")
    }
}

/// Debian's `opt` of the linked LLVM version (the same build as the one linked in).
pub fn linked_opt() -> PathBuf {
    PathBuf::from(format!("/usr/lib/llvm-{}/bin/opt", super::version().0))
}

/// Why `opt` could not be run: for the linked version's, the package that brings it.
fn cannot_run(opt: &Path, e: std::io::Error) -> String {
    match *opt == linked_opt() {
        true => format!("cannot run {}: {e} (install llvm-{}-tools)", opt.display(), super::version().0),
        false => format!("cannot run {}: {e}", opt.display()),
    }
}

/// What `opt --help-hidden` prints: every `cl::opt` of its LLVM with its type.
pub fn opt_hidden_options(opt: &Path) -> Result<String, String> {
    let out = Command::new(opt)
        .arg("--help-hidden")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| cannot_run(opt, e))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The pipeline text `opt` prints for `pipeline` (`-print-pipeline-passes`): `default<O3>`
/// becomes the explicit nested pipeline.
pub fn print_pipeline_passes(opt: &Path, pipeline: &str) -> Result<String, String> {
    let out = Command::new(opt)
        .arg(format!("-passes={pipeline}"))
        .args(["-print-pipeline-passes", "-disable-output", "-"])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| cannot_run(opt, e))?;
    if !out.status.success() {
        return Err(format!("{} rejects '{pipeline}': {}", opt.display(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}
