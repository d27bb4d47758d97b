//===- Variants.h - Attention variants: built-ins and composition -*- C++ -*-===//
//
// A variant is a cuir.variant op: a score function, a mask predicate, a
// normaliser and parameters. Built-ins are small CuIR texts; a spec such as
// "prefixlm,softcap{softcap=30},sigmoid" composes them: masks are ANDed,
// score functions chained in order, and sigmoid wins over softmax.
//
// Parameters named B, Hq, Hkv, Nq or Nkv (index) are not new parameters: they
// bind to the kernel's sizes, so that masks can align to the bottom-right
// corner (off = Nkv - Nq) as the source kernels' causal mask does.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_VARIANTS_VARIANTS_H
#define CUIR_VARIANTS_VARIANTS_H

#include "cuir/Dialect/CuIR.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlir::cuir {

/// Names of the built-in variants, for help and diagnostics.
std::vector<std::string> builtinVariantNames();

/// A built-in variant as written: its name, a one-line summary of its
/// semantics and its CuIR text (one cuir.variant).
struct BuiltinVariantInfo {
  llvm::StringRef name;
  llvm::StringRef summary;
  llvm::StringRef text;
};

/// Every built-in variant, e.g. as examples for a model that writes one.
std::vector<BuiltinVariantInfo> getBuiltinVariants();

/// True if `name` is one of the kernel sizes a variant may read.
bool isSizeParam(llvm::StringRef name);

/// Builds the variant described by `spec` (built-in names with optional
/// `{param=value ...}` defaults, comma-separated) inside `module`. Errors are
/// reported at `loc`.
FailureOr<VariantOp> buildVariantFromSpec(llvm::StringRef spec,
                                          ModuleOp module, Location loc);

/// Composes `parts` into one new variant named `name` inside `module`.
FailureOr<VariantOp> composeVariants(llvm::ArrayRef<VariantOp> parts,
                                     llvm::StringRef name, ModuleOp module,
                                     Location loc);

} // namespace mlir::cuir

#endif // CUIR_VARIANTS_VARIANTS_H
