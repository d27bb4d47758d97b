// RUN: cuir-opt %s -split-input-file -verify-diagnostics
//
// One case per verifier branch of the CuIR dialect.

// expected-error @below {{fragment layout expects a 2-D worker grid [rows, columns], got 1 dimension(s)}}
func.func private @bad_frag(tensor<16x8xf32, #cuir.frag<acc, mma_m16n8k16, warps = [4]>>)

// -----

// expected-error @below {{fragment layout worker grid must be positive, got [0, 1]}}
func.func private @bad_frag(tensor<16x8xf32, #cuir.frag<acc, mma_m16n8k16, warps = [0, 1]>>)

// -----

// expected-error @below {{wgmma reads its B operand from shared memory; a register fragment of kind 'b' does not exist}}
func.func private @bad_frag(tensor<16x8xbf16, #cuir.frag<b, wgmma_m64nNk16, warps = [1, 1]>>)

// -----

// expected-error @below {{an mbarrier array needs at least one barrier, got 0}}
func.func private @bad_bar(!cuir.mbarrier<0>)

// -----

// expected-error @below {{a kernel returns nothing; write its outputs to global memory (got 1 result(s))}}
cuir.kernel @k(%n: index) -> f32 grid (n) -> (n) threads 128 arch "sm_80" {
}

// -----

// expected-error @below {{parameter #0 is a memref in shared memory; kernel buffers must be in #cuir.mem<global>}}
cuir.kernel @k(%m: memref<8xf32, #cuir.mem<shared>>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
}

// -----

// expected-error @below {{parameter #0 is a memref in no cuir memory; kernel buffers must be in #cuir.mem<global>}}
cuir.kernel @k(%m: memref<8xf32>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
}

// -----

// expected-error @below {{grid map has 2 dimension(s) but the kernel has 1 index parameter(s)}}
cuir.kernel @k(%n: index) grid (n, m) -> (n) threads 128 arch "sm_80" {
}

// -----

// expected-error @below {{grid map must have no symbols; its dimensions are the kernel's index parameters}}
cuir.kernel @k(%n: index) grid (n)[s] -> (n + s) threads 128 arch "sm_80" {
}

// -----

// expected-error @below {{grid must have 1 to 3 dimensions, got 4}}
cuir.kernel @k(%n: index) grid (n) -> (n, n, n, n) threads 128 arch "sm_80" {
}

// -----

// expected-error @below {{threads must be a multiple of 32 and at most 1024, got 100}}
cuir.kernel @k(%n: index) grid (n) -> (n) threads 100 arch "sm_80" {
}

// -----

// expected-error @below {{unsupported arch 'sm_70'; expected sm_80, sm_86, sm_89, sm_90 or sm_90a}}
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_70" {
}

// -----

func.func @f() {
  // expected-error @below {{must be inside a cuir.kernel}}
  %0 = cuir.block_id x
  return
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{reads grid dimension y but the kernel's grid has 1 dimension(s)}}
  %0 = cuir.block_id y
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{expected block dimension x, y or z, got 'w'}}
  %0 = cuir.block_id w
// The attribute's parser then reports its own error, at the next token.
// expected-error @below {{failed to parse CuIR_DimensionAttr parameter 'value'}}
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{expected block dimension x, y or z, got 'w'}}
  // expected-error @below {{failed to parse CuIR_DimensionAttr parameter 'value'}}
  %0 = "cuir.block_id"() <{dim = #cuir<dim w>}> : () -> index
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // The generic form of the old integer attribute is refused.
  // expected-error @below {{invalid properties {dim = 0 : i64} for op cuir.block_id: Invalid attribute `dim` in property conversion: 0 : i64}}
  %0 = "cuir.block_id"() <{dim = 0 : i64}> : () -> index
}

// -----

func.func @f() {
  // expected-error @below {{binds work to workers of a kernel and must be inside a cuir.kernel}}
  cuir.bind warp [0] role all {
  }
  return
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{needs at least one warp}}
  cuir.bind warp [] role all {
  }
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 256 arch "sm_90a" {
  // expected-error @below {{warpgroup 2 does not exist: a block of 256 threads has 2 warpgroup(s)}}
  cuir.bind warpgroup [1, 2] role consumer {
  }
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{block 1 does not exist: a block of 128 threads has 1 block(s)}}
  cuir.bind block [1] role all {
  }
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{warp 1 is listed twice}}
  cuir.bind warp [1, 1] role all {
  }
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 256 arch "sm_90a" {
  cuir.bind warp [0] role producer {
    // expected-error @below {{a warpgroup bind cannot be nested in a warp bind; nested binds must be finer-grained}}
    cuir.bind warpgroup [0] role producer {
    }
  }
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{setmaxnreg applies to warpgroups, not to a warp}}
  cuir.bind warp [0] role producer regs 24 {
  }
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 256 arch "sm_90a" {
  // expected-error @below {{register budget 250 must be a multiple of 8 in [24, 256]}}
  cuir.bind warpgroup [0] role producer regs 250 {
  }
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{must be inside a cuir.bind}}
  %0 = cuir.worker_id
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  cuir.bind warp [0] role all {
    // expected-error @below {{a cuir.bind region yields no values; workers communicate through memory}}
    cuir.yield %n : index
  }
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%t: tensor<64x8xf32, #ACC>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %e = cuir.elementwise (%t) at [%n, %n, %n, %n] : (tensor<64x8xf32, #ACC>) -> tensor<64x8xf32, #ACC> {
  ^bb0(%x: f32, %b: index, %h: index, %q: index, %k: index):
    // expected-error @below {{must yield one element per result tile of the cuir.elementwise: 'f32'}}
    cuir.yield %x, %x : f32, f32
  }
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{allocated buffer must be in shared memory, but is in global memory}}
  %0 = cuir.alloc : memref<64x64xbf16, #cuir.mem<global>>
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{swizzle must be 32, 64 or 128 bytes, got 16}}
  %0 = cuir.alloc {swizzle = 16} : memref<64x64xbf16, #cuir.mem<shared>>
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{'cuir.alloc' op result #0 must be statically shaped memref of any type values}}
  %0 = cuir.alloc : memref<?x64xbf16, #cuir.mem<shared>>
}

