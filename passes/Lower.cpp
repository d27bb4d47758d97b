//===- Lower.cpp - The --lower pass ---------------------------------------===//

#include "cuir/Lower/Lower.h"
#include "cuir/Lift/LiftCache.h"
#include "cuir/Passes/Passes.h"
#include "cuir/Support/Nesting.h"
#include "cuir/Support/OutputFiles.h"
#include "cuir/Support/SourceFile.h"

#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

namespace mlir::cuir {
#define GEN_PASS_DEF_LOWER
#include "cuir/Passes/Passes.h.inc"
} // namespace mlir::cuir

using namespace mlir;
using namespace mlir::cuir;

namespace {

/// Whether `op` or an op nested in it names a line of a CUDA source (not
/// only of the .mlir file it was parsed from).
bool hasSourceLocation(Operation *op) {
  WalkResult found = op->walk([](Operation *nested) {
    WalkResult inLoc = nested->getLoc()->walk([](Location l) {
      auto file = dyn_cast<FileLineColRange>(l);
      return file && isCudaSourcePath(file.getFilename())
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    return inLoc.wasInterrupted() ? WalkResult::interrupt()
                                  : WalkResult::advance();
  });
  return found.wasInterrupted();
}

/// Lowering finds the source lines to patch through the lift's locations; a
/// Target CuIR printed without them cannot be lowered.
LogicalResult checkSourceLocations(ModuleOp module) {
  for (KernelOp kernel : module.getOps<KernelOp>()) {
    if (hasSourceLocation(kernel))
      continue;
    return emitError(kernel.getLoc())
           << "cannot lower @" << kernel.getSymName()
           << ": its ops carry no source locations, through which lowering "
              "finds the CUDA lines to patch; it was printed without them. "
              "Print lifted CuIR with -mlir-print-debuginfo (cuir-opt does "
              "by default when its input has locations) and transfer again";
  }
  return success();
}

class LowerPass : public cuir::impl::LowerBase<LowerPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Location loc = module.getLoc();
    LoweringOptions opt;
    opt.output = output;
    opt.stagingDir = stagingDir;
    if (opt.output.empty()) {
      emitError(loc) << "--lower needs an output: --lower=output=out/x.cu, or "
                        "cuir-opt ... -o out/x.cu";
      return signalPassFailure();
    }
    if (failed(checkSourceLocations(module)))
      return signalPassFailure();
    // A kernel written for an arch-specific target (sm_90a: wgmma,
    // setmaxnreg) runs on that arch only.
    std::optional<std::string> specific;
    Location specificLoc = loc;
    for (KernelOp k : module.getOps<KernelOp>())
      if (k.getArch().ends_with("a")) {
        specific = k.getArch().str();
        specificLoc = k.getLoc();
      }
    if (!archs.empty()) {
      opt.archs.assign(archs.begin(), archs.end());
      if (specific && (opt.archs.size() != 1 || opt.archs[0] != *specific)) {
        emitError(specificLoc)
            << "the kernel is written for " << *specific
            << " alone (arch-specific instructions); --lower "
               "cannot compile it for archs="
            << llvm::join(opt.archs, ",");
        return signalPassFailure();
      }
    } else if (specific) {
      opt.archs = {*specific};
    }
    opt.compile = compile;
    opt.keepLLVMIR = keepLLVMIR;
    opt.clang = clang;
    opt.cudaPath = cudaPath;
    opt.includeDirs.assign(includeDirs.begin(), includeDirs.end());
    opt.sourceRoot = sourceRoot;

    OwningOpRef<ModuleOp> source = loadSource(module, opt);
    if (!source)
      return signalPassFailure();
    FailureOr<LoweredKernel> lowered = lowerToSource(module, *source, opt);
    if (failed(lowered) || failed(writeAndCompile(*lowered, opt, loc)))
      return signalPassFailure();
    if (stagingDir.empty())
      llvm::errs() << describeOutputs() << "\n";
  }

  /// Set by stageLowerOutputs: the driver moves the outputs into place.
  std::string stagingDir;

  /// Sets the output (`defaultOutput` if none) and stages a directory for
  /// it in `outputs`; `done` receives the line to print once it is in place.
  LogicalResult stage(StringRef defaultOutput, OutputTransaction &outputs,
                      std::vector<std::string> &done) {
    if (output.empty())
      output = defaultOutput.str();
    if (output.empty())
      return success(); // runOnOperation reports it.
    StringRef out = output;
    llvm::Expected<std::string> dir = outputs.stageDirectory(
        llvm::sys::path::parent_path(out), llvm::sys::path::stem(out));
    if (!dir) {
      llvm::WithColor::error(llvm::errs(), "cuir-opt")
          << llvm::toString(dir.takeError()) << "\n";
      return failure();
    }
    stagingDir = *dir;
    done.push_back(describeOutputs());
    return success();
  }

  std::string describeOutputs() const {
    return "lower: wrote " + output + " and its .diff" +
           (compile ? ", PTX, cubins and library" : "");
  }

private:
  /// The Source CuIR: the given file, or the lift cache entry of the
  /// module's CUDA source.
  OwningOpRef<ModuleOp> loadSource(ModuleOp module, LoweringOptions &opt) {
    Location loc = module.getLoc();
    std::string file = sourceCuIR;
    if (file.empty()) {
      auto text = module->getAttrOfType<StringAttr>(kSourceTextAttr);
      auto srcPath = module->getAttrOfType<StringAttr>(kSourcePathAttr);
      if (!text) {
        emitError(loc) << "--lower needs the Source CuIR to diff against: "
                          "pass source-cuir=<file>, or lower a module lifted "
                          "from a .cu file (--lift)";
        return nullptr;
      }
      if (opt.sourceRoot.empty() && srcPath)
        opt.sourceRoot = llvm::sys::path::parent_path(srcPath.getValue()).str();
      std::string key =
          lift::computeLiftKey(CuIRDialect::kVersion, text.getValue());
      if (auto index =
              lift::LiftCacheIndex::load(lift::getBundledIndexPath())) {
        if (const lift::BundledLift *entry = index->lookup(key)) {
          SmallString<256> p(entry->cuirPath);
          if (!llvm::sys::path::is_absolute(p)) {
            p = llvm::sys::path::parent_path(index->getPath());
            llvm::sys::path::append(p, entry->cuirPath);
          }
          file = std::string(p);
        }
      } else {
        llvm::consumeError(index.takeError());
      }
      if (file.empty()) {
        std::string user =
            lift::getUserCachePath(lift::getDefaultUserCacheDir(), key);
        if (llvm::sys::fs::exists(user))
          file = user;
      }
      if (file.empty()) {
        emitError(loc) << "no Source CuIR for this kernel in the lift cache: "
                          "pass source-cuir=<file>";
        return nullptr;
      }
    }
    if (opt.sourceRoot.empty())
      opt.sourceRoot = llvm::sys::path::parent_path(file).str();
    if (failed(checkFileNesting(file, module.getContext())))
      return nullptr;
    ParserConfig config(module.getContext());
    OwningOpRef<ModuleOp> src = parseSourceFile<ModuleOp>(file, config);
    if (!src)
      emitError(loc) << "cannot read the Source CuIR '" << file << "'";
    return src;
  }
};

} // namespace

LogicalResult mlir::cuir::stageLowerOutputs(OpPassManager &pm,
                                            StringRef defaultOutput,
                                            OutputTransaction &outputs,
                                            std::vector<std::string> &done) {
  for (Pass &pass : pm.getPasses()) {
    if (pass.getTypeID() != TypeID::get<LowerPass>())
      continue;
    if (failed(static_cast<LowerPass &>(pass).stage(defaultOutput, outputs,
                                                    done)))
      return failure();
  }
  return success();
}
