//===- Reference.h - Reference attention for the interpreter ----*- C++ -*-===//

#ifndef CUIR_LIB_INTERPRETER_REFERENCE_H
#define CUIR_LIB_INTERPRETER_REFERENCE_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace mlir::cuir::interp {

/// An attention problem: inputs in [B, N, H, d] layout, as floats holding
/// the kernel's bf16/f16 values exactly.
struct Problem {
  int64_t B, Hq, Hkv, Nq, Nkv, d;
  bool causal;
  float scale;
  std::vector<float> q, k, v;
  /// The upstream gradient dO [B, Nq, Hq, d] of a backward problem; empty
  /// for a forward one.
  std::vector<float> dO;
  /// Keyword arguments of the PyTorch reference, besides `causal`: a JSON
  /// object.
  nlohmann::json params;
  /// Captured tensors (static N-D parameters): name -> {"shape": [...],
  /// "dtype": torch dtype name, "data": row-major values}, non-finite floats
  /// as the strings "nan", "inf" and "-inf". The runner hands each to the
  /// reference as a torch tensor of that shape and dtype, among `params`.
  nlohmann::json tensors;
  /// The parameters (of `params` or `tensors`) whose gradients a backward
  /// problem's reference computes too, with their element counts: float64
  /// leaves of its autograd, their gradients written as grad_<name>.npy.
  std::vector<std::pair<std::string, int64_t>> trainable;
};

/// Output [B, Nq, Hq, d] and natural-log LSE [B, Hq, Nq].
struct Output {
  std::vector<double> o, lse;
  bool hasLse = false;
};

/// Gradients of a backward problem: dQ [B, Nq, Hq, d], dK and dV
/// [B, Nkv, Hkv, d].
struct Gradients {
  std::vector<double> dq, dk, dv;
  /// The gradient of each trainable parameter (Problem::trainable),
  /// row-major.
  std::map<std::string, std::vector<double>> params;
};

/// What a backward problem's reference gives: the forward's O and LSE (the
/// kernels' inputs) and the gradients of O . dO.
struct BackwardOutput {
  Output forward;
  Gradients grads;
};

/// `x` as a JSON number that Python reads back as the same value and kind:
/// an integer when `x` is whole and below 1e17 in magnitude (so that a
/// reference can index with it), else a float.
nlohmann::json jsonNumber(double x);

/// `value` as one line of JSON. Strings that are not valid UTF-8 get U+FFFD
/// for their bad bytes instead of stopping the program.
std::string dumpJson(const nlohmann::json &value);
std::string dumpJson(const nlohmann::ordered_json &value);

/// The meta.json the PyTorch runner reads: the scale, and the keyword
/// arguments (`causal` and the problem's parameters).
std::string referenceMetaJson(const Problem &p);

/// Writes a float32 (or int32) .npy file (format 1.0, C order).
bool writeNpy(llvm::StringRef path, llvm::ArrayRef<int64_t> shape,
              llvm::ArrayRef<float> data);
bool writeNpy(llvm::StringRef path, llvm::ArrayRef<int64_t> shape,
              llvm::ArrayRef<int32_t> data);

/// Standard softmax attention (GQA; causal masks are bottom-right aligned:
/// query i sees key j iff j <= i + Nkv - Nq), in double precision. Rows that
/// see no key get O = 0 and LSE = +inf.
Output builtinReference(const Problem &p);

/// The gradients of standard attention (as builtinReference computes it,
/// whose `fwd` output it reuses) for the upstream gradient `p.dO`, in double
/// precision: dK and dV of a KV head sum over the query heads of its group;
/// a row that sees no key contributes nothing, so its dQ is 0.
Gradients builtinBackward(const Problem &p, const Output &fwd);

/// Runs the backward protocol of the PyTorch file `path`: its
/// `reference(q, k, v, scale, **params)` in float64 for O and LSE, and the
/// gradients from its `reference_backward(q, k, v, o, lse, d_o, scale,
/// **params)` if it defines one, else by autograd through `reference`.
FailureOr<BackwardOutput> pytorchBackward(const Problem &p,
                                          llvm::StringRef path,
                                          llvm::StringRef python, Location loc);

/// Runs `reference(q, k, v, scale, **params)` from the PyTorch file `path`
/// in a `python` subprocess, exchanging .npy files.
FailureOr<Output> pytorchReference(const Problem &p, llvm::StringRef path,
                                   llvm::StringRef python, Location loc);

} // namespace mlir::cuir::interp

#endif // CUIR_LIB_INTERPRETER_REFERENCE_H
