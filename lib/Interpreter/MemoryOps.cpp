//===- MemoryOps.cpp - memref ops, tile reads and writes, hazards ---------===//

#include "Machine.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::cuir;
using namespace mlir::cuir::interp;

LogicalResult Worker::checkRead(Operation *op, const View &view,
                                ArrayRef<int64_t> offsets,
                                ArrayRef<int64_t> shape) {
  const auto &marks = view.buffer->inflightWrite;
  if (marks.empty())
    return success();
  int64_t culprit = 0;
  forEachTileElement(view, offsets, shape, false, [&](int64_t addr, int64_t) {
    if (addr >= 0 && !culprit && marks[addr])
      culprit = marks[addr];
  });
  if (!culprit)
    return success();
  InFlightDiagnostic diag =
      op->emitError() << "reads memory that an asynchronous copy is still "
                         "writing; wait for its group or barrier phase first";
  diag.attachNote(machine.copies[culprit - 1].op->getLoc())
      << "the copy in flight is issued here";
  return diag;
}

LogicalResult Worker::checkUnsyncedRead(Operation *op, const Buffer &buf,
                                        int64_t addr) {
  if (buf.unsyncedWrite.empty() || !buf.unsyncedWrite[addr])
    return success();
  const SyncAccess &w = machine.syncWrites[buf.unsyncedWrite[addr] - 1];
  if (ordered(w))
    return success();
  InFlightDiagnostic diag =
      op->emitError() << "reads shared memory that threads of the block wrote "
                         "with no barrier since: other threads' writes may not "
                         "be visible yet (add cuir.barrier.sync, or a named "
                         "barrier among the threads)";
  diag.attachNote(w.op->getLoc()) << "the write is here";
  return diag;
}

void Worker::markUnsynced(Operation *op, const View &view,
                          ArrayRef<int64_t> offsets, ArrayRef<int64_t> shape) {
  Buffer &buf = *view.buffer;
  if (!buf.shared)
    return;
  if (buf.unsyncedWrite.empty())
    buf.unsyncedWrite.assign(buf.size(), 0);
  machine.syncWrites.push_back(accessBy(op));
  int64_t id = machine.syncWrites.size();
  forEachTileElement(view, offsets, shape, false, [&](int64_t addr, int64_t) {
    if (addr >= 0)
      buf.unsyncedWrite[addr] = id;
  });
}

LogicalResult Worker::checkOverwrite(Operation *op, const View &view,
                                     ArrayRef<int64_t> offsets,
                                     ArrayRef<int64_t> shape) {
  Buffer &buf = *view.buffer;
  if (!buf.shared)
    return success();
  const SyncAccess *read = nullptr, *write = nullptr;
  // Elements of a tile mostly share their records: each is checked once.
  // Once checked, an element's reads happen before this write, and so before
  // any write after it: they are forgotten (a hazard stops the run anyway).
  int64_t checkedRead = 0, checkedWrite = 0;
  forEachTileElement(view, offsets, shape, false, [&](int64_t addr, int64_t) {
    if (addr < 0 || read || write)
      return;
    if (!buf.readSet.empty() && buf.readSet[addr]) {
      if (buf.readSet[addr] != checkedRead) {
        checkedRead = buf.readSet[addr];
        read = firstUnordered(machine.readSets[checkedRead - 1]);
      }
      buf.readSet[addr] = 0;
    }
    // A worker's own writes of an element are the same threads' in practice
    // (staging loops); another worker's need a barrier in between.
    if (!buf.unsyncedWrite.empty() && buf.unsyncedWrite[addr]) {
      if (buf.unsyncedWrite[addr] != checkedWrite) {
        checkedWrite = buf.unsyncedWrite[addr];
        const SyncAccess &w = machine.syncWrites[checkedWrite - 1];
        if (w.agent != agentClock->agent && !ordered(w))
          write = &w;
      }
      buf.unsyncedWrite[addr] = 0;
    }
  });
  if (read) {
    InFlightDiagnostic diag =
        op->emitError() << "overwrites shared memory that threads of the block "
                           "read with no barrier since: they may not have read "
                           "it yet (add cuir.barrier.sync, or a barrier that "
                           "the readers arrive at after reading)";
    diag.attachNote(read->op->getLoc()) << "the read is here";
    return diag;
  }
  if (write) {
    InFlightDiagnostic diag =
        op->emitError() << "writes shared memory that another worker wrote "
                           "with no barrier since: the two writes are "
                           "unordered";
    diag.attachNote(write->op->getLoc()) << "the other write is here";
    return diag;
  }
  return success();
}

