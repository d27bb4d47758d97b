// RUN: cuir-opt %s -split-input-file -verify-diagnostics
//
// Change records that do not parse: a rewrite no patcher has, a normaliser
// that does not exist, a removal without the op's location.

// expected-error @below {{expected ::mlir::cuir::Rewrite to be one of: scores, parameter, constant, normalizer, split}}
// expected-error @below {{failed to parse CuIR_ChangeAttr parameter 'rewrite'}}
%c = arith.constant {cuir.change = #cuir.change<bogus>} 0 : index

// -----

// expected-error @below {{expected ::mlir::cuir::Normalizer to be one of: softmax, sigmoid}}
// expected-error @below {{failed to parse CuIR_NormalizerAttr parameter 'value'}}
%c = arith.constant {cuir.normalizer = #cuir.normalizer<relu>} 0 : index

// -----

// expected-error @below {{expected ','}}
%c = arith.constant {cuir.removed = [#cuir.removed<normalizer, "cuir.store">]} 0 : index
