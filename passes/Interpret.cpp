//===- Interpret.cpp - Run kernels and compare them with a reference ------===//

#include "cuir/Interpreter/Interpreter.h"
#include "cuir/Passes/Passes.h"
#include "cuir/Support/OptionLocation.h"
#include "cuir/Support/ParamValue.h"
#include "cuir/Support/Toolchain.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

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

  /// Keeps the options' text, which errors in them point into.
  LogicalResult
  initializeOptions(StringRef options,
                    function_ref<LogicalResult(const Twine &)> errorHandler)
      override {
    optionsText = options.str();
    // A misspelt option is reported by initialize, at its place.
    spellingProblem = checkSpelling(optionsText);
    if (spellingProblem)
      return success();
    return Pass::initializeOptions(options, errorHandler);
  }

  /// Options that cannot run fail the pipeline before any pass runs.
  LogicalResult initialize(MLIRContext *context) override {
    if (spellingProblem)
      return emitError(getOptionLoc(context, getArgument(), optionsText,
                                    spellingProblem->first))
             << spellingProblem->second;
    return getOptions(context);
  }

  void runOnOperation() override {
    FailureOr<InterpreterOptions> opt = getOptions(&getContext());
    if (failed(opt))
      return signalPassFailure();

    // Without a kernel name, run the instantiations that fit the problem
    // (head dim, causal), as the source kernel's dispatch would pick them.
    // A launch sequence runs as a whole; its kernels do not run alone.
    bool ran = false;
    std::string notRun;
    llvm::DenseMap<Operation *, LaunchSequenceOp> inSequence;
    for (auto seq : getOperation().getOps<LaunchSequenceOp>())
      for (KernelOp kernel : seq.getKernelOps())
        inSequence.try_emplace(kernel, seq);
    for (auto seq : getOperation().getOps<LaunchSequenceOp>()) {
      if (!kernelName.empty() && seq.getSymName() != kernelName)
        continue;
      SmallVector<KernelOp> kernels = seq.getKernelOps();
      if (kernelName.empty() &&
          !allFit(seq.getSymName(), kernels, *opt, notRun))
        continue;
      ran = true;
      if (failed(runBackward(seq.getSymName(), seq.getLoc(), kernels, *opt)))
        return signalPassFailure();
    }
    for (KernelOp kernel : getOperation().getOps<KernelOp>()) {
      if (!kernelName.empty() && kernel.getSymName() != kernelName)
        continue;
      if (auto it = inSequence.find(kernel); it != inSequence.end()) {
        if (kernelName.empty())
          continue;
        mlir::emitError(optionLoc(&getContext(), "kernel"))
            << "@" << kernelName << " is a kernel of the launch sequence @"
            << it->second.getSymName()
            << ", which runs as a whole: pass kernel="
            << it->second.getSymName();
        return signalPassFailure();
      }
      SmallVector<KernelOp> one = {kernel};
      if (kernelName.empty() && !allFit(kernel.getSymName(), one, *opt, notRun))
        continue;
      ran = true;
      if (isBackwardKernel(kernel)) {
        if (failed(
                runBackward(kernel.getSymName(), kernel.getLoc(), one, *opt)))
          return signalPassFailure();
        continue;
      }
      if (failed(checkParams(kernel)))
        return signalPassFailure();
      FailureOr<InterpreterReport> report = interpretKernel(kernel, *opt);
      if (failed(report) ||
          failed(reportRun(kernel.getLoc(), describeRun(kernel, *opt, *report),
                           *report)))
        return signalPassFailure();
    }
    if (!ran) {
      // A kernel named by the option that the module lacks is the option's
      // error; the others are the module's.
      Location where = kernelName.empty()
                           ? getOperation().getLoc()
                           : optionLoc(&getContext(), "kernel");
      InFlightDiagnostic diag = mlir::emitError(where);
      if (!kernelName.empty()) {
        diag << "no cuir.kernel named '" << kernelName << "'";
        for (KernelOp kernel : getOperation().getOps<KernelOp>())
          diag.attachNote(kernel.getLoc())
              << "the module has @" << kernel.getSymName();
      } else if (notRun.empty())
        diag << "the module has no cuir.kernel";
      else
        diag << "no kernel of the module fits the problem" << notRun;
      signalPassFailure();
    }
  }

