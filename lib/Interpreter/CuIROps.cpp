//===- CuIROps.cpp - Execution of CuIR ops --------------------------------===//

#include "Machine.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <thread>

using namespace mlir;
using namespace mlir::cuir;
using namespace mlir::cuir::interp;

namespace {

/// Reads a GEMM operand (register tile or shared tile) as a dense row-major
/// matrix of floats, transposed if asked.
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<float> data;
};

} // namespace

/// Dense C[M, N] += A[M, K] * B[K, N] in f32, i-k-j order so the inner loop
/// streams rows of B and C.
static void gemmAccumulate(const Matrix &a, const Matrix &b, float *c) {
  int64_t m = a.rows, k = a.cols, n = b.cols;
  for (int64_t i = 0; i < m; ++i) {
    float *crow = c + i * n;
    const float *arow = a.data.data() + i * k;
    for (int64_t p = 0; p < k; ++p) {
      float av = arow[p];
      if (av == 0.0f)
        continue;
      const float *brow = b.data.data() + p * n;
      for (int64_t j = 0; j < n; ++j)
        crow[j] += av * brow[j];
    }
  }
}

FailureOr<MBarrierArray::Barrier *>
Worker::getBarrier(Operation *op, Value bars, Value index, int64_t *arrivals) {
  const RtValue *bv = get(op, bars);
  FailureOr<int64_t> bi = getIndex(op, index);
  if (!bv || failed(bi))
    return failure();
  auto &array = *std::get<std::shared_ptr<MBarrierArray>>(*bv);
  if (*bi < 0 || *bi >= static_cast<int64_t>(array.barriers.size()))
    return op->emitError() << "barrier index " << *bi << " out of range";
  if (arrivals)
    *arrivals = array.arrivals;
  return &array.barriers[*bi];
}

void Worker::completePhaseIfDone(MBarrierArray::Barrier &bar,
                                 int64_t arrivals) {
  if (bar.pendingArrivals > 0 || bar.pendingTx != 0)
    return;
  bar.completedPhases++;
  bar.pendingArrivals = arrivals;
  joinClock(bar.completedClock, bar.arrivedClock);
  bar.arrivedClock.clear();
  // The bytes have landed, but a worker sees them only once it has waited
  // for the phase (cuir.barrier.wait): until then they stay marked, so that
  // a read without the wait is a hazard even where the copy landed first.
  bar.landed.insert(bar.landed.end(), bar.copies.begin(), bar.copies.end());
  bar.copies.clear();
}

//===----------------------------------------------------------------------===//
// Parallel sections
//===----------------------------------------------------------------------===//

int Section::nextRunnable(int after) {
  int n = states.size();
  for (int k = 1; k <= n; ++k) {
    int j = (after + k) % n;
    if (states[j] == State::Runnable ||
        (states[j] == State::Blocked && ready[j]()))
      return j;
  }
  return -1;
}

void Section::handTo(int next) {
  states[next] = State::Runnable;
  current = next;
}

void Section::noteBlockedWorkers(InFlightDiagnostic &diag, int except) const {
  for (int j = 0, n = states.size(); j < n; ++j)
    if (j != except && states[j] == State::Blocked)
      diag.attachNote(blockedAt[j]->getLoc())
          << "worker " << j << " waits here";
}

LogicalResult Worker::blockUntil(Operation *op, std::function<bool()> ready) {
  if (ready())
    return success();
  if (!section) {
    op->emitError() << "waits for a barrier that can never complete: no other "
                       "worker runs in this block";
    return failure();
  }
  Section &s = *section;
  std::unique_lock<std::mutex> lock(s.mutex);
  s.states[index] = Section::State::Blocked;
  s.ready[index] = std::move(ready);
  s.blockedAt[index] = op;
  // Hand the baton to the next worker that can make progress.
  int next = s.nextRunnable(index);
  if (next < 0) {
    s.aborted = true;
    s.cv.notify_all();
    InFlightDiagnostic diag =
        op->emitError() << "deadlock: this barrier wait can never complete; "
                           "every worker of the block is waiting";
    s.noteBlockedWorkers(diag, /*except=*/index);
    return diag;
  }
  s.handTo(next);
  s.cv.notify_all();
  s.cv.wait(lock, [&] { return s.current == index || s.aborted; });
  if (s.aborted)
    return failure();
  s.states[index] = Section::State::Runnable;
  return success();
}

