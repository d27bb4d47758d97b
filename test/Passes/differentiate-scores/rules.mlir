// RUN: cuir-opt %s -split-input-file --cuir-differentiate-scores | FileCheck %s
//
// One variant per rule family; the derivative ops read the forward values.

// Softcap, cap * tanh(s / cap): 1 - t * t of the forward tanh, no second tanh.
// CHECK-LABEL: cuir.variant @softcap
// CHECK-SAME: (%[[CAP:[^:]*]]: f32
// CHECK: cuir.score_grad {
// CHECK-NEXT: ^bb0(%[[S:[^:]*]]: f32,
// CHECK-NEXT: %[[X:.*]] = arith.divf %[[S]], %[[CAP]]
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[X]]
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[T]], %[[CAP]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.0
// CHECK-NEXT: %[[DX:.*]] = arith.divf %[[ONE]], %[[CAP]]
// CHECK-NEXT: %[[TT:.*]] = arith.mulf %[[T]], %[[T]]
// CHECK-NEXT: %[[SECH2:.*]] = arith.subf %[[ONE]], %[[TT]]
// CHECK-NEXT: %[[DT:.*]] = arith.mulf %[[SECH2]], %[[DX]]
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[CAP]], %[[DT]]
// CHECK-NEXT: cuir.grad_yield %[[R]], %[[D]]
// CHECK-NOT: math.tanh
cuir.variant @softcap(%cap: f32 {cuir.param = "cap"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %x = arith.divf %s, %cap : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %t, %cap : f32
    cuir.yield %r : f32
  }
}

// -----

// Sum, difference, negation and product rules: (s + c) * s - (-s).
// CHECK-LABEL: cuir.variant @arith
// CHECK: cuir.score_grad {
// CHECK-NEXT: ^bb0(%[[S:[^:]*]]: f32,
// CHECK: %[[A:.*]] = arith.addf %[[S]], %{{.*}}
// CHECK: %[[R:.*]] = arith.subf
// (s + c) * 1 + s * 1, then minus the tangent of -s, the constant -1.
// CHECK-NEXT: %[[DP:.*]] = arith.addf %[[S]], %[[A]]
// CHECK-NEXT: %[[M1:.*]] = arith.constant -1.0
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[DP]], %[[M1]]
// CHECK-NEXT: cuir.grad_yield %[[R]], %[[D]]
cuir.variant @arith() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %c = arith.constant 3.0 : f32
    %a = arith.addf %s, %c : f32
    %p = arith.mulf %a, %s : f32
    %n = arith.negf %s : f32
    %r = arith.subf %p, %n : f32
    cuir.yield %r : f32
  }
}

// -----

// Quotient: d(c / s) = (0 - r * 1) / s with r = c / s, the forward quotient.
// CHECK-LABEL: cuir.variant @quotient
// CHECK: cuir.score_grad {
// CHECK-NEXT: ^bb0(%[[S:[^:]*]]: f32,
// CHECK: %[[R:.*]] = arith.divf %{{.*}}, %[[S]]
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[R]]
// CHECK-NEXT: %[[D:.*]] = arith.divf %[[N]], %[[S]]
// CHECK-NEXT: cuir.grad_yield %[[R]], %[[D]]
cuir.variant @quotient() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %c = arith.constant 2.0 : f32
    %r = arith.divf %c, %s : f32
    cuir.yield %r : f32
  }
}

// -----

// A coordinate bias: zero tangent, the integer math kept as it is; d = 1.
// CHECK-LABEL: cuir.variant @bias
// CHECK: cuir.score_grad {
// CHECK: arith.subi
// CHECK-NEXT: arith.index_cast
// CHECK-NEXT: arith.sitofp
// CHECK-NEXT: %[[R:.*]] = arith.addf
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.0
// CHECK-NEXT: cuir.grad_yield %[[R]], %[[ONE]]
cuir.variant @bias() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %d = arith.subi %q, %kv : index
    %i = arith.index_cast %d : index to i32
    %f = arith.sitofp %i : i32 to f32
    %r = arith.addf %s, %f : f32
    cuir.yield %r : f32
  }
}

// -----

