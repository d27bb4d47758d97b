//===- ScoreDerivativeTest.cpp - Derived score derivatives vs. differences ===//
//
// The cuir.score_grad that differentiateScoreMod derives, evaluated in double
// precision at random points, against central finite differences of the
// cuir.score_mod: for every rule (the lit test's variants), the built-in
// variants and the traced catalogue. d/dscore and, for each loaded element
// of a float parameter, the partial (summed over loads of one element).
//
//===----------------------------------------------------------------------===//

#include "cuir/Transfer/ScoreDerivative.h"
#include "cuir/Variants/Variants.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MemoryBuffer.h"

#include "gtest/gtest.h"

#include <cmath>
#include <map>
#include <random>

using namespace mlir;
using namespace mlir::cuir;

namespace {

constexpr int64_t kB = 2, kH = 4, kN = 16;

/// A parameter array, row-major, its elements held in double.
struct Buffer {
  SmallVector<int64_t> shape;
  std::vector<double> data;
};

/// Evaluates a score region in double (floats) and int64 (integers), as the
/// ops are defined, so that finite differences are accurate.
class Evaluator {
public:
  explicit Evaluator(std::map<unsigned, Buffer> &buffers,
                     DenseMap<Value, double> scalars)
      : buffers(buffers), values(std::move(scalars)) {}

  /// The values `body`'s terminator yields for `args`.
  SmallVector<double> run(Block &body, ArrayRef<double> args) {
    for (auto [arg, v] : llvm::zip(body.getArguments(), args))
      values[arg] = v;
    for (Operation &op : body.without_terminator())
      if (!step(&op))
        return {};
    return llvm::map_to_vector(body.getTerminator()->getOperands(),
                               [&](Value v) { return values.lookup(v); });
  }
  /// The (parameter, flat index) a load result of the last run read.
  std::pair<unsigned, int64_t> cellOf(Value v) { return cells.lookup(v); }

private:
  bool step(Operation *op);
  bool load(memref::LoadOp op);
  std::optional<double> floatOp(Operation *op, ArrayRef<double> x);
  std::optional<double> intOp(Operation *op, ArrayRef<double> x);

  std::map<unsigned, Buffer> &buffers;
  DenseMap<Value, double> values; // integers held exactly in double
  DenseMap<Value, std::pair<unsigned, int64_t>> cells;
};

bool Evaluator::load(memref::LoadOp op) {
  unsigned arg = cast<BlockArgument>(op.getMemRef()).getArgNumber();
  Buffer &buf = buffers.at(arg);
  int64_t flat = 0;
  for (auto [i, idx] : llvm::enumerate(op.getIndices())) {
    auto v = static_cast<int64_t>(values.lookup(idx));
    if (v < 0 || v >= buf.shape[i]) {
      ADD_FAILURE() << "index " << v << " out of range";
      return false;
    }
    flat = flat * buf.shape[i] + v;
  }
  cells[op.getResult()] = {arg, flat};
  values[op.getResult()] = buf.data[flat];
  return true;
}

bool Evaluator::step(Operation *op) {
  if (auto l = dyn_cast<memref::LoadOp>(op))
    return load(l);
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    if (auto f = dyn_cast<FloatAttr>(c.getValue()))
      values[c] = f.getValueAsDouble();
    else
      values[c] = cast<IntegerAttr>(c.getValue()).getValue().getSExtValue();
    return true;
  }
  auto x = llvm::map_to_vector(op->getOperands(),
                               [&](Value v) { return values.lookup(v); });
  std::optional<double> r = isa<FloatType>(op->getResult(0).getType())
                                ? floatOp(op, x)
                                : intOp(op, x);
  if (!r)
    ADD_FAILURE() << "the evaluator has no rule for "
                  << op->getName().getStringRef().str();
  else
    values[op->getResult(0)] = *r;
  return r.has_value();
}

