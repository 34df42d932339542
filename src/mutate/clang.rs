// libclang's constants keep their C names.
#![allow(non_upper_case_globals)]

//! The only code that talks to libclang: parse a C file and copy its main-file syntax tree,
//! types and operators into an [`ast::Tu`](super::ast::Tu).
//!
//! libclang is loaded at run time (clang-sys `runtime`), from the linked LLVM's version
//! (`/usr/lib/llvm-N/lib`) unless `LIBCLANG_PATH` says otherwise: linked at build time, its
//! shared LLVM would be mapped into every forked child. ctos exports no LLVM symbols, so the
//! two LLVM copies do not see each other.

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::os::raw::c_char;
use std::path::Path;
use std::ptr;

use clang_sys::*;

use super::ast::{BinOp, Field, Kind, Node, NodeId, Record, RecordId, Shape, Tu, Ty, UnOp};
use super::cint::{IntType, Rank};

#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    #[error("libclang could not be loaded ({0}); install libclang-{1}-dev or set LIBCLANG_PATH")]
    Library(String, u32),
    #[error("{0}: not readable: {1}")]
    Read(String, std::io::Error),
    #[error("libclang could not parse {0} (error code {1})")]
    Parse(String, i32),
    #[error("{0}")]
    Invalid(String),
}

fn load() -> Result<(), ParseError> {
    if is_loaded() {
        return Ok(());
    }
    let major = crate::llvm::version().0;
    if std::env::var_os("LIBCLANG_PATH").is_none() {
        // Set before any thread reads the environment: parsing happens in the front door's
        // thread before workers start.
        std::env::set_var("LIBCLANG_PATH", format!("/usr/lib/llvm-{major}/lib"));
    }
    clang_sys::load().map_err(|e| ParseError::Library(e, major))
}

/// Parse `path` with clang's `args` (include paths, `-D…`); a file with any error is refused.
pub fn parse(path: &Path, args: &[String]) -> Result<Tu, ParseError> {
    load()?;
    let source = std::fs::read_to_string(path).map_err(|e| ParseError::Read(path.display().to_string(), e))?;
    let c_path = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|e| ParseError::Invalid(e.to_string()))?;
    let c_args: Vec<CString> = args.iter().map(|a| CString::new(a.as_str()).unwrap_or_default()).collect();
    let arg_ptrs: Vec<*const c_char> = c_args.iter().map(|a| a.as_ptr()).collect();
    unsafe {
        let index = clang_createIndex(0, 0);
        let mut unit: CXTranslationUnit = ptr::null_mut();
        let code = clang_parseTranslationUnit2(
            index,
            c_path.as_ptr(),
            arg_ptrs.as_ptr(),
            arg_ptrs.len() as i32,
            ptr::null_mut(),
            0,
            CXTranslationUnit_None,
            &mut unit,
        );
        let result = if code != CXError_Success || unit.is_null() {
            Err(ParseError::Parse(path.display().to_string(), code))
        } else {
            first_error(unit).map_or_else(|| Ok(Builder::build(unit, source)), |e| Err(ParseError::Invalid(e)))
        };
        if !unit.is_null() {
            clang_disposeTranslationUnit(unit);
        }
        clang_disposeIndex(index);
        result
    }
}

unsafe fn string(s: CXString) -> String {
    let c = clang_getCString(s);
    let out = if c.is_null() { String::new() } else { CStr::from_ptr(c).to_string_lossy().into_owned() };
    clang_disposeString(s);
    out
}

unsafe fn first_error(unit: CXTranslationUnit) -> Option<String> {
    for i in 0..clang_getNumDiagnostics(unit) {
        let d = clang_getDiagnostic(unit, i);
        let severity = clang_getDiagnosticSeverity(d);
        let text = string(clang_formatDiagnostic(d, clang_defaultDiagnosticDisplayOptions()));
        clang_disposeDiagnostic(d);
        if severity >= CXDiagnostic_Error {
            return Some(text);
        }
    }
    None
}

