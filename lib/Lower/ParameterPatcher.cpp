//===- ParameterPatcher.cpp - New kernel parameters -----------------------===//
//
// A variant parameter becomes a field of the params struct (in the variant
// section of cuir/attention_params.h) and an entry of the manifest, through
// which loaders bind it; the kernel reads it as `params.<name>`.
//
//===----------------------------------------------------------------------===//

#include "Patcher.h"

#include "llvm/Support/CheckedArithmetic.h"

#include <climits>
#include <cmath>

using namespace mlir;
using namespace mlir::cuir;

namespace {

/// A captured tensor's element type in C++ (f16 and bf16 as their bits) and
/// as torch names it.
std::pair<const char *, const char *> tensorTypes(Type t) {
  if (t.isInteger(1))
    return {"const bool *", "bool"};
  if (t.isInteger(32))
    return {"const int32_t *", "int32"};
  if (t.isInteger(64))
    return {"const int64_t *", "int64"};
  if (t.isF16())
    return {"const uint16_t *", "float16"};
  if (t.isBF16())
    return {"const uint16_t *", "bfloat16"};
  return {"const float *", "float32"};
}

/// The default of a captured tensor, row-major, as the manifest lists it.
nlohmann::ordered_json tensorDefault(DenseElementsAttr dense) {
  nlohmann::ordered_json values = nlohmann::ordered_json::array();
  if (dense.getElementType().isInteger(1)) {
    for (bool b : dense.getValues<bool>())
      values.push_back(b ? 1 : 0);
  } else if (dense.getElementType().isInteger(64) ||
             dense.getElementType().isInteger(32)) {
    for (APInt v : dense.getValues<APInt>())
      values.push_back(v.getSExtValue());
  } else {
    for (APFloat v : dense.getValues<APFloat>()) {
      double x = v.convertToDouble();
      if (std::isfinite(x))
        values.push_back(x);
      else
        values.push_back(std::isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
    }
  }
  return values;
}

/// The field of a captured tensor (a static N-D parameter): a typed const
/// pointer; its shape and row-major strides go to the manifest. Indexing is
/// in C++ int, so the tensor must have fewer than 2^31 elements.
LogicalResult tensorField(KernelOp kernel, BlockArgument arg, MemRefType m,
                          ParamField &f) {
  int64_t stride = 1;
  f.strides.assign(m.getRank(), 0);
  for (int64_t d = m.getRank() - 1; d >= 0; --d) {
    f.strides[d] = stride;
    std::optional<int64_t> next = llvm::checkedMul(stride, m.getDimSize(d));
    if (!next || *next > INT32_MAX)
      return emitError(arg.getLoc())
             << "is the captured tensor '" << f.name << "' of type " << m
             << ": more than 2^31 - 1 elements, which the kernel's int "
                "indexing cannot address";
    stride = *next;
  }
  auto [ctype, dtype] = tensorTypes(m.getElementType());
  f.ctype = ctype;
  f.dtype = dtype;
  f.pytype = "tensor";
  f.shape.assign(m.getShape().begin(), m.getShape().end());
  if (auto d = kernel.getArgAttrOfType<DenseElementsAttr>(
          arg.getArgNumber(), CuIRDialect::DefaultAttrHelper::getNameStr()))
    f.tensorDefault = tensorDefault(d);
  return success();
}

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
  if (auto m = dyn_cast<MemRefType>(ty); m && m.hasStaticShape()) {
    if (failed(tensorField(kernel, arg, m, f)))
      return failure();
    return f;
  }
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
  } else if (ty.isInteger(64)) {
    f.ctype = "int64_t ";
    f.pytype = "int64";
  } else {
    return emitError(arg.getLoc())
           << "is a variant parameter of type " << ty
           << "; the params struct holds f32, i32 and i64 values, 1-D "
              "arrays and captured tensors";
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
      // A block mask's lists: fields that lowerBlockMask adds.
      if (argRole(ctx.diff->target, d.argument.getArgNumber())
              .starts_with(kBlockMaskRolePrefix))
        continue;
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
