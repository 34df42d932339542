//! The generated driver's IR: a `main` that calls each chosen function on its inputs and
//! prints, per call, what it returned and a hash of the memory it could write. It also
//! holds the runtime of src/llvm/ub_checks.cpp's checks, which only an instrumented copy
//! of the module calls: there a call that breaks a rule prints which and is abandoned by a
//! `longjmp`, and the next call runs. One file serves both runs, so that a reducer's
//! candidate is checked with the very driver the bug folder holds.

use std::fmt::Write as _;

use super::{Arg, Call, Callable, Described, Scalar, ValueType, ARENA, SLOT};

/// The kinds `__ctos.ub` reports, by number (ub_checks.cpp's `Kind`), then those of the
/// runtime itself from 100 on ([`RUNTIME_KINDS`]).
pub const UB_KINDS: [&str; 22] = [
    "an nsw or nuw operation that overflows",
    "an exact division or shift that drops bits",
    "a shift by the bit width or more",
    "a division by zero",
    "a signed division of the minimum by -1",
    "an assume of false",
    "an or disjoint whose operands share bits",
    "an nneg operand that is negative",
    "a trunc nuw or nsw that drops bits",
    "ctlz or cttz of zero, or abs of the minimum, under its poison flag",
    "an element index past the vector's end",
    "an unreachable that is reached",
    "a value outside its range, nonnull, align or nofpclass promise",
    "an icmp samesign of operands with different signs",
    "the function returns poison",
    "poison left in memory the driver prints",
    "a branch or switch on poison",
    "a division by poison",
    "an access through a poison address",
    "poison passed or returned as noundef",
    "poison passed to a function outside the module",
    "an assume of poison",
];
/// The first of [`UB_KINDS`] that only an optimized run's poison tracking reports: poison
/// observed (src/llvm/poison_checks.cpp).
pub const FIRST_OBSERVED_KIND: u32 = 14;
pub const RUNTIME_KINDS: [&str; 3] = [
    "an access outside the memory given (arguments' memory, globals, the stack)",
    "a misaligned access",
    "an inbounds getelementptr outside its object",
];

/// What kind number `kind` stands for.
pub fn ub_kind_name(kind: u32) -> &'static str {
    match kind {
        k if (k as usize) < UB_KINDS.len() => UB_KINDS[k as usize],
        k if (100..100 + RUNTIME_KINDS.len() as u32).contains(&k) => RUNTIME_KINDS[(k - 100) as usize],
        _ => "an unknown check",
    }
}

/// A global's or function's name as IR spells it.
pub(super) fn ir_name(name: &str) -> String {
    let plain = name
        .chars()
        .enumerate()
        .all(|(i, c)| c.is_ascii_alphabetic() || "$._".contains(c) || (i > 0 && c.is_ascii_digit()));
    match plain && !name.is_empty() {
        true => format!("@{name}"),
        false => format!("@\"{}\"", escape(name.as_bytes())),
    }
}

fn escape(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| match b {
            b' '..=b'~' if b != b'"' && b != b'\\' => (b as char).to_string(),
            _ => format!("\\{b:02X}"),
        })
        .collect()
}

impl Callable {
    fn ret_ir(&self) -> String {
        self.ret.as_ref().map_or("void".to_string(), ValueType::ir)
    }
}

impl ValueType {
    fn ir(&self) -> String {
        let scalar = match self.scalar {
            Scalar::Int(bits) => format!("i{bits}"),
            Scalar::Float => "float".to_string(),
            Scalar::Double => "double".to_string(),
            Scalar::Ptr => "ptr".to_string(),
        };
        match self.lanes {
            Some(n) => format!("<{n} x {scalar}>"),
            None => scalar,
        }
    }
}

fn scalar_constant(scalar: Scalar, arg: &Arg) -> String {
    match (scalar, arg) {
        (Scalar::Int(1), Arg::Int(v)) => if *v & 1 == 1 { "true" } else { "false" }.to_string(),
        (_, Arg::Int(v)) => v.to_string(),
        (_, Arg::Float(v)) => format!("0x{:016X}", v.to_bits()),
        (_, Arg::Ptr(slot)) => format!("getelementptr (i8, ptr @ctos.arena, i64 {})", slot * SLOT + SLOT / 2),
        (_, Arg::Vector(_)) => unreachable!("vectors hold scalars"),
    }
}

