//===- Validate.cpp - Checking a candidate lift ---------------------------===//

#include "cuir/Lift/Validate.h"

#include "DiagnosticCapture.h"

#include "cuir/Dialect/CuIR.h"
#include "cuir/Lift/VariantCheck.h"
#include "cuir/Support/Nesting.h"
#include "cuir/Support/SourceFile.h"

#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mlir::cuir;
using namespace mlir::cuir::lift;
using llvm::StringRef;

namespace {

Verdict reject(std::string stage, std::string problems) {
  return {false, std::move(stage), std::move(problems)};
}

/// Rejects with what `capture` holds, or `fallback` if it holds nothing.
Verdict reject(std::string stage, DiagnosticCapture &capture,
               StringRef fallback) {
  std::string report = capture.takeReport();
  return reject(std::move(stage), report.empty() ? fallback.str() : report);
}

/// Lets diagnostics at CUDA locations show the CUDA line, from the module's
/// copy of the source rather than from whatever the working directory holds.
void addCudaSource(llvm::SourceMgr &sourceMgr, const CandidateChecks &checks) {
  auto path = checks.sourceAttrs.getAs<StringAttr>(kSourcePathAttr);
  auto text = checks.sourceAttrs.getAs<StringAttr>(kSourceTextAttr);
  if (path && text)
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(
            text.getValue(), llvm::sys::path::filename(path.getValue())),
        llvm::SMLoc());
}

/// One run of the semantic check, as the record holds it.
DictionaryAttr recordRun(Builder &b, const SemanticRun &run) {
  const InterpreterOptions &p = run.problem;
  return b.getDictionaryAttr({
      b.getNamedAttr("kernel", b.getStringAttr(run.kernel)),
      b.getNamedAttr("B", b.getI64IntegerAttr(p.batch)),
      b.getNamedAttr("Hq", b.getI64IntegerAttr(p.headsQ)),
      b.getNamedAttr("Hkv", b.getI64IntegerAttr(p.headsKV)),
      b.getNamedAttr("Nq", b.getI64IntegerAttr(p.seqQ)),
      b.getNamedAttr("Nkv", b.getI64IntegerAttr(p.seqKV)),
      b.getNamedAttr("d", b.getI64IntegerAttr(p.headDim)),
      b.getNamedAttr("causal", b.getBoolAttr(p.causal)),
      b.getNamedAttr("seed", b.getI64IntegerAttr(p.seed)),
      b.getNamedAttr("tolerance", b.getF64FloatAttr(p.tolerance)),
      b.getNamedAttr("rel_error", b.getF64FloatAttr(run.report.relError)),
      b.getNamedAttr("max_abs_error",
                     b.getF64FloatAttr(run.report.maxAbsError)),
  });
}

/// Records on `module` that it passed `check` (with `runs`) and the
/// validation pipeline `validation` (if not empty).
void record(ModuleOp module, LiftCheck check, ArrayRef<SemanticRun> runs,
            StringRef validation) {
  Builder b(module.getContext());
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("level", b.getStringAttr(getLiftCheckName(check)))};
  if (check == LiftCheck::Semantic) {
    fields.push_back(b.getNamedAttr("reference", b.getStringAttr("builtin")));
    SmallVector<Attribute> list;
    for (const SemanticRun &run : runs)
      list.push_back(recordRun(b, run));
    fields.push_back(b.getNamedAttr("runs", b.getArrayAttr(list)));
  }
  if (!validation.empty())
    fields.push_back(b.getNamedAttr("validate", b.getStringAttr(validation)));
  module->setAttr(kLiftCheckAttr, b.getDictionaryAttr(fields));
}

/// Runs the semantic check if `checks` asks for it; a rejection, or none
/// with the runs.
std::optional<Verdict> checkSemantics(ModuleOp module,
                                      const CandidateChecks &checks,
                                      DiagnosticCapture &capture,
                                      std::vector<SemanticRun> &runs) {
  if (checks.check != LiftCheck::Semantic)
    return std::nullopt;
  FailureOr<std::vector<SemanticRun>> passed = checkStandardAttention(module);
  if (failed(passed) || capture.getNumErrors() != 0)
    return reject("the semantic check rejected it", capture,
                  "the semantic check failed without a diagnostic");
  runs = std::move(*passed);
  return std::nullopt;
}

/// The accepted verdict's problems: the checks' warnings, then the runs.
std::string describeAcceptance(DiagnosticCapture &capture,
                               ArrayRef<SemanticRun> runs) {
  std::string text = capture.takeReport();
  for (const SemanticRun &run : runs)
    text += (text.empty() ? "" : "\n") +
            ((run.backward ? "matches the backward of standard attention: "
                           : "matches standard attention: ") +
             run.summary);
  return text;
}

} // namespace

