//! Witness configurations: the reduced sequence as it is, with its culprit pass run
//! differently: other pipeline parameters (`instcombine<max-iterations=1>`) or other
//! values of the `cl::opt` knobs that belong to it (`-slp-max-vf=2`). When the culprit
//! pass triggers the bug in any sequence, no bug-free sequence exists; a configuration
//! that makes the failure disappear while the trace stays close is a witness all the same
//! (MultiConf's compiler-option witnesses, for one LLVM pass).

use rand::seq::IndexedRandom;
use rand::{Rng, RngExt};

use super::culprit::Culprit;
use crate::seq::{Catalog, Kind, Pass, Sequence};

/// Values tried for numeric knobs and parameters whose defaults we do not know: small
/// limits (which switch a transformation off or make it give up early) and large ones.
const UNSIGNED_VALUES: &[i64] = &[0, 1, 2, 3, 4, 8, 16, 64, 1024];
const SIGNED_VALUES: &[i64] = &[-1000, -100, -10, -1, 0, 1, 2, 4, 16, 100, 1000];

/// Knobs and parameters that change what is printed or checked, not what the pass does.
const NOT_BEHAVIOUR: &[&str] =
    &["print", "dump", "view", "debug", "stats", "remark", "file", "verify", "reproducer", "trace", "time", "dot"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KnobKind {
    Flag,
    Signed,
    Unsigned,
    Choice(Vec<String>),
}

/// A `cl::opt` of the linked LLVM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Knob {
    pub name: String,
    pub kind: KnobKind,
}

impl Knob {
    fn settings(&self) -> Vec<String> {
        let with = |values: &[i64]| values.iter().map(|v| format!("-{}={v}", self.name)).collect();
        match &self.kind {
            KnobKind::Flag => vec![format!("-{}=true", self.name), format!("-{}=false", self.name)],
            KnobKind::Signed => with(SIGNED_VALUES),
            KnobKind::Unsigned => with(UNSIGNED_VALUES),
            KnobKind::Choice(values) => values.iter().map(|v| format!("-{}={v}", self.name)).collect(),
        }
    }
}

/// The options `opt --help-hidden` lists: `  --name[=<type>]   - help` lines, with the
/// values of enumerated options on `    =value   - help` lines below them. Options of
/// other types (strings, lists) are left out: there is no value to try for them.
pub fn parse_knobs(help: &str) -> Vec<Knob> {
    let mut knobs: Vec<Knob> = Vec::new();
    let mut choices_of: Option<usize> = None;
    for line in help.lines() {
        if let Some(rest) = line.strip_prefix("    =") {
            if let (Some(i), Some(value)) = (choices_of, rest.split_whitespace().next()) {
                if let KnobKind::Choice(values) = &mut knobs[i].kind {
                    values.push(value.to_string());
                }
            }
            continue;
        }
        choices_of = None;
        let Some(rest) = line.strip_prefix("  --").filter(|r| !r.starts_with(' ')) else { continue };
        let spec = rest.split_whitespace().next().unwrap_or("");
        let (name, kind) = match spec.split_once("=<") {
            None => (spec, KnobKind::Flag),
            Some((name, "int>")) => (name, KnobKind::Signed),
            Some((name, "uint>" | "ulong>" | "number>")) => (name, KnobKind::Unsigned),
            Some((name, "value>")) => (name, KnobKind::Choice(Vec::new())),
            Some(_) => continue,
        };
        knobs.push(Knob { name: name.to_string(), kind });
        if matches!(knobs.last().map(|k| &k.kind), Some(KnobKind::Choice(_))) {
            choices_of = Some(knobs.len() - 1);
        }
    }
    knobs.retain(|k| !matches!(&k.kind, KnobKind::Choice(v) if v.is_empty()));
    knobs
}

