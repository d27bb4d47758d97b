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
#include "ShortNames.h"

#include "cuir/LLM/Client.h"
#include "cuir/Lift/LiftCache.h"
#include "cuir/Lift/Lifter.h"
#include "cuir/Lift/Prompt.h"
#include "cuir/Lift/Validate.h"
#include "cuir/Support/SourceFile.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
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

/// Where the Source CuIR of this run came from: reported on stderr and
/// recorded on the module for --lower (kSourceCuIRAttr).
struct Origin {
  /// "the bundled lift '<file>'", "the user lift cache '<file>'", "<model>,
  /// round N".
  std::string where;
  LiftCheck check = LiftCheck::None;
  /// The file that holds it, and the SHA-256 of the file's text; empty if it
  /// was not stored, and then `unstored` says why.
  std::string path, sha256, unstored;
};

/// What a check level means, for the origin line.
StringRef describeCheck(LiftCheck check) {
  switch (check) {
  case LiftCheck::None:
    return "unchecked: check=none, nothing says what it computes";
  case LiftCheck::Semantic:
    return "passed the semantic check (standard attention)";
  case LiftCheck::Project:
    return "checked by the project";
  }
  llvm_unreachable("unknown lift check");
}

/// The text of a user-cache entry: `header` (comment lines), then the lift
/// with its locations and its record, without the source text (which the
/// key stands for).
std::string printCacheEntry(ModuleOp lifted, StringRef header) {
  lifted->removeAttr(kSourceTextAttr);
  std::string text = header.str();
  llvm::raw_string_ostream os(text);
  lifted->print(os, OpPrintingFlags().enableDebugInfo(/*enable=*/true,
                                                      /*prettyForm=*/false));
  os << "\n";
  return text;
}

/// The leading comment lines of a cache entry (its provenance).
std::string readHeader(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return "";
  std::string header;
  for (StringRef line : llvm::split((*buffer)->getBuffer(), '\n')) {
    if (!line.starts_with("//"))
      break;
    header += line.str() + "\n";
  }
  return header;
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
  /// What one lift works with, past the checks of its input.
  struct LiftJob {
    std::string sourceName, key;
    std::string system, first; // the prompts
    std::string indexPath, userCacheDir;
  };

  FailureOr<LiftCheck> checkInputAndOptions(ModuleOp module);
  LogicalResult parseValidation(OpPassManager &validation);
  FailureOr<std::unique_ptr<llm::Client>> createClient(const LiftJob &job);
  LogicalResult liftThroughLLM(ModuleOp module, const LiftJob &job,
                               CandidateChecks &checks,
                               PassManager &validation);
  std::optional<Origin> lookUpCaches(ModuleOp module, StringRef key,
                                     StringRef sourceName,
                                     const CandidateChecks &checks,
                                     std::string &indexPath,
                                     std::string &userCacheDir);
  std::optional<Origin> lookUpUserCache(ModuleOp module, StringRef path,
                                        StringRef sourceName,
                                        const CandidateChecks &checks);
  Origin storeInUserCache(ModuleOp lifted, StringRef dir, StringRef key,
                          StringRef sourceName, StringRef producer,
                          unsigned round, LiftCheck check);
  void finish(ModuleOp module, StringRef sourceName, const Origin &origin);
  friend llm::ClientOptions mlir::cuir::getLLMClientOptions<>(const LiftPass &);

  /// Where whole-lift problems are reported (see getSourceLocation).
  LocationAttr sourceLoc;
};

/// Installs a lift from the bundled index or the user cache, if either has
/// one for `key` that passed at least `checks.check`. Unusable entries are
/// warnings, not failures: the LLM can still lift the source.
std::optional<Origin> LiftPass::lookUpCaches(ModuleOp module, StringRef key,
                                             StringRef sourceName,
                                             const CandidateChecks &checks,
                                             std::string &indexPath,
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
      Origin origin;
      llvm::Expected<OwningOpRef<ModuleOp>> lifted =
          loadCachedLift(context, entry->cuirPath, &origin.sha256);
      if (!lifted) {
        emitWarning(sourceLoc)
            << "ignoring the bundled lift '" << entry->cuirPath
            << "': " << llvm::toString(lifted.takeError());
      } else {
        renameSourceFile(**lifted, llvm::sys::path::filename(entry->sourcePath),
                         sourceName);
        install(module, **lifted);
        origin.where = "the bundled lift '" + entry->cuirPath + "' (index '" +
                       index->getPath().str() + "')";
        origin.check = LiftCheck::Project;
        origin.path = entry->cuirPath;
        return origin;
      }
    }
  }
  if (userCacheDir.empty())
    return std::nullopt;
  return lookUpUserCache(module, getUserCachePath(userCacheDir, key),
                         sourceName, checks);
}

