//===- Validate.h - Checking a candidate lift -------------------*- C++ -*-===//

#ifndef CUIR_LIFT_VALIDATE_H
#define CUIR_LIFT_VALIDATE_H

#include "cuir/Lift/Lifter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace mlir::cuir::lift {

/// What a candidate goes through after it parses and verifies.
struct CandidateChecks {
  /// Module attributes copied onto the candidate before the checks
  /// (cuir.source_path, cuir.source_text), so that passes find the source.
  DictionaryAttr sourceAttrs;
  /// Must pass: the source-location check.
  PassManager *locationCheck = nullptr;
  /// Must pass, if set: the configurable validation pipeline.
  PassManager *validation = nullptr;
  /// The validation pipeline's text, for messages.
  std::string validationText;
};

/// Parses `mlir` (named lift-round-<round>.mlir in diagnostics), verifies
/// it, requires a cuir.kernel, and runs the checks. Every diagnostic emitted
/// on the way is captured into the verdict instead of being printed. On
/// acceptance `accepted` holds the module.
Verdict checkCandidate(MLIRContext *context, const CandidateChecks &checks,
                       llvm::StringRef mlir, unsigned round,
                       OwningOpRef<ModuleOp> &accepted);

/// Parses and verifies a cached lift; errors carry the diagnostics.
llvm::Expected<OwningOpRef<ModuleOp>> loadCachedLift(MLIRContext *context,
                                                     llvm::StringRef path);

/// Renames the file of every source location (FileLineColRange) in `op`
/// from `from` to `to`: a cached lift of the same text under another name.
void renameSourceFile(Operation *op, llvm::StringRef from, llvm::StringRef to);

} // namespace mlir::cuir::lift

#endif // CUIR_LIFT_VALIDATE_H