fn constant(ty: &ValueType, arg: &Arg) -> String {
    match arg {
        Arg::Vector(lanes) => {
            let lanes: Vec<String> = lanes
                .iter()
                .map(|l| format!("{} {}", ValueType { lanes: None, ..*ty }.ir(), scalar_constant(ty.scalar, l)))
                .collect();
            format!("<{}>", lanes.join(", "))
        }
        scalar => scalar_constant(ty.scalar, scalar),
    }
}

/// How an argument reads in the printed line.
fn shown(ty: &ValueType, arg: &Arg) -> String {
    match arg {
        Arg::Ptr(slot) => format!("ptr arena+{}", slot * SLOT + SLOT / 2),
        Arg::Float(v) => format!("{} {v:?}", ty.ir()),
        Arg::Int(v) => format!("{} {v}", ty.ir()),
        Arg::Vector(lanes) => {
            let lanes: Vec<String> = lanes
                .iter()
                .map(|l| match l {
                    Arg::Float(v) => format!("{v:?}"),
                    Arg::Int(v) => v.to_string(),
                    _ => String::new(),
                })
                .collect();
            format!("{} <{}>", ty.ir(), lanes.join(", "))
        }
    }
}

/// Instructions that turn a returned scalar into printf arguments, with its conversion.
struct Printer<'a> {
    body: &'a mut String,
    next: usize,
}

impl Printer<'_> {
    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%t{}", self.next)
    }

    /// printf's conversion and argument for scalar `value` of `scalar`.
    fn scalar(&mut self, scalar: Scalar, value: &str) -> (&'static str, String) {
        match scalar {
            Scalar::Int(1) => {
                let v = self.fresh();
                let _ = writeln!(self.body, "  {v} = zext i1 {value} to i64");
                ("%lld", format!("i64 {v}"))
            }
            Scalar::Int(bits) if bits < 64 => {
                let v = self.fresh();
                let _ = writeln!(self.body, "  {v} = sext i{bits} {value} to i64");
                ("%lld", format!("i64 {v}"))
            }
            Scalar::Int(_) => ("%lld", format!("i64 {value}")),
            Scalar::Float | Scalar::Double => {
                let mut v = value.to_string();
                if scalar == Scalar::Float {
                    v = self.fresh();
                    let _ = writeln!(self.body, "  {v} = fpext float {value} to double");
                }
                // NaN's sign and payload are not the optimizer's to keep: every NaN prints alike.
                let (nan, canonical) = (self.fresh(), self.fresh());
                let _ = writeln!(self.body, "  {nan} = fcmp uno double {v}, {v}");
                let _ = writeln!(self.body, "  {canonical} = select i1 {nan}, double 0x7FF8000000000000, double {v}");
                ("%a", format!("double {canonical}"))
            }
            Scalar::Ptr => {
                // Where it points: into the arena (its offset), null (-1) or elsewhere (-2).
                let is_null = self.fresh();
                let _ = writeln!(self.body, "  {is_null} = icmp eq ptr {value}, null");
                let (address, offset, inside, null, code) =
                    (self.fresh(), self.fresh(), self.fresh(), self.fresh(), self.fresh());
                let _ = writeln!(self.body, "  {address} = ptrtoint ptr {value} to i64");
                let _ = writeln!(self.body, "  {offset} = sub i64 {address}, ptrtoint (ptr @ctos.arena to i64)");
                let _ = writeln!(self.body, "  {inside} = icmp ule i64 {offset}, {ARENA}");
                let _ = writeln!(self.body, "  {null} = select i1 {is_null}, i64 -1, i64 -2");
                let _ = writeln!(self.body, "  {code} = select i1 {inside}, i64 {offset}, i64 {null}");
                ("ptr(%lld)", format!("i64 {code}"))
            }
        }
    }

    /// Conversions and arguments for `value` of `ty`, lane by lane for a vector.
    fn value(&mut self, ty: &ValueType, value: &str) -> (String, Vec<String>) {
        let Some(lanes) = ty.lanes else {
            let (conv, arg) = self.scalar(ty.scalar, value);
            return (conv.to_string(), vec![arg]);
        };
        let (mut convs, mut args) = (Vec::new(), Vec::new());
        for lane in 0..lanes {
            let v = self.fresh();
            let _ = writeln!(self.body, "  {v} = extractelement {} {value}, i32 {lane}", ty.ir());
            let (conv, arg) = self.scalar(ty.scalar, &v);
            convs.push(conv);
            args.push(arg);
        }
        (format!("<{}>", convs.join(", ")), args)
    }
}

