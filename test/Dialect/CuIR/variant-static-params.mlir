// RUN: cuir-opt %s | cuir-opt | FileCheck %s
//
// Captured tensors of any rank and the tracer's element types, with and
// without a dense default, print and parse back unchanged.

// CHECK-LABEL: cuir.variant @captured
// CHECK-SAME: %{{.*}}: memref<2x3xf32, #{{[a-z.<>]+}}> {cuir.default = dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>, cuir.param = "bias"}
// CHECK-SAME: %{{.*}}: memref<4xi32, #{{[a-z.<>]+}}> {cuir.default = dense<[0, 0, 1, -1]> : tensor<4xi32>, cuir.param = "doc"}
// CHECK-SAME: %{{.*}}: memref<2x2x2xi1, #{{[a-z.<>]+}}> {cuir.param = "keep"}
// CHECK-SAME: %{{.*}}: memref<3xi64, #{{[a-z.<>]+}}> {cuir.default = dense<[1, 4294967296, -5]> : tensor<3xi64>, cuir.param = "big"}
// CHECK-SAME: %{{.*}}: memref<2xf16, #{{[a-z.<>]+}}> {cuir.param = "half"}
// CHECK-SAME: %{{.*}}: memref<2xbf16, #{{[a-z.<>]+}}> {cuir.param = "brain"}
// CHECK-SAME: %{{.*}}: i64 {cuir.param = "n"}
// CHECK: memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<2x3xf32, #{{[a-z.<>]+}}>
cuir.variant @captured(
    %bias: memref<2x3xf32, #cuir.mem<global>> {cuir.param = "bias", cuir.default = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>},
    %doc: memref<4xi32, #cuir.mem<global>> {cuir.param = "doc", cuir.default = dense<[0, 0, 1, -1]> : tensor<4xi32>},
    %keep: memref<2x2x2xi1, #cuir.mem<global>> {cuir.param = "keep"},
    %big: memref<3xi64, #cuir.mem<global>> {cuir.param = "big", cuir.default = dense<[1, 4294967296, -5]> : tensor<3xi64>},
    %half: memref<2xf16, #cuir.mem<global>> {cuir.param = "half"},
    %brain: memref<2xbf16, #cuir.mem<global>> {cuir.param = "brain"},
    %n: i64 {cuir.param = "n"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %k: index):
    %x = memref.load %bias[%h, %k] : memref<2x3xf32, #cuir.mem<global>>
    %r = arith.addf %s, %x : f32
    cuir.yield %r : f32
  }
}
