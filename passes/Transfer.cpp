//===- Transfer.cpp - The --transfer pass ---------------------------------===//
//
// Applies a variant (built-in, composition, variant file) to every kernel of
// the module. With `llm:<reference.py>`, the variant is written by an LLM in
// a closed loop that checks each answer with the interpreter against the
// PyTorch reference (see docs/Lift.md).
//
//===----------------------------------------------------------------------===//

#include "cuir/Passes/Passes.h"

#include "LLMPassSupport.h"
#include "ShortNames.h"

#include "cuir/LLM/Client.h"
#include "cuir/Lift/LiftCache.h"
#include "cuir/Lift/Lifter.h"
#include "cuir/Lift/Prompt.h"
#include "cuir/Lift/VariantCheck.h"
#include "cuir/Support/Nesting.h"
#include "cuir/Support/OptionLocation.h"
#include "cuir/Support/ParamValue.h"
#include "cuir/Support/Toolchain.h"
#include "cuir/Transfer/AttentionAnalysis.h"
#include "cuir/Transfer/Transfer.h"
#include "cuir/Variants/Variants.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::cuir {
#define GEN_PASS_DEF_TRANSFER
#include "cuir/Passes/Passes.h.inc"
} // namespace mlir::cuir

using namespace mlir;
using namespace mlir::cuir;
using llvm::StringRef;

namespace {

constexpr StringRef kLLMPrefix = "llm:";

/// Progress lines on stderr.
void progress(const llvm::Twine &line) {
  llvm::errs() << "transfer: " << line << "\n";
  llvm::errs().flush();
}

/// The one cuir.variant of a parsed variant file, cloned into `scratch`.
FailureOr<VariantOp> takeVariant(ModuleOp file, StringRef name,
                                 ModuleOp scratch, Location loc) {
  auto variants = llvm::to_vector(file.getOps<VariantOp>());
  if (variants.size() != 1)
    return emitError(loc) << "variant file '" << name << "' must hold "
                          << "exactly one cuir.variant, found "
                          << variants.size();
  auto clone = cast<VariantOp>(variants.front()->clone());
  scratch.getBody()->push_back(clone);
  return clone;
}

class TransferPass : public cuir::impl::TransferBase<TransferPass> {
public:
  using Base::Base;

  /// Accepts `--transfer=prefixlm,softcap` as well as the option form
  /// `--transfer="variant=..."`, and `--transfer="llm:ref.py opt=..."`: a
  /// spec of the LLM followed by options.
  LogicalResult
  initializeOptions(StringRef options,
                    function_ref<LogicalResult(const Twine &)> errorHandler)
      override {
    optionsText = options.str();
    StringRef trimmed = options.trim();
    specOffset = trimmed.data() - options.data();
    if (trimmed.empty() || trimmed.starts_with("variant=")) {
      specOffset = findOptionValue(options, "variant").value_or(0);
      return Pass::initializeOptions(options, errorHandler);
    }
    if (trimmed.starts_with(kLLMPrefix)) {
      auto [spec, rest] = trimmed.split(' ');
      if (failed(Pass::initializeOptions(rest, errorHandler)))
        return failure();
      variant = spec.str();
      return success();
    }
    variant = trimmed.str();
    return success();
  }

  /// A spec of built-ins that cannot be built, or a variant file that does
  /// not exist, fails the pipeline before any pass runs, at the option.
  LogicalResult initialize(MLIRContext *context) override {
    StringRef spec = variant;
    if (spec.empty() || spec.starts_with(kLLMPrefix))
      return success();
    if (spec.ends_with(".mlir"))
      return checkVariantFile(spec, getSpecLoc(context));
    if (spec.ends_with(".py"))
      return emitError(getSpecLoc(context))
             << "'" << spec << "' is a PyTorch file, not a variant spec: "
             << "--" << getArgument() << "=llm:" << spec
             << " has an LLM write the variant from it";
    OwningOpRef<ModuleOp> scratch = ModuleOp::create(UnknownLoc::get(context));
    return buildVariantFromSpec(spec, *scratch, getSpecLoc(context));
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Location loc = module.getLoc();
    if (variant.empty()) {
      StringRef flag = getArgument();
      emitError(loc) << "--" << flag << " needs a variant: --" << flag
                     << "=prefixlm, a composition such as --" << flag
                     << "=prefixlm,softcap, a variant file, or "
                        "llm:<reference.py>";
      return signalPassFailure();
    }
    if (StringRef(variant).starts_with(kLLMPrefix))
      return runThroughLLM(StringRef(variant).drop_front(kLLMPrefix.size()));
    // Variants live in a scratch module: the kernel's module stays clean.
    OwningOpRef<ModuleOp> scratch = ModuleOp::create(loc);
    FailureOr<VariantOp> v = loadVariant(*scratch, getSpecLoc(&getContext()));
    if (failed(v))
      return signalPassFailure();
    // A variant file is known by its symbol; a built-in by its spec.
    std::string spec = StringRef(variant).ends_with(".mlir")
                           ? v->getSymName().str()
                           : std::string(variant);
    if (failed(applyVariant(*v, spec)))
      signalPassFailure();
  }

private:
  friend llm::ClientOptions
  mlir::cuir::getLLMClientOptions<>(const TransferPass &);

