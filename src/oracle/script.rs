//! A user's interestingness test, as creduce and llvm-reduce take them.
//!
//! Called as `SCRIPT OPT PIPELINE` — the interface of the bench's `oracle.sh`: OPT is the
//! `opt` of the linked LLVM version, PIPELINE the pipeline text. Exit status 0 means the
//! bug fires; anything else means it does not.

use std::path::PathBuf;
use std::process::{Command, Stdio};

pub struct ScriptOracle {
    pub script: PathBuf,
    pub opt: PathBuf,
}

impl ScriptOracle {
    pub fn new(script: PathBuf) -> ScriptOracle {
        let major = crate::llvm::version().0;
        ScriptOracle { script, opt: PathBuf::from(format!("/usr/lib/llvm-{major}/bin/opt")) }
    }

    pub fn fires(&self, pipeline: &str) -> bool {
        Command::new(&self.script)
            .arg(&self.opt)
            .arg(pipeline)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}