/// FNV-1a's start.
const FNV_BASIS: i64 = -3750763034362895579;

/// The driver's stand-in for a function the module declares: it folds its number and each
/// argument (as its printed form would show it: lanes one by one, NaNs alike, pointers as
/// where they point) into `@ctos.sink`, which the driver prints after each call, and
/// returns the sink's low bits.
fn stand_in(out: &mut String, index: usize, stub: &Callable) {
    let params: Vec<String> = stub.params.iter().enumerate().map(|(i, t)| format!("{} %a{i}", t.ir())).collect();
    let _ = writeln!(out, "\ndefine {} {}({}) {{", stub.ret_ir(), ir_name(&stub.name), params.join(", "));
    let _ = writeln!(out, "  call void @ctos.fold(i64 {index})");
    let mut printer = Printer { body: out, next: 0 };
    for (i, t) in stub.params.iter().enumerate() {
        let (_, values) = printer.value(t, &format!("%a{i}"));
        for value in values {
            let folded = match value.split_once(' ') {
                Some(("double", v)) => {
                    let bits = printer.fresh();
                    let _ = writeln!(printer.body, "  {bits} = bitcast double {v} to i64");
                    format!("i64 {bits}")
                }
                _ => value,
            };
            let _ = writeln!(printer.body, "  call void @ctos.fold({folded})");
        }
    }
    match stub.ret.map(|r| r.scalar) {
        Some(Scalar::Int(64)) => {
            let h = printer.fresh();
            let _ = writeln!(printer.body, "  {h} = load i64, ptr @ctos.sink");
            let _ = writeln!(printer.body, "  ret i64 {h}\n}}");
        }
        Some(Scalar::Int(bits)) => {
            let (h, r) = (printer.fresh(), printer.fresh());
            let _ = writeln!(printer.body, "  {h} = load i64, ptr @ctos.sink");
            let _ = writeln!(printer.body, "  {r} = trunc i64 {h} to i{bits}");
            let _ = writeln!(printer.body, "  ret i{bits} {r}\n}}");
        }
        _ => {
            let _ = writeln!(printer.body, "  ret void\n}}");
        }
    }
}

