// RUN: cuir-opt %s -split-input-file --cuir-interpret="Nq=64 Nkv=64 d=16 max-memory=1" -verify-diagnostics
//
// A workspace's cuir.shape is evaluated for the problem with the grid's
// checks, and its memory counts against max-memory, before any block runs.

!seq = memref<?x?x?x16xbf16, #cuir.mem<global>>
// 64 x 512 x 64 elements, 48 bytes each (the buffer, its written marks and
// block records, the reference's values).
// expected-error @below {{buffer 'workspace:big' needs 100663296 bytes, more than the 1048576 bytes left of the interpreter's memory limit}}
cuir.kernel @too_big(
    %w: memref<?x?x?xf32, #cuir.mem<global>> {cuir.arg = "workspace:big",
        cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (nq, nkv * 8, d * 4)>},
    %dq: !seq {cuir.arg = "dq"}, %dk: !seq {cuir.arg = "dk"},
    %dv: !seq {cuir.arg = "dv"})
    grid () -> (1) threads 128 arch "sm_80" {
}

// -----

!seq = memref<?x?x?x16xbf16, #cuir.mem<global>>
// expected-error @below {{workspace 'workspace:huge': extent 0 of its cuir.shape is not computable (it overflows) for B=1 Hq=1 Hkv=1 Nq=64 Nkv=64 d=16}}
cuir.kernel @overflows(
    %w: memref<?xf32, #cuir.mem<global>> {cuir.arg = "workspace:huge",
        cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (nq * 4611686018427387904)>},
    %dq: !seq {cuir.arg = "dq"}, %dk: !seq {cuir.arg = "dk"},
    %dv: !seq {cuir.arg = "dv"})
    grid () -> (1) threads 128 arch "sm_80" {
}