// max / min: the tangent of the operand the forward selected; ties go to
// the first operand (the result equals it).
// CHECK-LABEL: cuir.variant @clamp
// CHECK: cuir.score_grad {
// CHECK-NEXT: ^bb0(%[[S:[^:]*]]: f32,
// CHECK: %[[M:.*]] = arith.maximumf %[[S]]
// CHECK-NEXT: %[[R:.*]] = arith.minimumf %[[M]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.0
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpf oeq, %[[M]], %[[S]]
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[DM:.*]] = arith.select %[[FIRST]], %[[ONE]], %[[ZERO]]
// CHECK-NEXT: %[[FIRST2:.*]] = arith.cmpf oeq, %[[R]], %[[M]]
// CHECK-NEXT: %[[D:.*]] = arith.select %[[FIRST2]], %[[DM]], %[[ZERO]]
// CHECK-NEXT: cuir.grad_yield %[[R]], %[[D]]
cuir.variant @clamp() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %lo = arith.constant -1.0 : f32
    %hi = arith.constant 2.0 : f32
    %m = arith.maximumf %s, %lo : f32
    %r = arith.minimumf %m, %hi : f32
    cuir.yield %r : f32
  }
}

// -----

// maxnumf / minnumf select alike (a NaN operand is not selected).
// CHECK-LABEL: cuir.variant @num
// CHECK: cuir.score_grad {
// CHECK-NEXT: ^bb0(%[[S:[^:]*]]: f32,
// CHECK: %[[C:.*]] = arith.constant 5.0
// CHECK: %[[M:.*]] = arith.maxnumf %[[C]], %{{.*}}
// CHECK-NEXT: %[[R:.*]] = arith.minnumf %[[M]], %[[S]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.0
// CHECK-NEXT: %[[DSQ:.*]] = arith.addf %[[S]], %[[S]]
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpf oeq, %[[M]], %[[C]]
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[DM:.*]] = arith.select %[[FIRST]], %[[ZERO]], %[[DSQ]]
// CHECK-NEXT: %[[FIRST2:.*]] = arith.cmpf oeq, %[[R]], %[[M]]
// CHECK-NEXT: %[[D:.*]] = arith.select %[[FIRST2]], %[[DM]], %[[ONE]]
// CHECK-NEXT: cuir.grad_yield %[[R]], %[[D]]
cuir.variant @num() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %c = arith.constant 0.5 : f32
    %d = arith.mulf %s, %s : f32
    %m = arith.maxnumf %c, %d : f32
    %r = arith.minnumf %m, %s : f32
    cuir.yield %r : f32
  }
}

// -----

// select: the tangent of the selected value; the comparison has none.
// CHECK-LABEL: cuir.variant @where
// CHECK: cuir.score_grad {
// CHECK: %[[ZERO:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[POS:.*]] = arith.cmpf ogt
// CHECK-NEXT: arith.addf
// CHECK-NEXT: %[[R:.*]] = arith.select %[[POS]]
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2.0
// CHECK-NEXT: %[[D:.*]] = arith.select %[[POS]], %[[TWO]], %[[ZERO]]
// CHECK-NEXT: cuir.grad_yield %[[R]], %[[D]]
cuir.variant @where() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %zero = arith.constant 0.0 : f32
    %pos = arith.cmpf ogt, %s, %zero : f32
    %twice = arith.addf %s, %s : f32
    %r = arith.select %pos, %twice, %zero : f32
    cuir.yield %r : f32
  }
}

// -----

// extf / truncf pass the tangent through, cast alike.
// CHECK-LABEL: cuir.variant @casts
// CHECK: cuir.score_grad {
// CHECK: %[[H:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[H]], %[[H]] : bf16
// CHECK-NEXT: %[[R:.*]] = arith.extf %[[SQ]] : bf16 to f32
// CHECK-NEXT: %[[DSQ:.*]] = arith.addf %[[H]], %[[H]] : bf16
// CHECK-NEXT: %[[D:.*]] = arith.extf %[[DSQ]] : bf16 to f32
// CHECK-NEXT: cuir.grad_yield %[[R]], %[[D]]
cuir.variant @casts() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %h16 = arith.truncf %s : f32 to bf16
    %sq = arith.mulf %h16, %h16 : bf16
    %r = arith.extf %sq : bf16 to f32
    cuir.yield %r : f32
  }
}

