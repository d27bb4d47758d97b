// Diagnostics point into the CUDA source, so they are checked on stderr.
// RUN: not cuir-opt %s --cuir-check-locations=source-root=%S/Inputs -split-input-file 2>&1 | FileCheck %s

cuir.kernel @k(%n: index) grid (n) -> (n) threads 64 arch "sm_80" {
  // CHECK: kernel.cu:40:3: error: 'cuir.alloc' op names lines 40-40 of 'kernel.cu', which has 6 lines
  %t = cuir.alloc : memref<64xf32, #cuir.mem<shared>> loc("tile"("kernel.cu":40:3 to 40:27))
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 64 arch "sm_80" {
  // CHECK: kernel.cu:4:3: error: 'cuir.barrier.sync' op names columns 3-90 of 'kernel.cu' lines 4-4, outside the lines' text
  cuir.barrier.sync loc("kernel.cu":4:3 to 4:90)
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 64 arch "sm_80" {
  // CHECK: kernel.cu:5:1: error: 'cuir.barrier.sync' op names lines 5-3 of 'kernel.cu', which has 6 lines
  cuir.barrier.sync loc("kernel.cu":5:1 to 3:1)
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 64 arch "sm_80" {
  // CHECK: missing.cu:1:1: error: 'cuir.barrier.sync' op names source file 'missing.cu', which cannot be read (resolved against '{{.*}}Inputs')
  cuir.barrier.sync loc("missing.cu":1:1 to 1:2)
}
