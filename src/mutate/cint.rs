//! C's integer arithmetic on x86-64 Linux (LP64, `char` signed), exactly: integer promotions,
//! the usual arithmetic conversions, conversion on assignment, and which operations are
//! undefined. Live-code mutation (Hermes) evaluates every synthesized expression here on the
//! profiled values before it writes it, so a slip here is a false bug report; the model is
//! tested against clang with UBSan (cint_clang_tests.rs).
//!
//! Written by hand: no crate models C's conversions (Rust's own integers differ in exactly
//! the places that matter: promotions, mixed signedness, what overflows).

use std::fmt;

/// Conversion rank of the standard integer types (C11 6.3.1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rank {
    Bool,
    Char,
    Short,
    Int,
    Long,
    LongLong,
}

/// An integer type; `bits` below the rank's width is a bit-field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IntType {
    pub rank: Rank,
    pub signed: bool,
    pub bits: u32,
}

impl IntType {
    pub const fn new(rank: Rank, signed: bool) -> IntType {
        let bits = match rank {
            Rank::Bool => 1,
            Rank::Char => 8,
            Rank::Short => 16,
            Rank::Int => 32,
            Rank::Long | Rank::LongLong => 64,
        };
        IntType { rank, signed: signed && !matches!(rank, Rank::Bool), bits }
    }

    pub const INT: IntType = IntType::new(Rank::Int, true);
    pub const UINT: IntType = IntType::new(Rank::Int, false);

    /// A bit-field of `width` bits declared with this type.
    pub fn bit_field(self, width: u32) -> IntType {
        IntType { bits: width.min(self.bits), ..self }
    }

    pub fn min(self) -> i128 {
        if self.signed {
            -(1i128 << (self.bits - 1))
        } else {
            0
        }
    }

    pub fn max(self) -> i128 {
        if self.signed {
            (1i128 << (self.bits - 1)) - 1
        } else {
            (1i128 << self.bits) - 1
        }
    }

    pub fn holds(self, v: i128) -> bool {
        (self.min()..=self.max()).contains(&v)
    }

    /// The value `v` takes when converted to this type: `_Bool` tests against zero, other
    /// types wrap modulo 2^bits (implementation-defined for signed targets; GCC and clang wrap).
    pub fn convert(self, v: i128) -> i128 {
        if self.rank == Rank::Bool {
            return (v != 0) as i128;
        }
        let modulus = 1i128 << self.bits;
        let r = v.rem_euclid(modulus);
        if self.signed && r > self.max() {
            r - modulus
        } else {
            r
        }
    }

    /// The integer promotions: narrower than `int` (bit-fields of `int` kind included)
    /// becomes `int` when `int` holds every value, else `unsigned int`.
    pub fn promote(self) -> IntType {
        if self.rank > Rank::Int || (self.rank == Rank::Int && self.bits == 32) {
            return IntType { bits: IntType::new(self.rank, self.signed).bits, ..self };
        }
        if IntType::INT.holds(self.min()) && IntType::INT.holds(self.max()) {
            IntType::INT
        } else {
            IntType::UINT
        }
    }

    /// The C spelling, for casts in emitted code.
    pub fn spelling(self) -> &'static str {
        match (self.rank, self.signed) {
            (Rank::Bool, _) => "_Bool",
            (Rank::Char, true) => "signed char",
            (Rank::Char, false) => "unsigned char",
            (Rank::Short, true) => "short",
            (Rank::Short, false) => "unsigned short",
            (Rank::Int, true) => "int",
            (Rank::Int, false) => "unsigned int",
            (Rank::Long, true) => "long",
            (Rank::Long, false) => "unsigned long",
            (Rank::LongLong, true) => "long long",
            (Rank::LongLong, false) => "unsigned long long",
        }
    }
}

/// The usual arithmetic conversions: the common type of two operands (C11 6.3.1.8).
pub fn common_type(a: IntType, b: IntType) -> IntType {
    let (a, b) = (a.promote(), b.promote());
    if a.signed == b.signed {
        return if a.rank >= b.rank { a } else { b };
    }
    let (s, u) = if a.signed { (a, b) } else { (b, a) };
    if u.rank >= s.rank {
        u
    } else if s.holds(u.max()) {
        s
    } else {
        IntType { signed: false, ..s }
    }
}

