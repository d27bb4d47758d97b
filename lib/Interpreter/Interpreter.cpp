//===- Interpreter.cpp - Run a CuIR kernel and compare with a reference ---===//

#include "cuir/Interpreter/Interpreter.h"

#include "BlockMask.h"
#include "Machine.h"
#include "Reference.h"

#include "cuir/Support/ParamValue.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

using namespace mlir;
using namespace mlir::cuir;
using namespace mlir::cuir::interp;

namespace {

constexpr int64_t kMiB = int64_t(1) << 20;
/// Bytes the interpreter keeps per element of an input (its buffer and the
/// reference's copy), of an output (its buffer, the written marks, the
/// reference's values as read back) and of a parameter array (the values,
/// the buffer and the text the reference gets).
constexpr int64_t kInputBytes = 8, kOutputBytes = 24, kParamBytes = 40;

std::optional<int64_t> sum(ArrayRef<std::optional<int64_t>> terms) {
  int64_t n = 0;
  for (std::optional<int64_t> t : terms) {
    std::optional<int64_t> next = t ? llvm::checkedAdd(n, *t) : std::nullopt;
    if (!next)
      return std::nullopt;
    n = *next;
  }
  return n;
}

/// Bytes of the problem's inputs, outputs and the reference's copies.
std::optional<int64_t> problemBytes(const InterpreterOptions &opt) {
  return sum({product({opt.batch, opt.seqQ, opt.headsQ, opt.headDim,
                       kInputBytes}),
              product({2, opt.batch, opt.seqKV, opt.headsKV, opt.headDim,
                       kInputBytes}),
              product({opt.batch, opt.seqQ, opt.headsQ, opt.headDim,
                       kOutputBytes}),
              product({opt.batch, opt.headsQ, opt.seqQ, kOutputBytes}),
              product({opt.seqKV, 8})});
}

std::string describeSizes(const InterpreterOptions &opt) {
  return "B=" + std::to_string(opt.batch) + " Hq=" +
         std::to_string(opt.headsQ) + " Hkv=" + std::to_string(opt.headsKV) +
         " Nq=" + std::to_string(opt.seqQ) + " Nkv=" +
         std::to_string(opt.seqKV) + " d=" + std::to_string(opt.headDim);
}

/// The memory the interpreter may still take, against its limit.
class MemoryBudget {
public:
  MemoryBudget(int64_t limit, int64_t limitMiB)
      : limit(limit), limitMiB(limitMiB) {}

  /// Fails, with an error at `loc`, if `bytes` (std::nullopt: more than
  /// int64_t holds) do not fit in what is left.
  LogicalResult check(std::optional<int64_t> bytes, const Twine &what,
                      Location loc) const {
    if (bytes && *bytes >= 0 && *bytes <= limit - used)
      return success();
    InFlightDiagnostic diag = emitError(loc) << what << " needs ";
    if (bytes)
      diag << *bytes << " bytes, more than the " << (limit - used)
           << " bytes left of";
    else
      diag << "more than 2^63 bytes (its size overflows); see";
    return diag << " the interpreter's memory limit (" << limit
                << " bytes: max-memory=" << limitMiB << ", in MiB)";
  }

