//===- Interpret.cpp - Run kernels and compare them with a reference ------===//

#include "cuir/Interpreter/Interpreter.h"
#include "cuir/Passes/Passes.h"

namespace mlir::cuir {
#define GEN_PASS_DEF_INTERPRET
#include "cuir/Passes/Passes.h.inc"
} // namespace mlir::cuir

using namespace mlir;
using namespace mlir::cuir;

namespace {

class InterpretPass : public cuir::impl::InterpretBase<InterpretPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    InterpreterOptions opt;
    opt.batch = batch;
    opt.headsQ = headsQ;
    opt.headsKV = headsKV;
    opt.seqQ = seqQ;
    opt.seqKV = seqKV;
    opt.headDim = headDim;
    opt.causal = causal;
    opt.seed = seed;
    opt.sampleBlocks = sampleBlocks;
    opt.tolerance = tolerance;
    opt.reference = reference;
    opt.python = python;
    opt.dumpDir = dump;
    SmallVector<StringRef> entries;
    StringRef(params).split(entries, ';', -1, /*KeepEmpty=*/false);
    for (StringRef entry : entries) {
      auto [name, value] = entry.split('=');
      if (name.trim().empty() || value.trim().empty()) {
        getOperation().emitError()
            << "malformed params entry '" << entry
            << "'; expected name=value";
        return signalPassFailure();
      }
      opt.params[name.trim().str()] = value.trim().str();
    }

    // Without a kernel name, run the instantiations that fit the problem
    // (head dim, causal), as the source kernel's dispatch would pick them.
    bool ran = false;
    std::string notRun;
    for (KernelOp kernel : getOperation().getOps<KernelOp>()) {
      if (!kernelName.empty() && kernel.getSymName() != kernelName)
        continue;
      std::string why;
      if (kernelName.empty() && !kernelFits(kernel, opt, why)) {
        notRun += "; @" + kernel.getSymName().str() + ": " + why;
        continue;
      }
      ran = true;
      FailureOr<InterpreterReport> report = interpretKernel(kernel, opt);
      if (failed(report))
        return signalPassFailure();
      std::string summary = describeRun(kernel, opt, *report);
      if (!report->passed) {
        InFlightDiagnostic diag = mlir::emitError(kernel.getLoc())
                                  << "output mismatch: " << summary;
        if (!report->firstMismatch.empty())
          diag << "; first mismatch at " << report->firstMismatch;
        if (!report->worstMismatch.empty())
          diag << "; largest error at " << report->worstMismatch;
        return signalPassFailure();
      }
      mlir::emitRemark(kernel.getLoc())
          << "matches the reference: " << summary;
    }
    if (!ran) {
      InFlightDiagnostic diag = mlir::emitError(getOperation().getLoc());
      if (!kernelName.empty())
        diag << "no cuir.kernel named '" << kernelName << "'";
      else if (notRun.empty())
        diag << "the module has no cuir.kernel";
      else
        diag << "no kernel of the module fits the problem" << notRun;
      signalPassFailure();
    }
  }
};

} // namespace