/// The driver's IR text for `calls` of `described`'s functions.
pub fn driver_text(described: &Described, calls: &[Call]) -> String {
    let mut head = String::new();
    let mut body = String::new();
    let _ =
        writeln!(head, "; Generated by ctos: calls functions of the program on chosen inputs and prints, per call,");
    let _ = writeln!(head, "; what it returned and a hash of the memory it was given (`mem`) and of each global it");
    let _ = writeln!(head, "; may write. Link it after optimizing: llvm-link program.ll driver.ll | lli");
    let _ = writeln!(head, "@ctos.arena = global [{ARENA} x i8] zeroinitializer, align 64");
    let _ = writeln!(head, "declare i32 @printf(ptr, ...)");
    let mut used: Vec<usize> = calls.iter().map(|c| c.function).collect();
    used.sort_unstable();
    used.dedup();
    for &f in &used {
        let callable: &Callable = &described.callable[f];
        let params: Vec<String> = callable.params.iter().map(ValueType::ir).collect();
        let _ = writeln!(head, "declare {} {}({})", callable.ret_ir(), ir_name(&callable.name), params.join(", "));
    }
    for (name, size) in &described.globals {
        let _ = writeln!(head, "{} = external global [{size} x i8]", ir_name(name));
    }
    for (name, size, align) in &described.externs {
        let _ = writeln!(head, "{} = global [{size} x i8] zeroinitializer, align {align}", ir_name(name));
    }
    let mut stubs = String::new();
    for (index, stub) in described.stubs.iter().enumerate() {
        stand_in(&mut stubs, index, stub);
    }
    let read_back: Vec<(&String, u64)> = described
        .globals
        .iter()
        .map(|(n, s)| (n, *s))
        .chain(described.externs.iter().map(|(n, s, _)| (n, *s)))
        .collect();
    let _ = writeln!(body, "define i32 @main() {{\nentry:");
    // What fresh stack memory holds in this run (the sandbox fills it): each call finds
    // its frame filled with it, not with what the driver's last printf left there, so
    // that a call reading memory it never wrote prints differently in two runs.
    let _ = writeln!(body, "  %fill = call i8 @ctos.fresh_byte()");
    let _ = writeln!(body, "  %top = alloca i8\n  store ptr %top, ptr @ctos.stack_top");
    let _ = writeln!(body, "  br label %call0");
    let mut printer_next = 0;
    for (k, call) in calls.iter().enumerate() {
        let callable = &described.callable[call.function];
        let _ = writeln!(body, "call{k}:");
        // Where a check that fails in this call returns to (the next call).
        let _ = writeln!(body, "  store i32 {k}, ptr @ctos.current");
        let _ = writeln!(body, "  %j{k} = call i32 @_setjmp(ptr @ctos.jmp)");
        let _ = writeln!(body, "  %ok{k} = icmp eq i32 %j{k}, 0");
        let _ = writeln!(body, "  br i1 %ok{k}, label %run{k}, label %call{}", k + 1);
        let _ = writeln!(body, "run{k}:");
        let _ = writeln!(body, "  call void @ctos.fill(i32 {k})");
        for (name, size, _) in &described.externs {
            let _ = writeln!(body, "  call void @ctos.fill_bytes(ptr {}, i64 {size}, i32 {k})", ir_name(name));
        }
        let _ = writeln!(body, "  store i64 {FNV_BASIS}, ptr @ctos.sink");
        // Below the stack pointer, where the call's frame will be (a function may keep
        // locals there without moving it): a dynamic alloca, filled, then given back.
        let _ = writeln!(body, "  %sp{k} = call ptr @llvm.stacksave.p0()");
        let _ = writeln!(body, "  %below{k} = alloca i8, i64 65536, align 16");
        let _ = writeln!(body, "  call void @llvm.memset.p0.i64(ptr %below{k}, i8 %fill, i64 65536, i1 true)");
        let _ = writeln!(body, "  call void @llvm.stackrestore.p0(ptr %sp{k})");
        let args: Vec<String> =
            callable.params.iter().zip(&call.args).map(|(t, a)| format!("{} {}", t.ir(), constant(t, a))).collect();
        let callee = ir_name(&callable.name);
        let shown_args: Vec<String> = callable.params.iter().zip(&call.args).map(|(t, a)| shown(t, a)).collect();
        let mut format = format!("call {k}: {callee}({})", shown_args.join(", ")).replace('%', "%%");
        let mut printed = Vec::new();
        let mut printer = Printer { body: &mut body, next: printer_next };
        match &callable.ret {
            None => {
                let _ = writeln!(printer.body, "  call void {callee}({})", args.join(", "));
            }
            Some(ret) => {
                let _ = writeln!(printer.body, "  %r{k} = call {} {callee}({})", ret.ir(), args.join(", "));
                let (conv, values) = printer.value(ret, &format!("%r{k}"));
                format.push_str(&format!(" -> {conv}"));
                printed.extend(values);
            }
        }
        // Under poison tracking: the value it returned or the memory it left poison?
        let _ = writeln!(printer.body, "  call void @ctos.observed()");
        let h = printer.fresh();
        let _ = writeln!(printer.body, "  {h} = call i64 @ctos.hash(ptr @ctos.arena, i64 {ARENA})");
        format.push_str(" mem=%016llx");
        printed.push(format!("i64 {h}"));
        for &(name, size) in &read_back {
            let g = printer.fresh();
            let _ = writeln!(printer.body, "  {g} = call i64 @ctos.hash(ptr {}, i64 {size})", ir_name(name));
            format.push_str(&format!(" {}=%016llx", name.replace('%', "%%")));
            printed.push(format!("i64 {g}"));
        }
        if !described.stubs.is_empty() {
            let sink = printer.fresh();
            let _ = writeln!(printer.body, "  {sink} = load i64, ptr @ctos.sink");
            format.push_str(" calls=%016llx");
            printed.push(format!("i64 {sink}"));
        }
        printer_next = printer.next;
        format.push('\n');
        let bytes = format.into_bytes();
        let _ =
            writeln!(head, "@ctos.fmt{k} = private constant [{} x i8] c\"{}\\00\"", bytes.len() + 1, escape(&bytes));
        let list: String = printed.iter().map(|p| format!(", {p}")).collect();
        let _ = writeln!(body, "  call i32 (ptr, ...) @printf(ptr @ctos.fmt{k}{list})");
        let _ = writeln!(body, "  br label %call{}", k + 1);
    }
    let _ = writeln!(body, "call{}:\n  ret i32 0\n}}", calls.len());
    let mut text = head;
    text.push_str(&body);
    text.push_str(&stubs);
    text.push_str(&RUNTIME.replace("ARENA", &ARENA.to_string()));
    text.push_str(&CHECKING_RUNTIME.replace("ARENA", &ARENA.to_string()));
    text.push_str(&crate::llvm::shadow_runtime(ARENA));
    text.push_str(DRIVER_REPORT);
    text
}

