//! Runs to verdicts: which failure a run shows, and whether it is the failure under study.

pub mod pass_runs;
mod script;

use serde::{Deserialize, Serialize};

pub use script::ScriptOracle;

use crate::llvm::VerifyEach;
use crate::program::driver::{stopped_calls, Stopped};
use crate::sandbox::{signal_name, ExecStatus, Execution, Outcome, Run};
use crate::seq::Sequence;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// The optimizer died from a signal.
    Crash,
    /// LLVM reported a fatal error.
    Fatal,
    /// The verifier rejected the optimized IR.
    InvalidIr,
    /// The optimizer ran out of time (performance bug or hang).
    Timeout,
    /// The optimizer ran out of memory.
    Oom,
    /// The code generator failed on IR the verifier accepted.
    Codegen,
    /// The optimized program behaves differently from the unoptimized one.
    WrongCode,
}

impl FailureKind {
    pub const ALL: [FailureKind; 7] = [
        FailureKind::Crash,
        FailureKind::Fatal,
        FailureKind::InvalidIr,
        FailureKind::Timeout,
        FailureKind::Oom,
        FailureKind::Codegen,
        FailureKind::WrongCode,
    ];

    /// The kind named as [`FailureKind::as_str`] names it.
    pub fn parse(name: &str) -> Option<FailureKind> {
        FailureKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Crash => "crash",
            FailureKind::Fatal => "fatal",
            FailureKind::InvalidIr => "invalid-ir",
            FailureKind::Timeout => "timeout",
            FailureKind::Oom => "oom",
            FailureKind::Codegen => "codegen",
            FailureKind::WrongCode => "wrong-code",
        }
    }
}

/// A failure with a signature: what tells two failures of one kind apart.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Failure {
    pub kind: FailureKind,
    /// Crash: signal and innermost LLVM frame; fatal: LLVM's message; invalid IR: the
    /// verifier's first complaint; wrong code: how the behaviour differs.
    pub signature: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind.as_str(), self.signature)
    }
}

/// How a crash signature starts when an assertion failed (LLVM builds with assertions).
const ASSERTION: &str = "assertion failed: ";

