; NVPTX has a flat address space: infer-address-spaces turns the generic load of a
; global pointer back into a global load. Without the target nothing changes.
target triple = "nvptx64-nvidia-cuda"

define float @load_global(ptr addrspace(1) %p, i64 %i) {
  %generic = addrspacecast ptr addrspace(1) %p to ptr
  %q = getelementptr inbounds float, ptr %generic, i64 %i
  %v = load float, ptr %q
  ret float %v
}
