//! Against the linked LLVM: generated drivers, the checked runs and what optimization
//! then shows.

use super::*;
use crate::llvm::TargetSpec;
use crate::sandbox::{ExecMode, JobSpec, PoisonTracking};

const FILLS: [u8; 2] = [0x5a, 0xa5];

fn module(ir: &str) -> IrModule {
    crate::llvm::init();
    IrModule::from_bytes(ir.as_bytes(), "test.ll", &TargetSpec::default()).unwrap()
}

/// The driver generated for `ir`, and the calls dropped on the way by why.
fn driver_for(ir: &str) -> (GeneratedDriver, BTreeMap<String, usize>) {
    let outcome = generate(&module(ir), &[], Limits::default(), 7, FILLS).unwrap();
    (outcome.driver.unwrap(), outcome.dropped)
}

/// Output of the module's functions under `passes`, called by `driver`.
fn output_after(ir: &str, driver: &GeneratedDriver, passes: &str) -> String {
    let mut m = module(ir);
    m.set_driver_bytes(driver.text.as_bytes(), "driver.ll").unwrap();
    let mut pool = Pool::new(1, Limits::default(), vec![]).unwrap();
    let run = pool.run_one(&mut m, &JobSpec { exec: ExecMode::Always, ..JobSpec::optimize(passes) }).unwrap();
    run.execution.expect("executed").stdout
}

/// instcombine folds `x + 1 > x` to true, as `nsw` allows: the two differ only where the
/// addition overflows, and those calls are dropped.
#[test]
fn calls_whose_nsw_addition_overflows_are_dropped_so_the_fold_shows_no_difference() {
    let ir = "define i1 @f(i8 %x) {\n  %y = add nsw i8 %x, 1\n  %c = icmp sgt i8 %y, %x\n  ret i1 %c\n}\n";
    let (driver, dropped) = driver_for(ir);
    assert_eq!(dropped.get(UB_KINDS[0]), Some(&1), "{:?}", dropped);
    assert!(!driver.text.contains("@f(i8 127)"), "{}", driver.text);
    assert_eq!(output_after(ir, &driver, ""), output_after(ir, &driver, "instcombine"));
    assert!(output_after(ir, &driver, "").contains("@f(i8 -1) -> 1"));
}

/// `shl 1, s` is never zero unless s is the bit width or more, where it is poison:
/// instcombine folds the comparison to false, and only those calls would show it.
#[test]
fn calls_that_shift_by_the_bit_width_are_dropped() {
    let ir = "define i1 @g(i8 %s) {\n  %a = shl i8 1, %s\n  %c = icmp eq i8 %a, 0\n  ret i1 %c\n}\n";
    let (driver, dropped) = driver_for(ir);
    assert!(dropped.get(UB_KINDS[2]).is_some_and(|&n| n >= 2), "{:?}", dropped);
    assert_eq!(output_after(ir, &driver, ""), output_after(ir, &driver, "instcombine"));
}

/// `nofpclass(pzero …)` on the return value makes returning `+0.0` poison (a seed of
/// LLVM's nofpclass tests returns it as a constant, and instcombine rightly folds it away):
/// those calls are dropped; the one returning `-1.0` stays.
#[test]
fn calls_that_return_a_value_their_nofpclass_rules_out_are_dropped() {
    let ir = "define nofpclass(nan pinf pzero psub pnorm) float @r(float %x) {
  %c = fcmp oeq float %x, 1.0
  %v = select i1 %c, float -1.0, float 0.0
  ret float %v
}
";
    let (driver, dropped) = driver_for(ir);
    assert!(dropped.get(UB_KINDS[12]).is_some_and(|&n| n >= 1), "{:?}", dropped);
    assert!(driver.text.contains("@r(float 1.0)"), "{}", driver.text);
    assert!(!driver.text.contains("@r(float 0.0)"), "{}", driver.text);
    assert_eq!(output_after(ir, &driver, ""), output_after(ir, &driver, "instcombine"));
}

/// A `nofpclass(nan)` parameter given a NaN is poison: such calls are dropped.
#[test]
fn calls_that_pass_a_value_the_parameters_nofpclass_rules_out_are_dropped() {
    let ir = "define float @n(float nofpclass(nan zero) %x) {\n  ret float %x\n}\n";
    let (driver, dropped) = driver_for(ir);
    assert!(dropped.get(UB_KINDS[12]).is_some_and(|&n| n >= 1), "{:?}", dropped);
    assert!(!driver.text.contains("@n(float 0.0)"), "{}", driver.text);
}