/// Workers of a section: every listed worker of every bind, in order.
static SmallVector<SectionMember> sectionMembers(ArrayRef<BindOp> binds) {
  SmallVector<SectionMember> members;
  for (BindOp bind : binds)
    for (int64_t i = 0, e = bind.getWorkers().size(); i < e; ++i)
      members.push_back({bind, i});
  return members;
}

LogicalResult Worker::execSection(ArrayRef<BindOp> binds) {
  SmallVector<SectionMember> members = sectionMembers(binds);
  if (section)
    return runNestedSection(members);
  return runParallelSection(members);
}

LogicalResult Worker::runNestedSection(ArrayRef<SectionMember> members) {
  // Inside a worker, a nested bind is this worker's own work: it runs for
  // each listed sub-worker in turn, which inherits the asynchronous work in
  // flight and hands it back.
  for (SectionMember m : members) {
    Worker sub(machine, section, index, machine.threadsOf(m.bind.getKind()),
               m.workerId, &env);
    sub.agentClock = agentClock;
    sub.groups = std::move(groups);
    sub.gemms = std::move(gemms);
    sub.pendingReads = std::move(pendingReads);
    LogicalResult r = sub.runRegion(m.bind.getBody(), {}, nullptr);
    groups = std::move(sub.groups);
    gemms = std::move(sub.gemms);
    pendingReads = std::move(sub.pendingReads);
    if (failed(r))
      return failure();
  }
  return success();
}

LogicalResult Worker::runParallelSection(ArrayRef<SectionMember> members) {
  Section s;
  int n = members.size();
  s.states.assign(n, Section::State::Runnable);
  s.ready.resize(n);
  s.blockedAt.assign(n, nullptr);
  s.parentAgent = agentClock->agent;
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < n; ++i) {
    BindOp bind = members[i].bind;
    int64_t threads = machine.threadsOf(bind.getKind());
    s.threads.push_back(threads);
    s.totalThreads += threads;
    workers.push_back(std::make_unique<Worker>(machine, &s, i, threads,
                                               members[i].workerId, &env));
    // A new agent that knows what this worker knew when it started them.
    int64_t agent = machine.numAgents++;
    VectorClock clock = agentClock->clock;
    clock.resize(agent + 1, 0);
    workers.back()->agentClock =
        std::make_shared<AgentClock>(AgentClock{agent, std::move(clock)});
  }
  std::vector<LogicalResult> results(n, success());
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back(
        [&, i] { results[i] = workers[i]->runSectionWorker(members[i].bind); });
  for (std::thread &t : threads)
    t.join();
  // The section's end joins its workers: their accesses happen before what
  // follows it.
  for (std::unique_ptr<Worker> &w : workers) {
    w->arrive();
    acquire(w->agentClock->clock);
  }
  return failure(
      llvm::any_of(results, [](LogicalResult r) { return failed(r); }));
}

LogicalResult Worker::runSectionWorker(BindOp bind) {
  Section &s = *section;
  {
    std::unique_lock<std::mutex> lock(s.mutex);
    s.cv.wait(lock, [&] { return s.current == index || s.aborted; });
    if (s.aborted)
      return failure();
  }
  LogicalResult result = runRegion(bind.getBody(), {}, nullptr);
  if (succeeded(result) && (!groups.empty() || !gemms.empty())) {
    bind.emitError() << "worker " << index
                     << " ends with asynchronous work in flight that "
                     << "it never waited for";
    result = failure();
  }
  std::unique_lock<std::mutex> lock(s.mutex);
  s.states[index] = Section::State::Done;
  if (failed(result))
    s.aborted = true;
  if (failed(passBatonOnExit(bind)))
    result = failure();
  s.cv.notify_all();
  return result;
}