/// Numbers in messages vary with the input (`after 1 iterations`, `%12`), not with the bug.
fn normalize(message: &str) -> String {
    let first = message.lines().next().unwrap_or("").split(" | ").next().unwrap_or("");
    let first = without_verifier_verdict(first);
    let mut out = String::with_capacity(first.len());
    let mut in_number = false;
    for c in first.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

/// The verifier's complaint without the verdict sandbox/classify.rs appends to a lone one
/// (` [Broken function found after pass "LCSSAPass", compilation aborted!]`): the verdict
/// is there only when the verifier ran after each pass, so the same complaint carried it
/// in a campaign with `-verify-each` and lacked it in locseq's coverage run ("stopped
/// failing") or when it came with others (one LCSSA bug, two signatures).
fn without_verifier_verdict(complaint: &str) -> &str {
    let complaint = complaint.trim();
    match complaint.rsplit_once(" [Broken ") {
        Some((said, verdict)) if verdict.ends_with(']') => said.trim_end(),
        _ => complaint,
    }
}

/// How an execution differs from the unoptimized program's, if it does.
pub fn execution_failure(execution: &Execution, reference: &Execution) -> Option<Failure> {
    let same_status = execution.status == reference.status;
    match &execution.status {
        ExecStatus::CodegenError(message) => {
            Some(Failure { kind: FailureKind::Codegen, signature: normalize(message) })
        }
        _ if same_status && execution.stdout == reference.stdout => None,
        // Stopped before it ran even a few times as long as the unoptimized program: slower,
        // or a busy machine, says nothing of whether it ends (a campaign on LLVM 23 called
        // a loop-interchange that changed nothing a hang: the unoptimized run took 6.9 s of
        // the 10 s limit while the machine compiled beside it).
        ExecStatus::Timeout if execution.millis < HANG_EVIDENCE_RATIO * reference.millis => None,
        ExecStatus::Exited(code) => Some(Failure {
            kind: FailureKind::WrongCode,
            signature: match newly_stopped(execution, reference) {
                Some(stopped) => stopped.signature(),
                None if execution.stdout != reference.stdout => "output differs".to_string(),
                None => format!("exit code {code}"),
            },
        }),
        ExecStatus::Signal(s) => {
            Some(Failure { kind: FailureKind::WrongCode, signature: format!("program killed by {}", signal_name(*s)) })
        }
        ExecStatus::Timeout => Some(Failure { kind: FailureKind::WrongCode, signature: "program does not end".into() }),
        ExecStatus::Oom => Some(Failure { kind: FailureKind::WrongCode, signature: "program out of memory".into() }),
    }
}

/// How many times the unoptimized program's time a run must go on for before a time limit
/// stopping it says it does not end.
pub const HANG_EVIDENCE_RATIO: f64 = 3.0;

/// The first call of a generated driver that the checks of the optimized run stopped
/// (poison observed, undefined behaviour) and the unoptimized run did not.
pub fn newly_stopped(execution: &Execution, reference: &Execution) -> Option<Stopped> {
    let before: Vec<usize> = stopped_calls(&reference.stdout).iter().map(|s| s.call).collect();
    stopped_calls(&execution.stdout).into_iter().find(|s| !before.contains(&s.call))
}

impl Failure {
    /// Whether `other` is this failure again. Wrong code is matched by kind alone: one
    /// miscompilation can print different wrong output, or crash, under other sequences.
    pub fn matches(&self, other: &Failure) -> bool {
        let same_text = || {
            // A bug folder of an earlier ctos may hold its signature with the verdict.
            self.signature == other.signature
                || self.kind == FailureKind::InvalidIr
                    && without_verifier_verdict(&self.signature) == without_verifier_verdict(&other.signature)
        };
        self.kind == other.kind && (self.kind == FailureKind::WrongCode || same_text())
    }
}

/// What one run shows on its own: nothing wrong, a failure, or a mistake in the input,
/// never a bug and never a pass: a pipeline LLVM refused, or one that broke a pass's
/// precondition, as LLVM's message says (what the pipeline needed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observation {
    Clean,
    Rejected,
    Misuse(&'static str),
    Fails(Failure),
}

/// The one place a run becomes a failure. Wrong code needs the unoptimized program's
/// execution as `reference`, and an execution in `run`.
pub fn observe(run: &Run, reference: Option<&Execution>) -> Observation {
    let message = run.message.as_deref().unwrap_or("");
    if run.outcome != Outcome::Ok {
        if let Some(needed) = crate::seq::precondition_broken(message) {
            return Observation::Misuse(needed);
        }
    }
    let (kind, signature) = match run.outcome {
        Outcome::Rejected => return Observation::Rejected,
        Outcome::Ok => {
            let failure = match (&run.execution, reference) {
                (Some(e), Some(r)) => execution_failure(e, r),
                // The code generator failing is a bug whatever the program would print.
                (Some(Execution { status: ExecStatus::CodegenError(m), .. }), None) => {
                    Some(Failure { kind: FailureKind::Codegen, signature: normalize(m) })
                }
                _ => None,
            };
            return failure.map_or(Observation::Clean, Observation::Fails);
        }
        Outcome::Crash => {
            let crash = run.crash.as_ref();
            let signal = crash.map_or("crash".to_string(), |c| signal_name(c.signal));
            let top = crash.and_then(|c| c.frames.first());
            let signature = match crash.and_then(|c| c.assertion.as_deref()) {
                // LLVM's developers name assertion failures by their text (line numbers drift).
                Some(assertion) => format!("{ASSERTION}{}", normalize(assertion)),
                None => top.map_or(signal.clone(), |t| format!("{signal} in {t}")),
            };
            (FailureKind::Crash, signature)
        }
        Outcome::Fatal => (FailureKind::Fatal, normalize(message)),
        Outcome::InvalidIr => (FailureKind::InvalidIr, normalize(message)),
        Outcome::Timeout => (FailureKind::Timeout, "optimizer timeout".into()),
        Outcome::Oom => (FailureKind::Oom, "optimizer out of memory".into()),
    };
    Observation::Fails(Failure { kind, signature })
}

/// Whether the optimizer stopped (crash, fatal error, hang) inside a top-level element of
/// `pipeline` that runs `pass`; None when the run does not say where it stopped.
pub fn failed_in_pass(run: &Run, pipeline: &str, pass: &str) -> Option<bool> {
    let element = run.failed_in_element?;
    Some(crate::seq::top_level_elements(pipeline).get(element).is_some_and(|text| crate::seq::names_pass(text, pass)))
}

/// How a run relates to the failure under study.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "verdict", content = "failure")]
pub enum Verdict {
    /// No failure of any kind.
    Passes,
    /// The failure under study.
    Same,
    /// Some other failure: neither passing nor failing evidence.
    Other(Failure),
    /// LLVM refused the pipeline: no evidence at all.
    Rejected,
}

/// The failure under study, and how to recognize it.
pub struct Oracle {
    pub expected: Failure,
    /// The unoptimized program's execution, for wrong code.
    pub reference: Option<Execution>,
    /// A regular expression the failure's message must match (e.g. the verifier text).
    pub pattern: Option<regex::Regex>,
    /// A user's interestingness test decides instead of the signature.
    pub script: Option<ScriptOracle>,
    /// Once the culprit pass is known: a crash inside it is the failure under study
    /// whatever its top frame (one fault can crash in several places of its pass).
    pub crash_in: Option<String>,
    /// For a fault (a signal, no assertion) while reducing: the innermost pass-run frame of
    /// the failure under study (`llvm::UnifyLoopExitsPass::run`, see [`fault_pass`]). A
    /// fault under it is the failure whatever its top frame: a pass that corrupts memory
    /// faults wherever the bad read falls, and that moves with every change of the heap.
    pub fault_in: Option<String>,
}

/// The innermost frame of `frames` that is a pass's `run`, for a crash by a signal (an
/// assertion names its failure by its text instead).
pub fn fault_pass(failure: &Failure, frames: &[String]) -> Option<String> {
    let fault = failure.kind == FailureKind::Crash && !failure.signature.starts_with(ASSERTION);
    fault.then(|| frames.iter().find(|f| f.ends_with("Pass::run")).cloned()).flatten()
}

impl Oracle {
    /// Recognize `expected` by kind and signature alone (as campaigns and reducers do).
    pub fn of(expected: Failure, reference: Option<Execution>) -> Oracle {
        Oracle { expected, reference, pattern: None, script: None, crash_in: None, fault_in: None }
    }

    /// Whether runs must execute the program to be judged.
    /// When to verify while a pipeline runs. Broken IR is caught right after the pass that
    /// breaks it: otherwise a later pass can delete the broken instructions, and a run that
    /// broke the IR the same way would count as passing.
    pub fn verify_each(&self) -> VerifyEach {
        if self.expected.kind == FailureKind::InvalidIr && self.script.is_none() {
            VerifyEach::Changed
        } else {
            VerifyEach::Off
        }
    }

    pub fn needs_execution(&self) -> bool {
        self.script.is_none() && matches!(self.expected.kind, FailureKind::WrongCode | FailureKind::Codegen)
    }

    /// The verdict on `run` of `pipeline`. `Err` only when the user's script cannot be run.
    pub fn judge(&self, run: &Run, pipeline: &str) -> anyhow::Result<Verdict> {
        let failure = match observe(run, self.reference.as_ref()) {
            // A pipeline that breaks a pass's precondition says no more than one LLVM refuses.
            Observation::Rejected | Observation::Misuse(_) => return Ok(Verdict::Rejected),
            Observation::Clean => None,
            Observation::Fails(f) => Some(f),
        };
        if let Some(script) = &self.script {
            return Ok(match (script.fires(pipeline)?, failure) {
                (true, _) => Verdict::Same,
                (false, None) => Verdict::Passes,
                (false, Some(f)) => Verdict::Other(f),
            });
        }
        Ok(match failure {
            None => Verdict::Passes,
            Some(f) if self.expected.matches(&f) && self.pattern_matches(run) => Verdict::Same,
            Some(f) if self.crashed_in_culprit(&f, run, pipeline) => Verdict::Same,
            Some(f) if self.fault_in.is_some() && fault_pass(&f, crash_frames(run)) == self.fault_in => Verdict::Same,
            Some(f) => Verdict::Other(f),
        })
    }

    fn crashed_in_culprit(&self, failure: &Failure, run: &Run, pipeline: &str) -> bool {
        let Some(pass) = &self.crash_in else { return false };
        self.expected.kind == FailureKind::Crash
            && failure.kind == FailureKind::Crash
            && self.pattern_matches(run)
            && failed_in_pass(run, pipeline, pass) == Some(true)
    }

    fn pattern_matches(&self, run: &Run) -> bool {
        self.pattern.as_ref().is_none_or(|re| pattern_matches(re, run))
    }
}

/// Whether `pattern` finds what `opt` would have printed of `run` on its stderr: the
/// message (a fatal error as `LLVM ERROR: …`, as opt prints it: bug reports' patterns name
/// it so) and what LLVM printed.
pub fn pattern_matches(pattern: &regex::Regex, run: &Run) -> bool {
    let message = run.message.as_deref().unwrap_or("");
    pattern.is_match(message)
        || (run.outcome == Outcome::Fatal && pattern.is_match(&format!("LLVM ERROR: {message}")))
        || pattern.is_match(&run.stderr)
}

/// One optimized program's execution in a vote, and which optimized module ran (its IR
/// hash): sequences that optimize the program alike are one voice, however many they are.
#[derive(Debug, Clone)]
pub struct Ballot {
    pub execution: Execution,
    pub module: Option<u64>,
}

/// The fewest different optimized programs whose agreement against the unoptimized one
/// says the program is undefined (CTOS's majority rule presumes many sequences). One or two
/// are what a single miscompilation shows, by one pass, under a sequence or two.
pub const MAJORITY_MODULES: usize = 3;

/// What the majority vote over one program's executions says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Vote {
    /// Most optimized runs, of at least [`MAJORITY_MODULES`] different optimized programs,
    /// agree with each other but not with the unoptimized program: the program is suspect
    /// (undefined behaviour the screening missed), nothing is reported.
    Suspect { runs: usize, modules: usize },
    /// Otherwise every execution that differs from the reference is wrong code: its index
    /// in the executions voted on, and how it differs.
    WrongCode(Vec<(usize, Failure)>),
}

