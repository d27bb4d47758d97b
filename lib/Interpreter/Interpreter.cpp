//===- Interpreter.cpp - Run a CuIR kernel and compare with a reference ---===//

#include "cuir/Interpreter/Interpreter.h"

#include "Machine.h"
#include "Reference.h"

#include "cuir/Support/ParamValue.h"

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

/// The product of `factors`, or std::nullopt when it overflows.
std::optional<int64_t> product(ArrayRef<int64_t> factors) {
  int64_t n = 1;
  for (int64_t f : factors) {
    std::optional<int64_t> next = llvm::checkedMul(n, f);
    if (!next)
      return std::nullopt;
    n = *next;
  }
  return n;
}

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

/// The value of `e` for the index parameters `dims`, or std::nullopt when
/// it overflows, reads a dimension that is not there or divides by a
/// non-positive number.
std::optional<int64_t> evalAffine(AffineExpr e, ArrayRef<int64_t> dims) {
  switch (e.getKind()) {
  case AffineExprKind::Constant:
    return cast<AffineConstantExpr>(e).getValue();
  case AffineExprKind::DimId: {
    unsigned pos = cast<AffineDimExpr>(e).getPosition();
    return pos < dims.size() ? std::optional<int64_t>(dims[pos])
                             : std::nullopt;
  }
  case AffineExprKind::SymbolId:
    return 0;
  default:
    break;
  }
  auto bin = cast<AffineBinaryOpExpr>(e);
  std::optional<int64_t> l = evalAffine(bin.getLHS(), dims),
                         r = evalAffine(bin.getRHS(), dims);
  if (!l || !r)
    return std::nullopt;
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return llvm::checkedAdd(*l, *r);
  case AffineExprKind::Mul:
    return llvm::checkedMul(*l, *r);
  default:
    break;
  }
  if (*r <= 0)
    return std::nullopt;
  int64_t quotient = *l / *r, remainder = *l % *r;
  switch (e.getKind()) {
  case AffineExprKind::Mod:
    return remainder < 0 ? remainder + *r : remainder;
  case AffineExprKind::FloorDiv:
    return remainder < 0 ? quotient - 1 : quotient;
  case AffineExprKind::CeilDiv:
    return remainder > 0 ? quotient + 1 : quotient;
  default:
    return std::nullopt;
  }
}

/// A contiguous global buffer viewed with `shape`.
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
  View v;
  v.buffer = buf;
  v.sizes.assign(shape.begin(), shape.end());
  v.strides.resize(shape.size());
  int64_t stride = 1;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    v.strides[d] = stride;
    stride *= shape[d];
  }
  return v;
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

/// An unbound parameter's text as the PyTorch reference gets it: numbers
/// stay numbers (a list for several), anything else is a string.
llvm::json::Value referenceValue(StringRef text) {
  TextError error;
  FailureOr<ParamValue> value = failure();
  if (looksNumeric(text))
    value = parseParamValue(text, error);
  if (failed(value) || value->runs)
    return text.str();
  if (value->numbers.size() == 1)
    return value->numbers.front();
  return llvm::json::Array(value->numbers);
}

struct Coords {
  std::string str(int64_t b, int64_t n, int64_t h, int64_t c) {
    return "(b=" + std::to_string(b) + ", q=" + std::to_string(n) +
           ", h=" + std::to_string(h) + ", c=" + std::to_string(c) + ")";
  }
};

} // namespace

