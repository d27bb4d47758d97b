//===- FragmentWalk.h - Loops over a thread's accumulator registers -*- C++ -*-===//

#ifndef CUIR_LIB_LOWER_FRAGMENTWALK_H
#define CUIR_LIB_LOWER_FRAGMENTWALK_H

#include "cuir/Dialect/CuIR.h"

#include <string>
#include <vector>

namespace mlir::cuir {

/// A thread's registers of an accumulator tile in the source's C++: the
/// helper's parameter, the loops over its registers, and each register's
/// offset from the thread's first query row and key (row0, col0).
struct FragmentWalk {
  /// The register array's dimensions ("[N]") and a register's index in it
  /// ("[4 * j + e]"), in the loops' variables.
  std::string templateParams, dims, index, qOff, kvOff;
  std::vector<std::string> loops;
  /// The largest qOff and kvOff over the registers.
  std::string qOffMax, kvOffMax;
  /// Registers two at a time, as a thread's pairs of adjacent keys in one
  /// query row: the pairs' array dimensions ("[N / 2]"), a register's pair
  /// ("[2 * j + e / 2]") and its key within the pair ("e % 2"); empty where
  /// adjacent registers are not adjacent keys (transposed registers).
  std::string pairDims, pairIndex, keyInPair;
  /// The template arguments of templateParams ("N").
  std::string templateArgs;
  /// A register's index in the register array read as one row-major float
  /// array ("4 * j + e").
  std::string flat;

  /// A helper's parameter for the registers, named `name`, and the register
  /// the innermost loop visits.
  std::string param(llvm::StringRef name = "scores") const {
    return "float (&" + name.str() + ")" + dims;
  }
  std::string element(llvm::StringRef name = "scores") const {
    return name.str() + index;
  }

  /// mma.m16n8k16 (register e of n8 tile ni of m16 slice mi, [M][N][4]) or
  /// wgmma m64nNk16 (register 4j + e of n8 tile j of the warp's 16 rows).
  /// `transposed`: the registers hold the tile's transpose (a wgmma of
  /// S^T), so a register's row offset is its key's and its column its
  /// query's.
  static FragmentWalk of(MmaInstr instr, bool transposed = false);

  /// This thread's first query row and key (row0, col0) of an accumulator
  /// tile of `layout` and `shape` whose element (0, 0) is (q0, k0), as C++
  /// expressions: the warp's slice of the warp grid, then the lane's. The
  /// same origin as the scores helper's calls (ScoresPatcher).
  static std::pair<std::string, std::string>
  threadOrigin(FragmentLayoutAttr layout, llvm::ArrayRef<int64_t> shape,
               bool transposed, llvm::StringRef q0, llvm::StringRef k0);

  /// The loops around `body`, whose lines are indented for the innermost.
  std::string walk(llvm::StringRef indent, llvm::StringRef body) const;

  /// The indent of the innermost loop's body.
  std::string bodyIndent(llvm::StringRef indent) const {
    return std::string(indent.size() + 2 * loops.size(), ' ');
  }
};

/// Whether the registers of tile `v` hold its transpose: it comes, through
/// the wait and the register ops that form it (any of their tile operands),
/// from a gemm_async with acc_transposed (the sm_90 backward's S^T and dP^T).
bool holdsTransposedRegisters(Value v);

} // namespace mlir::cuir

#endif // CUIR_LIB_LOWER_FRAGMENTWALK_H
