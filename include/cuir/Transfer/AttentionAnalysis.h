//===- AttentionAnalysis.h - Find the attention structure of a kernel -*- C++ -*-===//
//
// Transfer and split rewrite a kernel where its semantics live: the score
// GEMM (S = Q K^T) and the point where S is complete, the key/value block the
// GEMM reads, the online softmax that consumes S, and the loops over
// key/value blocks. This analysis finds them from the dataflow of the IR, not
// from op order, and says precisely what it could not find.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_TRANSFER_ATTENTIONANALYSIS_H
#define CUIR_TRANSFER_ATTENTIONANALYSIS_H

#include "cuir/Dialect/CuIR.h"

namespace mlir::cuir {

/// One score GEMM and what surrounds it.
struct ScoreSite {
  /// cuir.gemm or cuir.gemm_async computing S = Q K^T.
  Operation *gemm = nullptr;
  /// S once complete: the GEMM's result, or its cuir.gemm_wait's.
  Value score;
  /// The loop over key/value blocks that contains the GEMM.
  scf::ForOp loop;
  /// Index of the key/value block the GEMM reads (the ring stage's n).
  Value kvBlock;
  /// Keys per block.
  int64_t blockN = 0;
  /// Query rows of the thread block's query tile (the score tile has fewer
  /// when warpgroups split the block's rows).
  int64_t blockM = 0;
  /// First query row of the score tile and of the block's query tile, batch
  /// and query head.
  Value qBase, qBlockBase, batch, head;
  /// The row maximum of the online softmax: reduce_rows max over the
  /// (masked) score tile.
  ReduceRowsOp rowMax;
  /// The weights P: the exp/exp2 that consumes S and the row maximum (null
  /// when the kernel no longer normalises with a softmax).
  Operation *weights = nullptr;
  /// The score-tile GEMM consuming P: O += P V; and its accumulator input,
  /// the rescaled loop-carried O.
  Operation *pvGemm = nullptr;
  Value rescaledAcc;
  /// The loop-carried O before the rescale.
  Value carriedAcc;
};

struct AttentionStructure {
  KernelOp kernel;
  SmallVector<ScoreSite> sites;
  /// Parameters by role: q, k, v, o, lse, softmax_scale(_log2), causal, sizes.
  llvm::StringMap<BlockArgument> params;
};

/// The ops that read a value derived from `v` without crossing a GEMM (or
/// an scf.yield), within `scope`.
void forwardChain(Value v, Region &scope, SmallVectorImpl<Operation *> &out);

/// An index constant of `kernel`'s entry block equal to `value`, preferring
/// one the lift named (BLOCK_N, ...), so that rewrites speak the source's
/// terms; null if there is none.
Value findIndexConstant(KernelOp kernel, int64_t value);

/// The constants the kernel itself uses for the key/value block size (in
/// n * BLOCK_N) and the query block size (in m * BLOCK_M, the block's first
/// query row), or null.
Value findBlockNConstant(const ScoreSite &site);
Value findBlockMConstant(const ScoreSite &site);

/// Finds the attention structure of `kernel`; reports what is missing at the
/// ops concerned and fails.
FailureOr<AttentionStructure> analyzeAttention(KernelOp kernel);

} // namespace mlir::cuir

#endif // CUIR_TRANSFER_ATTENTIONANALYSIS_H
