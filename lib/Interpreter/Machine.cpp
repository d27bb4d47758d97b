//===- Machine.cpp - Execution of a CuIR kernel ---------------------------===//

#include "Machine.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <climits>
#include <cmath>
#include <thread>

using namespace mlir;
using namespace mlir::cuir;
using namespace mlir::cuir::interp;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static Location locOf(Operation *op) { return op->getLoc(); }

/// The most iterations a loop may run: what a kernel's int counter holds.
static constexpr int64_t kMaxLoopTrips = INT32_MAX;

//===----------------------------------------------------------------------===//
// Machine
//===----------------------------------------------------------------------===//

int64_t Machine::newCopy(CopyRecord record) {
  copies.push_back(std::move(record));
  return static_cast<int64_t>(copies.size());
}

int64_t Machine::threadsOf(WorkerKind kind) {
  switch (kind) {
  case WorkerKind::Block:
    return kernel.getThreads();
  case WorkerKind::Warpgroup:
    return 128;
  case WorkerKind::Warp:
    return 32;
  }
  llvm_unreachable("unknown worker kind");
}

void Machine::completeCopy(int64_t id) {
  CopyRecord &rec = copies[id - 1];
  if (rec.complete)
    return;
  rec.complete = true;
  ArrayRef<int64_t> shape = rec.tileSizes();
  // The elements markInFlight marked: those inside each view.
  auto unmark = [&](const View &view, ArrayRef<int64_t> offsets,
                    std::vector<int64_t> &marks) {
    forEachTileElement(view, offsets, shape, /*transpose=*/false,
                       [&](int64_t addr, int64_t) {
                         if (addr >= 0 && !marks.empty() && marks[addr] == id)
                           marks[addr] = 0;
                       });
  };
  unmark(rec.dst, rec.dstIndices, rec.dst.buffer->inflightWrite);
  unmark(rec.src, rec.srcIndices, rec.src.buffer->inflightRead);
}