  /// Takes `bytes` for the rest of the run, or fails as `check` does.
  LogicalResult take(std::optional<int64_t> bytes, const Twine &what,
                     Location loc) {
    if (failed(check(bytes, what, loc)))
      return failure();
    used += *bytes;
    return success();
  }

private:
  int64_t limit, limitMiB, used = 0;
};

/// Bytes the interpreter stores a value of static shape `type` in.
std::optional<int64_t> storageBytes(ShapedType type) {
  SmallVector<int64_t> factors(type.getShape());
  factors.push_back(type.getElementType().isIntOrIndex() ? 8 : 4);
  return product(factors);
}

/// Checks, before anything runs, the memory the kernel's own values need:
/// shared memory (every cuir.alloc of a block, taken for the run) and each
/// tile (which must fit in what is left), and its barrier arrays.
LogicalResult checkKernelMemory(KernelOp kernel, MemoryBudget &budget) {
  std::optional<int64_t> shared = 0;
  WalkResult walk = kernel.walk([&](Operation *op) {
    if (auto init = dyn_cast<BarrierInitOp>(op)) {
      int64_t n = init.getBarriers().getType().getSize();
      if (n < 0 || failed(budget.check(
                       product({n, sizeof(MBarrierArray::Barrier)}),
                       "the barrier array", op->getLoc())))
        return WalkResult::interrupt();
    }
    for (Value result : op->getResults()) {
      auto type = dyn_cast<ShapedType>(result.getType());
      // Other memrefs are views of buffers already counted.
      if (!type || !type.hasStaticShape() ||
          (isa<MemRefType>(type) && !isa<AllocOp>(op)))
        continue;
      std::optional<int64_t> bytes = storageBytes(type);
      std::string what;
      llvm::raw_string_ostream(what) << "a value of type " << type;
      if (isa<AllocOp>(op)) {
        shared = shared && bytes ? llvm::checkedAdd(*shared, *bytes)
                                 : std::nullopt;
        if (failed(budget.check(shared, "the block's shared memory (" +
                                            what + " and the allocations "
                                            "before it)", op->getLoc())))
          return WalkResult::interrupt();
      } else if (failed(budget.check(bytes, what, op->getLoc()))) {
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return budget.take(shared, "the block's shared memory", kernel.getLoc());
}

/// Whether `e` divides by a constant below 1. Affine maps leave that
/// undefined; MLIR's folding computes some of it (floordiv by a negative
/// number), but no launch could, so the grid is not computable.
bool dividesByNonPositive(AffineExpr e) {
  bool found = false;
  e.walk([&](AffineExpr sub) {
    auto bin = dyn_cast<AffineBinaryOpExpr>(sub);
    if (!bin || bin.getKind() == AffineExprKind::Add ||
        bin.getKind() == AffineExprKind::Mul)
      return;
    auto divisor = dyn_cast<AffineConstantExpr>(bin.getRHS());
    found |= divisor && divisor.getValue() < 1;
  });
  return found;
}

/// The grid's extents for the index parameters `dims`, std::nullopt for an
/// extent that does not fold to a constant: it overflows (MLIR's folding
/// leaves such terms unfolded), reads a dimension that is not there or
/// divides by a non-positive number.
SmallVector<std::optional<int64_t>> evaluateGridMap(AffineMap grid,
                                                    ArrayRef<int64_t> dims) {
  MLIRContext *context = grid.getContext();
  SmallVector<AffineExpr> values = llvm::map_to_vector(
      dims, [&](int64_t d) { return getAffineConstantExpr(d, context); });
  // Dimensions without a value stay dimensions, so their results do not
  // fold.
  AffineMap folded = grid.replaceDimsAndSymbols(values, {}, grid.getNumDims(),
                                                grid.getNumSymbols());
  SmallVector<std::optional<int64_t>> extents;
  for (auto [expr, result] :
       llvm::zip(grid.getResults(), folded.getResults())) {
    auto constant = dyn_cast<AffineConstantExpr>(result);
    if (!constant || dividesByNonPositive(expr))
      extents.push_back(std::nullopt);
    else
      extents.push_back(constant.getValue());
  }
  return extents;
}

/// A contiguous global buffer of zeros viewed with `shape`.
View globalBuffer(Type elemType, ArrayRef<int64_t> shape) {
  auto buf = std::make_shared<Buffer>();
  buf->kind = getElemKind(elemType);
  buf->width = getIntWidth(elemType);
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  if (buf->kind == ElemKind::Int)
    buf->i.assign(n, 0);
  else
    buf->f.assign(n, 0.0f);
  return View::contiguous(std::move(buf), shape);
}

/// The shape the problem gives the global buffer of `role` (q, k, v, o,
/// lse, and a backward's d_o, dq, dk, dv), or std::nullopt for other roles.
std::optional<SmallVector<int64_t>> globalShape(StringRef role,
                                                const InterpreterOptions &opt) {
  using Shape = std::optional<SmallVector<int64_t>>;
  return llvm::StringSwitch<Shape>(role)
      .Cases({"q", "o", "d_o", "dq"},
             SmallVector<int64_t>{opt.batch, opt.seqQ, opt.headsQ, opt.headDim})
      .Cases(
          {"k", "v", "dk", "dv"},
          SmallVector<int64_t>{opt.batch, opt.seqKV, opt.headsKV, opt.headDim})
      .Case("lse", SmallVector<int64_t>{opt.batch, opt.headsQ, opt.seqQ})
      .Default(std::nullopt);
}

/// The problem size an index parameter of `role` takes, if `role` is one.
std::optional<int64_t> problemSize(StringRef role,
                                   const InterpreterOptions &opt) {
  return llvm::StringSwitch<std::optional<int64_t>>(role)
      .Case("B", opt.batch)
      .Case("Hq", opt.headsQ)
      .Case("Hkv", opt.headsKV)
      .Case("Nq", opt.seqQ)
      .Case("Nkv", opt.seqKV)
      .Case("d", opt.headDim)
      .Default(std::nullopt);
}

/// The values of a variant parameter of type `type` and `extent` elements
/// from its text: a number (broadcast), a list of `extent` numbers, or
/// "runs:L0,L1,..." (document ids: runs of those lengths, repeated, in every
/// batch row of `rowLength` tokens).
FailureOr<SmallVector<double>> expandParam(StringRef name, StringRef text,
                                           Type type, int64_t extent,
                                           int64_t rowLength, Location loc) {
  TextError error;
  FailureOr<ParamValue> value = parseParamValue(text, error);
  if (failed(value) || failed(checkParamValue(*value, type, error)))
    return emitError(loc) << "parameter '" << name << "' = '" << text
                          << "': " << error.message;
  SmallVector<double> values;
  if (value->runs) {
    ArrayRef<double> lengths = value->numbers;
    for (int64_t row = 0; row < extent / rowLength; ++row) {
      int64_t id = 0, left = lengths[0];
      for (int64_t t = 0; t < rowLength; ++t) {
        if (left == 0) {
          ++id;
          left = lengths[id % lengths.size()];
        }
        values.push_back(id);
        --left;
      }
    }
    return values;
  }
  values = value->numbers;
  if (values.size() == 1 && extent > 1)
    values.assign(extent, values[0]);
  if (static_cast<int64_t>(values.size()) != extent)
    return emitError(loc) << "parameter '" << name << "' needs " << extent
                          << " value(s), got " << values.size();
  return values;
}

/// Parameter values as the PyTorch reference gets them: one number, or a
/// list for several.
nlohmann::json referenceNumbers(ArrayRef<double> numbers, bool asList) {
  if (!asList)
    return jsonNumber(numbers.front());
  nlohmann::json list = nlohmann::json::array();
  for (double x : numbers)
    list.push_back(jsonNumber(x));
  return list;
}

/// An unbound parameter's text as the PyTorch reference gets it: numbers
/// stay numbers (a list for several), anything else is a string.
nlohmann::json referenceValue(StringRef text) {
  TextError error;
  FailureOr<ParamValue> value = failure();
  if (looksNumeric(text))
    value = parseParamValue(text, error);
  if (failed(value) || value->runs)
    return text.str();
  return referenceNumbers(value->numbers, value->numbers.size() != 1);
}

/// Where element `e` of a [B, N, H, d] tensor is, for messages: `seq` names
/// its sequence index (q or kv).
std::string tensorCoords(int64_t e, int64_t N, int64_t H, int64_t d,
                         StringRef seq) {
  int64_t c = e % d, h = (e / d) % H, n = (e / (d * H)) % N,
          b = e / (d * H * N);
  return "(b=" + std::to_string(b) + ", " + seq.str() + "=" +
         std::to_string(n) + ", h=" + std::to_string(h) +
         ", c=" + std::to_string(c) + ")";
}

/// Compares the written elements of `out` with `ref`: the relative error
/// (Frobenius) at most `tolerance`, no element off by more than `tolerance
/// * max(1, max |ref|)` (16-bit probabilities put errors of about 2^-8 *
/// max |v| on any element, so an element-relative bound would flag correct
/// low-precision kernels), no NaN, and, unless `sampled`, every element
/// written. `what` names the output in messages, and in the elements'
/// positions if `namePositions`.
OutputComparison compareBuffer(StringRef what, const Buffer &out,
                               ArrayRef<double> ref,
                               function_ref<std::string(int64_t)> coords,
                               double tolerance, bool sampled,
                               bool namePositions) {
  OutputComparison r;
  r.name = what.str();
  double diff2 = 0, ref2 = 0, refMax = 0;
  for (int64_t e = 0, n = out.f.size(); e < n; ++e) {
    if (!out.written[e])
      continue;
    ref2 += ref[e] * ref[e];
    ++r.elementsCompared;
    refMax = std::max(refMax, std::fabs(ref[e]));
  }
  double worst = -1;
  for (int64_t e = 0, n = out.f.size(); e < n; ++e) {
    if (!out.written[e]) {
      if (!sampled && r.firstMismatch.empty())
        r.firstMismatch =
            what.str() + " element " + coords(e) + " was never written";
      continue;
    }
    double got = out.f[e], want = ref[e];
    double err = std::isnan(got) ? INFINITY : std::fabs(got - want);
    diff2 += std::isinf(err) ? INFINITY : err * err;
    r.maxAbsError = std::max(r.maxAbsError, err);
    bool bad = std::isnan(got) || err > tolerance * std::max(1.0, refMax);
    if (!bad && err <= worst)
      continue;
    std::string where;
    llvm::raw_string_ostream(where)
        << (namePositions ? what.str() + " " : "") << coords(e) << ": got "
        << llvm::format("%.6g", got) << ", expected "
        << llvm::format("%.6g", want);
    if (bad && r.firstMismatch.empty())
      r.firstMismatch = where;
    if (err > worst) {
      worst = err;
      r.worstMismatch = where;
    }
  }
  r.relError = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  r.passed = r.elementsCompared > 0 && r.relError <= tolerance &&
             r.firstMismatch.empty();
  if (r.elementsCompared == 0)
    r.firstMismatch = "the kernel wrote no " + what.str() + " element";
  return r;
}

} // namespace

bool mlir::cuir::kernelFits(KernelOp kernel, const InterpreterOptions &opt,
                            std::string &why) {
  if (auto causal = kernel->getAttrOfType<BoolAttr>(CuIRDialect::CausalAttrHelper::getNameStr());
      causal && causal.getValue() != opt.causal) {
    why = causal.getValue() ? "specialised for causal attention"
                            : "specialised for non-causal attention";
    return false;
  }
  Block &entry = kernel.getBody().front();
  for (BlockArgument arg : entry.getArguments()) {
    auto role = kernel.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                    CuIRDialect::ArgAttrHelper::getNameStr());
    auto memref = dyn_cast<MemRefType>(arg.getType());
    if (!role || !memref)
      continue;
    StringRef r = role.getValue();
    std::optional<SmallVector<int64_t>> want = globalShape(r, opt);
    if (!want)
      continue;
    if (memref.getRank() != static_cast<int64_t>(want->size()))
      continue; // reported when it runs
    for (auto [d, have] : llvm::enumerate(memref.getShape()))
      if (!ShapedType::isDynamic(have) && have != (*want)[d]) {
        why = "parameter '" + r.str() + "' has static size " +
              std::to_string(have) + " in dimension " + std::to_string(d) +
              ", the problem needs " + std::to_string((*want)[d]);
        return false;
      }
  }
  return true;
}

std::string mlir::cuir::describeRun(KernelOp kernel,
                                    const InterpreterOptions &opt,
                                    const InterpreterReport &report) {
  std::string summary;
  llvm::raw_string_ostream os(summary);
  os << "@" << kernel.getSymName() << " " << describeSizes(opt)
     << (opt.causal ? " causal" : "") << ", " << report.blocksRun << "/"
     << report.blocksTotal << " blocks, " << report.gemms << " GEMMs, ";
  if (const std::optional<BlockMaskLists> &mask = report.blockMask)
    os << "block mask " << mask->partialTiles << " partial, " << mask->fullTiles
       << " full, " << mask->emptyTiles << " empty tiles, ";
  os << "reference " << opt.reference << ": max abs error "
     << llvm::format("%.3g", report.maxAbsError) << ", relative error "
     << llvm::format("%.3g", report.relError);
  if (report.lseCompared)
    os << ", lse max abs error " << llvm::format("%.3g", report.lseMaxAbsError);
  os << " (tolerance " << llvm::format("%g", opt.tolerance) << ")";
  return summary;
}

std::optional<OptionProblem>
mlir::cuir::checkOptions(const InterpreterOptions &opt) {
  std::pair<const char *, int64_t> sizes[] = {
      {"B", opt.batch},  {"Hq", opt.headsQ},   {"Hkv", opt.headsKV},
      {"Nq", opt.seqQ},  {"Nkv", opt.seqKV},   {"d", opt.headDim}};
  for (auto [name, value] : sizes)
    if (value <= 0)
      return OptionProblem{name, std::string(name) + " must be positive, not " +
                                     std::to_string(value)};
  if (opt.headsQ % opt.headsKV != 0)
    return OptionProblem{"Hq", "Hq (" + std::to_string(opt.headsQ) +
                                   ") must be a positive multiple of Hkv (" +
                                   std::to_string(opt.headsKV) + ")"};
  if (opt.sampleBlocks < 0)
    return OptionProblem{"blocks", "blocks must be 0 (every block) or a "
                                   "positive number of blocks, not " +
                                       std::to_string(opt.sampleBlocks)};
  if (opt.reference != "builtin") {
    if (opt.reference.empty())
      return OptionProblem{"reference", "reference= needs 'builtin' or a "
                                        "PyTorch reference file (.py)"};
    if (!llvm::sys::fs::is_regular_file(opt.reference))
      return OptionProblem{"reference",
                           "the PyTorch reference '" + opt.reference + "' " +
                               (llvm::sys::fs::is_directory(opt.reference)
                                    ? "is a directory"
                                    : "is not a file that exists")};
  }
  if (!std::isfinite(opt.tolerance) || opt.tolerance < 0) {
    std::string text;
    llvm::raw_string_ostream(text) << llvm::format("%g", opt.tolerance);
    return OptionProblem{"tolerance", "tolerance must be a finite number of "
                                      "at least 0, not " + text};
  }
  std::optional<int64_t> limit = llvm::checkedMul(opt.memoryLimitMiB, kMiB);
  if (!limit || *limit <= 0)
    return OptionProblem{"max-memory",
                         "max-memory must be a positive number of MiB below "
                         "2^43, not " + std::to_string(opt.memoryLimitMiB)};
  std::optional<int64_t> bytes = problemBytes(opt);
  if (bytes && *bytes <= *limit)
    return std::nullopt;
  // The largest size is the likeliest mistake.
  auto largest = llvm::max_element(
      sizes, [](auto a, auto b) { return a.second < b.second; });
  std::string message = "the problem " + describeSizes(opt) + " needs ";
  message += bytes ? std::to_string(*bytes) + " bytes for its inputs, "
                                              "outputs and the reference's "
                                              "copies, more than"
                   : "more than 2^63 bytes (its size overflows); see";
  message += " the interpreter's memory limit (" + std::to_string(*limit) +
             " bytes: max-memory=" + std::to_string(opt.memoryLimitMiB) +
             ", in MiB)";
  return OptionProblem{largest->first, message};
}

namespace {

/// The role prefix of a block mask's lists (`block_mask:kv_indices`).
constexpr StringLiteral kBlockListPrefix = "block_mask:";

/// How the interpreter binds a kernel parameter, by its role.
enum class Role {
  Input,
  Output,
  Size,
  Scale,
  Causal,
  Param,
  BlockList,
  Unknown
};

Role classifyRole(StringRef role, const InterpreterOptions &opt) {
  if (problemSize(role, opt))
    return Role::Size;
  if (variantParamName(role))
    return Role::Param;
  if (role.starts_with(kBlockListPrefix))
    return Role::BlockList;
  return llvm::StringSwitch<Role>(role)
      .Cases({"q", "k", "v"}, Role::Input)
      .Cases({"o", "lse"}, Role::Output)
      .Cases({"softmax_scale", "softmax_scale_log2"}, Role::Scale)
      .Case("causal", Role::Causal)
      .Default(Role::Unknown);
}

/// Binds variant parameters (`param:<name>`) from params= or their
/// cuir.default, and records the values the reference sees.
class ParamBinder {
public:
  ParamBinder(const InterpreterOptions &opt, Location loc, MemoryBudget &budget,
              Problem &prob)
      : opt(opt), loc(loc), budget(budget), prob(prob) {}

  /// The value of the parameter `name` of `type`, whose argument attributes
  /// (cuir.extent, cuir.default) are `attrs` (may be null).
  FailureOr<RtValue> bind(StringRef name, Type type, DictionaryAttr attrs);

private:
  /// A captured tensor: a static N-D parameter, from params= or its dense
  /// cuir.default.
  FailureOr<RtValue> bindTensor(StringRef name, MemRefType memref,
                                DictionaryAttr attrs);
  /// The elements of the array parameter `name`, from its cuir.extent.
  FailureOr<std::optional<int64_t>> extent(StringRef name, Type type,
                                           DictionaryAttr attrs);

  const InterpreterOptions &opt;
  Location loc;
  MemoryBudget &budget;
  Problem &prob;
};

/// One run of a kernel on the problem of the options: its random inputs,
/// the kernel's arguments, the blocks run and the comparison with the
/// reference, in the order interpretKernel calls them.
class KernelRun {
public:
  /// `shared`, if given, holds the buffers of a backward pass by role,
  /// which the kernel's arguments of those roles are bound to.
  KernelRun(KernelOp kernel, const InterpreterOptions &opt,
            MemoryBudget &budget,
            const llvm::StringMap<View> *shared = nullptr);

  /// Binds every kernel parameter by its role, drawing the random inputs.
  LogicalResult bindArguments();
  /// The grid's extents (3 of them) for the bound index parameters.
  FailureOr<SmallVector<int64_t, 3>> evaluateGrid();
  /// The linear ids of the blocks to run: all, or a sorted random sample.
  FailureOr<std::vector<int64_t>> chooseBlocks(ArrayRef<int64_t> grid);
  LogicalResult runBlocks(Machine &machine, ArrayRef<int64_t> grid,
                          ArrayRef<int64_t> order, InterpreterReport &report);
  /// Writes the inputs, outputs and meta.json to the dump directory.
  LogicalResult writeDump();
  /// Writes the block mask's lists there, as int32 .npy files of their
  /// [B', H', ...] shapes.
  LogicalResult writeBlockLists(function_ref<std::string(StringRef)> file);
  FailureOr<Output> runReference();
  void compareOutput(const Output &ref, bool sampled,
                     InterpreterReport &report);
  void compareLse(const Output &ref, InterpreterReport &report);
  /// The problem as the reference sees it (variant parameters included).
  const Problem &problem() const { return prob; }

private:
  LogicalResult bindArgument(BlockArgument arg);
  LogicalResult checkShape(BlockArgument arg, StringRef role,
                           ArrayRef<int64_t> want);
  /// A buffer of the problem's shape for the tensor argument `role`.
  FailureOr<View> problemBuffer(BlockArgument arg, StringRef role);
  LogicalResult bindInput(BlockArgument arg, StringRef role);
  LogicalResult bindOutput(BlockArgument arg, StringRef role);
  LogicalResult bindShared(BlockArgument arg, StringRef role, const View &v);
  LogicalResult bindVariantParam(BlockArgument arg, StringRef name);
  /// The kernel's block lists, from its cuir.block_mask on the bound
  /// arguments (or from params=, to plant a list).
  LogicalResult bindBlockLists();
  LogicalResult bindBlockList(unsigned i, BlockMaskLists &lists);
  void fillMissingInputs();

  KernelOp kernel;
  const InterpreterOptions &opt;
  Location loc;
  MemoryBudget &budget;
  const llvm::StringMap<View> *shared;
  std::mt19937_64 rng;
  std::normal_distribution<float> normal{0.0f, 1.0f};
  Problem prob;
  ParamBinder params{opt, loc, budget, prob};
  SmallVector<RtValue> args;
  std::optional<View> outView, lseView;
  /// The index parameters' values, in order: the grid's dimensions.
  SmallVector<int64_t> indexArgs;
  /// The arguments that are block lists, bound once the others are.
  SmallVector<unsigned> listArgs;

public:
  /// The block mask's lists, if the kernel has block-list arguments.
  std::optional<BlockMaskLists> blockMask;
};

KernelRun::KernelRun(KernelOp kernel, const InterpreterOptions &opt,
                     MemoryBudget &budget, const llvm::StringMap<View> *shared)
    : kernel(kernel), opt(opt), loc(kernel.getLoc()), budget(budget),
      shared(shared), rng(opt.seed) {
  prob.B = opt.batch;
  prob.Hq = opt.headsQ;
  prob.Hkv = opt.headsKV;
  prob.Nq = opt.seqQ;
  prob.Nkv = opt.seqKV;
  prob.d = opt.headDim;
  prob.causal = opt.causal;
  prob.scale = 1.0f / std::sqrt(float(opt.headDim));
  prob.params = nlohmann::json::object();
  prob.tensors = nlohmann::json::object();
  for (const auto &[name, text] : opt.params)
    prob.params[name] = referenceValue(text);
}

LogicalResult KernelRun::bindArguments() {
  for (BlockArgument arg : kernel.getBody().front().getArguments()) {
    if (failed(bindArgument(arg)))
      return failure();
    if (arg.getType().isIndex())
      indexArgs.push_back(std::get<Tile>(args.back()).getI(0));
  }
  if (failed(bindBlockLists()))
    return failure();
  // A backward pass checks its shared outputs itself.
  if (shared)
    return success();
  if (!outView)
    return emitError(loc) << "the kernel has no parameter with role 'o': "
                             "there is no output to check";
  fillMissingInputs();
  return success();
}

LogicalResult KernelRun::bindArgument(BlockArgument arg) {
  unsigned i = arg.getArgNumber();
  auto role = kernel.getArgAttrOfType<StringAttr>(i, CuIRDialect::ArgAttrHelper::getNameStr());
  if (!role)
    return emitError(loc) << "kernel parameter #" << i << " has no '"
                          << CuIRDialect::ArgAttrHelper::getNameStr()
                          << "' role; the interpreter cannot bind it";
  StringRef r = role.getValue();
  Type type = arg.getType();
  if (shared)
    if (auto it = shared->find(r); it != shared->end())
      return bindShared(arg, r, it->second);
  switch (classifyRole(r, opt)) {
  case Role::Input:
    return bindInput(arg, r);
  case Role::Output:
    return bindOutput(arg, r);
  case Role::Size:
    if (!type.isIndex())
      return emitError(loc) << "kernel parameter #" << i << " ('" << r
                            << "') must be an index";
    args.push_back(Tile::scalarI(64, *problemSize(r, opt)));
    return success();
  case Role::Scale: {
    if (!isa<FloatType>(type))
      return emitError(loc) << "kernel parameter #" << i << " ('" << r
                            << "') must be a float";
    float s = prob.scale * (r == "softmax_scale_log2" ? float(M_LOG2E) : 1.0f);
    args.push_back(Tile::scalarF(getElemKind(type), s));
    return success();
  }
  case Role::Causal:
    args.push_back(Tile::scalarI(getIntWidth(type), opt.causal));
    return success();
  case Role::Param:
    return bindVariantParam(arg, *variantParamName(r));
  case Role::BlockList:
    listArgs.push_back(i);
    args.emplace_back();
    return success();
  case Role::Unknown:
    break;
  }
  return emitError(loc) << "kernel parameter #" << i << " has unknown role '"
                        << r << "'";
}

LogicalResult KernelRun::checkShape(BlockArgument arg, StringRef role,
                                    ArrayRef<int64_t> want) {
  unsigned i = arg.getArgNumber();
  auto memref = dyn_cast<MemRefType>(arg.getType());
  if (!memref || memref.getRank() != static_cast<int64_t>(want.size()))
    return emitError(loc) << "kernel parameter #" << i << " ('" << role
                          << "') must be a rank-" << want.size() << " memref";
  for (auto [d, have] : llvm::enumerate(memref.getShape()))
    if (!ShapedType::isDynamic(have) && have != want[d])
      return emitError(loc) << "kernel parameter #" << i << " ('" << role
                            << "') has static size " << have << " in dimension "
                            << d << " but the problem needs " << want[d]
                            << " (check the interpreter's shape options)";
  return success();
}

FailureOr<View> KernelRun::problemBuffer(BlockArgument arg, StringRef role) {
  SmallVector<int64_t> shape = *globalShape(role, opt);
  if (failed(checkShape(arg, role, shape)))
    return failure();
  return globalBuffer(cast<MemRefType>(arg.getType()).getElementType(), shape);
}

LogicalResult KernelRun::bindInput(BlockArgument arg, StringRef role) {
  FailureOr<View> buffer = problemBuffer(arg, role);
  if (failed(buffer))
    return failure();
  View v = *buffer;
  std::vector<float> &dst = role == "q"   ? prob.q
                            : role == "k" ? prob.k
                                          : prob.v;
  dst.resize(v.buffer->f.size());
  for (size_t e = 0; e < dst.size(); ++e)
    v.buffer->f[e] = dst[e] = roundTo(v.buffer->kind, normal(rng));
  args.push_back(v);
  return success();
}

LogicalResult KernelRun::bindOutput(BlockArgument arg, StringRef role) {
  FailureOr<View> buffer = problemBuffer(arg, role);
  if (failed(buffer))
    return failure();
  View v = *buffer;
  // NaN until written, and every write marked: unwritten elements show.
  std::fill(v.buffer->f.begin(), v.buffer->f.end(), NAN);
  v.buffer->trackWrites = true;
  v.buffer->written.assign(v.buffer->f.size(), false);
  (role == "o" ? outView : lseView) = v;
  args.push_back(v);
  return success();
}

LogicalResult KernelRun::bindShared(BlockArgument arg, StringRef role,
                                    const View &v) {
  if (failed(checkShape(arg, role, v.sizes)))
    return failure();
  args.push_back(v);
  return success();
}

FailureOr<std::optional<int64_t>> ParamBinder::extent(StringRef name, Type type,
                                                      DictionaryAttr attrs) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return std::optional<int64_t>(1);
  auto ext =
      attrs
          ? attrs.getAs<StringAttr>(CuIRDialect::ExtentAttrHelper::getNameStr())
          : StringAttr();
  // std::nullopt: the extent overflows.
  std::optional<int64_t> extent =
      llvm::StringSwitch<std::optional<int64_t>>(ext ? ext.getValue() : "")
          .Case("batch", opt.batch)
          .Case("heads", opt.headsQ)
          .Case("batch*kv", llvm::checkedMul(opt.batch, opt.seqKV))
          .Default(-1);
  if ((extent && *extent < 0) || memref.getRank() != 1)
    return emitError(loc) << "array parameter '" << name
                          << "' needs a rank-1 memref and cuir.extent "
                             "batch, heads or batch*kv";
  return extent;
}

FailureOr<RtValue> ParamBinder::bind(StringRef name, Type type,
                                     DictionaryAttr attrs) {
  if (auto memref = dyn_cast<MemRefType>(type);
      memref && memref.hasStaticShape())
    return bindTensor(name, memref, attrs);
  std::string text;
  StringRef defaultName = CuIRDialect::DefaultAttrHelper::getNameStr();
  if (auto it = opt.params.find(name.str()); it != opt.params.end())
    text = it->second;
  else if (auto def =
               attrs ? attrs.getAs<StringAttr>(defaultName) : StringAttr())
    text = def.getValue().str();
  else
    return emitError(loc) << "kernel parameter '" << name
                          << "' needs a value: pass params=" << name
                          << "=<number or comma-separated list>";
  FailureOr<std::optional<int64_t>> n = extent(name, type, attrs);
  if (failed(n) ||
      failed(budget.take(*n ? product({**n, kParamBytes}) : std::nullopt,
                         "parameter '" + name + "'", loc)))
    return failure();
  FailureOr<SmallVector<double>> values =
      expandParam(name, text, type, **n, opt.seqKV, loc);
  if (failed(values))
    return failure();
  auto memref = dyn_cast<MemRefType>(type);
  // The reference sees the values the kernel sees.
  prob.params[name.str()] = referenceNumbers(*values, /*asList=*/!!memref);
  if (memref) {
    View v = globalBuffer(memref.getElementType(), {**n});
    for (int64_t e = 0; e < **n; ++e) {
      if (v.buffer->kind == ElemKind::Int)
        v.buffer->i[e] = static_cast<int64_t>((*values)[e]);
      else
        v.buffer->f[e] = roundTo(v.buffer->kind, (*values)[e]);
    }
    return RtValue(v);
  }
  if (getElemKind(type) == ElemKind::Int)
    return RtValue(Tile::scalarI(getIntWidth(type), int64_t((*values)[0])));
  return RtValue(Tile::scalarF(getElemKind(type), (*values)[0]));
}

LogicalResult KernelRun::bindVariantParam(BlockArgument arg, StringRef name) {
  FailureOr<RtValue> value = params.bind(
      name, arg.getType(), kernel.getArgAttrDict(arg.getArgNumber()));
  if (failed(value))
    return failure();
  args.push_back(*value);
  return success();
}

namespace {

/// Flattens the nested JSON list `j` into `out` (row-major), checking that
/// its nesting is `shape` from dimension `d` on.
LogicalResult flattenNested(const nlohmann::json &j, ArrayRef<int64_t> shape,
                            size_t d, ParamValue &out, std::string &error) {
  if (d == shape.size()) {
    if (!j.is_number()) {
      error = "'" + j.dump() + "' is not a number";
      return failure();
    }
    double x = j.get<double>();
    out.numbers.push_back(x);
    out.offsets.push_back(0);
    out.texts.push_back(j.dump());
    return success();
  }
  if (!j.is_array() || static_cast<int64_t>(j.size()) != shape[d]) {
    error = "dimension " + std::to_string(d) + " has " +
            (j.is_array() ? std::to_string(j.size()) : "no") +
            " element(s) where the shape needs " + std::to_string(shape[d]);
    return failure();
  }
  for (const nlohmann::json &e : j)
    if (failed(flattenNested(e, shape, d + 1, out, error)))
      return failure();
  return success();
}

std::string shapeText(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [k, d] : llvm::enumerate(shape))
    s += (k ? ", " : "") + std::to_string(d);
  return s + "]";
}

/// The row-major values of a captured tensor from its params= text: one
/// number (broadcast), a flat comma-separated list of every element, a
/// nested list as Python writes it (`[[1, 2], [3, 4]]`, the shape exactly)
/// or `runs:` (document ids, along the last dimension of every row).
FailureOr<SmallVector<double>> tensorValuesFromText(StringRef name,
                                                    StringRef text,
                                                    MemRefType memref,
                                                    Location loc) {
  ArrayRef<int64_t> shape = memref.getShape();
  int64_t n = memref.getNumElements();
  if (!text.trim().starts_with("[")) {
    FailureOr<SmallVector<double>> v =
        expandParam(name, text, memref, n, shape.back(), loc);
    return v;
  }
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr,
                                           /*allow_exceptions=*/false);
  ParamValue value;
  std::string error;
  TextError typeError;
  if (j.is_discarded())
    error = "not a nested list of numbers";
  else if (succeeded(flattenNested(j, shape, 0, value, error)) &&
           failed(checkParamValue(value, memref, typeError)))
    error = typeError.message;
  if (!error.empty())
    return emitError(loc) << "parameter '" << name << "' of shape "
                          << shapeText(shape) << ": " << error;
  return value.numbers;
}

/// A captured tensor's values as the PyTorch reference gets them.
nlohmann::json referenceTensor(MemRefType memref, const Buffer &buf) {
  Type elt = memref.getElementType();
  std::string dtype = elt.isInteger(1)    ? "bool"
                      : elt.isInteger(32) ? "int32"
                      : elt.isInteger(64) ? "int64"
                      : elt.isF16()       ? "float16"
                      : elt.isBF16()      ? "bfloat16"
                                          : "float32";
  nlohmann::json data = nlohmann::json::array();
  for (int64_t e = 0, n = buf.size(); e < n; ++e) {
    if (buf.kind == ElemKind::Int) {
      data.push_back(buf.i[e]);
      continue;
    }
    float x = buf.f[e];
    if (std::isfinite(x))
      data.push_back(double(x));
    else
      data.push_back(std::isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
  }
  ArrayRef<int64_t> shape = memref.getShape();
  return {{"shape", std::vector<int64_t>(shape.begin(), shape.end())},
          {"dtype", dtype},
          {"data", std::move(data)}};
}

/// Fills `buf` from a dense default of the tensor's own type (exact: the
/// verifier checked the type).
void fillFromDense(DenseElementsAttr dense, Buffer &buf) {
  int64_t e = 0;
  if (buf.kind == ElemKind::Int) {
    for (APInt v : dense.getValues<APInt>())
      buf.i[e++] = wrapInt(v.getSExtValue(), buf.width);
    return;
  }
  for (APFloat v : dense.getValues<APFloat>())
    buf.f[e++] = v.convertToFloat();
}

} // namespace

FailureOr<RtValue> ParamBinder::bindTensor(StringRef name, MemRefType memref,
                                           DictionaryAttr attrs) {
  StringRef defaultName = CuIRDialect::DefaultAttrHelper::getNameStr();
  std::optional<int64_t> bytes =
      product({memref.getNumElements(), kParamBytes});
  if (failed(budget.take(bytes, "parameter '" + name + "'", loc)))
    return failure();
  View v = globalBuffer(memref.getElementType(), memref.getShape());
  Buffer &buf = *v.buffer;
  std::optional<std::string> text;
  if (auto it = opt.params.find(name.str()); it != opt.params.end())
    text = it->second;
  else if (auto s = attrs ? attrs.getAs<StringAttr>(defaultName) : StringAttr())
    text = s.getValue().str();
  if (text) {
    FailureOr<SmallVector<double>> values =
        tensorValuesFromText(name, *text, memref, loc);
    if (failed(values))
      return failure();
    for (auto [e, x] : llvm::enumerate(*values)) {
      if (buf.kind == ElemKind::Int)
        buf.i[e] = wrapInt(static_cast<int64_t>(x), buf.width);
      else
        buf.f[e] = roundTo(buf.kind, x);
    }
  } else if (auto dense = attrs ? attrs.getAs<DenseElementsAttr>(defaultName)
                                : DenseElementsAttr()) {
    if (dense.getType().getShape() != memref.getShape() ||
        dense.getElementType() != memref.getElementType())
      return emitError(loc) << "parameter '" << name << "': its cuir.default "
                            << "has type " << dense.getType()
                            << ", not that of " << memref;
    fillFromDense(dense, buf);
  } else {
    return emitError(loc) << "kernel parameter '" << name << "' (" << memref
                          << ") needs a value: pass params=" << name
                          << "=<number, list of " << memref.getNumElements()
                          << " numbers or nested list of shape "
                          << shapeText(memref.getShape())
                          << "> or give it a cuir.default";
  }
  prob.params.erase(name.str());
  prob.tensors[name.str()] = referenceTensor(memref, buf);
  return RtValue(v);
}

/// The kernel argument whose role is `role`, or null.
static BlockArgument argWithRole(KernelOp kernel, StringRef role) {
  for (BlockArgument arg : kernel.getBody().getArguments())
    if (argRole(kernel, arg.getArgNumber()) == role)
      return arg;
  return {};
}

LogicalResult KernelRun::bindBlockLists() {
  if (listArgs.empty())
    return success();
  BlockMaskOp mask = getBlockMask(kernel);
  if (!mask)
    return emitError(loc) << "kernel parameter '"
                          << argRole(kernel, listArgs.front())
                          << "' is a block list, but the kernel names no "
                             "cuir.block_mask that defines it";
  // The mask sees the values the kernel sees.
  SmallVector<RtValue> maskArgs;
  for (unsigned i = 0, e = mask.getNumMaskArgs(); i < e; ++i) {
    BlockArgument arg = argWithRole(kernel, mask.getArgRole(i));
    if (!arg || llvm::is_contained(listArgs, arg.getArgNumber()))
      return mask.emitError() << "reads '" << mask.getArgRole(i)
                              << "', which the kernel cannot give it";
    maskArgs.push_back(args[arg.getArgNumber()]);
  }
  MaskProblem p{prob.B, prob.Hq, prob.Hkv, prob.Nq, prob.Nkv};
  if (failed(budget.take(blockMaskBytes(mask, p), "the block mask's lists",
                         mask.getLoc())))
    return failure();
  FailureOr<BlockMaskLists> lists = classifyBlockMask(mask, maskArgs, p);
  if (failed(lists))
    return failure();
  for (unsigned i : listArgs)
    if (failed(bindBlockList(i, *lists)))
      return failure();
  blockMask = std::move(*lists);
  return success();
}

LogicalResult KernelRun::bindBlockList(unsigned i, BlockMaskLists &lists) {
  StringRef role = argRole(kernel, i);
  StringRef name = role.drop_front(kBlockListPrefix.size());
  std::vector<int32_t> *list = lists.getList(name);
  if (!list)
    return emitError(loc) << "kernel parameter '" << role
                          << "' is no block list: expected block_mask: and "
                             "kv_num_blocks, kv_indices, full_kv_num_blocks, "
                             "full_kv_indices, their q_ transposes or q_order";
  int64_t n = list->size();
  auto memref = dyn_cast<MemRefType>(kernel.getArgument(i).getType());
  if (!memref || memref.getRank() != 1 ||
      !memref.getElementType().isInteger(32) ||
      (!memref.isDynamicDim(0) && memref.getDimSize(0) != n))
    return emitError(loc) << "kernel parameter '" << role
                          << "' must be a memref<?xi32> (of " << n
                          << " elements for this problem)";
  View v = globalBuffer(memref.getElementType(), {n});
  auto it = opt.params.find(name.str());
  if (it == opt.params.end()) {
    llvm::copy(*list, v.buffer->i.begin());
  } else {
    // A planted list: the kernel walks it, the reference does not.
    FailureOr<SmallVector<double>> values =
        expandParam(name, it->second, memref, n, opt.seqKV, loc);
    if (failed(values))
      return failure();
    for (int64_t e = 0; e < n; ++e)
      (*list)[e] = v.buffer->i[e] = static_cast<int64_t>((*values)[e]);
    prob.params.erase(name.str());
  }
  args[i] = v;
  return success();
}

void KernelRun::fillMissingInputs() {
  // The reference reads every input, also those the kernel has no
  // parameter for (or holds in integers).
  for (StringRef role : {"q", "k", "v"}) {
    std::vector<float> &input = role == "q"   ? prob.q
                                : role == "k" ? prob.k
                                              : prob.v;
    if (!input.empty())
      continue;
    input.resize(*product(*globalShape(role, opt)));
    for (float &x : input)
      x = roundTo(ElemKind::BF16, normal(rng));
  }
}

FailureOr<SmallVector<int64_t, 3>> KernelRun::evaluateGrid() {
  SmallVector<int64_t, 3> grid;
  AffineMap map = kernel.getGrid();
  for (auto [e, extent] :
       llvm::zip(map.getResults(), evaluateGridMap(map, indexArgs))) {
    if (extent && *extent >= 0) {
      grid.push_back(*extent);
      continue;
    }
    std::string expr;
    llvm::raw_string_ostream(expr) << e;
    return emitError(loc) << "the grid's dimension " << grid.size() << " ("
                          << expr << ") is "
                          << (extent ? "negative" : "not computable") << " for "
                          << describeSizes(opt)
                          << (extent ? ""
                                     : ": it overflows, reads a missing index "
                                       "parameter or divides by a non-positive "
                                       "number");
  }
  while (grid.size() < 3)
    grid.push_back(1);
  return grid;
}

FailureOr<std::vector<int64_t>>
KernelRun::chooseBlocks(ArrayRef<int64_t> grid) {
  std::optional<int64_t> blocks = product(grid);
  if (failed(budget.take(blocks ? product({*blocks, 8}) : std::nullopt,
                         "the list of the grid's blocks", loc)))
    return failure();
  std::vector<int64_t> order(*blocks);
  std::iota(order.begin(), order.end(), 0);
  if (opt.sampleBlocks > 0 && opt.sampleBlocks < *blocks) {
    std::shuffle(order.begin(), order.end(), rng);
    order.resize(opt.sampleBlocks);
    std::sort(order.begin(), order.end());
  }
  return order;
}

LogicalResult KernelRun::runBlocks(Machine &machine, ArrayRef<int64_t> grid,
                                   ArrayRef<int64_t> order,
                                   InterpreterReport &report) {
  machine.grid.assign(grid.begin(), grid.end());
  auto lastReport = std::chrono::steady_clock::now();
  for (int64_t linear : order) {
    SmallVector<int64_t, 3> id = {linear % grid[0],
                                  (linear / grid[0]) % grid[1],
                                  linear / (grid[0] * grid[1])};
    if (failed(machine.runBlock(id, args)))
      return failure();
    ++report.blocksRun;
    // Long runs say they are alive.
    auto now = std::chrono::steady_clock::now();
    if (now - lastReport > std::chrono::seconds(2)) {
      llvm::errs() << "cuir-interpret: " << report.blocksRun << "/"
                   << order.size() << " blocks\n";
      lastReport = now;
    }
  }
  report.gemms += machine.gemmsRun;
  return success();
}

LogicalResult KernelRun::writeDump() {
  auto file = [&](StringRef name) {
    SmallString<128> f(opt.dumpDir);
    llvm::sys::path::append(f, name);
    return std::string(f);
  };
  std::error_code ec = llvm::sys::fs::create_directories(opt.dumpDir);
  std::error_code metaEc;
  llvm::raw_fd_ostream meta(file("meta.json"), metaEc);
  const Problem &p = prob;
  if (ec || metaEc || !writeNpy(file("q.npy"), {p.B, p.Nq, p.Hq, p.d}, p.q) ||
      !writeNpy(file("k.npy"), {p.B, p.Nkv, p.Hkv, p.d}, p.k) ||
      !writeNpy(file("v.npy"), {p.B, p.Nkv, p.Hkv, p.d}, p.v) ||
      !writeNpy(file("o.npy"), {p.B, p.Nq, p.Hq, p.d}, outView->buffer->f) ||
      (lseView &&
       !writeNpy(file("lse.npy"), {p.B, p.Hq, p.Nq}, lseView->buffer->f)))
    return emitError(loc) << "cannot write the dump to '" << opt.dumpDir << "'";
  nlohmann::ordered_json info = {
      {"kernel", kernel.getSymName().str()},
      {"B", p.B},
      {"Hq", p.Hq},
      {"Hkv", p.Hkv},
      {"Nq", p.Nq},
      {"Nkv", p.Nkv},
      {"d", p.d},
      {"causal", p.causal},
      {"scale", jsonNumber(p.scale)},
      {"dtype", outView->buffer->kind == ElemKind::F16 ? "fp16" : "bf16"}};
  if (blockMask) {
    if (failed(writeBlockLists(file)))
      return failure();
    BlockMaskOp mask = getBlockMask(kernel);
    info["block_mask"] = {{"block_m", mask.getBlockM()},
                          {"block_n", mask.getBlockN()},
                          {"batches", blockMask->batches},
                          {"heads", blockMask->heads}};
  }
  meta << dumpJson(info) << "\n";
  return success();
}

LogicalResult
KernelRun::writeBlockLists(function_ref<std::string(StringRef)> file) {
  BlockMaskLists &l = *blockMask;
  int64_t B = l.batches, H = l.heads, QB = l.qBlocks, KB = l.kvBlocks;
  for (StringRef name : {"kv_num_blocks", "full_kv_num_blocks", "kv_indices",
                         "full_kv_indices", "q_num_blocks", "full_q_num_blocks",
                         "q_indices", "full_q_indices", "q_order"}) {
    bool kv = name.contains("kv_") || name == "q_order";
    SmallVector<int64_t, 4> shape = {B, H, kv ? QB : KB};
    if (name.ends_with("indices"))
      shape.push_back(kv ? KB : QB);
    if (!writeNpy(file((name + ".npy").str()), shape, *l.getList(name)))
      return emitError(loc) << "cannot write the block list '" << name
                            << "' to '" << opt.dumpDir << "'";
  }
  return success();
}

FailureOr<Output> KernelRun::runReference() {
  if (opt.reference != "builtin")
    return pytorchReference(prob, opt.reference, opt.python, loc);
  if (auto variant = kernel->getAttrOfType<StringAttr>(CuIRDialect::VariantAttrHelper::getNameStr()))
    return emitError(loc)
           << "the kernel computes the variant '" << variant.getValue()
           << "', but the built-in reference is standard attention: pass "
              "reference=<file.py> with the variant in PyTorch";
  return builtinReference(prob);
}

void KernelRun::compareOutput(const Output &ref, bool sampled,
                              InterpreterReport &report) {
  OutputComparison r = compareBuffer(
      "output", *outView->buffer, ref.o,
      [&](int64_t e) { return tensorCoords(e, prob.Nq, prob.Hq, prob.d, "q"); },
      opt.tolerance, sampled, /*namePositions=*/false);
  report.elementsCompared = r.elementsCompared;
  report.maxAbsError = r.maxAbsError;
  report.relError = r.relError;
  report.passed = r.passed;
  report.firstMismatch = r.firstMismatch;
  report.worstMismatch = r.worstMismatch;
}

void KernelRun::compareLse(const Output &ref, InterpreterReport &report) {
  if (!lseView || !ref.hasLse)
    return;
  const Buffer &l = *lseView->buffer;
  int64_t n = 0;
  for (int64_t e = 0, m = l.f.size(); e < m; ++e) {
    if (!l.written[e] || !std::isfinite(ref.lse[e]))
      continue;
    // A float32 log-sum-exp of a large score (a mask value of -6e4) cannot
    // come closer than its own rounding: four float32 ulps of the
    // reference are allowed beside the tolerance.
    double ulps = 4 * std::ldexp(1.0, std::ilogb(ref.lse[e]) - 23);
    double err = std::isnan(l.f[e])
                     ? INFINITY
                     : std::max(0.0, std::fabs(l.f[e] - ref.lse[e]) - ulps);
    report.lseMaxAbsError = std::max(report.lseMaxAbsError, err);
    ++n;
  }
  report.lseCompared = n > 0;
  if (report.lseCompared && report.lseMaxAbsError > opt.tolerance) {
    report.passed = false;
    if (report.firstMismatch.empty())
      report.firstMismatch =
          "the log-sum-exp differs from the reference (max abs error " +
          std::to_string(report.lseMaxAbsError) + ")";
  }
}

} // namespace

FailureOr<InterpreterReport>
mlir::cuir::interpretKernel(KernelOp kernel, const InterpreterOptions &opt) {
  Location loc = kernel.getLoc();
  if (std::optional<OptionProblem> problem = checkOptions(opt))
    return emitError(loc) << problem->message;
  // checkOptions made sure these fit.
  MemoryBudget budget(opt.memoryLimitMiB * kMiB, opt.memoryLimitMiB);
  if (failed(budget.take(problemBytes(opt), "the problem's data", loc)) ||
      failed(checkKernelMemory(kernel, budget)))
    return failure();

  KernelRun run(kernel, opt, budget);
  if (failed(run.bindArguments()))
    return failure();
  FailureOr<SmallVector<int64_t, 3>> grid = run.evaluateGrid();
  if (failed(grid))
    return failure();
  FailureOr<std::vector<int64_t>> order = run.chooseBlocks(*grid);
  if (failed(order))
    return failure();

  InterpreterReport report;
  report.blocksTotal = *product(*grid);
  Machine machine(kernel);
  if (failed(run.runBlocks(machine, *grid, *order, report)) ||
      (!opt.dumpDir.empty() && failed(run.writeDump())))
    return failure();
  report.blockMask = std::move(run.blockMask);

  FailureOr<Output> ref = run.runReference();
  if (failed(ref))
    return failure();
  bool sampled = static_cast<int64_t>(order->size()) < report.blocksTotal;
  run.compareOutput(*ref, sampled, report);
  run.compareLse(*ref, report);
  return report;
}

FailureOr<BlockMaskLists>
mlir::cuir::computeBlockMaskLists(BlockMaskOp mask,
                                  const InterpreterOptions &opt) {
  Location loc = mask.getLoc();
  if (std::optional<OptionProblem> problem = checkOptions(opt))
    return emitError(loc) << problem->message;
  MemoryBudget budget(opt.memoryLimitMiB * kMiB, opt.memoryLimitMiB);
  Problem prob{};
  prob.params = nlohmann::json::object();
  prob.tensors = nlohmann::json::object();
  ParamBinder params(opt, loc, budget, prob);
  ArrayAttr attrs = mask.getArgAttrsAttr();
  SmallVector<RtValue> args;
  for (unsigned i = 0, e = mask.getNumMaskArgs(); i < e; ++i) {
    StringRef role = mask.getArgRole(i);
    Type type = mask.getFunctionType().getInput(i);
    if (std::optional<int64_t> size = problemSize(role, opt);
        size && type.isIntOrIndex()) {
      args.push_back(Tile::scalarI(getIntWidth(type), *size));
      continue;
    }
    std::optional<StringRef> name = variantParamName(role);
    if (!name)
      return emitError(loc) << "block mask argument '" << role
                            << "' is neither an integer size (B, Hq, Hkv, "
                               "Nq, Nkv, d) nor a variant parameter "
                               "(param:<name>); the interpreter cannot bind it";
    FailureOr<RtValue> value =
        params.bind(*name, type, cast<DictionaryAttr>(attrs[i]));
    if (failed(value))
      return failure();
    args.push_back(*value);
  }
  MaskProblem p{opt.batch, opt.headsQ, opt.headsKV, opt.seqQ, opt.seqKV};
  if (failed(
          budget.take(blockMaskBytes(mask, p), "the block mask's lists", loc)))
    return failure();
  return classifyBlockMask(mask, args, p);
}

//===----------------------------------------------------------------------===//
// Backward passes
//===----------------------------------------------------------------------===//

namespace {

/// Bytes of the per-element record of the blocks that accessed an output
/// or workspace element.
constexpr int64_t kBlockAccessBytes = sizeof(Buffer::BlockAccess);

bool isBackwardInput(StringRef role) {
  return llvm::is_contained({"q", "k", "v", "o", "d_o", "lse"}, role);
}

/// A backward pass: its kernels, run in order on the buffers they share by
/// role, and the comparison of dq, dk and dv with the reference.
class BackwardRun {
public:
  BackwardRun(Location loc, ArrayRef<KernelOp> kernels,
              const InterpreterOptions &opt, MemoryBudget &budget);

