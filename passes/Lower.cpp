//===- Lower.cpp - The --lower pass ---------------------------------------===//

#include "cuir/Lower/Lower.h"
#include "cuir/Lift/LiftCache.h"
#include "cuir/Lift/Validate.h"
#include "cuir/Passes/Passes.h"

#include "ShortNames.h"
#include "cuir/Support/OutputFiles.h"
#include "cuir/Support/SourceFile.h"

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
      emitError(loc) << "--" << getArgument() << " needs an output: --"
                     << getArgument()
                     << "=output=out/x.cu, or cuir-opt ... -o out/x.cu";
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
      if (failed(checkArchs(module, opt.archs)))
        return signalPassFailure();
    } else if (specific) {
      opt.archs = {*specific};
    }
    opt.compile = compile;
    opt.keepLLVMIR = keepLLVMIR;
    opt.clang = clang;
    opt.cudaPath = cudaPath;
    opt.includeDirs.assign(includeDirs.begin(), includeDirs.end());
    opt.sourceRoot = sourceRoot;
    // A missing tool is reported before any work (and found again when
    // the outputs are written).
    if (failed(findCompileTools(opt, loc)))
      return signalPassFailure();

    OwningOpRef<ModuleOp> source = loadSource(module, opt);
    if (!source)
      return signalPassFailure();
    FailureOr<LoweredKernel> lowered = lowerToSource(module, *source, opt);
    if (failed(lowered) || failed(writeAndCompile(*lowered, opt, loc)))
      return signalPassFailure();
    if (stagingDir.empty())
      llvm::errs() << describeOutputs() << "\n";
  }

  /// The number of a CUDA arch ("sm_80" -> 80, "sm_90a" -> 90), if it is one.
  static std::optional<unsigned> archNumber(StringRef arch) {
    unsigned number;
    if (!arch.consume_front("sm_"))
      return std::nullopt;
    arch.consume_back("a");
    if (arch.getAsInteger(10, number))
      return std::nullopt;
    return number;
  }

  /// Every requested arch is a CUDA arch, at least that of each kernel (the
  /// instructions it is written with), before clang or ptxas are run.
  static LogicalResult checkArchs(ModuleOp module,
                                  ArrayRef<std::string> requested) {
    for (const std::string &arch : requested) {
      std::optional<unsigned> number = archNumber(arch);
      if (!number)
        return emitError(module.getLoc())
               << "archs: '" << arch
               << "' is not a CUDA arch (sm_80, sm_90, sm_90a, ...)";
      for (KernelOp k : module.getOps<KernelOp>()) {
        std::optional<unsigned> least = archNumber(k.getArch());
        if (least && *number < *least)
          return emitError(k.getLoc())
                 << "the kernel is written for " << k.getArch()
                 << " and later; --lower cannot compile it for " << arch;
      }
    }
    return success();
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

  /// The CUDA source the pass writes: <stem>.cu beside its output.
  std::string writtenSource() const {
    if (output.empty())
      return "";
    llvm::SmallString<256> cu(output);
    llvm::sys::path::replace_extension(cu, ".cu");
    return cu.str().str();
  }

  std::string describeOutputs() const {
    return "lower: wrote " + writtenSource() + " and its .diff" +
           (compile ? ", PTX, cubins and library" : "");
  }

private:
  /// The Source CuIR: the given file, else the one the lift of this module
  /// recorded, else the lift cache entry of the module's CUDA source.
  OwningOpRef<ModuleOp> loadSource(ModuleOp module, LoweringOptions &opt) {
    Location loc = module.getLoc();
    // The CUDA source is next to the file the module was lifted from, not
    // necessarily next to its Source CuIR (a cache entry).
    // A path without a directory (`cuir-opt k.cu`) is in the working one.
    auto srcPath = module->getAttrOfType<StringAttr>(kSourcePathAttr);
    if (opt.sourceRoot.empty() && srcPath) {
      StringRef dir = llvm::sys::path::parent_path(srcPath.getValue());
      opt.sourceRoot = dir.empty() ? "." : dir.str();
    }
    std::string file = sourceCuIR, expectedHash;
    bool ofThisLift = file.empty();
    if (ofThisLift) {
      if (auto lifted =
              module->getAttrOfType<DictionaryAttr>(lift::kSourceCuIRAttr)) {
        if (failed(findLiftedSource(loc, lifted, file, expectedHash)))
          return nullptr;
      } else if (failed(findCachedSource(module, file))) {
        return nullptr;
      }
    }
    if (opt.sourceRoot.empty())
      opt.sourceRoot = llvm::sys::path::parent_path(file).str();
    OwningOpRef<ModuleOp> source = parseSourceCuIR(loc, file, expectedHash);
    if (!source)
      return nullptr;
    // The lift of a renamed copy names the copy; its Source CuIR, the file
    // it was stored for.
    if (ofThisLift)
      if (FileLineColRange from = firstKernelRange(*source),
          to = firstKernelRange(module);
          from && to && from.getFilename() != to.getFilename())
        lift::renameSourceFile(*source, from.getFilename(), to.getFilename());
    setSourceCheck(module, file, opt);
    return source;
  }

  /// The first file range in the location of the first kernel of
  /// `module`, or null.
  static FileLineColRange firstKernelRange(ModuleOp module) {
    FileLineColRange range;
    for (KernelOp kernel : module.getOps<KernelOp>()) {
      kernel.getLoc()->walk([&](Location l) {
        range = dyn_cast<FileLineColRange>(l);
        return range ? WalkResult::interrupt() : WalkResult::advance();
      });
      break;
    }
    return range;
  }

  /// Makes lowering check that the CUDA source it reads is the text the
  /// kernels were lifted from, where that text's lift key is known: the
  /// module's own source text, else the key of the lift cache entry that
  /// `sourceFile` is (bundled, or a user entry `<key>.mlir`).
  static void setSourceCheck(ModuleOp module, StringRef sourceFile,
                             LoweringOptions &opt) {
    std::string key;
    if (auto text = module->getAttrOfType<StringAttr>(kSourceTextAttr))
      key = lift::computeLiftKey(CuIRDialect::kVersion, text.getValue());
    else
      key = findCacheKeyOf(sourceFile);
    if (key.empty())
      return;
    opt.verifySource = [key](Location loc, StringRef path,
                             StringRef text) -> LogicalResult {
      std::string actual = lift::computeLiftKey(CuIRDialect::kVersion, text);
      if (actual == key)
        return success();
      return emitError(loc)
             << "the CUDA source '" << path
             << "' is not the text this kernel was lifted from: it changed "
                "after the lift (its lift key is "
             << actual << ", the lift's is " << key
             << "). Lift it again (--lift), or lower against the source "
                "that was lifted (source-root=)";
    };
  }

  /// The lift key of the lift cache entry stored at `file`, or "".
  static std::string findCacheKeyOf(StringRef file) {
    if (auto index = lift::LiftCacheIndex::load(lift::getBundledIndexPath())) {
      for (const lift::BundledLift &entry : index->getEntries())
        if (llvm::sys::fs::equivalent(entry.cuirPath, file))
          return entry.key;
    } else {
      llvm::consumeError(index.takeError());
    }
    StringRef stem = llvm::sys::path::stem(file);
    if (llvm::sys::path::extension(file) == ".mlir" && stem.size() == 64 &&
        llvm::all_of(stem, llvm::isHexDigit))
      return stem.str();
    return "";
  }

  /// Reads and parses `file`, whose text must have the SHA-256
  /// `expectedHash` (if not empty).
  OwningOpRef<ModuleOp> parseSourceCuIR(Location loc, StringRef file,
                                        StringRef expectedHash) {
    std::string hash;
    llvm::Expected<OwningOpRef<ModuleOp>> src =
        lift::loadCachedLift(loc.getContext(), file, &hash);
    if (!expectedHash.empty() && !hash.empty() && hash != expectedHash) {
      llvm::consumeError(src.takeError());
      emitError(loc) << "the Source CuIR '" << file
                     << "' changed after the lift of this module (its "
                        "SHA-256 is "
                     << hash << ", the lift recorded " << expectedHash
                     << "): lift again, or pass source-cuir=<file>";
      return nullptr;
    }
    if (!src) {
      emitError(loc) << "cannot read the Source CuIR '" << file
                     << "': " << llvm::toString(src.takeError());
      return nullptr;
    }
    return std::move(*src);
  }

  /// The file the lift recorded on the module (lift::kSourceCuIRAttr).
  LogicalResult findLiftedSource(Location loc, DictionaryAttr lifted,
                                 std::string &file, std::string &hash) {
    if (auto path = lifted.getAs<StringAttr>("path");
        path && !path.getValue().empty()) {
      file = path.getValue().str();
      if (auto sha256 = lifted.getAs<StringAttr>("sha256"))
        hash = sha256.getValue().str();
      return success();
    }
    auto unstored = lifted.getAs<StringAttr>("unstored");
    InFlightDiagnostic diag = emitError(loc);
    diag << "the lift of this module did not store its Source CuIR";
    if (unstored && !unstored.getValue().empty())
      diag << " (" << unstored.getValue() << ")";
    diag << ", and --lower diffs against it: pass source-cuir=<file>, or "
            "lift with a lift cache that can store it (cache-dir=)";
    return failure();
  }

  /// The lift cache entry of the module's CUDA source: bundled, else in the
  /// default user cache.
  LogicalResult findCachedSource(ModuleOp module, std::string &file) {
    Location loc = module.getLoc();
    auto text = module->getAttrOfType<StringAttr>(kSourceTextAttr);
    if (!text) {
      emitError(loc) << "--lower needs the Source CuIR to diff against: "
                        "pass source-cuir=<file>, or lower a module lifted "
                        "from a .cu file (--lift)";
      return failure();
    }
    std::string key =
        lift::computeLiftKey(CuIRDialect::kVersion, text.getValue());
    StringRef indexPath = lift::getBundledIndexPath();
    if (auto index = lift::LiftCacheIndex::load(indexPath)) {
      if (const lift::BundledLift *entry = index->lookup(key)) {
        file = entry->cuirPath;
        return success();
      }
    } else {
      llvm::consumeError(index.takeError());
    }
    std::string userDir = lift::getDefaultUserCacheDir();
    std::string user = lift::getUserCachePath(userDir, key);
    if (!userDir.empty() && llvm::sys::fs::exists(user)) {
      file = user;
      return success();
    }
    emitError(loc) << "no Source CuIR for this kernel: the module records "
                      "no lift (cuir.source_cuir), and the lift cache has no "
                      "entry for its source (key "
                   << key << ") in the bundled index '" << indexPath
                   << "' or the user cache '"
                   << (userDir.empty() ? "(none)" : userDir)
                   << "': pass source-cuir=<file>";
    return failure();
  }
};

} // namespace

LogicalResult mlir::cuir::stageLowerOutputs(OpPassManager &pm,
                                            StringRef defaultOutput,
                                            OutputTransaction &outputs,
                                            std::vector<std::string> &done,
                                            std::vector<std::string> *written) {
  for (Pass &pass : pm.getPasses()) {
    if (pass.getTypeID() != TypeID::get<LowerPass>())
      continue;
    auto &lower = static_cast<LowerPass &>(pass);
    if (failed(lower.stage(defaultOutput, outputs, done)))
      return failure();
    if (written)
      written->push_back(lower.writtenSource());
  }
  return success();
}

void mlir::cuir::registerLowerShortName() {
  registerShortName<LowerPass>("lower");
}
