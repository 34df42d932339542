; Reduced from https://github.com/llvm/llvm-project/issues/215453
; select(mask, masked.load(p, mask, 0), -1) is folded into a new masked.load
; created at the select, i.e. *after* the aliasing store to %p.

declare <4 x i32> @llvm.masked.load.v4i32.p0(ptr, i32, <4 x i1>, <4 x i32>)
declare i32 @printf(ptr, ...)

@.fmt = private unnamed_addr constant [13 x i8] c"%d %d %d %d\0A\00"

define <4 x i32> @swap(ptr %p, <4 x i32> %cur, <4 x i1> %mask) {
entry:
  ; tmp = mask ? p[i] : 0   -- loaded BEFORE the store below
  %tmp = call <4 x i32> @llvm.masked.load.v4i32.p0(ptr %p, i32 16, <4 x i1> %mask, <4 x i32> zeroinitializer)
  ; p[i] = mask ? cur[i] : p[i]
  %old = load <4 x i32>, ptr %p, align 16
  %blend = select <4 x i1> %mask, <4 x i32> %cur, <4 x i32> %old
  store <4 x i32> %blend, ptr %p, align 16
  %r = select <4 x i1> %mask, <4 x i32> %tmp, <4 x i32> <i32 -1, i32 -1, i32 -1, i32 -1>
  ret <4 x i32> %r
}

define i32 @main() {
entry:
  %buf = alloca <4 x i32>, align 16
  store <4 x i32> <i32 1, i32 2, i32 3, i32 4>, ptr %buf, align 16
  %r = call <4 x i32> @swap(ptr %buf, <4 x i32> <i32 10, i32 20, i32 30, i32 40>, <4 x i1> <i1 true, i1 false, i1 true, i1 false>)
  %e0 = extractelement <4 x i32> %r, i64 0
  %e1 = extractelement <4 x i32> %r, i64 1
  %e2 = extractelement <4 x i32> %r, i64 2
  %e3 = extractelement <4 x i32> %r, i64 3
  %c = call i32 (ptr, ...) @printf(ptr @.fmt, i32 %e0, i32 %e1, i32 %e2, i32 %e3)
  %s = add i32 %e0, %e2
  ret i32 %s
}