/// How many different optimized programs (by IR hash; a run without one counts alone) ran.
pub fn distinct_modules<'a>(ballots: impl IntoIterator<Item = &'a Ballot>) -> usize {
    let mut hashes: Vec<u64> = Vec::new();
    let mut unnamed = 0;
    for ballot in ballots {
        match ballot.module {
            Some(h) if !hashes.contains(&h) => hashes.push(h),
            Some(_) => {}
            None => unnamed += 1,
        }
    }
    hashes.len() + unnamed
}

/// CTOS's majority vote over the executions of one program under many sequences.
pub fn vote(ballots: &[Ballot], reference: &Execution) -> Vote {
    let key = |e: &Execution| (e.status.clone(), e.stdout.clone());
    let reference_key = key(reference);
    let mut groups: Vec<((ExecStatus, String), Vec<&Ballot>)> = Vec::new();
    for b in ballots {
        let k = key(&b.execution);
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, members)) => members.push(b),
            None => groups.push((k, vec![b])),
        }
    }
    // A strict majority has one key at most.
    let majority = groups.iter().find(|(k, members)| *k != reference_key && 2 * members.len() > ballots.len());
    if let Some((_, members)) = majority {
        let modules = distinct_modules(members.iter().copied());
        if modules >= MAJORITY_MODULES {
            return Vote::Suspect { runs: members.len(), modules };
        }
    }
    Vote::WrongCode(
        ballots
            .iter()
            .enumerate()
            .filter_map(|(i, b)| execution_failure(&b.execution, reference).map(|f| (i, f)))
            .collect(),
    )
}