private:
  /// Whether every kernel of `kernels` (of the run `name`) fits the
  /// problem; if not, why is appended to `notRun`.
  static bool allFit(StringRef name, ArrayRef<KernelOp> kernels,
                     const InterpreterOptions &opt, std::string &notRun) {
    for (KernelOp kernel : kernels) {
      std::string why;
      if (kernelFits(kernel, opt, why))
        continue;
      notRun += "; @" + name.str();
      if (name != kernel.getSymName())
        notRun += " (@" + kernel.getSymName().str() + ")";
      notRun += ": " + why;
      return false;
    }
    return true;
  }

  /// A match as a remark at `loc`, a mismatch as an error there.
  static LogicalResult reportRun(Location loc, StringRef summary,
                                 const InterpreterReport &report) {
    if (report.passed) {
      mlir::emitRemark(loc) << "matches the reference: " << summary;
      return success();
    }
    InFlightDiagnostic diag = mlir::emitError(loc)
                              << "output mismatch: " << summary;
    if (!report.firstMismatch.empty())
      diag << "; first mismatch at " << report.firstMismatch;
    if (!report.worstMismatch.empty())
      diag << "; largest error at " << report.worstMismatch;
    return failure();
  }

  /// Runs the backward pass `kernels` (named `name`, at `loc`).
  LogicalResult runBackward(StringRef name, Location loc,
                            ArrayRef<KernelOp> kernels,
                            const InterpreterOptions &opt) {
    for (KernelOp kernel : kernels)
      if (failed(checkParams(kernel)))
        return failure();
    FailureOr<InterpreterReport> report = interpretBackward(loc, kernels, opt);
    if (failed(report))
      return failure();
    return reportRun(loc, describeBackwardRun(name, kernels, opt, *report),
                     *report);
  }

  /// The location of byte `offset` of the value of option `key`.
  Location optionLoc(MLIRContext *context, StringRef key, size_t offset = 0) {
    std::optional<size_t> value = findOptionValue(optionsText, key);
    return getOptionLoc(context, getArgument(), optionsText,
                        value ? *value + offset : 0);
  }

  /// The interpreter's options, or an error at the option that is wrong.
  FailureOr<InterpreterOptions> getOptions(MLIRContext *context) {
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
    opt.dumpDir = dump;
    opt.memoryLimitMiB = maxMemory;
    TextError error;
    if (failed(parseParamList(params, opt.params, error)))
      return emitError(optionLoc(context, "params", error.offset))
             << "params: " << error.message;
    if (std::optional<OptionProblem> problem = checkOptions(opt))
      return emitError(optionLoc(context, problem->option))
             << problem->message;
    if (opt.reference != "builtin") {
      llvm::Expected<std::string> found =
          findPythonWithTorch(python, ToolEnvironment::fromProcess());
      if (!found)
        return emitError(optionLoc(context, "python"))
               << "reference=" << opt.reference
               << " needs Python with torch: "
               << llvm::toString(found.takeError());
      opt.python = *found;
    }
    return opt;
  }

  /// Values in params= of the kernel's parameters must fit their types; the
  /// error points at the value.
  LogicalResult checkParams(KernelOp kernel) {
    std::map<std::string, size_t> offsets;
    std::map<std::string, std::string> values;
    TextError error;
    (void)parseParamList(params, values, error, &offsets);
    for (BlockArgument arg : kernel.getBody().front().getArguments()) {
      std::optional<StringRef> param =
          variantParamName(argRole(kernel, arg.getArgNumber()));
      if (!param)
        continue;
      std::string name = param->str();
      auto it = values.find(name);
      // A nested list (a captured tensor's) is checked against the shape
      // when the tensor is bound.
      if (it == values.end() || StringRef(it->second).starts_with("["))
        continue;
      FailureOr<ParamValue> value = parseParamValue(it->second, error);
      if (succeeded(value) &&
          succeeded(checkParamValue(*value, arg.getType(), error)))
        continue;
      std::string type;
      llvm::raw_string_ostream(type) << arg.getType();
      return emitError(optionLoc(&getContext(), "params",
                                 offsets[name] + error.offset))
             << "params: " << name << " (" << type << " in @"
             << kernel.getSymName() << "): " << error.message;
    }
    return success();
  }

  std::string optionsText;
  std::optional<std::pair<size_t, std::string>> spellingProblem;

  /// Each option given once, integers in plain decimal: LLVM would keep the
  /// last of `Nq=64 Nq=65`, read `Nq=010` as octal 8 and reject `Nq=abc`
  /// without saying where. The offset of the value that is wrong, and why.
  static std::optional<std::pair<size_t, std::string>>
  checkSpelling(StringRef options) {
    static constexpr StringLiteral kIntegers[] = {
        "B", "Hq", "Hkv", "Nq", "Nkv", "d", "seed", "blocks", "max-memory"};
    llvm::StringSet<> seen;
    for (const OptionEntry &entry : splitOptions(options)) {
      if (!seen.insert(entry.key).second)
        return std::make_pair(entry.valueOffset,
                              entry.key.str() + " is given twice");
      if (!llvm::is_contained(kIntegers, entry.key))
        continue;
      StringRef digits = entry.value;
      digits.consume_front("-");
      if (!digits.empty() && llvm::all_of(digits, llvm::isDigit) &&
          (digits.size() == 1 || digits.front() != '0'))
        continue;
      std::string why = entry.key.str() + "=" + entry.value.str() +
                        ": expected a decimal integer";
      if (digits.size() > 1 && digits.front() == '0')
        why += " without a leading 0 (it would be read as octal or "
               "hexadecimal)";
      return std::make_pair(entry.valueOffset, why);
    }
    return std::nullopt;
  }
};

} // namespace