/// A value of a type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Value {
    pub v: i128,
    pub ty: IntType,
}

impl Value {
    pub fn new(v: i128, ty: IntType) -> Value {
        Value { v: ty.convert(v), ty }
    }

    fn promoted(self) -> Value {
        Value { v: self.v, ty: self.ty.promote() }
    }

    fn to(self, ty: IntType) -> Value {
        Value::new(self.v, ty)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unary {
    Neg,
    BitNot,
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Binary {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    And,
    Or,
    Xor,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    LogAnd,
    LogOr,
}

impl Unary {
    pub const ALL: [Unary; 3] = [Unary::Neg, Unary::BitNot, Unary::Not];

    pub fn token(self) -> &'static str {
        match self {
            Unary::Neg => "-",
            Unary::BitNot => "~",
            Unary::Not => "!",
        }
    }
}

impl Binary {
    pub const ALL: [Binary; 18] = [
        Binary::Add,
        Binary::Sub,
        Binary::Mul,
        Binary::Div,
        Binary::Rem,
        Binary::Shl,
        Binary::Shr,
        Binary::And,
        Binary::Or,
        Binary::Xor,
        Binary::Lt,
        Binary::Le,
        Binary::Gt,
        Binary::Ge,
        Binary::Eq,
        Binary::Ne,
        Binary::LogAnd,
        Binary::LogOr,
    ];

    pub fn token(self) -> &'static str {
        match self {
            Binary::Add => "+",
            Binary::Sub => "-",
            Binary::Mul => "*",
            Binary::Div => "/",
            Binary::Rem => "%",
            Binary::Shl => "<<",
            Binary::Shr => ">>",
            Binary::And => "&",
            Binary::Or => "|",
            Binary::Xor => "^",
            Binary::Lt => "<",
            Binary::Le => "<=",
            Binary::Gt => ">",
            Binary::Ge => ">=",
            Binary::Eq => "==",
            Binary::Ne => "!=",
            Binary::LogAnd => "&&",
            Binary::LogOr => "||",
        }
    }

    /// Relational, equality and logical operators: defined on every pair of values.
    pub fn is_comparison(self) -> bool {
        matches!(self, Binary::Lt | Binary::Le | Binary::Gt | Binary::Ge | Binary::Eq | Binary::Ne)
    }
}

/// Why an operation is undefined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undefined {
    Overflow,
    DivisionByZero,
    ShiftAmount,
    ShiftOfNegative,
}

impl fmt::Display for Undefined {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Undefined::Overflow => "signed overflow",
            Undefined::DivisionByZero => "division by zero",
            Undefined::ShiftAmount => "shift amount out of range",
            Undefined::ShiftOfNegative => "left shift of a negative value",
        })
    }
}

fn signed_result(v: i128, ty: IntType) -> Result<Value, Undefined> {
    if ty.signed && !ty.holds(v) {
        return Err(Undefined::Overflow);
    }
    Ok(Value::new(v, ty))
}

pub fn unary(op: Unary, x: Value) -> Result<Value, Undefined> {
    let x = x.promoted();
    match op {
        Unary::Neg => signed_result(-x.v, x.ty),
        Unary::BitNot => Ok(Value::new(!x.v, x.ty)),
        Unary::Not => Ok(Value::new((x.v == 0) as i128, IntType::INT)),
    }
}

