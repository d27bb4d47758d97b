// RUN: cuir-opt %s -mlir-print-local-scope | FileCheck %s
// RUN: cuir-opt %s | cuir-opt -mlir-print-local-scope | FileCheck %s
// RUN: cuir-opt %s --mlir-print-op-generic | cuir-opt -mlir-print-local-scope | FileCheck %s
//
// The attributes transforms record their changes with (cuir.change on an
// inserted op or kernel argument, cuir.removed on the kernel) and the
// normaliser, printed and parsed back.

// CHECK-LABEL: cuir.kernel @changed(
// CHECK-SAME: %{{.*}}: f32 {cuir.arg = "param:bias", cuir.change = #cuir.change<parameter>}
// CHECK-SAME: attributes {cuir.normalizer = #cuir.normalizer<sigmoid>, cuir.removed = [#cuir.removed<normalizer, "cuir.store", loc("k.cu":3:5)>, #cuir.removed<split, "arith.constant", loc("k.cu":4:7 to :12)>]}
cuir.kernel @changed(%lse: memref<?xf32, #cuir.mem<global>>, %n: index,
                     %bias: f32 {cuir.arg = "param:bias",
                                 cuir.change = #cuir.change<parameter>})
    grid (n) -> (n ceildiv 128) threads 128 arch "sm_80"
    attributes {cuir.normalizer = #cuir.normalizer<sigmoid>,
                cuir.removed = [
                  #cuir.removed<normalizer, "cuir.store", loc("k.cu":3:5)>,
                  #cuir.removed<split, "arith.constant", loc("k.cu":4:7 to 4:12)>]} {
  // CHECK: arith.constant {cuir.change = #cuir.change<split>} 64 : index loc("k.cu":5:9)
  %c = arith.constant {cuir.change = #cuir.change<split>} 64 : index loc("k.cu":5:9)
  // CHECK: arith.constant {cuir.change = #cuir.change<scores>} 1.000000e+00 : f32
  %one = arith.constant {cuir.change = #cuir.change<scores>} 1.0 : f32
  // CHECK: arith.constant {cuir.change = #cuir.change<normalizer>} 0 : index
  %z = arith.constant {cuir.change = #cuir.change<normalizer>} 0 : index
  // CHECK: arith.constant {cuir.change = #cuir.change<constant>} false
  %f = arith.constant {cuir.change = #cuir.change<constant>} false
}

// CHECK-LABEL: cuir.kernel @softmax(
// CHECK-SAME: attributes {cuir.normalizer = #cuir.normalizer<softmax>}
cuir.kernel @softmax(%n: index) grid (n) -> (n) threads 128 arch "sm_80"
    attributes {cuir.normalizer = #cuir.normalizer<softmax>} {
}