/// The fill before each call (the same bytes before and after optimization, different
/// for each call: the arena's and the globals the driver defines) and FNV-1a over memory.
const RUNTIME: &str = r#"
@ctos.sink = global i64 0

; FNV-1a of the values the driver's stand-ins were passed, in the order they were called.
define internal void @ctos.fold(i64 %v) {
  %h = load i64, ptr @ctos.sink
  %x = xor i64 %h, %v
  %m = mul i64 %x, 1099511628211
  store i64 %m, ptr @ctos.sink
  ret void
}

define internal void @ctos.fill(i32 %call) {
entry:
  call void @ctos.shadow_reset()
  call void @ctos.fill_bytes(ptr @ctos.arena, i64 ARENA, i32 %call)
  ret void
}

define internal void @ctos.fill_bytes(ptr %base, i64 %n, i32 %call) {
entry:
  %seed = mul i32 %call, 11
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %exit, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %i32 = trunc i64 %i to i32
  %x = mul i32 %i32, 37
  %y = add i32 %x, %seed
  %z = add i32 %y, 1
  %byte = trunc i32 %z to i8
  %p = getelementptr i8, ptr %base, i64 %i
  store i8 %byte, ptr %p
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}

; Deep enough below main's frame not to be where the runtime's call to main wrote.
define internal i8 @ctos.fresh_byte() {
  %area = alloca [256 x i8], align 16
  %byte = load volatile i8, ptr %area
  ret i8 %byte
}

declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare ptr @llvm.stacksave.p0()
declare void @llvm.stackrestore.p0(ptr)

define internal i64 @ctos.hash(ptr %p, i64 %n) {
entry:
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %exit, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %h = phi i64 [ -3750763034362895579, %entry ], [ %h2, %loop ]
  %q = getelementptr i8, ptr %p, i64 %i
  %b = load i8, ptr %q
  %w = zext i8 %b to i64
  %h1 = xor i64 %h, %w
  %h2 = mul i64 %h1, 1099511628211
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  %r = phi i64 [ -3750763034362895579, %entry ], [ %h2, %loop ]
  ret i64 %r
}
"#;

/// The checks' runtime: which memory exists (the arena, the module's globals from the
/// instrumented module's `__ctos.regions`, the stack below `main`), and the report. A
/// pointer's object is the one it points into, not the one it points just past: globals
/// lie side by side, and the driver's arena ends where a global it defines starts. The
/// module's own table replaces the empty weak one when it is instrumented.
const CHECKING_RUNTIME: &str = r#"
@ctos.jmp = global [64 x i64] zeroinitializer, align 16
@ctos.current = global i32 0
@ctos.stack_top = global ptr null
@__ctos.regions = weak global [0 x { ptr, i64 }] zeroinitializer
@__ctos.nregions = weak global i64 0
@ctos.ubfmt = private constant [29 x i8] c"ctos-ub: call %d: kind %d\0A\00\00\00"
declare i32 @_setjmp(ptr) returns_twice
declare void @longjmp(ptr, i32) noreturn

define void @__ctos.ub(i32 %kind) {
  %c = load i32, ptr @ctos.current
  %p = call i32 (ptr, ...) @printf(ptr @ctos.ubfmt, i32 %c, i32 %kind)
  call void @longjmp(ptr @ctos.jmp, i32 1)
  unreachable
}

