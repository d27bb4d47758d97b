//===- Reference.h - Reference attention for the interpreter ----*- C++ -*-===//

#ifndef CUIR_LIB_INTERPRETER_REFERENCE_H
#define CUIR_LIB_INTERPRETER_REFERENCE_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

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
  /// Keyword arguments of the PyTorch reference, besides `causal`.
  llvm::json::Object params;
};

/// Output [B, Nq, Hq, d] and natural-log LSE [B, Hq, Nq].
struct Output {
  std::vector<double> o, lse;
  bool hasLse = false;
};

/// Writes a float32 .npy file (format 1.0, C order).
bool writeNpy(llvm::StringRef path, llvm::ArrayRef<int64_t> shape,
              llvm::ArrayRef<float> data);

/// Standard softmax attention (GQA; causal masks are bottom-right aligned:
/// query i sees key j iff j <= i + Nkv - Nq), in double precision. Rows that
/// see no key get O = 0 and LSE = +inf.
Output builtinReference(const Problem &p);

/// Runs `reference(q, k, v, scale, **params)` from the PyTorch file `path`
/// in a `python` subprocess, exchanging .npy files.
FailureOr<Output> pytorchReference(const Problem &p, llvm::StringRef path,
                                   llvm::StringRef python, Location loc);

} // namespace mlir::cuir::interp

#endif // CUIR_LIB_INTERPRETER_REFERENCE_H
