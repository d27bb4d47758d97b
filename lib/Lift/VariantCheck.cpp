//===- VariantCheck.cpp - What LLM-written CuIR computes ------------------===//

#include "cuir/Lift/VariantCheck.h"

#include "DiagnosticCapture.h"

#include "cuir/Dialect/CuIR.h"
#include "cuir/Interpreter/Interpreter.h"
#include "cuir/Support/Nesting.h"
#include "cuir/Transfer/Transfer.h"
#include "cuir/Variants/Variants.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mlir::cuir;
using namespace mlir::cuir::lift;
using llvm::StringRef;

namespace {

/// Rejects with the captured report, or `fallback` if nothing was reported.
Verdict reject(StringRef stage, DiagnosticCapture &capture,
               StringRef fallback) {
  std::string report = capture.takeReport();
  return {false, stage.str(), report.empty() ? fallback.str() : report};
}

/// The head dimension the kernel is written for: the static last size of
/// its q parameter (128 if it has none).
int64_t getHeadDim(KernelOp kernel) {
  for (BlockArgument arg : kernel.getBody().front().getArguments()) {
    auto role =
        kernel.getArgAttrOfType<StringAttr>(arg.getArgNumber(), CuIRDialect::ArgAttrHelper::getNameStr());
    auto memref = dyn_cast<MemRefType>(arg.getType());
    if (role && role.getValue() == "q" && memref && memref.getRank() > 0 &&
        !ShapedType::isDynamic(memref.getShape().back()))
      return memref.getShape().back();
  }
  return 128;
}

/// The `cuir.default` of parameter `i`, or null.
StringAttr getParamDefault(VariantOp variant, unsigned i) {
  ArrayAttr attrs = variant.getArgAttrsAttr();
  if (!attrs || i >= attrs.size())
    return {};
  auto dict = dyn_cast<DictionaryAttr>(attrs[i]);
  return dict ? dict.getAs<StringAttr>(CuIRDialect::DefaultAttrHelper::getNameStr()) : StringAttr();
}

/// The parameter of `kernel` with role `role`, or null.
BlockArgument getRoleArg(KernelOp kernel, StringRef role) {
  for (BlockArgument arg : kernel.getBody().front().getArguments()) {
    auto r =
        kernel.getArgAttrOfType<StringAttr>(arg.getArgNumber(), CuIRDialect::ArgAttrHelper::getNameStr());
    if (r && r.getValue() == role)
      return arg;
  }
  return {};
}

/// Keeps the static sizes of the kernel's q/k/lse parameters in `opt`: the
/// check's shapes are for kernels written for any size.
void keepStaticSizes(KernelOp kernel, InterpreterOptions &opt) {
  auto keep = [&](StringRef role, ArrayRef<int64_t *> dims) {
    BlockArgument arg = getRoleArg(kernel, role);
    auto memref = arg ? dyn_cast<MemRefType>(arg.getType()) : MemRefType();
    if (!memref || memref.getRank() != static_cast<int64_t>(dims.size()))
      return;
    for (auto [size, dim] : llvm::zip(memref.getShape(), dims))
      if (!ShapedType::isDynamic(size))
        *dim = size;
  };
  keep("q", {&opt.batch, &opt.seqQ, &opt.headsQ, &opt.headDim});
  keep("k", {&opt.batch, &opt.seqKV, &opt.headsKV, &opt.headDim});
  keep("lse", {&opt.batch, &opt.headsQ, &opt.seqQ});
}

/// Whether `kernel` computes causal attention when asked to (a `causal`
/// parameter), always (cuir.causal = true) or never.
std::pair<bool, bool> getCausalModes(KernelOp kernel) {
  if (auto fixed = kernel->getAttrOfType<BoolAttr>(CuIRDialect::CausalAttrHelper::getNameStr()))
    return {!fixed.getValue(), fixed.getValue()};
  return {true, bool(getRoleArg(kernel, "causal"))};
}

/// The problems of the semantic check (the head dimension is the kernel's).
/// The interpreter's options for `problem` on `kernel`, at its head dim.
InterpreterOptions getProblemOptions(const VariantProblem &problem,
                                     KernelOp kernel) {
  InterpreterOptions opt;
  opt.batch = problem.batch;
  opt.headsQ = problem.headsQ;
  opt.headsKV = problem.headsKV;
  opt.seqQ = problem.seqQ;
  opt.seqKV = problem.seqKV;
  opt.headDim = getHeadDim(kernel);
  return opt;
}

struct CheckShape {
  VariantProblem problem;
  bool causal;
};
const CheckShape kCheckShapes[] = {
    {{2, 2, 1, 200, 333}, false}, // ragged, more keys than queries
    {{1, 4, 2, 130, 257}, true},  // causal, shifted diagonal
    {{2, 2, 1, 333, 200}, true},  // causal, rows and blocks that see no key
};

/// Runs the check's problems on `kernel`; false after the first failure,
/// which has been reported.
bool checkKernel(KernelOp kernel, uint64_t &seed,
                 std::vector<SemanticRun> &runs) {
  for (StringRef role : {"q", "k", "v", "o"})
    if (!getRoleArg(kernel, role)) {
      emitError(kernel.getLoc())
          << "@" << kernel.getSymName()
          << " is not an attention kernel the semantic check can run: no "
             "parameter has cuir.arg = \""
          << role
          << "\" (standard attention needs q, k, v and o; see "
             "docs/ExecutionSemantics.md); a kernel that is not an "
             "attention kernel is lifted with check=none";
      return false;
    }
  auto [full, causal] = getCausalModes(kernel);
  for (const CheckShape &shape : kCheckShapes) {
    if (shape.causal ? !causal : !full)
      continue;
    InterpreterOptions opt = getProblemOptions(shape.problem, kernel);
    opt.causal = shape.causal;
    keepStaticSizes(kernel, opt);
    opt.seed = seed++;
    opt.tolerance = getKernelTolerance(kernel);
    std::string why;
    if (!kernelFits(kernel, opt, why)) {
      emitError(kernel.getLoc()) << "the semantic check cannot run @"
                                 << kernel.getSymName() << ": " << why;
      return false;
    }
    FailureOr<InterpreterReport> report = interpretKernel(kernel, opt);
    if (failed(report))
      return false;
    std::string summary = describeRun(kernel, opt, *report);
    if (!report->passed) {
      InFlightDiagnostic diag =
          emitError(kernel.getLoc())
          << "the lift does not compute standard attention: " << summary;
      if (!report->firstMismatch.empty())
        diag << "; first mismatch at " << report->firstMismatch;
      if (!report->worstMismatch.empty())
        diag << "; largest error at " << report->worstMismatch;
      return false;
    }
    runs.push_back(
        {kernel.getSymName().str(), opt, *report, std::move(summary)});
  }
  return true;
}

/// The kernel of a backward pass whose q parameter gives the head dimension
/// and the tolerance: the first with a q parameter, else the first.
KernelOp getQKernel(ArrayRef<KernelOp> kernels) {
  for (KernelOp kernel : kernels)
    if (getRoleArg(kernel, "q"))
      return kernel;
  return kernels.front();
}

/// Runs the check's problems on the backward pass `kernels` (a launch
/// sequence's, or one backward kernel), named `name`, against the float64
/// backward of standard attention (dq, dk, dv); false after the first
/// failure, which has been reported at `loc`.
bool checkBackward(StringRef name, Location loc, ArrayRef<KernelOp> kernels,
                   uint64_t &seed, std::vector<SemanticRun> &runs) {
  KernelOp qKernel = getQKernel(kernels);
  // Causal runs if some kernel masks causally on request (or always), full
  // ones unless some kernel is specialised for causal.
  bool full = true, causal = false;
  for (KernelOp kernel : kernels) {
    auto [kernelFull, kernelCausal] = getCausalModes(kernel);
    full &= kernelFull;
    causal |= kernelCausal;
  }
  for (const CheckShape &shape : kCheckShapes) {
    if (shape.causal ? !causal : !full)
      continue;
    InterpreterOptions opt = getProblemOptions(shape.problem, qKernel);
    opt.causal = shape.causal;
    for (KernelOp kernel : kernels)
      keepStaticSizes(kernel, opt);
    opt.seed = seed++;
    opt.tolerance = getKernelTolerance(qKernel);
    for (KernelOp kernel : kernels) {
      std::string why;
      if (!kernelFits(kernel, opt, why)) {
        emitError(loc) << "the semantic check cannot run @" << name << " (@"
                       << kernel.getSymName() << "): " << why;
        return false;
      }
    }
    FailureOr<InterpreterReport> report = interpretBackward(loc, kernels, opt);
    if (failed(report))
      return false;
    std::string summary = describeBackwardRun(name, kernels, opt, *report);
    if (!report->passed) {
      InFlightDiagnostic diag =
          emitError(loc)
          << "the lift does not compute the backward of standard attention: "
          << summary;
      if (!report->firstMismatch.empty())
        diag << "; first mismatch at " << report->firstMismatch;
      if (!report->worstMismatch.empty())
        diag << "; largest error at " << report->worstMismatch;
      return false;
    }
    runs.push_back({name.str(), opt, *report, std::move(summary),
                    /*backward=*/true});
  }
  return true;
}

} // namespace

