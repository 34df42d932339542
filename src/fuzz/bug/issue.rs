//! What a bug folder tells a maintainer once its bug is known: the reduced reproducer
//! at the top of its README, and `ISSUE.md`, a draft in the form LLVM's tracker uses.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::fuzz::bug::bugs::{opt_commands, tools, Tools};
use crate::fuzz::bug::fires;
use crate::fuzz::bug::fires::{fires_line, FiresOn};
use crate::fuzz::bug::interesting::{Baseline, FILLS};
use crate::fuzz::bug::reduce_ir::IrReduction;
use crate::fuzz::bug::stale_loop::StaleLoop;
use crate::fuzz::bug::suspects::Suspects;
use crate::fuzz::campaign::Campaign;
use crate::fuzz::folder::store::BugRow;
use crate::oracle::FailureKind;
use crate::program::driver::{POISON_OBSERVED, UNDEFINED};
use crate::seq::Sequence;

/// IR longer than this is attached to a report rather than pasted into it.
const INLINE_LINES: usize = 200;

/// What a bug folder gains after the bug is known, kept in its `outcome.json` (each
/// step's key present once the step ran, so that a resumed campaign does the rest).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Findings {
    pub reduced_ir: Option<IrReduction>,
    pub fires_on: Option<Vec<FiresOn>>,
    pub suspects: Option<Suspects>,
    /// Whether production pipelines run every pass of its (shortest) reduced sequence.
    pub production_only: Option<bool>,
    pub bisected: Option<Bisected>,
    /// For a stale trip count: the loop, as ScalarEvolution's verifier printed it.
    pub stale_loop: Option<StaleLoop>,
    /// For wrong code: the reproducer run unoptimized, under the checks for undefined
    /// behaviour ctos has.
    pub unoptimized: Option<Baseline>,
}

/// The pass run after which an optimizer failure first shows under the reproducer's
/// command, numbered as `opt -opt-bisect-limit=N` numbers them: the culprit as LLVM's
/// developers name it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bisected {
    /// The smallest `-opt-bisect-limit` that fails; None when none below the pipeline's
    /// own count does (then `note` says why).
    pub limit: Option<u32>,
    /// The pass that run is (`loop-extract`).
    pub pass: Option<String>,
    pub note: Option<String>,
    /// For wrong code with a generated driver: the first pass run, up to the one above,
    /// after which the driver's calls break a rule of the checks for undefined behaviour
    /// (a pass that makes the program undefined where the input was not, which a later
    /// pass may be the one to expose); None when none does or it was not checked.
    #[serde(default)]
    pub undefined: Option<UndefinedFrom>,
}

/// The pass run after which the driver's calls first run undefined, and the rule broken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UndefinedFrom {
    pub limit: u32,
    pub pass: String,
    /// "call 0: a division by zero".
    pub rule: String,
}

impl Bisected {
    /// No pass run named, and why.
    pub fn unnamed(why: String) -> Bisected {
        Bisected { limit: None, pass: None, note: Some(why), undefined: None }
    }

    /// For the README and ISSUE.md, after the command it refers to.
    fn text(&self) -> String {
        let mut text = self.limit_text();
        if let (Some(n), Some(u)) = (self.limit, &self.undefined) {
            let checks = "ctos's poison tracking (run on the optimized code with the same driver)";
            text.push_str(&if u.limit < n {
                format!(
                    "Under {checks}, a call already observes poison or behaves undefinedly after pass run {}, \
                     `{}` ({}), which the unoptimized program does not: that pass makes the program undefined, \
                     and pass run {n} shows it.\n\n",
                    u.limit, u.pass, u.rule
                )
            } else {
                format!(
                    "Under {checks}, a call observes poison or behaves undefinedly after pass run {n} ({}), which \
                     the unoptimized program does not: the pass makes the program undefined.\n\n",
                    u.rule
                )
            });
        }
        text
    }