LogicalResult Worker::passBatonOnExit(BindOp bind) {
  Section &s = *section;
  if (s.aborted)
    return success();
  if (int next = s.nextRunnable(index); next >= 0) {
    s.handTo(next);
    return success();
  }
  bool allDone = llvm::all_of(
      s.states, [](Section::State st) { return st == Section::State::Done; });
  if (allDone)
    return success();
  // Nobody can take the baton, yet some worker still waits.
  s.aborted = true;
  InFlightDiagnostic diag =
      bind.emitError() << "deadlock: the other workers wait for barriers that "
                          "can no longer complete";
  s.noteBlockedWorkers(diag, /*except=*/-1);
  return diag;
}

//===----------------------------------------------------------------------===//
// Operand helpers
//===----------------------------------------------------------------------===//

LogicalResult Worker::getIndices(Operation *op, ValueRange values,
                                 SmallVectorImpl<int64_t> &out) {
  for (Value v : values) {
    FailureOr<int64_t> i = getIndex(op, v);
    if (failed(i))
      return failure();
    out.push_back(*i);
  }
  return success();
}

FailureOr<Worker::TileCopy> Worker::copyTile(Operation *op, Value srcV,
                                             ValueRange srcIndices, Value dstV,
                                             ValueRange dstIndices,
                                             bool synchronous) {
  FailureOr<View> src = getView(op, srcV);
  FailureOr<View> dst = getView(op, dstV);
  SmallVector<int64_t> srcIdx, dstIdx;
  if (failed(src) || failed(dst) ||
      failed(getIndices(op, srcIndices, srcIdx)) ||
      failed(getIndices(op, dstIndices, dstIdx)))
    return failure();
  SmallVector<int64_t> shape(CopyRecord::tileSizesOf(*src, srcIdx, *dst));
  FailureOr<Tile> t = readTile(op, *src, srcIdx, shape, src->buffer->kind,
                               src->buffer->width, false);
  if (failed(t) || failed(writeTile(op, *t, *dst, dstIdx, synchronous)))
    return failure();
  return TileCopy{*src, *dst, srcIdx, dstIdx, shape, std::move(*t)};
}

/// Marks the elements of `v` a `shape` tile at `offsets` covers (those
/// inside the view) as read or written by the in-flight copy `copyId`, so
/// that early uses are hazards.
static void markInFlight(const View &v, ArrayRef<int64_t> offsets,
                         ArrayRef<int64_t> shape, int64_t copyId, bool write) {
  Buffer &b = *v.buffer;
  auto &marks = write ? b.inflightWrite : b.inflightRead;
  if (marks.empty())
    marks.assign(b.size(), 0);
  forEachTileElement(v, offsets, shape, /*transpose=*/false,
                     [&](int64_t addr, int64_t) {
                       if (addr >= 0)
                         marks[addr] = copyId;
                     });
}

/// A GEMM operand as a dense row-major matrix of floats.
static Matrix toMatrix(const Tile &t) {
  Matrix m;
  m.rows = t.shape[0];
  m.cols = t.shape[1];
  m.data.assign(t.f->begin(), t.f->end());
  return m;
}

FailureOr<Tile> Worker::gemmOperand(Operation *op, Value v, bool transpose,
                                    bool async) {
  if (!isa<MemRefType>(v.getType()))
    return getTile(op, v);
  FailureOr<View> vw = getView(op, v);
  if (failed(vw))
    return failure();
  SmallVector<int64_t, 2> shape(vw->sizes.begin(), vw->sizes.end());
  if (transpose)
    std::swap(shape[0], shape[1]);
  return readTile(op, *vw, {}, shape, vw->buffer->kind, vw->buffer->width,
                  transpose, /*recordRead=*/!async);
}

//===----------------------------------------------------------------------===//
// CuIR ops, one function each
//===----------------------------------------------------------------------===//

