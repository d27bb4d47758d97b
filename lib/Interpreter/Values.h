//===- Values.h - Runtime values of the CuIR interpreter --------*- C++ -*-===//
//
// Tiles (and scalars, as rank-0 tiles), memory buffers with their views, and
// the bookkeeping of asynchronous work that the hazard checks need.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_LIB_INTERPRETER_VALUES_H
#define CUIR_LIB_INTERPRETER_VALUES_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <memory>
#include <variant>
#include <vector>

namespace mlir {
class Operation;
} // namespace mlir

namespace mlir::cuir::interp {

/// How elements are stored and rounded. Floats live in `float` and are
/// rounded to bf16/f16 after every op whose result has that type; integers
/// (index, iN) live in int64_t and wrap to `width` bits.
enum class ElemKind { F32, BF16, F16, Int };

ElemKind getElemKind(Type type);
/// Rounds `x` to the precision of `kind` (round to nearest even).
float roundTo(ElemKind kind, float x);
/// Wraps `x` to a signed `width`-bit integer (index is 64 bits).
int64_t wrapInt(int64_t x, unsigned width);
unsigned getIntWidth(Type type);

/// A tile of elements, or a scalar when `shape` is empty. Immutable once
/// built; copies share storage.
struct Tile {
  llvm::SmallVector<int64_t, 2> shape;
  ElemKind kind = ElemKind::F32;
  unsigned width = 64; // for ElemKind::Int
  std::shared_ptr<std::vector<float>> f;
  std::shared_ptr<std::vector<int64_t>> i;
  /// Nonzero while this is the result of an in-flight cuir.gemm_async.
  int64_t asyncGemm = 0;

  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  bool isFloat() const { return kind != ElemKind::Int; }
  bool isScalar() const { return shape.empty(); }
  float getF(int64_t idx) const { return (*f)[f->size() == 1 ? 0 : idx]; }
  int64_t getI(int64_t idx) const { return (*i)[i->size() == 1 ? 0 : idx]; }

  static Tile floats(ElemKind kind, llvm::ArrayRef<int64_t> shape);
  static Tile ints(unsigned width, llvm::ArrayRef<int64_t> shape);
  static Tile scalarF(ElemKind kind, float v);
  static Tile scalarI(unsigned width, int64_t v);
};

/// A vector clock over the agents of a thread block: the block worker is
/// agent 0, each worker of a top-level parallel section a new agent. Entry a
/// counts the barriers agent a had arrived at, as far as the holder has
/// synchronised with it: an access by agent a at its epoch e happens before
/// the holder's next access when entry a exceeds e.
using VectorClock = llvm::SmallVector<int64_t, 4>;

inline int64_t clockAt(const VectorClock &clock, int64_t agent) {
  return agent < static_cast<int64_t>(clock.size()) ? clock[agent] : 0;
}
/// Entry-wise maximum: `into` learns what `from` knows.
void joinClock(VectorClock &into, const VectorClock &from);

/// Storage of a global or shared buffer, plus per-element marks of the
/// asynchronous copies in flight on it.
struct Buffer {
  ElemKind kind = ElemKind::F32;
  unsigned width = 64;
  std::vector<float> f;
  std::vector<int64_t> i;
  bool shared = false;
  /// Copy id writing each element (0: none), created on first async copy.
  std::vector<int64_t> inflightWrite;
  /// Copy id reading each element (0: none).
  std::vector<int64_t> inflightRead;
  /// Shared memory: the Machine::syncWrites record of the last plain write
  /// of each element (0: none), created on first such write.
  std::vector<int64_t> unsyncedWrite;
  /// Shared memory: the Machine::readSets record of the plain reads of each
  /// element since its last write (0: none), created on first such read.
  std::vector<int64_t> readSet;
  /// Elements written by the kernel (outputs only).
  std::vector<bool> written;
  bool trackWrites = false;
  /// The blocks of the current launch that wrote (plainly) or added to
  /// (cuir.atomic_add) an element: block ordinals (linear id + 1), 0 for
  /// none, -1 for several adders, and the op of the first such access.
  struct BlockAccess {
    int64_t writer = 0, adder = 0;
    Operation *op = nullptr;
  };
  /// Per element, for buffers that the blocks of a launch share and that a
  /// later launch reads (a backward pass's outputs and workspaces); empty
  /// when not tracked. Cleared between launches, which are ordered.
  std::vector<BlockAccess> blockAccess;

  int64_t size() const { return kind == ElemKind::Int ? i.size() : f.size(); }
};

/// A strided view of a buffer, as memref types describe them.
struct View {
  std::shared_ptr<Buffer> buffer;
  int64_t offset = 0;
  llvm::SmallVector<int64_t, 4> sizes, strides;

  int64_t rank() const { return sizes.size(); }
  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : sizes)
      n *= d;
    return n;
  }

  /// A row-major view of all of `buffer` with `shape`.
  static View contiguous(std::shared_ptr<Buffer> buffer,
                         llvm::ArrayRef<int64_t> shape);
};

/// Calls `fn(addr, linear)` for every element of a `shape` tile placed at
/// `offsets` in `view` (optionally transposed: tile element (r, c) is view
/// element (c, r)); elements outside the view are passed as addr = -1.
template <typename F>
void forEachTileElement(const View &view, llvm::ArrayRef<int64_t> offsets,
                        llvm::ArrayRef<int64_t> shape, bool transpose, F fn) {
  int64_t rank = shape.size();
  llvm::SmallVector<int64_t, 4> idx(rank, 0);
  int64_t total = 1;
  for (int64_t d : shape)
    total *= d;
  for (int64_t linear = 0; linear < total; ++linear) {
    int64_t addr = view.offset;
    bool inBounds = true;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t vd = (transpose && rank == 2) ? 1 - d : d;
      int64_t pos = idx[d] + (offsets.empty() ? 0 : offsets[vd]);
      if (pos < 0 || pos >= view.sizes[vd]) {
        inBounds = false;
        break;
      }
      addr += pos * view.strides[vd];
    }
    fn(inBounds ? addr : -1, linear);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
}

struct Token {
  int64_t copy;
};
struct Group {
  int64_t id;
};

/// An array of mbarriers.
struct MBarrierArray {
  struct Barrier {
    int64_t completedPhases = 0;
    int64_t pendingArrivals = 0;
    int64_t pendingTx = 0;
    /// TMA copies whose bytes count towards the current phase.
    std::vector<int64_t> copies;
    /// TMA copies of completed phases that no worker has waited for yet:
    /// their data is visible only after a cuir.barrier.wait on the barrier.
    std::vector<int64_t> landed;
    /// What the arrivals of the current phase knew, and of every completed
    /// phase: a wait acquires the latter.
    VectorClock arrivedClock, completedClock;
  };
  int64_t arrivals = 1;
  std::vector<Barrier> barriers;
  Location loc;
  MBarrierArray(Location loc) : loc(loc) {}
};

using RtValue = std::variant<std::monostate, Tile, View, Token, Group,
                             std::shared_ptr<MBarrierArray>>;

} // namespace mlir::cuir::interp

#endif // CUIR_LIB_INTERPRETER_VALUES_H