/// Pointer arguments get memory of their own; what the function writes there is part of
/// the output, and an access past it is dropped.
#[test]
fn a_store_through_a_pointer_argument_shows_in_the_output_and_one_past_the_memory_is_dropped() {
    let ir = "define void @h(ptr %p, i64 %i, i32 %v) {\n  %q = getelementptr i32, ptr %p, i64 %i\n  store i32 %v, ptr %q, align 4\n  ret void\n}\n";
    let (driver, dropped) = driver_for(ir);
    assert!(dropped.contains_key(RUNTIME_KINDS[0]), "{:?}", dropped);
    let out = output_after(ir, &driver, "");
    let hashes: std::collections::HashSet<&str> = out.lines().filter_map(|l| l.split("mem=").nth(1)).collect();
    assert!(hashes.len() > 1, "{out}");
}

/// A function that calls what the driver cannot run (a declared function passes may treat
/// as pure: the driver cannot stand in for it), or holds undef, is left out, with why.
#[test]
fn functions_it_cannot_check_are_refused_with_the_reason() {
    let ir = "declare i32 @ext(i32) memory(none)\ndefine i32 @a(i32 %x) {\n  %y = call i32 @ext(i32 %x)\n  ret i32 %y\n}\n\
              define i32 @b(i32 %x) {\n  %y = add i32 %x, undef\n  ret i32 %y\n}\n\
              define i32 @c(i32 %x) {\n  %y = call i32 @a(i32 %x)\n  ret i32 %y\n}\n\
              define <2 x i8> @d(<2 x i8> %x) {\n  %r = srem <2 x i8> %x, <i8 -42, i8 undef>\n  ret <2 x i8> %r\n}\n\
              define <8 x i32> @e(<8 x i32> %x) {\n  ret <8 x i32> %x\n}\n\
              define i32 @s(ptr %p) {\n  %q = addrspacecast ptr %p to ptr addrspace(3)\n  %v = load i32, ptr addrspace(3) %q\n  ret i32 %v\n}\n";
    let outcome = generate(&module(ir), &[], Limits::default(), 7, FILLS).unwrap();
    let refused: Vec<(&str, usize)> = outcome.refused.iter().map(|(why, n)| (why.as_str(), *n)).collect();
    assert_eq!(
        refused,
        [
            ("a call of @…, which it cannot run", 1),
            ("an undef or poison operand", 2),
            ("it calls @…, which has a call of @…, which it cannot run", 1),
            ("its return type", 1),
            ("pointers of another address space than 0", 1)
        ]
    );
    let why = outcome.driver.unwrap_err();
    assert!(why.contains("@a: a call of @ext, which it cannot run"), "{why}");
    assert!(why.contains("@b: an undef or poison operand"), "{why}");
    assert!(why.contains("@c: it calls @a"), "{why}");
    // An undef element of a constant vector is undef too.
    assert!(why.contains("@d: an undef or poison operand"), "{why}");
    // Where a 256-bit vector is passed depends on the target features.
    assert!(why.contains("@e: its return type"), "{why}");
}

/// A load of a local never stored prints what the stack held: such calls are dropped.
#[test]
fn a_read_of_memory_never_written_is_dropped() {
    let ir = "define i32 @u(i32 %x) {\n  %a = alloca i32, align 4\n  %c = icmp sgt i32 %x, 5\n  br i1 %c, label %w, label %r\nw:\n  store i32 %x, ptr %a, align 4\n  br label %r\nr:\n  %v = load i32, ptr %a, align 4\n  ret i32 %v\n}\n";
    let (driver, dropped) = driver_for(ir);
    assert!(dropped.get("a read of memory it never wrote").is_some_and(|&n| n >= 3), "{:?}", dropped);
    assert!(driver.calls >= 1);
}

/// Dev bug 121584 (LLVM 19): instcombine miscompiles `srem (shl nsw X, 7), (mul nsw X, 127)`
/// for X = -1. Given only the function, the generated driver's call on -1 shows it.
#[cfg(feature = "llvm19")]
#[test]
fn dev_bug_121584s_function_alone_shows_its_miscompilation_through_a_generated_driver() {
    let ir = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/bugs/121584/repro.ll")).unwrap();
    let (driver, _) = driver_for(&ir);
    let (before, after) = (output_after(&ir, &driver, ""), output_after(&ir, &driver, "instcombine"));
    let line = |out: &str| out.lines().find(|l| l.contains("(i8 -1)")).map(str::to_string);
    assert_ne!(line(&before), line(&after), "{before}\n{after}");
}