LogicalResult Worker::execCuIR(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<BlockIdOp, WorkerIdOp, AllocOp, CopyOp, CopyAsyncOp, CommitOp,
            WaitGroupOp, LoadOp, StoreOp, AtomicAddOp, GemmOp, GemmAsyncOp,
            GemmWaitOp, ReduceRowsOp, BroadcastRowsOp, ConvertLayoutOp,
            ElementwiseOp, ScatterAddOp, BarrierInitOp, BarrierArriveOp,
            BarrierWaitOp, BarrierSyncOp, BarrierWarpOp, BarrierNamedOp>(
          [&](auto cuirOp) { return execOp(cuirOp); })
      .Default([&](Operation *) {
        return op->emitError() << "the CuIR interpreter does not execute '"
                               << op->getName() << "'";
      });
}

LogicalResult Worker::execOp(BlockIdOp id) {
  set(id.getResult(),
      Tile::scalarI(64, machine.blockId[static_cast<unsigned>(id.getDim())]));
  return success();
}

LogicalResult Worker::execOp(WorkerIdOp id) {
  set(id.getResult(), Tile::scalarI(64, workerId));
  return success();
}

LogicalResult Worker::execOp(AllocOp alloc) {
  MemRefType type = alloc.getBuffer().getType();
  auto buf = std::make_shared<Buffer>();
  buf->kind = getElemKind(type.getElementType());
  buf->width = getIntWidth(type.getElementType());
  buf->shared = true;
  // Shared memory starts as garbage: NaN makes reads of it visible.
  if (buf->kind == ElemKind::Int)
    buf->i.assign(type.getNumElements(), 0x5eadbeef);
  else
    buf->f.assign(type.getNumElements(), NAN);
  set(alloc.getBuffer(), View::contiguous(std::move(buf), type.getShape()));
  return success();
}

LogicalResult Worker::execOp(CopyOp copy) {
  return success(succeeded(copyTile(copy, copy.getSrc(), copy.getSrcIndices(),
                                    copy.getDst(), copy.getDstIndices(),
                                    /*synchronous=*/true)));
}

LogicalResult Worker::execOp(CopyAsyncOp copy) {
  // The data moves now; the marks make any early use a hazard.
  FailureOr<TileCopy> c =
      copyTile(copy, copy.getSrc(), copy.getSrcIndices(), copy.getDst(),
               copy.getDstIndices(), /*synchronous=*/false);
  if (failed(c))
    return failure();
  int64_t id = machine.newCopy({copy, c->src, c->dst, c->srcIdx, c->dstIdx});
  markInFlight(c->dst, c->dstIdx, c->shape, id, /*write=*/true);
  markInFlight(c->src, c->srcIdx, c->shape, id, /*write=*/false);
  if (copy.getEngine() == CopyEngine::CpAsync) {
    set(copy.getToken(), Token{id});
    return success();
  }
  // TMA: the bytes land on the barrier's current phase.
  int64_t arrivals;
  FailureOr<MBarrierArray::Barrier *> bar =
      getBarrier(copy, copy.getBarrier(), copy.getBarrierIndex(), &arrivals);
  if (failed(bar))
    return failure();
  (*bar)->pendingTx -=
      c->tile.numElements() * (c->src.buffer->kind == ElemKind::F32 ? 4 : 2);
  (*bar)->copies.push_back(id);
  completePhaseIfDone(**bar, arrivals);
  return success();
}

LogicalResult Worker::execOp(CommitOp commit) {
  std::vector<int64_t> ids;
  for (Value v : commit.getTokens()) {
    const RtValue *tv = get(commit, v);
    if (!tv)
      return failure();
    ids.push_back(std::get<Token>(*tv).copy);
  }
  machine.groupOps.push_back(commit);
  int64_t gid = machine.groupOps.size();
  groups.emplace_back(gid, std::move(ids));
  set(commit.getGroup(), Group{gid});
  return success();
}