    fn limit_text(&self) -> String {
        match (self.limit, &self.pass) {
            // Limit 0 runs every pass here: whether none at all would fail is not known.
            (Some(1), Some(pass)) => format!(
                "With `-opt-bisect-limit=1` added, the command fails as above already: the first pass run, \
                 `{pass}`, or a pass that cannot be skipped, is where it shows.\n\n"
            ),
            (Some(n), Some(pass)) => format!(
                "With `-opt-bisect-limit={n}` added, the command fails as above; with `-opt-bisect-limit={}` it \
                 does not: pass run {n}, `{pass}`, is where it first shows.\n\n",
                n - 1
            ),
            _ => format!(
                "`-opt-bisect-limit` does not name one pass run: {}.\n\n",
                self.note.as_deref().unwrap_or("no limit below the pipeline's own count of runs fails")
            ),
        }
    }
}

impl Findings {
    pub fn read(folder: &Path) -> Findings {
        crate::files::read_regular_text(&folder.join("outcome.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    /// Merge these findings into the folder's `outcome.json`.
    pub fn write(&self, folder: &Path) -> Result<()> {
        let path = folder.join("outcome.json");
        let mut outcome: serde_json::Value = serde_json::from_str(&crate::files::read_regular_text(&path)?)?;
        if let (Some(o), serde_json::Value::Object(f)) = (outcome.as_object_mut(), serde_json::to_value(self)?) {
            o.extend(f.into_iter().filter(|(_, v)| !v.is_null()));
        }
        std::fs::write(&path, serde_json::to_string_pretty(&outcome)?)?;
        Ok(())
    }

    /// The newest LLVM the campaign knows no longer fires it: the major version it is
    /// fixed in (see [`crate::fuzz::bug::fires::fixed_in`]).
    pub fn fixed_in(&self) -> Option<u32> {
        self.fires_on.as_deref().and_then(fires::fixed_in)
    }

    /// One line per finding, for `ctos report` and the campaign page.
    pub fn summary_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some(n) = self.fixed_in() {
            lines.push(format!("fixed in LLVM {n}: it no longer fires there"));
        }
        match &self.reduced_ir {
            Some(IrReduction { file: Some(f), lines: n, lines_before, seconds, pipeline, .. }) => {
                let shorter = if pipeline.is_some() { ", a shorter sequence" } else { "" };
                lines.push(format!("reduced: {f}, {n} lines (from {lines_before}) in {seconds} s{shorter}"))
            }
            Some(IrReduction { note: Some(note), .. }) => lines.push(format!("not reduced: {note}")),
            _ => {}
        }
        if let Some(all) = &self.fires_on {
            lines.push(format!("fires on: {}", fires_line(all)));
        }
        if let Some(Bisected { limit: Some(n), pass: Some(pass), undefined, .. }) = &self.bisected {
            lines.push(format!("-opt-bisect-limit: first fails at pass run {n}, {pass}"));
            if let Some(u) = undefined {
                lines.push(format!("undefined from pass run {}, {} ({})", u.limit, u.pass, u.rule));
            }
        }
        if self.production_only == Some(true) {
            lines.push("production-only: clang's default pipelines run all its passes".into());
        }
        if let Some(s) = &self.suspects {
            let files: Vec<&str> = s.files.iter().map(|f| f.rsplit('/').next().unwrap_or(f)).collect();
            let culprit = s.culprit.as_deref().unwrap_or("?");
            match &s.note {
                Some(note) if files.is_empty() => lines.push(format!("culprit: {culprit}; no files ({note})")),
                _ => lines.push(format!("culprit: {culprit}; suspected: {}", files.join(", "))),
            }
        }
        lines
    }

    /// The pass sequence that goes with [`Findings::reproducer`].
    pub fn pipeline<'a>(&'a self, bug: &'a BugRow) -> &'a str {
        self.reduced_ir.as_ref().and_then(|r| r.pipeline.as_deref()).unwrap_or(&bug.reduced)
    }

    /// The culprit pass under [`Findings::pipeline`]: the last pass of the shorter
    /// sequence when the reduced program has one, else the campaign's.
    pub fn culprit<'a>(&'a self, bug: &'a BugRow) -> &'a str {
        self.reduced_ir.as_ref().and_then(|r| r.culprit.as_deref()).unwrap_or(&bug.pass)
    }

    /// The IR file a maintainer should run: the reduced one, else the program as found.
    pub fn reproducer(&self, program: &str) -> String {
        self.reduced_ir.as_ref().and_then(|r| r.file.clone()).unwrap_or_else(|| program.to_string())
    }
}

/// The component LLVM's tracker titles a pass's bugs with: `NewGVNPass` → `NewGVN`; the
/// culprit's name when its class is unknown, the one the report's culprit line names.
fn component(bug: &BugRow, findings: &Findings) -> String {
    let suspects = findings.suspects.as_ref();
    match suspects.and_then(|s| s.class.as_deref()) {
        Some(class) => {
            let name = class.rsplit("::").next().unwrap_or(class);
            name.strip_suffix("Pass").filter(|n| !n.is_empty()).unwrap_or(name).to_string()
        }
        None => suspects.and_then(|s| s.culprit.clone()).unwrap_or_else(|| findings.culprit(bug).to_string()),
    }
}

/// `[LoopExtractor] crash: SIGSEGV in llvm::LoopInfo::erase`.
pub fn title(bug: &BugRow, findings: &Findings) -> String {
    let what = match FailureKind::parse(&bug.kind) {
        Some(FailureKind::Crash) => "crash",
        Some(FailureKind::Fatal) => "LLVM ERROR",
        Some(FailureKind::InvalidIr) => "produces invalid IR",
        Some(FailureKind::WrongCode) => "miscompile",
        Some(FailureKind::Timeout) => "hang",
        Some(FailureKind::Oom) => "memory blow-up",
        _ => bug.kind.as_str(),
    };
    format!("[{}] {what}: {}", component(bug, findings), bug.signature)
}

/// The section the README leads with once the findings are in.
pub fn readme_section(c: &Campaign, bug: &BugRow, findings: &Findings, program: &str) -> String {
    let file = findings.reproducer(program);
    let mut text = String::from("## Reduced reproducer\n\n");
    match &findings.reduced_ir {
        Some(IrReduction { file: Some(f), lines_before, lines, seconds, finished, pipeline, .. }) => {
            text.push_str(&format!(
                "`{f}`: {lines} lines (from {lines_before}), reduced with llvm-reduce in {seconds} s{}; \
                 it fails as the program did under {}:\n\n",
                if *finished { "" } else { ", stopped at its time limit" },
                if pipeline.is_some() { "a shorter sequence than the program needed" } else { "the reduced sequence" }
            ))
        }
        Some(IrReduction { note: Some(note), .. }) => text.push_str(&format!("Not reduced: {note}.\n\n")),
        _ => {}
    }
    text.push_str(&format!("```sh\n{}```\n\n", opt_commands(c, &tools(c), bug, findings.pipeline(bug), &file)));
    text.push_str(&findings.bisected.as_ref().map(Bisected::text).unwrap_or_default());
    text.push_str(&another_culprit_note(bug, findings));
    text.push_str(&stale_analysis_note(bug, findings));
    text.push_str(strict_checks_note(bug, &c.dir.join(&bug.dir)));
    if let Some(all) = &findings.fires_on {
        let fixed = findings.fixed_in().map(|n| format!(" (fixed in LLVM {n}: it no longer fires there)"));
        text.push_str(&format!("Fires on: {}{}\n", fires_line(all), fixed.unwrap_or_default()));
        for f in all.iter().filter(|f| f.note.is_some()) {
            text.push_str(&format!("* LLVM {}: {}\n", f.llvm, f.note.as_deref().unwrap_or("")));
        }
        text.push('\n');
    }
    if let Some(s) = &findings.suspects {
        text.push_str(&suspects_lines(s, &s.command));
        text.push('\n');
    }
    text.push_str("`ISSUE.md` drafts the report for LLVM's tracker.\n\n");
    text
}

/// When the reproducer's failure first shows after another pass than the culprit the
/// campaign's run blamed: reduction kept a failure, perhaps not the same one (a reduced
/// wrong-code program may print anything, so long as optimized and unoptimized differ).
fn another_culprit_note(bug: &BugRow, findings: &Findings) -> String {
    let Some(pass) = findings.bisected.as_ref().and_then(|b| b.pass.as_deref()) else { return String::new() };
    let culprit = findings.culprit(bug);
    if culprit.split('<').next() == Some(pass) {
        return String::new();
    }
    format!(
        "The culprit above is `{culprit}`, the last pass of the sequence the campaign's run blamed; on \
         the reproducer the failure first shows after `{pass}`: it may be another bug than the one the \
         campaign found.\n\n"
    )
}

/// A failure of ctos's check of destroyed values: plain release `opt` does not make it.
/// What plain `opt` may show of a failure ctos showed with its own checks: the value
/// destroyed while used, or the strict heap (the folder's `outcome.json` says which heap).
fn strict_checks_note(bug: &BugRow, folder: &Path) -> &'static str {
    if bug.signature.contains(crate::oracle::USES_REMAIN) {
        return "The failure is ctos's check that no pass destroys a value still in use, the check an \
                assertions build of LLVM makes in `Value::~Value` (\"Uses remain when a value is destroyed!\"). \
                A release `opt` goes on with the dangling use: the command above may crash later, \
                elsewhere, or not at all there; an assertions build stops where ctos did.\n\n";
    }
    let outcome = crate::files::read_regular(&folder.join("outcome.json")).unwrap_or_default();
    let heap = serde_json::from_slice::<serde_json::Value>(&outcome).ok().and_then(|o| o.get("heap").cloned());
    if heap.as_ref().and_then(|h| h.as_str()) != Some("strict") {
        return "";
    }
    "ctos shows the failure with freed and fresh memory filled with poison and the stack \
     below the passes painted (its strict heap): the pass reads memory it never wrote or has \
     freed. With glibc's own heap, as in a plain `opt`, what it reads is whatever was there: \
     the command above may fail otherwise, or not at all; `valgrind` or an AddressSanitizer \
     build of LLVM shows the read.\n\n"
}

/// What a bug whose only evidence is ctos's check of kept analyses rests on, and what
/// was not checked: maintainers weigh a stale analysis by whether it can mislead.
fn stale_analysis_note(bug: &BugRow, findings: &Findings) -> String {
    let Some(analysis) = crate::oracle::stale_analysis(&bug.signature) else { return String::new() };
    let loops = if analysis == "ScalarEvolution" {
        format!(
            " A stale trip count matters only for a loop that exits: ScalarEvolution's verifier \
             compares trip counts even of loops that never do, and LLVM's maintainers have closed \
             such reports as false positives. {}",
            findings
                .stale_loop
                .as_ref()
                .map_or_else(|| "Not checked here: whether this loop can run forever.".to_string(), StaleLoop::text)
        )
    } else {
        String::new()
    };
    format!(
        "The only evidence is an analysis check: after `{}`, the {analysis} it declared \
         preserved no longer matches the IR (ctos's `--check-preserved`; plain `opt` shows \
         it with the verifier pass the command appends). The optimized IR itself verifies, \
         and no wrong code was seen: a stale analysis is a miscompilation only if a later \
         pass reads it.{loops}\n\n",
        findings.culprit(bug)
    )
}

/// The culprit, suspected files and functions, found by `command` (the localization's, as it ran or
/// as it runs elsewhere).
fn suspects_lines(s: &Suspects, command: &str) -> String {
    let culprit = match (&s.culprit, &s.class) {
        (Some(p), Some(c)) => format!("`{p}` ({c})"),
        (Some(p), None) => format!("`{p}`"),
        _ => "not found".to_string(),
    };
    let mut text = format!("Culprit pass: {culprit}; suspected files (`{command}`, {} s):\n", s.seconds);
    for (i, file) in s.files.iter().enumerate() {
        text.push_str(&format!("{}. `{file}`\n", i + 1));
    }
    if !s.functions.is_empty() {
        text.push_str("\nSuspected functions:\n");
        for (i, (name, file)) in s.functions.iter().enumerate() {
            let file = file.rsplit('/').next().unwrap_or(file);
            text.push_str(&format!("{}. `{name}` ({file})\n", i + 1));
        }
    }
    if let Some(note) = &s.note {
        text.push_str(&format!("({note})\n"));
    }
    text
}

/// Put `section` at the head of the README in `folder` (before "## Reproduce"),
/// replacing an earlier one, under the title `title`: the folder was named before its
/// program was reduced, and the reduced program may fail under an earlier pass.
pub fn lead_readme_with(folder: &Path, title: &str, section: &str) -> Result<()> {
    let path = folder.join("README.md");
    let mut text = std::fs::read_to_string(&path)?;
    if text.starts_with("# ") {
        let end = text.find('\n').unwrap_or(text.len());
        text.replace_range(..end, title);
    }
    if let Some(start) = text.find("## Reduced reproducer\n") {
        let end = text[start..].find("## Reproduce\n").map_or(text.len(), |e| start + e);
        text.replace_range(start..end, "");
    }
    let at = text.find("## Reproduce\n").unwrap_or(text.len());
    text.insert_str(at, section);
    std::fs::write(path, text)?;
    Ok(())
}

/// `ISSUE.md`: title, reproducer, command, expected vs actual, versions, suspects and
/// whether the sequence is one a default pipeline could run.
pub fn issue_text(c: &Campaign, bug: &BugRow, findings: &Findings, folder: &Path, program: &str) -> String {
    let kind = FailureKind::parse(&bug.kind).unwrap_or(FailureKind::Crash);
    let file = findings.reproducer(program);
    let ir = std::fs::read_to_string(folder.join(&file)).unwrap_or_default();
    let lines = ir.lines().count();
    let mut text = format!(
        "<!-- A draft by ctos fuzz: check it, then file it at https://github.com/llvm/llvm-project/issues -->\n\
         # {}\n\n`opt -passes='{}'` {} on the IR below (found by a pass-sequence fuzzer, ctos; LLVM {}).\n\n",
        title(bug, findings),
        findings.pipeline(bug),
        match kind {
            FailureKind::Crash => "crashes",
            FailureKind::Fatal => "stops with a fatal error",
            FailureKind::InvalidIr => "produces IR the verifier rejects",
            FailureKind::WrongCode => "miscompiles the program",
            FailureKind::Timeout => "does not finish",
            FailureKind::Oom => "runs out of memory",
            _ => "fails",
        },
        tools(c).version
    );
    // Read on another machine: its tools by their names, the version said once.
    let tools = Tools::as_anyone_has_them(c);
    let commands = opt_commands(c, &tools, bug, findings.pipeline(bug), &file);
    text.push_str(&format!("```sh\n{}{commands}```\n\n", tools.version_line()));
    text.push_str(&findings.bisected.as_ref().map(Bisected::text).unwrap_or_default());
    text.push_str(&another_culprit_note(bug, findings));
    if (1..=INLINE_LINES).contains(&lines) {
        text.push_str(&format!("`{file}` ({lines} lines):\n\n```llvm\n{}\n```\n\n", ir.trim_end()));
    } else {
        text.push_str(&format!("`{file}` ({lines} lines) is attached.\n\n"));
    }
    text.push_str(&expected_vs_actual(c, kind, bug, findings));
    if kind == FailureKind::WrongCode {
        let status = c.store.program(bug.program).map(|p| p.status).unwrap_or_default();
        let judged = status.strip_prefix(crate::fuzz::pairs::TESTED_WITH_WRONG_CODE);
        text.push_str(&undefined_behaviour_checked(findings, &file, judged));
    }
    text.push_str(&stale_analysis_note(bug, findings));
    text.push_str(strict_checks_note(bug, folder));
    if let Some(all) = &findings.fires_on {
        text.push_str("## Versions\n\n");
        for f in all {
            let verdict = match f.fires {
                Some(true) => "fires",
                Some(false) => "does not fire",
                None => "cannot tell",
            };
            let note = f.note.as_deref().map(|n| format!(" ({n})")).unwrap_or_default();
            text.push_str(&format!("* LLVM {}: {verdict}{note}\n", f.llvm));
        }
        text.push('\n');
    }
    if let Some(test) = super::lit_test::quoted(folder) {
        text.push_str(&format!(
            "## Regression test\n\n`{}` in the bug folder is the reproducer as a lit test (`lit -v .` there):\n\n```llvm\n{test}```\n\n",
            super::lit_test::TEST_FILE
        ));
    }
    if let Some(s) = &findings.suspects {
        text.push_str("## Where to look\n\n");
        text.push_str(&suspects_lines(s, &s.portable_command()));
        text.push('\n');
    }
    text.push_str(&production_note(c, findings.pipeline(bug)));
    text
}

/// What was checked to rule out undefined behaviour of the wrong-code reproducer `file`,
/// and what was not: a miscompilation report rests on the input being defined. `judged`:
/// what the campaign judged the program it came from by (the vote, the screening).
fn undefined_behaviour_checked(findings: &Findings, file: &str, judged: Option<&str>) -> String {
    let mut text = String::from(
        "## Undefined behaviour: what was checked

",
    );
    let Some(b) = &findings.unoptimized else {
        text.push_str(
            "Nothing: the unoptimized reproducer's checks were not recorded.

",
        );
        return text;
    };
    let [first, second] = FILLS;
    if let Some(clean) = b.checked_clean {
        text.push_str(&format!(
            "`{file}` has no `main`: `driver.ll`, generated by ctos, calls its functions on the inputs it \
             prints. Each call was kept only when the unoptimized function, run in a copy of the module \
             with a check before each instruction that can make poison or undefined behaviour, broke no \
             rule: `nsw`/`nuw`, `exact`, `disjoint`, `nneg`, `trunc nuw/nsw` and `samesign` flags, shift \
             amounts, division by zero and overflow, `assume`, `ctlz`/`cttz`/`abs` poison flags, vector \
             indices, a reached `unreachable`, `range`/`nonnull`/`align` of arguments and loads, every \
             access against the memory that exists (the arguments' memory, globals, the stack) and its \
             alignment, and `getelementptr inbounds`. The reproducer's calls {} those checks now. Not \
             checked: fast-math flags (functions with them are not called), dead stack frames, `noalias` \
             overlap, `fptosi`/`fptoui` out of range.\n\n",
            if clean { "pass" } else { "do not pass" },
        ));
        text.push_str(&format!(
            "Linked with `driver.ll` and unoptimized, {} whether fresh memory holds {first:#04x} or \
             {second:#04x} bytes. It has {} `undef` or `poison` operands, and LLVM's `lint` pass reports {} \
             findings of undefined behaviour in it.\n\n",
            if b.fill_stable { "it prints the same" } else { "it does not print the same" },
            b.undefined_values,
            b.lint_findings,
        ));
        return text;
    }
    text.push_str(&format!(
        "`{file}` runs without input (its `main`). Unoptimized, {} whether the memory it gets fresh (its \
         stack and heap blocks) holds {first:#04x} or {second:#04x} bytes, so {}. It has {} `undef` or \
         `poison` operands, and LLVM's `lint` pass reports {} findings of undefined behaviour in it. {} \
         Not checked: poison-generating flags (`nsw`, `nuw`, `exact`, …) and out-of-bounds accesses on \
         the path it runs, beyond what `lint` and the fills show.\n\n",
        if b.fill_stable { "it prints the same" } else { "it does not print the same" },
        if b.fill_stable {
            "it reads no memory it never wrote, as far as two fills show"
        } else {
            "it reads memory it never wrote, and an optimizer may make it print anything"
        },
        b.undefined_values,
        b.lint_findings,
        match judged {
            Some(how) => format!("In the campaign, the program it was reduced from: {how}."),
            None => "The campaign's verdict on the program it was reduced from was not recorded.".into(),
        },
    ));
    text
}

/// What the LLVM under test did with the reproducer, against what it should have done.
fn expected_vs_actual(c: &Campaign, kind: FailureKind, bug: &BugRow, findings: &Findings) -> String {
    let opt = c.llvm.external().map(|o| &o.opt);
    let under_test = findings.fires_on.as_ref().and_then(|all| all.iter().find(|f| f.opt.as_ref() == opt));
    let block = |s: &str| match s.trim_end() {
        "" => "```\n(no output)\n```\n".to_string(),
        text => format!("```\n{}\n```\n", crate::output::shorten(text, 2000)),
    };
    let mut text = String::from("## Expected vs actual\n\n");
    match kind {
        FailureKind::WrongCode => {
            let (expected, actual) =
                under_test.map_or((None, None), |f| (f.expected_stdout.as_deref(), f.actual_stdout.as_deref()));
            text.push_str("Expected (the unoptimized program, `lli` on the input):\n");
            text.push_str(&block(expected.unwrap_or("(not recorded)")));
            text.push_str(&format!("Actual ({}):\n", bug.signature));
            text.push_str(&block(actual.unwrap_or("(not recorded)")));
            if bug.signature.starts_with(POISON_OBSERVED) || bug.signature.starts_with(UNDEFINED) {
                text.push_str(&format!(
                    "\nThe optimized program may print the same under plain `lli`: what differs is {}, which \
                     ctos tracks through the optimized run with the same driver (each `ctos-poison:` line names \
                     the call, what observed the poison, and the instruction that made it; `ctos run` with \
                     `--driver` and `--exec` shows it).\n",
                    if bug.signature.starts_with(POISON_OBSERVED) { "poison" } else { "undefined behaviour" }
                ));
            }
        }
        _ => {
            text.push_str("Expected: `opt` finishes and the IR verifies.\n\nActual:\n");
            let message = under_test.and_then(|f| f.message.as_deref()).unwrap_or(&bug.signature);
            text.push_str(&block(message));
            // The in-process runner's own frames (Rust's, under LLVM's) mean nothing to LLVM.
            let frames: Vec<&String> = under_test
                .map(|f| f.frames.iter().take_while(|f| !f.starts_with("std::") && !f.starts_with("ctos::")).collect())
                .unwrap_or_default();
            if !frames.is_empty() {
                let frames: Vec<&str> = frames.into_iter().map(String::as_str).collect();
                text.push_str("\nInnermost LLVM frames:\n");
                text.push_str(&block(&frames.join("\n")));
            }
        }
    }
    text.push('\n');
    text
}

/// The passes of `pipeline` that no production pipeline (clang's `-O1` … `-Oz`, (Thin)LTO)
/// runs, by name; None when the pipeline does not parse.
pub fn outside_production(c: &Campaign, pipeline: &str) -> Option<Vec<String>> {
    let production = c.catalog.set("production").ok()?;
    let seq = Sequence::parse_with(pipeline, &c.catalog, &c.config.render()).ok()?;
    let mut outside: Vec<String> = Vec::new();
    for pass in seq.passes() {
        if !production.iter().any(|p| p.name == pass.name) && !outside.contains(&pass.name) {
            outside.push(pass.name.clone());
        }
    }
    Some(outside)
}

/// Whether the production pipelines run every pass of the reduced sequence: maintainers
/// weigh a bug that `-O2` can meet above one only a custom pipeline can.
fn production_note(c: &Campaign, pipeline: &str) -> String {
    let Some(outside) = outside_production(c, pipeline) else { return String::new() };
    let names: Vec<String> = outside.iter().map(|n| format!("`{n}`")).collect();
    let all_outside = Sequence::parse_with(pipeline, &c.catalog, &c.config.render())
        .is_ok_and(|seq| seq.passes().iter().all(|p| outside.contains(&p.name)));
    let pipelines = "clang's default pipelines (`-O1` … `-O3`, `-Os`, `-Oz`, (Thin)LTO)";
    let mut text = String::from("## The pass sequence\n\n");
    text.push_str(&match (outside.is_empty(), all_outside) {
        (true, _) => format!(
            "Production-only: {pipelines} run every pass of it (in another order, maybe with other parameters).\n"
        ),
        (false, true) => format!("{pipelines} run none of its passes: {}.\n", names.join(", ")),
        (false, false) => format!("Not in {pipelines}: {}; the others are.\n", names.join(", ")),
    });
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bug(pass: &str) -> BugRow {
        BugRow {
            id: 1,
            key: String::new(),
            kind: "crash".into(),
            pass: pass.into(),
            signature: "SIGABRT in llvm::ScalarEvolution::verify".into(),
            reduced: format!("loop-simplifycfg,{pass}"),
            program: 1,
            first_seen: String::new(),
            count: 1,
            dir: String::new(),
        }
    }

    /// The reduced program fails under a shorter sequence that ends before the
    /// campaign's culprit: the title, fires-on and the culprit line name the same pass.
    #[test]
    fn the_title_names_the_culprit_of_the_sequence_the_report_gives() {
        let bug = bug("loop-unroll-full");
        let mut findings = Findings::default();
        assert_eq!(title(&bug, &findings), "[loop-unroll-full] crash: SIGABRT in llvm::ScalarEvolution::verify");
        let mut reduction = IrReduction::not_reduced(Path::new("/nonexistent.ll"), 1.0, true, String::new());
        reduction.pipeline = Some("loop-simplifycfg".into());
        reduction.culprit = Some("loop-simplifycfg".into());
        findings.reduced_ir = Some(reduction);
        assert_eq!((findings.pipeline(&bug), findings.culprit(&bug)), ("loop-simplifycfg", "loop-simplifycfg"));
        assert!(title(&bug, &findings).starts_with("[loop-simplifycfg] crash"), "{}", title(&bug, &findings));
        // A localization that saw the pass run names its class, as LLVM's tracker does.
        findings.suspects = Some(Suspects {
            culprit: Some("loop-simplifycfg".into()),
            class: Some("llvm::LoopSimplifyCFGPass".into()),
            ..Suspects::default()
        });
        assert!(title(&bug, &findings).starts_with("[LoopSimplifyCFG] crash"), "{}", title(&bug, &findings));
    }

    #[test]
    fn the_readme_leads_with_the_title_of_the_reduced_culprit() {
        let folder = tempfile::tempdir().unwrap();
        let old = "# crash in `loop-unroll-full`\n\nSIGABRT\n\n## Reduced reproducer\nold\n## Reproduce\nx\n";
        std::fs::write(folder.path().join("README.md"), old).unwrap();
        lead_readme_with(folder.path(), "# crash in `loop-simplifycfg`", "## Reduced reproducer\nnew\n").unwrap();
        let text = std::fs::read_to_string(folder.path().join("README.md")).unwrap();
        assert_eq!(text, "# crash in `loop-simplifycfg`\n\nSIGABRT\n\n## Reduced reproducer\nnew\n## Reproduce\nx\n");
    }

    #[test]
    fn a_bug_only_an_analysis_check_shows_says_so() {
        let findings = Findings::default();
        let note = stale_analysis_note(&bug("loop-simplifycfg"), &findings);
        assert!(
            note.contains("after `loop-simplifycfg`, the ScalarEvolution") && note.contains("run forever"),
            "{note}"
        );
        let mut fatal = bug("licm");
        fatal.signature = "DominatorTree is stale after pass \"licm\", which kept it".into();
        assert!(stale_analysis_note(&fatal, &findings).contains("the DominatorTree it declared"));
        fatal.signature = "SIGSEGV in llvm::LICMPass::run".into();
        assert_eq!(stale_analysis_note(&fatal, &findings), "");
    }

    #[test]
    fn a_reproducer_that_first_fails_after_another_pass_says_so() {
        let bug = bug("slp-vectorizer");
        let bisected = Bisected { limit: Some(3), pass: Some("slp-vectorizer".into()), note: None, undefined: None };
        let mut findings = Findings { bisected: Some(bisected), ..Findings::default() };
        assert_eq!(another_culprit_note(&bug, &findings), "");
        findings.bisected =
            Some(Bisected { limit: Some(2), pass: Some("instcombine".into()), note: None, undefined: None });
        let note = another_culprit_note(&bug, &findings);
        assert!(note.contains("first shows after `instcombine`") && note.contains("another bug"), "{note}");
        assert_eq!(another_culprit_note(&bug, &Findings::default()), "");
    }

    #[test]
    fn a_failure_of_ctos_s_own_checks_says_what_release_opt_shows() {
        let mut crash = bug("loop-deletion");
        crash.signature = format!("assertion failed: llvm::Value::~Value(): {}", crate::oracle::USES_REMAIN);
        let folder = tempfile::tempdir().unwrap();
        let note = |crash: &BugRow| strict_checks_note(crash, folder.path());
        assert!(note(&crash).contains("A release `opt` goes on"), "{}", note(&crash));
        crash.signature = "SIGSEGV in llvm::Instruction::getFunction".into();
        assert_eq!(note(&crash), "");
        // A failure the strict heap showed says what plain opt may show of it.
        std::fs::write(folder.path().join("outcome.json"), r#"{"heap": "strict"}"#).unwrap();
        assert!(note(&crash).contains("may fail otherwise, or not at all"), "{}", note(&crash));
        std::fs::write(folder.path().join("outcome.json"), r#"{"heap": "plain"}"#).unwrap();
        assert_eq!(note(&crash), "");
    }

    /// A failure at the first pass run cannot claim that no run at all is clean: the
    /// sandbox's limit 0 runs every pass.
    #[test]
    fn a_bisection_claims_a_clean_limit_below_only_when_it_tried_one() {
        let at = |limit| Bisected { limit: Some(limit), pass: Some("licm".into()), note: None, undefined: None }.text();
        assert!(at(5).contains("with `-opt-bisect-limit=4` it does not: pass run 5, `licm`"), "{}", at(5));
        assert!(!at(1).contains("-opt-bisect-limit=0"), "{}", at(1));
        assert!(at(1).contains("fails as above already"), "{}", at(1));
    }
}