LiftCheck mlir::cuir::lift::getRecordedCheck(ModuleOp module) {
  auto record = module->getAttrOfType<DictionaryAttr>(kLiftCheckAttr);
  auto level = record ? record.getAs<StringAttr>("level") : StringAttr();
  std::optional<LiftCheck> check =
      level ? parseLiftCheck(level.getValue()) : std::nullopt;
  return check.value_or(LiftCheck::None);
}

Verdict mlir::cuir::lift::checkCandidate(MLIRContext *context,
                                         const CandidateChecks &checks,
                                         StringRef mlir, unsigned round,
                                         OwningOpRef<ModuleOp> &accepted) {
  std::string bufferName = "lift-round-" + std::to_string(round) + ".mlir";
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(mlir, bufferName), llvm::SMLoc());
  addCudaSource(sourceMgr, checks);
  DiagnosticCapture capture(context, sourceMgr);

  if (failed(checkNesting(
          *sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID()), context)))
    return reject("it does not parse", capture.takeReport());
  ParserConfig config(context, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, config);
  if (!module)
    return reject("it does not parse", capture.takeReport());
  if (failed(verify(*module)))
    return reject("it does not verify", capture.takeReport());
  if (module->getOps<KernelOp>().empty()) {
    emitError(module->getLoc())
        << "the module has no cuir.kernel; lift every __global__ function "
           "of the source into one";
    return reject("it has no kernel", capture.takeReport());
  }

  for (NamedAttribute attr : checks.sourceAttrs)
    (*module)->setAttr(attr.getName(), attr.getValue());

  if (checks.locationCheck) {
    if (failed(checks.locationCheck->run(*module)) ||
        capture.getNumErrors() != 0) {
      std::string report = capture.takeReport();
      return reject("its source locations are wrong",
                    report.empty() ? "the location check failed" : report);
    }
  }
  std::vector<SemanticRun> runs;
  if (std::optional<Verdict> rejected =
          checkSemantics(*module, checks, capture, runs))
    return *rejected;
  if (checks.validation) {
    if (failed(checks.validation->run(*module)) || capture.getNumErrors() != 0)
      return reject("the validation pipeline '" + checks.validationText +
                        "' rejected it",
                    capture, "the pipeline failed without a diagnostic");
  }
  record(*module, checks.check, runs, checks.validationText);
  accepted = std::move(module);
  return {true, "", describeAcceptance(capture, runs)};
}

Verdict mlir::cuir::lift::recheckCachedLift(ModuleOp module,
                                            const CandidateChecks &checks) {
  llvm::SourceMgr sourceMgr;
  addCudaSource(sourceMgr, checks);
  DiagnosticCapture capture(module.getContext(), sourceMgr);
  std::vector<SemanticRun> runs;
  if (std::optional<Verdict> rejected =
          checkSemantics(module, checks, capture, runs))
    return *rejected;
  // The pipeline the entry passed when it was accepted still holds.
  auto old = module->getAttrOfType<DictionaryAttr>(kLiftCheckAttr);
  auto validated = old ? old.getAs<StringAttr>("validate") : StringAttr();
  record(module, checks.check, runs, validated ? validated.getValue() : "");
  return {true, "", describeAcceptance(capture, runs)};
}

llvm::Expected<OwningOpRef<ModuleOp>>
mlir::cuir::lift::loadCachedLift(MLIRContext *context, StringRef path,
                                 std::string *textHash) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError().message());
  if (textHash)
    *textHash = computeContentHash((*buffer)->getBuffer());
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  DiagnosticCapture capture(context, sourceMgr);
  if (failed(checkNesting(
          *sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID()), context)))
    return llvm::createStringError(capture.takeReport());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(context));
  if (!module || module->getOps<KernelOp>().empty()) {
    std::string report = capture.takeReport();
    return llvm::createStringError(report.empty() ? "it holds no cuir.kernel"
                                                  : report);
  }
  return module;
}

void mlir::cuir::lift::renameSourceFile(Operation *op, StringRef from,
                                        StringRef to) {
  if (from == to)
    return;
  AttrTypeReplacer replacer;
  replacer.addReplacement(
      [&](FileLineColRange loc) -> std::optional<Attribute> {
        if (loc.getFilename() != from)
          return std::nullopt;
        return FileLineColRange::get(StringAttr::get(loc.getContext(), to),
                                     loc.getStartLine(), loc.getStartColumn(),
                                     loc.getEndLine(), loc.getEndColumn());
      });
  replacer.recursivelyReplaceElementsIn(op, /*replaceAttrs=*/false,
                                        /*replaceLocs=*/true,
                                        /*replaceTypes=*/false);
}
