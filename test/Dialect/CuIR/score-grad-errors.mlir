// RUN: cuir-opt %s -split-input-file -verify-diagnostics
//
// cuir.score_grad and cuir.grad_yield: one case per verifier branch.


// expected-error @below {{has a cuir.score_grad but no cuir.score_mod for it to differentiate}}
cuir.variant @alone() normalizer softmax {
  cuir.score_grad {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    cuir.grad_yield %s, %s
  }
}

// -----

// expected-error @below {{has at most one cuir.score_mod, one cuir.mask_mod and one cuir.score_grad}}
cuir.variant @twice() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    cuir.yield %s : f32
  }
  cuir.score_grad {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    cuir.grad_yield %s, %s
  }
  cuir.score_grad {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    cuir.grad_yield %s, %s
  }
}

// -----

cuir.variant @args() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    cuir.yield %s : f32
  }
  // expected-error @below {{body must take (score: f32, b, h, q_idx, kv_idx: index), 5 arguments, got 4}}
  cuir.score_grad {
  ^bb0(%b: index, %h: index, %q: index, %kv: index):
    %c = arith.constant 0.0 : f32
    cuir.grad_yield %c, %c
  }
}

// -----

cuir.variant @terminator() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    cuir.yield %s : f32
  }
  // expected-error @below {{body must end in a cuir.grad_yield}}
  cuir.score_grad {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %c = arith.constant 0.0 : f32
  }
}

// -----

cuir.variant @unlisted(%t: memref<4xf32, #cuir.mem<global>> {cuir.param = "t"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %e = memref.load %t[%h] : memref<4xf32, #cuir.mem<global>>
    %r = arith.addf %s, %e : f32
    cuir.yield %r : f32
  }
  // expected-error @below {{has no partial derivative for an element of a float parameter (its cuir.grad_yield lists every load of one)}}
  cuir.score_grad {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    // expected-note @below {{loaded here}}
    %e = memref.load %t[%h] : memref<4xf32, #cuir.mem<global>>
    %r = arith.addf %s, %e : f32
    cuir.grad_yield %r, %s
  }
}

// -----

cuir.variant @counts(%t: memref<4xf32, #cuir.mem<global>> {cuir.param = "t"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %e = memref.load %t[%h] : memref<4xf32, #cuir.mem<global>>
    %r = arith.addf %s, %e : f32
    cuir.yield %r : f32
  }
  cuir.score_grad {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %e = memref.load %t[%h] : memref<4xf32, #cuir.mem<global>>
    %r = arith.addf %s, %e : f32
    // expected-error @below {{lists 1 elements but 2 partial derivatives}}
    cuir.grad_yield %r, %s partials(%e : f32) = (%s, %s : f32, f32)
  }
}

// -----

cuir.variant @not_a_load(%t: memref<4xf32, #cuir.mem<global>> {cuir.param = "t"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    cuir.yield %s : f32
  }
  cuir.score_grad {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    // expected-error @below {{element #0 must be a memref.load of a float parameter of the variant in this cuir.score_grad}}
    cuir.grad_yield %s, %s partials(%s : f32) = (%s : f32)
  }
}

// -----

cuir.variant @types() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    cuir.yield %s : f32
  }
  cuir.score_grad {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %d = arith.truncf %s : f32 to bf16
    // expected-error @below {{operand #1 must be 32-bit float}}
    "cuir.grad_yield"(%s, %d) <{operandSegmentSizes = array<i32: 1, 1, 0, 0>}> : (f32, bf16) -> ()
  }
}