/// Code for a CPU or feature this host lacks would die of SIGILL when optimized for it:
/// such programs get no driver.
#[test]
fn code_for_features_the_host_lacks_is_not_run_here() {
    crate::llvm::init();
    assert!(crate::llvm::runs_on_host("", "+sse2"));
    assert!(crate::llvm::runs_on_host(&crate::llvm::host_cpu(), ""));
    assert!(!crate::llvm::runs_on_host("", "+sse2,+no-such-feature"));
    let other = if crate::llvm::host_cpu() == "btver2" { "skylake" } else { "btver2" };
    assert!(!crate::llvm::runs_on_host(other, ""));
}

/// A cttz whose zero input its guard keeps out: the unoptimized function runs clean on 0.
const GUARDED_CTTZ: &str = "define i32 @f(i32 %x) {
entry:
  %c = icmp eq i32 %x, 0
  br i1 %c, label %exit, label %nz
nz:
  %t = call i32 @llvm.cttz.i32(i32 %x, i1 true)
  br label %exit
exit:
  %r = phi i32 [ %t, %nz ], [ 32, %entry ]
  ret i32 %r
}
declare i32 @llvm.cttz.i32(i32, i1)
";

/// The lines of `stdout` that poison tracking printed.
fn poison_lines(stdout: &str) -> Vec<&str> {
    stdout.lines().filter(|l| l.starts_with("ctos-poison: ")).collect()
}

/// A miscompiled `@f` that drops the guard returns poison on 0, whatever the machine's
/// `tzcnt` then computes: the call stops and names the instruction that made it.
#[test]
fn an_optimized_function_that_returns_poison_is_reported_with_the_instruction_that_made_it() {
    let (driver, _) = driver_for(GUARDED_CTTZ);
    assert!(driver.text.contains("@f(i32 0)"), "{}", driver.text);
    let miscompiled = "define i32 @f(i32 %x) {
  %t = call i32 @llvm.cttz.i32(i32 %x, i1 true)
  ret i32 %t
}
declare i32 @llvm.cttz.i32(i32, i1)
";
    let out = output_after(miscompiled, &driver, "");
    let lines = poison_lines(&out);
    assert_eq!(lines.len(), 1, "{out}");
    assert!(lines[0].contains(&format!("kind {}: ", FIRST_OBSERVED_KIND)), "{out}");
    assert!(lines[0].ends_with("@f: `%t = call i32 @llvm.cttz.i32(i32 %x, i1 true)`"), "{out}");
    assert!(!out.contains("@f(i32 0) ->"), "the stopped call prints no result: {out}");
}

/// Hoisting the cttz above its guard and selecting its result only where it is defined is
/// what simplifycfg and instcombine do: poison made and never used is no wrong code.
#[test]
fn a_speculated_poison_that_nothing_uses_is_not_reported() {
    let (driver, _) = driver_for(GUARDED_CTTZ);
    let speculated = "define i32 @f(i32 %x) {
  %c = icmp eq i32 %x, 0
  %t = call i32 @llvm.cttz.i32(i32 %x, i1 true)
  %r = select i1 %c, i32 32, i32 %t
  ret i32 %r
}
declare i32 @llvm.cttz.i32(i32, i1)
";
    let reference = output_after(GUARDED_CTTZ, &driver, "");
    assert_eq!(output_after(speculated, &driver, ""), reference);
    let optimized = output_after(GUARDED_CTTZ, &driver, "simplifycfg,instcombine");
    assert_eq!(optimized, reference);
    assert!(poison_lines(&reference).is_empty() && reference.contains("@f(i32 0) -> 32"), "{reference}");
}

/// Poison stored where the driver prints it, and a branch on poison, stop the call.
#[test]
fn poison_stored_in_printed_memory_or_branched_on_is_reported() {
    let guarded = "define void @s(ptr %p, i32 %x) {
entry:
  %max = icmp eq i32 %x, 2147483647
  br i1 %max, label %exit, label %store
store:
  %y = add nsw i32 %x, 1
  store i32 %y, ptr %p
  br label %exit
exit:
  ret void
}
";
    let (driver, dropped) = driver_for(guarded);
    assert!(dropped.is_empty(), "{dropped:?}");
    let stores_poison = "define void @s(ptr %p, i32 %x) {
  %y = add nsw i32 %x, 1
  store i32 %y, ptr %p
  ret void
}
";
    let out = output_after(stores_poison, &driver, "");
    let lines = poison_lines(&out);
    assert!(!lines.is_empty() && lines.iter().all(|l| l.contains(": kind 15: @s: `%y = add nsw i32 %x, 1`")), "{out}");
    let branches = "define void @s(ptr %p, i32 %x) {