  /// Allocates every buffer a kernel declares (the first declaration of a
  /// role fixes its type) and draws q, k, v and d_o.
  LogicalResult declareBuffers();
  /// Binds every kernel's arguments (the shared buffers, sizes, variant
  /// parameters), gathering the parameters the reference sees.
  LogicalResult bindKernels();
  /// Computes the reference's O, LSE and gradients; writes O and LSE into
  /// their buffers.
  LogicalResult runReference();
  /// Runs every block of every kernel, in order.
  LogicalResult runKernels(InterpreterReport &report);
  void compare(InterpreterReport &report);

private:
  /// The shape of the buffer of `role`, declared by argument `i` of
  /// `kernel`: the problem's for a tensor role, the cuir.shape's for a
  /// workspace.
  FailureOr<SmallVector<int64_t>> bufferShape(KernelOp kernel, unsigned i,
                                              StringRef role);
  LogicalResult declareBuffer(KernelOp kernel, unsigned i, StringRef role);
  /// The zeroed fp32 gradient buffer of a parameter ("grad:<name>"), of
  /// the parameter's shape.
  LogicalResult declareGradBuffer(KernelOp kernel, unsigned i, StringRef role);
  /// The problem vector an input role's values go to, or null.
  std::vector<float> *problemInput(StringRef role);