void Worker::markRead(Operation *op, const View &view) {
  if (!view.buffer->shared)
    return;
  ReadMarker marker(*this, op, *view.buffer);
  forEachTileElement(view, {}, view.sizes, /*transpose=*/false,
                     [&](int64_t addr, int64_t) {
                       if (addr >= 0)
                         marker.mark(addr);
                     });
}

Worker::ReadMarker::ReadMarker(Worker &worker, Operation *op, Buffer &buf)
    : worker(worker), buf(buf), self(worker.accessBy(op)) {
  if (buf.readSet.empty())
    buf.readSet.assign(buf.size(), 0);
}

void Worker::ReadMarker::mark(int64_t addr) {
  int64_t before = buf.readSet[addr];
  if (before == lastBefore && lastAfter) {
    buf.readSet[addr] = lastAfter;
    return;
  }
  auto [it, inserted] = after.try_emplace(before, 0);
  if (inserted) {
    // The reads this one does not follow, and this one.
    ReadSet set;
    if (before)
      for (const SyncAccess &a : worker.machine.readSets[before - 1])
        if (a.agent != self.agent && !worker.ordered(a))
          set.push_back(a);
    set.push_back(self);
    worker.machine.readSets.push_back(std::move(set));
    it->second = worker.machine.readSets.size();
  }
  lastBefore = before;
  lastAfter = it->second;
  buf.readSet[addr] = lastAfter;
}

LogicalResult Worker::checkWrite(Operation *op, const View &view,
                                 ArrayRef<int64_t> offsets,
                                 ArrayRef<int64_t> shape) {
  const auto &reads = view.buffer->inflightRead;
  const auto &writes = view.buffer->inflightWrite;
  if (reads.empty() && writes.empty())
    return success();
  int64_t reader = 0, writer = 0;
  forEachTileElement(view, offsets, shape, false, [&](int64_t addr, int64_t) {
    if (addr < 0)
      return;
    if (!reads.empty() && !reader && reads[addr])
      reader = reads[addr];
    if (!writes.empty() && !writer && writes[addr])
      writer = writes[addr];
  });
  if (!reader && !writer)
    return success();
  InFlightDiagnostic diag =
      reader ? op->emitError() << "overwrites memory that an asynchronous "
                                  "copy is still reading"
             : op->emitError() << "writes memory that an asynchronous copy is "
                                  "still writing";
  diag.attachNote(machine.copies[(reader ? reader : writer) - 1].op->getLoc())
      << "the copy in flight is issued here";
  return diag;
}

/// "(x, y, z)" of the block whose ordinal (linear id + 1) is `ordinal`.
static std::string blockName(ArrayRef<int64_t> grid, int64_t ordinal) {
  int64_t linear = ordinal - 1;
  return "(" + std::to_string(linear % grid[0]) + ", " +
         std::to_string(linear / grid[0] % grid[1]) + ", " +
         std::to_string(linear / (grid[0] * grid[1])) + ")";
}

LogicalResult Worker::checkBlockRace(Operation *op, Buffer &buf, int64_t addr,
                                     Access access) {
  if (buf.blockAccess.empty())
    return success();
  Buffer::BlockAccess &a = buf.blockAccess[addr];
  int64_t self = machine.blockOrdinal;
  bool otherWriter = a.writer != 0 && a.writer != self;
  bool otherAdder = a.adder != 0 && a.adder != self;
  // Atomic adds of several blocks commute; anything else another block did
  // to the element is unordered with this access.
  if (otherWriter || (access != Access::Add && otherAdder)) {
    int64_t other = otherWriter ? a.writer : a.adder;
    StringRef verb = access == Access::Read    ? "reads"
                     : access == Access::Write ? "writes"
                                               : "adds to";
    std::string who = other > 0
                          ? "thread block " + blockName(machine.grid, other)
                          : std::string("several thread blocks");
    InFlightDiagnostic diag =
        op->emitError()
        << verb << " global memory that " << who
        << (otherWriter ? " wrote" : " added to")
        << " in the same launch: the blocks of a launch run in no fixed "
           "order, so this is a race (accumulate across blocks with "
           "cuir.atomic_add, or in a later kernel)";
    diag.attachNote(a.op->getLoc()) << "the other block's access is here";
    return diag;
  }
  if (access == Access::Read)
    return success();
  if (!a.op)
    a.op = op;
  if (access == Access::Write)
    a.writer = self;
  else
    a.adder = a.adder == 0 || a.adder == self ? self : -1;
  return success();
}

LogicalResult Worker::checkBlockRace(Operation *op, const View &view,
                                     ArrayRef<int64_t> offsets,
                                     ArrayRef<int64_t> shape, Access access) {
  if (view.buffer->blockAccess.empty())
    return success();
  LogicalResult result = success();
  forEachTileElement(view, offsets, shape, false, [&](int64_t addr, int64_t) {
    if (addr >= 0 && succeeded(result))
      result = checkBlockRace(op, *view.buffer, addr, access);
  });
  return result;
}

