//! A user's interestingness test, as creduce and llvm-reduce take them.
//!
//! Called as `SCRIPT OPT PIPELINE` — the interface of the bench's `oracle.sh`: OPT is the
//! `opt` under test (`--opt`'s, else Debian's of the linked LLVM version), PIPELINE the
//! pipeline text. Exit status 0 means the
//! bug fires; any other status means it does not, except 126 and 127, which the shell uses
//! for a command it cannot find or run: that is a broken test, not an answer.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use anyhow::{bail, Context as _};

pub struct ScriptOracle {
    pub script: PathBuf,
    pub opt: PathBuf,
}

impl ScriptOracle {
    /// The test at `script`, which must be an executable file, given `opt` to run.
    pub fn new(script: PathBuf, opt: PathBuf) -> Result<ScriptOracle, String> {
        let meta = std::fs::metadata(&script).map_err(|e| format!("the oracle script {}: {e}", script.display()))?;
        if !meta.is_file() {
            return Err(format!("the oracle script {} is not a file", script.display()));
        }
        if meta.permissions().mode() & 0o111 == 0 {
            return Err(format!("the oracle script {} is not executable (chmod +x it)", script.display()));
        }
        Ok(ScriptOracle { script, opt })
    }

    /// Whether the bug fires under `pipeline`; `Err` when the script cannot say.
    pub fn fires(&self, pipeline: &str) -> anyhow::Result<bool> {
        let status = Command::new(&self.script)
            .arg(&self.opt)
            .arg(pipeline)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .with_context(|| format!("cannot run the oracle script {}", self.script.display()))?;
        if let Some(code @ (126 | 127)) = status.code() {
            bail!(
                "the oracle script {} exited with {code}: a command it runs is missing or not executable",
                self.script.display()
            );
        }
        Ok(status.success())
    }
}
