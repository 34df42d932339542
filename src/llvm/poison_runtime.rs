//! The runtime of poison tracking (src/llvm/poison_checks.cpp), as IR: linked with a
//! generated driver (src/program/driver/text.rs adds the driver's report), or on its own
//! after a program with its own `main` is instrumented.

/// Poison tracking's runtime for an arena of `arena` bytes.
pub fn shadow_runtime(arena: u64) -> String {
    SHADOW_RUNTIME
        .replace("SHADOW_OF_ARENA", &(4 * arena).to_string())
        .replace("SHADOW_OF_STACK", &(4 * STACK_WINDOW).to_string())
        .replace("ARENA", &arena.to_string())
        .replace("WINDOW", &STACK_WINDOW.to_string())
}

/// Poison tracking's runtime for a program with its own `main` (a C program, a bug
/// report's driver), linked after the program is instrumented: the first report is
/// printed, as "call 0", and the program goes on as it would (a division by zero still
/// traps, as under `lli`); the memory with a shadow is the program's globals (its stack and
/// heap are taken as clean), and no access is checked (ctos does not know its heap).
pub fn main_tracking_runtime() -> String {
    let mut text = String::from(
        "@ctos.arena = internal global [1 x i8] zeroinitializer
@ctos.current = internal global i32 0
@ctos.stack_top = internal global ptr null
@ctos.reported = internal global i1 false
declare i32 @printf(ptr, ...)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)

define void @__ctos.poison(i32 %kind, i32 %origin) {
entry:
  %done = load i1, ptr @ctos.reported
  br i1 %done, label %exit, label %report
report:
  store i1 true, ptr @ctos.reported
  %slot = getelementptr ptr, ptr @__ctos.origins, i32 %origin
  %text = load ptr, ptr %slot
  %p = call i32 (ptr, ...) @printf(ptr @ctos.poisonfmt, i32 0, i32 %kind, ptr %text)
  br label %exit
exit:
  ret void
}

define void @__ctos.access(ptr %p, i64 %size, i64 %align) {
  ret void
}

define i1 @__ctos.outside(ptr %base, ptr %result) {
  ret i1 false
}
",
    );
    text.push_str(&shadow_runtime(1));
    text
}

/// How far below `main`'s frame the stack has a shadow under poison tracking: the calls'
/// frames (a test's functions need little; what lies deeper is taken as clean).
const STACK_WINDOW: u64 = 256 * 1024;

/// Poison tracking's runtime (src/llvm/poison_checks.cpp): an origin (the number of the
/// instruction that made the poison, 0 for none) per byte of the arena, of the stack
/// under `main` and of each global; the shadows of a call's arguments and return value;
/// the report, which names the origin as the module's `__ctos.origins` spells it; and
/// what the driver observes after each call. The module's tables replace the weak ones.
const SHADOW_RUNTIME: &str = r#"
@ctos.any_shadow = global i32 0
@ctos.arena_shadow = global [ARENA x i32] zeroinitializer
@ctos.stack_shadow = global [WINDOW x i32] zeroinitializer
@__ctos.arg_origins = global [256 x i32] zeroinitializer
@__ctos.ret_origin = global i32 0
@__ctos.ret_lanes = global [16 x i32] zeroinitializer
@__ctos.shadow_regions = weak global [0 x { ptr, i64, ptr, i64 }] zeroinitializer
@__ctos.nshadow_regions = weak global i64 0
@ctos.no_origin = private constant [7 x i8] c"(none)\00"
@__ctos.origins = weak global [1 x ptr] [ptr @ctos.no_origin]
@ctos.poisonfmt = private constant [35 x i8] c"ctos-poison: call %d: kind %d: %s\0A\00"


