//! Hermes's snippet synthesis (spec §5–8): predicates true or false on every profiled
//! valuation (Algorithm 2), expressions free of undefined behaviour on every valuation
//! (Algorithm 3), and the three live-code mutations built from them: an always-false
//! conditional block (FCB), an always-true guard (TG), and an always-true conditional block
//! that changes live variables and restores them (TCB).
//!
//! Every check evaluates with C's semantics (`cint`) over the joint valuations of the
//! variables an expression reads, which is exact on the Cartesian product of the profiled
//! sets (Spex over sub-expressions would over-approximate); beyond `MAX_VALUATIONS` an
//! expression is refused rather than guessed.

use rand::seq::SliceRandom;
use rand::{Rng, RngExt};

use crate::mutate::cint::{Binary, Expr, IntType, Unary, Value};
use crate::mutate::scope::Lvalue;

/// Joint valuations checked per expression (the spec's cap on Spex's product).
pub const MAX_VALUATIONS: usize = 10_000;
/// Consecutive unary steps before a binary one is forced (the paper leaves it open).
const UNARY_LIMIT: u32 = 2;

/// A variable as the synthesizer sees it: its C lvalue, type and possible values.
#[derive(Debug, Clone)]
pub struct Slot {
    pub lvalue: Lvalue,
    pub values: Vec<Value>,
}

impl Slot {
    /// Can live code assign it and restore it exactly?
    pub fn writable(&self) -> bool {
        !self.lvalue.is_const && !self.lvalue.is_volatile && !self.lvalue.in_union
    }
}

/// Every value `e` takes on the joint valuations of `env`, or `None` when one of them is
/// undefined or there are more than `MAX_VALUATIONS`.
pub fn values_of(e: &Expr, env: &[Slot]) -> Option<Vec<Value>> {
    let vars = e.vars();
    let total =
        vars.iter().try_fold(1usize, |n, &v| n.checked_mul(env[v].values.len()).filter(|&n| n <= MAX_VALUATIONS))?;
    if total == 0 {
        return None;
    }
    let mut valuation: Vec<Value> = env.iter().map(|s| s.values[0]).collect();
    let mut out: Vec<Value> = Vec::new();
    for mut k in 0..total {
        for &v in &vars {
            let n = env[v].values.len();
            valuation[v] = env[v].values[k % n];
            k /= n;
        }
        let value = e.eval(&valuation).ok()?;
        if !out.contains(&value) {
            out.push(value);
        }
    }
    Some(out)
}

/// Does predicate `p` have truth value `expected` on every valuation?
pub fn always(p: &Expr, env: &[Slot], expected: bool) -> bool {
    values_of(p, env).is_some_and(|vs| vs.iter().all(|v| (v.v != 0) == expected))
}

pub struct Synth<'a, R: Rng + ?Sized> {
    pub rng: &'a mut R,
}

