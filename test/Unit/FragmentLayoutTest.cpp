//===- FragmentLayoutTest.cpp - Element ownership of fragments ------------===//
//
// The fragment layouts must match the PTX ISA's tables exactly: lowering
// emits per-element code from them. Spot checks come from the ISA's figures
// for mma.m16n8k16; the bijection checks make sure every element of a tile is
// held by exactly one (thread, register).
//
//===----------------------------------------------------------------------===//

#include "cuir/Dialect/CuIR.h"

#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

#include <set>

using namespace mlir;
using namespace mlir::cuir;

namespace {

class FragmentLayoutTest : public ::testing::Test {
protected:
  FragmentLayoutTest() { ctx.loadDialect<CuIRDialect>(); }
  FragmentLayoutAttr get(FragmentKind kind, MmaInstr instr,
                         ArrayRef<int64_t> warps) {
    return FragmentLayoutAttr::get(&ctx, kind, instr, warps);
  }
  MLIRContext ctx;
};

using Coord = std::pair<int64_t, int64_t>;

TEST_F(FragmentLayoutTest, MmaAccumulatorMatchesPtx) {
  auto acc = get(FragmentKind::Acc, MmaInstr::MmaM16N8K16, {1, 1});
  SmallVector<int64_t> shape = {16, 8};
  EXPECT_EQ(acc.getElementCoords(shape, 0, 0), Coord(0, 0));
  EXPECT_EQ(acc.getElementCoords(shape, 0, 1), Coord(0, 1));
  EXPECT_EQ(acc.getElementCoords(shape, 0, 2), Coord(8, 0));
  EXPECT_EQ(acc.getElementCoords(shape, 0, 3), Coord(8, 1));
  // Lane 5: groupID 1, threadID_in_group 1.
  EXPECT_EQ(acc.getElementCoords(shape, 5, 0), Coord(1, 2));
  EXPECT_EQ(acc.getElementCoords(shape, 31, 3), Coord(15, 7));
}

TEST_F(FragmentLayoutTest, MmaOperandsMatchPtx) {
  auto a = get(FragmentKind::A, MmaInstr::MmaM16N8K16, {1, 1});
  SmallVector<int64_t> aShape = {16, 16};
  SmallVector<Coord> lane0 = {{0, 0}, {0, 1}, {8, 0}, {8, 1},
                              {0, 8}, {0, 9}, {8, 8}, {8, 9}};
  for (int64_t r = 0; r < 8; ++r)
    EXPECT_EQ(a.getElementCoords(aShape, 0, r), lane0[r]) << "reg " << r;
  auto b = get(FragmentKind::B, MmaInstr::MmaM16N8K16, {1, 1});
  SmallVector<int64_t> bShape = {16, 8};
  EXPECT_EQ(b.getElementCoords(bShape, 0, 0), Coord(0, 0));
  EXPECT_EQ(b.getElementCoords(bShape, 0, 1), Coord(1, 0));
  EXPECT_EQ(b.getElementCoords(bShape, 0, 2), Coord(8, 0));
  EXPECT_EQ(b.getElementCoords(bShape, 0, 3), Coord(9, 0));
  EXPECT_EQ(b.getElementCoords(bShape, 6, 0), Coord(4, 1));
}

/// Every element of `shape` is owned by exactly one (thread, register).
void expectBijection(FragmentLayoutAttr layout, ArrayRef<int64_t> shape) {
  int64_t regs = layout.getElementsPerThread(shape);
  std::set<Coord> seen;
  for (int64_t t = 0; t < layout.getNumThreads(); ++t)
    for (int64_t r = 0; r < regs; ++r) {
      Coord c = layout.getElementCoords(shape, t, r);
      ASSERT_GE(c.first, 0);
      ASSERT_LT(c.first, shape[0]);
      ASSERT_GE(c.second, 0);
      ASSERT_LT(c.second, shape[1]);
      EXPECT_TRUE(seen.insert(c).second)
          << "element (" << c.first << ", " << c.second
          << ") owned twice; thread " << t << " reg " << r;
    }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), shape[0] * shape[1]);
}

TEST_F(FragmentLayoutTest, AccumulatorTilesAreCoveredOnce) {
  expectBijection(get(FragmentKind::Acc, MmaInstr::MmaM16N8K16, {4, 1}),
                  {128, 64});
  expectBijection(get(FragmentKind::Acc, MmaInstr::MmaM16N8K16, {2, 2}),
                  {64, 32});
  expectBijection(get(FragmentKind::Acc, MmaInstr::WgmmaM64NK16, {2, 1}),
                  {128, 128});
  expectBijection(get(FragmentKind::Acc, MmaInstr::WgmmaM64NK16, {1, 1}),
                  {128, 64});
}

TEST_F(FragmentLayoutTest, OperandTilesAreCoveredOncePerWarp) {
  // A is split by rows across warps[0]; with one warp column it is a bijection.
  expectBijection(get(FragmentKind::A, MmaInstr::MmaM16N8K16, {4, 1}),
                  {64, 32});
  // B is shared by the warps of a column: check one warp's share.
  expectBijection(get(FragmentKind::B, MmaInstr::MmaM16N8K16, {1, 1}),
                  {64, 32});
}

TEST_F(FragmentLayoutTest, RowVectorsFollowTheAccumulatorRows) {
  auto acc = get(FragmentKind::Acc, MmaInstr::MmaM16N8K16, {4, 1});
  auto row = get(FragmentKind::Row, MmaInstr::MmaM16N8K16, {4, 1});
  SmallVector<int64_t> tile = {128, 64}, vec = {128};
  // A thread's row-vector registers name exactly the rows of its accumulator.
  for (int64_t t = 0; t < 128; ++t) {
    std::set<int64_t> accRows, rowRows;
    for (int64_t r = 0; r < acc.getElementsPerThread(tile); ++r)
      accRows.insert(acc.getElementCoords(tile, t, r).first);
    for (int64_t r = 0; r < row.getElementsPerThread(vec); ++r)
      rowRows.insert(row.getElementCoords(vec, t, r).first);
    EXPECT_EQ(accRows, rowRows) << "thread " << t;
  }
}

TEST_F(FragmentLayoutTest, ShapeChecks) {
  auto acc = get(FragmentKind::Acc, MmaInstr::MmaM16N8K16, {4, 1});
  std::string msg;
  auto emit = [&] {
    return mlir::emitError(UnknownLoc::get(&ctx));
  };
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    msg = d.str();
    return success();
  });
  EXPECT_TRUE(succeeded(acc.verifyShape({128, 64}, emit)));
  EXPECT_TRUE(failed(acc.verifyShape({96, 64}, emit)));
  EXPECT_NE(msg.find("multiple of 64"), std::string::npos) << msg;
  EXPECT_TRUE(failed(acc.verifyShape({128}, emit)));
}

} // namespace
