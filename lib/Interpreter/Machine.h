//===- Machine.h - Execution of a CuIR kernel -------------------*- C++ -*-===//
//
// A Machine runs the blocks of one kernel launch. Each block runs its body
// as the block worker; a run of consecutive cuir.bind ops forms a parallel
// section whose workers run as threads that pass a baton: exactly one runs
// at a time and it hands over only when it blocks at a barrier. Shared state
// therefore needs no locks beyond the baton.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_LIB_INTERPRETER_MACHINE_H
#define CUIR_LIB_INTERPRETER_MACHINE_H

#include "Values.h"

#include "cuir/Dialect/CuIR.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>

namespace mlir::cuir::interp {

/// The product of `factors`, or std::nullopt when it overflows (sizes of
/// buffers the interpreter budgets before allocating them).
inline std::optional<int64_t> product(llvm::ArrayRef<int64_t> factors) {
  int64_t n = 1;
  for (int64_t f : factors) {
    std::optional<int64_t> next = llvm::checkedMul(n, f);
    if (!next)
      return std::nullopt;
    n = *next;
  }
  return n;
}

class Machine;
struct Section;

/// Values visible to a worker: its own, then those of the worker that
/// started its section (read-only while the section runs).
struct Env {
  llvm::DenseMap<Value, RtValue> values;
  const Env *parent = nullptr;

  const RtValue *lookup(Value v) const {
    for (const Env *e = this; e; e = e->parent) {
      auto it = e->values.find(v);
      if (it != e->values.end())
        return &it->second;
    }
    return nullptr;
  }
};

/// A record of one asynchronous copy.
struct CopyRecord {
  Operation *op;
  View src, dst;
  llvm::SmallVector<int64_t> srcIndices, dstIndices;
  bool complete = false;

  /// The copied tile's shape: that of the side indexed with no offsets.
  ArrayRef<int64_t> tileSizes() const {
    return tileSizesOf(src, srcIndices, dst);
  }
  static ArrayRef<int64_t> tileSizesOf(const View &src,
                                       ArrayRef<int64_t> srcIndices,
                                       const View &dst) {
    return srcIndices.empty() ? ArrayRef<int64_t>(src.sizes)
                              : ArrayRef<int64_t>(dst.sizes);
  }
};

/// A plain access of shared memory (not an asynchronous copy) by agent
/// `agent` at its epoch `epoch` (see VectorClock).
struct SyncAccess {
  Operation *op;
  int64_t agent;
  int64_t epoch;
};

/// The plain reads of an element that no later read is known to follow: at
/// most one per agent, as an agent's later read supersedes its earlier ones.
using ReadSet = llvm::SmallVector<SyncAccess, 2>;

/// An agent's vector clock, shared by the sub-workers of a nested section.
struct AgentClock {
  int64_t agent;
  VectorClock clock;
};

/// One worker of a parallel section: a listed worker of one of its binds.
struct SectionMember {
  BindOp bind;
  int64_t workerId;
};

/// One worker: a block, warpgroup or warp running a region.
class Worker {
public:
  Worker(Machine &machine, Section *section, int index, int64_t threads,
         int64_t workerId, const Env *parentEnv)
      : machine(machine), section(section), index(index), threads(threads),
        workerId(workerId) {
    env.parent = parentEnv;
  }

  LogicalResult runRegion(Region &region, ArrayRef<RtValue> args,
                          SmallVectorImpl<RtValue> *results);
  LogicalResult runBlock(Block &block, SmallVectorImpl<RtValue> *results);

  Env env;

private:
  friend class Machine;
  LogicalResult exec(Operation *op);
  LogicalResult execCuIR(Operation *op);
  LogicalResult execArith(Operation *op);
  LogicalResult execMemRef(Operation *op);
  LogicalResult execSCF(Operation *op);
  LogicalResult execSection(ArrayRef<BindOp> binds);

