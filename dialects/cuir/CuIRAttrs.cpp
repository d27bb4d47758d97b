//===- CuIRAttrs.cpp - Fragment layouts -----------------------------------===//
//
// Element ownership of tensor-core register fragments, after the PTX ISA's
// "Matrix Fragments for mma.m16n8k16" and "wgmma .m64nNk16" sections. A tile
// is split over a grid of warps (warpgroups for wgmma); each worker repeats
// the instruction tile over its part, repeats ordered row-major, and the
// registers of one instruction tile are innermost.
//
//===----------------------------------------------------------------------===//

#include "cuir/Dialect/CuIR.h"

using namespace mlir;
using namespace mlir::cuir;

LogicalResult
FragmentLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           FragmentKind kind, MmaInstr instr,
                           ArrayRef<int64_t> warps) {
  if (warps.size() != 2)
    return emitError() << "fragment layout expects a 2-D worker grid "
                          "[rows, columns], got "
                       << warps.size() << " dimension(s)";
  if (warps[0] <= 0 || warps[1] <= 0)
    return emitError() << "fragment layout worker grid must be positive, got ["
                       << warps[0] << ", " << warps[1] << "]";
  if (instr == MmaInstr::WgmmaM64NK16 && kind == FragmentKind::B)
    return emitError() << "wgmma reads its B operand from shared memory; a "
                          "register fragment of kind 'b' does not exist";
  return success();
}

std::pair<int64_t, int64_t> FragmentLayoutAttr::getInstrTile() const {
  int64_t rows = getInstr() == MmaInstr::MmaM16N8K16 ? 16 : 64;
  switch (getKind()) {
  case FragmentKind::A:
    return {rows, 16};
  case FragmentKind::B:
    return {16, 8};
  case FragmentKind::Acc:
    return {rows, 8};
  case FragmentKind::Row:
    return {rows, 1};
  }
  llvm_unreachable("unknown fragment kind");
}

int64_t FragmentLayoutAttr::getNumThreads() const {
  int64_t perWorker = getInstr() == MmaInstr::MmaM16N8K16 ? 32 : 128;
  return perWorker * getWarps()[0] * getWarps()[1];
}

LogicalResult FragmentLayoutAttr::verifyShape(
    ArrayRef<int64_t> shape,
    function_ref<InFlightDiagnostic()> emitError) const {
  bool isRow = getKind() == FragmentKind::Row;
  size_t rank = isRow ? 1 : 2;
  if (shape.size() != rank)
    return emitError() << "a '" << stringifyFragmentKind(getKind())
                       << "' fragment must be " << rank << "-D, got "
                       << shape.size() << "-D";
  auto [tileRows, tileCols] = getInstrTile();
  // A is split by rows over warps[0] and shared by warps[1]; B is split by
  // columns over warps[1] and shared by warps[0].
  int64_t rowSplit = getKind() == FragmentKind::B ? 1 : getWarps()[0];
  int64_t colSplit = getKind() == FragmentKind::A ? 1 : getWarps()[1];
  if (ShapedType::isDynamic(shape[0]) ||
      shape[0] % (tileRows * rowSplit) != 0)
    return emitError() << "fragment rows (" << shape[0]
                       << ") must be a multiple of " << tileRows * rowSplit
                       << " for " << stringifyMmaInstr(getInstr())
                       << " over a worker grid of [" << getWarps()[0] << ", "
                       << getWarps()[1] << "]";
  if (!isRow && (ShapedType::isDynamic(shape[1]) ||
                 shape[1] % (tileCols * colSplit) != 0))
    return emitError() << "fragment columns (" << shape[1]
                       << ") must be a multiple of " << tileCols * colSplit
                       << " for " << stringifyMmaInstr(getInstr())
                       << " over a worker grid of [" << getWarps()[0] << ", "
                       << getWarps()[1] << "]";
  return success();
}

namespace {
/// Registers one thread holds in one instruction tile.
int64_t regsPerInstrTile(FragmentKind kind) {
  switch (kind) {
  case FragmentKind::A:
    return 8;
  case FragmentKind::B:
    return 4;
  case FragmentKind::Acc:
    return 4;
  case FragmentKind::Row:
    return 2;
  }
  llvm_unreachable("unknown fragment kind");
}
} // namespace

int64_t FragmentLayoutAttr::getElementsPerThread(ArrayRef<int64_t> shape) const {
  auto [tileRows, tileCols] = getInstrTile();
  int64_t rowSplit = getKind() == FragmentKind::B ? 1 : getWarps()[0];
  int64_t colSplit = getKind() == FragmentKind::A ? 1 : getWarps()[1];
  int64_t rows = shape[0] / rowSplit;
  int64_t cols = getKind() == FragmentKind::Row ? 1 : shape[1] / colSplit;
  int64_t tiles = (rows / tileRows) * (cols / tileCols);
  int64_t regs = regsPerInstrTile(getKind());
  // A wgmma tile spans 4 warps; each thread holds a quarter of it, as many
  // registers as the 16-row mma tile per n8 column chunk.
  return tiles * regs;
}

std::pair<int64_t, int64_t>
FragmentLayoutAttr::getElementCoords(ArrayRef<int64_t> shape, int64_t thread,
                                     int64_t reg) const {
  int64_t threadsPerWorker =
      getInstr() == MmaInstr::MmaM16N8K16 ? 32 : 128;
  int64_t worker = thread / threadsPerWorker;
  int64_t inWorker = thread % threadsPerWorker;
  // Within a wgmma warpgroup, warp w owns rows [16w, 16w + 16) of each 64-row
  // tile, laid out as one mma.m16n8k16 tile.
  int64_t warpInWorker = inWorker / 32;
  int64_t lane = inWorker % 32;
  int64_t group = lane / 4, inGroup = lane % 4;

  int64_t workerRow = worker / getWarps()[1];
  int64_t workerCol = worker % getWarps()[1];
  auto [tileRows, tileCols] = getInstrTile();
  int64_t rowSplit = getKind() == FragmentKind::B ? 1 : getWarps()[0];
  int64_t colSplit = getKind() == FragmentKind::A ? 1 : getWarps()[1];
  int64_t rowsPerWorker = shape[0] / rowSplit;
  int64_t colsPerWorker =
      getKind() == FragmentKind::Row ? 1 : shape[1] / colSplit;
  int64_t rowBase = getKind() == FragmentKind::B ? 0 : workerRow * rowsPerWorker;
  int64_t colBase = getKind() == FragmentKind::A ? 0 : workerCol * colsPerWorker;

  int64_t regs = regsPerInstrTile(getKind());
  int64_t tileIdx = reg / regs, r = reg % regs;
  int64_t tilesPerRow = colsPerWorker / tileCols;
  if (tilesPerRow == 0)
    tilesPerRow = 1;
  int64_t ti = tileIdx / tilesPerRow, tj = tileIdx % tilesPerRow;
  int64_t row = rowBase + ti * tileRows + 16 * warpInWorker;
  int64_t col = colBase + tj * tileCols;

  switch (getKind()) {
  case FragmentKind::Acc:
    return {row + group + 8 * (r / 2), col + 2 * inGroup + (r % 2)};
  case FragmentKind::A:
    return {row + group + 8 * ((r / 2) % 2), col + 2 * inGroup + (r % 2) +
                                                 8 * (r / 4)};
  case FragmentKind::B:
    return {row + 2 * inGroup + (r % 2) + 8 * (r / 2), col + group};
  case FragmentKind::Row:
    return {row + group + 8 * r, 0};
  }
  llvm_unreachable("unknown fragment kind");
}
