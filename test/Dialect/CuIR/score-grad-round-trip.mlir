// RUN: cuir-opt %s | FileCheck %s
// RUN: cuir-opt %s | cuir-opt | FileCheck %s
// RUN: cuir-opt %s --mlir-print-op-generic | cuir-opt | FileCheck %s
// RUN: cuir-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
//
// cuir.score_grad and its cuir.grad_yield: printed and parsed back.

#G = #cuir.mem<global>

// ALiBi with its derivatives: d/ds = 1, d/dslope = the distance.
// CHECK-LABEL: cuir.variant @alibi(
// CHECK: cuir.score_mod {
// CHECK: cuir.score_grad {
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %[[H:.*]]: index, %{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT: %[[SLOPE:.*]] = memref.load %{{.*}}[%[[H]]]
// CHECK: %[[R:.*]] = arith.addf %[[S]], %{{.*}} : f32
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: cuir.grad_yield %[[R]], %[[ONE]] partials(%[[SLOPE]] : f32) = (%[[DIST:.*]] : f32)
// GENERIC: "cuir.score_grad"() ({
// GENERIC: "cuir.grad_yield"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> : (f32, f32, f32, f32) -> ()
cuir.variant @alibi(%slopes: memref<?xf32, #G> {cuir.param = "slopes", cuir.extent = "heads"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %slope = memref.load %slopes[%h] : memref<?xf32, #G>
    %d = arith.subi %kv, %q : index
    %i = arith.index_cast %d : index to i32
    %f = arith.sitofp %i : i32 to f32
    %bias = arith.mulf %slope, %f : f32
    %r = arith.addf %s, %bias : f32
    cuir.yield %r : f32
  }
  cuir.score_grad {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %slope = memref.load %slopes[%h] : memref<?xf32, #G>
    %d = arith.subi %kv, %q : index
    %i = arith.index_cast %d : index to i32
    %f = arith.sitofp %i : i32 to f32
    %bias = arith.mulf %slope, %f : f32
    %r = arith.addf %s, %bias : f32
    %one = arith.constant 1.0 : f32
    cuir.grad_yield %r, %one partials(%slope : f32) = (%f : f32)
  }
}

// Without parameters the partials are left out.
// CHECK-LABEL: cuir.variant @square(
// CHECK: cuir.grad_yield %{{.*}}, %{{.*}}{{$}}
// GENERIC: "cuir.grad_yield"(%{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 0, 0>}> : (f32, f32) -> ()
cuir.variant @square() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %r = arith.mulf %s, %s : f32
    cuir.yield %r : f32
  }
  cuir.score_grad {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %r = arith.mulf %s, %s : f32
    %d = arith.addf %s, %s : f32
    cuir.grad_yield %r, %d
  }
}
