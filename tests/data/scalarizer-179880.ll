; LLVM issue 179880: the scalarizer reads past a vector on its stack (opt-22 -passes='function(scalarizer<load-store>,dce)').
target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-f32:32:32-f64:64:64-v64:64:64-v128:128:128-a0:0:64-s0:64:64-f80:128:128-n8:16:32:64-S128"

define ptr @oob_extract() {
  %E = extractelement <4 x ptr> zeroinitializer, i32 100
  ret ptr %E
}