FailureOr<Tile> Worker::readTile(Operation *op, const View &view,
                                 ArrayRef<int64_t> offsets,
                                 ArrayRef<int64_t> shape, ElemKind kind,
                                 unsigned width, bool transpose,
                                 bool recordRead) {
  SmallVector<int64_t, 2> viewShape(shape);
  if (transpose)
    std::swap(viewShape[0], viewShape[1]);
  if (failed(checkRead(op, view, offsets, viewShape)) ||
      failed(checkBlockRace(op, view, offsets, viewShape, Access::Read)))
    return failure();
  Buffer &buf = *view.buffer;
  Tile t = kind == ElemKind::Int ? Tile::ints(width, shape)
                                 : Tile::floats(kind, shape);
  // The first element whose plain write is not yet visible, checked in the
  // copy loop; a tile's elements mostly share one write, checked once. The
  // read is recorded in the same loop (a hazard stops the run anyway).
  int64_t unsyncedAddr = -1, visibleWrite = 0;
  std::optional<ReadMarker> reads;
  if (recordRead && buf.shared)
    reads.emplace(*this, op, buf);
  forEachTileElement(view, offsets, shape, transpose,
                     [&](int64_t addr, int64_t linear) {
                       if (addr >= 0 && reads)
                         reads->mark(addr);
                       if (addr >= 0 && !buf.unsyncedWrite.empty() &&
                           unsyncedAddr < 0) {
                         int64_t w = buf.unsyncedWrite[addr];
                         if (w && w != visibleWrite) {
                           if (ordered(machine.syncWrites[w - 1]))
                             visibleWrite = w;
                           else
                             unsyncedAddr = addr;
                         }
                       }
                       if (t.isFloat())
                         (*t.f)[linear] =
                             addr < 0 ? 0.0f : roundTo(kind, buf.f[addr]);
                       else
                         (*t.i)[linear] = addr < 0 ? 0 : buf.i[addr];
                     });
  if (unsyncedAddr >= 0 && failed(checkUnsyncedRead(op, buf, unsyncedAddr)))
    return failure();
  return t;
}

LogicalResult Worker::writeTile(Operation *op, const Tile &tile,
                                const View &view, ArrayRef<int64_t> offsets,
                                bool synchronous) {
  if (failed(checkWrite(op, view, offsets, tile.shape)) ||
      failed(checkOverwrite(op, view, offsets, tile.shape)) ||
      failed(checkBlockRace(op, view, offsets, tile.shape, Access::Write)))
    return failure();
  if (synchronous)
    markUnsynced(op, view, offsets, tile.shape);
  Buffer &buf = *view.buffer;
  forEachTileElement(view, offsets, tile.shape, false,
                     [&](int64_t addr, int64_t linear) {
                       if (addr < 0)
                         return;
                       if (buf.kind == ElemKind::Int)
                         buf.i[addr] = tile.getI(linear);
                       else
                         buf.f[addr] = roundTo(buf.kind, tile.getF(linear));
                       if (buf.trackWrites)
                         buf.written[addr] = true;
                     });
  return success();
}

LogicalResult Worker::execOp(AtomicAddOp add) {
  FailureOr<Tile> t = getTile(add, add.getValue());
  FailureOr<View> dst = getView(add, add.getDst());
  SmallVector<int64_t> idx;
  if (failed(t) || failed(dst) ||
      failed(getIndices(add, add.getIndices(), idx)) ||
      failed(checkRead(add, *dst, idx, t->shape)) ||
      failed(checkWrite(add, *dst, idx, t->shape)) ||
      failed(checkBlockRace(add, *dst, idx, t->shape, Access::Add)))
    return failure();
  // (The destination is global memory: the verifier refuses shared.)
  Buffer &buf = *dst->buffer;
  forEachTileElement(*dst, idx, t->shape, false,
                     [&](int64_t addr, int64_t linear) {
                       if (addr < 0)
                         return;
                       // One f32 addition, as red.global.add.f32 rounds it.
                       buf.f[addr] += t->getF(linear);
                       if (buf.trackWrites)
                         buf.written[addr] = true;
                     });
  return success();
}

LogicalResult Worker::execMemRef(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<memref::SubViewOp, memref::LoadOp, memref::DimOp>(
          [&](auto memrefOp) { return execOp(memrefOp); })
      .Default([&](Operation *) {
        return op->emitError() << "the CuIR interpreter does not execute '"
                               << op->getName() << "'";
      });
}

