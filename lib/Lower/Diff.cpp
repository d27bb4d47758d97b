//===- Diff.cpp - What a Target CuIR kernel changed from its Source -------===//

#include "cuir/Lower/Diff.h"

#include "cuir/Support/SourceFile.h"

#include "mlir/IR/IRMapping.h"

#include <map>

using namespace mlir;
using namespace mlir::cuir;

Location Difference::getLoc() const {
  switch (kind) {
  case Kind::Inserted:
  case Kind::Operand:
    return target->getLoc();
  case Kind::Removed:
    return source->getLoc();
  case Kind::Argument:
    return argument.getLoc();
  }
  llvm_unreachable("unknown difference");
}

SmallVector<Difference> KernelDiff::of(Rewrite rewrite) const {
  SmallVector<Difference> out;
  for (const Difference &d : differences)
    if (d.rewrite == rewrite)
      out.push_back(d);
  return out;
}

Location LocationCanonicalizer::canonical(Location loc) {
  if (auto it = cache.find(loc); it != cache.end())
    return cast<LocationAttr>(it->second);
  Location result = loc;
  MLIRContext *ctx = loc.getContext();
  if (auto r = dyn_cast<FileLineColRange>(loc)) {
    result = FileLineColRange::get(r.getFilename(), r.getStartLine(),
                                   r.getStartColumn(), r.getEndLine(),
                                   r.getEndColumn());
  } else if (auto n = dyn_cast<NameLoc>(loc)) {
    result = NameLoc::get(n.getName(), canonical(n.getChildLoc()));
  } else if (auto c = dyn_cast<CallSiteLoc>(loc)) {
    result = CallSiteLoc::get(canonical(c.getCallee()),
                              canonical(c.getCaller()));
  } else if (auto f = dyn_cast<FusedLoc>(loc)) {
    SmallVector<Location> parts;
    for (Location l : f.getLocations())
      parts.push_back(canonical(l));
    result = FusedLoc::get(ctx, parts, f.getMetadata());
  }
  cache[loc] = result;
  return result;
}