std::optional<double> Evaluator::floatOp(Operation *op, ArrayRef<double> x) {
  using R = std::optional<double>;
  auto nanOr = [&](double v) {
    return std::isnan(x[0]) || std::isnan(x[1]) ? NAN : v;
  };
  return llvm::TypeSwitch<Operation *, R>(op)
      .Case([&](arith::AddFOp) { return x[0] + x[1]; })
      .Case([&](arith::SubFOp) { return x[0] - x[1]; })
      .Case([&](arith::MulFOp) { return x[0] * x[1]; })
      .Case([&](arith::DivFOp) { return x[0] / x[1]; })
      .Case([&](arith::NegFOp) { return -x[0]; })
      .Case([&](arith::MaximumFOp) { return nanOr(std::max(x[0], x[1])); })
      .Case([&](arith::MinimumFOp) { return nanOr(std::min(x[0], x[1])); })
      .Case([&](arith::MaxNumFOp) { return std::fmax(x[0], x[1]); })
      .Case([&](arith::MinNumFOp) { return std::fmin(x[0], x[1]); })
      .Case([&](arith::SelectOp) { return x[0] != 0 ? x[1] : x[2]; })
      .Case<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp, arith::UIToFPOp>(
          [&](Operation *) { return x[0]; })
      .Case([&](math::TanhOp) { return std::tanh(x[0]); })
      .Case([&](math::ExpOp) { return std::exp(x[0]); })
      .Case([&](math::Exp2Op) { return std::exp2(x[0]); })
      .Case([&](math::LogOp) { return std::log(x[0]); })
      .Case([&](math::Log2Op) { return std::log2(x[0]); })
      .Case([&](math::Log10Op) { return std::log10(x[0]); })
      .Case([&](math::Log1pOp) { return std::log1p(x[0]); })
      .Case([&](math::ExpM1Op) { return std::expm1(x[0]); })
      .Case([&](math::SqrtOp) { return std::sqrt(x[0]); })
      .Case([&](math::RsqrtOp) { return 1.0 / std::sqrt(x[0]); })
      .Case([&](math::AbsFOp) { return std::fabs(x[0]); })
      .Case([&](math::PowFOp) { return std::pow(x[0], x[1]); })
      .Case([&](math::SinOp) { return std::sin(x[0]); })
      .Case([&](math::CosOp) { return std::cos(x[0]); })
      .Case([&](math::ErfOp) { return std::erf(x[0]); })
      .Case([&](math::FmaOp) { return std::fma(x[0], x[1], x[2]); })
      .Case([&](math::FloorOp) { return std::floor(x[0]); })
      .Case([&](math::TruncOp) { return std::trunc(x[0]); })
      .Case([&](arith::RemFOp) { return std::fmod(x[0], x[1]); })
      .Default([](Operation *) { return R(); });
}

std::optional<double> Evaluator::intOp(Operation *op, ArrayRef<double> x) {
  using R = std::optional<double>;
  auto i = [&](unsigned k) { return static_cast<int64_t>(x[k]); };
  return llvm::TypeSwitch<Operation *, R>(op)
      .Case([&](arith::AddIOp) { return x[0] + x[1]; })
      .Case([&](arith::SubIOp) { return x[0] - x[1]; })
      .Case([&](arith::MulIOp) { return x[0] * x[1]; })
      .Case([&](arith::FloorDivSIOp) { return std::floor(x[0] / x[1]); })
      .Case([&](arith::RemSIOp) { return double(i(0) % i(1)); })
      .Case([&](arith::AndIOp) { return double(i(0) & i(1)); })
      .Case([&](arith::OrIOp) { return double(i(0) | i(1)); })
      .Case([&](arith::XOrIOp) { return double(i(0) ^ i(1)); })
      .Case([&](arith::MaxSIOp) { return std::max(x[0], x[1]); })
      .Case([&](arith::MinSIOp) { return std::min(x[0], x[1]); })
      .Case([&](math::AbsIOp) { return std::fabs(x[0]); })
      .Case([&](arith::SelectOp) { return x[0] != 0 ? x[1] : x[2]; })
      .Case<arith::IndexCastOp, arith::ExtUIOp, arith::ExtSIOp,
            arith::TruncIOp>([&](Operation *) { return x[0]; })
      .Case([&](arith::FPToSIOp) { return std::trunc(x[0]); })
      .Case([&](arith::CmpIOp c) {
        return double(arith::applyCmpPredicate(
            c.getPredicate(), APInt(64, i(0), true), APInt(64, i(1), true)));
      })
      .Case([&](arith::CmpFOp c) {
        return double(arith::applyCmpPredicate(c.getPredicate(), APFloat(x[0]),
                                               APFloat(x[1])));
      })
      .Default([](Operation *) { return R(); });
}

/// Random parameter values: defaults where the variant has them, sizes for
/// the kernel sizes, random values otherwise.
struct Params {
  std::map<unsigned, Buffer> buffers;
  DenseMap<Value, double> scalars;
};

