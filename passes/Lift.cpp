//===- Lift.cpp - CUDA source to Source CuIR ------------------------------===//
//
// The lift pass: from the lift cache when it knows the source text,
// otherwise from an LLM in a closed loop whose answers are parsed, verified,
// checked against the source lines and validated, with every failure sent
// back to the model. See docs/Lift.md.
//
//===----------------------------------------------------------------------===//

#include "cuir/Passes/Passes.h"

#include "LLMPassSupport.h"

#include "cuir/LLM/Client.h"
#include "cuir/Lift/LiftCache.h"
#include "cuir/Lift/Lifter.h"
#include "cuir/Lift/Prompt.h"
#include "cuir/Lift/Validate.h"
#include "cuir/Support/SourceFile.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::cuir {
#define GEN_PASS_DEF_LIFT
#include "cuir/Passes/Passes.h.inc"
} // namespace mlir::cuir

using namespace mlir;
using namespace mlir::cuir;
using namespace mlir::cuir::lift;
using llvm::StringRef;

namespace {

/// Progress lines on stderr.
void progress(const llvm::Twine &line) {
  llvm::errs() << "lift: " << line << "\n";
  llvm::errs().flush();
}

/// Where the pass reports problems of the whole lift: the line of the first
/// `__global__` of the CUDA source (else line 1). The column is left unknown
/// (0) on purpose: cuir-opt's source manager holds the module text that wraps
/// the source under the source's own name, and would otherwise show a line
/// of that text under the CUDA location.
Location getSourceLocation(MLIRContext *context, StringRef path,
                           StringRef text) {
  unsigned line = 1;
  size_t at = text.find("__global__");
  if (at != StringRef::npos)
    line += text.take_front(at).count('\n');
  return FileLineColLoc::get(context, path, line, /*column=*/0);
}

/// Moves the ops of `lifted` into the (empty) body of `module`.
void install(ModuleOp module, ModuleOp lifted) {
  Block *body = module.getBody();
  body->getOperations().splice(body->end(), lifted.getBody()->getOperations());
}

class LiftPass : public cuir::impl::LiftBase<LiftPass> {
public:
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    // The validation pipeline runs inside this pass: load what it needs up
    // front, as no dialect may be loaded while passes run.
    if (validate.empty())
      return;
    OpPassManager pm(ModuleOp::getOperationName(),
                     OpPassManager::Nesting::Implicit);
    if (succeeded(parsePassPipeline(validate, pm, llvm::nulls())))
      pm.getDependentDialects(registry);
  }

  void runOnOperation() override;

private:
  bool lookUpCaches(ModuleOp module, StringRef key, StringRef sourceName,
                    std::string &indexPath, std::string &userCacheDir);
  void storeInUserCache(ModuleOp module, ModuleOp lifted, StringRef dir,
                        StringRef key, StringRef sourceName, StringRef producer,
                        unsigned round);
  friend llm::ClientOptions mlir::cuir::getLLMClientOptions<>(const LiftPass &);

  /// Where whole-lift problems are reported (see getSourceLocation).
  LocationAttr sourceLoc;
};

/// Installs a lift from the bundled index or the user cache, if either has
/// one for `key`. Unusable entries are warnings, not failures: the LLM can
/// still lift the source.
bool LiftPass::lookUpCaches(ModuleOp module, StringRef key,
                            StringRef sourceName, std::string &indexPath,
                            std::string &userCacheDir) {
  MLIRContext *context = &getContext();
  // The bundled index.
  indexPath = cacheIndex.empty() ? getBundledIndexPath().str()
                                 : std::string(cacheIndex);
  if (!cacheIndex.empty() || llvm::sys::fs::exists(indexPath)) {
    llvm::Expected<LiftCacheIndex> index = LiftCacheIndex::load(indexPath);
    if (!index) {
      emitWarning(sourceLoc) << "ignoring the lift-cache index: "
                             << llvm::toString(index.takeError());
    } else if (const BundledLift *entry = index->lookup(key)) {
      llvm::Expected<OwningOpRef<ModuleOp>> lifted =
          loadCachedLift(context, entry->cuirPath);
      if (!lifted) {
        emitWarning(sourceLoc)
            << "ignoring the bundled lift '" << entry->cuirPath
            << "': " << llvm::toString(lifted.takeError());
      } else {
        renameSourceFile(**lifted, llvm::sys::path::filename(entry->sourcePath),
                         sourceName);
        install(module, **lifted);
        return true;
      }
    }
  }
  // The user cache.
  if (userCacheDir.empty())
    return false;
  std::string path = getUserCachePath(userCacheDir, key);
  if (!llvm::sys::fs::exists(path))
    return false;
  llvm::Expected<OwningOpRef<ModuleOp>> lifted = loadCachedLift(context, path);
  if (!lifted) {
    emitWarning(sourceLoc) << "ignoring the cached lift '" << path
                           << "' (it will be replaced): "
                           << llvm::toString(lifted.takeError());
    return false;
  }
  if (auto cachedPath = (**lifted)->getAttrOfType<StringAttr>(kSourcePathAttr))
    renameSourceFile(**lifted, llvm::sys::path::filename(cachedPath.getValue()),
                     sourceName);
  install(module, **lifted);
  return true;
}

