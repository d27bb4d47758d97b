// RUN: cuir-opt %s --cuir-differentiate-scores --cuir-differentiate-scores | FileCheck %s
//
// A second run derives the cuir.score_grad again in place of the first; a
// variant without a score_mod gets none.

// CHECK-LABEL: cuir.variant @square
// CHECK: cuir.score_mod
// CHECK: cuir.score_grad
// CHECK-NOT: cuir.score_grad
// CHECK: cuir.variant @mask_only
// CHECK-NOT: cuir.score_grad
cuir.variant @square() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %r = arith.mulf %s, %s : f32
    cuir.yield %r : f32
  }
}

cuir.variant @mask_only() normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %kv: index):
    %v = arith.cmpi uge, %q, %kv : index
    cuir.yield %v : i1
  }
}