// -----

cuir.kernel @k(%g: memref<?x64xbf16, #cuir.mem<global>>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = cuir.alloc : memref<64x64xbf16, #cuir.mem<shared>>
  // expected-error @below {{expects exactly one of the source and the destination to be indexed, got neither}}
  cuir.copy %g -> %s : memref<?x64xbf16, #cuir.mem<global>> -> memref<64x64xbf16, #cuir.mem<shared>>
}

// -----

cuir.kernel @k(%g: memref<?x64xbf16, #cuir.mem<global>>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = cuir.alloc : memref<64x64xbf16, #cuir.mem<shared>>
  // expected-error @below {{expects exactly one of the source and the destination to be indexed, got both}}
  cuir.copy %g[%n, %n] -> %s[%n, %n] : memref<?x64xbf16, #cuir.mem<global>> -> memref<64x64xbf16, #cuir.mem<shared>>
}

// -----

cuir.kernel @k(%g: memref<?x64xbf16, #cuir.mem<global>>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = cuir.alloc : memref<64x64xbf16, #cuir.mem<shared>>
  // expected-error @below {{indexes a rank-2 buffer with 1 indices}}
  cuir.copy %g[%n] -> %s : memref<?x64xbf16, #cuir.mem<global>> -> memref<64x64xbf16, #cuir.mem<shared>>
}

// -----

cuir.kernel @k(%g: memref<?x?x64xbf16, #cuir.mem<global>>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = cuir.alloc : memref<64x64xbf16, #cuir.mem<shared>>
  // expected-error @below {{tile buffer has rank 2 but the indexed buffer has rank 3; take a memref.subview to select the tile's dimensions}}
  cuir.copy %g[%n, %n, %n] -> %s : memref<?x?x64xbf16, #cuir.mem<global>> -> memref<64x64xbf16, #cuir.mem<shared>>
}

// -----

cuir.kernel @k(%g: memref<?x64xbf16, #cuir.mem<global>>, %h: memref<?x64xbf16, #cuir.mem<global>>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{tile buffer must have a static shape, got 'memref<?x64xbf16, #cuir.mem<global>>'}}
  cuir.copy %g[%n, %n] -> %h : memref<?x64xbf16, #cuir.mem<global>> -> memref<?x64xbf16, #cuir.mem<global>>
}

// -----

cuir.kernel @k(%g: memref<?x64xf16, #cuir.mem<global>>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = cuir.alloc : memref<64x64xbf16, #cuir.mem<shared>>
  // expected-error @below {{copies between different element types: 'f16' and 'bf16'}}
  cuir.copy %g[%n, %n] -> %s : memref<?x64xf16, #cuir.mem<global>> -> memref<64x64xbf16, #cuir.mem<shared>>
}

// -----

cuir.kernel @k(%g: memref<?x64xbf16, #cuir.mem<global>>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = memref.alloca() : memref<64x64xbf16, #cuir.mem<register>>
  // expected-error @below {{destination must be in global or shared memory, but is in register memory}}
  cuir.copy %g[%n, %n] -> %s : memref<?x64xbf16, #cuir.mem<global>> -> memref<64x64xbf16, #cuir.mem<register>>
}

// -----

cuir.kernel @k(%g: memref<?x64xbf16, #cuir.mem<global>>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = cuir.alloc : memref<64x64xbf16, #cuir.mem<shared>>
  %t = cuir.alloc : memref<64x64xbf16, #cuir.mem<shared>>
  // expected-error @below {{source must be in global memory, but is in shared memory}}
  %tok = cuir.copy_async cp_async %s[%n, %n] -> %t : memref<64x64xbf16, #cuir.mem<shared>> -> memref<64x64xbf16, #cuir.mem<shared>> -> !cuir.token
  %g2 = cuir.commit %tok
}

// -----

cuir.kernel @k(%g: memref<?x64xbf16, #cuir.mem<global>>, %h: memref<64x64xbf16, #cuir.mem<global>>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{destination must be in shared memory, but is in global memory}}
  %tok = cuir.copy_async cp_async %g[%n, %n] -> %h : memref<?x64xbf16, #cuir.mem<global>> -> memref<64x64xbf16, #cuir.mem<global>> -> !cuir.token
  %g2 = cuir.commit %tok
}

