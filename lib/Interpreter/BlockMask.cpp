//===- BlockMask.cpp - Classifying the tiles of a block mask --------------===//
//
// A tile of BLOCK_M x BLOCK_N pairs is EMPTY if no in-range pair of it is
// visible, FULL if all of its pairs are in range and visible (a ragged last
// tile is never full), else PARTIAL. The region runs once per query tile of
// each (b', h'), on tiles of coordinates, as cuir.elementwise bodies do.
// Lists per KV head merge the classes of the query heads of its group.
//
//===----------------------------------------------------------------------===//

#include "BlockMask.h"

#include "Machine.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <numeric>

using namespace mlir;
using namespace mlir::cuir;
using namespace mlir::cuir::interp;

std::vector<int32_t> *BlockMaskLists::getList(StringRef name) {
  return llvm::StringSwitch<std::vector<int32_t> *>(name)
      .Case("kv_num_blocks", &kvNumBlocks)
      .Case("kv_indices", &kvIndices)
      .Case("full_kv_num_blocks", &fullKvNumBlocks)
      .Case("full_kv_indices", &fullKvIndices)
      .Case("q_num_blocks", &qNumBlocks)
      .Case("q_indices", &qIndices)
      .Case("full_q_num_blocks", &fullQNumBlocks)
      .Case("full_q_indices", &fullQIndices)
      .Case("q_order", &qOrder)
      .Default(nullptr);
}

namespace {

enum class TileClass : uint8_t { Empty, Partial, Full };

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// B', H', QB and KB of `mask` on `p`.
BlockMaskLists shapeOf(BlockMaskOp mask, const MaskProblem &p) {
  BlockMaskLists lists;
  lists.batches = mask.dependsOnBatch() ? p.B : 1;
  lists.heads = mask.dependsOnHeads()   ? p.Hq
                : mask.listsPerKvHead() ? p.Hkv
                                        : 1;
  lists.qBlocks = ceilDiv(p.Nq, mask.getBlockM());
  lists.kvBlocks = ceilDiv(p.Nkv, mask.getBlockN());
  return lists;
}

/// Classifies the KV tiles of query tile `m` of (b, h): runs the region on
/// the tile's rows and every key.
LogicalResult classifyRow(Worker &worker, BlockMaskOp mask,
                          ArrayRef<RtValue> args, const MaskProblem &p,
                          int64_t b, int64_t h, int64_t m,
                          MutableArrayRef<TileClass> classes) {
  int64_t bm = mask.getBlockM(), bn = mask.getBlockN();
  int64_t q0 = m * bm, rows = std::min(bm, p.Nq - q0);
  Tile qi = Tile::ints(64, {rows, p.Nkv}), ki = Tile::ints(64, {rows, p.Nkv});
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < p.Nkv; ++c) {
      (*qi.i)[r * p.Nkv + c] = q0 + r;
      (*ki.i)[r * p.Nkv + c] = c;
    }
  SmallVector<RtValue> regionArgs = {Tile::scalarI(64, b), Tile::scalarI(64, h),
                                     qi, ki};
  regionArgs.append(args.begin(), args.end());
  SmallVector<RtValue> results;
  if (failed(worker.runRegion(mask.getBody(), regionArgs, &results)))
    return mask.emitError()
           << "cannot classify query tile " << m << " of (b=" << b
           << ", h=" << h << "): its region fails";
  const Tile *visible = std::get_if<Tile>(&results[0]);
  if (!visible || visible->isFloat() ||
      (!visible->isScalar() && visible->numElements() != rows * p.Nkv))
    return mask.emitError() << "the region yields no i1 per pair";
  std::vector<int64_t> seen(classes.size(), 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < p.Nkv; ++c)
      seen[c / bn] += visible->getI(r * p.Nkv + c) != 0;
  for (auto [n, cls] : llvm::enumerate(classes)) {
    int64_t cols = std::min(bn, p.Nkv - int64_t(n) * bn);
    bool whole = rows == bm && cols == bn;
    cls = seen[n] == 0                      ? TileClass::Empty
          : whole && seen[n] == rows * cols ? TileClass::Full
                                            : TileClass::Partial;
  }
  return success();
}

/// Writes one row of a list pair: the tiles of class `cls` among
/// `classes(j)` for j from `count - 1` down to 0.
template <typename F>
void writeRow(int64_t row, int64_t count, F classOf, TileClass cls,
              std::vector<int32_t> &num, std::vector<int32_t> &indices) {
  int32_t n = 0;
  for (int64_t j = count - 1; j >= 0; --j)
    if (classOf(j) == cls)
      indices[row * count + n++] = static_cast<int32_t>(j);
  num[row] = n;
}

/// Row `bh` of q_order: the query tiles by descending count of listed KV
/// tiles, ties by descending tile (the kernels' dense order).
void writeOrder(int64_t bh, BlockMaskLists &lists) {
  int64_t QB = lists.qBlocks;
  auto begin = lists.qOrder.begin() + bh * QB;
  std::iota(begin, begin + QB, 0);
  auto tiles = [&](int32_t m) {
    return lists.kvNumBlocks[bh * QB + m] + lists.fullKvNumBlocks[bh * QB + m];
  };
  std::stable_sort(begin, begin + QB, [&](int32_t a, int32_t b) {
    return std::make_pair(tiles(a), a) > std::make_pair(tiles(b), b);
  });
}

} // namespace

