//===- CheckLocations.cpp - Verify op locations against the CUDA source ---===//

#include "cuir/Passes/Passes.h"
#include "cuir/Support/SourceFile.h"

#include "mlir/IR/Location.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

namespace mlir::cuir {
#define GEN_PASS_DEF_CHECKLOCATIONS
#include "cuir/Passes/Passes.h.inc"
} // namespace mlir::cuir

using namespace mlir;
using namespace mlir::cuir;

namespace {

/// Lines of one source file, loaded once per pass run.
struct SourceLines {
  bool loaded = false;
  std::vector<StringRef> lines;
  std::unique_ptr<llvm::MemoryBuffer> buffer;
};

class CheckLocationsPass
    : public cuir::impl::CheckLocationsBase<CheckLocationsPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string root = sourceRoot;
    if (root.empty())
      if (auto path = module->getAttrOfType<StringAttr>(kSourcePathAttr))
        root = llvm::sys::path::parent_path(path.getValue()).str();

    llvm::StringMap<SourceLines> files;
    bool failed = false;
    module.walk([&](Operation *op) {
      if (isa<ModuleOp>(op))
        return;
      SmallVector<FileLineColRange> ranges;
      op->getLoc()->walk([&](Location loc) {
        // Locations in the .mlir file itself are not source correspondences.
        if (auto range = dyn_cast<FileLineColRange>(loc))
          if (isCudaSourcePath(range.getFilename()))
            ranges.push_back(range);
        return WalkResult::advance();
      });
      if (ranges.empty()) {
        // Constants are materialised values, not lifted source code.
        if (requireAll && op->getParentOfType<KernelOp>() &&
            !op->hasTrait<OpTrait::ConstantLike>()) {
          op->emitOpError() << "has no source location; every lifted op must "
                             "name the CUDA lines it comes from";
          failed = true;
        }
        return;
      }
      for (FileLineColRange range : ranges)
        if (!checkRange(files, op, range, root))
          failed = true;
    });
    if (failed)
      signalPassFailure();
  }

private:
  static SourceLines &load(llvm::StringMap<SourceLines> &files, StringRef file,
                           StringRef root) {
    SourceLines &src = files[file];
    if (src.loaded)
      return src;
    src.loaded = true;
    SmallString<256> path(file);
    if (!llvm::sys::path::is_absolute(path) && !root.empty()) {
      path = root;
      llvm::sys::path::append(path, file);
    }
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer)
      return src;
    src.buffer = std::move(*buffer);
    src.lines = splitSourceLines(src.buffer->getBuffer());
    return src;
  }

  static bool checkRange(llvm::StringMap<SourceLines> &files, Operation *op,
                         FileLineColRange range, StringRef root) {
    StringRef file = range.getFilename();
    SourceLines &src = load(files, file, root);
    if (!src.buffer) {
      op->emitOpError() << "names source file '" << file
                      << "', which cannot be read (resolved against '"
                      << (root.empty() ? "." : root) << "')";
      return false;
    }
    return succeeded(checkRangeInSource(op, range, src.lines));
  }
};

} // namespace