// -----

cuir.kernel @k(%g: memref<64x64xbf16, #cuir.mem<global>>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = cuir.alloc : memref<64x64xbf16, #cuir.mem<shared>>
  // expected-error @below {{must index its global source}}
  %tok = cuir.copy_async cp_async %g -> %s[%n, %n] : memref<64x64xbf16, #cuir.mem<global>> -> memref<64x64xbf16, #cuir.mem<shared>> -> !cuir.token
  %g2 = cuir.commit %tok
}

// -----

cuir.kernel @k(%g: memref<?x64xbf16, #cuir.mem<global>>, %n: index) grid (n) -> (n) threads 128 arch "sm_90a" {
  %s = cuir.alloc : memref<64x64xbf16, #cuir.mem<shared>>
  // expected-error @below {{a TMA copy completes on an mbarrier; add 'barrier %bars[%i]'}}
  cuir.copy_async tma %g[%n, %n] -> %s : memref<?x64xbf16, #cuir.mem<global>> -> memref<64x64xbf16, #cuir.mem<shared>>
}

// -----

cuir.kernel @k(%g: memref<?x64xbf16, #cuir.mem<global>>, %n: index) grid (n) -> (n) threads 128 arch "sm_90a" {
  %s = cuir.alloc : memref<64x64xbf16, #cuir.mem<shared>>
  %b = cuir.barrier.init arrivals 1 : !cuir.mbarrier<1>
  // expected-error @below {{a cp.async copy completes through cuir.commit/cuir.wait_group, not an mbarrier}}
  %tok = cuir.copy_async cp_async %g[%n, %n] -> %s barrier %b[%n] : memref<?x64xbf16, #cuir.mem<global>> -> memref<64x64xbf16, #cuir.mem<shared>>, !cuir.mbarrier<1> -> !cuir.token
  %g2 = cuir.commit %tok
}

// -----

cuir.kernel @k(%g: memref<?x64xbf16, #cuir.mem<global>>, %n: index) grid (n) -> (n) threads 128 arch "sm_90a" {
  %s = cuir.alloc : memref<64x64xbf16, #cuir.mem<shared>>
  %b = cuir.barrier.init arrivals 1 : !cuir.mbarrier<1>
  // expected-error @below {{a TMA copy returns no token}}
  %tok = cuir.copy_async tma %g[%n, %n] -> %s barrier %b[%n] : memref<?x64xbf16, #cuir.mem<global>> -> memref<64x64xbf16, #cuir.mem<shared>>, !cuir.mbarrier<1> -> !cuir.token
  %g2 = cuir.commit %tok
}

// -----

cuir.kernel @k(%g: memref<?x64xbf16, #cuir.mem<global>>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = cuir.alloc : memref<64x64xbf16, #cuir.mem<shared>>
  // expected-error @below {{a cp.async copy must return a !cuir.token}}
  cuir.copy_async cp_async %g[%n, %n] -> %s : memref<?x64xbf16, #cuir.mem<global>> -> memref<64x64xbf16, #cuir.mem<shared>>
}

// -----

cuir.kernel @k(%g: memref<?x64xbf16, #cuir.mem<global>>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = cuir.alloc : memref<64x64xbf16, #cuir.mem<shared>>
  // expected-error @below {{starts a cp.async copy that is never committed, so it can never be waited for}}
  %tok = cuir.copy_async cp_async %g[%n, %n] -> %s : memref<?x64xbf16, #cuir.mem<global>> -> memref<64x64xbf16, #cuir.mem<shared>> -> !cuir.token
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %t = builtin.unrealized_conversion_cast %n : index to !cuir.token
  // expected-error @below {{commits a token that does not come from cuir.copy_async but from 'builtin.unrealized_conversion_cast'}}
  %g = cuir.commit %t
}

// -----

cuir.kernel @k(%g: memref<?x64xbf16, #cuir.mem<global>>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = cuir.alloc : memref<64x64xbf16, #cuir.mem<shared>>
  %tok = cuir.copy_async cp_async %g[%n, %n] -> %s : memref<?x64xbf16, #cuir.mem<global>> -> memref<64x64xbf16, #cuir.mem<shared>> -> !cuir.token
  // expected-error @below {{commits a copy that is committed more than once}}
  %g1 = cuir.commit %tok
  // expected-note @below {{also committed here}}
  %g2 = cuir.commit %tok
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %g = builtin.unrealized_conversion_cast %n : index to !cuir.group
  // expected-error @below {{waits on a group that does not come from cuir.commit but from 'builtin.unrealized_conversion_cast'}}
  cuir.wait_group %g pending 0
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %g = cuir.commit
  // expected-note @below {{first waited here}}
  cuir.wait_group %g pending 0
  // expected-error @below {{waits on a copy group that was already waited for}}
  cuir.wait_group %g pending 0
}

// -----