impl<R: Rng + ?Sized> Synth<'_, R> {
    fn coin(&mut self) -> bool {
        self.rng.random_bool(0.5)
    }

    /// Algorithm 2: a predicate whose value is `expected` on every valuation of `env`,
    /// nested up to `depth` (the caller draws it from 0..=2).
    pub fn predicate(&mut self, env: &[Slot], expected: bool, depth: u32) -> Expr {
        if depth == 0 {
            return self.atom(env, expected);
        }
        let (op, left, right) = match self.rng.random_range(0..4) {
            0 => return Expr::Unary(Unary::Not, Box::new(self.predicate(env, !expected, depth - 1))),
            1 => match (expected, self.coin()) {
                (true, _) => (Binary::LogAnd, true, true),
                (false, true) => (Binary::LogAnd, true, false),
                (false, false) => (Binary::LogAnd, false, self.coin()),
            },
            2 => match (expected, self.coin()) {
                (false, _) => (Binary::LogOr, false, false),
                (true, true) => (Binary::LogOr, false, true),
                (true, false) => (Binary::LogOr, true, self.coin()),
            },
            _ => return self.atom(env, expected),
        };
        let l = self.predicate(env, left, depth - 1);
        let r = self.predicate(env, right, depth - 1);
        let p = Expr::Binary(op, Box::new(l), Box::new(r));
        if always(&p, env, expected) {
            p
        } else {
            self.atom(env, expected)
        }
    }

    /// `v REL c` or `v1 REL v2`, checked on every valuation; a constant comparison when no
    /// variable has a usable set.
    fn atom(&mut self, env: &[Slot], expected: bool) -> Expr {
        let usable: Vec<usize> = (0..env.len()).filter(|&i| !env[i].values.is_empty()).collect();
        for _ in 0..8 {
            let Some(&i) = usable.get(self.rng.random_range(0..usable.len().max(1))) else { break };
            let candidate = if usable.len() > 1 && self.coin() {
                let j = usable[self.rng.random_range(0..usable.len())];
                self.two_variable_atom(env, i, j, expected)
            } else {
                self.constant_atom(env, i, expected)
            };
            if let Some(p) = candidate.filter(|p| always(p, env, expected)) {
                return p;
            }
        }
        let one = Expr::Const(Value::new(1, IntType::INT));
        let zero = Expr::Const(Value::new(0, IntType::INT));
        Expr::Binary(if expected { Binary::Ne } else { Binary::Eq }, Box::new(one), Box::new(zero))
    }

    fn constant_atom(&mut self, env: &[Slot], i: usize, expected: bool) -> Option<Expr> {
        let values = &env[i].values;
        // Compare in the promoted type, so the constant means what it says.
        let ty = env[i].lvalue.ty.promote();
        let (lo, hi) = (values.iter().map(|v| v.v).min()?, values.iter().map(|v| v.v).max()?);
        let k = self.rng.random_range(1..=16);
        let absent = (lo - 8..=hi + 8).find(|c| values.iter().all(|v| v.v != *c) && ty.holds(*c));
        let mut options: Vec<(Binary, Option<i128>)> = if expected {
            vec![
                (Binary::Lt, hi.checked_add(k)),
                (Binary::Le, Some(hi)),
                (Binary::Gt, lo.checked_sub(k)),
                (Binary::Ge, Some(lo)),
                (Binary::Ne, absent),
            ]
        } else {
            vec![
                (Binary::Lt, Some(lo)),
                (Binary::Le, lo.checked_sub(k)),
                (Binary::Gt, Some(hi)),
                (Binary::Ge, hi.checked_add(k)),
                (Binary::Eq, absent),
            ]
        };
        if lo == hi {
            options.push((if expected { Binary::Eq } else { Binary::Ne }, Some(lo)));
        }
        options.retain(|(_, c)| c.is_some_and(|c| ty.holds(c)));
        let (op, c) = *options.get(self.rng.random_range(0..options.len().max(1)))?;
        Some(Expr::Binary(op, Box::new(Expr::Var(i)), Box::new(Expr::Const(Value::new(c?, ty)))))
    }

    fn two_variable_atom(&mut self, env: &[Slot], i: usize, j: usize, expected: bool) -> Option<Expr> {
        let mut ops = [Binary::Lt, Binary::Le, Binary::Gt, Binary::Ge, Binary::Eq, Binary::Ne];
        ops.shuffle(self.rng);
        ops.into_iter()
            .map(|op| Expr::Binary(op, Box::new(Expr::Var(i)), Box::new(Expr::Var(j))))
            .find(|p| always(p, env, expected))
    }

    /// Algorithm 3: an expression over 1–4 of the variables, defined on every valuation.
    pub fn expression(&mut self, env: &[Slot]) -> Option<Expr> {
        let mut usable: Vec<usize> = (0..env.len()).filter(|&i| !env[i].values.is_empty()).collect();
        if usable.is_empty() {
            return None;
        }
        usable.shuffle(self.rng);
        let leaves = self.rng.random_range(1..=usable.len().min(4));
        let mut work: Vec<Expr> = usable[..leaves].iter().map(|&i| Expr::Var(i)).collect();
        let mut unary_run = 0;
        while work.len() > 1 {
            if unary_run < UNARY_LIMIT && self.coin() {
                let x = self.rng.random_range(0..work.len());
                let mut ops = Unary::ALL;
                ops.shuffle(self.rng);
                if let Some(e) = ops
                    .into_iter()
                    .map(|op| Expr::Unary(op, Box::new(work[x].clone())))
                    .find(|e| values_of(e, env).is_some())
                {
                    work[x] = e;
                }
                unary_run += 1;
                continue;
            }
            unary_run = 0;
            let y = work.swap_remove(self.rng.random_range(0..work.len()));
            let x = work.swap_remove(self.rng.random_range(0..work.len()));
            let mut ops = Binary::ALL;
            ops.shuffle(self.rng);
            let combined = ops
                .into_iter()
                .map(|op| Expr::Binary(op, Box::new(x.clone()), Box::new(y.clone())))
                .find(|e| values_of(e, env).is_some());
            // Only an unverifiable product (too many valuations) leaves no operator: keep one side.
            work.push(combined.unwrap_or(x));
        }
        work.pop().filter(|e| values_of(e, env).is_some())
    }

    /// A random, well-typed expression that is never evaluated (an FCB body may be undefined).
    pub fn dead_expression(&mut self, env: &[Slot], depth: u32) -> Expr {
        if depth == 0 || env.is_empty() || self.rng.random_range(0..3) == 0 {
            if env.is_empty() || self.rng.random_range(0..4) == 0 {
                return Expr::Const(Value::new(self.rng.random_range(-9..100), IntType::INT));
            }
            return Expr::Var(self.rng.random_range(0..env.len()));
        }
        if self.rng.random_range(0..4) == 0 {
            let op = Unary::ALL[self.rng.random_range(0..Unary::ALL.len())];
            return Expr::Unary(op, Box::new(self.dead_expression(env, depth - 1)));
        }
        let op = Binary::ALL[self.rng.random_range(0..Binary::ALL.len())];
        Expr::Binary(op, Box::new(self.dead_expression(env, depth - 1)), Box::new(self.dead_expression(env, depth - 1)))
    }
}
