//===- FragmentWalk.cpp - Loops over a thread's accumulator registers -----===//

#include "FragmentWalk.h"

using namespace mlir;
using namespace mlir::cuir;

FragmentWalk FragmentWalk::of(MmaInstr instr, bool transposed) {
  if (instr == MmaInstr::WgmmaM64NK16) {
    std::string rowOff = "(e / 2) * 8", colOff = "j * 8 + (e % 2)";
    if (transposed)
      std::swap(rowOff, colOff);
    return {"int N",
            "float (&scores)[N]",
            "scores[4 * j + e]",
            rowOff,
            colOff,
            {"for (int j = 0; j < N / 4; ++j)", "for (int e = 0; e < 4; ++e)"}};
  }
  return {"int M_TILES, int N_TILES",
          "float (&scores)[M_TILES][N_TILES][4]",
          "scores[mi][ni][e]",
          "mi * 16 + (e / 2) * 8",
          "ni * 8 + (e % 2)",
          {"for (int mi = 0; mi < M_TILES; ++mi)",
           "for (int ni = 0; ni < N_TILES; ++ni)",
           "for (int e = 0; e < 4; ++e)"}};
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
