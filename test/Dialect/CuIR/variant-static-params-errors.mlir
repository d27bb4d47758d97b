// RUN: cuir-opt %s -split-input-file -verify-diagnostics
//
// Captured tensors (variant parameters of static shape): one case per
// verifier branch.

// expected-error @below {{array parameter 't' must have the identity (row-major, contiguous) layout}}
cuir.variant @strided(%t: memref<4x8xf32, strided<[1, 4]>, #cuir.mem<global>> {cuir.param = "t"}) normalizer softmax {
}

// -----

// expected-error @below {{array parameter 't' has element type 'f64'; captured tensors are i1, i32, i64, f16, bf16 or f32}}
cuir.variant @f64(%t: memref<4xf64, #cuir.mem<global>> {cuir.param = "t"}) normalizer softmax {
}

// -----

// expected-error @below {{array parameter 't' is rank 0; a 0-d value is a constant, not a parameter}}
cuir.variant @rank0(%t: memref<f32, #cuir.mem<global>> {cuir.param = "t"}) normalizer softmax {
}

// -----

// expected-error @below {{array parameter 't' has no elements}}
cuir.variant @empty(%t: memref<0x4xf32, #cuir.mem<global>> {cuir.param = "t"}) normalizer softmax {
}

// -----

// expected-error @below {{array parameter 't' must be in #cuir.mem<global>}}
cuir.variant @space(%t: memref<4xi32> {cuir.param = "t"}) normalizer softmax {
}

// -----

// expected-error @below {{array parameter 't' has a static shape; cuir.extent is only for dynamic 1-D parameters}}
cuir.variant @extent(%t: memref<4xi32, #cuir.mem<global>> {cuir.param = "t", cuir.extent = "batch"}) normalizer softmax {
}

// -----

// expected-error @below {{array parameter 't' needs a cuir.default of type 'tensor<2x2xf32>' (dense<...>), not "1,2,3,4"}}
cuir.variant @string_default(%t: memref<2x2xf32, #cuir.mem<global>> {cuir.param = "t", cuir.default = "1,2,3,4"}) normalizer softmax {
}

// -----

// expected-error @below {{array parameter 't' has a cuir.default of type 'tensor<4xf32>'; its type is 'memref<2x2xf32, #cuir.mem<global>>', so the default must be 'tensor<2x2xf32>'}}
cuir.variant @shape_default(%t: memref<2x2xf32, #cuir.mem<global>> {cuir.param = "t", cuir.default = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>}) normalizer softmax {
}

// -----

// expected-error @below {{array parameter 't' has a cuir.default of type 'tensor<2xi64>'; its type is 'memref<2xi32, #cuir.mem<global>>', so the default must be 'tensor<2xi32>'}}
cuir.variant @type_default(%t: memref<2xi32, #cuir.mem<global>> {cuir.param = "t", cuir.default = dense<[1, 2]> : tensor<2xi64>}) normalizer softmax {
}

// -----

// expected-error @below {{array parameter 't' of dynamic shape must be one-dimensional}}
cuir.variant @dynamic2d(%t: memref<?x?xf32, #cuir.mem<global>> {cuir.param = "t"}) normalizer softmax {
}

// -----

// expected-error @below {{array parameter 't' needs cuir.extent = "batch", "heads" or "batch*kv" (or a static shape)}}
cuir.variant @no_extent(%t: memref<?xf32, #cuir.mem<global>> {cuir.param = "t"}) normalizer softmax {
}

// -----

// expected-error @below {{parameter 'x' must be f32, i32, i64, index or a memref, not 'f16'}}
cuir.variant @scalar(%x: f16 {cuir.param = "x"}) normalizer softmax {
}
