cuir.kernel @copy_tile(%n: index) grid (n) -> (n) threads 64 arch "sm_80" {
  %t = cuir.alloc : memref<64xf32, #cuir.mem<shared>> loc("tile"("kernel.cu":2:3 to 2:27))
  cuir.barrier.sync loc("kernel.cu":4:3 to 4:18)
}
