// RUN: cuir-opt %s -split-input-file --cuir-interpret="Nq=64 Nkv=64 d=16" -verify-diagnostics
//
// Asynchronous hazards that the verifier cannot see (the values flow
// through loop arguments, or only the run-time order is wrong) are caught
// by the interpreter, which names both ops.

// The failure of the CuBridge paper's Figure 2, in a software-pipelined
// loop: the PrefixLM mask is applied to the score tile S before the
// asynchronous GEMM that produces it has been waited for.
#WA   = #cuir.frag<a, wgmma_m64nNk16, warps = [1, 1]>
#WACC = #cuir.frag<acc, wgmma_m64nNk16, warps = [1, 1]>
!g = memref<?x16xbf16, #cuir.mem<global>>
cuir.kernel @figure2(%O: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "o"},
                     %prefix: index {cuir.arg = "Nkv"})
    grid (n) -> (1) threads 128 arch "sm_90a" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ninf = arith.constant 0xFF800000 : f32
  %sq = cuir.alloc : memref<64x16xbf16, #cuir.mem<shared>>
  %sk = cuir.alloc : memref<64x16xbf16, #cuir.mem<shared>>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #WACC>
  // expected-note @below {{the asynchronous GEMM is issued here}}
  %s0 = cuir.gemm_async %sq, %sk transpose_b, %zero
      : memref<64x16xbf16, #cuir.mem<shared>>, memref<64x16xbf16, #cuir.mem<shared>>, tensor<64x64xf32, #WACC>
  %last = scf.for %i = %c0 to %c2 step %c1 iter_args(%s = %s0) -> (tensor<64x64xf32, #WACC>) {
    // expected-error @below {{reads the result of an asynchronous GEMM before its cuir.gemm_wait: the tensor cores may still be writing it}}
    %masked = cuir.elementwise (%s) at [%c0, %c0, %c0, %c0]
        : (tensor<64x64xf32, #WACC>) -> tensor<64x64xf32, #WACC> {
    ^bb0(%x: f32, %b: index, %h: index, %q: index, %k: index):
      %in_prefix = arith.cmpi ult, %k, %prefix : index
      %causal = arith.cmpi uge, %q, %k : index
      %keep = arith.ori %in_prefix, %causal : i1
      %r = arith.select %keep, %x, %ninf : f32
      cuir.yield %r : f32
    }
    %done = cuir.gemm_wait %s pending 0 : tensor<64x64xf32, #WACC>
    %next = cuir.gemm_async %sq, %sk transpose_b, %zero
        : memref<64x16xbf16, #cuir.mem<shared>>, memref<64x16xbf16, #cuir.mem<shared>>, tensor<64x64xf32, #WACC>
    scf.yield %next : tensor<64x64xf32, #WACC>
  }
  %fin = cuir.gemm_wait %last pending 0 : tensor<64x64xf32, #WACC>
  cuir.return
}

// -----

// A wait whose pending count leaves the awaited GEMM in flight.
#WACC = #cuir.frag<acc, wgmma_m64nNk16, warps = [1, 1]>
cuir.kernel @pending(%O: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "o"},
                     %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 128 arch "sm_90a" {
  %sq = cuir.alloc : memref<64x16xbf16, #cuir.mem<shared>>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #WACC>
  %a = cuir.gemm_async %sq, %sq transpose_b, %zero
      : memref<64x16xbf16, #cuir.mem<shared>>, memref<64x16xbf16, #cuir.mem<shared>>, tensor<64x64xf32, #WACC>
  // expected-note @below {{the asynchronous GEMM is issued here}}
  %b = cuir.gemm_async %sq, %sq transpose_b, %zero
      : memref<64x16xbf16, #cuir.mem<shared>>, memref<64x16xbf16, #cuir.mem<shared>>, tensor<64x64xf32, #WACC>
  // expected-error @below {{leaves the GEMM it waits for in flight: 'pending 1' keeps the 1 most recent GEMM(s) pending, and this one is among them}}
  %wb = cuir.gemm_wait %b pending 1 : tensor<64x64xf32, #WACC>
  cuir.return
}

// -----

// Reading a cp.async destination before its group is waited for.
#A = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @early_read(%Q: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "q"},
                        %O: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "o"},
                        %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %rows = memref.subview %Q[0, 0, 0, 0] [1, %n, 1, 16] [1, 1, 1, 1]
      : memref<?x?x?x16xbf16, #cuir.mem<global>> to memref<?x16xbf16, strided<[?, 1]>, #cuir.mem<global>>
  %s = cuir.alloc : memref<64x16xbf16, #cuir.mem<shared>>
  // expected-note @below {{the copy in flight is issued here}}
  %t = cuir.copy_async cp_async %rows[%c0, %c0] -> %s
      : memref<?x16xbf16, strided<[?, 1]>, #cuir.mem<global>> -> memref<64x16xbf16, #cuir.mem<shared>> -> !cuir.token
  %g = cuir.commit %t
  // expected-error @below {{reads memory that an asynchronous copy is still writing; wait for its group or barrier phase first}}
  %q = cuir.load %s : memref<64x16xbf16, #cuir.mem<shared>> -> tensor<64x16xbf16, #A>
  cuir.wait_group %g pending 0
  cuir.return
}