void LiftPass::storeInUserCache(ModuleOp module, ModuleOp lifted, StringRef dir,
                                StringRef key, StringRef sourceName,
                                StringRef producer, unsigned round) {
  if (dir.empty()) {
    emitWarning(sourceLoc) << "the lift is not cached: no cache directory "
                              "(set CUIR_LIFT_CACHE or cache-dir=)";
    return;
  }
  // The cached copy keeps the source's path (for its file name) but not its
  // text, which the key stands for.
  lifted->removeAttr(kSourceTextAttr);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// Lift of " << sourceName << " (lift-cache key " << key << ")\n"
     << "// by " << producer << ", accepted in round " << round
     << " after parsing, verification, cuir-check-locations{require-all}"
     << (validate.empty() ? std::string()
                          : " and validate=\"" + validate + "\"")
     << ".\n";
  lifted->print(os, OpPrintingFlags().enableDebugInfo(/*enable=*/true,
                                                      /*prettyForm=*/false));
  os << "\n";
  std::string path = getUserCachePath(dir, key);
  if (llvm::Error err = writeFileAtomically(path, text)) {
    emitWarning(sourceLoc) << "the lift is not cached: "
                           << llvm::toString(std::move(err));
    return;
  }
  progress("stored in the lift cache: " + path);
}

void LiftPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *context = &getContext();
  auto pathAttr = module->getAttrOfType<StringAttr>(kSourcePathAttr);
  auto textAttr = module->getAttrOfType<StringAttr>(kSourceTextAttr);
  if (!pathAttr || !textAttr) {
    emitError(module.getLoc())
        << "--lift needs the module that cuir-opt makes of a CUDA source "
           "(a .cu input): the attributes '"
        << kSourcePathAttr << "' and '" << kSourceTextAttr << "' are missing";
    return signalPassFailure();
  }
  sourceLoc =
      getSourceLocation(context, pathAttr.getValue(), textAttr.getValue());
  if (!module.getBody()->empty()) {
    emitError(module.getLoc())
        << "--lift replaces the body of a module made of a "
           "CUDA source, but this module already has ops";
    return signalPassFailure();
  }
  if (maxRounds == 0) {
    emitError(sourceLoc) << "max-rounds must be at least 1";
    return signalPassFailure();
  }
  std::string sourceName = llvm::sys::path::filename(pathAttr.getValue()).str();
  std::string key = computeLiftKey(CuIRDialect::kVersion, textAttr.getValue());

  // Everything that can be wrong with the options is reported before the
  // first request.
  PassManager validation(context, ModuleOp::getOperationName(),
                         OpPassManager::Nesting::Implicit);
  if (!validate.empty()) {
    std::string error;
    llvm::raw_string_ostream es(error);
    if (failed(parsePassPipeline(validate, validation, es))) {
      emitError(sourceLoc) << "invalid validate pipeline '" << validate
                           << "': " << StringRef(error).trim();
      return signalPassFailure();
    }
  }

  llvm::Expected<std::string> system = buildSystemPrompt();
  llvm::Expected<std::string> first =
      buildLiftPrompt(sourceName, textAttr.getValue());
  if (failed(preparePrompts(sourceLoc, "lift", system, first, dumpPrompt)))
    return signalPassFailure();

  std::string indexPath;
  std::string userCacheDir =
      cacheDir.empty() ? getDefaultUserCacheDir() : std::string(cacheDir);
  if (useCache &&
      lookUpCaches(module, key, sourceName, indexPath, userCacheDir))
    return;

  FailureOr<std::unique_ptr<llm::Client>> client = createPassClient(
      sourceLoc, getLLMClientOptions(*this),
      [&] {
        InFlightDiagnostic diag = emitError(sourceLoc);
        diag << "no lift of '" << sourceName << "' in the lift cache (key "
             << key << ") and no LLM is configured to lift it";
        if (useCache)
          diag.attachNote(sourceLoc)
              << "looked in the bundled index '" << indexPath
              << "' and the user cache '"
              << (userCacheDir.empty() ? "(none)" : userCacheDir) << "'";
        else
          diag.attachNote(sourceLoc)
              << "the lift cache is off (use-cache=false)";
        for (const std::string &line : llm::getConfigurationHelp())
          diag.attachNote(sourceLoc) << line;
      },
      progress);
  if (failed(client))
    return signalPassFailure();

  PassManager locationCheck(context, ModuleOp::getOperationName());
  CheckLocationsOptions locationOptions;
  locationOptions.requireAll = true;
  locationCheck.addPass(createCheckLocations(locationOptions));

  CandidateChecks checks;
  checks.sourceAttrs = DictionaryAttr::get(
      context,
      {NamedAttribute(StringAttr::get(context, kSourcePathAttr), pathAttr),
       NamedAttribute(StringAttr::get(context, kSourceTextAttr), textAttr)});
  checks.locationCheck = &locationCheck;
  checks.validation = validate.empty() ? nullptr : &validation;
  checks.validationText = validate;

  progress(sourceName + ": no cached lift (key " + key.substr(0, 16) +
           "...); lifting with " + (*client)->describe());
  OwningOpRef<ModuleOp> accepted;
  llvm::Expected<LiftResult> result = runLiftLoop(
      **client, *system, *first, maxRounds,
      [&](StringRef mlir, unsigned round) {
        return checkCandidate(context, checks, mlir, round, accepted);
      },
      progress);
  if (!result) {
    reportLoopFailure(sourceLoc, "lift of '" + sourceName + "' failed",
                      result.takeError());
    return signalPassFailure();
  }

  storeInUserCache(module, *accepted, userCacheDir, key, sourceName,
                   (*client)->describe(), result->round);
  install(module, *accepted);
}

} // namespace
