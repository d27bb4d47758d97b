//===- ParameterPatcher.cpp - New kernel parameters -----------------------===//
//
// A variant parameter becomes a field of the params struct (in the variant
// section of cuir/attention_params.h) and an entry of the manifest, through
// which loaders bind it; the kernel reads it as `params.<name>`.
//
//===----------------------------------------------------------------------===//

#include "Patcher.h"

using namespace mlir;
using namespace mlir::cuir;

namespace {

/// The params-struct field of argument `arg` of `kernel`.
FailureOr<ParamField> fieldOf(KernelOp kernel, BlockArgument arg) {
  unsigned i = arg.getArgNumber();
  std::optional<StringRef> name = variantParamName(argRole(kernel, i));
  if (!name)
    return emitError(arg.getLoc())
           << "is a new kernel argument without a variant parameter role "
              "('param:<name>'): lowering cannot bind it";
  ParamField f;
  f.name = name->str();
  Type ty = arg.getType();
  if (auto m = dyn_cast<MemRefType>(ty)) {
    bool isF = m.getElementType().isF32();
    f.ctype = isF ? "const float *" : "const int32_t *";
    f.pytype = isF ? "float_ptr" : "int32_ptr";
    if (auto e = kernel.getArgAttrOfType<StringAttr>(
            i, CuIRDialect::ExtentAttrHelper::getNameStr()))
      f.extent = e.getValue().str();
  } else if (ty.isF32()) {
    f.ctype = "float ";
    f.pytype = "float";
  } else if (ty.isInteger(32)) {
    f.ctype = "int32_t ";
    f.pytype = "int32";
  } else {
    return emitError(arg.getLoc())
           << "is a variant parameter of type " << ty
           << "; the params struct holds f32 and i32 values and pointers";
  }
  if (auto d = kernel.getArgAttrOfType<StringAttr>(
          i, CuIRDialect::DefaultAttrHelper::getNameStr()))
    f.defaultValue = d.getValue().str();
  return f;
}

class ParameterPatcher : public Patcher {
public:
  Rewrite getRewrite() const override { return Rewrite::Parameter; }

  LogicalResult patch(ArrayRef<Difference> differences,
                      PatchContext &ctx) override {
    for (const Difference &d : differences) {
      if (d.kind != Difference::Kind::Argument)
        return emitError(d.getLoc())
               << "is recorded as a new parameter, but only kernel "
                  "arguments are";
      FailureOr<ParamField> f = fieldOf(ctx.diff->target, d.argument);
      if (failed(f))
        return failure();
      if (ctx.fieldNames.insert(f->name).second)
        ctx.fields.push_back(*f);
    }
    return success();
  }
};

} // namespace

std::unique_ptr<Patcher> mlir::cuir::createParameterPatcher() {
  return std::make_unique<ParameterPatcher>();
}
