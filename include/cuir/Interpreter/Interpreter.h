//===- Interpreter.h - Reference interpreter of CuIR kernels ----*- C++ -*-===//
//
// Executes a cuir.kernel on the CPU, block by block, with the element types
// the kernel uses, and reports asynchronous hazards (a read of an async
// result before its wait, a write to a buffer an in-flight copy reads, a
// barrier wait that can never complete) with the locations of both ops.
//
// Kernel parameters are bound by their `cuir.arg` argument attribute:
//   q, k, v       global [B, N, H, d] inputs (Q over Nq and Hq heads, K/V over
//                 Nkv and Hkv heads), filled with random values
//   o             global [B, Nq, Hq, d] output
//   lse           global [B, Hq, Nq] f32 log-sum-exp output
// and, in a backward kernel (one with dq, dk or dv):
//   o, lse, d_o   inputs: the forward's O and LSE, the upstream gradient dO
//   dq, dk, dv    outputs of the shapes of q, k and v
//   workspace:<name>  scratch of the shape its cuir.shape map gives
//   B, Hq, Hkv, Nq, Nkv, d      index sizes
//   softmax_scale, softmax_scale_log2   f32 scales (1/sqrt(d), times log2 e)
//   causal        i1/index flag
//   param:<name>  a variant parameter, from InterpreterOptions::params
//   block_mask:<list>  a list of the kernel's cuir.block_mask, computed by
//                 classifying its tiles (or from params=<list>, to plant one)
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_INTERPRETER_INTERPRETER_H
#define CUIR_INTERPRETER_INTERPRETER_H

#include "cuir/Dialect/CuIR.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::cuir {

struct InterpreterOptions {
  int64_t batch = 1, headsQ = 1, headsKV = 1, seqQ = 128, seqKV = 128,
          headDim = 128;
  bool causal = false;
  uint64_t seed = 0;
  /// Number of thread blocks to run, chosen at random with `seed`; 0 runs
  /// every block.
  int64_t sampleBlocks = 0;
  /// Relative error (Frobenius norm) above which the output mismatches.
  double tolerance = 1e-2;
  /// "builtin" for standard attention, or a path to a PyTorch file.
  std::string reference = "builtin";
  /// Variant parameters bound to `param:<name>` arguments. Scalars are
  /// numbers; per-batch or per-head arrays are comma-separated lists.
  std::map<std::string, std::string> params;
  /// If set, a directory to write the inputs and the kernel's outputs to, as
  /// .npy files (q, k, v, o in [B, N, H, d]; lse in [B, Hq, Nq]) plus
  /// meta.json, e.g. to compare with the CUDA kernel on a GPU.
  std::string dumpDir;
  /// Python interpreter used for PyTorch references (with torch and numpy;
  /// see findPythonWithTorch in cuir/Support/Toolchain.h).
  std::string python;
  /// The most memory, in MiB, the interpreter's data may take: the inputs,
  /// outputs and the reference's copies of them, variant parameters, the
  /// kernel's shared memory and tiles, the list of blocks.
  int64_t memoryLimitMiB = kDefaultMemoryLimitMiB;

  static constexpr int64_t kDefaultMemoryLimitMiB = 4096;
};

/// An option that cannot run, by its name in --cuir-interpret ("B",
/// "tolerance", "params", ...), and why.
struct OptionProblem {
  std::string option;
  std::string message;
};

/// Checks `options` before any kernel runs: positive sizes, Hq a multiple
/// of Hkv, a finite tolerance of at least 0, a sample size of at least 0,
/// and that the problem's data fits the memory limit (checked arithmetic).
std::optional<OptionProblem> checkOptions(const InterpreterOptions &options);

/// The block lists a cuir.block_mask defines for one problem (DESIGN §9,
/// FlexAttention's BlockMask layout): int32, flat row-major, each row in
/// descending tile order, entries past a row's count 0.
struct BlockMaskLists {
  /// B' and H' (1 where the mask broadcasts), query tiles QB and KV tiles KB.
  int64_t batches = 1, heads = 1, qBlocks = 0, kvBlocks = 0;
  /// [B', H', QB] and [B', H', QB, KB]: the KV tiles of each query tile.
  std::vector<int32_t> kvNumBlocks, kvIndices, fullKvNumBlocks, fullKvIndices;
  /// [B', H', KB] and [B', H', KB, QB]: the query tiles of each KV tile.
  std::vector<int32_t> qNumBlocks, qIndices, fullQNumBlocks, fullQIndices;
  /// [B', H', QB]: the query tiles of each (b', h') from the most listed KV
  /// tiles to the fewest, ties from the last query tile down.
  std::vector<int32_t> qOrder;
  /// Tiles of each class over [B', H', QB, KB].
  int64_t emptyTiles = 0, partialTiles = 0, fullTiles = 0;