Buffer makeBuffer(VariantOp v, unsigned i, std::mt19937 &rng) {
  auto type = cast<MemRefType>(v.getBody().getArgument(i).getType());
  auto attrs = cast<DictionaryAttr>(v.getArgAttrsAttr()[i]);
  Buffer buf{SmallVector<int64_t>(type.getShape()), {}};
  if (!type.hasStaticShape()) {
    StringRef extent = attrs.getAs<StringAttr>("cuir.extent").getValue();
    buf.shape = {extent == "heads" ? kH : extent == "batch" ? kB : kB * kN};
  }
  if (auto def = attrs.getAs<DenseElementsAttr>("cuir.default")) {
    for (Attribute a : def.getValues<Attribute>())
      buf.data.push_back(isa<FloatAttr>(a)
                             ? cast<FloatAttr>(a).getValueAsDouble()
                             : cast<IntegerAttr>(a).getValue().getSExtValue());
    return buf;
  }
  int64_t n = type.hasStaticShape() ? type.getNumElements() : buf.shape[0];
  std::uniform_real_distribution<double> real(-1, 1);
  std::uniform_int_distribution<int> small(0, 3);
  for (int64_t k = 0; k < n; ++k)
    buf.data.push_back(isa<FloatType>(type.getElementType()) ? real(rng)
                                                             : small(rng));
  return buf;
}

Params makeParams(VariantOp v, std::mt19937 &rng) {
  Params p;
  std::uniform_real_distribution<double> positive(0.5, 4);
  std::uniform_int_distribution<int> count(1, 8);
  for (BlockArgument arg : v.getBody().getArguments()) {
    unsigned i = arg.getArgNumber();
    StringRef name = v.getParamName(i);
    if (isa<MemRefType>(arg.getType()))
      p.buffers[i] = makeBuffer(v, i, rng);
    else if (isSizeParam(name))
      p.scalars[arg] = name == "B" ? kB : name.starts_with("H") ? kH : kN;
    else
      p.scalars[arg] = arg.getType().isF32() ? positive(rng) : count(rng);
  }
  return p;
}

/// A finite-difference step relative to `x`, so that 1/x near 0 is resolved
/// (truncation ~ (h/x)^2) without losing the difference to rounding.
double relativeStep(double x) { return 1e-5 * std::max(std::fabs(x), 1e-2); }

/// Whether `derived` matches the finite difference `fd`, relative to the
/// larger of 1 and their magnitudes.
::testing::AssertionResult close(double derived, double fd) {
  double scale = std::max({1.0, std::fabs(derived), std::fabs(fd)});
  if (std::fabs(derived - fd) <= 1e-5 * scale)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "derived " << derived << ", finite difference " << fd;
}

/// Checks the derivatives of `v`'s score_grad at `points` random points;
/// returns how many points had a finite score (the others are masked).
int checkVariant(VariantOp v, std::mt19937 &rng, int points) {
  ScoreModOp mod = v.getScoreMod();
  ScoreGradOp grad = v.getScoreGrad();
  Block &modBody = mod.getBody().front(), &gradBody = grad.getBody().front();
  Params p = makeParams(v, rng);
  std::uniform_real_distribution<double> score(-6, 6);
  std::uniform_int_distribution<int> bd(0, kB - 1), hd(0, kH - 1),
      nd(0, kN - 1);
  int finite = 0;
  for (int n = 0; n < points; ++n) {
    SmallVector<double> args{score(rng), double(bd(rng)), double(hd(rng)),
                             double(nd(rng)), double(nd(rng))};
    auto at = [&](double s) {
      SmallVector<double> a(args);
      a[0] = s;
      return Evaluator(p.buffers, p.scalars).run(modBody, a).front();
    };
    Evaluator ev(p.buffers, p.scalars);
    SmallVector<double> out = ev.run(gradBody, args);
    double s = args[0], r = at(s);
    EXPECT_EQ(out[0], r) << v.getSymName().str() << ": the forward value";
    if (!std::isfinite(r)) { // masked through the score: a constant -inf
      EXPECT_EQ(out[1], 0.0) << v.getSymName().str() << " at score " << s;
      continue;
    }
    ++finite;
    double step = relativeStep(s);
    EXPECT_TRUE(close(out[1], (at(s + step) - at(s - step)) / (2 * step)))
        << v.getSymName().str() << " d/dscore at score " << s;
    // Partials, summed over the loads of one element.
    std::map<std::pair<unsigned, int64_t>, double> partials;
    GradYieldOp yield = grad.getYield();
    size_t first = 2 + yield.getElements().size();
    for (auto [k, e] : llvm::enumerate(yield.getElements()))
      partials[ev.cellOf(e)] += out[first + k];
    for (auto [cell, derived] : partials) {
      double &x = p.buffers.at(cell.first).data[cell.second], x0 = x;
      double h = relativeStep(x0);
      x = x0 + h;
      double up = at(s);
      x = x0 - h;
      double down = at(s);
      x = x0;
      EXPECT_TRUE(close(derived, (up - down) / (2 * h)))
          << v.getSymName().str() << " d/d" << v.getParamName(cell.first).str()
          << "[" << cell.second << "] at score " << s;
    }
  }
  return finite;
}

