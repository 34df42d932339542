//! A parsed C file as plain data: the main file's syntax tree with byte ranges, types and
//! operators, built once by `clang.rs` (the only code that talks to libclang). Every query
//! the mutators need (statements, scopes, sites) is ordinary Rust over this snapshot.

use super::cint::{IntType, Rank};

pub type NodeId = usize;
pub type RecordId = usize;

/// The syntax kinds the mutators look at; the rest keep libclang's cursor kind number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    TranslationUnit,
    FunctionDecl,
    VarDecl,
    ParmDecl,
    FieldDecl,
    StructDecl,
    UnionDecl,
    TypedefDecl,
    CompoundStmt,
    DeclStmt,
    IfStmt,
    WhileStmt,
    DoStmt,
    ForStmt,
    SwitchStmt,
    CaseStmt,
    DefaultStmt,
    LabelStmt,
    GotoStmt,
    BreakStmt,
    ContinueStmt,
    ReturnStmt,
    NullStmt,
    BinaryOperator,
    CompoundAssignOperator,
    UnaryOperator,
    IntegerLiteral,
    DeclRefExpr,
    MemberRefExpr,
    ArraySubscriptExpr,
    CallExpr,
    ParenExpr,
    CStyleCastExpr,
    ConditionalOperator,
    /// Any other statement (clang_isStatement).
    OtherStmt(i32),
    /// Any other expression (clang_isExpression).
    OtherExpr(i32),
    Other(i32),
}

impl Kind {
    pub fn is_loop(self) -> bool {
        matches!(self, Kind::WhileStmt | Kind::DoStmt | Kind::ForStmt)
    }

    /// Statements that are expressions in C's grammar (`f(x);`, `a = b;`).
    pub fn is_expression(self) -> bool {
        matches!(
            self,
            Kind::BinaryOperator
                | Kind::CompoundAssignOperator
                | Kind::UnaryOperator
                | Kind::IntegerLiteral
                | Kind::DeclRefExpr
                | Kind::MemberRefExpr
                | Kind::ArraySubscriptExpr
                | Kind::CallExpr
                | Kind::ParenExpr
                | Kind::CStyleCastExpr
                | Kind::ConditionalOperator
                | Kind::OtherExpr(_)
        )
    }
}

/// A binary operator, compound assignments included, as C spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    And,
    Xor,
    Or,
    LAnd,
    LOr,
    Assign,
    MulAssign,
    DivAssign,
    RemAssign,
    AddAssign,
    SubAssign,
    ShlAssign,
    ShrAssign,
    AndAssign,
    XorAssign,
    OrAssign,
    Comma,
}

impl BinOp {
    pub fn token(self) -> &'static str {
        use BinOp::*;
        match self {
            Mul => "*",
            Div => "/",
            Rem => "%",
            Add => "+",
            Sub => "-",
            Shl => "<<",
            Shr => ">>",
            Lt => "<",
            Gt => ">",
            Le => "<=",
            Ge => ">=",
            Eq => "==",
            Ne => "!=",
            And => "&",
            Xor => "^",
            Or => "|",
            LAnd => "&&",
            LOr => "||",
            Assign => "=",
            MulAssign => "*=",
            DivAssign => "/=",
            RemAssign => "%=",
            AddAssign => "+=",
            SubAssign => "-=",
            ShlAssign => "<<=",
            ShrAssign => ">>=",
            AndAssign => "&=",
            XorAssign => "^=",
            OrAssign => "|=",
            Comma => ",",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnOp {
    PostInc,
    PostDec,
    PreInc,
    PreDec,
    AddrOf,
    Deref,
    Plus,
    Minus,
    Not,
    LNot,
    Other,
}

/// A type as the mutators need it; typedefs are resolved, qualifiers kept.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Ty {
    pub shape: Shape,
    pub is_const: bool,
    pub is_volatile: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Shape {
    Int(IntType),
    Float,
    Pointer,
    Array { element: Box<Ty>, len: u64 },
    Record(RecordId),
    Void,
    Other,
}

impl Ty {
    pub fn int(&self) -> Option<IntType> {
        match self.shape {
            Shape::Int(t) => Some(t),
            _ => None,
        }
    }

    pub fn plain(shape: Shape) -> Ty {
        Ty { shape, is_const: false, is_volatile: false }
    }
}

/// A struct or union with its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub name: String,
    pub is_union: bool,
    pub fields: Vec<Field>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    /// A bit-field's declared type narrowed to its width.
    pub ty: Ty,
    pub bit_width: Option<u32>,
}

#[derive(Debug, Clone)]
pub struct Node {
    pub kind: Kind,
    /// Byte range in the main file: `start..end`.
    pub start: usize,
    pub end: usize,
    /// Declared or referenced name.
    pub name: String,
    pub ty: Option<Ty>,
    pub binary: Option<BinOp>,
    pub unary: Option<UnOp>,
    /// The declaration a reference names, when it is in the main file.
    pub referenced: Option<NodeId>,
    /// A variable declared with an initializer (`int x = 1;`, not `int a[3];`).
    pub has_initializer: bool,
    /// A variable with static storage: a global or a `static` local.
    pub is_static: bool,
    pub parent: Option<NodeId>,
    pub children: Vec<NodeId>,
}

/// A parsed C file.
#[derive(Debug, Clone)]
pub struct Tu {
    pub source: String,
    pub nodes: Vec<Node>,
    pub records: Vec<Record>,
}

impl Tu {
    pub const ROOT: NodeId = 0;

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }

    pub fn text(&self, id: NodeId) -> &str {
        let n = &self.nodes[id];
        &self.source[n.start..n.end]
    }

    /// Every node below `id` (itself included), in source order.
    pub fn descendants(&self, id: NodeId) -> Vec<NodeId> {
        let mut out = Vec::new();
        let mut stack = vec![id];
        while let Some(n) = stack.pop() {
            out.push(n);
            stack.extend(self.nodes[n].children.iter().rev());
        }
        out
    }

    pub fn ancestors(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        std::iter::successors(self.nodes[id].parent, |&p| self.nodes[p].parent)
    }

    /// The function definition `id` is in.
    pub fn function_of(&self, id: NodeId) -> Option<NodeId> {
        std::iter::once(id).chain(self.ancestors(id)).find(|&a| self.nodes[a].kind == Kind::FunctionDecl)
    }

    pub fn functions(&self) -> Vec<NodeId> {
        self.nodes[Self::ROOT]
            .children
            .iter()
            .copied()
            .filter(|&c| self.nodes[c].kind == Kind::FunctionDecl && self.body(c).is_some())
            .collect()
    }

    /// A function's body.
    pub fn body(&self, function: NodeId) -> Option<NodeId> {
        self.nodes[function].children.iter().copied().find(|&c| self.nodes[c].kind == Kind::CompoundStmt)
    }
}

/// `_Bool`, `char`, … from the rank and signedness: for tests and synthesized declarations.
pub fn int_ty(rank: Rank, signed: bool) -> Ty {
    Ty::plain(Shape::Int(IntType::new(rank, signed)))
}
