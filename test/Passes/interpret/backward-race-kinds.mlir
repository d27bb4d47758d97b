// RUN: cuir-opt %s -split-input-file --cuir-interpret="Nq=64 Nkv=64 d=16" -verify-diagnostics
//
// The cross-block race check of a backward pass, per kind of access: two
// blocks of one launch touch the same workspace elements. Atomic adds of
// several blocks commute; a plain write and an atomic add, or a read of
// what another block added to, do not.

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
!seq = memref<?x?x?x16xbf16, #cuir.mem<global>>
!ws  = memref<64x16xf32, #cuir.mem<global>>
cuir.kernel @write_then_add(
    %w: !ws {cuir.arg = "workspace:acc",
             cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (64, d)>},
    %dq: !seq {cuir.arg = "dq"}, %dk: !seq {cuir.arg = "dk"},
    %dv: !seq {cuir.arg = "dv"})
    grid () -> (2) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %t = arith.constant dense<1.0> : tensor<64x16xf32, #ACC>
  %x = cuir.block_id x
  %first = arith.cmpi eq, %x, %c0 : index
  scf.if %first {
    // expected-note @below {{the other block's access is here}}
    cuir.store %t -> %w[%c0, %c0] : tensor<64x16xf32, #ACC> -> !ws
  } else {
    // expected-error @below {{adds to global memory that thread block (0, 0, 0) wrote in the same launch: the blocks of a launch run in no fixed order, so this is a race}}
    cuir.atomic_add %t -> %w[%c0, %c0] : tensor<64x16xf32, #ACC> -> !ws
  }
  cuir.return
}

// -----

#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
!seq = memref<?x?x?x16xbf16, #cuir.mem<global>>
!ws  = memref<64x16xf32, #cuir.mem<global>>
cuir.kernel @add_then_read(
    %w: !ws {cuir.arg = "workspace:acc",
             cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (64, d)>},
    %dq: !seq {cuir.arg = "dq"}, %dk: !seq {cuir.arg = "dk"},
    %dv: !seq {cuir.arg = "dv"})
    grid () -> (2) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %t = arith.constant dense<1.0> : tensor<64x16xf32, #ACC>
  // Both blocks add: no race.
  // expected-note @below {{the other block's access is here}}
  cuir.atomic_add %t -> %w[%c0, %c0] : tensor<64x16xf32, #ACC> -> !ws
  %x = cuir.block_id x
  %second = arith.cmpi ne, %x, %c0 : index
  scf.if %second {
    // expected-error @below {{reads global memory that several thread blocks added to in the same launch}}
    %v = memref.load %w[%c0, %c0] : !ws
  }
  cuir.return
}
