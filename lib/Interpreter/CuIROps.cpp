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
  for (int64_t c : bar.copies)
    machine.completeCopy(c);
  bar.copies.clear();
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
  int n = s.states.size();
  int next = -1;
  for (int k = 1; k <= n; ++k) {
    int j = (index + k) % n;
    if (s.states[j] == Section::State::Runnable ||
        (s.states[j] == Section::State::Blocked && s.ready[j]())) {
      next = j;
      break;
    }
  }
  if (next < 0) {
    s.aborted = true;
    s.cv.notify_all();
    InFlightDiagnostic diag =
        op->emitError() << "deadlock: this barrier wait can never complete; "
                           "every worker of the block is waiting";
    for (int j = 0; j < n; ++j)
      if (j != index && s.states[j] == Section::State::Blocked)
        diag.attachNote(s.blockedAt[j]->getLoc()) << "worker " << j
                                                  << " waits here";
    return diag;
  }
  s.states[next] = Section::State::Runnable;
  s.current = next;
  s.cv.notify_all();
  s.cv.wait(lock, [&] { return s.current == index || s.aborted; });
  if (s.aborted)
    return failure();
  s.states[index] = Section::State::Runnable;
  return success();
}

LogicalResult Worker::execSection(ArrayRef<BindOp> binds) {
  // Workers of a section: every listed worker of every bind, in order.
  struct Member {
    BindOp bind;
    int64_t workerId;
  };
  SmallVector<Member> members;
  for (BindOp bind : binds)
    for (int64_t i = 0, e = bind.getWorkers().size(); i < e; ++i)
      members.push_back({bind, i});
  if (section) {
    // Inside a worker: the nested bind is this worker's own work, run for
    // each listed sub-worker in turn.
    for (Member &m : members) {
      Worker sub(machine, section, index, machine.threadsOf(m.bind.getKind()),
                 m.workerId, &env);
      sub.groups = std::move(groups);
      sub.gemms = std::move(gemms);
      LogicalResult r = sub.runRegion(m.bind.getBody(), {}, nullptr);
      groups = std::move(sub.groups);
      gemms = std::move(sub.gemms);
      if (failed(r))
        return failure();
    }
    return success();
  }

  Section s;
  int n = members.size();
  s.states.assign(n, Section::State::Runnable);
  s.ready.resize(n);
  s.blockedAt.assign(n, nullptr);
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < n; ++i) {
    int64_t threads = machine.threadsOf(members[i].bind.getKind());
    s.threads.push_back(threads);
    s.totalThreads += threads;
    workers.push_back(std::make_unique<Worker>(machine, &s, i, threads,
                                               members[i].workerId, &env));
  }
  std::vector<LogicalResult> results(n, success());
  auto body = [&](int i) {
    {
      std::unique_lock<std::mutex> lock(s.mutex);
      s.cv.wait(lock, [&] { return s.current == i || s.aborted; });
      if (s.aborted) {
        results[i] = failure();
        return;
      }
    }
    Worker &w = *workers[i];
    results[i] = w.runRegion(members[i].bind.getBody(), {}, nullptr);
    if (succeeded(results[i]) && (!w.groups.empty() || !w.gemms.empty())) {
      members[i].bind.emitError()
          << "worker " << i << " ends with asynchronous work in flight that "
          << "it never waited for";
      results[i] = failure();
    }
    std::unique_lock<std::mutex> lock(s.mutex);
    s.states[i] = Section::State::Done;
    if (failed(results[i]))
      s.aborted = true;
    int next = -1;
    for (int k = 1; k <= n && !s.aborted; ++k) {
      int j = (i + k) % n;
      if (s.states[j] == Section::State::Runnable ||
          (s.states[j] == Section::State::Blocked && s.ready[j]())) {
        next = j;
        break;
      }
    }
    if (next >= 0) {
      s.states[next] = Section::State::Runnable;
      s.current = next;
    } else if (!s.aborted) {
      bool allDone = llvm::all_of(
          s.states, [](Section::State st) { return st == Section::State::Done; });
      if (!allDone) {
        s.aborted = true;
        InFlightDiagnostic diag =
            members[i].bind.emitError()
            << "deadlock: the other workers wait for barriers that can no "
               "longer complete";
        for (int j = 0; j < n; ++j)
          if (s.states[j] == Section::State::Blocked)
            diag.attachNote(s.blockedAt[j]->getLoc())
                << "worker " << j << " waits here";
        results[i] = failure();
      }
    }
    s.cv.notify_all();
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back(body, i);
  for (std::thread &t : threads)
    t.join();
  for (LogicalResult r : results)
    if (failed(r))
      return failure();
  return success();
}