double mlir::cuir::lift::getKernelTolerance(KernelOp kernel) {
  BlockArgument q = getRoleArg(kernel, "q");
  auto memref = q ? dyn_cast<MemRefType>(q.getType()) : MemRefType();
  return memref && memref.getElementType().isBF16() ? 1e-2 : 5e-3;
}

FailureOr<std::vector<SemanticRun>>
mlir::cuir::lift::checkStandardAttention(ModuleOp module) {
  std::vector<SemanticRun> runs;
  uint64_t seed = 0;
  bool passed = true;
  // A launch sequence (a backward pass) runs as a whole, as --cuir-interpret
  // runs it; its kernels do not run alone. A backward kernel in no sequence
  // is a sequence of one.
  llvm::DenseSet<Operation *> inSequence;
  for (auto seq : module.getOps<LaunchSequenceOp>()) {
    SmallVector<KernelOp> kernels = seq.getKernelOps();
    for (KernelOp kernel : kernels)
      inSequence.insert(kernel);
    passed &=
        checkBackward(seq.getSymName(), seq.getLoc(), kernels, seed, runs);
  }
  for (KernelOp kernel : module.getOps<KernelOp>()) {
    if (inSequence.contains(kernel))
      continue;
    if (isBackwardKernel(kernel)) {
      KernelOp one[] = {kernel};
      passed &=
          checkBackward(kernel.getSymName(), kernel.getLoc(), one, seed, runs);
      continue;
    }
    passed &= checkKernel(kernel, seed, runs);
  }
  if (!passed)
    return failure();
  return runs;
}