LogicalResult Machine::runBlock(ArrayRef<int64_t> id, ArrayRef<RtValue> args) {
  blockId.assign(id.begin(), id.end());
  // Shared memory and its access records are the block's own.
  syncWrites.clear();
  readSets.clear();
  numAgents = 1;
  blockOrdinal = 1;
  if (grid.size() == 3)
    blockOrdinal += id[0] + grid[0] * (id[1] + grid[1] * id[2]);
  Worker block(*this, /*section=*/nullptr, 0, kernel.getThreads(), 0,
               /*parentEnv=*/nullptr);
  Block &entry = kernel.getBody().front();
  for (auto [arg, value] : llvm::zip(entry.getArguments(), args))
    block.set(arg, value);
  if (failed(block.runBlock(entry, nullptr)))
    return failure();
  // Work still in flight when the block ends was never waited for.
  for (auto &[group, ids] : block.groups) {
    (void)ids;
    Operation *commit = groupOps[group - 1];
    commit->emitError() << "commits a copy group that is never waited for "
                           "before the block ends";
    return failure();
  }
  for (int64_t gemm : block.gemms) {
    gemmOps[gemm - 1]->emitError()
        << "starts an asynchronous GEMM that is never waited for before the "
           "block ends";
    return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Operand access
//===----------------------------------------------------------------------===//

const RtValue *Worker::get(Operation *user, Value v) {
  const RtValue *value = env.lookup(v);
  if (!value || std::holds_alternative<std::monostate>(*value)) {
    user->emitError() << "the interpreter has no value for an operand of "
                         "this op (defined outside the kernel?)";
    return nullptr;
  }
  return value;
}

FailureOr<Tile> Worker::getTile(Operation *user, Value v, bool allowPending) {
  const RtValue *value = get(user, v);
  if (!value)
    return failure();
  const Tile *tile = std::get_if<Tile>(value);
  if (!tile) {
    user->emitError() << "expects a tile or scalar operand";
    return failure();
  }
  if (tile->asyncGemm && !allowPending &&
      llvm::is_contained(gemms, tile->asyncGemm)) {
    InFlightDiagnostic diag =
        user->emitError()
        << "reads the result of an asynchronous GEMM before its "
           "cuir.gemm_wait: the tensor cores may still be writing it";
    diag.attachNote(locOf(machine.gemmOps[tile->asyncGemm - 1]))
        << "the asynchronous GEMM is issued here";
    return failure();
  }
  return *tile;
}

FailureOr<View> Worker::getView(Operation *user, Value v) {
  const RtValue *value = get(user, v);
  if (!value)
    return failure();
  if (const View *view = std::get_if<View>(value))
    return *view;
  user->emitError() << "expects a memref operand";
  return failure();
}

FailureOr<int64_t> Worker::getIndex(Operation *user, Value v) {
  FailureOr<Tile> t = getTile(user, v);
  if (failed(t))
    return failure();
  if (!t->isScalar() || t->isFloat()) {
    user->emitError() << "expects a scalar integer or index operand";
    return failure();
  }
  return t->getI(0);
}

//===----------------------------------------------------------------------===//
// Regions
//===----------------------------------------------------------------------===//

LogicalResult Worker::runRegion(Region &region, ArrayRef<RtValue> args,
                                SmallVectorImpl<RtValue> *results) {
  Block &block = region.front();
  for (auto [arg, value] : llvm::zip(block.getArguments(), args))
    set(arg, value);
  return runBlock(block, results);
}

LogicalResult Worker::runBlock(Block &block, SmallVectorImpl<RtValue> *results) {
  for (auto it = block.begin(), end = block.end(); it != end; ++it) {
    Operation *op = &*it;
    if (machine.hasFailed || (section && section->aborted))
      return failure();
    if (op->hasTrait<OpTrait::IsTerminator>()) {
      if (results) {
        results->clear();
        for (Value v : op->getOperands()) {
          const RtValue *value = get(op, v);
          if (!value)
            return failure();
          results->push_back(*value);
        }
      }
      return success();
    }
    if (auto bind = dyn_cast<BindOp>(op)) {
      // A run of consecutive binds runs as one parallel section.
      SmallVector<BindOp> binds;
      auto next = it;
      while (next != end && isa<BindOp>(&*next)) {
        binds.push_back(cast<BindOp>(&*next));
        ++next;
      }
      if (failed(execSection(binds)))
        return failure();
      it = std::prev(next);
      continue;
    }
    if (failed(exec(op))) {
      machine.hasFailed = true;
      return failure();
    }
  }
  return success();
}

LogicalResult Worker::exec(Operation *op) {
  using Executor = LogicalResult (Worker::*)(Operation *);
  Dialect *dialect = op->getDialect();
  Executor executor =
      llvm::StringSwitch<Executor>(dialect ? dialect->getNamespace() : "")
          .Case("cuir", &Worker::execCuIR)
          .Cases({"arith", "math", "tensor"}, &Worker::execArith)
          .Case("memref", &Worker::execMemRef)
          .Case("scf", &Worker::execSCF)
          .Default(nullptr);
  if (executor)
    return (this->*executor)(op);
  return op->emitError() << "the CuIR interpreter does not execute '"
                         << op->getName() << "'";
}

//===----------------------------------------------------------------------===//
// scf
//===----------------------------------------------------------------------===//

LogicalResult Worker::execSCF(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<scf::ForOp, scf::IfOp, scf::WhileOp>(
          [&](auto scfOp) { return execOp(scfOp); })
      .Default([&](Operation *) {
        return op->emitError() << "the CuIR interpreter does not execute '"
                               << op->getName() << "'";
      });
}

FailureOr<SmallVector<RtValue>> Worker::getValues(Operation *op,
                                                  ValueRange values) {
  SmallVector<RtValue> result;
  for (Value v : values) {
    const RtValue *value = get(op, v);
    if (!value)
      return failure();
    result.push_back(*value);
  }
  return result;
}

LogicalResult Worker::execOp(scf::ForOp forOp) {
  FailureOr<int64_t> lb = getIndex(forOp, forOp.getLowerBound());
  FailureOr<int64_t> ub = getIndex(forOp, forOp.getUpperBound());
  FailureOr<int64_t> step = getIndex(forOp, forOp.getStep());
  if (failed(lb) || failed(ub) || failed(step))
    return failure();
  if (*step <= 0)
    return forOp.emitError() << "loop step must be positive, got " << *step;
  // A kernel counts its loops in int: more iterations are no kernel's (and
  // would keep the interpreter busy for ever).
  uint64_t trips =
      *ub > *lb ? (static_cast<uint64_t>(*ub) - static_cast<uint64_t>(*lb) -
                   1) / static_cast<uint64_t>(*step) +
                      1
                : 0;
  if (trips > static_cast<uint64_t>(kMaxLoopTrips))
    return forOp.emitError()
           << "runs " << trips << " iterations (from " << *lb << " to " << *ub
           << " by " << *step << "), more than the " << kMaxLoopTrips
           << " a kernel's int loop counter holds";
  FailureOr<SmallVector<RtValue>> carried =
      getValues(forOp, forOp.getInitArgs());
  if (failed(carried))
    return failure();
  Type ivType = forOp.getInductionVar().getType();
  for (uint64_t k = 0; k < trips; ++k) {
    // In range: lb <= iv < ub (unsigned arithmetic, which cannot overflow).
    auto iv = static_cast<int64_t>(static_cast<uint64_t>(*lb) +
                                   k * static_cast<uint64_t>(*step));
    SmallVector<RtValue> args;
    args.push_back(Tile::scalarI(getIntWidth(ivType), iv));
    args.append(carried->begin(), carried->end());
    SmallVector<RtValue> next;
    if (failed(runRegion(forOp.getRegion(), args, &next)))
      return failure();
    *carried = std::move(next);
  }
  for (auto [res, v] : llvm::zip(forOp.getResults(), *carried))
    set(res, v);
  return success();
}

LogicalResult Worker::execOp(scf::IfOp ifOp) {
  FailureOr<int64_t> cond = getIndex(ifOp, ifOp.getCondition());
  if (failed(cond))
    return failure();
  Region &region = *cond ? ifOp.getThenRegion() : ifOp.getElseRegion();
  SmallVector<RtValue> results;
  if (!region.empty() && failed(runRegion(region, {}, &results)))
    return failure();
  for (auto [res, v] : llvm::zip(ifOp.getResults(), results))
    set(res, v);
  return success();
}

LogicalResult Worker::execOp(scf::WhileOp whileOp) {
  FailureOr<SmallVector<RtValue>> carried =
      getValues(whileOp, whileOp.getInits());
  if (failed(carried))
    return failure();
  for (int64_t trips = 0;; ++trips) {
    if (trips > kMaxLoopTrips)
      return whileOp.emitError()
             << "runs more than the " << kMaxLoopTrips
             << " iterations a kernel's int loop counter holds";
    SmallVector<RtValue> condResults;
    if (failed(runRegion(whileOp.getBefore(), *carried, &condResults)))
      return failure();
    // scf.condition's operands: the condition, then the forwarded values.
    const Tile *cond = std::get_if<Tile>(&condResults[0]);
    if (!cond || cond->isFloat())
      return whileOp.emitError() << "expects an i1 loop condition";
    SmallVector<RtValue> forwarded(condResults.begin() + 1, condResults.end());
    if (!cond->getI(0)) {
      for (auto [res, v] : llvm::zip(whileOp.getResults(), forwarded))
        set(res, v);
      return success();
    }
    if (failed(runRegion(whileOp.getAfter(), forwarded, &*carried)))
      return failure();
  }
}