/// The user-cache entry at `path`, if it passed `checks.check`, or passes it
/// now (the entry then records it).
std::optional<Origin> LiftPass::lookUpUserCache(ModuleOp module, StringRef path,
                                                StringRef sourceName,
                                                const CandidateChecks &checks) {
  if (!llvm::sys::fs::exists(path))
    return std::nullopt;
  Origin origin;
  llvm::Expected<OwningOpRef<ModuleOp>> lifted =
      loadCachedLift(&getContext(), path, &origin.sha256);
  if (!lifted) {
    emitWarning(sourceLoc) << "ignoring the cached lift '" << path
                           << "' (it will be replaced): "
                           << llvm::toString(lifted.takeError());
    return std::nullopt;
  }
  origin.where = "the user lift cache '" + path.str() + "'";
  origin.check = getRecordedCheck(**lifted);
  origin.path = path.str();
  if (origin.check < checks.check) {
    // An entry of an earlier, weaker lift: trusted only once it passes.
    Verdict verdict = recheckCachedLift(**lifted, checks);
    if (!verdict.accepted) {
      InFlightDiagnostic diag = emitWarning(sourceLoc);
      diag << "ignoring the cached lift '" << path << "': it records ";
      if (origin.check == LiftCheck::None)
        diag << "no check (check=none)";
      else
        diag << "only the " << getLiftCheckName(origin.check) << " check";
      diag << ", and " << verdict.stage
           << " now; a lift that passes will replace it: " << verdict.problems;
      return std::nullopt;
    }
    std::string text = printCacheEntry(
        **lifted, readHeader(path) + "// Re-checked by a later --lift: " +
                      describeCheck(checks.check).str() + ".\n");
    if (llvm::Error err = writeFileAtomically(path, text))
      emitWarning(sourceLoc)
          << "the cached lift passed the " << getLiftCheckName(checks.check)
          << " check, but its entry cannot record it: "
          << llvm::toString(std::move(err));
    else
      origin.sha256 = computeContentHash(text);
    origin.check = checks.check;
    origin.where += " (re-checked now)";
  }
  if (auto cachedPath = (**lifted)->getAttrOfType<StringAttr>(kSourcePathAttr))
    renameSourceFile(**lifted, llvm::sys::path::filename(cachedPath.getValue()),
                     sourceName);
  install(module, **lifted);
  return origin;
}

/// Stores an accepted LLM lift in the user cache, unless the entry there
/// passed a stronger check.
Origin LiftPass::storeInUserCache(ModuleOp lifted, StringRef dir, StringRef key,
                                  StringRef sourceName, StringRef producer,
                                  unsigned round, LiftCheck check) {
  Origin origin;
  origin.where = producer.str() + ", round " + std::to_string(round);
  origin.check = check;
  if (dir.empty()) {
    origin.unstored = "no cache directory (set CUIR_LIFT_CACHE or cache-dir=)";
    emitWarning(sourceLoc) << "the lift is not cached: " << origin.unstored;
    return origin;
  }
  std::string path = getUserCachePath(dir, key);
  if (llvm::sys::fs::exists(path)) {
    llvm::Expected<OwningOpRef<ModuleOp>> existing =
        loadCachedLift(&getContext(), path);
    if (!existing) {
      llvm::consumeError(existing.takeError()); // Unusable: replaced.
    } else if (LiftCheck kept = getRecordedCheck(**existing);
               !mayReplace(kept, check)) {
      origin.unstored = "the entry '" + path + "' passed a stronger check (" +
                        getLiftCheckName(kept).str() + ") than this lift (" +
                        getLiftCheckName(check).str() + ") and is kept";
      emitWarning(sourceLoc) << "the lift is not cached: " << origin.unstored;
      return origin;
    }
  }
  std::string header;
  llvm::raw_string_ostream os(header);
  os << "// Lift of " << sourceName << " (lift-cache key " << key << ")\n"
     << "// by " << producer << ", accepted in round " << round
     << " after parsing, verification, cuir-check-locations{require-all}"
     << (check == LiftCheck::Semantic
             ? ", the semantic check against standard attention"
             : "")
     << (validate.empty() ? std::string()
                          : " and validate=\"" + validate + "\"")
     << ".\n"
     << "// " << describeCheck(check) << " (" << kLiftCheckAttr << ").\n";
  std::string text = printCacheEntry(lifted, header);
  if (llvm::Error err = writeFileAtomically(path, text)) {
    origin.unstored = llvm::toString(std::move(err));
    emitWarning(sourceLoc) << "the lift is not cached: " << origin.unstored;
    return origin;
  }
  progress("stored in the lift cache: " + path);
  origin.path = path;
  origin.sha256 = computeContentHash(text);
  return origin;
}