LogicalResult Worker::execOp(WaitGroupOp wait) {
  const RtValue *gv = get(wait, wait.getGroup());
  if (!gv)
    return failure();
  int64_t gid = std::get<Group>(*gv).id;
  int64_t keep = wait.getPending();
  while (static_cast<int64_t>(groups.size()) > keep) {
    for (int64_t c : groups.front().second) {
      machine.completeCopy(c);
      // cp.async.wait_group completes the waiting thread's own copies: the
      // rest of the tile, other threads' copies, needs a barrier too.
      const CopyRecord &rec = machine.copies[c - 1];
      markUnsynced(rec.op, rec.dst, rec.dstIndices, rec.tileSizes());
    }
    groups.erase(groups.begin());
  }
  if (llvm::none_of(groups,
                    [&](const auto &group) { return group.first == gid; }))
    return success();
  InFlightDiagnostic diag =
      wait.emitError() << "leaves the group it waits for in flight: 'pending "
                       << keep << "' keeps the " << keep
                       << " most recent group(s) pending, and this group is "
                          "one of them";
  diag.attachNote(machine.groupOps[gid - 1]->getLoc())
      << "the group is committed here";
  return diag;
}

LogicalResult Worker::execOp(LoadOp load) {
  FailureOr<View> src = getView(load, load.getSrc());
  if (failed(src))
    return failure();
  auto type = load.getResult().getType();
  FailureOr<Tile> t = readTile(
      load, *src, {}, type.getShape(), getElemKind(type.getElementType()),
      getIntWidth(type.getElementType()), load.getTranspose());
  if (failed(t))
    return failure();
  set(load.getResult(), *t);
  return success();
}

LogicalResult Worker::execOp(StoreOp store) {
  FailureOr<Tile> t = getTile(store, store.getValue());
  FailureOr<View> dst = getView(store, store.getDst());
  SmallVector<int64_t> idx;
  if (failed(t) || failed(dst) ||
      failed(getIndices(store, store.getIndices(), idx)))
    return failure();
  return writeTile(store, *t, *dst, idx, /*synchronous=*/true);
}

LogicalResult Worker::execOp(GemmOp gemm) {
  return execGemm(gemm, gemm.getA(), gemm.getB(), gemm.getTransposeB(),
                  gemm.getAcc(), gemm.getResult(), /*async=*/false);
}

LogicalResult Worker::execOp(GemmAsyncOp gemm) {
  return execGemm(gemm, gemm.getA(), gemm.getB(), gemm.getTransposeB(),
                  gemm.getAcc(), gemm.getResult(), /*async=*/true);
}

LogicalResult Worker::execGemm(Operation *op, Value aV, Value bV,
                               bool transposeB, Value accV, Value result,
                               bool async) {
  FailureOr<Tile> a = gemmOperand(op, aV, /*transpose=*/false, async);
  FailureOr<Tile> b = gemmOperand(op, bV, transposeB, async);
  FailureOr<Tile> acc = getTile(op, accV, /*allowPending=*/async);
  if (failed(a) || failed(b) || failed(acc))
    return failure();
  Tile out = Tile::floats(acc->kind, acc->shape);
  std::copy(acc->f->begin(), acc->f->end(), out.f->begin());
  gemmAccumulate(toMatrix(*a), toMatrix(*b), out.f->data());
  ++machine.gemmsRun;
  if (out.kind != ElemKind::F32)
    for (float &x : *out.f)
      x = roundTo(out.kind, x);
  if (async) {
    machine.gemmOps.push_back(op);
    out.asyncGemm = machine.gemmOps.size();
    gemms.push_back(out.asyncGemm);
    // The operands are read until the GEMM is waited for.
    for (Value v : {aV, bV})
      if (isa<MemRefType>(v.getType()))
        pendingReads.push_back({out.asyncGemm, *getView(op, v)});
  }
  set(result, out);
  return success();
}

void Worker::retireReads(int64_t gemm) {
  llvm::erase_if(pendingReads, [&](const PendingRead &r) {
    if (r.gemm != gemm)
      return false;
    markRead(machine.gemmOps[gemm - 1], r.view);
    return true;
  });
}