std::optional<int64_t> interp::blockMaskBytes(BlockMaskOp mask,
                                              const MaskProblem &p) {
  BlockMaskLists s = shapeOf(mask, p);
  std::optional<int64_t> tiles =
      product({s.batches, s.heads, s.qBlocks, s.kvBlocks});
  std::optional<int64_t> rows =
      product({s.batches, s.heads, s.qBlocks + s.kvBlocks});
  // Every op of the region keeps a value per pair of one query tile.
  int64_t ops = 4;
  mask.getBody().walk([&](Operation *) { ++ops; });
  std::optional<int64_t> region =
      product({int64_t(mask.getBlockM()), p.Nkv, ops, 8});
  if (!tiles || !rows || !region)
    return std::nullopt;
  // Lists (with q_order, a row per query tile): 4 bytes each and 8 in the
  // kernel's buffer; classes: 1 byte.
  std::optional<int64_t> order = product({s.batches, s.heads, s.qBlocks});
  if (!order)
    return std::nullopt;
  std::optional<int64_t> lists = product({2 * *tiles + *rows + *order, 2, 12});
  if (!lists)
    return std::nullopt;
  std::optional<int64_t> sum = llvm::checkedAdd(*lists, *tiles);
  return sum ? llvm::checkedAdd(*sum, *region) : std::nullopt;
}

FailureOr<BlockMaskLists> interp::classifyBlockMask(BlockMaskOp mask,
                                                    ArrayRef<RtValue> args,
                                                    const MaskProblem &p) {
  BlockMaskLists lists = shapeOf(mask, p);
  int64_t BH = lists.batches * lists.heads, QB = lists.qBlocks,
          KB = lists.kvBlocks;
  if (QB > INT32_MAX || KB > INT32_MAX)
    return mask.emitError() << "has " << QB << " x " << KB
                            << " tiles; int32 lists cannot number them";
  std::vector<TileClass> classes(BH * QB * KB);
  // The region touches no kernel state: a machine of no kernel runs it.
  Machine machine{KernelOp()};
  Worker worker(machine, /*section=*/nullptr, 0, /*threads=*/1, 0, nullptr);
  // The query heads of a row: one, or a KV head's group.
  int64_t group = mask.listsPerKvHead() && p.Hkv > 0 ? p.Hq / p.Hkv : 1;
  std::vector<TileClass> headClasses(KB);
  for (int64_t bh = 0; bh < BH; ++bh)
    for (int64_t m = 0; m < QB; ++m) {
      MutableArrayRef<TileClass> row =
          MutableArrayRef<TileClass>(classes).slice((bh * QB + m) * KB, KB);
      int64_t h0 = (bh % lists.heads) * group;
      for (int64_t h = h0; h < h0 + group; ++h) {
        if (failed(classifyRow(worker, mask, args, p, bh / lists.heads, h, m,
                               h == h0 ? row
                                       : MutableArrayRef<TileClass>(headClasses))))
          return failure();
        // Empty or full for the group where so for every head.
        for (int64_t n = 0; h != h0 && n < KB; ++n)
          if (row[n] != headClasses[n])
            row[n] = TileClass::Partial;
      }
    }

  auto resize = [](std::vector<int32_t> &v, int64_t n) { v.assign(n, 0); };
  for (auto *v : {&lists.kvNumBlocks, &lists.fullKvNumBlocks, &lists.qOrder})
    resize(*v, BH * QB);
  for (auto *v : {&lists.qNumBlocks, &lists.fullQNumBlocks})
    resize(*v, BH * KB);
  for (auto *v : {&lists.kvIndices, &lists.fullKvIndices, &lists.qIndices,
                  &lists.fullQIndices})
    resize(*v, BH * QB * KB);
  for (int64_t bh = 0; bh < BH; ++bh) {
    TileClass *grid = &classes[bh * QB * KB];
    for (int64_t m = 0; m < QB; ++m) {
      auto kvClass = [&](int64_t n) { return grid[m * KB + n]; };
      writeRow(bh * QB + m, KB, kvClass, TileClass::Partial, lists.kvNumBlocks,
               lists.kvIndices);
      writeRow(bh * QB + m, KB, kvClass, TileClass::Full, lists.fullKvNumBlocks,
               lists.fullKvIndices);
    }
    for (int64_t n = 0; n < KB; ++n) {
      auto qClass = [&](int64_t m) { return grid[m * KB + n]; };
      writeRow(bh * KB + n, QB, qClass, TileClass::Partial, lists.qNumBlocks,
               lists.qIndices);
      writeRow(bh * KB + n, QB, qClass, TileClass::Full, lists.fullQNumBlocks,
               lists.fullQIndices);
    }
    writeOrder(bh, lists);
  }
  for (TileClass c : classes)
    ++(c == TileClass::Empty     ? lists.emptyTiles
       : c == TileClass::Partial ? lists.partialTiles
                                 : lists.fullTiles);
  return lists;
}