  // Parallel sections (CuIROps.cpp).
  /// Runs the members of a section nested in this worker, one after another.
  LogicalResult runNestedSection(ArrayRef<SectionMember> members);
  /// Runs the members of a top-level section as threads passing a baton.
  LogicalResult runParallelSection(ArrayRef<SectionMember> members);
  /// The thread of one section worker: waits for the baton, runs `bind`'s
  /// region, then passes the baton on.
  LogicalResult runSectionWorker(BindOp bind);
  /// Passes the baton on as this worker ends; a deadlock if no one can take
  /// it while others still wait. Called with the section's mutex held.
  LogicalResult passBatonOnExit(BindOp bind);

  // CuIR ops, one function each (CuIROps.cpp).
  LogicalResult execOp(BlockIdOp op);
  LogicalResult execOp(WorkerIdOp op);
  LogicalResult execOp(AllocOp op);
  LogicalResult execOp(CopyOp op);
  LogicalResult execOp(CopyAsyncOp op);
  LogicalResult execOp(CommitOp op);
  LogicalResult execOp(WaitGroupOp op);
  LogicalResult execOp(LoadOp op);
  LogicalResult execOp(StoreOp op);
  LogicalResult execOp(AtomicAddOp op);
  LogicalResult execOp(GemmOp op);
  LogicalResult execOp(GemmAsyncOp op);
  LogicalResult execOp(GemmWaitOp op);
  LogicalResult execOp(ReduceRowsOp op);
  LogicalResult execOp(BroadcastRowsOp op);
  LogicalResult execOp(ConvertLayoutOp op);
  LogicalResult execOp(ElementwiseOp op);
  LogicalResult execOp(ScatterAddOp op);
  /// Runs the body of a per-element op (cuir.elementwise, cuir.scatter_add)
  /// once over whole tiles, into `results` (CuIROps.cpp).
  template <typename OpT>
  LogicalResult runTileBody(OpT op, SmallVectorImpl<RtValue> &results);
  LogicalResult execOp(BarrierInitOp op);
  LogicalResult execOp(BarrierArriveOp op);
  LogicalResult execOp(BarrierWaitOp op);
  LogicalResult execOp(BarrierSyncOp op);
  LogicalResult execOp(BarrierWarpOp op);
  LogicalResult execOp(BarrierNamedOp op);
  // memref ops (MemoryOps.cpp).
  LogicalResult execOp(memref::SubViewOp op);
  LogicalResult execOp(memref::LoadOp op);
  LogicalResult execOp(memref::DimOp op);
  // scf ops (Machine.cpp).
  LogicalResult execOp(scf::ForOp op);
  LogicalResult execOp(scf::IfOp op);
  LogicalResult execOp(scf::WhileOp op);
  /// The values of `op`'s operands `values`, or failure.
  FailureOr<SmallVector<RtValue>> getValues(Operation *op, ValueRange values);

  /// cuir.gemm and cuir.gemm_async: result = a * b (or b^T) + acc.
  LogicalResult execGemm(Operation *op, Value a, Value b, bool transposeB,
                         Value acc, Value result, bool async);

  /// A tile copied from src[srcIdx] to dst[dstIdx].
  struct TileCopy {
    View src, dst;
    SmallVector<int64_t> srcIdx, dstIdx, shape;
    Tile tile;
  };
  /// Copies a tile now (cuir.copy, and cuir.copy_async whose completion is
  /// tracked by marks); the tile has the shape of the side with no indices.
  FailureOr<TileCopy> copyTile(Operation *op, Value src, ValueRange srcIndices,
                               Value dst, ValueRange dstIndices,
                               bool synchronous);
  /// A GEMM operand: a register tile, or a shared tile read (transposed if
  /// asked) with the hazard checks.
  FailureOr<Tile> gemmOperand(Operation *op, Value v, bool transpose,
                              bool async);
  /// Records the shared operand reads of async GEMM `gemm`, now waited for.
  void retireReads(int64_t gemm);
  /// The values of the index operands `values` of `op`, appended to `out`.
  LogicalResult getIndices(Operation *op, ValueRange values,
                           SmallVectorImpl<int64_t> &out);

  // Operand access. Reading a tile that an in-flight async GEMM produces is a
  // hazard unless `allowPending`.
  const RtValue *get(Operation *user, Value v);
  FailureOr<Tile> getTile(Operation *user, Value v, bool allowPending = false);
  FailureOr<View> getView(Operation *user, Value v);
  FailureOr<int64_t> getIndex(Operation *user, Value v);
  void set(Value v, RtValue value) { env.values[v] = std::move(value); }