llvm::Expected<VariantProblem>
mlir::cuir::lift::parseVariantProblem(StringRef text) {
  llvm::SmallVector<StringRef> parts;
  text.trim().split(parts, 'x');
  int64_t values[5];
  bool ok = parts.size() == 5;
  for (unsigned i = 0; ok && i < 5; ++i)
    ok = !parts[i].getAsInteger(10, values[i]) && values[i] > 0;
  if (!ok)
    return llvm::createStringError(
        "check shape '" + text +
        "' is not BxHqxHkvxNqxNkv with positive sizes (e.g. 2x4x2x200x333)");
  if (values[1] % values[2] != 0)
    return llvm::createStringError("check shape '" + text +
                                   "': Hq must be a multiple of Hkv");
  VariantProblem problem;
  problem.batch = values[0];
  problem.headsQ = values[1];
  problem.headsKV = values[2];
  problem.seqQ = values[3];
  problem.seqKV = values[4];
  return problem;
}

/// The answer's one cuir.variant; anything else is an error at it.
static FailureOr<VariantOp> findTheVariant(ModuleOp module) {
  SmallVector<VariantOp> variants;
  Operation *other = nullptr;
  for (Operation &op : *module.getBody()) {
    if (auto variant = dyn_cast<VariantOp>(op))
      variants.push_back(variant);
    else if (!other)
      other = &op;
  }
  if (other)
    return emitError(other->getLoc())
           << "'" << other->getName()
           << "' does not belong in the answer: give exactly one cuir.variant "
              "and nothing else";
  if (variants.size() != 1)
    return emitError(variants.empty() ? module.getLoc() : variants[1].getLoc())
           << "the answer holds " << variants.size()
           << " cuir.variant ops; give exactly one";
  return variants.front();
}