LogicalResult Worker::execOp(GemmWaitOp wait) {
  FailureOr<Tile> acc = getTile(wait, wait.getAcc(), /*allowPending=*/true);
  if (failed(acc))
    return failure();
  int64_t keep = wait.getPending().value_or(0);
  if (Value count = wait.getPendingCount()) {
    FailureOr<int64_t> n = getIndex(wait, count);
    if (failed(n))
      return failure();
    if (*n < 0)
      return wait.emitError() << "pending count " << *n << " is negative";
    keep = *n;
  }
  while (static_cast<int64_t>(gemms.size()) > keep) {
    retireReads(gemms.front());
    gemms.erase(gemms.begin());
  }
  if (acc->asyncGemm && llvm::is_contained(gemms, acc->asyncGemm)) {
    InFlightDiagnostic diag =
        wait.emitError() << "leaves the GEMM it waits for in flight: 'pending "
                         << keep << "' keeps the " << keep
                         << " most recent GEMM(s) pending, and this one is "
                            "among them";
    diag.attachNote(machine.gemmOps[acc->asyncGemm - 1]->getLoc())
        << "the asynchronous GEMM is issued here";
    return diag;
  }
  Tile out = *acc;
  out.asyncGemm = 0;
  set(wait.getResult(), out);
  return success();
}

LogicalResult Worker::execOp(ReduceRowsOp red) {
  FailureOr<Tile> in = getTile(red, red.getInput());
  if (failed(in))
    return failure();
  int64_t rows = in->shape[0], cols = in->shape[1];
  Tile out = Tile::floats(in->kind, {rows});
  bool isMax = red.getKind() == ReduceKind::Max;
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = in->f->data() + r * cols;
    float acc = isMax ? -INFINITY : 0.0f;
    for (int64_t c = 0; c < cols; ++c)
      acc = isMax ? (std::isnan(row[c]) ? NAN : std::fmax(acc, row[c]))
                  : acc + row[c];
    (*out.f)[r] = roundTo(out.kind, acc);
  }
  set(red.getResult(), out);
  return success();
}

LogicalResult Worker::execOp(BroadcastRowsOp bc) {
  FailureOr<Tile> in = getTile(bc, bc.getInput());
  if (failed(in))
    return failure();
  auto type = bc.getResult().getType();
  int64_t rows = type.getShape()[0], cols = type.getShape()[1];
  Tile out = Tile::floats(in->kind, {rows, cols});
  for (int64_t r = 0; r < rows; ++r)
    std::fill_n(out.f->data() + r * cols, cols, (*in->f)[r]);
  set(bc.getResult(), out);
  return success();
}

LogicalResult Worker::execOp(ConvertLayoutOp cvt) {
  FailureOr<Tile> in = getTile(cvt, cvt.getInput());
  if (failed(in))
    return failure();
  if (!cvt.getTranspose() || in->numElements() <= 1 ||
      (in->isFloat() ? in->f->size() : in->i->size()) == 1) {
    Tile out = *in;
    if (cvt.getTranspose() && out.shape.size() == 2)
      std::swap(out.shape[0], out.shape[1]);
    set(cvt.getResult(), out);
    return success();
  }
  // The transpose of a 2-D tile (the verifier checks the shapes).
  const int64_t rows = in->shape[0], cols = in->shape[1];
  Tile out = in->isFloat() ? Tile::floats(in->kind, {cols, rows})
                           : Tile::ints(in->width, {cols, rows});
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      if (in->isFloat())
        (*out.f)[c * rows + r] = (*in->f)[r * cols + c];
      else
        (*out.i)[c * rows + r] = (*in->i)[r * cols + c];
    }
  set(cvt.getResult(), out);
  return success();
}