extern "C" fn collect(cursor: CXCursor, _parent: CXCursor, data: CXClientData) -> CXChildVisitResult {
    unsafe { (*(data as *mut Vec<CXCursor>)).push(cursor) };
    CXChildVisit_Continue
}

extern "C" fn collect_field(cursor: CXCursor, data: CXClientData) -> CXVisitorResult {
    unsafe { (*(data as *mut Vec<CXCursor>)).push(cursor) };
    CXVisit_Continue
}

unsafe fn children(cursor: CXCursor) -> Vec<CXCursor> {
    let mut out: Vec<CXCursor> = Vec::new();
    clang_visitChildren(cursor, collect, &mut out as *mut Vec<CXCursor> as CXClientData);
    out
}

unsafe fn offset(location: CXSourceLocation) -> usize {
    let mut file = ptr::null_mut();
    let mut offset = 0u32;
    clang_getFileLocation(location, &mut file, ptr::null_mut(), ptr::null_mut(), &mut offset);
    offset as usize
}

struct Builder {
    tu: Tu,
    /// Declarations seen so far, by (cursor hash, offset): what references resolve to.
    decls: HashMap<(u32, usize), NodeId>,
    records: HashMap<(u32, usize), RecordId>,
}

impl Builder {
    unsafe fn build(unit: CXTranslationUnit, source: String) -> Tu {
        let root = Node {
            kind: Kind::TranslationUnit,
            start: 0,
            end: source.len(),
            name: String::new(),
            ty: None,
            binary: None,
            unary: None,
            referenced: None,
            has_initializer: false,
            is_static: false,
            parent: None,
            children: Vec::new(),
        };
        let tu = Tu { source, nodes: vec![root], records: Vec::new() };
        let mut b = Builder { tu, decls: HashMap::new(), records: HashMap::new() };
        for child in children(clang_getTranslationUnitCursor(unit)) {
            if clang_Location_isFromMainFile(clang_getCursorLocation(child)) != 0 {
                b.node(child, Tu::ROOT);
            }
        }
        b.tu
    }

    fn key(cursor: CXCursor) -> (u32, usize) {
        unsafe { (clang_hashCursor(cursor), offset(clang_getCursorLocation(cursor))) }
    }

    unsafe fn node(&mut self, cursor: CXCursor, parent: NodeId) -> NodeId {
        let kind = kind_of(cursor);
        let extent = clang_getCursorExtent(cursor);
        let (start, end) = (offset(clang_getRangeStart(extent)), offset(clang_getRangeEnd(extent)));
        let end = end.clamp(start, self.tu.source.len());
        let typed = matches!(kind, Kind::VarDecl | Kind::ParmDecl | Kind::FieldDecl) || kind.is_expression();
        let ty = typed.then(|| self.ty(clang_getCursorType(cursor)));
        let referenced = match kind {
            Kind::DeclRefExpr | Kind::MemberRefExpr | Kind::GotoStmt => {
                let target = clang_getCursorReferenced(cursor);
                (clang_Cursor_isNull(target) == 0).then(|| self.decls.get(&Self::key(target)).copied()).flatten()
            }
            _ => None,
        };
        let id = self.tu.nodes.len();
        self.tu.nodes.push(Node {
            kind,
            start,
            end,
            name: string(clang_getCursorSpelling(cursor)),
            ty,
            binary: matches!(kind, Kind::BinaryOperator | Kind::CompoundAssignOperator)
                .then(|| binary_op(clang_getCursorBinaryOperatorKind(cursor)))
                .flatten(),
            unary: (kind == Kind::UnaryOperator).then(|| unary_op(clang_getCursorUnaryOperatorKind(cursor))),
            referenced,
            has_initializer: kind == Kind::VarDecl
                && clang_Cursor_isNull(clang_Cursor_getVarDeclInitializer(cursor)) == 0,
            is_static: kind == Kind::VarDecl && clang_Cursor_hasVarDeclGlobalStorage(cursor) != 0,
            parent: Some(parent),
            children: Vec::new(),
        });
        self.tu.nodes[parent].children.push(id);
        if matches!(kind, Kind::VarDecl | Kind::ParmDecl | Kind::FunctionDecl | Kind::FieldDecl | Kind::LabelStmt) {
            self.decls.insert(Self::key(cursor), id);
        }
        for child in children(cursor) {
            self.node(child, id);
        }
        id
    }

