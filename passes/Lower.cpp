//===- Lower.cpp - The --lower pass ---------------------------------------===//

#include "cuir/Lower/Lower.h"
#include "cuir/Lift/LiftCache.h"
#include "cuir/Passes/Passes.h"
#include "cuir/Support/Nesting.h"
#include "cuir/Support/SourceFile.h"

#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace mlir::cuir {
#define GEN_PASS_DEF_LOWER
#include "cuir/Passes/Passes.h.inc"
} // namespace mlir::cuir

using namespace mlir;
using namespace mlir::cuir;

namespace {

class LowerPass : public cuir::impl::LowerBase<LowerPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Location loc = module.getLoc();
    LoweringOptions opt;
    opt.output =
        output.empty() ? getDefaultLowerOutput().str() : std::string(output);
    if (opt.output.empty()) {
      emitError(loc) << "--lower needs an output: --lower=output=out/x.cu, or "
                        "cuir-opt ... -o out/x.cu";
      return signalPassFailure();
    }
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
    llvm::errs() << "lower: wrote " << opt.output << " and its .diff"
                 << (opt.compile ? ", PTX, cubins and library" : "") << "\n";
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