// The inputs and the coordinates are tiles too.
template <typename OpT>
LogicalResult Worker::runTileBody(OpT op, SmallVectorImpl<RtValue> &results) {
  SmallVector<RtValue> args;
  for (Value v : op.getInputs()) {
    FailureOr<Tile> t = getTile(op, v);
    if (failed(t))
      return failure();
    args.push_back(*t);
  }
  FailureOr<int64_t> b = getIndex(op, op.getB());
  FailureOr<int64_t> h = getIndex(op, op.getH());
  FailureOr<int64_t> q0 = getIndex(op, op.getQBase());
  FailureOr<int64_t> k0 = getIndex(op, op.getKvBase());
  if (failed(b) || failed(h) || failed(q0) || failed(k0))
    return failure();
  auto type = cast<RankedTensorType>(op.getInputs()[0].getType());
  int64_t rows = type.getShape()[0], cols = type.getShape()[1];
  Tile qi = Tile::ints(64, {rows, cols}), ki = Tile::ints(64, {rows, cols});
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      (*qi.i)[r * cols + c] = *q0 + r;
      (*ki.i)[r * cols + c] = *k0 + c;
    }
  args.append({Tile::scalarI(64, *b), Tile::scalarI(64, *h), qi, ki});
  return runRegion(op.getBody(), args, &results);
}

LogicalResult Worker::execOp(ElementwiseOp ew) {
  SmallVector<RtValue> results;
  if (failed(runTileBody(ew, results)))
    return failure();
  for (auto [result, yielded] : llvm::zip(ew.getResults(), results)) {
    auto type = cast<RankedTensorType>(result.getType());
    int64_t rows = type.getShape()[0], cols = type.getShape()[1];
    const Tile &y = std::get<Tile>(yielded);
    Tile out = Tile::floats(getElemKind(type.getElementType()), {rows, cols});
    if (!out.isFloat())
      out = Tile::ints(getIntWidth(type.getElementType()), {rows, cols});
    for (int64_t e = 0, n = rows * cols; e < n; ++e) {
      if (out.isFloat())
        (*out.f)[e] = roundTo(out.kind, y.getF(e));
      else
        (*out.i)[e] = y.getI(e);
    }
    set(result, out);
  }
  return success();
}

LogicalResult Worker::execOp(ScatterAddOp op) {
  SmallVector<RtValue> results;
  FailureOr<View> dst = getView(op, op.getDst());
  if (failed(dst) || failed(runTileBody(op, results)))
    return failure();
  const Tile &value = std::get<Tile>(results.back());
  auto shape = cast<RankedTensorType>(op.getInputs()[0].getType()).getShape();
  Buffer &buf = *dst->buffer;
  for (int64_t e = 0, n = shape[0] * shape[1]; e < n; ++e) {
    float v = value.getF(e);
    // An exact zero adds nothing and accesses nothing.
    if (v == 0.0f)
      continue;
    int64_t addr = dst->offset;
    for (int64_t d = 0; d < dst->rank(); ++d) {
      int64_t pos = std::get<Tile>(results[d]).getI(e);
      if (pos < 0 || pos >= dst->sizes[d])
        return op.emitError()
               << "adds " << v << " at index " << pos << " of dimension " << d
               << " of a buffer of " << dst->sizes[d]
               << " elements there (element (" << e / shape[1] << ", "
               << e % shape[1] << ") of the tile)";
      addr += pos * dst->strides[d];
    }
    if (failed(checkBlockRace(op, buf, addr, Access::Add)))
      return failure();
    // One f32 addition, as red.global.add.f32 rounds it.
    buf.f[addr] += v;
    if (buf.trackWrites)
      buf.written[addr] = true;
  }
  return success();
}

LogicalResult Worker::execOp(BarrierInitOp init) {
  auto bars = std::make_shared<MBarrierArray>(init.getLoc());
  bars->arrivals = init.getArrivals();
  bars->barriers.resize(init.getBarriers().getType().getSize());
  for (auto &bar : bars->barriers)
    bar.pendingArrivals = bars->arrivals;
  set(init.getBarriers(), bars);
  return success();
}