LogicalResult Worker::execOp(memref::SubViewOp sub) {
  FailureOr<View> base = getView(sub, sub.getSource());
  if (failed(base))
    return failure();
  auto resolve = [&](OpFoldResult ofr) -> FailureOr<int64_t> {
    if (auto attr = dyn_cast<Attribute>(ofr))
      return cast<IntegerAttr>(attr).getInt();
    return getIndex(sub, cast<Value>(ofr));
  };
  View view;
  view.buffer = base->buffer;
  view.offset = base->offset;
  llvm::SmallBitVector dropped = sub.getDroppedDims();
  auto offsets = sub.getMixedOffsets();
  auto sizes = sub.getMixedSizes();
  auto strides = sub.getMixedStrides();
  for (int64_t d = 0, e = base->rank(); d < e; ++d) {
    FailureOr<int64_t> off = resolve(offsets[d]), size = resolve(sizes[d]),
                       stride = resolve(strides[d]);
    if (failed(off) || failed(size) || failed(stride))
      return failure();
    bool outside =
        *size > 0 ? *off < 0 || *off + (*size - 1) * *stride >= base->sizes[d]
                  : *off < 0 || *off > base->sizes[d];
    if (outside)
      return sub.emitError()
             << "subview dimension " << d << " [" << *off << ", size " << *size
             << ", stride " << *stride << "] exceeds the source's size "
             << base->sizes[d];
    view.offset += *off * base->strides[d];
    if (dropped.test(d))
      continue;
    view.sizes.push_back(*size);
    view.strides.push_back(*stride * base->strides[d]);
  }
  set(sub.getResult(), view);
  return success();
}

/// A load outside its memref: the error names the whole index, the shape
/// and the dimension out of range (element `e` of a gather).
static LogicalResult outOfBounds(memref::LoadOp load, ArrayRef<Tile> idx,
                                 int64_t e, const View &view, int64_t dim) {
  std::string index, shape;
  for (int64_t d = 0; d < view.rank(); ++d) {
    index += (d ? ", " : "") + std::to_string(idx[d].getI(e));
    shape += (d ? ", " : "") + std::to_string(view.sizes[d]);
  }
  return load.emitError() << "loads index [" << index << "] of a memref of "
                          << "shape [" << shape << "]: index "
                          << idx[dim].getI(e) << " of dimension " << dim
                          << " is outside [0, " << view.sizes[dim] << ")";
}

LogicalResult Worker::execOp(memref::LoadOp load) {
  FailureOr<View> view = getView(load, load.getMemRef());
  if (failed(view))
    return failure();
  // Indices may be tiles (inside cuir.elementwise): a gather.
  SmallVector<Tile> idx;
  SmallVector<int64_t, 2> shape;
  for (Value v : load.getIndices()) {
    FailureOr<Tile> t = getTile(load, v);
    if (failed(t))
      return failure();
    if (!t->isScalar())
      shape = t->shape;
    idx.push_back(*t);
  }
  Buffer &buf = *view->buffer;
  Tile out = buf.kind == ElemKind::Int ? Tile::ints(buf.width, shape)
                                       : Tile::floats(buf.kind, shape);
  std::optional<ReadMarker> reads;
  if (buf.shared)
    reads.emplace(*this, load, buf);
  for (int64_t e = 0, n = out.numElements(); e < n; ++e) {
    int64_t addr = view->offset;
    for (int64_t d = 0; d < view->rank(); ++d) {
      int64_t pos = idx[d].getI(e);
      if (pos < 0 || pos >= view->sizes[d])
        return outOfBounds(load, idx, e, *view, d);
      addr += pos * view->strides[d];
    }
    if (!buf.inflightWrite.empty() && buf.inflightWrite[addr]) {
      InFlightDiagnostic diag = load.emitError()
                                << "loads memory that an asynchronous copy "
                                   "is still writing";
      diag.attachNote(machine.copies[buf.inflightWrite[addr] - 1].op->getLoc())
          << "the copy in flight is issued here";
      return diag;
    }
    if (failed(checkBlockRace(load, *view->buffer, addr, Access::Read)) ||
        failed(checkUnsyncedRead(load, buf, addr)))
      return failure();
    if (reads)
      reads->mark(addr);
    if (out.isFloat())
      (*out.f)[e] = buf.f[addr];
    else
      (*out.i)[e] = buf.i[addr];
  }
  set(load.getResult(), out);
  return success();
}

LogicalResult Worker::execOp(memref::DimOp dim) {
  FailureOr<View> view = getView(dim, dim.getSource());
  FailureOr<int64_t> d = getIndex(dim, dim.getIndex());
  if (failed(view) || failed(d))
    return failure();
  if (*d < 0 || *d >= view->rank())
    return dim.emitError() << "dimension " << *d << " out of range";
  set(dim.getResult(), Tile::scalarI(64, view->sizes[*d]));
  return success();
}