// -----

// exp, exp2, log, log2, log1p: r, r ln 2, 1/x, 1/(x ln 2), 1/(1+x).
// CHECK-LABEL: cuir.variant @exp_log
// CHECK: cuir.score_grad {
// CHECK: %[[E:.*]] = math.exp
// CHECK-NEXT: %[[E2:.*]] = math.exp2
// CHECK: arith.addf
// CHECK-NEXT: %[[R:.*]] = arith.addf
// CHECK-NEXT: %[[LN2:.*]] = arith.constant 0.693147182
// CHECK-NEXT: %[[DE2:.*]] = arith.mulf %[[E2]], %[[LN2]]
// CHECK-NEXT: %[[DL:.*]] = arith.divf %[[E]], %[[E]]
// CHECK-NEXT: %[[DL2:.*]] = arith.divf %[[DE2]], %[[DE2]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.0
// CHECK-NEXT: %[[X1:.*]] = arith.addf %[[E]], %[[ONE]]
// CHECK-NEXT: %[[DL1:.*]] = arith.divf %[[E]], %[[X1]]
// CHECK: cuir.grad_yield %[[R]],
// CHECK-NOT: math.exp
cuir.variant @exp_log() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %e = math.exp %s : f32
    %e2 = math.exp2 %s : f32
    %l = math.log %e : f32
    %l2 = math.log2 %e2 : f32
    %l1 = math.log1p %e : f32
    %a = arith.addf %l, %l2 : f32
    %r = arith.addf %a, %l1 : f32
    cuir.yield %r : f32
  }
}

// -----

// sqrt, rsqrt: 0.5 / r and -0.5 r^3 of the forward results.
// CHECK-LABEL: cuir.variant @roots
// CHECK: cuir.score_grad {
// CHECK: %[[X:.*]] = math.exp
// CHECK-NEXT: %[[Q:.*]] = math.sqrt %[[X]]
// CHECK-NEXT: %[[RQ:.*]] = math.rsqrt %[[X]]
// CHECK-NEXT: %[[R:.*]] = arith.addf
// CHECK-NEXT: %[[HALF:.*]] = arith.constant 5.0{{0*}}e-01
// CHECK-NEXT: %[[TH:.*]] = arith.mulf %[[X]], %[[HALF]]
// CHECK-NEXT: %[[DQ:.*]] = arith.divf %[[TH]], %[[Q]]
// CHECK-NEXT: %[[R2:.*]] = arith.mulf %[[RQ]], %[[RQ]]
// CHECK-NEXT: %[[R3:.*]] = arith.mulf %[[RQ]], %[[R2]]
// CHECK-NEXT: %[[TR3:.*]] = arith.mulf %[[R3]], %[[X]]
// CHECK-NEXT: %[[MHALF:.*]] = arith.constant -5.0{{0*}}e-01
// CHECK-NEXT: arith.mulf %[[TR3]], %[[MHALF]]
// CHECK-NOT: math.sqrt
// CHECK: cuir.grad_yield %[[R]],
cuir.variant @roots() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %x = math.exp %s : f32
    %q2 = math.sqrt %x : f32
    %rq = math.rsqrt %x : f32
    %r = arith.addf %q2, %rq : f32
    cuir.yield %r : f32
  }
}

// -----

// absf: sign(x), 0 at x = 0.
// CHECK-LABEL: cuir.variant @abs
// CHECK: cuir.score_grad {
// CHECK-NEXT: ^bb0(%[[S:[^:]*]]: f32,
// CHECK-NEXT: %[[R:.*]] = math.absf %[[S]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.0
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[NEG:.*]] = arith.cmpf olt, %[[S]], %[[ZERO]]
// CHECK-NEXT: %[[M1:.*]] = arith.constant -1.0
// CHECK-NEXT: %[[BELOW:.*]] = arith.select %[[NEG]], %[[M1]], %[[ZERO]]
// CHECK-NEXT: %[[POS:.*]] = arith.cmpf ogt, %[[S]], %[[ZERO]]
// CHECK-NEXT: %[[D:.*]] = arith.select %[[POS]], %[[ONE]], %[[BELOW]]
// CHECK-NEXT: cuir.grad_yield %[[R]], %[[D]]
cuir.variant @abs() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %r = math.absf %s : f32
    cuir.yield %r : f32
  }
}