// -----

// A wait_group whose pending count does not cover the group it names.
cuir.kernel @uncovered(%Q: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "q"},
                       %O: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "o"},
                       %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %rows = memref.subview %Q[0, 0, 0, 0] [1, %n, 1, 16] [1, 1, 1, 1]
      : memref<?x?x?x16xbf16, #cuir.mem<global>> to memref<?x16xbf16, strided<[?, 1]>, #cuir.mem<global>>
  %s = cuir.alloc : memref<64x16xbf16, #cuir.mem<shared>>
  %t = cuir.copy_async cp_async %rows[%c0, %c0] -> %s
      : memref<?x16xbf16, strided<[?, 1]>, #cuir.mem<global>> -> memref<64x16xbf16, #cuir.mem<shared>> -> !cuir.token
  // expected-note @below {{the group is committed here}}
  %g = cuir.commit %t
  // expected-error @below {{leaves the group it waits for in flight: 'pending 1' keeps the 1 most recent group(s) pending, and this group is one of them}}
  cuir.wait_group %g pending 1
  cuir.return
}

// -----

// Overwriting the source of a copy that is still in flight.
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @overwrite(%O: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "o"},
                       %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %rows = memref.subview %O[0, 0, 0, 0] [1, %n, 1, 16] [1, 1, 1, 1]
      : memref<?x?x?x16xbf16, #cuir.mem<global>> to memref<?x16xbf16, strided<[?, 1]>, #cuir.mem<global>>
  %s = cuir.alloc : memref<64x16xbf16, #cuir.mem<shared>>
  // expected-note @below {{the copy in flight is issued here}}
  %t = cuir.copy_async cp_async %rows[%c0, %c0] -> %s
      : memref<?x16xbf16, strided<[?, 1]>, #cuir.mem<global>> -> memref<64x16xbf16, #cuir.mem<shared>> -> !cuir.token
  %g = cuir.commit %t
  %z = arith.constant dense<0.0> : tensor<64x16xbf16, #ACC>
  // expected-error @below {{overwrites memory that an asynchronous copy is still reading}}
  cuir.store %z -> %rows[%c0, %c0] : tensor<64x16xbf16, #ACC> -> memref<?x16xbf16, strided<[?, 1]>, #cuir.mem<global>>
  cuir.wait_group %g pending 0
  cuir.return
}

// -----

// A consumer waits for a phase that the producer never completes.
cuir.kernel @deadlock(%O: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "o"},
                      %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 256 arch "sm_90a" {
  %c0 = arith.constant 0 : index
  %full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<1>
  %empty = cuir.barrier.init arrivals 1 : !cuir.mbarrier<1>
  cuir.bind warpgroup [0] role producer {
    // expected-note @below {{worker 0 waits here}}
    cuir.barrier.wait %empty[%c0], %c0 : !cuir.mbarrier<1>
  }
  cuir.bind warpgroup [1] role consumer {
    // expected-error @below {{deadlock: this barrier wait can never complete; every worker of the block is waiting}}
    cuir.barrier.wait %full[%c0], %c0 : !cuir.mbarrier<1>
  }
  cuir.return
}

// -----

// A block barrier inside a single worker with nobody else to wait for.
cuir.kernel @lonely(%O: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "o"},
                    %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 128 arch "sm_90a" {
  %c0 = arith.constant 0 : index
  %full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<1>
  // expected-error @below {{waits for a barrier that can never complete: no other worker runs in this block}}
  cuir.barrier.wait %full[%c0], %c0 : !cuir.mbarrier<1>
  cuir.return
}

// -----

// Copies committed but never waited for before the block ends.
cuir.kernel @never_waited(%Q: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "q"},
                          %O: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "o"},
                          %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %rows = memref.subview %Q[0, 0, 0, 0] [1, %n, 1, 16] [1, 1, 1, 1]
      : memref<?x?x?x16xbf16, #cuir.mem<global>> to memref<?x16xbf16, strided<[?, 1]>, #cuir.mem<global>>
  %s = cuir.alloc : memref<64x16xbf16, #cuir.mem<shared>>
  %t = cuir.copy_async cp_async %rows[%c0, %c0] -> %s
      : memref<?x16xbf16, strided<[?, 1]>, #cuir.mem<global>> -> memref<64x16xbf16, #cuir.mem<shared>> -> !cuir.token
  // expected-error @below {{commits a copy group that is never waited for before the block ends}}
  %g = cuir.commit %t
  cuir.return
}
