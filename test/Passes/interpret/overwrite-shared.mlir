// RUN: cuir-opt %s -split-input-file --cuir-interpret="Nq=64 Nkv=64 d=16" -verify-diagnostics
//
// Accesses of shared memory are ordered by barriers: an access happens before
// another worker's when the first worker arrived at a barrier (block, named,
// or an mbarrier phase) after it and the second passed that barrier before
// its own. A write that may overtake a read (refilling a tile the threads may
// still be reading), two workers' unordered writes, and a read of a write
// whose worker waits at a barrier the reader has not reached are caught.

// A pipeline stage refilled while the block may still be reading it.
#A = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @refill_without_barrier(%Q: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "q"},
                                    %O: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "o"},
                                    %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %rows = memref.subview %Q[0, 0, 0, 0] [1, %n, 1, 16] [1, 1, 1, 1]
      : memref<?x?x?x16xbf16, #cuir.mem<global>> to memref<?x16xbf16, strided<[?, 1]>, #cuir.mem<global>>
  %s = cuir.alloc : memref<64x16xbf16, #cuir.mem<shared>>
  %t = cuir.copy_async cp_async %rows[%c0, %c0] -> %s
      : memref<?x16xbf16, strided<[?, 1]>, #cuir.mem<global>> -> memref<64x16xbf16, #cuir.mem<shared>> -> !cuir.token
  %g = cuir.commit %t
  cuir.wait_group %g pending 0
  cuir.barrier.sync
  // expected-note @below {{the read is here}}
  %q = cuir.load %s : memref<64x16xbf16, #cuir.mem<shared>> -> tensor<64x16xbf16, #A>
  // expected-error @below {{overwrites shared memory that threads of the block read with no barrier since}}
  %t2 = cuir.copy_async cp_async %rows[%c0, %c0] -> %s
      : memref<?x16xbf16, strided<[?, 1]>, #cuir.mem<global>> -> memref<64x16xbf16, #cuir.mem<shared>> -> !cuir.token
  %g2 = cuir.commit %t2
  cuir.wait_group %g2 pending 0
  cuir.return
}

// -----

// One warp reads a tile, another overwrites it, with no barrier between.
#A = #cuir.frag<a, mma_m16n8k16, warps = [1, 1]>
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [1, 1]>
cuir.kernel @two_warps_war(%O: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "o"},
                           %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 64 arch "sm_80" {
  %s = cuir.alloc : memref<16x16xbf16, #cuir.mem<shared>>
  %zero = arith.constant dense<0.0> : tensor<16x16xbf16, #ACC>
  cuir.store %zero -> %s : tensor<16x16xbf16, #ACC> -> memref<16x16xbf16, #cuir.mem<shared>>
  cuir.barrier.sync
  cuir.bind warp [0] role consumer {
    // expected-note @below {{the read is here}}
    %v = cuir.load %s : memref<16x16xbf16, #cuir.mem<shared>> -> tensor<16x16xbf16, #A>
    cuir.barrier.sync
  }
  cuir.bind warp [1] role producer {
    // expected-error @below {{overwrites shared memory that threads of the block read with no barrier since}}
    cuir.store %zero -> %s : tensor<16x16xbf16, #ACC> -> memref<16x16xbf16, #cuir.mem<shared>>
    cuir.barrier.sync
  }
  cuir.return
}

// -----

// Two warps write the same tile with no barrier between.
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [1, 1]>
cuir.kernel @two_warps_waw(%O: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "o"},
                           %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 64 arch "sm_80" {
  %s = cuir.alloc : memref<16x16xbf16, #cuir.mem<shared>>
  %zero = arith.constant dense<0.0> : tensor<16x16xbf16, #ACC>
  cuir.bind warp [0] role producer {
    // expected-note @below {{the other write is here}}
    cuir.store %zero -> %s : tensor<16x16xbf16, #ACC> -> memref<16x16xbf16, #cuir.mem<shared>>
    cuir.barrier.sync
  }
  cuir.bind warp [1] role consumer {
    // expected-error @below {{writes shared memory that another worker wrote with no barrier since: the two writes are unordered}}
    cuir.store %zero -> %s : tensor<16x16xbf16, #ACC> -> memref<16x16xbf16, #cuir.mem<shared>>
    cuir.barrier.sync
  }
  cuir.return
}

// -----

// The writer has arrived at the barrier (and waits there) when the other warp
// reads before arriving: the read is not ordered after the write.
#A = #cuir.frag<a, mma_m16n8k16, warps = [1, 1]>
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [1, 1]>
cuir.kernel @read_before_arriving(%O: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "o"},
                                  %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 64 arch "sm_80" {
  %s = cuir.alloc : memref<16x16xbf16, #cuir.mem<shared>>
  %zero = arith.constant dense<0.0> : tensor<16x16xbf16, #ACC>
  cuir.bind warp [0] role producer {
    // expected-note @below {{the write is here}}
    cuir.store %zero -> %s : tensor<16x16xbf16, #ACC> -> memref<16x16xbf16, #cuir.mem<shared>>
    cuir.barrier.sync
  }
  cuir.bind warp [1] role consumer {
    // expected-error @below {{reads shared memory that threads of the block wrote with no barrier since}}
    %v = cuir.load %s : memref<16x16xbf16, #cuir.mem<shared>> -> tensor<16x16xbf16, #A>
    cuir.barrier.sync
  }
  cuir.return
}

// -----

// A named barrier orders the write before the other warp's read; the write
// that follows the read is not ordered after it.
#A = #cuir.frag<a, mma_m16n8k16, warps = [1, 1]>
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [1, 1]>
cuir.kernel @named_then_unordered(%O: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "o"},
                                  %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 64 arch "sm_80" {
  %c1 = arith.constant 1 : index
  %s = cuir.alloc : memref<16x16xbf16, #cuir.mem<shared>>
  %zero = arith.constant dense<0.0> : tensor<16x16xbf16, #ACC>
  cuir.bind warp [0] role producer {
    cuir.store %zero -> %s : tensor<16x16xbf16, #ACC> -> memref<16x16xbf16, #cuir.mem<shared>>
    cuir.barrier.named %c1 threads 64
    // expected-error @below {{overwrites shared memory that threads of the block read with no barrier since}}
    cuir.store %zero -> %s : tensor<16x16xbf16, #ACC> -> memref<16x16xbf16, #cuir.mem<shared>>
  }
  cuir.bind warp [1] role consumer {
    cuir.barrier.named %c1 threads 64
    // expected-note @below {{the read is here}}
    %v = cuir.load %s : memref<16x16xbf16, #cuir.mem<shared>> -> tensor<16x16xbf16, #A>
  }
  cuir.return
}
