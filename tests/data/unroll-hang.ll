define i32 @f(ptr %p) {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %n, %loop ]
  %s = phi i32 [ 0, %entry ], [ %t, %loop ]
  %g = getelementptr i32, ptr %p, i32 %i
  %v = load volatile i32, ptr %g
  %t = add i32 %s, %v
  %n = add i32 %i, 1
  %c = icmp ult i32 %n, 400000
  br i1 %c, label %loop, label %exit
exit:
  ret i32 %t
}
