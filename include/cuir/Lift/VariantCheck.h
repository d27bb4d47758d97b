//===- VariantCheck.h - What LLM-written CuIR computes ----------*- C++ -*-===//
//
// The interpreter closes both LLM loops on semantics:
//   - `--lift` runs every kernel of a candidate lift against the built-in
//     standard attention (checkStandardAttention);
//   - `--transfer=llm:<reference.py>` asks a model for the cuir.variant that
//     has the semantics of a PyTorch reference. Each answer is parsed,
//     verified, applied to a clone of the Source CuIR with transferKernel,
//     and the Target CuIR is run by the interpreter against the reference on
//     small problems.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_LIFT_VARIANTCHECK_H
#define CUIR_LIFT_VARIANTCHECK_H

#include "cuir/Interpreter/Interpreter.h"
#include "cuir/Lift/Lifter.h"

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringRef.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::cuir::lift {

/// One run of the lift's semantic check that matched the reference.
struct SemanticRun {
  std::string kernel;
  InterpreterOptions problem;
  InterpreterReport report;
  /// describeRun's line (describeBackwardRun's for a backward pass).
  std::string summary;
  /// A backward pass, checked against the float64 backward of standard
  /// attention (dq, dk and dv); `kernel` names its launch sequence.
  bool backward = false;
};

/// The tolerance a kernel is checked at, from the element type of its q
/// parameter: 1e-2 for bf16 (8 significand bits), 5e-3 otherwise.
double getKernelTolerance(KernelOp kernel);

/// The lift's semantic check. Every cuir.kernel of `module` runs in the
/// interpreter against the built-in standard attention on random inputs:
/// ragged sizes (not multiples of any tile), grouped heads (Hq = 2 Hkv),
/// batch 2, non-causal and, if the kernel has causal masking (a `causal`
/// parameter or cuir.causal = true), causal with fewer and with more query
/// rows than keys; static sizes of the kernel's parameters are kept; at the
/// kernel's tolerance. Each kernel stops at its first failure, but every
/// kernel is run. Problems (not an attention kernel, a hazard, a mismatch
/// naming the first and the worst element) are emitted as diagnostics on the
/// kernels; on success, the runs. A cuir.launch_sequence (a backward pass)
/// runs as a whole on the same problems against the float64 backward of
/// standard attention (dq, dk, dv), as does a backward kernel in no
/// sequence; the head dimension and tolerance are those of its kernel with
/// a q parameter.
FailureOr<std::vector<SemanticRun>> checkStandardAttention(ModuleOp module);

/// One interpreter run: the problem's sizes (the head dimension is the
/// kernel's).
struct VariantProblem {
  int64_t batch = 1, headsQ = 1, headsKV = 1, seqQ = 128, seqKV = 128;
};

/// Parses "BxHqxHkvxNqxNkv" (e.g. "2x4x2x200x333"); errors say why not.
llvm::Expected<VariantProblem> parseVariantProblem(llvm::StringRef text);

struct VariantChecks {
  /// The Source CuIR: each candidate is applied to a clone of it.
  ModuleOp source;
  /// The PyTorch reference file and the Python (with torch and numpy) that
  /// runs it.
  std::string reference;
  std::string python;
  /// Problem i runs on kernel i modulo the number of kernels.
  std::vector<VariantProblem> problems;
  /// Values of the variant's parameters for the runs, overriding their
  /// `cuir.default`.
  std::map<std::string, std::string> params;
  double tolerance = 1e-2;
};

/// What an accepted candidate gives.
struct AcceptedVariant {
  /// The variant as a variant file holds it (no locations).
  std::string text;
  /// Its symbol: the spec that --transfer records for a variant file.
  std::string name;
};

/// Parses `mlir` (named transfer-round-<round>.mlir in diagnostics) and
/// verifies it; requires exactly one cuir.variant and nothing else, and a
/// value for every parameter; applies it to every kernel of a clone of the
/// source; verifies the Target CuIR; runs each problem in the interpreter
/// against the reference. Every diagnostic is captured into the verdict; an
/// accepted verdict's problems list the runs.
Verdict checkVariantCandidate(MLIRContext *context, const VariantChecks &checks,
                              llvm::StringRef mlir, unsigned round,
                              AcceptedVariant &accepted);

} // namespace mlir::cuir::lift

#endif // CUIR_LIFT_VARIANTCHECK_H
