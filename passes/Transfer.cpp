//===- Transfer.cpp - The --transfer pass ---------------------------------===//

#include "cuir/Passes/Passes.h"
#include "cuir/Transfer/Transfer.h"
#include "cuir/Variants/Variants.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"

namespace mlir::cuir {
#define GEN_PASS_DEF_TRANSFER
#include "cuir/Passes/Passes.h.inc"
} // namespace mlir::cuir

using namespace mlir;
using namespace mlir::cuir;

namespace {

class TransferPass : public cuir::impl::TransferBase<TransferPass> {
public:
  using Base::Base;

  /// Accepts `--transfer=prefixlm,softcap` as well as the option form
  /// `--transfer="variant=..."`.
  LogicalResult
  initializeOptions(StringRef options,
                    function_ref<LogicalResult(const Twine &)> errorHandler)
      override {
    StringRef trimmed = options.trim();
    if (trimmed.empty() || trimmed.starts_with("variant="))
      return Pass::initializeOptions(options, errorHandler);
    variant = trimmed.str();
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Location loc = module.getLoc();
    if (variant.empty()) {
      emitError(loc) << "--transfer needs a variant: --transfer=prefixlm, a "
                        "composition such as --transfer=prefixlm,softcap, or "
                        "a variant file";
      return signalPassFailure();
    }
    // Variants live in a scratch module: the kernel's module stays clean.
    OwningOpRef<ModuleOp> scratch = ModuleOp::create(loc);
    FailureOr<VariantOp> v = loadVariant(*scratch, loc);
    if (failed(v))
      return signalPassFailure();
    bool any = false;
    for (KernelOp kernel :
         llvm::make_early_inc_range(module.getOps<KernelOp>())) {
      any = true;
      // A variant file is known by its symbol; a built-in by its spec.
      std::string spec = StringRef(variant).ends_with(".mlir")
                             ? v->getSymName().str()
                             : std::string(variant);
      if (failed(transferKernel(kernel, *v, spec)))
        return signalPassFailure();
    }
    if (!any) {
      emitError(loc) << "the module has no cuir.kernel to transfer (lift a "
                        "CUDA kernel first: --lift)";
      signalPassFailure();
    }
  }

private:
  FailureOr<VariantOp> loadVariant(ModuleOp scratch, Location loc) {
    StringRef spec = variant;
    if (!spec.ends_with(".mlir"))
      return buildVariantFromSpec(spec, scratch, loc);
    if (!llvm::sys::fs::exists(spec))
      return emitError(loc) << "variant file '" << spec << "' does not exist";
    ParserConfig config(&getContext());
    OwningOpRef<ModuleOp> file =
        parseSourceFile<ModuleOp>(spec, config);
    if (!file)
      return failure();
    auto variants = llvm::to_vector(file->getOps<VariantOp>());
    if (variants.size() != 1)
      return emitError(loc) << "variant file '" << spec << "' must hold "
                            << "exactly one cuir.variant, found "
                            << variants.size();
    auto clone = cast<VariantOp>(variants.front()->clone());
    scratch.getBody()->push_back(clone);
    return clone;
  }
};

} // namespace
