// RUN: cuir-opt %s --cuir-check-locations=source-root=%S/Inputs | FileCheck %s
// RUN: cuir-opt %s --cuir-check-locations="source-root=%S/Inputs require-all=true" | FileCheck %s
//
// Every op names real lines and columns of Inputs/kernel.cu.

// CHECK: cuir.kernel @copy_tile
cuir.kernel @copy_tile(%n: index) grid (n) -> (n) threads 64 arch "sm_80" {
  %t = cuir.alloc : memref<64xf32, #cuir.mem<shared>> loc("tile"("kernel.cu":2:3 to 2:27))
  cuir.barrier.sync loc("kernel.cu":4:3 to 4:18)
  cuir.return loc("kernel.cu":6:1 to 6:2)
} loc("copy_tile"("kernel.cu":1:1 to 6:2))
