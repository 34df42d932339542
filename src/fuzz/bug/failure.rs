//! What a failure's report needs later, as the tester records it and reduction reads it.

use serde::{Deserialize, Serialize};

use crate::sandbox::Run;

/// What a failure's report needs later: LLVM's message, crash frames, the output.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FailureDetail {
    pub message: Option<String>,
    pub frames: Vec<String>,
    pub stdout: Option<String>,
}

pub fn detail_of(run: &Run) -> FailureDetail {
    FailureDetail {
        message: run.message.clone(),
        frames: run.crash.as_ref().map(|c| c.frames.clone()).unwrap_or_default(),
        stdout: run.execution.as_ref().map(|e| e.stdout.clone()),
    }
}
