// RUN: cuir-opt %s -split-input-file --cuir-interpret="Nq=64 Nkv=64 d=16" -verify-diagnostics
//
// A kernel whose own data would exceed the interpreter's memory limit, or
// whose sizes overflow, is refused before anything is allocated or run, at
// the op that needs it.

!o = memref<?x?x?x16xbf16, #cuir.mem<global>>
cuir.kernel @huge_shared(%O: !o {cuir.arg = "o"}, %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 128 arch "sm_80" {
  %a = cuir.alloc : memref<64x16xbf16, #cuir.mem<shared>>
  // expected-error @below {{the block's shared memory (a value of type memref<1000000000000xf32, #cuir.mem<shared>> and the allocations before it) needs 4000000004096 bytes, more than the}}
  %b = cuir.alloc : memref<1000000000000xf32, #cuir.mem<shared>>
  cuir.return
}

// -----

// A tile whose element count overflows 64 bits.
!o = memref<?x?x?x16xbf16, #cuir.mem<global>>
cuir.kernel @overflowing_tile(%O: !o {cuir.arg = "o"}, %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 128 arch "sm_80" {
  // expected-error @below {{a value of type tensor<4611686018427387904x4xf32> needs more than 2^63 bytes (its size overflows)}}
  %t = arith.constant dense<0.0> : tensor<4611686018427387904x4xf32>
  cuir.return
}

// -----

// A tile of 40 GB.
!o = memref<?x?x?x16xbf16, #cuir.mem<global>>
cuir.kernel @huge_tile(%O: !o {cuir.arg = "o"}, %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 128 arch "sm_80" {
  // expected-error @below {{a value of type tensor<100000x100000xf32> needs 40000000000 bytes, more than the}}
  %t = arith.constant dense<0.0> : tensor<100000x100000xf32>
  cuir.return
}

// -----

!o = memref<?x?x?x16xbf16, #cuir.mem<global>>
cuir.kernel @huge_barriers(%O: !o {cuir.arg = "o"}, %n: index {cuir.arg = "Nq"})
    grid (n) -> (1) threads 128 arch "sm_80" {
  // expected-error @below {{the barrier array needs}}
  %b = cuir.barrier.init arrivals 1 : !cuir.mbarrier<1000000000000>
  cuir.return
}

// -----

// A grid whose size overflows, or is too large to list.
!o = memref<?x?x?x16xbf16, #cuir.mem<global>>
// expected-error @below {{the grid's dimension 0 (d0 * 4611686018427387904) is not computable for B=1 Hq=1 Hkv=1 Nq=64 Nkv=64 d=16: it overflows, reads a missing index parameter or divides by a non-positive number}}
cuir.kernel @overflowing_grid(%O: !o {cuir.arg = "o"}, %n: index {cuir.arg = "Nq"})
    grid (n) -> (n * 4611686018427387904) threads 128 arch "sm_80" {
  cuir.return
}

// -----

!o = memref<?x?x?x16xbf16, #cuir.mem<global>>
// expected-error @below {{the list of the grid's blocks needs 8589934592 bytes, more than the}}
cuir.kernel @huge_grid(%O: !o {cuir.arg = "o"}, %n: index {cuir.arg = "Nq"})
    grid (n) -> (n * 16777216) threads 128 arch "sm_80" {
  cuir.return
}

// -----

!o = memref<?x?x?x16xbf16, #cuir.mem<global>>
// expected-error @below {{the grid's dimension 0 (d0 - 100) is negative}}
cuir.kernel @negative_grid(%O: !o {cuir.arg = "o"}, %n: index {cuir.arg = "Nq"})
    grid (n) -> (n - 100) threads 128 arch "sm_80" {
  cuir.return
}