  /// The list called `name` ("kv_num_blocks", "full_q_indices", ...: the
  /// kernel argument's role without "block_mask:"), or null.
  std::vector<int32_t> *getList(llvm::StringRef name);
};

/// Classifies the tiles of `mask` for the problem of `options` (B, Hq, Nq,
/// Nkv; its variant parameters from params=) by running its region on every
/// in-range pair, as a kernel run does. Errors (a parameter without a value,
/// a load out of bounds, the memory limit) are diagnostics.
FailureOr<BlockMaskLists>
computeBlockMaskLists(BlockMaskOp mask, const InterpreterOptions &options);

/// Comparison of one output of a backward pass (dq, dk or dv) with the
/// reference's gradient, by the forward's output criteria.
struct OutputComparison {
  std::string name;
  int64_t elementsCompared = 0;
  double maxAbsError = 0, relError = 0;
  bool passed = false;
  std::string firstMismatch, worstMismatch;
};

/// Comparison of the kernel's output with the reference.
struct InterpreterReport {
  int64_t blocksRun = 0, blocksTotal = 0;
  /// Tile GEMMs the run executed: shows which key/value blocks were skipped.
  int64_t gemms = 0;
  int64_t elementsCompared = 0;
  double maxAbsError = 0, relError = 0;
  bool passed = false;
  /// Human-readable description of the first mismatch, if any.
  std::string firstMismatch;
  std::string worstMismatch;
  bool lseCompared = false;
  /// Largest |lse - reference| beyond four float32 ulps of the reference,
  /// over rows whose reference is finite; the log-sum-exp passes when it
  /// is at most the tolerance.
  double lseMaxAbsError = 0;
  /// The classes of the tiles of the kernel's block mask, if it has one.
  std::optional<BlockMaskLists> blockMask;
  /// A backward pass: its kernels launched and its outputs dq, dk and dv
  /// (the fields above then describe the first that failed, or dq).
  int64_t kernelsRun = 1;
  std::vector<OutputComparison> outputs;
};

/// Whether `kernel` can run the problem of `options`: the static sizes of its
/// q/k/v/o/lse parameters match, and its `cuir.causal` specialisation (if
/// any) agrees. Otherwise `why` says what does not fit.
bool kernelFits(KernelOp kernel, const InterpreterOptions &options,
                std::string &why);

/// Runs `kernel` on random inputs and compares it with the reference.
/// Hazards, deadlocks and unsupported ops are reported as diagnostics on the
/// ops involved and make the result a failure; so are options that
/// checkOptions refuses, parameter values that do not fit their parameter,
/// and data (the problem's, the kernel's shared memory and tiles, the grid)
/// beyond the memory limit, before anything is allocated.
FailureOr<InterpreterReport> interpretKernel(KernelOp kernel,
                                           const InterpreterOptions &options);

/// Runs a backward pass: `kernels` (a cuir.launch_sequence's, or one
/// backward kernel) in order, on buffers they share by role. q, k, v and
/// d_o are random; o and lse are the reference forward's (so the inputs
/// are consistent, lse -inf for a row that sees no key); dq, dk and dv
/// start as NaN and workspaces as garbage. Every block of every kernel
/// runs; a plain access to an element of an output or workspace that
/// another block of the same launch wrote or added to is a race. dq, dk
/// and dv are compared with the reference's gradients.
/// Errors that concern the whole pass are reported at `loc` (the launch
/// sequence's).
FailureOr<InterpreterReport>
interpretBackward(Location loc, llvm::ArrayRef<KernelOp> kernels,
                  const InterpreterOptions &options);

/// One line describing a backward run named `name`: its kernels, the
/// problem, blocks and GEMMs, and the errors of dq, dk and dv.
std::string describeBackwardRun(llvm::StringRef name,
                                llvm::ArrayRef<KernelOp> kernels,
                                const InterpreterOptions &options,
                                const InterpreterReport &report);

/// One line describing a run: the kernel, the problem, the blocks and GEMMs
/// run, the reference and the errors against the tolerance.
std::string describeRun(KernelOp kernel, const InterpreterOptions &options,
                        const InterpreterReport &report);

} // namespace mlir::cuir

#endif // CUIR_INTERPRETER_INTERPRETER_H