static FailureOr<Matrix> gemmOperand(Worker &w, Operation *op, Value v,
                                     bool transpose,
                                     llvm::function_ref<FailureOr<Tile>(Value)> tile,
                                     llvm::function_ref<FailureOr<Tile>(
                                         const View &, ArrayRef<int64_t>, bool)>
                                         readShared,
                                     llvm::function_ref<FailureOr<View>(Value)> view) {
  Matrix m;
  FailureOr<Tile> t = failure();
  if (isa<MemRefType>(v.getType())) {
    FailureOr<View> vw = view(v);
    if (failed(vw))
      return failure();
    SmallVector<int64_t, 2> shape(vw->sizes.begin(), vw->sizes.end());
    if (transpose)
      std::swap(shape[0], shape[1]);
    t = readShared(*vw, shape, transpose);
  } else {
    t = tile(v);
  }
  if (failed(t))
    return failure();
  m.rows = t->shape[0];
  m.cols = t->shape[1];
  m.data.assign(t->f->begin(), t->f->end());
  return m;
}

LogicalResult Worker::execCuIR(Operation *op) {
  auto idxList = [&](ValueRange values,
                     SmallVectorImpl<int64_t> &out) -> LogicalResult {
    for (Value v : values) {
      FailureOr<int64_t> i = getIndex(op, v);
      if (failed(i))
        return failure();
      out.push_back(*i);
    }
    return success();
  };
  auto tileOf = [&](Value v) { return getTile(op, v); };
  auto viewOf = [&](Value v) { return getView(op, v); };
  auto readShared = [&](const View &vw, ArrayRef<int64_t> shape,
                        bool transpose) {
    return readTile(op, vw, {}, shape, vw.buffer->kind, vw.buffer->width,
                    transpose);
  };

  // A tile copied from src[srcIndices] to dst[dstIndices], the tile's shape
  // that of the side indexed with no offsets.
  struct TileCopy {
    View src, dst;
    SmallVector<int64_t> srcIdx, dstIdx, shape;
    Tile tile;
  };
  auto copyTile = [&](Value srcV, ValueRange srcIndices, Value dstV,
                      ValueRange dstIndices) -> FailureOr<TileCopy> {
    FailureOr<View> src = getView(op, srcV);
    FailureOr<View> dst = getView(op, dstV);
    SmallVector<int64_t> srcIdx, dstIdx;
    if (failed(src) || failed(dst) || failed(idxList(srcIndices, srcIdx)) ||
        failed(idxList(dstIndices, dstIdx)))
      return failure();
    ArrayRef<int64_t> tileSizes = srcIdx.empty() ? src->sizes : dst->sizes;
    SmallVector<int64_t> shape(tileSizes.begin(), tileSizes.end());
    FailureOr<Tile> t = readTile(op, *src, srcIdx, shape, src->buffer->kind,
                                 src->buffer->width, false);
    if (failed(t) || failed(writeTile(op, *t, *dst, dstIdx)))
      return failure();
    return TileCopy{*src, *dst, srcIdx, dstIdx, shape, std::move(*t)};
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](BlockIdOp id) {
        set(id.getResult(), Tile::scalarI(64, machine.blockId[static_cast<unsigned>(id.getDim())]));
        return success();
      })
      .Case([&](WorkerIdOp id) {
        set(id.getResult(), Tile::scalarI(64, workerId));
        return success();
      })
      .Case([&](AllocOp alloc) {
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
        View view;
        view.buffer = buf;
        view.sizes.assign(type.getShape().begin(), type.getShape().end());
        int64_t stride = 1;
        view.strides.resize(view.sizes.size());
        for (int64_t d = view.sizes.size() - 1; d >= 0; --d) {
          view.strides[d] = stride;
          stride *= view.sizes[d];
        }
        set(alloc.getBuffer(), view);
        return success();
      })
      .Case([&](CopyOp copy) -> LogicalResult {
        return success(
            succeeded(copyTile(copy.getSrc(), copy.getSrcIndices(),
                               copy.getDst(), copy.getDstIndices())));
      })
      .Case([&](CopyAsyncOp copy) -> LogicalResult {
        // The data moves now; the marks make any early use a hazard.
        FailureOr<TileCopy> c = copyTile(copy.getSrc(), copy.getSrcIndices(),
                                         copy.getDst(), copy.getDstIndices());
        if (failed(c))
          return failure();
        const View &src = c->src, &dst = c->dst;
        const SmallVector<int64_t> &srcIdx = c->srcIdx, &dstIdx = c->dstIdx,
                                   &shape = c->shape;
        const Tile &t = c->tile;
        CopyRecord rec{op, src, dst, srcIdx, dstIdx};
        int64_t id = machine.newCopy(rec);
        auto mark = [&](const View &v, ArrayRef<int64_t> offs, bool write) {
          Buffer &b = *v.buffer;
          auto &marks = write ? b.inflightWrite : b.inflightRead;
          if (marks.empty())
            marks.assign(b.size(), 0);
          SmallVector<int64_t> tileShape(shape);
          int64_t rank = tileShape.size();
          SmallVector<int64_t, 4> idx(rank, 0);
          for (int64_t e = 0, n = t.numElements(); e < n; ++e) {
            int64_t addr = v.offset;
            bool in = true;
            for (int64_t d = 0; d < rank; ++d) {
              int64_t pos = idx[d] + (offs.empty() ? 0 : offs[d]);
              if (pos >= v.sizes[d]) {
                in = false;
                break;
              }
              addr += pos * v.strides[d];
            }
            if (in)
              marks[addr] = id;
            for (int64_t d = rank - 1; d >= 0; --d) {
              if (++idx[d] < tileShape[d])
                break;
              idx[d] = 0;
            }
          }
        };
        mark(dst, dstIdx, /*write=*/true);
        mark(src, srcIdx, /*write=*/false);
        if (copy.getEngine() == CopyEngine::CpAsync) {
          set(copy.getToken(), Token{id});
          return success();
        }
        // TMA: the bytes land on the barrier's current phase.
        int64_t arrivals;
        FailureOr<MBarrierArray::Barrier *> bar = getBarrier(
            op, copy.getBarrier(), copy.getBarrierIndex(), &arrivals);
        if (failed(bar))
          return failure();
        (*bar)->pendingTx -=
            t.numElements() * (src.buffer->kind == ElemKind::F32 ? 4 : 2);
        (*bar)->copies.push_back(id);
        completePhaseIfDone(**bar, arrivals);
        return success();
      })
      .Case([&](CommitOp commit) -> LogicalResult {
        std::vector<int64_t> ids;
        for (Value v : commit.getTokens()) {
          const RtValue *tv = get(op, v);
          if (!tv)
            return failure();
          ids.push_back(std::get<Token>(*tv).copy);
        }
        machine.groupOps.push_back(op);
        int64_t gid = machine.groupOps.size();
        groups.emplace_back(gid, std::move(ids));
        set(commit.getGroup(), Group{gid});
        return success();
      })
      .Case([&](WaitGroupOp wait) -> LogicalResult {
        const RtValue *gv = get(op, wait.getGroup());
        if (!gv)
          return failure();
        int64_t gid = std::get<Group>(*gv).id;
        int64_t keep = wait.getPending();
        while (static_cast<int64_t>(groups.size()) > keep) {
          for (int64_t c : groups.front().second)
            machine.completeCopy(c);
          groups.erase(groups.begin());
        }
        for (auto &[g, ids] : groups) {
          (void)ids;
          if (g == gid) {
            InFlightDiagnostic diag =
                op->emitError()
                << "leaves the group it waits for in flight: 'pending "
                << keep << "' keeps the " << keep
                << " most recent group(s) pending, and this group is one "
                   "of them";
            diag.attachNote(machine.groupOps[gid - 1]->getLoc())
                << "the group is committed here";
            return diag;
          }
        }
        return success();
      })
      .Case([&](LoadOp load) -> LogicalResult {
        FailureOr<View> src = getView(op, load.getSrc());
        if (failed(src))
          return failure();
        auto type = load.getResult().getType();
        FailureOr<Tile> t = readTile(op, *src, {}, type.getShape(),
                                     getElemKind(type.getElementType()),
                                     getIntWidth(type.getElementType()),
                                     load.getTranspose());
        if (failed(t))
          return failure();
        set(load.getResult(), *t);
        return success();
      })
      .Case([&](StoreOp store) -> LogicalResult {
        FailureOr<Tile> t = getTile(op, store.getValue());
        FailureOr<View> dst = getView(op, store.getDst());
        SmallVector<int64_t> idx;
        if (failed(t) || failed(dst) || failed(idxList(store.getIndices(), idx)))
          return failure();
        return writeTile(op, *t, *dst, idx);
      })
      .Case<GemmOp, GemmAsyncOp>([&](auto gemm) -> LogicalResult {
        bool async = isa<GemmAsyncOp>(op);
        FailureOr<Matrix> a = gemmOperand(*this, op, gemm.getA(), false, tileOf,
                                          readShared, viewOf);
        FailureOr<Matrix> b = gemmOperand(*this, op, gemm.getB(),
                                          gemm.getTransposeB(), tileOf,
                                          readShared, viewOf);
        FailureOr<Tile> acc = getTile(op, gemm.getAcc(), /*allowPending=*/async);
        if (failed(a) || failed(b) || failed(acc))
          return failure();
        Tile out = Tile::floats(acc->kind, acc->shape);
        std::copy(acc->f->begin(), acc->f->end(), out.f->begin());
        gemmAccumulate(*a, *b, out.f->data());
        ++machine.gemmsRun;
        if (out.kind != ElemKind::F32)
          for (float &x : *out.f)
            x = roundTo(out.kind, x);
        if (async) {
          machine.gemmOps.push_back(op);
          out.asyncGemm = machine.gemmOps.size();
          gemms.push_back(out.asyncGemm);
        }
        set(gemm.getResult(), out);
        return success();
      })
      .Case([&](GemmWaitOp wait) -> LogicalResult {
        FailureOr<Tile> acc = getTile(op, wait.getAcc(), /*allowPending=*/true);
        if (failed(acc))
          return failure();
        int64_t keep = wait.getPending().value_or(0);
        if (Value count = wait.getPendingCount()) {
          FailureOr<int64_t> n = getIndex(op, count);
          if (failed(n))
            return failure();
          if (*n < 0)
            return op->emitError() << "pending count " << *n << " is negative";
          keep = *n;
        }
        while (static_cast<int64_t>(gemms.size()) > keep)
          gemms.erase(gemms.begin());
        if (acc->asyncGemm && llvm::is_contained(gemms, acc->asyncGemm)) {
          InFlightDiagnostic diag =
              op->emitError()
              << "leaves the GEMM it waits for in flight: 'pending " << keep
              << "' keeps the " << keep
              << " most recent GEMM(s) pending, and this one is among them";
          diag.attachNote(machine.gemmOps[acc->asyncGemm - 1]->getLoc())
              << "the asynchronous GEMM is issued here";
          return diag;
        }
        Tile out = *acc;
        out.asyncGemm = 0;
        set(wait.getResult(), out);
        return success();
      })
      .Case([&](ReduceRowsOp red) -> LogicalResult {
        FailureOr<Tile> in = getTile(op, red.getInput());
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
      })
      .Case([&](BroadcastRowsOp bc) -> LogicalResult {
        FailureOr<Tile> in = getTile(op, bc.getInput());
        if (failed(in))
          return failure();
        auto type = bc.getResult().getType();
        int64_t rows = type.getShape()[0], cols = type.getShape()[1];
        Tile out = Tile::floats(in->kind, {rows, cols});
        for (int64_t r = 0; r < rows; ++r)
          std::fill_n(out.f->data() + r * cols, cols, (*in->f)[r]);
        set(bc.getResult(), out);
        return success();
      })
      .Case([&](ConvertLayoutOp cvt) -> LogicalResult {
        FailureOr<Tile> in = getTile(op, cvt.getInput());
        if (failed(in))
          return failure();
        set(cvt.getResult(), *in);
        return success();
      })
      .Case([&](ElementwiseOp ew) -> LogicalResult {
        // The body runs once over whole tiles: coordinates are tiles too.
        SmallVector<RtValue> args;
        for (Value v : ew.getInputs()) {
          FailureOr<Tile> t = getTile(op, v);
          if (failed(t))
            return failure();
          args.push_back(*t);
        }
        FailureOr<int64_t> b = getIndex(op, ew.getB());
        FailureOr<int64_t> h = getIndex(op, ew.getH());
        FailureOr<int64_t> q0 = getIndex(op, ew.getQBase());
        FailureOr<int64_t> k0 = getIndex(op, ew.getKvBase());
        if (failed(b) || failed(h) || failed(q0) || failed(k0))
          return failure();
        auto type = ew.getResult().getType();
        int64_t rows = type.getShape()[0], cols = type.getShape()[1];
        Tile qi = Tile::ints(64, {rows, cols}), ki = Tile::ints(64, {rows, cols});
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c) {
            (*qi.i)[r * cols + c] = *q0 + r;
            (*ki.i)[r * cols + c] = *k0 + c;
          }
        args.push_back(Tile::scalarI(64, *b));
        args.push_back(Tile::scalarI(64, *h));
        args.push_back(qi);
        args.push_back(ki);
        SmallVector<RtValue> results;
        if (failed(runRegion(ew.getBody(), args, &results)))
          return failure();
        const Tile &y = std::get<Tile>(results[0]);
        Tile out = Tile::floats(getElemKind(type.getElementType()),
                                {rows, cols});
        if (!out.isFloat())
          out = Tile::ints(getIntWidth(type.getElementType()), {rows, cols});
        for (int64_t e = 0, n = rows * cols; e < n; ++e) {
          if (out.isFloat())
            (*out.f)[e] = roundTo(out.kind, y.getF(e));
          else
            (*out.i)[e] = y.getI(e);
        }
        set(ew.getResult(), out);
        return success();
      })
      .Case([&](BarrierInitOp init) {
        auto bars = std::make_shared<MBarrierArray>(op->getLoc());
        bars->arrivals = init.getArrivals();
        bars->barriers.resize(init.getBarriers().getType().getSize());
        for (auto &bar : bars->barriers)
          bar.pendingArrivals = bars->arrivals;
        set(init.getBarriers(), bars);
        return success();
      })
      .Case([&](BarrierArriveOp arrive) -> LogicalResult {
        int64_t arrivals;
        FailureOr<MBarrierArray::Barrier *> bar =
            getBarrier(op, arrive.getBarriers(), arrive.getIndex(), &arrivals);
        if (failed(bar))
          return failure();
        (*bar)->pendingArrivals--;
        if (std::optional<int64_t> tx = arrive.getExpectTx())
          (*bar)->pendingTx += *tx;
        if ((*bar)->pendingArrivals < 0)
          return op->emitError() << "arrives at a barrier whose phase already "
                                    "has all its arrivals";
        completePhaseIfDone(**bar, arrivals);
        return success();
      })
      .Case([&](BarrierWaitOp wait) -> LogicalResult {
        FailureOr<MBarrierArray::Barrier *> barOr =
            getBarrier(op, wait.getBarriers(), wait.getIndex());
        FailureOr<int64_t> parity = getIndex(op, wait.getPhase());
        if (failed(barOr) || failed(parity))
          return failure();
        MBarrierArray::Barrier *bar = *barOr;
        int64_t p = *parity & 1;
        return blockUntil(op, [bar, p] {
          return (bar->completedPhases & 1) != p;
        });
      })
      .Case([&](BarrierSyncOp) -> LogicalResult {
        if (!section)
          return success();
        Section &s = *section;
        int64_t gen = s.syncGeneration;
        int64_t participants = s.states.size();
        if (++s.syncArrived == participants) {
          s.syncArrived = 0;
          s.syncGeneration++;
          return success();
        }
        return blockUntil(op, [&s, gen] { return s.syncGeneration != gen; });
      })
      .Case([&](BarrierNamedOp named) -> LogicalResult {
        FailureOr<int64_t> id = getIndex(op, named.getId());
        if (failed(id))
          return failure();
        if (!section) {
          if (threads >= static_cast<int64_t>(named.getThreads()))
            return success();
          return op->emitError()
                 << "waits for " << named.getThreads()
                 << " threads at a named barrier, but only this worker of "
                 << threads << " threads runs";
        }
        auto &[count, gen] = section->named[*id];
        int64_t myGen = gen;
        count += threads;
        if (count >= static_cast<int64_t>(named.getThreads())) {
          count = 0;
          gen++;
          return success();
        }
        if (named.getArrive())
          return success();
        auto *genPtr = &gen;
        return blockUntil(op, [genPtr, myGen] { return *genPtr != myGen; });
      })
      .Default([&](Operation *) {
        return op->emitError() << "the CuIR interpreter does not execute '"
                               << op->getName() << "'";
      });
}