#A = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%g: memref<64x16xbf16, #cuir.mem<global>>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{source must be in shared memory, but is in global memory}}
  %a = cuir.load %g : memref<64x16xbf16, #cuir.mem<global>> -> tensor<64x16xbf16, #A>
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = cuir.alloc : memref<64x16xbf16, #cuir.mem<shared>>
  // expected-error @below {{result must be a register tile with a #cuir.frag layout, but has type 'tensor<64x16xbf16>'}}
  %a = cuir.load %s : memref<64x16xbf16, #cuir.mem<shared>> -> tensor<64x16xbf16>
}

// -----

#ROW = #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = cuir.alloc : memref<64x16xf32, #cuir.mem<shared>>
  // expected-error @below {{loads a row vector only from a 1-D tile, untransposed}}
  %a = cuir.load %s : memref<64x16xf32, #cuir.mem<shared>> -> tensor<64xf32, #ROW>
}

// -----

#ROW = #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = cuir.alloc : memref<32xf32, #cuir.mem<shared>>
  // expected-error @below {{result shape 'tensor<64xf32, #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>>' does not match the source tile 'memref<32xf32, #cuir.mem<shared>>'}}
  %a = cuir.load %s : memref<32xf32, #cuir.mem<shared>> -> tensor<64xf32, #ROW>
}

// -----

#A = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = cuir.alloc : memref<64x16xf16, #cuir.mem<shared>>
  // expected-error @below {{loads 'f16' elements into a tile of 'bf16'}}
  %a = cuir.load %s : memref<64x16xf16, #cuir.mem<shared>> -> tensor<64x16xbf16, #A>
}

// -----

#A = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = cuir.alloc : memref<64x32xbf16, #cuir.mem<shared>>
  // expected-error @below {{result shape 'tensor<64x16xbf16, #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>>' does not match the source tile 'memref<64x32xbf16, #cuir.mem<shared>>'}}
  %a = cuir.load %s : memref<64x32xbf16, #cuir.mem<shared>> -> tensor<64x16xbf16, #A>
}

// -----

#A = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = cuir.alloc : memref<16x64xbf16, #cuir.mem<shared>>
  // expected-error @below {{result: fragment rows (16) must be a multiple of 64 for mma_m16n8k16 over a worker grid of [4, 1]}}
  %a = cuir.load %s : memref<16x64xbf16, #cuir.mem<shared>> -> tensor<16x64xbf16, #A>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = cuir.alloc : memref<64x64xf32, #cuir.mem<shared>>
  %t = arith.constant dense<0.0> : tensor<64x64xf32>
  // expected-error @below {{stored value must be a register tile with a #cuir.frag layout, but has type 'tensor<64x64xf32>'}}
  cuir.store %t -> %s : tensor<64x64xf32> -> memref<64x64xf32, #cuir.mem<shared>>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = memref.alloca() : memref<64x64xf32, #cuir.mem<register>>
  %t = arith.constant dense<0.0> : tensor<64x64xf32, #ACC>
  // expected-error @below {{destination must be in shared or global memory, but is in register memory}}
  cuir.store %t -> %s : tensor<64x64xf32, #ACC> -> memref<64x64xf32, #cuir.mem<register>>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = cuir.alloc : memref<64x64xbf16, #cuir.mem<shared>>
  %t = arith.constant dense<0.0> : tensor<64x64xf32, #ACC>
  // expected-error @below {{stores 'f32' elements into a buffer of 'bf16'}}
  cuir.store %t -> %s : tensor<64x64xf32, #ACC> -> memref<64x64xbf16, #cuir.mem<shared>>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = cuir.alloc : memref<4096xf32, #cuir.mem<shared>>
  %t = arith.constant dense<0.0> : tensor<64x64xf32, #ACC>
  // expected-error @below {{stores a rank-2 tile into a rank-1 buffer}}
  cuir.store %t -> %s : tensor<64x64xf32, #ACC> -> memref<4096xf32, #cuir.mem<shared>>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%g: memref<?x64xf32, #cuir.mem<global>>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %t = arith.constant dense<0.0> : tensor<64x64xf32, #ACC>
  // expected-error @below {{needs 2 indices to place the tile in global memory, got 0}}
  cuir.store %t -> %g : tensor<64x64xf32, #ACC> -> memref<?x64xf32, #cuir.mem<global>>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = cuir.alloc : memref<128x64xf32, #cuir.mem<shared>>
  %t = arith.constant dense<0.0> : tensor<64x64xf32, #ACC>
  // expected-error @below {{stores a tile of shape 'tensor<64x64xf32, #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>>' into a shared buffer of another shape 'memref<128x64xf32, #cuir.mem<shared>>'}}
  cuir.store %t -> %s : tensor<64x64xf32, #ACC> -> memref<128x64xf32, #cuir.mem<shared>>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %s = cuir.alloc : memref<128x64xf32, #cuir.mem<shared>>
  %t = arith.constant dense<0.0> : tensor<64x64xf32, #ACC>
  // expected-error @below {{'cuir.store' op needs 2 indices, got 1}}
  cuir.store %t -> %s[%n] : tensor<64x64xf32, #ACC> -> memref<128x64xf32, #cuir.mem<shared>>
}

// -----

#A = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
#B = #cuir.frag<b, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%a: tensor<64x16xbf16, #A>, %b: tensor<16x8xbf16, #B>, %c: tensor<64x8xf32>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{accumulator must be a register tile with a #cuir.frag layout, but has type 'tensor<64x8xf32>'}}
  %d = cuir.gemm %a, %b, %c : tensor<64x16xbf16, #A>, tensor<16x8xbf16, #B>, tensor<64x8xf32>
}