/// `x op y`, or why it is undefined. `&&` and `||` see only values here: a caller that
/// short-circuits evaluates (and checks) the right operand only when it runs.
pub fn binary(op: Binary, x: Value, y: Value) -> Result<Value, Undefined> {
    let truth = |b: bool| Ok(Value::new(b as i128, IntType::INT));
    match op {
        Binary::LogAnd => return truth(x.v != 0 && y.v != 0),
        Binary::LogOr => return truth(x.v != 0 || y.v != 0),
        Binary::Shl | Binary::Shr => return shift(op, x.promoted(), y.promoted()),
        _ => {}
    }
    let ty = common_type(x.ty, y.ty);
    let (a, b) = (x.to(ty).v, y.to(ty).v);
    match op {
        Binary::Add => signed_result(a + b, ty),
        Binary::Sub => signed_result(a - b, ty),
        Binary::Mul => signed_result(a * b, ty),
        Binary::Div | Binary::Rem if b == 0 => Err(Undefined::DivisionByZero),
        // C11 6.5.5: when a / b is not representable, a % b is undefined too.
        Binary::Div | Binary::Rem if ty.signed && a == ty.min() && b == -1 => Err(Undefined::Overflow),
        Binary::Div => signed_result(a / b, ty),
        Binary::Rem => signed_result(a % b, ty),
        Binary::And => Ok(Value::new(a & b, ty)),
        Binary::Or => Ok(Value::new(a | b, ty)),
        Binary::Xor => Ok(Value::new(a ^ b, ty)),
        Binary::Lt => truth(a < b),
        Binary::Le => truth(a <= b),
        Binary::Gt => truth(a > b),
        Binary::Ge => truth(a >= b),
        Binary::Eq => truth(a == b),
        Binary::Ne => truth(a != b),
        Binary::LogAnd | Binary::LogOr | Binary::Shl | Binary::Shr => unreachable!("handled above"),
    }
}

fn shift(op: Binary, x: Value, amount: Value) -> Result<Value, Undefined> {
    if amount.v < 0 || amount.v >= x.ty.bits as i128 {
        return Err(Undefined::ShiftAmount);
    }
    let n = amount.v as u32;
    match op {
        Binary::Shl if x.ty.signed && x.v < 0 => Err(Undefined::ShiftOfNegative),
        Binary::Shl if x.ty.signed => signed_result(x.v << n, x.ty),
        Binary::Shl => Ok(Value::new(x.v << n, x.ty)),
        // Of a negative value: implementation-defined, and GCC and clang shift arithmetically,
        // as i128's >> does.
        _ => Ok(Value::new(x.v >> n, x.ty)),
    }
}

/// The C literal for `v` of type `ty`, as a cast of a constant whose own type holds it:
/// `(unsigned char)200`, `(long)-5L`; the most negative `long` is written as an expression.
pub fn literal(v: i128, ty: IntType) -> String {
    let constant = if v == i64::MIN as i128 {
        "(-9223372036854775807L - 1)".to_string()
    } else if v > i64::MAX as i128 {
        format!("{v}UL")
    } else if v < 0 {
        format!("({v}L)")
    } else {
        format!("{v}L")
    };
    format!("(({}){constant})", ty.spelling())
}

/// An integer expression over variables (by index) and constants, as Hermes writes them:
/// fully parenthesized, evaluated with C's semantics on one valuation of the variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    Var(usize),
    Const(Value),
    Cast(IntType, Box<Expr>),
    Unary(Unary, Box<Expr>),
    Binary(Binary, Box<Expr>, Box<Expr>),
}

impl Expr {
    /// The value on `valuation` (indexed as the variables), or why evaluating it is
    /// undefined. `&&` and `||` evaluate their right operand only when C does.
    pub fn eval(&self, valuation: &[Value]) -> Result<Value, Undefined> {
        match self {
            Expr::Var(i) => Ok(valuation[*i]),
            Expr::Const(v) => Ok(*v),
            Expr::Cast(ty, e) => Ok(Value::new(e.eval(valuation)?.v, *ty)),
            Expr::Unary(op, e) => unary(*op, e.eval(valuation)?),
            Expr::Binary(op @ (Binary::LogAnd | Binary::LogOr), l, r) => {
                let left = l.eval(valuation)?;
                let decided = (*op == Binary::LogAnd) == (left.v == 0);
                if decided {
                    return Ok(Value::new((*op == Binary::LogOr) as i128, IntType::INT));
                }
                binary(*op, left, r.eval(valuation)?)
            }
            Expr::Binary(op, l, r) => binary(*op, l.eval(valuation)?, r.eval(valuation)?),
        }
    }

    /// The variables it reads, each once, in first-use order.
    pub fn vars(&self) -> Vec<usize> {
        let mut out = Vec::new();
        self.collect_vars(&mut out);
        out
    }

    fn collect_vars(&self, out: &mut Vec<usize>) {
        match self {
            Expr::Var(i) if !out.contains(i) => out.push(*i),
            Expr::Var(_) | Expr::Const(_) => {}
            Expr::Cast(_, e) | Expr::Unary(_, e) => e.collect_vars(out),
            Expr::Binary(_, l, r) => {
                l.collect_vars(out);
                r.collect_vars(out);
            }
        }
    }

