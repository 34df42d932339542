; irce expands the loop's `udiv 42, %n` into the entry block while it works out a range
; and leaves it there when it gives up: unused, so the backend drops it again, until gvn
; replaces the loop's own division with it. For %n = 0 the loop never runs, and the
; optimized function divides by zero (LLVM 19, 22 and 23.1.4; found by a seeds campaign
; on 23 from a knob-changed LoopVectorize test).
define i64 @f(i64 %n) {
entry:
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %latch ]
  %in = icmp slt i64 %i, %n
  br i1 %in, label %latch, label %exit

latch:
  %i.next = add i64 %i, 1
  %q = udiv i64 42, %n
  %below = icmp slt i64 %i, %q
  br i1 %below, label %loop, label %exit

exit:
  %r = phi i64 [ 1, %loop ], [ 0, %latch ]
  ret i64 %r
}