// -----

#A = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
#B = #cuir.frag<b, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%a: tensor<64x16xbf16, #A>, %b: tensor<16x8xbf16, #B>, %c: tensor<64x16xf32, #A>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{accumulator must be a 'acc' fragment, but is a 'a' fragment}}
  %d = cuir.gemm %a, %b, %c : tensor<64x16xbf16, #A>, tensor<16x8xbf16, #B>, tensor<64x16xf32, #A>
}

// -----

#WACC = #cuir.frag<acc, wgmma_m64nNk16, warps = [1, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_90a" {
  %a = cuir.alloc : memref<64x16xbf16, #cuir.mem<shared>>
  %b = cuir.alloc : memref<16x8xbf16, #cuir.mem<shared>>
  %c = arith.constant dense<0.0> : tensor<64x8xf32, #WACC>
  // expected-error @below {{synchronous GEMMs run on mma.sync; the accumulator must use the mma_m16n8k16 layout, not wgmma_m64nNk16}}
  %d = cuir.gemm %a, %b, %c : memref<64x16xbf16, #cuir.mem<shared>>, memref<16x8xbf16, #cuir.mem<shared>>, tensor<64x8xf32, #WACC>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_90a" {
  %a = cuir.alloc : memref<64x16xbf16, #cuir.mem<shared>>
  %b = cuir.alloc : memref<16x8xbf16, #cuir.mem<shared>>
  %c = arith.constant dense<0.0> : tensor<64x8xf32, #ACC>
  // expected-error @below {{asynchronous GEMMs run on wgmma; the accumulator must use the wgmma_m64nNk16 layout, not mma_m16n8k16}}
  %d = cuir.gemm_async %a, %b, %c : memref<64x16xbf16, #cuir.mem<shared>>, memref<16x8xbf16, #cuir.mem<shared>>, tensor<64x8xf32, #ACC>
  %e = cuir.gemm_wait %d pending 0 : tensor<64x8xf32, #ACC>
}

// -----

#A = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
#B = #cuir.frag<b, mma_m16n8k16, warps = [4, 1]>
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%a: tensor<64x16xbf16, #A>, %b: tensor<16x8xbf16, #B>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %c = arith.constant dense<0.0> : tensor<64x8xf32, #ACC>
  // expected-error @below {{transpose_b applies to a shared-memory B tile; a register B fragment is already K x N}}
  %d = cuir.gemm %a, %b transpose_b, %c : tensor<64x16xbf16, #A>, tensor<16x8xbf16, #B>, tensor<64x8xf32, #ACC>
}

// -----

#A = #cuir.frag<a, mma_m16n8k16, warps = [2, 1]>
#B = #cuir.frag<b, mma_m16n8k16, warps = [4, 1]>
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%a: tensor<64x16xbf16, #A>, %b: tensor<16x8xbf16, #B>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %c = arith.constant dense<0.0> : tensor<64x8xf32, #ACC>
  // expected-error @below {{operand 'a' layout #cuir.frag<a, mma_m16n8k16, warps = [2, 1]> does not match the accumulator layout #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>}}
  %d = cuir.gemm %a, %b, %c : tensor<64x16xbf16, #A>, tensor<16x8xbf16, #B>, tensor<64x8xf32, #ACC>
}

// -----

#A = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
#B = #cuir.frag<b, mma_m16n8k16, warps = [4, 1]>
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%a: tensor<128x16xbf16, #A>, %b: tensor<16x8xbf16, #B>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %c = arith.constant dense<0.0> : tensor<64x8xf32, #ACC>
  // expected-error @below {{operand 'a' has 128 rows but the accumulator has 64}}
  %d = cuir.gemm %a, %b, %c : tensor<128x16xbf16, #A>, tensor<16x8xbf16, #B>, tensor<64x8xf32, #ACC>
}

// -----

#A = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
#B = #cuir.frag<b, mma_m16n8k16, warps = [4, 1]>
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%a: tensor<64x16xbf16, #A>, %b: tensor<16x16xbf16, #B>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %c = arith.constant dense<0.0> : tensor<64x8xf32, #ACC>
  // expected-error @below {{operand 'b' has 16 columns (N) but the accumulator has 8}}
  %d = cuir.gemm %a, %b, %c : tensor<64x16xbf16, #A>, tensor<16x16xbf16, #B>, tensor<64x8xf32, #ACC>
}

// -----