  // Memory with hazard checks.
  LogicalResult checkRead(Operation *op, const View &view,
                          ArrayRef<int64_t> offsets, ArrayRef<int64_t> shape);
  /// Fails at `op` if it reads an element of shared memory whose last plain
  /// write does not happen before this read (no barrier between them).
  LogicalResult checkUnsyncedRead(Operation *op, const Buffer &buf,
                                  int64_t addr);
  /// Records a plain write of `op` to the elements of a shared `view`.
  void markUnsynced(Operation *op, const View &view, ArrayRef<int64_t> offsets,
                    ArrayRef<int64_t> shape);
  /// Fails at `op` if its write of shared `view` (plain, or an asynchronous
  /// copy issued) may overtake a read or another worker's write of the same
  /// elements with no barrier between them; forgets their reads.
  LogicalResult checkOverwrite(Operation *op, const View &view,
                               ArrayRef<int64_t> offsets,
                               ArrayRef<int64_t> shape);
  /// Records a plain read of `op` of all of a shared `view`.
  void markRead(Operation *op, const View &view);
  /// Records one read op's elements of a shared buffer in its read sets.
  class ReadMarker {
  public:
    ReadMarker(Worker &worker, Operation *op, Buffer &buf);
    void mark(int64_t addr);

  private:
    Worker &worker;
    Buffer &buf;
    SyncAccess self;
    /// The read set after this read, for each before it (a tile's elements
    /// mostly share theirs).
    llvm::SmallDenseMap<int64_t, int64_t, 4> after;
    int64_t lastBefore = 0, lastAfter = 0;
  };
  /// Whether `access` happens before this worker's next access (the same
  /// agent's accesses, if this worker is one thread).
  bool ordered(const SyncAccess &access) const {
    return clockAt(agentClock->clock, access.agent) > access.epoch ||
           (access.agent == agentClock->agent && threads <= 1);
  }
  SyncAccess accessBy(Operation *op) const {
    return {op, agentClock->agent, agentClock->clock[agentClock->agent]};
  }
  /// The first of `accesses` that does not happen before this worker's next
  /// access, or nullptr.
  const SyncAccess *firstUnordered(ArrayRef<SyncAccess> accesses) const {
    for (const SyncAccess &a : accesses)
      if (!ordered(a))
        return &a;
    return nullptr;
  }
  /// This worker arrives at a barrier: its accesses so far happen before
  /// what follows the barrier, and `join`, if any, learns them.
  void arrive(VectorClock *join = nullptr) {
    ++agentClock->clock[agentClock->agent];
    if (join)
      joinClock(*join, agentClock->clock);
  }
  /// This worker leaves a barrier whose arrivals knew `join`.
  void acquire(const VectorClock &join) { joinClock(agentClock->clock, join); }
  LogicalResult checkWrite(Operation *op, const View &view,
                           ArrayRef<int64_t> offsets, ArrayRef<int64_t> shape);
  FailureOr<Tile> readTile(Operation *op, const View &view,
                           ArrayRef<int64_t> offsets, ArrayRef<int64_t> shape,
                           ElemKind kind, unsigned width, bool transpose,
                           bool recordRead = true);
  /// `synchronous`: a plain write by the worker's threads (not an async
  /// copy landing), visible to other threads only after a barrier.
  LogicalResult writeTile(Operation *op, const Tile &tile, const View &view,
                          ArrayRef<int64_t> offsets, bool synchronous);
  /// How a block accesses an element of a buffer the blocks share.
  enum class Access { Read, Write, Add };
  /// Fails at `op` if its `access` to element `addr` of `buf` races with
  /// another block of the launch (blocks of a launch are unordered: only
  /// atomic adds of several blocks commute), and records the access.
  LogicalResult checkBlockRace(Operation *op, Buffer &buf, int64_t addr,
                               Access access);
  /// The same for the elements of a `shape` tile at `offsets` of `view`.
  LogicalResult checkBlockRace(Operation *op, const View &view,
                               ArrayRef<int64_t> offsets,
                               ArrayRef<int64_t> shape, Access access);

