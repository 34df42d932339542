//! Finding an external `opt`'s LLVM and the agent built for it: from the cache, else
//! built once with `scripts/build-plugin.sh` (embedded here) against that LLVM's headers.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context as _, Result};

const AGENT_SOURCE: &str = include_str!("../../../llvm-plugin/agent.cpp");
const PIPELINE_SOURCE: &str = include_str!("../../llvm/pipeline.h");
const TRAPS_SOURCE: &str = include_str!("../../coverage/traps.h");
const HEAP_SOURCE: &str = include_str!("../heap.c");
const POISON_SOURCE: &str = include_str!("../../llvm/poison_checks.cpp");
const RULES_SOURCE: &str = include_str!("../../llvm/ub_rules.h");
const BUILD_SCRIPT: &str = include_str!("../../../scripts/build-plugin.sh");

/// An `opt` the user named, with the agent that loads into it.
#[derive(Debug, Clone)]
pub struct ExternalOpt {
    /// Canonical path (symbolic links such as `/usr/bin/opt-22` resolved).
    pub opt: PathBuf,
    /// `opt --version`'s `X.Y.Z`.
    pub version: String,
    /// The agent's shared object.
    pub agent: PathBuf,
}

/// The strict heap's allocator built beside an agent (`scripts/build-plugin.sh`).
const HEAP_LIBRARY: &str = "ctos-heap.so";

impl ExternalOpt {
    /// `opt` at `path`, with its agent: `CTOS_AGENT` if set, else the one built for this
    /// LLVM in the cache (built now if missing, which takes a few seconds).
    pub fn locate(path: &Path) -> Result<ExternalOpt> {
        let (opt, version) = identify(path)?;
        let agent = match std::env::var_os("CTOS_AGENT") {
            Some(agent) => PathBuf::from(agent),
            None => cached_agent(&opt, &version)?,
        };
        Ok(ExternalOpt { opt, version, agent })
    }

    pub fn major(&self) -> u32 {
        major_of(&self.version)
    }

    /// The strict heap's allocator for this `opt`, when its agent has one beside it.
    pub fn heap_library(&self) -> Option<PathBuf> {
        Some(self.agent.with_file_name(HEAP_LIBRARY)).filter(|p| p.is_file())
    }

    /// The folder `opt` is in (where its `clang`, `llvm-config` and `lli` would be).
    pub fn bin_dir(&self) -> &Path {
        self.opt.parent().unwrap_or(Path::new("/"))
    }

    /// A clang whose IR this opt reads: its own, else the linked LLVM's when this LLVM is
    /// as new or newer (IR is read forward, not backward), else Debian's of its version.
    pub fn clang(&self) -> Result<PathBuf> {
        let own = self.bin_dir().join("clang");
        if own.is_file() {
            return Ok(own);
        }
        if self.major() >= crate::llvm::version().0 {
            return Ok(crate::llvm::clang_for_this_llvm());
        }
        let debian = PathBuf::from(format!("/usr/lib/llvm-{}/bin/clang", self.major()));
        if debian.is_file() {
            return Ok(debian);
        }
        bail!(
            "--opt {}: no clang for LLVM {} to compile C with (give one with --clang PATH)",
            self.opt.display(),
            self.major()
        )
    }
}

/// `23` of `23.1.4`.
pub fn major_of(version: &str) -> u32 {
    version.split('.').next().and_then(|m| m.parse().ok()).unwrap_or(0)
}

/// The canonical path of the `opt` at `path` and its LLVM version (`X.Y.Z`), without
/// building anything.
pub fn identify(path: &Path) -> Result<(PathBuf, String)> {
    let opt = std::fs::canonicalize(path).with_context(|| format!("--opt {}: no such file", path.display()))?;
    let version = opt_version(&opt)?;
    Ok((opt, version))
}