    unsafe fn ty(&mut self, t: CXType) -> Ty {
        let canonical = clang_getCanonicalType(t);
        let is_const = clang_isConstQualifiedType(canonical) != 0;
        let is_volatile = clang_isVolatileQualifiedType(canonical) != 0;
        let int = |rank, signed| Shape::Int(IntType::new(rank, signed));
        let shape = match canonical.kind {
            CXType_Bool => int(Rank::Bool, false),
            CXType_Char_S | CXType_SChar => int(Rank::Char, true),
            CXType_Char_U | CXType_UChar => int(Rank::Char, false),
            CXType_Short => int(Rank::Short, true),
            CXType_UShort => int(Rank::Short, false),
            CXType_Int => int(Rank::Int, true),
            CXType_UInt => int(Rank::Int, false),
            CXType_Long => int(Rank::Long, true),
            CXType_ULong => int(Rank::Long, false),
            CXType_LongLong => int(Rank::LongLong, true),
            CXType_ULongLong => int(Rank::LongLong, false),
            CXType_Float | CXType_Double | CXType_LongDouble => Shape::Float,
            CXType_Pointer => Shape::Pointer,
            CXType_Void => Shape::Void,
            CXType_ConstantArray => Shape::Array {
                element: Box::new(self.ty(clang_getArrayElementType(canonical))),
                len: clang_getArraySize(canonical).max(0) as u64,
            },
            CXType_Record => Shape::Record(self.record(canonical)),
            _ => Shape::Other,
        };
        Ty { shape, is_const, is_volatile }
    }

    unsafe fn record(&mut self, t: CXType) -> RecordId {
        let decl = clang_getTypeDeclaration(t);
        let key = Self::key(decl);
        if let Some(&id) = self.records.get(&key) {
            return id;
        }
        let id = self.tu.records.len();
        self.records.insert(key, id);
        let is_union = clang_getCursorKind(decl) == CXCursor_UnionDecl;
        self.tu.records.push(Record { name: string(clang_getCursorSpelling(decl)), is_union, fields: Vec::new() });
        let mut cursors: Vec<CXCursor> = Vec::new();
        clang_Type_visitFields(t, collect_field, &mut cursors as *mut Vec<CXCursor> as CXClientData);
        let mut fields = Vec::new();
        for c in cursors {
            let mut ty = self.ty(clang_getCursorType(c));
            let bit_width = (clang_Cursor_isBitField(c) != 0).then(|| clang_getFieldDeclBitWidth(c).max(0) as u32);
            if let (Some(w), Shape::Int(int)) = (bit_width, &ty.shape) {
                ty.shape = Shape::Int(int.bit_field(w));
            }
            fields.push(Field { name: string(clang_getCursorSpelling(c)), ty, bit_width });
        }
        self.tu.records[id].fields = fields;
        id
    }
}