// -----

// powf: a constant exponent e gives e x^(e-1); a varying exponent of a
// positive constant base c gives r ln c; a parameter exponent y gives
// y x^(y-1), 0 where y = 0.
// CHECK-LABEL: cuir.variant @pow
// CHECK-SAME: (%[[Y:[^:]*]]: f32
// CHECK: cuir.score_grad {
// CHECK: %[[X:.*]] = math.exp
// CHECK-NEXT: %[[E:.*]] = arith.constant 2.5
// CHECK-NEXT: %[[C:.*]] = arith.constant 2.0
// CHECK-NEXT: math.powf %[[X]], %[[E]]
// CHECK-NEXT: %[[P2:.*]] = math.powf %[[C]],
// CHECK-NEXT: math.powf %[[X]], %[[Y]]
// CHECK: %[[EM1:.*]] = arith.constant 1.5
// CHECK-NEXT: %[[XE:.*]] = math.powf %[[X]], %[[EM1]]
// CHECK-NEXT: %[[TXE:.*]] = arith.mulf %[[XE]], %[[X]]
// CHECK-NEXT: arith.mulf %[[TXE]], %[[E]]
// CHECK-NEXT: %[[LN2:.*]] = arith.constant 0.693147182
// CHECK-NEXT: arith.mulf %[[P2]], %[[LN2]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.0
// CHECK-NEXT: %[[YM1:.*]] = arith.subf %[[Y]], %[[ONE]]
// CHECK-NEXT: %[[XY:.*]] = math.powf %[[X]], %[[YM1]]
// CHECK-NEXT: %[[YXY:.*]] = arith.mulf %[[Y]], %[[XY]]
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[Y0:.*]] = arith.cmpf oeq, %[[Y]], %[[ZERO]]
// CHECK-NEXT: arith.select %[[Y0]], %[[ZERO]], %[[YXY]]
cuir.variant @pow(%y: f32 {cuir.param = "y"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %x = math.exp %s : f32
    %e = arith.constant 2.5 : f32
    %c = arith.constant 2.0 : f32
    %p1 = math.powf %x, %e : f32
    %p2 = math.powf %c, %s : f32
    %p3 = math.powf %x, %y : f32
    %a = arith.addf %p1, %p2 : f32
    %r = arith.addf %a, %p3 : f32
    cuir.yield %r : f32
  }
}

// -----

// sin, cos, erf: cos x, -sin x, 2/sqrt(pi) exp(-x^2).
// CHECK-LABEL: cuir.variant @trig
// CHECK: cuir.score_grad {
// CHECK-NEXT: ^bb0(%[[S:[^:]*]]: f32,
// CHECK-NEXT: %[[SN:.*]] = math.sin %[[S]]
// CHECK-NEXT: %[[CS:.*]] = math.cos %[[S]]
// CHECK: %[[NSN:.*]] = arith.negf %[[SN]]
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[S]], %[[S]]
// CHECK-NEXT: %[[NSQ:.*]] = arith.negf %[[SQ]]
// CHECK-NEXT: %[[G:.*]] = math.exp %[[NSQ]]
// CHECK-NEXT: %[[K:.*]] = arith.constant 1.12837923
// CHECK-NEXT: %[[DE:.*]] = arith.mulf %[[G]], %[[K]]
// CHECK-NEXT: %[[D1:.*]] = arith.addf %[[CS]], %[[NSN]]
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[D1]], %[[DE]]
// CHECK-NEXT: cuir.grad_yield %{{.*}}, %[[D]]
cuir.variant @trig() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %sn = math.sin %s : f32
    %cs = math.cos %s : f32
    %er = math.erf %s : f32
    %a = arith.addf %sn, %cs : f32
    %r = arith.addf %a, %er : f32
    cuir.yield %r : f32
  }
}

// -----

