; LLVM issue 180456 (the SLP vectorizer miscompiles @sub_mul with -slp-threshold=-50 on LLVM 22), its
; reproducer linked with its driver: a program with a `main`.
; ModuleID = 'llvm-link'
source_filename = "llvm-link"

@p = global [4 x i16] [i16 7, i16 1, i16 1, i16 1]
@s = global [4 x i16] zeroinitializer
@.fmt = private constant [13 x i8] c"%d %d %d %d\0A\00"

define void @sub_mul(ptr %p, ptr %s) {
entry:
  %p1 = getelementptr i16, ptr %p, i64 1
  %p2 = getelementptr i16, ptr %p, i64 2
  %p3 = getelementptr i16, ptr %p, i64 3
  %l0 = load i16, ptr %p, align 2
  %l1 = load i16, ptr %p1, align 2
  %l2 = load i16, ptr %p2, align 2
  %l3 = load i16, ptr %p3, align 2
  %mul0 = sub i16 %l0, 0
  %mul1 = mul i16 %l1, 5
  %mul2 = mul i16 %l2, 2
  %mul3 = mul i16 %l3, 3
  %s1 = getelementptr i16, ptr %s, i64 1
  %s2 = getelementptr i16, ptr %s, i64 2
  %s3 = getelementptr i16, ptr %s, i64 3
  store i16 %mul0, ptr %s, align 2
  store i16 %mul1, ptr %s1, align 2
  store i16 %mul2, ptr %s2, align 2
  store i16 %mul3, ptr %s3, align 2
  ret void
}

define i32 @main() {
  call void @sub_mul(ptr @p, ptr @s)
  %a0 = load i16, ptr @s, align 2
  %a1 = load i16, ptr getelementptr ([4 x i16], ptr @s, i32 0, i32 1), align 2
  %a2 = load i16, ptr getelementptr ([4 x i16], ptr @s, i32 0, i32 2), align 2
  %a3 = load i16, ptr getelementptr ([4 x i16], ptr @s, i32 0, i32 3), align 2
  %b0 = sext i16 %a0 to i32
  %b1 = sext i16 %a1 to i32
  %b2 = sext i16 %a2 to i32
  %b3 = sext i16 %a3 to i32
  %r = call i32 (ptr, ...) @printf(ptr @.fmt, i32 %b0, i32 %b1, i32 %b2, i32 %b3)
  ret i32 0
}

declare i32 @printf(ptr, ...)
