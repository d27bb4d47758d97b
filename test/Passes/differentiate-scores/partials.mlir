// RUN: cuir-opt %s -split-input-file --cuir-differentiate-scores | FileCheck %s
//
// Partial derivatives with respect to the elements a score_mod loads from
// float parameters, one grad_yield entry per load.

// ALiBi: s + slope[h] * (kv - q): d/ds = 1, d/dslope = kv - q, the forward
// distance reused.
// CHECK-LABEL: cuir.variant @alibi
// CHECK: cuir.score_grad {
// CHECK-NEXT: ^bb0(%[[S:[^:]*]]: f32, %{{[^:]*}}: index, %[[H:[^:]*]]: index,
// CHECK-NEXT: %[[SLOPE:.*]] = memref.load %{{.*}}[%[[H]]]
// CHECK: %[[F:.*]] = arith.sitofp
// CHECK-NEXT: arith.mulf %[[SLOPE]], %[[F]]
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[S]],
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.0
// CHECK-NEXT: cuir.grad_yield %[[R]], %[[ONE]] partials(%[[SLOPE]] : f32) = (%[[F]] : f32)
cuir.variant @alibi(%slopes: memref<?xf32, #cuir.mem<global>> {cuir.param = "slopes", cuir.extent = "heads"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %slope = memref.load %slopes[%h] : memref<?xf32, #cuir.mem<global>>
    %d = arith.subi %kv, %q : index
    %i = arith.index_cast %d : index to i32
    %f = arith.sitofp %i : i32 to f32
    %bias = arith.mulf %slope, %f : f32
    %r = arith.addf %s, %bias : f32
    cuir.yield %r : f32
  }
}

// -----

// An f16 bias table through extf: the partial is 1, with respect to the f16
// element; the int32 table is no parameter to differentiate.
// CHECK-LABEL: cuir.variant @table
// CHECK: cuir.score_grad {
// CHECK: memref.load %{{.*}} : memref<16xi32
// CHECK: %[[E:.*]] = memref.load %{{.*}} : memref<4x8xf16
// CHECK: %[[R:.*]] = arith.addf
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.0{{.*}} : f32
// CHECK-NEXT: cuir.grad_yield %[[R]], %[[ONE]] partials(%[[E]] : f16) = (%[[ONE]] : f32)
cuir.variant @table(%bias: memref<4x8xf16, #cuir.mem<global>> {cuir.param = "bias"}, %ids: memref<16xi32, #cuir.mem<global>> {cuir.param = "ids"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %id = memref.load %ids[%kv] : memref<16xi32, #cuir.mem<global>>
    %j = arith.index_cast %id : i32 to index
    %e = memref.load %bias[%h, %j] : memref<4x8xf16, #cuir.mem<global>>
    %x = arith.extf %e : f16 to f32
    %r = arith.addf %s, %x : f32
    cuir.yield %r : f32
  }
}

// -----

// Two loads of one table, a product: each partial is the other element times
// the score; the score's derivative is their product.
// CHECK-LABEL: cuir.variant @two
// CHECK: cuir.score_grad {
// CHECK-NEXT: ^bb0(%[[S:[^:]*]]: f32,
// CHECK-NEXT: %[[A:.*]] = memref.load
// CHECK-NEXT: %[[C:.*]] = memref.load
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[A]], %[[C]]
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[P]], %[[S]]
// CHECK-NEXT: %[[DA:.*]] = arith.mulf %[[S]], %[[C]]
// CHECK-NEXT: %[[DC:.*]] = arith.mulf %[[S]], %[[A]]
// CHECK-NEXT: cuir.grad_yield %[[R]], %[[P]] partials(%[[A]], %[[C]] : f32, f32) = (%[[DA]], %[[DC]] : f32, f32)
cuir.variant @two(%w: memref<16xf32, #cuir.mem<global>> {cuir.param = "w"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %a = memref.load %w[%q] : memref<16xf32, #cuir.mem<global>>
    %c = memref.load %w[%kv] : memref<16xf32, #cuir.mem<global>>
    %p = arith.mulf %a, %c : f32
    %r = arith.mulf %p, %s : f32
    cuir.yield %r : f32
  }
}

// -----

// An element that only decides a comparison: its partial is 0.
// CHECK-LABEL: cuir.variant @threshold
// CHECK: cuir.score_grad {
// CHECK: %[[T:.*]] = memref.load
// CHECK-NEXT: %[[BIG:.*]] = arith.cmpf ogt, %{{.*}}, %[[T]]
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[R:.*]] = arith.select %[[BIG]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.0
// CHECK-NEXT: %[[D:.*]] = arith.select %[[BIG]], %[[ONE]], %[[ZERO]]
// CHECK-NEXT: cuir.grad_yield %[[R]], %[[D]] partials(%[[T]] : f32) = (%[[ZERO]] : f32)
cuir.variant @threshold(%t: memref<4xf32, #cuir.mem<global>> {cuir.param = "t"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %th = memref.load %t[%h] : memref<4xf32, #cuir.mem<global>>
    %big = arith.cmpf ogt, %s, %th : f32
    %zero = arith.constant 0.0 : f32
    %r = arith.select %big, %s, %zero : f32
    cuir.yield %r : f32
  }
}