bool mlir::cuir::kernelFits(KernelOp kernel, const InterpreterOptions &opt,
                            std::string &why) {
  if (auto causal = kernel->getAttrOfType<BoolAttr>(kCausalAttr);
      causal && causal.getValue() != opt.causal) {
    why = causal.getValue() ? "specialised for causal attention"
                            : "specialised for non-causal attention";
    return false;
  }
  Block &entry = kernel.getBody().front();
  for (BlockArgument arg : entry.getArguments()) {
    auto role = kernel.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                    kArgRoleAttr);
    auto memref = dyn_cast<MemRefType>(arg.getType());
    if (!role || !memref)
      continue;
    StringRef r = role.getValue();
    SmallVector<int64_t> want;
    if (r == "q" || r == "o")
      want = {opt.batch, opt.seqQ, opt.headsQ, opt.headDim};
    else if (r == "k" || r == "v")
      want = {opt.batch, opt.seqKV, opt.headsKV, opt.headDim};
    else if (r == "lse")
      want = {opt.batch, opt.headsQ, opt.seqQ};
    else
      continue;
    if (memref.getRank() != static_cast<int64_t>(want.size()))
      continue; // reported when it runs
    for (auto [d, have] : llvm::enumerate(memref.getShape()))
      if (!ShapedType::isDynamic(have) && have != want[d]) {
        why = "parameter '" + r.str() + "' has static size " +
              std::to_string(have) + " in dimension " + std::to_string(d) +
              ", the problem needs " + std::to_string(want[d]);
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
     << (opt.causal ? " causal" : "") << ", "
     << report.blocksRun << "/" << report.blocksTotal << " blocks, "
     << report.gemms << " GEMMs, reference " << opt.reference
     << ": max abs error " << llvm::format("%.3g", report.maxAbsError)
     << ", relative error " << llvm::format("%.3g", report.relError);
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

  Problem prob;
  prob.B = opt.batch;
  prob.Hq = opt.headsQ;
  prob.Hkv = opt.headsKV;
  prob.Nq = opt.seqQ;
  prob.Nkv = opt.seqKV;
  prob.d = opt.headDim;
  prob.causal = opt.causal;
  prob.scale = 1.0f / std::sqrt(float(opt.headDim));
  for (const auto &[name, text] : opt.params)
    prob.params[name] = referenceValue(text);

  std::mt19937_64 rng(opt.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);

  // Bind the kernel's parameters by role.
  Block &entry = kernel.getBody().front();
  SmallVector<RtValue> args;
  View outView, lseView;
  bool haveOut = false, haveLse = false;
  SmallVector<int64_t> indexArgs;
  std::map<std::string, int64_t> sizes = {
      {"B", opt.batch}, {"Hq", opt.headsQ},  {"Hkv", opt.headsKV},
      {"Nq", opt.seqQ}, {"Nkv", opt.seqKV}, {"d", opt.headDim}};
  for (BlockArgument arg : entry.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto role = kernel.getArgAttrOfType<StringAttr>(i, kArgRoleAttr);
    if (!role)
      return emitError(loc) << "kernel parameter #" << i
                            << " has no '" << kArgRoleAttr
                            << "' role; the interpreter cannot bind it";
    StringRef r = role.getValue();
    Type type = arg.getType();
    auto memref = dyn_cast<MemRefType>(type);
    auto checkShape = [&](ArrayRef<int64_t> want) -> LogicalResult {
      if (!memref || memref.getRank() != static_cast<int64_t>(want.size()))
        return emitError(loc) << "kernel parameter #" << i << " ('" << r
                              << "') must be a rank-" << want.size()
                              << " memref";
      for (auto [d, have] : llvm::enumerate(memref.getShape()))
        if (!ShapedType::isDynamic(have) && have != want[d])
          return emitError(loc)
                 << "kernel parameter #" << i << " ('" << r
                 << "') has static size " << have << " in dimension " << d
                 << " but the problem needs " << want[d]
                 << " (check the interpreter's shape options)";
      return success();
    };
    if (r == "q" || r == "k" || r == "v") {
      bool isQ = r == "q";
      SmallVector<int64_t> shape = {opt.batch, isQ ? opt.seqQ : opt.seqKV,
                                    isQ ? opt.headsQ : opt.headsKV,
                                    opt.headDim};
      if (failed(checkShape(shape)))
        return failure();
      View v = globalBuffer(memref.getElementType(), shape);
      std::vector<float> &dst = r == "q" ? prob.q : r == "k" ? prob.k : prob.v;
      dst.resize(v.buffer->f.size());
      for (size_t e = 0; e < dst.size(); ++e)
        v.buffer->f[e] = dst[e] = roundTo(v.buffer->kind, normal(rng));
      args.push_back(v);
    } else if (r == "o" || r == "lse") {
      SmallVector<int64_t> shape =
          r == "o" ? SmallVector<int64_t>{opt.batch, opt.seqQ, opt.headsQ,
                                          opt.headDim}
                   : SmallVector<int64_t>{opt.batch, opt.headsQ, opt.seqQ};
      if (failed(checkShape(shape)))
        return failure();
      View v = globalBuffer(memref.getElementType(), shape);
      std::fill(v.buffer->f.begin(), v.buffer->f.end(), NAN);
      v.buffer->trackWrites = true;
      v.buffer->written.assign(v.buffer->f.size(), false);
      (r == "o" ? outView : lseView) = v;
      (r == "o" ? haveOut : haveLse) = true;
      args.push_back(v);
    } else if (sizes.count(r.str())) {
      if (!type.isIndex())
        return emitError(loc) << "kernel parameter #" << i << " ('" << r
                              << "') must be an index";
      args.push_back(Tile::scalarI(64, sizes[r.str()]));
    } else if (r == "softmax_scale" || r == "softmax_scale_log2") {
      float s = prob.scale * (r == "softmax_scale_log2" ? float(M_LOG2E) : 1.0f);
      args.push_back(Tile::scalarF(getElemKind(type), s));
    } else if (r == "causal") {
      args.push_back(Tile::scalarI(getIntWidth(type), opt.causal));
    } else if (r.starts_with("param:")) {
      std::string name = r.drop_front(6).str();
      std::string text;
      if (auto it = opt.params.find(name); it != opt.params.end())
        text = it->second;
      else if (auto def = kernel.getArgAttrOfType<StringAttr>(i, "cuir.default"))
        text = def.getValue().str();
      else
        return emitError(loc) << "kernel parameter '" << name
                              << "' needs a value: pass params=" << name
                              << "=<number or comma-separated list>";
      std::optional<int64_t> extent = 1;
      if (memref) {
        auto ext = kernel.getArgAttrOfType<StringAttr>(i, "cuir.extent");
        StringRef e = ext ? ext.getValue() : "";
        extent = e == "batch"      ? opt.batch
                 : e == "heads"    ? opt.headsQ
                 : e == "batch*kv" ? llvm::checkedMul(opt.batch, opt.seqKV)
                                   : -1;
        if ((extent && *extent < 0) || memref.getRank() != 1)
          return emitError(loc) << "array parameter '" << name
                                << "' needs a rank-1 memref and cuir.extent "
                                   "batch, heads or batch*kv";
      }
      if (failed(budget.take(extent ? product({*extent, kParamBytes})
                                    : std::nullopt,
                             "parameter '" + name + "'", loc)))
        return failure();
      FailureOr<SmallVector<double>> values =
          expandParam(name, text, type, *extent, opt.seqKV, loc);
      if (failed(values))
        return failure();
      // The reference sees the values the kernel sees.
      if (memref)
        prob.params[name] = llvm::json::Array(*values);
      else
        prob.params[name] = values->front();
      if (memref) {
        View v = globalBuffer(memref.getElementType(), {*extent});
        for (int64_t e = 0; e < *extent; ++e) {
          if (v.buffer->kind == ElemKind::Int)
            v.buffer->i[e] = static_cast<int64_t>((*values)[e]);
          else
            v.buffer->f[e] = roundTo(v.buffer->kind, (*values)[e]);
        }
        args.push_back(v);
      } else if (getElemKind(type) == ElemKind::Int) {
        args.push_back(Tile::scalarI(getIntWidth(type), int64_t((*values)[0])));
      } else {
        args.push_back(Tile::scalarF(getElemKind(type), (*values)[0]));
      }
    } else {
      return emitError(loc) << "kernel parameter #" << i << " has unknown role '"
                            << r << "'";
    }
    if (type.isIndex())
      indexArgs.push_back(std::get<Tile>(args.back()).getI(0));
  }
  if (!haveOut)
    return emitError(loc) << "the kernel has no parameter with role 'o': "
                             "there is no output to check";
  // The reference reads every input, also those the kernel has no
  // parameter for (or holds in integers).
  auto fillMissing = [&](std::vector<float> &input, ArrayRef<int64_t> shape) {
    if (!input.empty())
      return;
    input.resize(*product(shape));
    for (float &x : input)
      x = roundTo(ElemKind::BF16, normal(rng));
  };
  fillMissing(prob.q, {opt.batch, opt.seqQ, opt.headsQ, opt.headDim});
  fillMissing(prob.k, {opt.batch, opt.seqKV, opt.headsKV, opt.headDim});
  fillMissing(prob.v, {opt.batch, opt.seqKV, opt.headsKV, opt.headDim});

  // The grid.
  SmallVector<int64_t, 3> grid;
  for (AffineExpr e : kernel.getGrid().getResults()) {
    std::optional<int64_t> extent = evalAffine(e, indexArgs);
    std::string expr;
    llvm::raw_string_ostream(expr) << e;
    if (!extent || *extent < 0)
      return emitError(loc)
             << "the grid's dimension " << grid.size() << " (" << expr
             << ") is " << (extent ? "negative" : "not computable")
             << " for " << describeSizes(opt)
             << (extent ? "" : ": it overflows, reads a missing index "
                               "parameter or divides by a non-positive "
                               "number");
    grid.push_back(*extent);
  }
  while (grid.size() < 3)
    grid.push_back(1);
  std::optional<int64_t> blocks = product(grid);
  if (failed(budget.take(blocks ? product({*blocks, 8}) : std::nullopt,
                         "the list of the grid's blocks", loc)))
    return failure();
  int64_t total = *blocks;
  std::vector<int64_t> order(total);
  std::iota(order.begin(), order.end(), 0);
  if (opt.sampleBlocks > 0 && opt.sampleBlocks < total) {
    std::shuffle(order.begin(), order.end(), rng);
    order.resize(opt.sampleBlocks);
    std::sort(order.begin(), order.end());
  }

  InterpreterReport report;
  report.blocksTotal = total;
  Machine machine(kernel);
  auto start = std::chrono::steady_clock::now();
  auto lastReport = start;
  for (int64_t linear : order) {
    SmallVector<int64_t, 3> id = {linear % grid[0],
                                  (linear / grid[0]) % grid[1],
                                  linear / (grid[0] * grid[1])};
    if (failed(machine.runBlock(id, args)))
      return failure();
    ++report.blocksRun;
    auto now = std::chrono::steady_clock::now();
    if (now - lastReport > std::chrono::seconds(2)) {
      llvm::errs() << "cuir-interpret: " << report.blocksRun << "/"
                   << order.size() << " blocks\n";
      lastReport = now;
    }
  }

  if (!opt.dumpDir.empty()) {
    auto file = [&](StringRef name) {
      SmallString<128> f(opt.dumpDir);
      llvm::sys::path::append(f, name);
      return std::string(f);
    };
    std::error_code ec = llvm::sys::fs::create_directories(opt.dumpDir);
    std::vector<float> lseData =
        haveLse ? lseView.buffer->f : std::vector<float>();
    std::error_code metaEc;
    llvm::raw_fd_ostream meta(file("meta.json"), metaEc);
    if (ec || metaEc ||
        !writeNpy(file("q.npy"), {prob.B, prob.Nq, prob.Hq, prob.d}, prob.q) ||
        !writeNpy(file("k.npy"), {prob.B, prob.Nkv, prob.Hkv, prob.d}, prob.k) ||
        !writeNpy(file("v.npy"), {prob.B, prob.Nkv, prob.Hkv, prob.d}, prob.v) ||
        !writeNpy(file("o.npy"), {prob.B, prob.Nq, prob.Hq, prob.d},
                  outView.buffer->f) ||
        (haveLse &&
         !writeNpy(file("lse.npy"), {prob.B, prob.Hq, prob.Nq}, lseData)))
      return emitError(loc) << "cannot write the dump to '" << opt.dumpDir
                            << "'";
    meta << "{\"kernel\": \"" << kernel.getSymName() << "\", \"B\": " << prob.B
         << ", \"Hq\": " << prob.Hq << ", \"Hkv\": " << prob.Hkv
         << ", \"Nq\": " << prob.Nq << ", \"Nkv\": " << prob.Nkv
         << ", \"d\": " << prob.d << ", \"causal\": "
         << (prob.causal ? "true" : "false") << ", \"scale\": "
         << llvm::format("%.9g", prob.scale) << ", \"dtype\": \""
         << (outView.buffer->kind == ElemKind::F16 ? "fp16" : "bf16")
         << "\"}\n";
  }

  report.gemms = machine.gemmsRun;

  // The reference.
  Output ref;
  if (opt.reference == "builtin") {
    if (auto variant = kernel->getAttrOfType<StringAttr>("cuir.variant"))
      return emitError(loc)
             << "the kernel computes the variant '" << variant.getValue()
             << "', but the built-in reference is standard attention: pass "
                "reference=<file.py> with the variant in PyTorch";
    ref = builtinReference(prob);
  } else {
    FailureOr<Output> r =
        pytorchReference(prob, opt.reference, opt.python, loc);
    if (failed(r))
      return failure();
    ref = std::move(*r);
  }

  // Compare what the kernel wrote.
  const Buffer &out = *outView.buffer;
  bool sampled = static_cast<int64_t>(order.size()) < total;
  double diff2 = 0, ref2 = 0;
  for (int64_t e = 0, n = out.f.size(); e < n; ++e)
    if (out.written[e])
      ref2 += ref.o[e] * ref.o[e];
  int64_t compared = 0;
  for (int64_t e = 0, n = out.f.size(); e < n; ++e)
    compared += out.written[e];
  // An element mismatches when its error exceeds tolerance * max |reference|:
  // 16-bit probabilities put errors of about 2^-8 * max |v| on any element,
  // so an element-relative bound would flag correct low-precision kernels.
  double refMax = 0;
  for (int64_t e = 0, n = out.f.size(); e < n; ++e)
    if (out.written[e])
      refMax = std::max(refMax, std::fabs(ref.o[e]));
  auto coords = [&](int64_t e) {
    int64_t c = e % prob.d, h = (e / prob.d) % prob.Hq,
            q = (e / (prob.d * prob.Hq)) % prob.Nq,
            b = e / (prob.d * prob.Hq * prob.Nq);
    return Coords().str(b, q, h, c);
  };
  double worst = -1;
  for (int64_t e = 0, n = out.f.size(); e < n; ++e) {
    if (!out.written[e]) {
      if (!sampled && report.firstMismatch.empty())
        report.firstMismatch = "output element " + coords(e) +
                               " was never written";
      continue;
    }
    double got = out.f[e], want = ref.o[e];
    double err = std::isnan(got) ? INFINITY : std::fabs(got - want);
    diff2 += std::isinf(err) ? INFINITY : err * err;
    report.maxAbsError = std::max(report.maxAbsError, err);
    bool bad = std::isnan(got) || err > opt.tolerance * std::max(1.0, refMax);
    std::string where;
    if (bad || err > worst) {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << coords(e) << ": got " << llvm::format("%.6g", got)
         << ", expected " << llvm::format("%.6g", want);
      where = s;
    }
    if (bad && report.firstMismatch.empty())
      report.firstMismatch = where;
    if (err > worst) {
      worst = err;
      report.worstMismatch = where;
    }
  }
  report.elementsCompared = compared;
  report.relError = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  report.passed = compared > 0 && report.relError <= opt.tolerance &&
                  report.firstMismatch.empty();
  if (compared == 0)
    report.firstMismatch = "the kernel wrote no output element";

  if (haveLse && ref.hasLse) {
    const Buffer &l = *lseView.buffer;
    int64_t n = 0;
    for (int64_t e = 0, m = l.f.size(); e < m; ++e) {
      if (!l.written[e] || !std::isfinite(ref.lse[e]))
        continue;
      double err = std::isnan(l.f[e]) ? INFINITY : std::fabs(l.f[e] - ref.lse[e]);
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
  return report;
}