  /// Where errors in the options point: the option as written, at the
  /// variant spec or at the value of `key`.
  Location getSpecLoc(MLIRContext *context) const {
    return getOptionLoc(context, getArgument(), optionsText, specOffset);
  }
  Location getOptionValueLoc(MLIRContext *context, StringRef key) const {
    return getOptionLoc(context, getArgument(), optionsText,
                        findOptionValue(optionsText, key).value_or(0));
  }

  std::string optionsText;
  size_t specOffset = 0;

  LogicalResult applyVariant(VariantOp v, StringRef spec) {
    ModuleOp module = getOperation();
    bool any = false;
    for (KernelOp kernel :
         llvm::make_early_inc_range(module.getOps<KernelOp>())) {
      any = true;
      if (failed(transferKernel(kernel, v, spec)))
        return failure();
    }
    if (!any)
      return emitError(module.getLoc())
             << "the module has no cuir.kernel to transfer (lift a CUDA "
                "kernel first: --lift)";
    return success();
  }

  FailureOr<VariantOp> loadVariant(ModuleOp scratch, Location loc) {
    StringRef spec = variant;
    if (!spec.ends_with(".mlir"))
      return buildVariantFromSpec(spec, scratch, loc);
    if (failed(checkVariantFile(spec, loc)))
      return failure();
    if (failed(checkFileNesting(spec, &getContext())))
      return failure();
    ParserConfig config(&getContext());
    OwningOpRef<ModuleOp> file = parseSourceFile<ModuleOp>(spec, config);
    if (!file)
      return failure();
    return takeVariant(*file, spec, scratch, loc);
  }

  static LogicalResult checkVariantFile(StringRef path, Location loc) {
    if (!llvm::sys::fs::exists(path))
      return emitError(loc) << "variant file '" << path << "' does not exist";
    if (llvm::sys::fs::is_directory(path))
      return emitError(loc) << "variant file '" << path << "' is a directory";
    return success();
  }

