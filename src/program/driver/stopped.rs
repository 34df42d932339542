//! What a run under a generated driver's checks printed about the calls it stopped:
//! `ctos-ub: call K: kind N` (a rule broken, or memory the checks know nothing of) and, in
//! an optimized run under poison tracking, `ctos-poison: call K: kind N: ORIGIN` (poison
//! observed, or immediate undefined behaviour, with the instruction that made it).

use super::{lines_by_call, ub_kind_name, FIRST_OBSERVED_KIND};

/// How the signature of wrong code starts when poison tracking observed poison, or
/// behaviour undefined at once.
pub const POISON_OBSERVED: &str = "poison observed: ";
pub const UNDEFINED: &str = "undefined behaviour: ";

/// A call a checked run stopped, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped {
    pub call: usize,
    pub kind: u32,
    /// The instruction that made the poison, or broke the rule, as `@f: `%t = …``.
    pub origin: Option<String>,
}

/// The calls `stdout` says were stopped, in order.
pub fn stopped_calls(stdout: &str) -> Vec<Stopped> {
    stdout
        .lines()
        .filter_map(|l| {
            let (rest, tracked) = match l.strip_prefix("ctos-poison: call ") {
                Some(rest) => (rest, true),
                None => (l.strip_prefix("ctos-ub: call ")?, false),
            };
            let (call, rest) = rest.split_once(": kind ")?;
            let (kind, origin) = match tracked {
                true => rest.split_once(": ").map(|(k, o)| (k, Some(o.to_string())))?,
                false => (rest.trim(), None),
            };
            Some(Stopped { call: call.parse().ok()?, kind: kind.trim().parse().ok()?, origin })
        })
        .collect()
}

impl Stopped {
    /// Whether poison was observed (rather than behaviour undefined at once).
    pub fn observed_poison(&self) -> bool {
        (FIRST_OBSERVED_KIND..100).contains(&self.kind)
    }

    /// The operation that made the poison (`add nsw`, `llvm.cttz`), from its origin.
    fn operation(&self) -> Option<String> {
        let origin = self.origin.as_deref()?;
        let text = origin.split_once('`')?.1.trim_end_matches('`');
        let rhs = text.split_once(" = ").map_or(text, |(_, r)| r);
        let mut words = rhs.split_whitespace();
        let opcode = words.next()?;
        if opcode.ends_with("call") || opcode == "tail" || opcode == "musttail" || opcode == "notail" {
            let callee = rhs.split('@').nth(1)?;
            return Some(callee.split('(').next()?.split('.').take(2).collect::<Vec<_>>().join("."));
        }
        let flags: Vec<&str> = words
            .take_while(|w| ["nsw", "nuw", "exact", "disjoint", "nneg", "inbounds", "samesign"].contains(w))
            .collect();
        Some(std::iter::once(opcode).chain(flags).collect::<Vec<_>>().join(" "))
    }

    /// What tells this failure apart from others of wrong code: what was observed, and
    /// which operation made the poison (numbers and names left out).
    pub fn signature(&self) -> String {
        let what = ub_kind_name(self.kind);
        match (self.observed_poison(), self.operation()) {
            (true, Some(op)) => format!("{POISON_OBSERVED}{what} (made by {op})"),
            (true, None) => format!("{POISON_OBSERVED}{what}"),
            (false, _) => format!("{UNDEFINED}{what}"),
        }
    }

    /// The stopped call in a sentence, beside what the unoptimized run (`reference`, its
    /// output) printed for it: "call 3 `@f(i32 0)`: the function returns poison (made by
    /// `@f: %t = call …`); unoptimized: `-> 7`".
    pub fn sentence(&self, reference: &str) -> String {
        let lines = lines_by_call(reference);
        let line = lines.get(&self.call).copied().unwrap_or("");
        let (callee, printed) = (callee_of(line), result_of(line));
        let mut out = format!("call {} `{}`: {}", self.call, callee, ub_kind_name(self.kind));
        if let Some(origin) = &self.origin {
            out.push_str(&format!(" ({} {origin})", if self.observed_poison() { "made by" } else { "at" }));
        }
        if !printed.is_empty() {
            out.push_str(&format!("; unoptimized: `{printed}`"));
        }
        out
    }
}