  // Synchronisation.
  LogicalResult blockUntil(Operation *op, std::function<bool()> ready);
  /// Barrier `index` of the mbarrier array `bars`, or an error at `op`.
  FailureOr<MBarrierArray::Barrier *> getBarrier(Operation *op, Value bars,
                                                 Value index,
                                                 int64_t *arrivals = nullptr);
  /// Completes the barrier's phase once its arrivals and bytes are all in:
  /// the TMA copies that counted towards it land.
  void completePhaseIfDone(MBarrierArray::Barrier &bar, int64_t arrivals);

  Machine &machine;
  Section *section;
  int index;
  int64_t threads;
  int64_t workerId;

  /// Committed cp.async groups in flight, oldest first: (group, copies).
  std::vector<std::pair<int64_t, std::vector<int64_t>>> groups;
  /// Async GEMMs in flight, oldest first.
  std::vector<int64_t> gemms;
  /// Async GEMMs' reads of shared operands (whole views), recorded as reads
  /// when the GEMM is waited for.
  struct PendingRead {
    int64_t gemm;
    View view;
  };
  std::vector<PendingRead> pendingReads;
  /// The agent this worker runs as and its clock (shared with the
  /// sub-workers of a nested section, whose accesses the worker's own
  /// barriers publish).
  std::shared_ptr<AgentClock> agentClock =
      std::make_shared<AgentClock>(AgentClock{0, VectorClock{0}});
};

/// Workers of a parallel section and the baton they pass.
struct Section {
  enum class State { Runnable, Blocked, Done };
  std::mutex mutex;
  std::condition_variable cv;
  int current = 0;
  bool aborted = false;
  std::vector<State> states;
  std::vector<std::function<bool()>> ready;
  std::vector<Operation *> blockedAt;
  std::vector<int64_t> threads;
  // Block barrier and named barriers among the section's workers, and what
  // the arrivals of each generation knew.
  int64_t syncArrived = 0, syncGeneration = 0;
  std::map<int64_t, VectorClock> syncClocks;             // gen -> join
  std::map<int64_t, std::pair<int64_t, int64_t>> named; // id -> (threads, gen)
  std::map<std::pair<int64_t, int64_t>, VectorClock> namedClocks;
  /// The agent of the worker that runs the section: the section's workers
  /// are its threads, so a block barrier among them publishes its writes.
  int64_t parentAgent = 0;
  int64_t totalThreads = 0;

  /// The first worker after `after` (cyclically) that can make progress,
  /// or -1.
  int nextRunnable(int after);
  /// Gives the baton to worker `next`.
  void handTo(int next);
  /// Attaches "worker j waits here" to `diag` for every blocked worker but
  /// `except`.
  void noteBlockedWorkers(InFlightDiagnostic &diag, int except) const;
};

class Machine {
public:
  Machine(KernelOp kernel) : kernel(kernel) {}

  /// Runs one thread block of the grid.
  LogicalResult runBlock(ArrayRef<int64_t> blockId, ArrayRef<RtValue> args);

  KernelOp kernel;
  SmallVector<int64_t, 3> blockId;
  /// The grid, and the running block's linear id + 1 (its ordinal in
  /// cross-block race checks).
  SmallVector<int64_t, 3> grid;
  int64_t blockOrdinal = 0;
  std::vector<CopyRecord> copies;
  std::vector<Operation *> gemmOps;    // id - 1 -> op
  std::vector<Operation *> groupOps;   // id - 1 -> commit op
  std::vector<SyncAccess> syncWrites; // id - 1 -> plain shared write
  std::vector<ReadSet> readSets;      // id - 1 -> plain shared reads
  /// Agents of the running block so far (see VectorClock).
  int64_t numAgents = 1;
  bool hasFailed = false;
  /// Tile GEMMs executed (cuir.gemm and cuir.gemm_async), for reports.
  int64_t gemmsRun = 0;

  int64_t newCopy(CopyRecord record);
  void completeCopy(int64_t id);
  int64_t threadsOf(WorkerKind kind);
};

} // namespace mlir::cuir::interp

#endif // CUIR_LIB_INTERPRETER_MACHINE_H