entry:
  %y = add nsw i32 %x, 1
  %up = icmp sgt i32 %y, %x
  br i1 %up, label %store, label %exit
store:
  store i32 %y, ptr %p
  br label %exit
exit:
  ret void
}
";
    let out = output_after(branches, &driver, "");
    let lines = poison_lines(&out);
    assert!(!lines.is_empty() && lines.iter().all(|l| l.contains(": kind 16: @s: `%y = add nsw i32 %x, 1`")), "{out}");
}

/// A program with its own `main` (a C program's shape) is tracked whole: poison printed is
/// reported with the instruction that made it, once, and the program goes on; the same
/// program printing a frozen value prints only its own line.
#[test]
fn a_program_with_its_own_main_that_prints_poison_is_reported() {
    let program = |value: &str| {
        format!(
            "@g = global i32 2147483647
@fmt = private constant [4 x i8] c\"%d\\0A\\00\"
declare i32 @printf(ptr, ...)
define i32 @main() {{
  %v = load i32, ptr @g
  %y = add nsw i32 %v, 1
  %f = freeze i32 %y
  %c = icmp sgt i32 {value}, %v
  %z = zext i1 %c to i32
  %p = call i32 (ptr, ...) @printf(ptr @fmt, i32 %z)
  ret i32 0
}}
"
        )
    };
    let run = |ir: &str| {
        let mut m = module(ir);
        let mut pool = Pool::new(1, Limits::default(), vec![]).unwrap();
        let job = JobSpec { exec: ExecMode::Always, track_poison: PoisonTracking::All, ..JobSpec::optimize("") };
        pool.run_one(&mut m, &job).unwrap().execution.expect("executed").stdout
    };
    let out = run(&program("%y"));
    assert_eq!(poison_lines(&out), [format!("ctos-poison: call 0: kind 20: @main: `%y = add nsw i32 %v, 1`")], "{out}");
    assert_eq!(out.lines().count(), 2, "{out}");
    let frozen = run(&program("%f"));
    assert!(poison_lines(&frozen).is_empty() && frozen.lines().count() == 1, "{frozen}");
}

/// A shuffle's poison lane is poison no rule of the checks makes: a call that returns it
/// is dropped (its lane would print whatever the register held, before and after any
/// pass; a campaign on LLVM 23 called `strip` a miscompilation of it); a vector built lane
/// by lane and then filled is kept.
#[test]
fn calls_that_return_a_poison_lane_are_dropped() {
    let ir = "define <4 x i32> @shuf(<4 x i32> %a) {
  %r = shufflevector <4 x i32> %a, <4 x i32> zeroinitializer, <4 x i32> <i32 0, i32 poison, i32 6, i32 3>
  ret <4 x i32> %r
}
define <4 x i32> @splat(i32 %x) {
  %v = insertelement <4 x i32> poison, i32 %x, i32 0
  %w = shufflevector <4 x i32> %v, <4 x i32> poison, <4 x i32> zeroinitializer
  ret <4 x i32> %w
}
";
    let (driver, dropped) = driver_for(ir);
    assert!(dropped.get(UB_KINDS[FIRST_OBSERVED_KIND as usize]).is_some_and(|&n| n >= 5), "{dropped:?}");
    assert!(!driver.text.contains("@shuf(<4 x i32>"), "{}", driver.text);
    assert!(driver.text.contains("@splat(i32 0)"), "{}", driver.text);
}