    /// C text, every sub-expression in parentheses; `name` spells variable `i`.
    pub fn render(&self, name: &dyn Fn(usize) -> String) -> String {
        match self {
            Expr::Var(i) => name(*i),
            Expr::Const(v) => literal(v.v, v.ty),
            Expr::Cast(ty, e) => format!("(({}){})", ty.spelling(), e.render(name)),
            Expr::Unary(op, e) => format!("({}{})", op.token(), e.render(name)),
            Expr::Binary(op, l, r) => format!("({} {} {})", l.render(name), op.token(), r.render(name)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHAR: IntType = IntType::new(Rank::Char, true);
    const UCHAR: IntType = IntType::new(Rank::Char, false);
    const USHORT: IntType = IntType::new(Rank::Short, false);
    const LONG: IntType = IntType::new(Rank::Long, true);
    const ULONG: IntType = IntType::new(Rank::Long, false);

    fn v(v: i128, ty: IntType) -> Value {
        Value::new(v, ty)
    }

    #[test]
    fn mixed_signedness_follows_the_usual_arithmetic_conversions() {
        // The paper's own example: int 0 + short -1 is -1, unsigned 0 + short -1 is UINT_MAX.
        let minus_one = v(-1, IntType::new(Rank::Short, true));
        assert_eq!(binary(Binary::Add, v(0, IntType::INT), minus_one).unwrap().v, -1);
        assert_eq!(binary(Binary::Add, v(0, IntType::UINT), minus_one).unwrap().v, 4294967295);
        // unsigned 3 > -1 is false; long is wide enough for every unsigned int.
        assert_eq!(binary(Binary::Gt, v(3, IntType::UINT), v(-1, IntType::INT)).unwrap().v, 0);
        assert_eq!(binary(Binary::Gt, v(3, IntType::UINT), v(-1, LONG)).unwrap().v, 1);
        assert_eq!(common_type(ULONG, LONG), ULONG);
        assert_eq!(common_type(UCHAR, USHORT), IntType::INT);
    }

    #[test]
    fn undefined_operations_are_refused() {
        let int_min = v(i32::MIN as i128, IntType::INT);
        assert_eq!(unary(Unary::Neg, int_min), Err(Undefined::Overflow));
        assert_eq!(binary(Binary::Rem, int_min, v(-1, IntType::INT)), Err(Undefined::Overflow));
        assert_eq!(binary(Binary::Div, v(1, UCHAR), v(0, CHAR)), Err(Undefined::DivisionByZero));
        assert_eq!(binary(Binary::Shl, v(1, IntType::INT), v(31, IntType::INT)), Err(Undefined::Overflow));
        assert_eq!(binary(Binary::Shl, v(1, IntType::UINT), v(31, IntType::INT)).unwrap().v, 1 << 31);
        assert_eq!(binary(Binary::Shl, v(1, CHAR), v(32, IntType::INT)), Err(Undefined::ShiftAmount));
        assert_eq!(binary(Binary::Shl, v(-1, IntType::INT), v(1, IntType::INT)), Err(Undefined::ShiftOfNegative));
        assert_eq!(binary(Binary::Shr, v(-8, IntType::INT), v(1, IntType::INT)).unwrap().v, -4);
        // A char promotes to int before the operation: no overflow at 127 + 1.
        assert_eq!(binary(Binary::Add, v(127, CHAR), v(1, CHAR)).unwrap().v, 128);
        assert_eq!(binary(Binary::Mul, v(u32::MAX as i128, IntType::UINT), v(2, IntType::UINT)).unwrap().v, 4294967294);
    }

    #[test]
    fn conversion_wraps_and_bit_fields_promote_to_int() {
        assert_eq!(CHAR.convert(200), -56);
        assert_eq!(UCHAR.convert(-1), 255);
        assert_eq!(IntType::new(Rank::Bool, false).convert(-7), 1);
        let field = IntType::UINT.bit_field(31);
        assert_eq!(field.promote(), IntType::INT);
        assert_eq!(IntType::UINT.bit_field(32).promote(), IntType::UINT);
        assert_eq!(field.convert(-1), (1 << 31) - 1);
    }
}
