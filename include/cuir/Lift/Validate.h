//===- Validate.h - Checking a candidate lift -------------------*- C++ -*-===//

#ifndef CUIR_LIFT_VALIDATE_H
#define CUIR_LIFT_VALIDATE_H

#include "cuir/Lift/LiftCache.h"
#include "cuir/Lift/Lifter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace mlir::cuir::lift {

/// Module attribute of a lift-cache entry: what the lift passed,
/// `{level = "none" | "semantic", reference = "builtin", runs = [{kernel =
/// "...", B = 2, Hq = 2, Hkv = 1, Nq = 200, Nkv = 333, d = 128, causal =
/// false, seed = 0, tolerance = 1.0e-02, rel_error = ..., max_abs_error =
/// ...}, ...], validate = "<pipeline>"}` (runs and reference for "semantic",
/// validate if a validation pipeline ran).
inline constexpr llvm::StringLiteral kLiftCheckAttr = "cuir.lift_check";

/// Module attribute --lift puts on its result: where its Source CuIR is, for
/// --lower, `{check = "<LiftCheck name>", path = "<file>", sha256 = "<of the
/// file's text>"}`, or `{check = ..., unstored = "<why>"}` if the lift was
/// not stored.
inline constexpr llvm::StringLiteral kSourceCuIRAttr = "cuir.source_cuir";

/// The check recorded on a cache entry (kLiftCheckAttr); None if it records
/// none.
LiftCheck getRecordedCheck(ModuleOp module);

/// What a candidate goes through after it parses and verifies.
struct CandidateChecks {
  /// Module attributes copied onto the candidate before the checks
  /// (cuir.source_path, cuir.source_text), so that passes find the source.
  DictionaryAttr sourceAttrs;
  /// Must pass: the source-location check.
  PassManager *locationCheck = nullptr;
  /// Must pass: None or Semantic (checkStandardAttention).
  LiftCheck check = LiftCheck::Semantic;
  /// Must pass, if set: the configurable validation pipeline.
  PassManager *validation = nullptr;
  /// The validation pipeline's text, for messages.
  std::string validationText;
};

/// Parses `mlir` (named lift-round-<round>.mlir in diagnostics), verifies
/// it, requires a cuir.kernel, and runs the checks. Every diagnostic emitted
/// on the way is captured into the verdict instead of being printed. On
/// acceptance `accepted` holds the module, with the record of what it passed
/// (kLiftCheckAttr), and the verdict's problems list the semantic runs.
Verdict checkCandidate(MLIRContext *context, const CandidateChecks &checks,
                       llvm::StringRef mlir, unsigned round,
                       OwningOpRef<ModuleOp> &accepted);

/// Runs `checks.check` on a cached lift that recorded a weaker one, with
/// diagnostics captured as for a candidate (against the CUDA source of
/// `checks.sourceAttrs`); on acceptance the module records the new check.
Verdict recheckCachedLift(ModuleOp module, const CandidateChecks &checks);

/// Parses and verifies a cached lift; errors carry the diagnostics. If
/// `textHash` is given, it receives computeContentHash of the file's text.
llvm::Expected<OwningOpRef<ModuleOp>>
loadCachedLift(MLIRContext *context, llvm::StringRef path,
               std::string *textHash = nullptr);

/// Renames the file of every source location (FileLineColRange) in `op`
/// from `from` to `to`: a cached lift of the same text under another name.
void renameSourceFile(Operation *op, llvm::StringRef from, llvm::StringRef to);

} // namespace mlir::cuir::lift

#endif // CUIR_LIFT_VALIDATE_H
