//! Witnessing mutation rules on C source, in the style of C-Vise's clang_delta: each rule
//! names one kind of change, lists the sites in a parsed file where it applies, and turns
//! one site into edits. DiWi's 132 local rules (`decl`, `expr`) keep their paper numbering:
//! slot `i` of [`diwi_rules`] is DiWi's rule `i + 1`. RecBi adds the structural ones.

mod decl;
mod expr;
pub mod structural;
#[cfg(test)]
mod structural_tests;
#[cfg(test)]
mod tests;

use std::cell::RefCell;

use rand::{Rng, RngExt};

use super::{line_of, Mutant, Mutator, RuleInfo, OUTPUT_CALLS};
use crate::mutate::ast::{Kind, NodeId, Tu};
use crate::mutate::Edit;

/// DiWi's 132 rules; slot `i` is the paper's rule `i + 1`.
pub fn diwi_rules() -> Vec<Box<dyn Rule>> {
    let mut rules = decl::rules();
    rules.extend(expr::rules());
    rules
}

pub use structural::structural_rules;

/// One kind of change to a C program.
pub trait Rule: Send + Sync {
    fn info(&self) -> &RuleInfo;

    /// Where the rule applies, in source order (counted before one is drawn).
    fn sites(&self, tu: &Tu) -> Vec<NodeId>;

    /// The edits that apply the rule at `site`; `None` when the site turns out unusable
    /// (no variable of a compatible type to rename to, say).
    fn edits(&self, tu: &Tu, site: NodeId, rng: &mut dyn Rng) -> Option<Vec<Edit>>;
}

/// Whether byte range `start..end` lies inside a call to an output function.
pub fn in_output_call(tu: &Tu, start: usize, end: usize) -> bool {
    tu.nodes.iter().any(|n| {
        n.kind == Kind::CallExpr && n.start <= start && end <= n.end && OUTPUT_CALLS.contains(&n.name.as_str())
    })
}

/// The C backend: rules applied to C source parsed with libclang.
pub struct CMutator {
    rules: Vec<Box<dyn Rule>>,
    infos: Vec<RuleInfo>,
    args: Vec<String>,
    /// The last program parsed: a search mutates the same seed many times in a row.
    parsed: RefCell<Option<(String, std::rc::Rc<Tu>)>>,
}

impl CMutator {
    /// A mutator with `rules`, parsing with the clang arguments `args`.
    pub fn new(rules: Vec<Box<dyn Rule>>, args: Vec<String>) -> CMutator {
        let infos = rules.iter().map(|r| r.info().clone()).collect();
        CMutator { rules, infos, args, parsed: RefCell::new(None) }
    }

    fn parse(&self, program: &str) -> anyhow::Result<std::rc::Rc<Tu>> {
        if let Some((text, tu)) = self.parsed.borrow().as_ref() {
            if text == program {
                return Ok(tu.clone());
            }
        }
        let tu = std::rc::Rc::new(crate::mutate::parse_source(program, &self.args)?);
        *self.parsed.borrow_mut() = Some((program.to_string(), tu.clone()));
        Ok(tu)
    }
}

impl Mutator for CMutator {
    fn rules(&self) -> &[RuleInfo] {
        &self.infos
    }

    fn mutate(&self, program: &str, rule: usize, rng: &mut dyn Rng) -> anyhow::Result<Option<Mutant>> {
        let tu = self.parse(program)?;
        let rule = &self.rules[rule];
        let mut sites = rule.sites(&tu);
        // A site can turn out unusable; the next one drawn may not be.
        for _ in 0..4 {
            if sites.is_empty() {
                return Ok(None);
            }
            let site = sites.swap_remove(rng.random_range(0..sites.len()));
            let Some(edits) = rule.edits(&tu, site, rng) else { continue };
            let Ok(text) = crate::mutate::apply(&tu.source, &edits) else { continue };
            if text == tu.source {
                continue;
            }
            let first = edits.iter().map(|e| e.start).min().unwrap_or(0);
            let snippet: String = tu.text(site).chars().take(60).collect();
            return Ok(Some(Mutant {
                description: format!(
                    "{} at line {}: {}",
                    rule.info().name,
                    line_of(&tu.source, first),
                    snippet.replace('\n', " ")
                ),
                line: line_of(&tu.source, first),
                touches_output: edits.iter().any(|e| in_output_call(&tu, e.start, e.end)),
                text,
            }));
        }
        Ok(None)
    }
}