LogicalResult Worker::execOp(BarrierArriveOp arrive) {
  int64_t arrivals;
  FailureOr<MBarrierArray::Barrier *> bar =
      getBarrier(arrive, arrive.getBarriers(), arrive.getIndex(), &arrivals);
  if (failed(bar))
    return failure();
  (*bar)->pendingArrivals--;
  if (std::optional<int64_t> tx = arrive.getExpectTx())
    (*bar)->pendingTx += *tx;
  if ((*bar)->pendingArrivals < 0)
    return arrive.emitError() << "arrives at a barrier whose phase already "
                                 "has all its arrivals";
  // An arrival releases the worker's accesses to those that wait on the
  // phase.
  this->arrive(&(*bar)->arrivedClock);
  completePhaseIfDone(**bar, arrivals);
  return success();
}

LogicalResult Worker::execOp(BarrierWaitOp wait) {
  FailureOr<MBarrierArray::Barrier *> barOr =
      getBarrier(wait, wait.getBarriers(), wait.getIndex());
  FailureOr<int64_t> parity = getIndex(wait, wait.getPhase());
  if (failed(barOr) || failed(parity))
    return failure();
  MBarrierArray::Barrier *bar = *barOr;
  int64_t p = *parity & 1;
  if (failed(blockUntil(wait,
                        [bar, p] { return (bar->completedPhases & 1) != p; })))
    return failure();
  // The waited-for phase is complete: its copies (and any earlier phase's)
  // are visible from here on.
  for (int64_t c : bar->landed)
    machine.completeCopy(c);
  bar->landed.clear();
  // The waiter sees what the phase's arrivals did; the threads of a worker
  // that all waited also see one another's accesses before the wait.
  acquire(bar->completedClock);
  arrive();
  return success();
}

LogicalResult Worker::execOp(BarrierWarpOp) {
  // Whole tiles do not tell warps apart: the worker's writes become visible.
  arrive();
  return success();
}

LogicalResult Worker::execOp(BarrierSyncOp sync) {
  // The worker's accesses before it arrives happen before what every worker
  // that passes the barrier does after it.
  if (!section) {
    arrive();
    return success();
  }
  Section &s = *section;
  int64_t gen = s.syncGeneration;
  VectorClock &join = s.syncClocks[gen];
  arrive(&join);
  // The section's workers are all the threads of the worker that started
  // it, so the barrier publishes that worker's accesses too.
  if (join.size() <= static_cast<size_t>(s.parentAgent))
    join.resize(s.parentAgent + 1, 0);
  join[s.parentAgent] = std::max(
      join[s.parentAgent], clockAt(agentClock->clock, s.parentAgent) + 1);
  int64_t participants = s.states.size();
  if (++s.syncArrived == participants) {
    s.syncArrived = 0;
    s.syncGeneration++;
  } else if (failed(blockUntil(
                 sync, [&s, gen] { return s.syncGeneration != gen; }))) {
    return failure();
  }
  acquire(join);
  return success();
}

LogicalResult Worker::execOp(BarrierNamedOp named) {
  FailureOr<int64_t> id = getIndex(named, named.getId());
  if (failed(id))
    return failure();
  int64_t needed = named.getThreads();
  if (!section) {
    arrive();
    if (threads >= needed)
      return success();
    return named.emitError()
           << "waits for " << named.getThreads()
           << " threads at a named barrier, but only this worker of " << threads
           << " threads runs";
  }
  auto &[count, gen] = section->named[*id];
  int64_t myGen = gen;
  VectorClock &join = section->namedClocks[{*id, myGen}];
  arrive(&join);
  count += threads;
  bool completes = count >= needed;
  if (completes) {
    count = 0;
    gen++;
  }
  // bar.arrive publishes and goes on; bar.sync also waits, and learns.
  if (named.getArrive())
    return success();
  auto *genPtr = &gen;
  if (!completes &&
      failed(blockUntil(named, [genPtr, myGen] { return *genPtr != myGen; })))
    return failure();
  acquire(join);
  return success();
}