class ScoreDerivativeTest : public ::testing::Test {
protected:
  ScoreDerivativeTest() {
    context.loadDialect<CuIRDialect, arith::ArithDialect, math::MathDialect,
                        memref::MemRefDialect, scf::SCFDialect>();
  }

  /// Parses `text`, differentiates every variant with a score_mod and checks
  /// each; returns how many were checked.
  int checkAll(StringRef text, StringRef what) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
    EXPECT_TRUE(module) << what.str();
    if (!module)
      return 0;
    int checked = 0;
    for (VariantOp v : module->getOps<VariantOp>()) {
      if (!v.getScoreMod())
        continue;
      EXPECT_TRUE(succeeded(differentiateScoreMod(v))) << v.getSymName().str();
      EXPECT_TRUE(succeeded(verify(v))) << v.getSymName().str();
      if (!v.getScoreGrad())
        continue;
      EXPECT_GT(checkVariant(v, rng, 200), 50) << v.getSymName().str();
      ++checked;
    }
    return checked;
  }

  std::string readTestFile(StringRef path) {
    auto buf = llvm::MemoryBuffer::getFile(std::string(CUIR_TEST_DIR) + path);
    EXPECT_TRUE(bool(buf)) << path.str();
    return buf ? (*buf)->getBuffer().str() : "";
  }

  MLIRContext context;
  std::mt19937 rng{20261201};
};

} // namespace

/// Every rule, on the variants of the lit tests (one per family).
TEST_F(ScoreDerivativeTest, RulesMatchFiniteDifferences) {
  for (StringRef file : {"/Passes/differentiate-scores/rules.mlir",
                         "/Passes/differentiate-scores/partials.mlir"}) {
    std::string text = readTestFile(file);
    SmallVector<StringRef> chunks;
    StringRef(text).split(chunks, "// -----");
    int checked = 0;
    for (StringRef chunk : chunks)
      checked += checkAll(chunk, file);
    EXPECT_EQ(checked, static_cast<int>(chunks.size())) << file.str();
  }
}

TEST_F(ScoreDerivativeTest, BuiltinVariants) {
  int checked = 0;
  for (const BuiltinVariantInfo &info : getBuiltinVariants())
    checked += checkAll(info.text, info.name);
  EXPECT_EQ(checked, 3); // softcap, sigmoid (its bias) and alibi
}

/// A composition chains score functions: the chain rule across them.
TEST_F(ScoreDerivativeTest, ComposedVariant) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&context));
  FailureOr<VariantOp> v =
      buildVariantFromSpec("prefixlm,softcap{softcap=20},alibi,sigmoid",
                           *module, UnknownLoc::get(&context));
  ASSERT_TRUE(succeeded(v));
  ASSERT_TRUE(succeeded(differentiateScoreMod(*v)));
  ASSERT_TRUE(succeeded(verify(*v)));
  EXPECT_GT(checkVariant(*v, rng, 200), 50);
}

/// The catalogue's score_mods as the tracer emits them (softcap, a learned
/// cap, ALiBi, relative-bias, T5 and bias tables in bf16 / f16, -inf
/// masking).
TEST_F(ScoreDerivativeTest, CatalogueVariants) {
  EXPECT_EQ(
      checkAll(readTestFile("/Unit/Inputs/catalogue-scores.mlir"), "catalogue"),
      14);
}

/// A refusal leaves the variant as it was: the earlier score_grad stays, no
/// new one is added, and the error names the op.
TEST_F(ScoreDerivativeTest, RefusalLeavesTheVariantUnchanged) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"(
    cuir.variant @v() normalizer softmax {
      cuir.score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
        %two = arith.constant 2.0 : f32
        %r = math.copysign %two, %s : f32
        cuir.yield %r : f32
      }
      cuir.score_grad {
      ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
        %zero = arith.constant 0.0 : f32
        cuir.grad_yield %s, %zero
      }
    })",
                                                             &context);
  ASSERT_TRUE(module);
  VariantOp v = *module->getOps<VariantOp>().begin();
  ScoreGradOp before = v.getScoreGrad();
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  EXPECT_TRUE(failed(differentiateScoreMod(v)));
  EXPECT_EQ(v.getScoreGrad(), before);
  EXPECT_EQ(llvm::range_size(v.getBody().front().getOps<ScoreGradOp>()), 1u);
  EXPECT_NE(message.find("cannot differentiate math.copysign"),
            std::string::npos)
      << message;
}