/// How the calls of a generated driver fared after optimization, call by call.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CallComparison {
    /// Calls that printed the same as in the unoptimized run.
    pub agree: usize,
    /// The others, each in a sentence: what the optimized run printed or why it stopped,
    /// beside what the unoptimized run printed.
    pub differ: Vec<String>,
}

/// `optimized` (a run's output) against `reference` (the unoptimized run's), per call.
pub fn compare_calls(optimized: &str, reference: &str) -> CallComparison {
    let (after, before) = (lines_by_call(optimized), lines_by_call(reference));
    let stopped = stopped_calls(optimized);
    let mut comparison = CallComparison::default();
    let calls: std::collections::BTreeSet<usize> =
        after.keys().chain(before.keys()).copied().chain(stopped.iter().map(|s| s.call)).collect();
    for call in calls {
        if let Some(s) = stopped.iter().find(|s| s.call == call) {
            comparison.differ.push(s.sentence(reference));
            continue;
        }
        match (after.get(&call), before.get(&call)) {
            (Some(a), Some(b)) if a == b => comparison.agree += 1,
            (a, b) => {
                let printed =
                    |line: Option<&&str>| line.map_or("nothing".to_string(), |l| format!("`{}`", result_of(l)));
                let callee = b.or(a).map_or("", |l| callee_of(l));
                comparison.differ.push(format!("call {call} `{callee}`: {}; unoptimized: {}", printed(a), printed(b)));
            }
        }
    }
    comparison
}

/// `@f(i32 0)` of the line `call 3: @f(i32 0) -> 7 mem=…`.
fn callee_of(line: &str) -> &str {
    let call = line.split_once(": ").map_or("", |(_, r)| r);
    call.split(" -> ").next().unwrap_or(call).split(" mem=").next().unwrap_or("")
}

/// `-> 7 mem=…` of the line `call 3: @f(i32 0) -> 7 mem=…`.
fn result_of(line: &str) -> &str {
    let call = line.split_once(": ").map_or("", |(_, r)| r);
    call.strip_prefix(callee_of(line)).unwrap_or("").trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopped_calls_are_read_with_their_origin_and_described_beside_the_reference() {
        let out = "ctos-poison: call 3: kind 14: @f: `%t = call i32 @llvm.cttz.i32(i32 %x, i1 true)`\n\
                   ctos-ub: call 4: kind 100\ncall 5: @f(i32 2) -> 1 mem=00\n";
        let stopped = stopped_calls(out);
        assert_eq!(stopped.len(), 2);
        assert_eq!(stopped[0].signature(), "poison observed: the function returns poison (made by llvm.cttz)");
        assert!(stopped[1].signature().starts_with("undefined behaviour: an access outside"), "{:?}", stopped[1]);
        let reference = "call 3: @f(i32 0) -> 32 mem=1234\n";
        assert_eq!(
            stopped[0].sentence(reference),
            "call 3 `@f(i32 0)`: the function returns poison (made by @f: `%t = call i32 @llvm.cttz.i32(i32 %x, \
             i1 true)`); unoptimized: `-> 32 mem=1234`"
        );
        let both = compare_calls(
            out,
            "call 3: @f(i32 0) -> 32 mem=1234\ncall 4: @f(i32 1) -> 0 mem=1\ncall 5: @f(i32 2) -> 1 mem=00\n",
        );
        assert_eq!(both.agree, 1);
        assert_eq!(both.differ.len(), 2, "{both:?}");
        let wrong = compare_calls("call 0: @g() -> 2 mem=0\n", "call 0: @g() -> 1 mem=0\n");
        assert_eq!(wrong.differ, ["call 0 `@g()`: `-> 2 mem=0`; unoptimized: `-> 1 mem=0`"]);
        let nsw = stopped_calls("ctos-poison: call 0: kind 16: @s: `%y = add nsw i32 %x, 1`\n");
        assert_eq!(nsw[0].signature(), "poison observed: a branch or switch on poison (made by add nsw)");
    }
}