/// The bodies become one elementwise op per score tile and C++ expressions
/// in the lowered kernel: scalar arith/math only, no nested regions. Said
/// here, at the op, rather than as an interpreter error inside the kernel.
static LogicalResult checkVariantOps(VariantOp variant) {
  bool foreign = false;
  variant.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<ScoreModOp, MaskModOp, YieldOp, memref::LoadOp>(op))
      return WalkResult::advance();
    StringRef dialect = op->getName().getDialectNamespace();
    if ((dialect == "arith" || dialect == "math") && op->getNumRegions() == 0)
      return WalkResult::advance();
    op->emitOpError() << "is not allowed in a variant: use arith and math "
                         "ops, memref.load of an array parameter and "
                         "cuir.yield"
                      << (op->getNumRegions() ? " (the bodies are single "
                                                "blocks: a branch is an "
                                                "arith.select)"
                                              : "");
    foreign = true;
    return WalkResult::skip();
  });
  return failure(foreign);
}

/// "name=value, ..." of the values the runs give the variant's parameters
/// (the reference receives the same by name); every one needs a value.
static FailureOr<std::string> describeParamValues(VariantOp variant,
                                                  const VariantChecks &checks) {
  Block &body = variant.getBody().front();
  std::string values;
  bool missing = false;
  for (unsigned i = 0, e = body.getNumArguments(); i < e; ++i) {
    StringRef name = variant.getParamName(i);
    if (isSizeParam(name))
      continue;
    std::string value;
    if (auto it = checks.params.find(name.str()); it != checks.params.end())
      value = it->second;
    else if (StringAttr def = getParamDefault(variant, i))
      value = def.getValue().str();
    if (value.empty()) {
      emitError(body.getArgument(i).getLoc())
          << "parameter '" << name
          << "' has no value for the checks: give it {cuir.default = "
             "\"...\"}, the default of the reference's keyword argument '"
          << name << "'";
      missing = true;
      continue;
    }
    values += (values.empty() ? "" : ", ") + name.str() + "=" + value;
  }
  if (missing)
    return failure();
  return values;
}

/// Applies `variant` to every kernel of `target` (a clone of the Source
/// CuIR), with the spec --transfer records for a variant file (its symbol).
/// Returns the rejection, if any.
static std::optional<Verdict> applyToTarget(VariantOp variant, ModuleOp target,
                                            DiagnosticCapture &capture) {
  if (target.getOps<KernelOp>().empty()) {
    emitError(target.getLoc()) << "the Source CuIR has no cuir.kernel";
    return reject("there is no kernel to apply it to", capture, "");
  }
  for (KernelOp kernel : llvm::to_vector(target.getOps<KernelOp>()))
    if (failed(transferKernel(kernel, variant, variant.getSymName())))
      return reject("the transfer cannot apply it", capture,
                    "the transfer failed without a diagnostic");
  if (failed(verify(target)))
    return reject("the Target CuIR does not verify", capture,
                  "the verifier failed");
  return std::nullopt;
}

