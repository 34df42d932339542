//! A bug folder as a lit test: `test.ll` is the reproducer with RUN lines that do what a
//! correct LLVM does (optimize it without failing; for wrong code, print what it printed
//! unoptimized), marked `XFAIL: *`, and `lit.cfg` runs it with the `opt` the campaign ran.
//! `lit -v FOLDER` says XFAIL while the bug fires and XPASS once it no longer does; a fix's
//! regression test is the same file without the XFAIL line.

use std::path::Path;

use anyhow::{Context as _, Result};

use super::bugs::OptLine;
use crate::oracle::FailureKind;

/// The lit file of a bug folder.
pub const TEST_FILE: &str = "test.ll";

/// `test.ll`'s header: why it fails, its RUN lines and XFAIL; None for a failure lit cannot
/// show with plain `opt` and `lli` (a hang, code generation, wrong code through a driver).
pub fn run_lines(kind: FailureKind, what: &str, opt: &OptLine, with_driver: bool) -> Option<String> {
    let OptLine { pipeline, verify, args } = opt;
    let run = match kind {
        FailureKind::Crash | FailureKind::Fatal | FailureKind::InvalidIr => {
            format!("; RUN: %opt -passes={pipeline}{verify}{args} %s -disable-output\n")
        }
        FailureKind::WrongCode if !with_driver => format!(
            "; RUN: %lli %s > %t.expected; echo \"exit $?\" >> %t.expected\n\
             ; RUN: %opt -passes={pipeline}{args} %s -o %t.bc\n\
             ; RUN: %lli %t.bc > %t.actual; echo \"exit $?\" >> %t.actual\n\
             ; RUN: diff %t.expected %t.actual\n"
        ),
        _ => return None,
    };
    Some(format!(
        "; {what}\n\
         ; The RUN lines do what a correct LLVM does; while the bug fires they fail and lit\n\
         ; reports XFAIL, and once it no longer fires, XPASS. As a fix's regression test,\n\
         ; drop the XFAIL line. `lit -v .` here runs it; `lit -v -Dopt=PATH .` with another opt.\n\
         {run}; XFAIL: *\n\n"
    ))
}

/// The reproducer's text without lines lit would read as its own directives (a seed from
/// LLVM's tests keeps its RUN and CHECK lines).
fn without_directives(ir: &str) -> String {
    let directive = |l: &str| {
        let l = l.trim_start();
        l.starts_with(';')
            && ["RUN:", "CHECK", "XFAIL:", "REQUIRES:", "UNSUPPORTED:", "NOTE:"].iter().any(|d| l.contains(d))
    };
    ir.lines().filter(|l| !directive(l)).map(|l| format!("{l}\n")).collect()
}

/// `lit.cfg` for a folder named `name`, running `opt` (and the `lli` beside it) by default.
pub fn lit_cfg(name: &str, opt: &Path) -> String {
    let opt = opt.display().to_string().replace('\\', "\\\\").replace('\'', "\\'");
    format!(
        "# lit configuration of ctos bug folder {name}: `lit -v .` runs {TEST_FILE} with the opt the\n\
         # campaign ran; `lit -v -Dopt=PATH .` with another (`-Dlli=PATH` when lli is not beside it).\n\
         import os\n\
         import tempfile\n\
         import lit.formats\n\n\
         config.name = '{name}'\n\
         config.test_format = lit.formats.ShTest(execute_external=True)\n\
         config.suffixes = ['.ll']\n\
         config.test_source_root = os.path.dirname(os.path.abspath(__file__))\n\
         config.excludes = [f for f in os.listdir(config.test_source_root) if f != '{TEST_FILE}']\n\
         config.test_exec_root = os.path.join(tempfile.gettempdir(), 'ctos-lit', config.name)\n\
         opt = lit_config.params.get('opt', '{opt}')\n\
         lli = lit_config.params.get('lli', os.path.join(os.path.dirname(opt), 'lli'))\n\
         config.substitutions.append(('%opt', opt))\n\
         config.substitutions.append(('%lli', lli))\n"
    )
}

/// Write `test.ll` and `lit.cfg` into `folder` from the reproducer `ir` (text IR), when
/// there is a `header` (see [`run_lines`]).
pub fn write(folder: &Path, header: Option<String>, ir: &str, opt: &Path) -> Result<()> {
    let Some(header) = header else { return Ok(()) };
    let name = folder.file_name().map_or_else(|| "bug".to_string(), |n| n.to_string_lossy().into_owned());
    let test = folder.join(TEST_FILE);
    std::fs::write(&test, format!("{header}{}", without_directives(ir)))
        .with_context(|| format!("cannot write {}", test.display()))?;
    std::fs::write(folder.join("lit.cfg"), lit_cfg(&name, opt))?;
    Ok(())
}

/// The header of a folder's `test.ll`, to quote in its report.
pub fn quoted(folder: &Path) -> Option<String> {
    let text = std::fs::read_to_string(folder.join(TEST_FILE)).ok()?;
    Some(text.lines().take_while(|l| l.starts_with(';')).map(|l| format!("{l}\n")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(pipeline: &str) -> OptLine {
        OptLine { pipeline: format!("'{pipeline}'"), verify: "", args: " -slp-threshold=-99999".into() }
    }

    #[test]
    fn each_kind_runs_what_a_correct_llvm_does_and_is_expected_to_fail() {
        let broken = run_lines(FailureKind::InvalidIr, "broken IR", &line("function(slp-vectorizer)"), false).unwrap();
        assert!(broken
            .contains("; RUN: %opt -passes='function(slp-vectorizer)' -slp-threshold=-99999 %s -disable-output\n"));
        assert!(broken.ends_with("; XFAIL: *\n\n"), "{broken}");
        let wrong = run_lines(FailureKind::WrongCode, "wrong code", &line("instcombine"), false).unwrap();
        assert!(wrong.contains("; RUN: diff %t.expected %t.actual\n") && wrong.contains("%lli %t.bc"), "{wrong}");
        // What plain tools cannot show is left out.
        assert!(run_lines(FailureKind::WrongCode, "", &line("gvn"), true).is_none());
        assert!(run_lines(FailureKind::Timeout, "", &line("gvn"), false).is_none());
    }

    #[test]
    fn a_seeds_own_lit_directives_are_left_out() {
        let ir = "; RUN: opt -S %s | FileCheck %s\n; CHECK-LABEL: @f\ndefine void @f() {\n  ret void\n}\n";
        assert_eq!(without_directives(ir), "define void @f() {\n  ret void\n}\n");
    }
}