/// How long `opt --version` may take: any LLVM answers at once.
const VERSION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The version `opt` names, asked once per build of it (its start-up is a tenth of a short
/// batch's time), then kept in ctos's cache.
fn opt_version(opt: &Path) -> Result<String> {
    let cached = crate::llvm::cache_file_about("versions", opt, &[include_str!("locate.rs")], "txt");
    let known = cached.as_ref().and_then(|f| std::fs::read_to_string(f).ok());
    if let Some(version) = known.filter(|v| !v.is_empty() && v.split('.').all(|n| !n.is_empty())) {
        return Ok(version);
    }
    let version = ask_opt_version(opt)?;
    if let Some(file) = cached {
        crate::llvm::store_in_cache(&file, version.as_bytes());
    }
    Ok(version)
}

fn ask_opt_version(opt: &Path) -> Result<String> {
    let mut child = Command::new(opt)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .with_context(|| format!("--opt {}: cannot run it", opt.display()))?;
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut text);
        text
    });
    let deadline = std::time::Instant::now() + VERSION_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "--opt {}: `--version` did not answer within {} s; is it an LLVM opt?",
                opt.display(),
                VERSION_TIMEOUT.as_secs()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    // A grandchild that kept the pipe open would hold the reader: wait a moment, no more.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(1);
    while !reader.is_finished() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let text = if reader.is_finished() { reader.join().unwrap_or_default() } else { Vec::new() };
    let out = std::process::Output { status, stdout: text, stderr: Vec::new() };
    let text = String::from_utf8_lossy(&out.stdout);
    let version = text
        .lines()
        .find_map(|l| l.split_once("LLVM version ").map(|(_, v)| v))
        .and_then(|v| v.split_whitespace().next())
        .map(str::to_string);
    match version {
        Some(v) if out.status.success() => Ok(v),
        _ => bail!("--opt {}: not an LLVM opt (`--version` names no LLVM version)", opt.display()),
    }
}

fn cache_root() -> Result<PathBuf> {
    crate::llvm::cache_dir("agents")
        .ok_or_else(|| anyhow::anyhow!("neither XDG_CACHE_HOME nor HOME is set: cannot place the agent's cache"))
}

/// One agent per LLVM build and agent source: a rebuilt trunk at the same version has
/// another `llvm-config` path or is rebuilt by removing the cache folder.
fn cached_agent(opt: &Path, version: &str) -> Result<PathBuf> {
    let llvm_config = opt.with_file_name("llvm-config");
    if !llvm_config.is_file() {
        bail!(
            "--opt {}: no llvm-config beside it to build the agent with; build it with \
             scripts/build-plugin.sh LLVM_CONFIG and set CTOS_AGENT to the ctos-agent.so it prints",
            opt.display()
        );
    }
    let key = xxhash_rust::xxh3::xxh3_64(
        [
            llvm_config.as_os_str().as_encoded_bytes(),
            AGENT_SOURCE.as_bytes(),
            PIPELINE_SOURCE.as_bytes(),
            TRAPS_SOURCE.as_bytes(),
            HEAP_SOURCE.as_bytes(),
            POISON_SOURCE.as_bytes(),
            RULES_SOURCE.as_bytes(),
            BUILD_SCRIPT.as_bytes(),
        ]
        .concat()
        .as_slice(),
    );
    let dir = cache_root()?.join(format!("{version}-{key:016x}"));
    let agent = dir.join("ctos-agent.so");
    if agent.is_file() {
        return Ok(agent);
    }
    // Processes that first meet this LLVM together (shards, parallel runs) build it once:
    // another writing the sources while the compiler reads them broke the build.
    std::fs::create_dir_all(&dir)?;
    let lock = std::fs::File::create(dir.join("lock"))?;
    lock.lock().with_context(|| format!("cannot lock {}", dir.join("lock").display()))?;
    if agent.is_file() {
        return Ok(agent);
    }
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("llvm-plugin"))?;
    std::fs::create_dir_all(src.join("src/llvm"))?;
    std::fs::create_dir_all(src.join("src/coverage"))?;
    std::fs::create_dir_all(src.join("src/sandbox"))?;
    std::fs::write(src.join("llvm-plugin/agent.cpp"), AGENT_SOURCE)?;
    std::fs::write(src.join("src/llvm/pipeline.h"), PIPELINE_SOURCE)?;
    std::fs::write(src.join("src/coverage/traps.h"), TRAPS_SOURCE)?;
    std::fs::write(src.join("src/sandbox/heap.c"), HEAP_SOURCE)?;
    std::fs::write(src.join("src/llvm/poison_checks.cpp"), POISON_SOURCE)?;
    std::fs::write(src.join("src/llvm/ub_rules.h"), RULES_SOURCE)?;
    std::fs::write(dir.join("build-plugin.sh"), BUILD_SCRIPT)?;
    eprintln!("ctos: building the agent for LLVM {version} (once) in {}", dir.display());
    let out = Command::new("bash")
        .arg(dir.join("build-plugin.sh"))
        .arg(&llvm_config)
        .env("CTOS_AGENT_SRC", &src)
        .env("CTOS_AGENT_OUT", &dir)
        .output()
        .context("cannot run bash to build the agent")?;
    if !out.status.success() || !agent.is_file() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).take(3).collect();
        bail!("building the agent for LLVM {version} failed: {}", last.join(" | "));
    }
    Ok(agent)
}