/// Runs each problem on one kernel of `target`, in turn, at the kernel's
/// head dimension, against the reference; `runs` receives a line per run.
/// Returns the rejection, if any.
static std::optional<Verdict>
runAgainstReference(VariantOp variant, ModuleOp target,
                    const VariantChecks &checks, StringRef values,
                    DiagnosticCapture &capture, std::string &runs) {
  SmallVector<KernelOp> kernels = llvm::to_vector(target.getOps<KernelOp>());
  for (auto [i, problem] : llvm::enumerate(checks.problems)) {
    KernelOp kernel = kernels[i % kernels.size()];
    InterpreterOptions opt = getProblemOptions(problem, kernel);
    opt.seed = i;
    opt.tolerance = checks.tolerance;
    opt.reference = checks.reference;
    opt.python = checks.python;
    opt.params = checks.params;
    std::string why;
    if (!kernelFits(kernel, opt, why)) {
      emitError(kernel.getLoc()) << "the interpreter cannot run @"
                                 << kernel.getSymName() << ": " << why;
      return reject("the interpreter cannot run the Target CuIR", capture, "");
    }
    FailureOr<InterpreterReport> report = interpretKernel(kernel, opt);
    if (failed(report))
      return reject("running the Target CuIR against the reference failed",
                    capture, "the interpreter failed without a diagnostic");
    std::string summary = describeRun(kernel, opt, *report);
    if (!report->passed) {
      InFlightDiagnostic diag =
          emitError(variant.getLoc())
          << "the Target CuIR does not match the reference: " << summary;
      if (!values.empty())
        diag << "; parameters " << values;
      if (!report->firstMismatch.empty())
        diag << "; first mismatch at " << report->firstMismatch;
      if (!report->worstMismatch.empty())
        diag << "; largest error at " << report->worstMismatch;
      diag.report();
      return reject("the Target CuIR does not match the reference", capture,
                    "");
    }
    runs += "matches the reference: " + summary + "\n";
  }
  return std::nullopt;
}

/// The variant alone, without the candidate's locations.
static void recordAccepted(VariantOp variant, AcceptedVariant &accepted) {
  OwningOpRef<ModuleOp> file =
      ModuleOp::create(UnknownLoc::get(variant.getContext()));
  file->getBody()->push_back(variant->clone());
  accepted.text.clear();
  llvm::raw_string_ostream os(accepted.text);
  file->print(
      os, OpPrintingFlags().enableDebugInfo(false).printGenericOpForm(false));
  os << "\n";
  accepted.name = variant.getSymName().str();
}

Verdict mlir::cuir::lift::checkVariantCandidate(MLIRContext *context,
                                                const VariantChecks &checks,
                                                StringRef mlir, unsigned round,
                                                AcceptedVariant &accepted) {
  std::string bufferName = "transfer-round-" + std::to_string(round) + ".mlir";
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(mlir, bufferName), llvm::SMLoc());
  DiagnosticCapture capture(context, sourceMgr);

  if (failed(checkNesting(
          *sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID()), context)))
    return reject("it does not parse", capture, "it nests too deeply");
  ParserConfig config(context, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, config);
  if (!module)
    return reject("it does not parse", capture, "the parser failed");
  if (failed(verify(*module)))
    return reject("it does not verify", capture, "the verifier failed");

  // Exactly one variant: what a variant file for --transfer holds.
  FailureOr<VariantOp> variant = findTheVariant(*module);
  if (failed(variant))
    return reject("it is not one cuir.variant", capture, "");
  if (failed(checkVariantOps(*variant)))
    return reject("it uses ops a variant cannot hold", capture, "");
  FailureOr<std::string> values = describeParamValues(*variant, checks);
  if (failed(values))
    return reject("a parameter has no value", capture, "");

  OwningOpRef<ModuleOp> target = cast<ModuleOp>(checks.source->clone());
  if (std::optional<Verdict> rejected =
          applyToTarget(*variant, *target, capture))
    return *rejected;
  std::string runs;
  if (std::optional<Verdict> rejected = runAgainstReference(
          *variant, *target, checks, *values, capture, runs))
    return *rejected;

  recordAccepted(*variant, accepted);
  std::string notes = capture.takeReport();
  return {true, "", notes.empty() ? runs : notes + "\n" + runs};
}