/// Says where the Source CuIR came from and records it for --lower.
void LiftPass::finish(ModuleOp module, StringRef sourceName,
                      const Origin &origin) {
  progress("Source CuIR of " + sourceName + " from " + origin.where + ": " +
           describeCheck(origin.check));
  Builder b(&getContext());
  SmallVector<NamedAttribute> fields = {b.getNamedAttr(
      "check", b.getStringAttr(getLiftCheckName(origin.check)))};
  if (!origin.path.empty()) {
    fields.push_back(b.getNamedAttr("path", b.getStringAttr(origin.path)));
    fields.push_back(b.getNamedAttr("sha256", b.getStringAttr(origin.sha256)));
  } else {
    fields.push_back(
        b.getNamedAttr("unstored", b.getStringAttr(origin.unstored)));
  }
  module->setAttr(kSourceCuIRAttr, b.getDictionaryAttr(fields));
}

/// Checks that the module is one made of a CUDA source and the options
/// are usable; returns the check a lift must pass.
FailureOr<LiftCheck> LiftPass::checkInputAndOptions(ModuleOp module) {
  auto pathAttr = module->getAttrOfType<StringAttr>(kSourcePathAttr);
  auto textAttr = module->getAttrOfType<StringAttr>(kSourceTextAttr);
  if (!pathAttr || !textAttr)
    return emitError(module.getLoc())
           << "--" << getArgument()
           << " needs the module that cuir-opt makes of a CUDA source (a .cu "
              "input): the attributes '"
           << kSourcePathAttr << "' and '" << kSourceTextAttr
           << "' are missing";
  sourceLoc = getSourceLocation(&getContext(), pathAttr.getValue(),
                                textAttr.getValue());
  if (!module.getBody()->empty())
    return emitError(module.getLoc())
           << "--lift replaces the body of a module made of a "
              "CUDA source, but this module already has ops";
  if (maxRounds == 0)
    return emitError(sourceLoc) << "max-rounds must be at least 1";
  std::optional<LiftCheck> requested = parseLiftCheck(check);
  if (!requested || *requested == LiftCheck::Project)
    return emitError(sourceLoc) << "check='" << check
                                << "' is not a check of --lift: semantic (the "
                                   "default) or none";
  return *requested;
}

/// Parses the `validate` option into `validation` (empty: nothing to do).
LogicalResult LiftPass::parseValidation(OpPassManager &validation) {
  if (validate.empty())
    return success();
  std::string error;
  llvm::raw_string_ostream es(error);
  if (succeeded(parsePassPipeline(validate, validation, es)))
    return success();
  return emitError(sourceLoc) << "invalid validate pipeline '" << validate
                              << "': " << StringRef(error).trim();
}

void LiftPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *context = &getContext();
  FailureOr<LiftCheck> requested = checkInputAndOptions(module);
  if (failed(requested))
    return signalPassFailure();
  auto pathAttr = module->getAttrOfType<StringAttr>(kSourcePathAttr);
  auto textAttr = module->getAttrOfType<StringAttr>(kSourceTextAttr);
  LiftJob job;
  job.sourceName = llvm::sys::path::filename(pathAttr.getValue()).str();
  job.key = computeLiftKey(CuIRDialect::kVersion, textAttr.getValue());

  // Everything that can be wrong with the options is reported before the
  // first request.
  PassManager validation(context, ModuleOp::getOperationName(),
                         OpPassManager::Nesting::Implicit);
  if (failed(parseValidation(validation)))
    return signalPassFailure();
  llvm::Expected<std::string> system = buildSystemPrompt();
  llvm::Expected<std::string> first =
      buildLiftPrompt(job.sourceName, textAttr.getValue());
  if (failed(preparePrompts(sourceLoc, "lift", system, first, dumpPrompt)))
    return signalPassFailure();
  job.system = std::move(*system);
  job.first = std::move(*first);

  CandidateChecks checks;
  checks.sourceAttrs = DictionaryAttr::get(
      context,
      {NamedAttribute(StringAttr::get(context, kSourcePathAttr), pathAttr),
       NamedAttribute(StringAttr::get(context, kSourceTextAttr), textAttr)});
  checks.check = *requested;

  job.userCacheDir =
      cacheDir.empty() ? getDefaultUserCacheDir() : std::string(cacheDir);
  if (useCache) {
    if (std::optional<Origin> origin =
            lookUpCaches(module, job.key, job.sourceName, checks,
                         job.indexPath, job.userCacheDir)) {
      finish(module, job.sourceName, *origin);
      return;
    }
  }
  if (failed(liftThroughLLM(module, job, checks, validation)))
    signalPassFailure();
}

/// The LLM client, or an error that says where the lift was looked for and
/// how to configure one.
FailureOr<std::unique_ptr<llm::Client>>
LiftPass::createClient(const LiftJob &job) {
  return createPassClient(
      sourceLoc, getLLMClientOptions(*this),
      [&] {
        InFlightDiagnostic diag = emitError(sourceLoc);
        diag << "no lift of '" << job.sourceName << "' in the lift cache (key "
             << job.key << ") and no LLM is configured to lift it";
        if (useCache)
          diag.attachNote(sourceLoc)
              << "looked in the bundled index '" << job.indexPath
              << "' and the user cache '"
              << (job.userCacheDir.empty() ? "(none)" : job.userCacheDir)
              << "'";
        else
          diag.attachNote(sourceLoc)
              << "the lift cache is off (use-cache=false)";
        for (const std::string &line : llm::getConfigurationHelp())
          diag.attachNote(sourceLoc) << line;
      },
      progress);
}

/// Lifts through the LLM's closed loop (each candidate through `checks`
/// and the `validation` pipeline), stores the accepted lift in the
/// user cache and installs it.
LogicalResult LiftPass::liftThroughLLM(ModuleOp module, const LiftJob &job,
                                       CandidateChecks &checks,
                                       PassManager &validation) {
  MLIRContext *context = &getContext();
  FailureOr<std::unique_ptr<llm::Client>> client = createClient(job);
  if (failed(client))
    return failure();

  PassManager locationCheck(context, ModuleOp::getOperationName());
  CheckLocationsOptions locationOptions;
  locationOptions.requireAll = true;
  locationCheck.addPass(createCheckLocations(locationOptions));
  checks.locationCheck = &locationCheck;
  checks.validation = validate.empty() ? nullptr : &validation;
  checks.validationText = validate;

  progress(job.sourceName + ": no cached lift (key " + job.key.substr(0, 16) +
           "...); lifting with " + (*client)->describe());
  OwningOpRef<ModuleOp> accepted;
  llvm::Expected<LiftResult> result = runLiftLoop(
      **client, job.system, job.first, maxRounds,
      [&](StringRef mlir, unsigned round) {
        return checkCandidate(context, checks, mlir, round, accepted);
      },
      progress);
  if (!result) {
    reportLoopFailure(sourceLoc, "lift of '" + job.sourceName + "' failed",
                      result.takeError());
    return failure();
  }

  Origin origin =
      storeInUserCache(*accepted, job.userCacheDir, job.key, job.sourceName,
                       (*client)->describe(), result->round, checks.check);
  install(module, *accepted);
  finish(module, job.sourceName, origin);
  return success();
}

} // namespace

void mlir::cuir::registerLiftShortName() {
  registerShortName<LiftPass>("lift");
}
