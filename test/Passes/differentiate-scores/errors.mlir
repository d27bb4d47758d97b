// RUN: cuir-opt %s -split-input-file --cuir-differentiate-scores -verify-diagnostics
//
// Ops on a differentiated path without an exact rule are refused at their
// location; one case per reason.

cuir.variant @bits() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    // expected-error @below {{cannot differentiate arith.bitcast with respect to the score: it reinterprets the value's bits}}
    %i = arith.bitcast %s : f32 to i32
    %c = arith.constant 1 : i32
    %j = arith.addi %i, %c : i32
    %r = arith.bitcast %j : i32 to f32
    cuir.yield %r : f32
  }
}

// -----

cuir.variant @copysign() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %c = arith.constant 2.0 : f32
    // expected-error @below {{cannot differentiate math.copysign with respect to the score: no rule (it jumps where the sign operand crosses zero and has a kink where the magnitude does)}}
    %r = math.copysign %c, %s : f32
    cuir.yield %r : f32
  }
}

// -----

cuir.variant @no_rule() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    // expected-error @below {{cannot differentiate math.atan with respect to the score: no derivative rule for this op}}
    %r = math.atan %s : f32
    cuir.yield %r : f32
  }
}

// -----

// x^y ln x needs a positive base: a parameter base may be anything.
cuir.variant @pow_base(%x: f32 {cuir.param = "x"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    // expected-error @below {{cannot differentiate math.powf with respect to the score: the exponent varies and the base is not a positive constant (x^y ln x needs x > 0)}}
    %r = math.powf %x, %s : f32
    cuir.yield %r : f32
  }
}

// -----

cuir.variant @pow_negative_base() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %x = arith.constant -2.0 : f32
    // expected-error @below {{the exponent varies and the base is not a positive constant}}
    %r = math.powf %x, %s : f32
    cuir.yield %r : f32
  }
}

// -----

cuir.variant @control_flow() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %c = arith.constant 0.0 : f32
    %p = arith.cmpf ogt, %s, %c : f32
    // expected-error @below {{cannot differentiate scf.if with respect to the score: control flow is not differentiated; the value reaches its regions}}
    %r = scf.if %p -> f32 {
      %t = math.exp %s : f32
      scf.yield %t : f32
    } else {
      scf.yield %c : f32
    }
    cuir.yield %r : f32
  }
}

// -----

// A refusal on the path of a parameter element names it and its load.
cuir.variant @element(%t: memref<4xf32, #cuir.mem<global>> {cuir.param = "t"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    // expected-note @below {{the element is loaded here}}
    %e = memref.load %t[%h] : memref<4xf32, #cuir.mem<global>>
    %two = arith.constant 2.0 : f32
    // expected-error @below {{cannot differentiate math.copysign with respect to an element of parameter 't': no rule}}
    %c = math.copysign %two, %e : f32
    %r = arith.addf %s, %c : f32
    cuir.yield %r : f32
  }
}

// -----

// Integer math of the coordinates, even floor-like, is not differentiated.
cuir.variant @coordinates() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %i = arith.index_cast %q : index to i32
    %f = arith.sitofp %i : i32 to f32
    %fl = math.floor %f : f32
    %r = arith.addf %s, %fl : f32
    cuir.yield %r : f32
  }
}