  void runThroughLLM(StringRef referencePath);
  LogicalResult transferThroughLLM(StringRef referencePath,
                                   StringRef referenceText,
                                   const lift::VariantChecks &checks);
  FailureOr<std::unique_ptr<llm::Client>>
  createClient(StringRef referencePath, StringRef userCacheDir, StringRef key);
  LogicalResult storeAndApply(StringRef text, StringRef cachePath,
                              ModuleOp scratch);
  LogicalResult checkSourceCuIR(Location loc);
  FailureOr<lift::VariantChecks> getChecks(StringRef referencePath,
                                           Location loc);
};

/// Fails, with a diagnostic, for modules that no answer could be applied to,
/// before any request.
LogicalResult TransferPass::checkSourceCuIR(Location loc) {
  ModuleOp module = getOperation();
  bool any = false;
  for (KernelOp kernel : module.getOps<KernelOp>()) {
    any = true;
    if (auto done = kernel->getAttrOfType<StringAttr>(CuIRDialect::VariantAttrHelper::getNameStr()))
      return kernel.emitError()
             << "already computes the variant '" << done.getValue()
             << "'; --transfer=llm: needs the Source CuIR";
    if (failed(analyzeAttention(kernel)))
      return failure();
  }
  if (!any)
    return emitError(loc) << "the module has no cuir.kernel to transfer "
                             "(lift a CUDA kernel first: --lift)";
  return success();
}

FailureOr<lift::VariantChecks> TransferPass::getChecks(StringRef referencePath,
                                                       Location loc) {
  lift::VariantChecks checks;
  checks.source = getOperation();
  checks.reference = referencePath.str();
  llvm::Expected<std::string> python =
      findPythonWithTorch(this->python, ToolEnvironment::fromProcess());
  if (!python)
    return emitError(getOptionValueLoc(&getContext(), "python"))
           << "the PyTorch reference needs Python with torch: "
           << llvm::toString(python.takeError());
  checks.python = *python;
  SmallVector<std::string> shapes(checkShapes.begin(), checkShapes.end());
  if (shapes.empty())
    shapes = {"1x4x2x200x333", "2x2x1x257x130"};
  for (const std::string &shape : shapes) {
    llvm::Expected<lift::VariantProblem> problem =
        lift::parseVariantProblem(shape);
    if (!problem)
      return emitError(loc)
             << "invalid check-shapes: " << llvm::toString(problem.takeError());
    checks.problems.push_back(*problem);
  }
  TextError error;
  if (failed(parseParamList(checkParams, checks.params, error)))
    return emitError(shiftColumn(
               getOptionValueLoc(&getContext(), "check-params"), error.offset))
           << "check-params: " << error.message;
  return checks;
}

/// The PyTorch reference's text, or an error if it cannot be read or
/// defines no `reference`.
FailureOr<std::string> readReference(StringRef referencePath,
                                     Location loc) {
  auto buffer = llvm::MemoryBuffer::getFile(referencePath, /*IsText=*/true);
  if (!buffer)
    return emitError(loc) << "cannot read the PyTorch reference '"
                          << referencePath
                          << "': " << buffer.getError().message();
  StringRef text = (*buffer)->getBuffer();
  if (!text.contains("def reference("))
    return emitError(loc) << "the PyTorch reference '" << referencePath
                          << "' defines no function 'reference(q, k, v, "
                             "scale, **params)' (see docs/Interpreter.md)";
  return text.str();
}

/// The Source CuIR as the model sees it and as the cache key hashes it.
struct PrintedSource {
  SmallVector<std::string> kernelNames;
  std::string firstKernel; // in a module of its own
  std::string kernels;     // every kernel, without the module's attributes
};

/// Prints the module's kernels without locations, which say nothing about
/// the semantics, in the custom form. The flags are explicit: cuir-opt's
/// printing options must not change the key.
PrintedSource printSource(ModuleOp module) {
  Location loc = module.getLoc();
  OpPrintingFlags flags =
      OpPrintingFlags().enableDebugInfo(false).printGenericOpForm(false);
  PrintedSource printed;
  for (KernelOp kernel : module.getOps<KernelOp>()) {
    if (printed.kernelNames.empty()) {
      // In a module of its own, so that its attribute aliases are printed.
      OwningOpRef<ModuleOp> alone = ModuleOp::create(loc);
      alone->getBody()->push_back(kernel->clone());
      llvm::raw_string_ostream os(printed.firstKernel);
      alone->print(os, flags);
    }
    printed.kernelNames.push_back(kernel.getSymName().str());
  }
  // The kernels only: whether they came from a .cuir.mlir file or from
  // --lift of the .cu (whose module also carries the source text) must not
  // change the key.
  OwningOpRef<ModuleOp> kernels = ModuleOp::create(loc);
  for (KernelOp kernel : module.getOps<KernelOp>())
    kernels->getBody()->push_back(kernel->clone());
  llvm::raw_string_ostream os(printed.kernels);
  kernels->print(os, flags);
  return printed;
}

/// The variant of the cache entry `cachePath`, cloned into `scratch`; a
/// broken entry is a warning (the LLM then writes a new one) and failure.
FailureOr<VariantOp> loadCachedVariant(StringRef cachePath, ModuleOp scratch,
                                       Location loc) {
  MLIRContext *context = loc.getContext();
  ParserConfig config(context);
  llvm::SourceMgr sourceMgr;
  std::string report;
  llvm::raw_string_ostream os(report);
  OwningOpRef<ModuleOp> file;
  {
    SourceMgrDiagnosticHandler handler(sourceMgr, context, os);
    if (succeeded(checkFileNesting(cachePath, context)))
      file = parseSourceFile<ModuleOp>(cachePath, sourceMgr, config);
  }
  FailureOr<VariantOp> cached =
      file ? takeVariant(*file, cachePath, scratch, loc)
           : FailureOr<VariantOp>(failure());
  if (failed(cached))
    emitWarning(loc) << "ignoring the cached variant '" << cachePath
                     << "' (it will be replaced): " << StringRef(report).trim();
  return cached;
}

void TransferPass::runThroughLLM(StringRef referencePath) {
  Location loc = getOperation().getLoc();
  referencePath = referencePath.trim();
  if (referencePath.empty()) {
    emitError(loc) << "--transfer=llm: needs a PyTorch reference: "
                      "--transfer=llm:path/to/reference.py";
    return signalPassFailure();
  }
  if (maxRounds == 0) {
    emitError(loc) << "max-rounds must be at least 1";
    return signalPassFailure();
  }
  // Everything that can be wrong without asking is reported first.
  FailureOr<std::string> referenceText = readReference(referencePath, loc);
  if (failed(referenceText) || failed(checkSourceCuIR(loc)))
    return signalPassFailure();
  FailureOr<lift::VariantChecks> checks = getChecks(referencePath, loc);
  if (failed(checks) || failed(transferThroughLLM(referencePath,
                                                  *referenceText, *checks)))
    signalPassFailure();
}

LogicalResult
TransferPass::transferThroughLLM(StringRef referencePath,
                                 StringRef referenceText,
                                 const lift::VariantChecks &checks) {
  Location loc = getOperation().getLoc();
  std::string referenceName = llvm::sys::path::filename(referencePath).str();
  std::string what = "llm:" + referenceName;
  PrintedSource source = printSource(getOperation());
  std::string key = lift::computeTransferKey(CuIRDialect::kVersion,
                                             referenceText, source.kernels);
  llvm::Expected<std::string> system = lift::buildTransferSystemPrompt();
  llvm::Expected<std::string> first = lift::buildTransferPrompt(
      referenceName, referenceText, source.kernelNames, source.firstKernel);
  if (failed(preparePrompts(loc, "transfer", system, first, dumpPrompt)))
    return failure();

  // An earlier accepted variant for the same reference and Source CuIR.
  std::string userCacheDir =
      cacheDir.empty() ? lift::getDefaultUserCacheDir() : std::string(cacheDir);
  std::string cachePath =
      userCacheDir.empty() ? std::string()
                           : lift::getUserVariantCachePath(userCacheDir, key);
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(loc);
  if (useCache && !cachePath.empty() && llvm::sys::fs::exists(cachePath)) {
    FailureOr<VariantOp> cached = loadCachedVariant(cachePath, *scratch, loc);
    if (succeeded(cached)) {
      progress(what + ": the variant accepted earlier: " + cachePath);
      return applyVariant(*cached, cached->getSymName());
    }
  }

  FailureOr<std::unique_ptr<llm::Client>> client =
      createClient(referencePath, userCacheDir, key);
  if (failed(client))
    return failure();
  progress(what + ": no cached variant (key " + key.substr(0, 16) +
           "...); writing one with " + (*client)->describe());
  lift::LoopSpec spec;
  spec.keyOp = "cuir.variant";
  spec.what = "the complete cuir.variant";
  spec.repair = lift::buildTransferRepairPrompt;
  lift::AcceptedVariant accepted;
  llvm::Expected<lift::LiftResult> result = lift::runLiftLoop(
      **client, *system, *first, maxRounds,
      [&](StringRef mlir, unsigned round) {
        return lift::checkVariantCandidate(&getContext(), checks, mlir, round,
                                           accepted);
      },
      progress, spec);
  if (!result) {
    reportLoopFailure(loc, "transfer to " + what + " failed",
                      result.takeError());
    return failure();
  }
  std::string text = "// Variant for " + referenceName + " (key " + key +
                     ")\n// by " + (*client)->describe() +
                     ", accepted in round " + std::to_string(result->round) +
                     " after the transfer and the interpreter's checks.\n" +
                     accepted.text;
  return storeAndApply(text, userCacheDir.empty() ? "" : cachePath, *scratch);
}

FailureOr<std::unique_ptr<llm::Client>>
TransferPass::createClient(StringRef referencePath, StringRef userCacheDir,
                           StringRef key) {
  Location loc = getOperation().getLoc();
  return createPassClient(
      loc, getLLMClientOptions(*this),
      [&] {
        InFlightDiagnostic diag = emitError(loc);
        diag << "--transfer=llm:" << referencePath
             << " needs an LLM to write the variant, and none is configured";
        if (useCache)
          diag.attachNote(loc)
              << "no variant for this reference and Source CuIR in the cache '"
              << (userCacheDir.empty() ? "(none)" : userCacheDir) << "' (key "
              << key << ")";
        for (const std::string &line : llm::getConfigurationHelp(
                 "transfer", "llm:" + referencePath.str() + " "))
          diag.attachNote(loc) << line;
      },
      progress);
}

/// Stores the accepted variant `text` at `cachePath` (none: no cache), then
/// applies it as --transfer=<that file> would.
LogicalResult TransferPass::storeAndApply(StringRef text, StringRef cachePath,
                                          ModuleOp scratch) {
  Location loc = getOperation().getLoc();
  std::string bufferName = "llm-variant.mlir";
  if (cachePath.empty()) {
    emitWarning(loc) << "the variant is not cached: no cache directory (set "
                        "CUIR_LIFT_CACHE or cache-dir=)";
  } else if (llvm::Error err = lift::writeFileAtomically(cachePath, text)) {
    emitWarning(loc) << "the variant is not cached: "
                     << llvm::toString(std::move(err));
  } else {
    progress("stored the variant in the cache: " + cachePath);
    bufferName = cachePath.str();
  }
  ParserConfig parserConfig(&getContext());
  OwningOpRef<ModuleOp> file =
      parseSourceString<ModuleOp>(text, parserConfig, bufferName);
  FailureOr<VariantOp> v = file ? takeVariant(*file, bufferName, scratch, loc)
                                : FailureOr<VariantOp>(failure());
  if (failed(v))
    return failure();
  return applyVariant(*v, v->getSymName());
}

} // namespace

void mlir::cuir::registerTransferShortName() {
  registerShortName<TransferPass>("transfer");
}
