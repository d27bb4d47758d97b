//===- DiagnosticCapture.h - Diagnostics as feedback ------------*- C++ -*-===//
//
// Private to lib/Lift: the checks of a candidate (a lift, a variant) collect
// every diagnostic as text for the model instead of printing it.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_LIB_LIFT_DIAGNOSTICCAPTURE_H
#define CUIR_LIB_LIFT_DIAGNOSTICCAPTURE_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::cuir::lift {

/// Feedback beyond this many characters is cut: the model needs the first
/// problems, not every consequence of them.
inline constexpr size_t kMaxReportChars = 16000;

/// Captures every diagnostic emitted while it lives, rendered against the
/// candidate's text (with the offending line and a caret), instead of letting
/// it reach cuir-opt's own handler. Ops are not printed along with their
/// diagnostics: a kernel's generic form would drown the report.
class DiagnosticCapture {
public:
  DiagnosticCapture(MLIRContext *context, llvm::SourceMgr &sourceMgr)
      : context(context), os(text),
        printOps(context->shouldPrintOpOnDiagnostic()),
        renderer(sourceMgr, context, os),
        counter(context, [this](Diagnostic &diag) {
          if (diag.getSeverity() == DiagnosticSeverity::Error)
            ++errors;
          ++count;
          return failure(); // On to the renderer.
        }) {
    context->printOpOnDiagnostic(false);
  }
  ~DiagnosticCapture() { context->printOpOnDiagnostic(printOps); }

  unsigned getNumErrors() const { return errors; }

  std::string takeReport() {
    std::string report = StringRef(text).rtrim().str();
    if (report.size() > kMaxReportChars) {
      report.resize(kMaxReportChars);
      report += "\n... (cut; " + std::to_string(count) + " diagnostics in all)";
    }
    return report;
  }

private:
  MLIRContext *context;
  std::string text;
  llvm::raw_string_ostream os;
  bool printOps;
  SourceMgrDiagnosticHandler renderer;
  ScopedDiagnosticHandler counter;
  unsigned errors = 0;
  unsigned count = 0;
};

} // namespace mlir::cuir::lift

#endif // CUIR_LIB_LIFT_DIAGNOSTICCAPTURE_H