/// The de-duplication key of a failure whose sequence was reduced to `reduced`, and the
/// pass it is blamed on (the reduced sequence's last, as LLVM's developers do).
///
/// Crashes are keyed on their top LLVM frames: one cause, one stack. Wrong code is keyed
/// on the reduced sequence's passes in order, not on the last pass alone: one campaign's
/// single wrong-code cause ended on four different last passes (fuzzing-lessons.md).
/// The [`bug_key`] of a failure whose key does not depend on its sequence (a crash with
/// an assertion or frames, a code generator failure): known before any reduction.
pub fn key_before_reduction(failure: &Failure, frames: &[String]) -> Option<String> {
    let independent = match failure.kind {
        FailureKind::Crash if in_preserved_check(frames) => false,
        FailureKind::Crash => failure.signature.starts_with(ASSERTION) || !frames.is_empty(),
        FailureKind::Codegen => true,
        _ => false,
    };
    independent.then(|| bug_key(failure, &Sequence::default(), frames).0)
}

/// What ctos's check of destroyed values (src/llvm/shim.cpp) asserts, as an assertions
/// build of LLVM does: a release `opt` goes on and reads the dangling use later, or not.
pub const USES_REMAIN: &str = "Uses remain when a value is destroyed!";

/// The frame a crash in ctos's check of a kept ScalarEvolution has on top: its signature says
/// it, and plain `opt` shows it with `verify<scalar-evolution>`.
pub const SCEV_CHECK_FRAME: &str = "llvm::ScalarEvolution::verify";

