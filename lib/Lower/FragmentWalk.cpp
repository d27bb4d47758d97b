//===- FragmentWalk.cpp - Loops over a thread's accumulator registers -----===//

#include "FragmentWalk.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::cuir;

FragmentWalk FragmentWalk::of(MmaInstr instr, bool transposed) {
  if (instr == MmaInstr::WgmmaM64NK16) {
    std::string rowOff = "(e / 2) * 8", colOff = "j * 8 + (e % 2)";
    std::string rowMax = "8", colMax = "(N / 4 - 1) * 8 + 1";
    if (transposed) {
      std::swap(rowOff, colOff);
      std::swap(rowMax, colMax);
    }
    FragmentWalk fw{
        "int N",
        "[N]",
        "[4 * j + e]",
        rowOff,
        colOff,
        {"for (int j = 0; j < N / 4; ++j)", "for (int e = 0; e < 4; ++e)"},
        rowMax,
        colMax};
    fw.templateArgs = "N";
    fw.flat = "4 * j + e";
    if (!transposed) {
      fw.pairDims = "[N / 2]";
      fw.pairIndex = "[2 * j + e / 2]";
      fw.keyInPair = "e % 2";
    }
    return fw;
  }
  FragmentWalk fw{"int M_TILES, int N_TILES",
                  "[M_TILES][N_TILES][4]",
                  "[mi][ni][e]",
                  "mi * 16 + (e / 2) * 8",
                  "ni * 8 + (e % 2)",
                  {"for (int mi = 0; mi < M_TILES; ++mi)",
                   "for (int ni = 0; ni < N_TILES; ++ni)",
                   "for (int e = 0; e < 4; ++e)"},
                  "(M_TILES - 1) * 16 + 8",
                  "(N_TILES - 1) * 8 + 1",
                  "[M_TILES][N_TILES][2]",
                  "[mi][ni][e / 2]",
                  "e % 2",
                  "M_TILES, N_TILES",
                  "(mi * N_TILES + ni) * 4 + e"};
  return fw;
}

std::string FragmentWalk::walk(StringRef indent, StringRef body) const {
  std::string s, in = indent.str();
  for (size_t i = 0; i < loops.size(); ++i) {
    s += indent.str() + "#pragma unroll\n";
    s += in + loops[i] + (i + 1 == loops.size() ? " {\n" : "\n");
    in += "  ";
  }
  s += body.str();
  return s + std::string(indent.size() + 2 * (loops.size() - 1), ' ') + "}\n";
}

std::pair<std::string, std::string>
FragmentWalk::threadOrigin(FragmentLayoutAttr layout, ArrayRef<int64_t> shape,
                           bool transposed, StringRef q0, StringRef k0) {
  std::string lane = "(threadIdx.x % 32)", warp = "(threadIdx.x / 32)";
  // Transposed registers (one warpgroup's S^T): the warp's rows and the
  // thread's row are keys, its column pair queries.
  if (transposed)
    return {q0.str() + " + " + lane + " % 4 * 2",
            k0.str() + " + (threadIdx.x / 32 % 4) * 16 + " + lane + " / 4"};
  int64_t rowsPerWarp = shape[0] / layout.getWarps()[0];
  int64_t colsPerWarp = shape[1] / layout.getWarps()[1];
  int64_t warpsN = layout.getWarps()[1];
  if (layout.getInstr() == MmaInstr::WgmmaM64NK16) {
    // Warp w of a warpgroup holds rows [16w, 16w + 16) of its 64.
    warp = "(threadIdx.x / 32 % 4)";
    rowsPerWarp = 16;
  }
  std::string row0 =
      q0.str() + " + " +
      (warpsN == 1 ? warp : "(" + warp + " / " + std::to_string(warpsN) + ")") +
      " * " + std::to_string(rowsPerWarp) + " + " + lane + " / 4";
  std::string col0 =
      k0.str() +
      (warpsN == 1 ? std::string()
                   : " + (" + warp + " % " + std::to_string(warpsN) + ") * " +
                         std::to_string(colsPerWarp)) +
      " + " + lane + " % 4 * 2";
  return {row0, col0};
}

bool mlir::cuir::holdsTransposedRegisters(Value v) {
  // Any tile operand may lead to the GEMM: the sigmoid's dS is P * (1 - P)
  // * dP, and P = 1 / (1 + exp(-S)) has a constant first operand.
  SmallVector<Value> worklist{v};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || !seen.insert(def).second || seen.size() > 256)
      continue;
    if (auto gemm = dyn_cast<GemmAsyncOp>(def))
      return gemm.getAccTransposed();
    if (isa<GemmOp>(def))
      continue;
    for (Value operand : llvm::reverse(def->getOperands()))
      if (isa<RankedTensorType>(operand.getType()))
        worklist.push_back(operand);
  }
  return false;
}