#A = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%a: tensor<64x32xbf16, #A>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %b = cuir.alloc : memref<8x16xbf16, #cuir.mem<shared>>
  %c = arith.constant dense<0.0> : tensor<64x8xf32, #ACC>
  // expected-error @below {{reduction dimensions differ: 'a' is 64x32 and 'b' is 16x8 (transposed)}}
  %d = cuir.gemm %a, %b transpose_b, %c : tensor<64x32xbf16, #A>, memref<8x16xbf16, #cuir.mem<shared>>, tensor<64x8xf32, #ACC>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %a = cuir.alloc : memref<64x8xbf16, #cuir.mem<shared>>
  %b = cuir.alloc : memref<8x8xbf16, #cuir.mem<shared>>
  %c = arith.constant dense<0.0> : tensor<64x8xf32, #ACC>
  // expected-error @below {{reduction dimension 8 must be a multiple of 16}}
  %d = cuir.gemm %a, %b, %c : memref<64x8xbf16, #cuir.mem<shared>>, memref<8x8xbf16, #cuir.mem<shared>>, tensor<64x8xf32, #ACC>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %a = cuir.alloc : memref<64x16xf16, #cuir.mem<shared>>
  %b = cuir.alloc : memref<16x8xbf16, #cuir.mem<shared>>
  %c = arith.constant dense<0.0> : tensor<64x8xf32, #ACC>
  // expected-error @below {{operands must both be bf16 or both f16, got 'f16' and 'bf16'}}
  %d = cuir.gemm %a, %b, %c : memref<64x16xf16, #cuir.mem<shared>>, memref<16x8xbf16, #cuir.mem<shared>>, tensor<64x8xf32, #ACC>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %a = cuir.alloc : memref<64x16xbf16, #cuir.mem<shared>>
  %b = cuir.alloc : memref<16x8xbf16, #cuir.mem<shared>>
  %c = arith.constant dense<0> : tensor<64x8xi32, #ACC>
  // expected-error @below {{accumulates in f32 or f16, not 'i32'}}
  %d = cuir.gemm %a, %b, %c : memref<64x16xbf16, #cuir.mem<shared>>, memref<16x8xbf16, #cuir.mem<shared>>, tensor<64x8xi32, #ACC>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%g: memref<64x16xbf16, #cuir.mem<global>>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %b = cuir.alloc : memref<16x8xbf16, #cuir.mem<shared>>
  %c = arith.constant dense<0.0> : tensor<64x8xf32, #ACC>
  // expected-error @below {{operand 'a' must be in shared memory, but is in global memory}}
  %d = cuir.gemm %g, %b, %c : memref<64x16xbf16, #cuir.mem<global>>, memref<16x8xbf16, #cuir.mem<shared>>, tensor<64x8xf32, #ACC>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %a = cuir.alloc : memref<4x64x16xbf16, #cuir.mem<shared>>
  %b = cuir.alloc : memref<16x8xbf16, #cuir.mem<shared>>
  %c = arith.constant dense<0.0> : tensor<64x8xf32, #ACC>
  // expected-error @below {{operand 'a' must be a 2-D tile, got 'memref<4x64x16xbf16, #cuir.mem<shared>>'}}
  %d = cuir.gemm %a, %b, %c : memref<4x64x16xbf16, #cuir.mem<shared>>, memref<16x8xbf16, #cuir.mem<shared>>, tensor<64x8xf32, #ACC>
}

// -----

#WA = #cuir.frag<a, wgmma_m64nNk16, warps = [1, 1]>
#WACC = #cuir.frag<acc, wgmma_m64nNk16, warps = [1, 1]>
cuir.kernel @k(%a: tensor<64x16xbf16, #WA>, %b: tensor<16x8xbf16>, %n: index) grid (n) -> (n) threads 128 arch "sm_90a" {
  %c = arith.constant dense<0.0> : tensor<64x8xf32, #WACC>
  // expected-error @below {{operand 'b' must be a shared-memory tile, got 'tensor<16x8xbf16>'}}
  %d = cuir.gemm_async %a, %b, %c : tensor<64x16xbf16, #WA>, tensor<16x8xbf16>, tensor<64x8xf32, #WACC>
}

// -----

// The failure of the paper's Figure 2: a mask applied to the score tile
// before the asynchronous GEMM that produces it has been waited for.
#WACC = #cuir.frag<acc, wgmma_m64nNk16, warps = [1, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_90a" {
  %a = cuir.alloc : memref<64x16xbf16, #cuir.mem<shared>>
  %b = cuir.alloc : memref<16x8xbf16, #cuir.mem<shared>>
  %c = arith.constant dense<0.0> : tensor<64x8xf32, #WACC>
  %ninf = arith.constant 0xFF800000 : f32
  // expected-error @below {{result is used by 'cuir.elementwise' before its cuir.gemm_wait: the tensor cores may still be writing it}}
  %s = cuir.gemm_async %a, %b, %c : memref<64x16xbf16, #cuir.mem<shared>>, memref<16x8xbf16, #cuir.mem<shared>>, tensor<64x8xf32, #WACC>
  // expected-note @below {{used here}}
  %m = cuir.elementwise (%s) at [%n, %n, %n, %n] : (tensor<64x8xf32, #WACC>) -> tensor<64x8xf32, #WACC> {
  ^bb0(%x: f32, %bb: index, %h: index, %q: index, %k: index):
    %ok = arith.cmpi uge, %q, %k : index
    %r = arith.select %ok, %x, %ninf : f32
    cuir.yield %r : f32
  }
  %w = cuir.gemm_wait %s pending 0 : tensor<64x8xf32, #WACC>
}

// -----