/// The shortest dash-separated prefix of `pass` that starts no other pass name of the
/// catalog (`slp` for `slp-vectorizer`; `loop-simplifycfg` itself, as `loop` is shared):
/// the word LLVM's knobs of that pass are named with.
fn distinctive_prefix(pass: &str, catalog: &Catalog) -> String {
    let parts: Vec<&str> = pass.split('-').collect();
    for n in 1..parts.len() {
        let prefix = parts[..n].join("-");
        let dashed = format!("{prefix}-");
        let sharing = catalog
            .entries()
            .iter()
            .filter(|e| e.kind == Kind::Pass && (e.name == prefix || e.name.starts_with(&dashed)))
            .count();
        if sharing <= 1 {
            return prefix;
        }
    }
    pass.to_string()
}

/// Whether the knob is one of the pass's: its dash-separated words contain the pass's
/// distinctive prefix (`slp-max-vf`, `enable-loop-simplifycfg-term-folding`).
fn belongs(knob: &str, prefix: &str) -> bool {
    format!("-{knob}-").contains(&format!("-{prefix}-"))
}

fn changes_behaviour(name: &str) -> bool {
    !NOT_BEHAVIOUR.iter().any(|w| name.contains(w))
}

/// One pipeline parameter of a pass as `opt -print-passes` lists it, with its settings.
fn parameter_settings(token: &str) -> Vec<String> {
    match token.strip_suffix("=N") {
        Some(name) => UNSIGNED_VALUES.iter().map(|v| format!("{name}={v}")).collect(),
        None => vec![token.to_string()],
    }
}

/// What a parameter setting sets: `max-iterations` for `max-iterations=3`, `pre` for
/// `pre` and `no-pre`, the level for `O0`…`O3`.
fn parameter_key(setting: &str) -> &str {
    match setting.split_once('=') {
        Some((name, _)) => name,
        None if setting.len() == 2 && setting.starts_with('O') => "O",
        None => setting.strip_prefix("no-").unwrap_or(setting),
    }
}

/// `params` with `setting` replacing whatever set the same parameter.
fn with_parameter(params: &str, setting: &str) -> String {
    let key = parameter_key(setting);
    let mut kept: Vec<&str> = params.split(';').filter(|t| !t.is_empty() && parameter_key(t) != key).collect();
    kept.push(setting);
    kept.join(";")
}

/// One candidate: the reduced sequence with the culprit's parameters changed, and the
/// knobs set for this run only.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Config {
    pub sequence: Sequence,
    pub llvm_args: Vec<String>,
}

/// What can be varied about the culprit pass.
pub struct ConfigSpace {
    passes: Vec<Pass>,
    /// 0-based index of the culprit in `passes`.
    position: usize,
    /// Each inner list: the settings of one parameter.
    parameters: Vec<Vec<String>>,
    knobs: Vec<Knob>,
}

impl ConfigSpace {
    /// The space of `culprit` in `reduced`. `help` is `opt --help-hidden`'s text; knobs
    /// the user set (`user_args`) stay as they are.
    pub fn new(
        reduced: &Sequence,
        culprit: &Culprit,
        catalog: &Catalog,
        help: &str,
        user_args: &[String],
    ) -> ConfigSpace {
        let passes: Vec<Pass> = reduced.passes().into_iter().cloned().collect();
        let prefix = distinctive_prefix(&culprit.name, catalog);
        let set_by_user = |name: &str| user_args.iter().any(|a| crate::llvm::option_name(a) == name);
        let knobs = parse_knobs(help)
            .into_iter()
            .filter(|k| belongs(&k.name, &prefix) && changes_behaviour(&k.name) && !set_by_user(&k.name))
            .collect();
        // A culprit found inside a pipeline (`default<O2>`) has no parameters of its own there.
        let written = passes.get(culprit.position - 1).is_some_and(|p| p.name == culprit.name);
        let parameters = catalog
            .get(&culprit.name)
            .filter(|_| written)
            .and_then(|e| e.params.as_deref())
            .map(|p| p.split(';').filter(|t| changes_behaviour(t)).map(parameter_settings).collect())
            .unwrap_or_default();
        ConfigSpace { passes, position: culprit.position - 1, parameters, knobs }
    }