; The shadow of the byte at %p, or null for memory without one.
define internal ptr @ctos.shadow_at(ptr %p) {
entry:
  %a = ptrtoint ptr %p to i64
  %as = ptrtoint ptr @ctos.arena to i64
  %off = sub i64 %a, %as
  %inarena = icmp ult i64 %off, ARENA
  br i1 %inarena, label %arena, label %stack
arena:
  %sa = getelementptr i32, ptr @ctos.arena_shadow, i64 %off
  ret ptr %sa
stack:
  %topp = load ptr, ptr @ctos.stack_top
  %top = ptrtoint ptr %topp to i64
  %d = sub i64 %top, %a
  %d1 = sub i64 %d, 1
  %instack = icmp ult i64 %d1, WINDOW
  br i1 %instack, label %onstack, label %pre
onstack:
  %si = sub i64 WINDOW, %d
  %ss = getelementptr i32, ptr @ctos.stack_shadow, i64 %si
  ret ptr %ss
pre:
  %n = load i64, ptr @__ctos.nshadow_regions
  br label %loop
loop:
  %i = phi i64 [ 0, %pre ], [ %i1, %next ]
  %done = icmp uge i64 %i, %n
  br i1 %done, label %none, label %body
body:
  %e = getelementptr [0 x { ptr, i64, ptr, i64 }], ptr @__ctos.shadow_regions, i64 0, i64 %i
  %base = load ptr, ptr %e
  %b = ptrtoint ptr %base to i64
  %szp = getelementptr { ptr, i64, ptr, i64 }, ptr %e, i32 0, i32 1
  %sz = load i64, ptr %szp
  %o = sub i64 %a, %b
  %in = icmp ult i64 %o, %sz
  br i1 %in, label %found, label %next
found:
  %shp = getelementptr { ptr, i64, ptr, i64 }, ptr %e, i32 0, i32 2
  %sh = load ptr, ptr %shp
  %r = getelementptr i32, ptr %sh, i64 %o
  ret ptr %r
next:
  %i1 = add i64 %i, 1
  br label %loop
none:
  ret ptr null
}

define void @__ctos.shadow_store(ptr %p, i64 %n, i32 %o) {
entry:
  %any = load i32, ptr @ctos.any_shadow
  %clean = icmp eq i32 %o, 0
  %none = icmp eq i32 %any, 0
  %skip = and i1 %clean, %none
  br i1 %skip, label %exit, label %mark
mark:
  %set = select i1 %clean, i32 %any, i32 1
  store i32 %set, ptr @ctos.any_shadow
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %exit, label %loop
loop:
  %i = phi i64 [ 0, %mark ], [ %next, %cont ]
  %q = getelementptr i8, ptr %p, i64 %i
  %s = call ptr @ctos.shadow_at(ptr %q)
  %known = icmp ne ptr %s, null
  br i1 %known, label %write, label %cont
write:
  store i32 %o, ptr %s
  br label %cont
cont:
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}

; The origin of the poison in %n bytes at %p (the largest number), or 0.
define i32 @__ctos.shadow_load(ptr %p, i64 %n) {
entry:
  %any = load i32, ptr @ctos.any_shadow
  %none = icmp eq i32 %any, 0
  %empty = icmp eq i64 %n, 0
  %skip = or i1 %none, %empty
  br i1 %skip, label %exit, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %cont ]
  %m = phi i32 [ 0, %entry ], [ %m2, %cont ]
  %q = getelementptr i8, ptr %p, i64 %i
  %s = call ptr @ctos.shadow_at(ptr %q)
  %known = icmp ne ptr %s, null
  br i1 %known, label %read, label %cont
read:
  %v = load i32, ptr %s
  %bigger = icmp ugt i32 %v, %m
  %m1 = select i1 %bigger, i32 %v, i32 %m
  br label %cont
cont:
  %m2 = phi i32 [ %m, %loop ], [ %m1, %read ]
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  %r = phi i32 [ 0, %entry ], [ %m2, %cont ]
  ret i32 %r
}

; As memmove copies: backwards when the destination lies above the source.
define void @__ctos.shadow_copy(ptr %d, ptr %s, i64 %n) {
entry:
  %any = load i32, ptr @ctos.any_shadow
  %none = icmp eq i32 %any, 0
  %empty = icmp eq i64 %n, 0
  %skip = or i1 %none, %empty
  br i1 %skip, label %exit, label %start
start:
  %up = icmp ugt ptr %d, %s
  br label %loop
loop:
  %i = phi i64 [ 0, %start ], [ %next, %cont ]
  %last = sub i64 %n, 1
  %back = sub i64 %last, %i
  %k = select i1 %up, i64 %back, i64 %i
  %qs = getelementptr i8, ptr %s, i64 %k
  %ss = call ptr @ctos.shadow_at(ptr %qs)
  %known = icmp ne ptr %ss, null
  br i1 %known, label %read, label %write
read:
  %v = load i32, ptr %ss
  br label %write
write:
  %o = phi i32 [ 0, %loop ], [ %v, %read ]
  %qd = getelementptr i8, ptr %d, i64 %k
  call void @__ctos.shadow_store(ptr %qd, i64 1, i32 %o)
  br label %cont
cont:
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}

