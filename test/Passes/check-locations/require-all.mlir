// RUN: cuir-opt %s --cuir-check-locations="source-root=%S/Inputs require-all=true" -verify-diagnostics
//
// With require-all, a kernel op that names no source lines is an error.

cuir.kernel @k(%n: index) grid (n) -> (n) threads 64 arch "sm_80" {
  cuir.barrier.sync loc("kernel.cu":4:3 to 4:18)
  // expected-error @below {{has no source location; every lifted op must name the CUDA lines it comes from}}
  %t = cuir.alloc : memref<64xf32, #cuir.mem<shared>>
  cuir.return loc("kernel.cu":6:1 to 6:2)
} loc("kernel.cu":1:1 to 6:2)