define internal { i64, i64 } @ctos.region_of(ptr %p) {
entry:
  %a = ptrtoint ptr %p to i64
  %as = ptrtoint ptr @ctos.arena to i64
  %ae = add i64 %as, ARENA
  %a1 = icmp uge i64 %a, %as
  %a2 = icmp ult i64 %a, %ae
  %inarena = and i1 %a1, %a2
  br i1 %inarena, label %arena, label %stack
arena:
  %ra0 = insertvalue { i64, i64 } zeroinitializer, i64 %as, 0
  %ra = insertvalue { i64, i64 } %ra0, i64 %ae, 1
  ret { i64, i64 } %ra
stack:
  %topp = load ptr, ptr @ctos.stack_top
  %top = ptrtoint ptr %topp to i64
  %lo = sub i64 %top, 8388608
  %s1 = icmp uge i64 %a, %lo
  %s2 = icmp ult i64 %a, %top
  %instack = and i1 %s1, %s2
  br i1 %instack, label %onstack, label %pre
onstack:
  %rs0 = insertvalue { i64, i64 } zeroinitializer, i64 %lo, 0
  %rs = insertvalue { i64, i64 } %rs0, i64 %top, 1
  ret { i64, i64 } %rs
pre:
  %n = load i64, ptr @__ctos.nregions
  br label %loop
loop:
  %i = phi i64 [ 0, %pre ], [ %i1, %next ]
  %done = icmp uge i64 %i, %n
  br i1 %done, label %none, label %body
body:
  %e = getelementptr [0 x { ptr, i64 }], ptr @__ctos.regions, i64 0, i64 %i, i32 0
  %sp = load ptr, ptr %e
  %s = ptrtoint ptr %sp to i64
  %szp = getelementptr [0 x { ptr, i64 }], ptr @__ctos.regions, i64 0, i64 %i, i32 1
  %sz = load i64, ptr %szp
  %end = add i64 %s, %sz
  %g1 = icmp uge i64 %a, %s
  %g2 = icmp ult i64 %a, %end
  %in = and i1 %g1, %g2
  br i1 %in, label %found, label %next
found:
  %rg0 = insertvalue { i64, i64 } zeroinitializer, i64 %s, 0
  %rg = insertvalue { i64, i64 } %rg0, i64 %end, 1
  ret { i64, i64 } %rg
next:
  %i1 = add i64 %i, 1
  br label %loop
none:
  ret { i64, i64 } zeroinitializer
}

define void @__ctos.access(ptr %p, i64 %size, i64 %align) {
entry:
  %empty = icmp eq i64 %size, 0
  br i1 %empty, label %ok, label %aligned
aligned:
  %a = ptrtoint ptr %p to i64
  %mask = sub i64 %align, 1
  %low = and i64 %a, %mask
  %mis = icmp ne i64 %low, 0
  br i1 %mis, label %misaligned, label %where
misaligned:
  call void @__ctos.ub(i32 101)
  unreachable
where:
  %r = call { i64, i64 } @ctos.region_of(ptr %p)
  %start = extractvalue { i64, i64 } %r, 0
  %end = extractvalue { i64, i64 } %r, 1
  %last = add i64 %a, %size
  %known = icmp ne i64 %start, 0
  %fits = icmp ule i64 %last, %end
  %inside = and i1 %known, %fits
  br i1 %inside, label %ok, label %outside
outside:
  call void @__ctos.ub(i32 100)
  unreachable
ok:
  ret void
}

define i1 @__ctos.outside(ptr %base, ptr %result) {
entry:
  %r = call { i64, i64 } @ctos.region_of(ptr %base)
  %start = extractvalue { i64, i64 } %r, 0
  %end = extractvalue { i64, i64 } %r, 1
  %a = ptrtoint ptr %result to i64
  %known = icmp ne i64 %start, 0
  %g1 = icmp uge i64 %a, %start
  %g2 = icmp ule i64 %a, %end
  %in = and i1 %g1, %g2
  %ok = and i1 %known, %in
  %out = xor i1 %ok, true
  ret i1 %out
}

define void @__ctos.gep(ptr %base, ptr %result) {
entry:
  %out = call i1 @__ctos.outside(ptr %base, ptr %result)
  br i1 %out, label %outside, label %fine
outside:
  call void @__ctos.ub(i32 102)
  unreachable
fine:
  ret void
}
"#;

/// A generated driver's report: the call stops, and the next one runs.
const DRIVER_REPORT: &str = r#"
define void @__ctos.poison(i32 %kind, i32 %origin) {
  %c = load i32, ptr @ctos.current
  %slot = getelementptr ptr, ptr @__ctos.origins, i32 %origin
  %text = load ptr, ptr %slot
  %p = call i32 (ptr, ...) @printf(ptr @ctos.poisonfmt, i32 %c, i32 %kind, ptr %text)
  call void @llvm.memset.p0.i64(ptr @__ctos.arg_origins, i8 0, i64 1024, i1 false)
  call void @llvm.memset.p0.i64(ptr @__ctos.ret_lanes, i8 0, i64 64, i1 false)
  store i32 0, ptr @__ctos.ret_origin
  call void @longjmp(ptr @ctos.jmp, i32 1)
  unreachable
}
"#;