/// A global the module only declares (LLVM's tests declare the arrays their functions
/// work on) is defined by the driver, filled afresh before each call and read back after
/// it: a function that writes it runs, and what it writes is output.
#[test]
fn globals_the_module_only_declares_are_memory_the_driver_defines_and_prints() {
    let ir = "@A = external global [16 x i32]
define void @set(i32 %i, i32 %v) {
  %in = icmp ult i32 %i, 16
  br i1 %in, label %store, label %exit
store:
  %p = getelementptr inbounds [16 x i32], ptr @A, i32 0, i32 %i
  store i32 %v, ptr %p
  br label %exit
exit:
  ret void
}
";
    let (driver, dropped) = driver_for(ir);
    assert!(dropped.is_empty(), "{dropped:?}");
    assert!(driver.text.contains("@A = global [64 x i8] zeroinitializer, align"), "{}", driver.text);
    let out = output_after(ir, &driver, "");
    assert!(out.contains("@set(i32 0, i32 0) mem=") && out.contains(" A="), "{out}");
    let line = |out: &str, call: &str| out.lines().find(|l| l.contains(call)).unwrap_or("").to_string();
    let (zero, one) = (line(&out, "@set(i32 0, i32 0)"), line(&out, "@set(i32 0, i32 -1)"));
    assert_ne!(zero.split(" A=").nth(1), one.split(" A=").nth(1), "what it writes shows: {out}");
}

/// LLVM's tests keep values alive by passing them to a function they only declare
/// (`@use`): the driver stands in for it, and what each call passed it is output. A pass
/// that changed the value passed would show; instcombine's folds keep it.
#[test]
fn a_declared_function_the_module_calls_is_stood_in_for_and_its_arguments_are_output() {
    let ir = "declare void @use(i8)
declare i32 @get(ptr)
define i8 @f(i8 %x) {
  %y = add i8 %x, 1
  call void @use(i8 %y)
  %z = xor i8 %y, -1
  ret i8 %z
}
";
    let (driver, dropped) = driver_for(ir);
    assert!(dropped.is_empty(), "{dropped:?}");
    assert!(driver.text.contains("define void @use(i8 %a0)"), "{}", driver.text);
    let before = output_after(ir, &driver, "");
    assert!(before.lines().all(|l| l.contains(" calls=")), "{before}");
    assert_eq!(output_after(ir, &driver, "instcombine"), before);
    let passes_another = ir.replace("call void @use(i8 %y)", "call void @use(i8 %x)");
    assert_ne!(output_after(&passes_another, &driver, ""), before, "what @use is passed is output");
    // A call that promises to leave memory alone may be merged with another (early-cse
    // does, seed 86 of LLVM's tests): no stand-in for it.
    let pure_call =
        "declare i8 @baz(i8)\ndefine i8 @g(i8 %x) {\n  %r = call i8 @baz(i8 %x) memory(none)\n  ret i8 %r\n}\n";
    let outcome = generate(&module(pure_call), &[], Limits::default(), 7, FILLS).unwrap();
    assert!(outcome.driver.unwrap_err().contains("a call of @baz, which it cannot run"));
}

/// An aggregate built field by field from poison is poison only in the fields not yet
/// written (a campaign on LLVM 23 took a branch on the written `i1` field for a branch on
/// poison); a field still poison is poison.
#[test]
fn an_aggregate_built_field_by_field_is_poison_only_where_unwritten() {
    let (driver, _) = driver_for("define i32 @h(i64 %x) {\n  ret i32 0\n}\n");
    let built = |field: u32| {
        format!(
            "define i32 @h(i64 %x) {{
  %agg = insertvalue {{ i64, i1 }} {{ i64 poison, i1 false }}, i64 %x, 0
  %f = extractvalue {{ i64, i1 }} %agg, {field}
  %c = trunc i64 %x to i1
  %b = select i1 %c, i1 false, i1 false
  %g = {}
  br i1 %g, label %t, label %e
t:
  ret i32 1
e:
  ret i32 0
}}
",
            if field == 1 { "or i1 %f, %b" } else { "icmp eq i64 %f, -1" }
        )
    };
    let reference = output_after("define i32 @h(i64 %x) {\n  ret i32 0\n}\n", &driver, "");
    assert_eq!(output_after(&built(1), &driver, ""), reference);
    let unwritten = built(0).replace("i64 %x, 0\n", "i1 true, 1\n");
    let out = output_after(&unwritten, &driver, "");
    assert!(poison_lines(&out).iter().all(|l| l.contains("kind 16")) && !poison_lines(&out).is_empty(), "{out}");
}

