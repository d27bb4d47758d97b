//===- IntRangesTest.cpp - Signed ranges of integer and index values ------===//

#include "cuir/Support/IntRanges.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

#include <climits>

using namespace mlir;
using namespace mlir::cuir;

namespace {

class IntRangesTest : public ::testing::Test {
protected:
  IntRangesTest() {
    ctx.loadDialect<arith::ArithDialect, func::FuncDialect, scf::SCFDialect>();
  }

  /// The value named by `attr` = "name" on its defining op in `text`.
  Value parse(const char *text, StringRef name) {
    module = parseSourceString<ModuleOp>(text, &ctx);
    return find(name);
  }
  /// The value named `name` in the module parsed last.
  Value find(StringRef name) {
    Value found;
    module->walk([&](Operation *op) {
      if (auto n = op->getAttrOfType<StringAttr>("name");
          n && n.getValue() == name)
        found = op->getResult(0);
    });
    return found;
  }

  static std::pair<int64_t, int64_t> bounds(const ConstantIntRanges &r) {
    return {r.smin().getSExtValue(), r.smax().getSExtValue()};
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};

constexpr int64_t kTop = kIndexLimit - 1;

TEST_F(IntRangesTest, IndexArgumentsAreCoordinates) {
  Value v = parse(R"(
    func.func @f(%q: index, %n: index) -> index {
      %d = arith.subi %n, %q {name = "d"} : index
      return %d : index
    })",
                  "d");
  ASSERT_TRUE(v);
  IntRanges ranges;
  EXPECT_EQ(bounds(ranges.of(v)), std::make_pair(-kTop, kTop));
  EXPECT_TRUE(ranges.within(v, INT32_MIN, INT32_MAX));
}

TEST_F(IntRangesTest, AnI32CastToIndexKeepsItsRangeAndASumLeavesInt) {
  const char *text = R"(
    func.func @f(%q: index, %p: i32) -> (index, index, index) {
      %s = arith.index_cast %p {name = "s"} : i32 to index
      %u = arith.index_castui %p {name = "u"} : i32 to index
      %hi = arith.addi %q, %s {name = "hi"} : index
      return %s, %u, %hi : index, index, index
    })";
  IntRanges ranges;
  Value s = parse(text, "s");
  ASSERT_TRUE(s);
  EXPECT_TRUE(ranges.within(s, INT32_MIN, INT32_MAX));
  Value u = find("u");
  EXPECT_EQ(bounds(ranges.of(u)),
            std::make_pair(int64_t(0), int64_t(UINT32_MAX)));
  EXPECT_FALSE(ranges.within(u, INT32_MIN, INT32_MAX));
  Value hi = find("hi");
  EXPECT_EQ(bounds(ranges.of(hi)),
            std::make_pair(int64_t(INT32_MIN), int64_t(INT32_MAX) + kTop));
}

TEST_F(IntRangesTest, ALoopVariableIsWithinTheLoopBounds) {
  Value v = parse(R"(
    func.func @f(%n: index) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c128 = arith.constant 128 : index
      %tiles = arith.ceildivui %n, %c128 : index
      scf.for %i = %c0 to %tiles step %c1 {
        %k = arith.muli %i, %c128 {name = "k"} : index
      }
      return
    })",
                  "k");
  ASSERT_TRUE(v);
  IntRanges ranges;
  // i < ceil(n / 128) <= 2^23, so i * 128 < 2^30 + 128.
  EXPECT_EQ(bounds(ranges.of(v)),
            std::make_pair(int64_t(0), ((kTop + 127) / 128 - 1) * 128));
}

TEST_F(IntRangesTest, AnIfYieldsWhatItsBranchesYield) {
  Value v = parse(R"(
    func.func @f(%c: i1) -> index {
      %r = scf.if %c -> (index) {
        %a = arith.constant -5 : index
        scf.yield %a : index
      } else {
        %b = arith.constant 70 : index
        scf.yield %b : index
      }
      %t = arith.addi %r, %r {name = "t"} : index
      return %t : index
    })",
                  "t");
  ASSERT_TRUE(v);
  IntRanges ranges;
  EXPECT_EQ(bounds(ranges.of(v)), std::make_pair(int64_t(-10), int64_t(140)));
}

TEST_F(IntRangesTest, ValuesHeldInIntAreNarrowed) {
  const char *text = R"(
    func.func @f(%p: i64) -> index {
      %x = arith.index_cast %p {name = "x"} : i64 to index
      return %x : index
    })";
  Value x = parse(text, "x");
  ASSERT_TRUE(x);
  EXPECT_FALSE(IntRanges().within(x, INT32_MIN, INT32_MAX));
  IntRanges held([&](Value v) { return v == x; });
  EXPECT_TRUE(held.within(x, INT32_MIN, INT32_MAX));
}

} // namespace
