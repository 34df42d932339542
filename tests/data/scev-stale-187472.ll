; llvm/llvm-project#187472 (open, a miscompile): after loop(indvars,loop-simplifycfg) the
; ScalarEvolution that the passes kept says the outer loop runs 0 more times, a fresh one 2.
; Release LLVM 19, 22 and 23 stay silent unless something verifies the kept SCEV.
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

define i32 @test() {
entry:
  br label %loop1

loop1:                                     ; preds = %latch1, %entry
  %p1 = phi i32 [ 2147483646, %entry ], [ %2, %latch1 ]
  %0 = icmp sgt i32 %p1, -7826
  br i1 %0, label %latch1, label %loop2

ret:                                   ; preds = %latch1
  ret i32 0

loop2:                                    ; preds = %loop2, %loop1
  %p2 = phi i32 [ %1, %loop2 ], [ 0, %loop1 ]
  %1 = add i32 %p2, 1
  br label %loop2

latch1:                                     ; preds = %loop1
  %2 = add i32 %p1, -2147483647
  store volatile i32 0, ptr null, align 4
  br i1 false, label %ret, label %loop1
}