/// Whether `loc` names a line of a CUDA source.
static bool hasCudaLocation(Location loc) {
  return loc
      ->walk([](Location l) {
        auto file = dyn_cast<FileLineColRange>(l);
        return file && isCudaSourcePath(file.getFilename())
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

namespace {

/// Aligns the Target CuIR kernel with its Source, block by block.
class Differ {
public:
  Differ(KernelOp target, KernelOp source) {
    diff.target = target;
    diff.source = source;
    for (RemovedAttr r : getRemoved(target))
      removals[{r.getOpName().getValue(), locations.canonical(r.getOpLoc())}]
          .push_back(r.getRewrite());
  }

  FailureOr<KernelDiff> run();

private:
  LogicalResult compareArguments();
  LogicalResult compareBlocks(Block &s, Block &t, bool argumentsMapped);
  LogicalResult compareOps(Operation *s, Operation *t);
  LogicalResult compareOperand(Operation *s, Operation *t, unsigned i);
  LogicalResult remove(Operation *s);
  /// The next op of `s` from `from` that `t` stands for, or end(): one
  /// with the same name, location and (if `exact`) attributes and types.
  Block::iterator findCounterpart(Block &s, Block::iterator from, Operation *t,
                                  bool exact);

  KernelDiff diff;
  LocationCanonicalizer locations;
  IRMapping values;
  /// The recorded removals by op name and location, consumed as matched.
  struct KeyLess {
    bool operator()(const std::pair<StringRef, Location> &a,
                    const std::pair<StringRef, Location> &b) const {
      if (a.first != b.first)
        return a.first < b.first;
      return a.second.getAsOpaquePointer() < b.second.getAsOpaquePointer();
    }
  };
  std::map<std::pair<StringRef, Location>, SmallVector<Rewrite, 1>, KeyLess>
      removals;
};

} // namespace

LogicalResult Differ::compareArguments() {
  Block &s = diff.source.getBody().front(), &t = diff.target.getBody().front();
  for (BlockArgument arg : t.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (ChangeAttr change = getChange(arg)) {
      diff.differences.push_back({Difference::Kind::Argument,
                                  change.getRewrite(), nullptr, nullptr, 0,
                                  arg});
      continue;
    }
    if (i >= s.getNumArguments() || s.getArgument(i).getType() != arg.getType() ||
        argRole(diff.source, i) != argRole(diff.target, i))
      return emitError(arg.getLoc())
             << "kernel argument #" << i
             << " is not the Source CuIR's and no transform recorded adding "
                "it: lowering patches only recorded changes";
    values.map(s.getArgument(i), arg);
  }
  for (unsigned i = 0, e = s.getNumArguments(); i < e; ++i)
    if (!values.contains(s.getArgument(i)))
      return emitError(s.getArgument(i).getLoc())
             << "kernel argument #" << i
             << " of the Source CuIR is missing from the Target CuIR";
  return success();
}

Block::iterator Differ::findCounterpart(Block &s, Block::iterator from,
                                        Operation *t, bool exact) {
  // A terminator the parser made implicit has the location of the file it
  // was parsed from: blocks end in the same terminator.
  bool terminator = t == &t->getBlock()->back() &&
                    t->hasTrait<OpTrait::IsTerminator>();
  // An op the lift gave no CUDA location has the position of the .mlir file
  // it was parsed from: it stands for the next such op of its kind.
  Location loc = locations.canonical(t->getLoc());
  bool unlocated = !hasCudaLocation(loc);
  for (auto it = from; it != s.end(); ++it)
    if (it->getName() == t->getName() &&
        ((terminator && &*it == &s.back()) ||
         locations.canonical(it->getLoc()) == loc ||
         (unlocated && exact && !hasCudaLocation(it->getLoc()))) &&
        (!exact || (it->getAttrDictionary() == t->getAttrDictionary() &&
                    it->getResultTypes() == t->getResultTypes())))
      return it;
  return s.end();
}

LogicalResult Differ::remove(Operation *s) {
  auto it = removals.find(
      {s->getName().getStringRef(), locations.canonical(s->getLoc())});
  if (it == removals.end() || it->second.empty())
    return s->emitError()
           << "is in the Source CuIR but not in the Target CuIR, and no "
              "transform recorded removing it: lowering patches only "
              "recorded changes";
  Rewrite r = it->second.pop_back_val();
  diff.removedBy[s] = r;
  diff.differences.push_back(
      {Difference::Kind::Removed, r, nullptr, s, 0, BlockArgument()});
  return success();
}

LogicalResult Differ::compareBlocks(Block &s, Block &t, bool argumentsMapped) {
  if (!argumentsMapped) {
    if (s.getArgumentTypes() != t.getArgumentTypes())
      return emitError(t.getParent()->getLoc())
             << "has a region whose arguments differ from the Source CuIR's";
    for (auto [sa, ta] : llvm::zip(s.getArguments(), t.getArguments()))
      values.map(sa, ta);
  }
  Block::iterator next = s.begin();
  for (Operation &op : t) {
    if (ChangeAttr change = getChange(&op)) {
      diff.differences.push_back({Difference::Kind::Inserted,
                                  change.getRewrite(), &op, nullptr, 0,
                                  BlockArgument()});
      continue;
    }
    Block::iterator match = findCounterpart(s, next, &op, /*exact=*/true);
    if (match == s.end())
      match = findCounterpart(s, next, &op, /*exact=*/false);
    if (match == s.end())
      return op.emitError()
             << "is not in the Source CuIR at this location, and no "
                "transform recorded inserting it: lowering patches only "
                "recorded changes";
    for (; next != match; ++next)
      if (failed(remove(&*next)))
        return failure();
    ++next;
    if (failed(compareOps(&*match, &op)))
      return failure();
  }
  for (; next != s.end(); ++next)
    if (failed(remove(&*next)))
      return failure();
  return success();
}

LogicalResult Differ::compareOperand(Operation *s, Operation *t, unsigned i) {
  Value sv = s->getOperand(i), tv = t->getOperand(i);
  if (values.lookupOrNull(sv) == tv)
    return success();
  // The rewrite that removed the value read before owns the change (the
  // sigmoid's epilogue reads O without the division by the row sums, also
  // where O is the result of the split's copy of the masking steps), else
  // the one that made the value read now.
  std::optional<Rewrite> owner;
  if (Operation *def = sv.getDefiningOp(); def && diff.removedBy.count(def))
    owner = diff.removedBy.lookup(def);
  else if (ChangeAttr change = getChange(tv))
    owner = change.getRewrite();
  if (!owner)
    return t->emitError()
           << "reads another value as operand #" << i
           << " than in the Source CuIR, and no transform recorded the "
              "change: lowering patches only recorded changes";
  diff.differences.push_back(
      {Difference::Kind::Operand, *owner, t, s, i, BlockArgument()});
  return success();
}

LogicalResult Differ::compareOps(Operation *s, Operation *t) {
  if (s->getAttrDictionary() != t->getAttrDictionary() ||
      s->getResultTypes() != t->getResultTypes() ||
      s->getNumOperands() != t->getNumOperands() ||
      s->getNumRegions() != t->getNumRegions()) {
    InFlightDiagnostic d = t->emitError()
                           << "differs from the Source CuIR op at this "
                              "location, and no transform recorded the "
                              "change: lowering patches only recorded changes";
    d.attachNote(s->getLoc()) << "the Source CuIR op: " << *s;
    return d;
  }
  diff.sourceOf[t] = s;
  for (unsigned i = 0, e = t->getNumOperands(); i < e; ++i)
    if (failed(compareOperand(s, t, i)))
      return failure();
  for (auto [sr, tr] : llvm::zip(s->getResults(), t->getResults()))
    values.map(sr, tr);
  for (auto [sReg, tReg] : llvm::zip(s->getRegions(), t->getRegions())) {
    if (sReg.getBlocks().size() != tReg.getBlocks().size())
      return t->emitError() << "has regions whose blocks differ from the "
                               "Source CuIR's";
    for (auto [sb, tb] : llvm::zip(sReg, tReg))
      if (failed(compareBlocks(sb, tb, /*argumentsMapped=*/false)))
        return failure();
  }
  return success();
}

FailureOr<KernelDiff> Differ::run() {
  if (failed(compareArguments()) ||
      failed(compareBlocks(diff.source.getBody().front(),
                           diff.target.getBody().front(),
                           /*argumentsMapped=*/true)))
    return failure();
  return std::move(diff);
}

FailureOr<KernelDiff> mlir::cuir::diffKernels(KernelOp target,
                                              KernelOp source) {
  return Differ(target, source).run();
}
