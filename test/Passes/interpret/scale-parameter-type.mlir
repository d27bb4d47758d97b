// RUN: cuir-opt %s -split-input-file --cuir-interpret="Nq=64 Nkv=64 d=16" -verify-diagnostics
//
// A softmax scale bound to a parameter that cannot hold a float is an error,
// not a crash.

!o = memref<?x?x?x16xf32, #cuir.mem<global>>
// expected-error @below {{kernel parameter #1 ('softmax_scale') must be a float}}
cuir.kernel @index_scale(%O: !o {cuir.arg = "o"},
                         %s: index {cuir.arg = "softmax_scale"})
    grid (s) -> (1) threads 128 arch "sm_80" {
}

// -----

!o = memref<?x?x?x16xf32, #cuir.mem<global>>
// expected-error @below {{kernel parameter #1 ('softmax_scale_log2') must be a float}}
cuir.kernel @memref_scale(%O: !o {cuir.arg = "o"},
    %s: memref<4xf32, #cuir.mem<global>> {cuir.arg = "softmax_scale_log2"})
    grid () -> (1) threads 128 arch "sm_80" {
}