// fma(a, b, c): ta b + a tb + tc.
// CHECK-LABEL: cuir.variant @fma
// CHECK: cuir.score_grad {
// CHECK-NEXT: ^bb0(%[[S:[^:]*]]: f32,
// CHECK-NEXT: %[[R:.*]] = math.fma %[[S]], %[[S]],
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[S]], %[[S]]
// CHECK-NEXT: cuir.grad_yield %[[R]], %[[D]]
cuir.variant @fma(%k: f32 {cuir.param = "k"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %r = math.fma %s, %s, %k : f32
    cuir.yield %r : f32
  }
}

// -----

// log10: 1 / (x ln 10).
// CHECK-LABEL: cuir.variant @log10
// CHECK: cuir.score_grad {
// CHECK: %[[X:.*]] = math.exp
// CHECK-NEXT: %[[R:.*]] = math.log10 %[[X]]
// CHECK-NEXT: %[[LN10:.*]] = arith.constant 2.30258512
// CHECK-NEXT: %[[XL:.*]] = arith.mulf %[[X]], %[[LN10]]
// CHECK-NEXT: %[[D:.*]] = arith.divf %[[X]], %[[XL]]
// CHECK-NEXT: cuir.grad_yield %[[R]], %[[D]]
cuir.variant @log10() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %x = math.exp %s : f32
    %r = math.log10 %x : f32
    cuir.yield %r : f32
  }
}

// -----

// fmod(a, b) (arith.remf): da - db * trunc(a / b), torch's rule; here
// fmod(s, 2) + fmod(4 s, exp(s / 4) + 2): 1 + 4 - (exp(s / 4) / 4) * trunc(..).
// CHECK-LABEL: cuir.variant @remainder
// CHECK: cuir.score_grad {
// CHECK: %[[M:.*]] = arith.remf
// CHECK: %[[E:.*]] = math.exp
// CHECK: %[[D:.*]] = arith.addf %[[E]]
// CHECK: %[[N:.*]] = arith.mulf
// CHECK: %[[R:.*]] = arith.remf %[[N]], %[[D]]
// CHECK: %[[Q:.*]] = arith.divf %[[N]], %[[D]]
// CHECK-NEXT: %[[T:.*]] = math.trunc %[[Q]]
// CHECK-NEXT: %[[DB:.*]] = arith.mulf %[[T]], %{{.*}}
// CHECK-NEXT: arith.subf %{{.*}}, %[[DB]]
// CHECK: cuir.grad_yield
cuir.variant @remainder() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %c2 = arith.constant 2.0 : f32
    %c4 = arith.constant 4.0 : f32
    %quarter = arith.constant 0.25 : f32
    %m = arith.remf %s, %c2 : f32
    %x = arith.mulf %s, %quarter : f32
    %e = math.exp %x : f32
    %d = arith.addf %e, %c2 : f32
    %n = arith.mulf %s, %c4 : f32
    %r = arith.remf %n, %d : f32
    %y = arith.addf %m, %r : f32
    cuir.yield %y : f32
  }
}

// -----

// Steps (floor, an integer conversion) have derivative 0, as in torch's
// autograd: only s * 0.5 is left, d = 0.5.
// CHECK-LABEL: cuir.variant @steps
// CHECK: cuir.score_grad {
// CHECK: %[[HALF:.*]] = arith.constant 5.0{{.*}}e-01
// CHECK: %[[A:.*]] = arith.addf
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[A]]
// CHECK-NEXT: cuir.grad_yield %[[R]], %[[HALF]]
cuir.variant @steps() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %f = math.floor %s : f32
    %i = arith.fptosi %s : f32 to i32
    %g = arith.sitofp %i : i32 to f32
    %half = arith.constant 0.5 : f32
    %t = arith.mulf %s, %half : f32
    %a = arith.addf %f, %g : f32
    %r = arith.addf %a, %t : f32
    cuir.yield %r : f32
  }
}

// -----

// expm1: exp(x) = r + 1 from the forward result, no exp.
// CHECK-LABEL: cuir.variant @expm1
// CHECK: cuir.score_grad {
// CHECK: %[[R:.*]] = math.expm1
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.0
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[R]], %[[ONE]]
// CHECK-NEXT: cuir.grad_yield %[[R]], %[[D]]
cuir.variant @expm1() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %r = math.expm1 %s : f32
    cuir.yield %r : f32
  }
}