    pub fn knobs(&self) -> &[Knob] {
        &self.knobs
    }

    /// Parameters and knobs that can be varied.
    pub fn dimensions(&self) -> usize {
        self.parameters.len() + self.knobs.len()
    }

    /// A configuration changing one or two things about the culprit.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<Config> {
        if self.dimensions() == 0 {
            return None;
        }
        let mut culprit = self.passes[self.position].clone();
        let mut llvm_args = Vec::new();
        let changes = rng.random_range(1..=2usize.min(self.dimensions()));
        for _ in 0..changes {
            let d = rng.random_range(0..self.dimensions());
            if d < self.parameters.len() {
                let setting = self.parameters[d].choose(rng).expect("settings");
                culprit.params = Some(with_parameter(culprit.params.as_deref().unwrap_or(""), setting));
            } else {
                let settings = self.knobs[d - self.parameters.len()].settings();
                llvm_args.push(settings.choose(rng).expect("settings").clone());
            }
        }
        llvm_args.sort();
        llvm_args.dedup();
        let mut passes = self.passes.clone();
        passes[self.position] = culprit;
        Some(Config { sequence: Sequence::flat(passes), llvm_args })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Indentation is what tells options, enum values and pass-list entries apart.
    const HELP: &str = concat!(
        "OPTIONS:\n",
        "  --slp-max-vf=<uint>                  - Maximum SLP vectorization factor (0=unlimited)\n",
        "  --slp-threshold=<int>                - Only vectorize if you gain more than this number\n",
        "  --slp-vectorize-hor                  - Attempt to vectorize horizontal reductions\n",
        "  --slp-schedule-dump=<string>         - not a value we can try\n",
        "  --some-mode=<value>                  - Choose a mode:\n",
        "    =fast                              -   fast\n",
        "    =slow                              -   slow\n",
        "  --passes=<string>                    - pipeline\n",
        "      --instcombine                    - an entry of a pass list, not an option\n",
    );

    #[test]
    fn a_parameter_setting_replaces_the_one_it_overrides() {
        assert_eq!(
            with_parameter("no-verify-fixpoint;max-iterations=64", "max-iterations=0"),
            "no-verify-fixpoint;max-iterations=0"
        );
        assert_eq!(with_parameter("pre;memdep", "no-pre"), "memdep;no-pre");
        assert_eq!(with_parameter("O2;runtime", "O3"), "runtime;O3");
        assert_eq!(with_parameter("", "partial"), "partial");
    }

    #[test]
    fn knobs_are_read_with_their_types() {
        let knobs = parse_knobs(HELP);
        let kind = |n: &str| knobs.iter().find(|k| k.name == n).map(|k| k.kind.clone());
        assert_eq!(kind("slp-max-vf"), Some(KnobKind::Unsigned));
        assert_eq!(kind("slp-threshold"), Some(KnobKind::Signed));
        assert_eq!(kind("slp-vectorize-hor"), Some(KnobKind::Flag));
        assert_eq!(kind("some-mode"), Some(KnobKind::Choice(vec!["fast".into(), "slow".into()])));
        assert_eq!(kind("slp-schedule-dump"), None);
        assert_eq!(kind("instcombine"), None);
        assert_eq!(knobs.len(), 4);
    }

    #[test]
    fn a_knob_belongs_to_the_pass_whose_distinctive_word_it_names() {
        let catalog = Catalog::for_llvm(22).unwrap();
        assert_eq!(distinctive_prefix("slp-vectorizer", &catalog), "slp");
        assert_eq!(distinctive_prefix("loop-simplifycfg", &catalog), "loop-simplifycfg");
        assert_eq!(distinctive_prefix("instcombine", &catalog), "instcombine");
        assert!(belongs("slp-max-vf", "slp"));
        assert!(belongs("enable-loop-simplifycfg-term-folding", "loop-simplifycfg"));
        assert!(!belongs("slpx-max", "slp"));
        assert!(!belongs("aggressive-instcombine-max-scan-instrs", "loop-simplifycfg"));
    }
}
