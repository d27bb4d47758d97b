// RUN: cuir-opt %s -split-input-file -verify-diagnostics
//
// One case per verifier branch of cuir.atomic_add, workspaces and
// cuir.launch_sequence.

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%g: memref<64x16xf32, #cuir.mem<global>>) grid () -> (1) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %t = arith.constant dense<1.0> : tensor<64x16xf16, #ACC>
  // expected-error @below {{adds f32 elements into an f32 buffer (red.global.add.f32), not 'f16' into 'f32'}}
  "cuir.atomic_add"(%t, %g, %c0, %c0) : (tensor<64x16xf16, #ACC>, memref<64x16xf32, #cuir.mem<global>>, index, index) -> ()
  cuir.return
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k() grid () -> (1) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %s = cuir.alloc : memref<64x16xf32, #cuir.mem<shared>>
  %t = arith.constant dense<1.0> : tensor<64x16xf32, #ACC>
  // expected-error @below {{destination must be in global memory, but is in shared memory}}
  cuir.atomic_add %t -> %s[%c0, %c0] : tensor<64x16xf32, #ACC> -> memref<64x16xf32, #cuir.mem<shared>>
  cuir.return
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%g: memref<64x16xf32, #cuir.mem<global>>) grid () -> (1) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %t = arith.constant dense<1.0> : tensor<64x16xf32, #ACC>
  // expected-error @below {{needs 2 indices to place the tile, got 1}}
  cuir.atomic_add %t -> %g[%c0] : tensor<64x16xf32, #ACC> -> memref<64x16xf32, #cuir.mem<global>>
  cuir.return
}

// -----

cuir.kernel @k(%g: memref<64x16xf32, #cuir.mem<global>>) grid () -> (1) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %t = arith.constant dense<1.0> : tensor<64x16xf32>
  // expected-error @below {{added value must be a register tile with a #cuir.frag layout, but has type 'tensor<64x16xf32>'}}
  cuir.atomic_add %t -> %g[%c0, %c0] : tensor<64x16xf32> -> memref<64x16xf32, #cuir.mem<global>>
  cuir.return
}

// -----

#ROW = #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%g: memref<64x16xf32, #cuir.mem<global>>) grid () -> (1) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %t = arith.constant dense<1.0> : tensor<64xf32, #ROW>
  // expected-error @below {{adds a rank-1 tile into a rank-2 buffer}}
  cuir.atomic_add %t -> %g[%c0] : tensor<64xf32, #ROW> -> memref<64x16xf32, #cuir.mem<global>>
  cuir.return
}

// -----

// expected-error @below {{workspace 'workspace:acc' needs its shape: cuir.shape = affine_map<(B, Hq, Hkv, Nq, Nkv, d) -> (...)>}}
cuir.kernel @k(%w: memref<?xf32, #cuir.mem<global>> {cuir.arg = "workspace:acc"}) grid () -> (1) threads 128 arch "sm_80" {
}

// -----

// expected-error @below {{workspace 'workspace:acc' has a cuir.shape of 2 dimension(s) and 0 symbol(s); it takes the 6 sizes (B, Hq, Hkv, Nq, Nkv, d) and no symbols}}
cuir.kernel @k(%w: memref<?xf32, #cuir.mem<global>> {cuir.arg = "workspace:acc", cuir.shape = affine_map<(b, n) -> (b * 2 + n)>}) grid () -> (1) threads 128 arch "sm_80" {
}

// -----

// expected-error @below {{workspace 'workspace:acc' has a cuir.shape of 2 extent(s) for a rank-1 memref}}
cuir.kernel @k(%w: memref<?xf32, #cuir.mem<global>> {cuir.arg = "workspace:acc", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, nq)>}) grid () -> (1) threads 128 arch "sm_80" {
}

// -----

// expected-error @below {{workspace 'workspace:' needs a name after 'workspace:'}}
cuir.kernel @k(%w: memref<?xf32, #cuir.mem<global>> {cuir.arg = "workspace:", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b)>}) grid () -> (1) threads 128 arch "sm_80" {
}

// -----

// expected-error @below {{workspace 'workspace:acc' must be a row-major memref, not 'memref<?xf32, strided<[2]>, #cuir.mem<global>>'}}
cuir.kernel @k(%w: memref<?xf32, strided<[2]>, #cuir.mem<global>> {cuir.arg = "workspace:acc", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b)>}) grid () -> (1) threads 128 arch "sm_80" {
}

// -----

// expected-error @below {{parameter #0 ('dq') has a cuir.shape, which only workspace:<name> buffers have}}
cuir.kernel @k(%w: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "dq", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, nq, hq, d)>}) grid () -> (1) threads 128 arch "sm_80" {
}

// -----

// expected-error @below {{names @nothing, which is not defined in the module}}
cuir.launch_sequence @bwd [@nothing]

// -----

cuir.block_mask @m() tiles 64 x 64 coords(%b, %h, %q, %kv) {
  %t = arith.constant true
  cuir.yield %t : i1
}
// expected-error @below {{names @m, which is not a cuir.kernel}}
cuir.launch_sequence @bwd [@m]

// -----

// expected-error @below {{is a backward pass but no kernel of it writes 'dv'}}
cuir.launch_sequence @bwd [@k]
cuir.kernel @k(%dq: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "dq"},
               %dk: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "dk"}) grid () -> (1) threads 128 arch "sm_80" {
}

// -----

// expected-error @below {{shares 'workspace:acc' between @a and @b, which declare it differently ('memref<?xf32, #cuir.mem<global>>' of shape affine_map<(d0, d1, d2, d3, d4, d5) -> (d0)> vs 'memref<?xf32, #cuir.mem<global>>' of shape affine_map<(d0, d1, d2, d3, d4, d5) -> (d1)>); kernels of a sequence must agree on a buffer's type and cuir.shape}}
cuir.launch_sequence @bwd [@a, @b]
cuir.kernel @a(%w: memref<?xf32, #cuir.mem<global>> {cuir.arg = "workspace:acc", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b)>},
               %dq: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "dq"},
               %dk: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "dk"},
               %dv: memref<?x?x?x16xbf16, #cuir.mem<global>> {cuir.arg = "dv"}) grid () -> (1) threads 128 arch "sm_80" {
}
cuir.kernel @b(%w: memref<?xf32, #cuir.mem<global>> {cuir.arg = "workspace:acc", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (hq)>}) grid () -> (1) threads 128 arch "sm_80" {
}

// -----

// expected-error @below {{'cuir.launch_sequence' op attribute 'kernels' failed to satisfy constraint}}
cuir.launch_sequence @bwd []