#WACC = #cuir.frag<acc, wgmma_m64nNk16, warps = [1, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_90a" {
  %c = arith.constant dense<0.0> : tensor<64x8xf32, #WACC>
  // expected-error @below {{waits on a value produced by 'arith.constant', not by cuir.gemm_async}}
  %w = cuir.gemm_wait %c pending 0 : tensor<64x8xf32, #WACC>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#ROW = #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%t: tensor<64xf32, #ROW>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{input must be a 'acc' fragment, but is a 'row' fragment}}
  %m = cuir.reduce_rows max %t : tensor<64xf32, #ROW> -> tensor<64xf32, #ROW>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%t: tensor<64x8xf32, #ACC>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{result must be a 'row' fragment, but is a 'acc' fragment}}
  %m = cuir.reduce_rows max %t : tensor<64x8xf32, #ACC> -> tensor<64x8xf32, #ACC>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#ROW = #cuir.frag<row, mma_m16n8k16, warps = [2, 1]>
cuir.kernel @k(%t: tensor<64x8xf32, #ACC>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{result layout #cuir.frag<row, mma_m16n8k16, warps = [2, 1]> is not the row layout of #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>}}
  %m = cuir.reduce_rows max %t : tensor<64x8xf32, #ACC> -> tensor<64xf32, #ROW>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#ROW = #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%t: tensor<64x8xf32, #ACC>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{reduces 64 rows into a vector of 128}}
  %m = cuir.reduce_rows max %t : tensor<64x8xf32, #ACC> -> tensor<128xf32, #ROW>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#ROW = #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%t: tensor<64x8xf32, #ACC>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{changes the element type from 'f32' to 'f16'}}
  %m = cuir.reduce_rows sum %t : tensor<64x8xf32, #ACC> -> tensor<64xf16, #ROW>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%t: tensor<64x8xf32, #ACC>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{input must be a 'row' fragment, but is a 'acc' fragment}}
  %m = cuir.broadcast_rows %t : tensor<64x8xf32, #ACC> -> tensor<64x8xf32, #ACC>
}

// -----

#ROW = #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%t: tensor<64xf32, #ROW>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{result must be a 'acc' fragment, but is a 'row' fragment}}
  %m = cuir.broadcast_rows %t : tensor<64xf32, #ROW> -> tensor<64xf32, #ROW>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#ROW = #cuir.frag<row, mma_m16n8k16, warps = [2, 1]>
cuir.kernel @k(%t: tensor<64xf32, #ROW>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{input layout #cuir.frag<row, mma_m16n8k16, warps = [2, 1]> is not the row layout of #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>}}
  %m = cuir.broadcast_rows %t : tensor<64xf32, #ROW> -> tensor<64x8xf32, #ACC>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#ROW = #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%t: tensor<64xf32, #ROW>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{broadcasts 64 rows into a tile of 128}}
  %m = cuir.broadcast_rows %t : tensor<64xf32, #ROW> -> tensor<128x8xf32, #ACC>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#ROW = #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%t: tensor<64xf32, #ROW>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{changes the element type from 'f32' to 'f16'}}
  %m = cuir.broadcast_rows %t : tensor<64xf32, #ROW> -> tensor<64x8xf16, #ACC>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#A = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%t: tensor<64x16xbf16, #ACC>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{changes only the layout; 'tensor<64x16xbf16, #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>>' and 'tensor<64x32xbf16, #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>>' differ in shape or element type}}
  %m = cuir.convert_layout %t : tensor<64x16xbf16, #ACC> -> tensor<64x32xbf16, #A>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#A = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%t: tensor<64x16xbf16, #ACC>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{with 'transpose' gives the transpose of a 2-D tile; 'tensor<64x16xbf16, #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>>' is not the transpose of 'tensor<64x16xbf16, #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>>'}}
  %m = cuir.convert_layout %t transpose : tensor<64x16xbf16, #ACC> -> tensor<64x16xbf16, #A>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#A = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%t: tensor<64x64xbf16, #ACC>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{with 'transpose' gives the transpose of a 2-D tile; 'tensor<64x64xf32, #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>>' is not the transpose of 'tensor<64x64xbf16, #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>>'}}
  %m = cuir.convert_layout %t transpose : tensor<64x64xbf16, #ACC> -> tensor<64x64xf32, #A>
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{needs at least one input tile}}
  %e = cuir.elementwise () at [%n, %n, %n, %n] : () -> tensor<64x8xf32, #ACC> {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %z = arith.constant 0.0 : f32
    cuir.yield %z : f32
  }
}

// -----

