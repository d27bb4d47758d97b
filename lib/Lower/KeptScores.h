//===- KeptScores.h - A backward's raw scores, kept until dS ----*- C++ -*-===//
//
// A backward kernel overwrites its score tile S with P, but the variant's
// derivative and the partials that read the score are computed where dS is
// formed, from S (BackwardTransfer). Lowering keeps each thread's raw
// scores from the scores call to there: in shared memory where the block
// has room, else as a register copy. Helpers read them by the register's
// index in the tile's row-major float array (FragmentWalk::flat).
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_LIB_LOWER_KEPTSCORES_H
#define CUIR_LIB_LOWER_KEPTSCORES_H

#include "cuir/Dialect/CuIR.h"

#include <string>

namespace mlir::cuir {

/// Where a module's backward kernels keep their raw scores.
struct KeptScores {
  /// In shared memory, register i of thread t at [i][t] (else registers).
  bool shared = false;
  /// The threads that keep scores, from threadIdx.x == first.
  int64_t threads = 0, first = 0;
  /// The shared memory a block takes (shared), or why registers.
  int64_t bytes = 0;
  std::string whyNot;
};

/// The name of the kept scores at dS (a `cuir_kept_scores` value).
constexpr const char *kKeptScoresName = "cuir_raw_scores";

/// Whether the raw score tile `raw`, the input of the variant's scores, is
/// read where dS is formed (by the derivative or a parameter's gradient).
bool isReadPastScores(Value raw);

/// Whether `raw` is the input of the variant's scores, whose call keeps it
/// when it is read past them: a reader at dS may read `kKeptScoresName`.
bool isKeptScores(Value raw);

/// Decides, for every kernel of the module of `scores` alike, where the
/// raw scores are kept: in shared memory if in each kernel the threads
/// running the scores are one contiguous range and the buffer fits beside
/// the kernel's own buffers and `otherBytes` (another helper's buffers).
KeptScores decideKeptScores(ElementwiseOp scores, int64_t otherBytes);

/// The helpers `cuir_keep_scores(tile)`, which returns the kept scores, and
/// `cuir_kept_scores<COUNT>`, whose `(i)` reads register i back.
std::string keptScoresHelper(const KeptScores &kept);

} // namespace mlir::cuir

#endif // CUIR_LIB_LOWER_KEPTSCORES_H
