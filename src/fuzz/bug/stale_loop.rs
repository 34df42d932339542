//! The loop behind a stale trip count, as ScalarEvolution's verifier prints it: whether it
//! can run forever decides whether maintainers take the report. The verifier compares trip
//! counts even of loops that never exit, and such reports have been closed as false
//! positives; a loop that exits after a count computed from the IR has a wrong kept count.

use serde::{Deserialize, Serialize};

/// What the verifier said of the loop whose kept trip count no longer matches the IR.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StaleLoop {
    /// Its blocks as printed (`%loop1<header><exiting>,%latch1<latch>`); None when the
    /// verifier's lines were not found (then `note` says why).
    pub blocks: Option<String>,
    /// The blocks it exits from.
    pub exiting: Vec<String>,
    /// The backedge-taken count ScalarEvolution kept, and the one it computes from the IR.
    pub kept: Option<String>,
    pub recomputed: Option<String>,
    pub note: Option<String>,
}

/// How ScalarEvolution prints a count it cannot compute.
const COULD_NOT_COMPUTE: &str = "***COULDNOTCOMPUTE***";

impl StaleLoop {
    /// From the stderr of a run that `ScalarEvolution::verify` stopped:
    /// `Trip Count for Loop at depth 1 containing: %a<header><exiting>,%b<latch>`, then
    /// ` Changed!`, `Old: 0`, `New: 2`.
    pub fn from_verifier(stderr: &str) -> Option<StaleLoop> {
        let mut lines = stderr.lines().skip_while(|l| !l.starts_with("Trip Count for Loop at depth"));
        let blocks = lines.next()?.split_once(" containing: ")?.1.trim().to_string();
        let exiting = blocks
            .split(',')
            .filter(|b| b.contains("<exiting>"))
            .map(|b| b.split('<').next().unwrap_or(b).to_string())
            .collect();
        let mut value = |prefix: &str| {
            lines.find_map(|l| l.strip_prefix(prefix)).map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
        };
        let kept = value("Old: ");
        let recomputed = value("New: ");
        Some(StaleLoop { blocks: Some(blocks), exiting, kept, recomputed, note: None })
    }

    /// Not read, and why.
    pub fn unread(why: String) -> StaleLoop {
        StaleLoop { blocks: None, exiting: Vec::new(), kept: None, recomputed: None, note: Some(why) }
    }

    /// One sentence for the README and ISSUE.md: whether the loop can run forever.
    pub fn text(&self) -> String {
        let Some(blocks) = &self.blocks else {
            return format!(
                "Not checked: whether this loop can run forever ({}).",
                self.note.as_deref().unwrap_or("the verifier's lines were not found")
            );
        };
        let kept = self.kept.as_deref().unwrap_or("?");
        match self.recomputed.as_deref() {
            _ if self.exiting.is_empty() => format!(
                "The loop (`{blocks}`) has no exiting block: once entered it runs forever, the case \
                 that has been called a false positive."
            ),
            Some(new) if !new.contains(COULD_NOT_COMPUTE) => format!(
                "The loop (`{blocks}`) exits from `{}`, and ScalarEvolution computes its backedge-taken \
                 count from the optimized IR as `{new}`, where the kept one is `{kept}`: it is not a loop \
                 that never exits, and a pass that reads the kept count reads a wrong one. Whether it can run forever on some inputs was \
                 checked only as far as that count goes (ScalarEvolution may assume that a loop of a \
                 `mustprogress` function ends).",
                self.exiting.join("`, `")
            ),
            _ => format!(
                "The loop (`{blocks}`) exits from `{}`, but ScalarEvolution cannot compute its \
                 backedge-taken count from the optimized IR (the kept one is `{kept}`): whether it can \
                 run forever was not established.",
                self.exiting.join("`, `")
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What opt-22 prints for llvm/llvm-project#187472 (tests/data/scev-stale-187472.ll).
    const PRINTED: &str = "Trip Count for Loop at depth 1 containing: %loop1<header><exiting>,%latch1<latch>\n \
                           Changed!\nOld: 0\nNew: 2\nDelta: -2\nPLEASE submit a bug report\n";

    #[test]
    fn a_loop_that_exits_after_a_computable_count_is_not_one_that_never_exits() {
        let stale = StaleLoop::from_verifier(PRINTED).unwrap();
        assert_eq!(stale.exiting, ["%loop1"]);
        assert_eq!((stale.kept.as_deref(), stale.recomputed.as_deref()), (Some("0"), Some("2")));
        let text = stale.text();
        assert!(text.contains("exits from `%loop1`") && text.contains("not a loop that never exits"), "{text}");
        assert!(text.contains("as `2`, where the kept one is `0`"), "{text}");
    }

    #[test]
    fn a_loop_without_an_exit_or_a_computable_count_is_not_called_finite() {
        let endless = PRINTED.replace("<header><exiting>", "<header>");
        let text = StaleLoop::from_verifier(&endless).unwrap().text();
        assert!(text.contains("no exiting block") && text.contains("false positive"), "{text}");
        let unknown = PRINTED.replace("New: 2", &format!("New: {COULD_NOT_COMPUTE}"));
        let text = StaleLoop::from_verifier(&unknown).unwrap().text();
        assert!(text.contains("was not established") && !text.contains("not a loop that never exits"), "{text}");
        assert_eq!(StaleLoop::from_verifier("SCEV for value %x changed!\n"), None);
    }
}