#ROW = #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%t: tensor<64xf32, #ROW>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{works on 2-D (query x key) tiles, got 'tensor<64xf32, #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>>'}}
  %e = cuir.elementwise (%t) at [%n, %n, %n, %n] : (tensor<64xf32, #ROW>) -> tensor<64xf32, #ROW> {
  ^bb0(%x: f32, %b: index, %h: index, %q: index, %k: index):
    cuir.yield %x : f32
  }
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%t: tensor<64x8xf32, #ACC>, %u: tensor<64x16xf32, #ACC>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{inputs must share one shape and layout}}
  %e = cuir.elementwise (%t, %u) at [%n, %n, %n, %n] : (tensor<64x8xf32, #ACC>, tensor<64x16xf32, #ACC>) -> tensor<64x8xf32, #ACC> {
  ^bb0(%x: f32, %y: f32, %b: index, %h: index, %q: index, %k: index):
    cuir.yield %x : f32
  }
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%t: tensor<64x8xf32, #ACC>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{result 'tensor<64x16xf32, #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>>' must have the inputs' shape and layout}}
  %e = cuir.elementwise (%t) at [%n, %n, %n, %n] : (tensor<64x8xf32, #ACC>) -> tensor<64x16xf32, #ACC> {
  ^bb0(%x: f32, %b: index, %h: index, %q: index, %k: index):
    cuir.yield %x : f32
  }
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%t: tensor<64x8xf32, #ACC>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{result 'tensor<64x16xf32, #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>>' must have the inputs' shape and layout}}
  %e:2 = cuir.elementwise (%t) at [%n, %n, %n, %n] : (tensor<64x8xf32, #ACC>) -> (tensor<64x8xf32, #ACC>, tensor<64x16xf32, #ACC>) {
  ^bb0(%x: f32, %b: index, %h: index, %q: index, %k: index):
    cuir.yield %x, %x : f32, f32
  }
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%t: tensor<64x8xf32, #ACC>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %e:2 = cuir.elementwise (%t) at [%n, %n, %n, %n] : (tensor<64x8xf32, #ACC>) -> (tensor<64x8xf32, #ACC>, tensor<64x8xf32, #ACC>) {
  ^bb0(%x: f32, %b: index, %h: index, %q: index, %k: index):
    // expected-error @below {{must yield one element per result tile of the cuir.elementwise: 'f32', 'f32'}}
    cuir.yield %x : f32
  }
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%t: tensor<64x8xf32, #ACC>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{needs at least one result tile}}
  cuir.elementwise (%t) at [%n, %n, %n, %n] : (tensor<64x8xf32, #ACC>) -> () {
  ^bb0(%x: f32, %b: index, %h: index, %q: index, %k: index):
    cuir.yield
  }
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%t: tensor<64x8xf32, #ACC>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{body must take 1 element(s) and the coordinates (b, h, q_idx, kv_idx), i.e. 5 arguments, got 2}}
  %e = cuir.elementwise (%t) at [%n, %n, %n, %n] : (tensor<64x8xf32, #ACC>) -> tensor<64x8xf32, #ACC> {
  ^bb0(%x: f32, %b: index):
    cuir.yield %x : f32
  }
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%t: tensor<64x8xf32, #ACC>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{body argument #0 must be 'f32', the element type of input #0}}
  %e = cuir.elementwise (%t) at [%n, %n, %n, %n] : (tensor<64x8xf32, #ACC>) -> tensor<64x8xf32, #ACC> {
  ^bb0(%x: f16, %b: index, %h: index, %q: index, %k: index):
    %y = arith.extf %x : f16 to f32
    cuir.yield %y : f32
  }
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%t: tensor<64x8xf32, #ACC>, %n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{coordinate argument #4 must be index}}
  %e = cuir.elementwise (%t) at [%n, %n, %n, %n] : (tensor<64x8xf32, #ACC>) -> tensor<64x8xf32, #ACC> {
  ^bb0(%x: f32, %b: index, %h: index, %q: index, %k: i32):
    cuir.yield %x : f32
  }
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{named barriers count whole warps; 100 threads is not a multiple of 32}}
  cuir.barrier.named %n threads 100
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  // expected-error @below {{waits for 256 threads but the block has only 128}}
  cuir.barrier.named %n threads 256
}

// -----

cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  // expected-error @below {{named barrier id must be in [1, 15] (0 is the block barrier), got 0}}
  cuir.barrier.named %c0 threads 128
}

// -----

#WACC = #cuir.frag<acc, wgmma_m64nNk16, warps = [1, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_90a" {
  %c = arith.constant dense<0.0> : tensor<64x8xf32, #WACC>
  // expected-error @below {{'cuir.gemm_wait' op needs one pending count: a constant or an index value}}
  %e = "cuir.gemm_wait"(%c, %n) <{pending = 1 : i64}> : (tensor<64x8xf32, #WACC>, index) -> tensor<64x8xf32, #WACC>
  cuir.return
}

// -----

// acc_transposed: the registers hold the [64 x 128] transpose of a [128 x 64]
// result, which one warpgroup's wgmma accumulator (64 rows) cannot hold.
#WACC = #cuir.frag<acc, wgmma_m64nNk16, warps = [2, 1]>
cuir.kernel @k(%n: index) grid (n) -> (n) threads 256 arch "sm_90a" {
  %a = cuir.alloc : memref<128x16xbf16, #cuir.mem<shared>>
  %b = cuir.alloc : memref<64x16xbf16, #cuir.mem<shared>>
  %c = arith.constant dense<0.0> : tensor<128x64xf32, #WACC>
  // expected-error @below {{acc_transposed: }}
  %d = cuir.gemm_async %a, %b transpose_b, %c acc_transposed : memref<128x16xbf16, #cuir.mem<shared>>, memref<64x16xbf16, #cuir.mem<shared>>, tensor<128x64xf32, #WACC>
  %e = cuir.gemm_wait %d pending 0 : tensor<128x64xf32, #WACC>
}