fn kind_of(cursor: CXCursor) -> Kind {
    let k = unsafe { clang_getCursorKind(cursor) };
    match k {
        CXCursor_FunctionDecl => Kind::FunctionDecl,
        CXCursor_VarDecl => Kind::VarDecl,
        CXCursor_ParmDecl => Kind::ParmDecl,
        CXCursor_FieldDecl => Kind::FieldDecl,
        CXCursor_StructDecl => Kind::StructDecl,
        CXCursor_UnionDecl => Kind::UnionDecl,
        CXCursor_TypedefDecl => Kind::TypedefDecl,
        CXCursor_CompoundStmt => Kind::CompoundStmt,
        CXCursor_DeclStmt => Kind::DeclStmt,
        CXCursor_IfStmt => Kind::IfStmt,
        CXCursor_WhileStmt => Kind::WhileStmt,
        CXCursor_DoStmt => Kind::DoStmt,
        CXCursor_ForStmt => Kind::ForStmt,
        CXCursor_SwitchStmt => Kind::SwitchStmt,
        CXCursor_CaseStmt => Kind::CaseStmt,
        CXCursor_DefaultStmt => Kind::DefaultStmt,
        CXCursor_LabelStmt => Kind::LabelStmt,
        CXCursor_GotoStmt => Kind::GotoStmt,
        CXCursor_BreakStmt => Kind::BreakStmt,
        CXCursor_ContinueStmt => Kind::ContinueStmt,
        CXCursor_ReturnStmt => Kind::ReturnStmt,
        CXCursor_NullStmt => Kind::NullStmt,
        CXCursor_BinaryOperator => Kind::BinaryOperator,
        CXCursor_CompoundAssignOperator => Kind::CompoundAssignOperator,
        CXCursor_UnaryOperator => Kind::UnaryOperator,
        CXCursor_IntegerLiteral => Kind::IntegerLiteral,
        CXCursor_DeclRefExpr => Kind::DeclRefExpr,
        CXCursor_MemberRefExpr => Kind::MemberRefExpr,
        CXCursor_ArraySubscriptExpr => Kind::ArraySubscriptExpr,
        CXCursor_CallExpr => Kind::CallExpr,
        CXCursor_ParenExpr => Kind::ParenExpr,
        CXCursor_CStyleCastExpr => Kind::CStyleCastExpr,
        CXCursor_ConditionalOperator => Kind::ConditionalOperator,
        _ if unsafe { clang_isStatement(k) } != 0 => Kind::OtherStmt(k),
        _ if unsafe { clang_isExpression(k) } != 0 => Kind::OtherExpr(k),
        _ => Kind::Other(k),
    }
}

fn binary_op(k: CXBinaryOperatorKind) -> Option<BinOp> {
    use BinOp::*;
    Some(match k {
        CXBinaryOperator_Mul => Mul,
        CXBinaryOperator_Div => Div,
        CXBinaryOperator_Rem => Rem,
        CXBinaryOperator_Add => Add,
        CXBinaryOperator_Sub => Sub,
        CXBinaryOperator_Shl => Shl,
        CXBinaryOperator_Shr => Shr,
        CXBinaryOperator_LT => Lt,
        CXBinaryOperator_GT => Gt,
        CXBinaryOperator_LE => Le,
        CXBinaryOperator_GE => Ge,
        CXBinaryOperator_EQ => Eq,
        CXBinaryOperator_NE => Ne,
        CXBinaryOperator_And => And,
        CXBinaryOperator_Xor => Xor,
        CXBinaryOperator_Or => Or,
        CXBinaryOperator_LAnd => LAnd,
        CXBinaryOperator_LOr => LOr,
        CXBinaryOperator_Assign => Assign,
        CXBinaryOperator_MulAssign => MulAssign,
        CXBinaryOperator_DivAssign => DivAssign,
        CXBinaryOperator_RemAssign => RemAssign,
        CXBinaryOperator_AddAssign => AddAssign,
        CXBinaryOperator_SubAssign => SubAssign,
        CXBinaryOperator_ShlAssign => ShlAssign,
        CXBinaryOperator_ShrAssign => ShrAssign,
        CXBinaryOperator_AndAssign => AndAssign,
        CXBinaryOperator_XorAssign => XorAssign,
        CXBinaryOperator_OrAssign => OrAssign,
        CXBinaryOperator_Comma => Comma,
        _ => return None,
    })
}

fn unary_op(k: CXUnaryOperatorKind) -> UnOp {
    match k {
        CXUnaryOperator_PostInc => UnOp::PostInc,
        CXUnaryOperator_PostDec => UnOp::PostDec,
        CXUnaryOperator_PreInc => UnOp::PreInc,
        CXUnaryOperator_PreDec => UnOp::PreDec,
        CXUnaryOperator_AddrOf => UnOp::AddrOf,
        CXUnaryOperator_Deref => UnOp::Deref,
        CXUnaryOperator_Plus => UnOp::Plus,
        CXUnaryOperator_Minus => UnOp::Minus,
        CXUnaryOperator_Not => UnOp::Not,
        CXUnaryOperator_LNot => UnOp::LNot,
        _ => UnOp::Other,
    }
}