  SmallVector<KernelOp> kernels;
  const InterpreterOptions &opt;
  MemoryBudget &budget;
  Location loc;
  llvm::StringMap<View> buffers;
  std::vector<std::unique_ptr<KernelRun>> runs;
  Problem prob;
  BackwardOutput ref;
};

BackwardRun::BackwardRun(Location loc, ArrayRef<KernelOp> kernels,
                         const InterpreterOptions &opt, MemoryBudget &budget)
    : kernels(kernels), opt(opt), budget(budget), loc(loc) {
  prob.B = opt.batch;
  prob.Hq = opt.headsQ;
  prob.Hkv = opt.headsKV;
  prob.Nq = opt.seqQ;
  prob.Nkv = opt.seqKV;
  prob.d = opt.headDim;
  prob.causal = opt.causal;
  prob.scale = 1.0f / std::sqrt(float(opt.headDim));
  prob.params = nlohmann::json::object();
  prob.tensors = nlohmann::json::object();
}

std::vector<float> *BackwardRun::problemInput(StringRef role) {
  return llvm::StringSwitch<std::vector<float> *>(role)
      .Case("q", &prob.q)
      .Case("k", &prob.k)
      .Case("v", &prob.v)
      .Case("d_o", &prob.dO)
      .Default(nullptr);
}

FailureOr<SmallVector<int64_t>>
BackwardRun::bufferShape(KernelOp kernel, unsigned i, StringRef role) {
  if (std::optional<SmallVector<int64_t>> shape = globalShape(role, opt))
    return *shape;
  auto map = kernel.getArgAttrOfType<AffineMapAttr>(
      i, CuIRDialect::ShapeAttrHelper::getNameStr());
  // The verifier requires the map of a workspace.
  SmallVector<int64_t> shape;
  for (auto [d, extent] : llvm::enumerate(evaluateGridMap(
           map.getValue(), {opt.batch, opt.headsQ, opt.headsKV, opt.seqQ,
                            opt.seqKV, opt.headDim}))) {
    if (!extent || *extent < 0)
      return emitError(kernel.getLoc())
             << "workspace '" << role << "': extent " << d << " of its "
             << CuIRDialect::ShapeAttrHelper::getNameStr() << " is "
             << (extent ? "negative" : "not computable (it overflows)")
             << " for " << describeSizes(opt);
    shape.push_back(*extent);
  }
  return shape;
}

LogicalResult BackwardRun::declareBuffer(KernelOp kernel, unsigned i,
                                         StringRef role) {
  FailureOr<SmallVector<int64_t>> shape = bufferShape(kernel, i, role);
  if (failed(shape))
    return failure();
  bool input = isBackwardInput(role);
  std::optional<int64_t> n = product(*shape);
  std::optional<int64_t> bytes =
      n ? product({*n, input ? kInputBytes : kOutputBytes + kBlockAccessBytes})
        : std::nullopt;
  if (failed(budget.take(bytes, "buffer '" + role + "'", kernel.getLoc())))
    return failure();
  auto memref = cast<MemRefType>(kernel.getArgumentTypes()[i]);
  View v = globalBuffer(memref.getElementType(), *shape);
  Buffer &buf = *v.buffer;
  if (!input) {
    // Outputs start poisoned, workspaces as garbage: the kernels must
    // write (or zero) what they read.
    if (buf.kind == ElemKind::Int)
      std::fill(buf.i.begin(), buf.i.end(), wrapInt(0x5a5a5a5a5a5a, buf.width));
    else
      std::fill(buf.f.begin(), buf.f.end(), NAN);
    buf.trackWrites = true;
    buf.written.assign(buf.size(), false);
    buf.blockAccess.resize(buf.size());
  }
  buffers[role] = v;
  return success();
}

LogicalResult BackwardRun::declareGradBuffer(KernelOp kernel, unsigned i,
                                             StringRef role) {
  auto memref = cast<MemRefType>(kernel.getArgumentTypes()[i]);
  SmallVector<int64_t> shape(memref.getShape());
  if (!memref.hasStaticShape()) {
    auto ext = kernel.getArgAttrOfType<StringAttr>(
        i, CuIRDialect::ExtentAttrHelper::getNameStr());
    std::optional<int64_t> n =
        llvm::StringSwitch<std::optional<int64_t>>(ext ? ext.getValue() : "")
            .Case("batch", opt.batch)
            .Case("heads", opt.headsQ)
            .Case("batch*kv", llvm::checkedMul(opt.batch, opt.seqKV))
            .Default(-1);
    if (memref.getRank() != 1 || (n && *n < 0))
      return emitError(kernel.getLoc())
             << "gradient buffer '" << role
             << "' needs a static shape, or rank 1 and a cuir.extent "
                "batch, heads or batch*kv";
    if (!n)
      return emitError(kernel.getLoc())
             << "gradient buffer '" << role << "': its extent overflows";
    shape = {*n};
  }
  std::optional<int64_t> n = product(shape);
  if (failed(budget.take(n ? product({*n, kOutputBytes}) : std::nullopt,
                         "buffer '" + role + "'", kernel.getLoc())))
    return failure();
  // Zeroed, as the caller hands it over; every element is compared (one
  // that nothing adds to must stay 0).
  View v = globalBuffer(memref.getElementType(), shape);
  Buffer &buf = *v.buffer;
  buf.written.assign(buf.size(), true);
  buf.blockAccess.resize(buf.size());
  buffers[role] = v;
  prob.trainable.push_back({role.drop_front(kGradRolePrefix.size()).str(), *n});
  return success();
}

LogicalResult BackwardRun::declareBuffers() {
  for (KernelOp kernel : kernels)
    for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i) {
      StringRef role = argRole(kernel, i);
      if (role.starts_with(kGradRolePrefix) && !buffers.count(role) &&
          isa<MemRefType>(kernel.getArgumentTypes()[i])) {
        if (failed(declareGradBuffer(kernel, i, role)))
          return failure();
        continue;
      }
      bool tensor =
          globalShape(role, opt) || role.starts_with(kWorkspaceRolePrefix);
      if (!tensor || buffers.count(role) ||
          !isa<MemRefType>(kernel.getArgumentTypes()[i]))
        continue;
      if (failed(declareBuffer(kernel, i, role)))
        return failure();
    }
  for (StringRef role : kBackwardOutputRoles)
    if (!buffers.count(role))
      return emitError(loc) << "the backward pass has no '" << role
                            << "' output: no kernel has a parameter with "
                               "that role";
  // The reference reads every input, also those no kernel reads.
  std::mt19937_64 rng(opt.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (StringRef role : {"q", "k", "v", "d_o"}) {
    auto it = buffers.find(role);
    ElemKind kind =
        it == buffers.end() ? ElemKind::BF16 : it->second.buffer->kind;
    std::vector<float> &dst = *problemInput(role);
    dst.resize(*product(*globalShape(role, opt)));
    for (float &x : dst)
      x = roundTo(kind, normal(rng));
    if (it != buffers.end())
      it->second.buffer->f = dst;
  }
  return success();
}

LogicalResult BackwardRun::bindKernels() {
  for (KernelOp kernel : kernels) {
    if (failed(checkKernelMemory(kernel, budget)))
      return failure();
    runs.push_back(std::make_unique<KernelRun>(kernel, opt, budget, &buffers));
    if (failed(runs.back()->bindArguments()))
      return failure();
    // The reference sees every kernel's parameter values: those a kernel
    // bound, not the option text (`runs:...`) a kernel that does not read
    // the parameter keeps.
    for (const auto &[name, value] : runs.back()->problem().params.items()) {
      auto text = opt.params.find(name);
      bool unbound =
          text != opt.params.end() && value == referenceValue(text->second);
      if (!unbound || !prob.params.contains(name))
        prob.params[name] = value;
    }
    prob.tensors.update(runs.back()->problem().tensors);
  }
  for (const auto &[name, value] : prob.tensors.items())
    prob.params.erase(name);
  for (const auto &[name, text] : opt.params)
    if (!prob.params.contains(name) && !prob.tensors.contains(name))
      prob.params[name] = referenceValue(text);
  return success();
}

LogicalResult BackwardRun::runReference() {
  if (opt.reference != "builtin") {
    FailureOr<BackwardOutput> out =
        pytorchBackward(prob, opt.reference, opt.python, loc);
    if (failed(out))
      return failure();
    if (!out->forward.hasLse)
      return emitError(loc) << "the PyTorch reference '" << opt.reference
                            << "' gave no LSE, which the backward reads";
    ref = std::move(*out);
  } else {
    for (KernelOp kernel : kernels)
      if (auto variant = kernel->getAttrOfType<StringAttr>(
              CuIRDialect::VariantAttrHelper::getNameStr()))
        return emitError(kernel.getLoc())
               << "the kernel computes the variant '" << variant.getValue()
               << "', but the built-in reference is standard attention: "
                  "pass reference=<file.py> with the variant in PyTorch";
    ref.forward = builtinReference(prob);
    ref.grads = builtinBackward(prob, ref.forward);
  }
  if (auto it = buffers.find("o"); it != buffers.end()) {
    Buffer &o = *it->second.buffer;
    for (auto [e, x] : llvm::enumerate(ref.forward.o))
      o.f[e] = roundTo(o.kind, x);
  }
  // The forward writes -inf for a row that sees no key.
  if (auto it = buffers.find("lse"); it != buffers.end())
    for (auto [e, x] : llvm::enumerate(ref.forward.lse))
      it->second.buffer->f[e] = std::isfinite(x) ? float(x) : -INFINITY;
  return success();
}

LogicalResult BackwardRun::runKernels(InterpreterReport &report) {
  report.kernelsRun = runs.size();
  for (auto [kernel, run] : llvm::zip(kernels, runs)) {
    FailureOr<SmallVector<int64_t, 3>> grid = run->evaluateGrid();
    if (failed(grid))
      return failure();
    FailureOr<std::vector<int64_t>> order = run->chooseBlocks(*grid);
    if (failed(order))
      return failure();
    report.blocksTotal += *product(*grid);
    Machine machine(kernel);
    if (failed(run->runBlocks(machine, *grid, *order, report)))
      return failure();
    if (run->blockMask && !report.blockMask)
      report.blockMask = std::move(run->blockMask);
    // The next launch is ordered after this one.
    for (auto &entry : buffers)
      llvm::fill(entry.second.buffer->blockAccess, Buffer::BlockAccess{});
  }
  return success();
}

void BackwardRun::compare(InterpreterReport &report) {
  report.passed = true;
  const Gradients &g = ref.grads;
  std::pair<StringRef, const std::vector<double> *> outputs[] = {
      {"dq", &g.dq}, {"dk", &g.dk}, {"dv", &g.dv}};
  for (const auto &output : outputs) {
    StringRef name = output.first;
    bool isQ = name == "dq";
    int64_t N = isQ ? prob.Nq : prob.Nkv, H = isQ ? prob.Hq : prob.Hkv;
    OutputComparison r = compareBuffer(
        name, *buffers[name].buffer, *output.second,
        [&](int64_t e) {
          return tensorCoords(e, N, H, prob.d, isQ ? "q" : "kv");
        },
        opt.tolerance, /*sampled=*/false, /*namePositions=*/true);
    if (!r.passed && report.passed) {
      report.passed = false;
      report.firstMismatch = r.firstMismatch;
      report.worstMismatch = r.worstMismatch;
    }
    report.outputs.push_back(std::move(r));
  }
  for (const auto &[name, grad] : g.params) {
    std::string role = (kGradRolePrefix + name).str();
    OutputComparison r = compareBuffer(
        role, *buffers[role].buffer, grad,
        [&](int64_t e) { return "element " + std::to_string(e); },
        opt.tolerance, /*sampled=*/false, /*namePositions=*/true);
    if (!r.passed && report.passed) {
      report.passed = false;
      report.firstMismatch = r.firstMismatch;
      report.worstMismatch = r.worstMismatch;
    }
    report.outputs.push_back(std::move(r));
  }
}

} // namespace

FailureOr<InterpreterReport>
mlir::cuir::interpretBackward(Location loc, ArrayRef<KernelOp> kernels,
                              const InterpreterOptions &opt) {
  if (std::optional<OptionProblem> problem = checkOptions(opt))
    return emitError(loc) << problem->message;
  if (opt.sampleBlocks > 0)
    return emitError(loc) << "blocks=" << opt.sampleBlocks
                          << " samples one kernel's blocks; a backward pass "
                             "runs every block, as its later kernels read "
                             "what the earlier ones wrote";
  MemoryBudget budget(opt.memoryLimitMiB * kMiB, opt.memoryLimitMiB);
  BackwardRun run(loc, kernels, opt, budget);
  InterpreterReport report;
  if (failed(run.declareBuffers()) || failed(run.bindKernels()) ||
      failed(run.runReference()) || failed(run.runKernels(report)))
    return failure();
  run.compare(report);
  return report;
}

std::string mlir::cuir::describeBackwardRun(StringRef name,
                                            ArrayRef<KernelOp> kernels,
                                            const InterpreterOptions &opt,
                                            const InterpreterReport &report) {
  std::string summary;
  llvm::raw_string_ostream os(summary);
  os << "@" << name << " [";
  llvm::interleaveComma(kernels, os,
                        [&](KernelOp k) { os << "@" << k.getSymName(); });
  os << "] " << describeSizes(opt) << (opt.causal ? " causal" : "") << ", "
     << report.kernelsRun << " kernel(s), " << report.blocksRun << "/"
     << report.blocksTotal << " blocks, " << report.gemms << " GEMMs, ";
  if (const std::optional<BlockMaskLists> &mask = report.blockMask)
    os << "block mask " << mask->partialTiles << " partial, " << mask->fullTiles
       << " full, " << mask->emptyTiles << " empty tiles, ";
  os << "reference " << opt.reference << ": ";
  llvm::interleave(
      report.outputs, os,
      [&](const OutputComparison &r) {
        os << r.name << " max abs error " << llvm::format("%.3g", r.maxAbsError)
           << ", relative error " << llvm::format("%.3g", r.relError);
      },
      "; ");
  os << " (tolerance " << llvm::format("%g", opt.tolerance) << ")";
  return summary;
}
