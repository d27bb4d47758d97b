// RUN: cuir-opt %s -split-input-file -verify-diagnostics
//
// A variant parameter names a member of the kernel's params struct: an
// identifier that is not a C++ keyword.

// expected-error @below {{parameter name 'x;int y' is not an identifier ([A-Za-z_][A-Za-z0-9_]*, not a C++ keyword)}}
cuir.variant @semicolon(%x: f32 {cuir.param = "x;int y"}) normalizer softmax {
}

// -----

// expected-error @below {{parameter name 'class' is not an identifier}}
cuir.variant @keyword(%x: f32 {cuir.param = "class"}) normalizer softmax {
}

// -----

// expected-error @below {{parameter name '2nd' is not an identifier}}
cuir.variant @digit(%x: f32 {cuir.param = "2nd"}) normalizer softmax {
}

// -----

// expected-error @below {{parameter name 'a b' is not an identifier}}
cuir.variant @space(%x: f32 {cuir.param = "a b"}) normalizer softmax {
}

// -----

// expected-error @below {{parameter 'Nq' has the name of a size of the kernel, which it stands for: it must be an index, not 'memref<4xf32, #cuir.mem<global>>'}}
cuir.variant @size_name(%t: memref<4xf32, #cuir.mem<global>> {cuir.param = "Nq"}) normalizer softmax {
}

// -----

// An index parameter is a size: the mask analysis reads it in [0, 2^30).
// expected-error @below {{parameter 'shift' is an index, which only a size of the kernel (B, Hq, Hkv, Nq, Nkv) may be: declare it i32 or i64}}
cuir.variant @index_shift(%shift: index {cuir.param = "shift"}) normalizer softmax {
}
