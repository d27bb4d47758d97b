// RUN: cuir-opt %s -split-input-file --cuir-interpret="Nq=64 Nkv=64 d=16" -verify-diagnostics
//
// Shared memory that threads of a block write plainly (cuir.store, a
// synchronous cuir.copy) or that their cp.async copies fill (a thread's
// cuir.wait_group completes only its own copies) is visible to the other
// threads only after a barrier (cuir.barrier.sync, .named, .warp, or an
// mbarrier arrive and wait). A read before one is caught, naming the write.

// A tile staged through shared memory and copied out with no barrier between.
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @staged_epilogue(%O: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "o"},
                             %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %rows = memref.subview %O[0, 0, 0, 0] [1, %n, 1, 16] [1, 1, 1, 1]
      : memref<?x?x?x16xbf16, #cuir.mem<global>> to memref<?x16xbf16, strided<[?, 1]>, #cuir.mem<global>>
  %s = cuir.alloc : memref<64x16xbf16, #cuir.mem<shared>>
  %zero = arith.constant dense<0.0> : tensor<64x16xbf16, #ACC>
  // expected-note @below {{the write is here}}
  cuir.store %zero -> %s : tensor<64x16xbf16, #ACC> -> memref<64x16xbf16, #cuir.mem<shared>>
  // expected-error @below {{reads shared memory that threads of the block wrote with no barrier since: other threads' writes may not be visible yet (add cuir.barrier.sync, or a named barrier among the threads)}}
  cuir.copy %s -> %rows[%c0, %c0] : memref<64x16xbf16, #cuir.mem<shared>> -> memref<?x16xbf16, strided<[?, 1]>, #cuir.mem<global>>
  cuir.return
}

// -----

// A cp.async tile read after the wait but before the barrier.
#A = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @wait_without_barrier(%Q: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "q"},
                                  %O: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "o"},
                                  %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %rows = memref.subview %Q[0, 0, 0, 0] [1, %n, 1, 16] [1, 1, 1, 1]
      : memref<?x?x?x16xbf16, #cuir.mem<global>> to memref<?x16xbf16, strided<[?, 1]>, #cuir.mem<global>>
  %s = cuir.alloc : memref<64x16xbf16, #cuir.mem<shared>>
  // expected-note @below {{the write is here}}
  %t = cuir.copy_async cp_async %rows[%c0, %c0] -> %s
      : memref<?x16xbf16, strided<[?, 1]>, #cuir.mem<global>> -> memref<64x16xbf16, #cuir.mem<shared>> -> !cuir.token
  %g = cuir.commit %t
  cuir.wait_group %g pending 0
  // expected-error @below {{reads shared memory that threads of the block wrote with no barrier since}}
  %q = cuir.load %s : memref<64x16xbf16, #cuir.mem<shared>> -> tensor<64x16xbf16, #A>
  cuir.return
}

// -----

// A barrier before the write does not publish it.
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @barrier_too_early(%O: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "o"},
                               %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %rows = memref.subview %O[0, 0, 0, 0] [1, %n, 1, 16] [1, 1, 1, 1]
      : memref<?x?x?x16xbf16, #cuir.mem<global>> to memref<?x16xbf16, strided<[?, 1]>, #cuir.mem<global>>
  %s = cuir.alloc : memref<64x16xbf16, #cuir.mem<shared>>
  %zero = arith.constant dense<0.0> : tensor<64x16xbf16, #ACC>
  cuir.store %zero -> %s : tensor<64x16xbf16, #ACC> -> memref<64x16xbf16, #cuir.mem<shared>>
  cuir.barrier.sync
  // expected-note @below {{the write is here}}
  cuir.store %zero -> %s : tensor<64x16xbf16, #ACC> -> memref<64x16xbf16, #cuir.mem<shared>>
  // expected-error @below {{reads shared memory that threads of the block wrote with no barrier since}}
  %v = cuir.load %s : memref<64x16xbf16, #cuir.mem<shared>> -> tensor<64x16xbf16, #ACC>
  cuir.return
}