; After a call: poison it returned, or left in the arena or a global the driver prints
; (the fourth field of a region says whether it does).
define internal void @ctos.observed() {
entry:
  %r = load i32, ptr @__ctos.ret_origin
  %ret = icmp ne i32 %r, 0
  br i1 %ret, label %returned, label %memory
returned:
  call void @__ctos.poison(i32 14, i32 %r)
  unreachable
memory:
  %any = load i32, ptr @ctos.any_shadow
  %none = icmp eq i32 %any, 0
  br i1 %none, label %exit, label %arena
arena:
  %o = call i32 @__ctos.shadow_load(ptr @ctos.arena, i64 ARENA)
  %bad = icmp ne i32 %o, 0
  br i1 %bad, label %stored, label %pre
stored:
  %so = phi i32 [ %o, %arena ], [ %g, %check ]
  call void @__ctos.poison(i32 15, i32 %so)
  unreachable
pre:
  %n = load i64, ptr @__ctos.nshadow_regions
  br label %loop
loop:
  %i = phi i64 [ 0, %pre ], [ %i1, %check ], [ %i1, %body ]
  %done = icmp uge i64 %i, %n
  br i1 %done, label %exit, label %body
body:
  %e = getelementptr [0 x { ptr, i64, ptr, i64 }], ptr @__ctos.shadow_regions, i64 0, i64 %i
  %i1 = add i64 %i, 1
  %pp = getelementptr { ptr, i64, ptr, i64 }, ptr %e, i32 0, i32 3
  %printed = load i64, ptr %pp
  %shown = icmp ne i64 %printed, 0
  br i1 %shown, label %check, label %loop
check:
  %base = load ptr, ptr %e
  %szp = getelementptr { ptr, i64, ptr, i64 }, ptr %e, i32 0, i32 1
  %sz = load i64, ptr %szp
  %g = call i32 @__ctos.shadow_load(ptr %base, i64 %sz)
  %gbad = icmp ne i32 %g, 0
  br i1 %gbad, label %stored, label %loop
exit:
  ret void
}

; Before each call: no poison anywhere (what the last call left was reported with it).
define internal void @ctos.shadow_reset() {
entry:
  store i32 0, ptr @__ctos.ret_origin
  %any = load i32, ptr @ctos.any_shadow
  %none = icmp eq i32 %any, 0
  br i1 %none, label %exit, label %clear
clear:
  call void @llvm.memset.p0.i64(ptr @ctos.arena_shadow, i8 0, i64 SHADOW_OF_ARENA, i1 false)
  call void @llvm.memset.p0.i64(ptr @ctos.stack_shadow, i8 0, i64 SHADOW_OF_STACK, i1 false)
  %n = load i64, ptr @__ctos.nshadow_regions
  br label %loop
loop:
  %i = phi i64 [ 0, %clear ], [ %i1, %body ]
  %done = icmp uge i64 %i, %n
  br i1 %done, label %cleared, label %body
body:
  %e = getelementptr [0 x { ptr, i64, ptr, i64 }], ptr @__ctos.shadow_regions, i64 0, i64 %i
  %szp = getelementptr { ptr, i64, ptr, i64 }, ptr %e, i32 0, i32 1
  %sz = load i64, ptr %szp
  %shp = getelementptr { ptr, i64, ptr, i64 }, ptr %e, i32 0, i32 2
  %sh = load ptr, ptr %shp
  %bytes = mul i64 %sz, 4
  call void @llvm.memset.p0.i64(ptr %sh, i8 0, i64 %bytes, i1 false)
  %i1 = add i64 %i, 1
  br label %loop
cleared:
  store i32 0, ptr @ctos.any_shadow
  br label %exit
exit:
  ret void
}
"#;
