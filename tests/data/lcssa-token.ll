; A target type that cannot be in a PHI (DirectX's raw buffer handle) defined in a loop and
; used after it: LCSSA gives it an exit PHI, which the verifier refuses (LLVM 22 and
; 23.1.4; llvm/llvm-project#210816 fixes it). Every loop pass's adaptor runs LCSSA first.
define i32 @CSMain() {
entry:
  br label %loop

loop:
  %buf = tail call target("dx.RawBuffer", i32, 1, 0) @llvm.dx.resource.handlefrombinding.tdx.RawBuffer_i32_1_0t(i32 0, i32 0, i32 0, i32 0, ptr null)
  br i1 false, label %loop, label %exit

exit:
  %n = tail call i32 @llvm.dx.resource.updatecounter.tdx.RawBuffer_i32_1_0t(target("dx.RawBuffer", i32, 1, 0) %buf, i8 0)
  ret i32 %n
}

declare target("dx.RawBuffer", i32, 1, 0) @llvm.dx.resource.handlefrombinding.tdx.RawBuffer_i32_1_0t(i32, i32, i32, i32, ptr)
declare i32 @llvm.dx.resource.updatecounter.tdx.RawBuffer_i32_1_0t(target("dx.RawBuffer", i32, 1, 0), i8)
