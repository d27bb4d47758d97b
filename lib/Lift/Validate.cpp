//===- Validate.cpp - Checking a candidate lift ---------------------------===//

#include "cuir/Lift/Validate.h"

#include "DiagnosticCapture.h"

#include "cuir/Dialect/CuIR.h"
#include "cuir/Support/Nesting.h"
#include "cuir/Support/SourceFile.h"

#include "mlir/IR/AttrTypeSubElements.h"
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

} // namespace

Verdict mlir::cuir::lift::checkCandidate(MLIRContext *context,
                                         const CandidateChecks &checks,
                                         StringRef mlir, unsigned round,
                                         OwningOpRef<ModuleOp> &accepted) {
  std::string bufferName = "lift-round-" + std::to_string(round) + ".mlir";
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(mlir, bufferName), llvm::SMLoc());
  // Diagnostics at CUDA locations show the CUDA line, from the module's copy
  // of the source rather than from whatever the working directory holds.
  auto path = checks.sourceAttrs.getAs<StringAttr>(kSourcePathAttr);
  auto text = checks.sourceAttrs.getAs<StringAttr>(kSourceTextAttr);
  if (path && text)
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(
            text.getValue(), llvm::sys::path::filename(path.getValue())),
        llvm::SMLoc());
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
  if (checks.validation) {
    if (failed(checks.validation->run(*module)) ||
        capture.getNumErrors() != 0) {
      std::string report = capture.takeReport();
      return reject(
          "the validation pipeline '" + checks.validationText + "' rejected it",
          report.empty() ? "the pipeline failed without a diagnostic" : report);
    }
  }
  accepted = std::move(module);
  return {true, "", capture.takeReport()};
}

llvm::Expected<OwningOpRef<ModuleOp>>
mlir::cuir::lift::loadCachedLift(MLIRContext *context, StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError("cannot read '" + path +
                                   "': " + buffer.getError().message());
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