/// A masked load's lanes where the mask is off are its pass-through value's: poison there
/// is poison only in those lanes (the vectorizer passes `poison` and never uses them; LLVM
/// 19's loop-vectorize on two seeds was reported for it).
#[test]
fn a_masked_loads_pass_through_poison_stays_in_the_lanes_the_mask_leaves_off() {
    let ir = "define i32 @m(ptr %p) {\n  store <2 x i32> <i32 5, i32 7>, ptr %p\n  ret i32 5\n}\n";
    let (driver, _) = driver_for(ir);
    let masked = |lane: u32| {
        format!(
            "define i32 @m(ptr %p) {{
  store <2 x i32> <i32 5, i32 7>, ptr %p
  %v = call <2 x i32> @llvm.masked.load.v2i32.p0(ptr %p, i32 4, <2 x i1> <i1 true, i1 false>, <2 x i32> poison)
  %x = extractelement <2 x i32> %v, i32 {lane}
  %c = icmp eq i32 %x, 5
  %r = select i1 %c, i32 5, i32 5
  ret i32 %r
}}
declare <2 x i32> @llvm.masked.load.v2i32.p0(ptr, i32, <2 x i1>, <2 x i32>)
"
        )
    };
    let reference = output_after(ir, &driver, "");
    assert_eq!(output_after(&masked(0), &driver, ""), reference);
    let out = output_after(&masked(1), &driver, "");
    assert!(!poison_lines(&out).is_empty(), "{out}");
}

/// Loop-extract passes a splat's `insertelement` (lane 1 still poison) to the function it
/// extracted the vector loop into, which shuffles lane 0 alone: a lane's poison crosses the
/// call as that lane's, not as the whole vector's (a campaign on LLVM 23 reported it).
#[test]
fn a_vectors_poison_lane_crosses_a_call_as_that_lane_alone() {
    let scalar = "define i32 @test(i32 %a) {
bb:
  br label %loop
loop:
  %iv = phi i32 [ 0, %bb ], [ %iv.next, %loop ]
  %v = phi i32 [ 0, %bb ], [ %add.2, %loop ]
  %add.1 = add i32 %v, 1
  %add.2 = add i32 %add.1, %a
  %iv.next = add i32 %iv, 1
  %ec = icmp ult i32 %iv, 181
  br i1 %ec, label %loop, label %exit
exit:
  ret i32 %add.2
}
";
    let extracted = "define i32 @test(i32 %a) {
bb:
  %loc = alloca <2 x i32>, align 8
  %splat = insertelement <2 x i32> poison, i32 %a, i64 0
  %r = call <2 x i32> @test.body(<2 x i32> %splat, ptr %loc)
  %reload = load <2 x i32>, ptr %loc, align 8
  %sum = call i32 @llvm.vector.reduce.add.v2i32(<2 x i32> %reload)
  %r0 = extractelement <2 x i32> %r, i64 0
  %same = icmp eq i32 %r0, %a
  %out = select i1 %same, i32 %sum, i32 0
  ret i32 %out
}
declare i32 @llvm.vector.reduce.add.v2i32(<2 x i32>)
define internal <2 x i32> @test.body(<2 x i32> %splat, ptr %out) {
entry:
  br label %body
body:
  %index = phi i32 [ 0, %entry ], [ %index.next, %body ]
  %acc = phi <2 x i32> [ zeroinitializer, %entry ], [ %next, %body ]
  %plus = add <2 x i32> %splat, <i32 1, i32 poison>
  %bcast = shufflevector <2 x i32> %plus, <2 x i32> poison, <2 x i32> zeroinitializer
  %next = add <2 x i32> %bcast, %acc
  store <2 x i32> %next, ptr %out, align 8
  %index.next = add nuw i32 %index, 2
  %done = icmp eq i32 %index.next, 182
  br i1 %done, label %exit, label %body
exit:
  ret <2 x i32> %splat
}
";
    let (driver, _) = driver_for(scalar);
    let reference = output_after(scalar, &driver, "");
    let out = output_after(extracted, &driver, "");
    assert!(poison_lines(&out).is_empty(), "{out}");
    assert_eq!(out, reference);
}

/// A bug folder keeps the driver an earlier ctos wrote, with that ctos's runtime: code
/// tracked today would write past its tables, so such a program runs untracked.
#[test]
fn a_driver_whose_runtime_predates_the_tracker_runs_untracked() {
    let (driver, _) = driver_for(GUARDED_CTTZ);
    let tracked = |text: &str| {
        let mut m = module(GUARDED_CTTZ);
        m.set_driver_bytes(text.as_bytes(), "driver.ll").unwrap();
        m.track_poison_for_run(false).unwrap()
    };
    assert!(tracked(&driver.text));
    let earlier: String =
        driver.text.lines().filter(|l| !l.contains("@__ctos.ret_lanes")).map(|l| format!("{l}\n")).collect();
    assert!(earlier.len() < driver.text.len() && !tracked(&earlier));
}
