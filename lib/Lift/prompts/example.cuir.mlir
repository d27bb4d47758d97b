#A   = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#G   = #cuir.mem<global>
#S   = #cuir.mem<shared>

// q and s are [n, 64]; k is one 64x64 tile. The grid has one block per 64
// query rows; n is the kernel's only index parameter, hence d0.
cuir.kernel @qk_tile(%q: memref<?x64xbf16, #G>, %k: memref<64x64xbf16, #G>,
                     %s: memref<?x64xf32, #G>, %n: index)
    grid (d0) -> (d0 ceildiv 64) threads 256 arch "sm_80" {
  %c0 = arith.constant 0 : index loc("col"("example.cu":15:28 to 15:43))
  %c64 = arith.constant 64 : index loc("example.cu":12:31 to 12:33)
  %bx = cuir.block_id x loc("example.cu":12:18 to 12:28)
  %q0 = arith.muli %bx, %c64 : index loc("q0"("example.cu":12:18 to 12:33))
  %sQ = cuir.alloc : memref<64x64xbf16, #S> loc("sQ"("example.cu":10:3 to 10:43))
  %sK = cuir.alloc : memref<64x64xbf16, #S> loc("sK"("example.cu":11:3 to 11:43))

  // threadIdx.x < 128: warpgroup 0 produces the tiles.
  cuir.bind warpgroup [0] role producer {
    // The loop over 16-byte chunks copies whole 64x64 tiles; rows of q past
    // n are zero-filled, as the predicated cp.async does.
    %tq = cuir.copy_async cp_async %q[%q0, %c0] -> %sQ
        : memref<?x64xbf16, #G> -> memref<64x64xbf16, #S> -> !cuir.token
        loc("sQ"("example.cu":16:7 to 16:69))
    %tk = cuir.copy_async cp_async %k[%c0, %c0] -> %sK
        : memref<64x64xbf16, #G> -> memref<64x64xbf16, #S> -> !cuir.token
        loc("sK"("example.cu":17:7 to 17:56))
    %g = cuir.commit %tq, %tk loc("example.cu":19:5 to 19:49)
    cuir.wait_group %g pending 0 loc("example.cu":20:5 to 20:49)
    %c1 = arith.constant 1 : index loc("example.cu":21:30 to 21:31)
    cuir.barrier.named %c1 threads 256 arrive loc("example.cu":21:5 to 21:45)
    cuir.yield loc("example.cu":22:3 to 22:4)
  } loc("example.cu":13:3 to 13:27)

  // else: warpgroup 1 (4 warps, 16 rows each) consumes them.
  cuir.bind warpgroup [1] role consumer {
    %c1 = arith.constant 1 : index loc("example.cu":23:28 to 23:29)
    cuir.barrier.named %c1 threads 256 loc("example.cu":23:5 to 23:43)
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #ACC>
        loc("acc"("example.cu":25:5 to 25:26))
    %a = cuir.load %sQ : memref<64x64xbf16, #S> -> tensor<64x64xbf16, #A>
        loc("a"("example.cu":28:7 to 28:70))
    // The kk and j loops of ldmatrix + mma.sync are one tile GEMM.
    %acc = cuir.gemm %a, %sK transpose_b, %zero
        : tensor<64x64xbf16, #A>, memref<64x64xbf16, #S>, tensor<64x64xf32, #ACC>
        loc("acc"("example.cu":26:5 to 34:6))
    // Rows past n are skipped, as the guarded stores do.
    cuir.store %acc -> %s[%q0, %c0]
        : tensor<64x64xf32, #ACC> -> memref<?x64xf32, #G>
        loc("s"("example.cu":35:5 to 42:6))
    cuir.yield loc("example.cu":43:3 to 43:4)
  } loc("example.cu":22:5 to 22:11)
  cuir.return loc("example.cu":44:1 to 44:2)
} loc("qk_tile"("example.cu":8:1 to 44:2))