/// The analysis ctos's check of kept analyses (`-ctos-check-preserved`) found stale, when
/// that check is what failed (`signature`): a failure plain `opt` shows only with the
/// analysis's verifier appended.
pub fn stale_analysis(signature: &str) -> Option<&'static str> {
    if signature.contains(SCEV_CHECK_FRAME) {
        return Some("ScalarEvolution");
    }
    ["DominatorTree", "LoopInfo"].into_iter().find(|a| signature.contains(&format!("{a} is stale after pass")))
}

/// The passes a loop pass's adaptor runs before it without the pipeline's text naming
/// them (LLVM's `FunctionToLoopPassAdaptor`: LoopSimplify, then LCSSA), by class name and
/// pipeline name.
const ADAPTOR_PASSES: [(&str, &str); 2] = [("LCSSAPass", "lcssa"), ("LoopSimplifyPass", "loop-simplify")];

/// The pipeline name of the pass that broke the IR, from the verifier's `after pass "…"`
/// in `message`, when it is one of those a loop adaptor runs unnamed: their bugs show
/// under every loop pass, and the sequence's last pass is not the culprit.
pub fn adaptor_pass_that_broke(message: &str) -> Option<&'static str> {
    let class = message.split("after pass \"").nth(1)?.split('"').next()?;
    ADAPTOR_PASSES.iter().find(|(c, _)| *c == class).map(|(_, name)| *name)
}

/// Whether a crash happened in ctos's check of the analyses a pass kept
/// (`-ctos-check-preserved`; ScalarEvolution::verify aborts there): the pass is to blame.
fn in_preserved_check(frames: &[String]) -> bool {
    frames.iter().take(3).any(|f| f.contains("checkPreservedAnalyses"))
}

pub fn bug_key(failure: &Failure, reduced: &Sequence, frames: &[String]) -> (String, String) {
    let passes: Vec<&str> = reduced.passes().iter().map(|p| p.name.as_str()).collect();
    let last = passes.last().copied().unwrap_or("?").to_string();
    let kind = failure.kind.as_str();
    let key = match failure.kind {
        // Every pass that destroys a used value fails this one assertion: where it was
        // destroyed tells the bugs apart.
        FailureKind::Crash if failure.signature.contains(USES_REMAIN) => {
            format!("{kind}|{}|{}", failure.signature, frames.iter().take(5).cloned().collect::<Vec<_>>().join(" < "))
        }
        FailureKind::Crash if failure.signature.starts_with(ASSERTION) => format!("{kind}|{}", failure.signature),
        FailureKind::Crash if in_preserved_check(frames) => {
            format!("{kind}|{last}|{}", frames[0])
        }
        FailureKind::Crash if !frames.is_empty() => {
            format!("{kind}|{}", frames.iter().take(3).cloned().collect::<Vec<_>>().join(" < "))
        }
        FailureKind::Crash | FailureKind::Fatal | FailureKind::InvalidIr => {
            format!("{kind}|{last}|{}", failure.signature)
        }
        FailureKind::Timeout | FailureKind::Oom => format!("{kind}|{last}"),
        FailureKind::Codegen => format!("{kind}|{}", failure.signature),
        FailureKind::WrongCode => {
            let mut distinct: Vec<&str> = Vec::new();
            for p in &passes {
                if !distinct.contains(p) {
                    distinct.push(p);
                }
            }
            format!("{kind}|{}", distinct.join(" "))
        }
    };
    (key, last)
}

/// The frames of `run`'s crash, innermost first (none without a crash).
fn crash_frames(run: &Run) -> &[String] {
    run.crash.as_ref().map_or(&[], |c| &c.frames)
}

#[cfg(test)]
mod tests;
