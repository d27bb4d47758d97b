//===- Values.cpp - Runtime values of the CuIR interpreter ----------------===//

#include "Values.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <cstring>

using namespace mlir;
using namespace mlir::cuir::interp;

ElemKind mlir::cuir::interp::getElemKind(Type type) {
  if (type.isBF16())
    return ElemKind::BF16;
  if (type.isF16())
    return ElemKind::F16;
  if (isa<FloatType>(type))
    return ElemKind::F32;
  return ElemKind::Int;
}

unsigned mlir::cuir::interp::getIntWidth(Type type) {
  if (auto intType = dyn_cast<IntegerType>(type))
    return intType.getWidth();
  return 64;
}

static float roundBF16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  if ((bits & 0x7f800000u) == 0x7f800000u) // inf or nan: keep
    return x;
  uint32_t lsb = (bits >> 16) & 1u;
  bits += 0x7fffu + lsb;
  bits &= 0xffff0000u;
  float y;
  std::memcpy(&y, &bits, 4);
  return y;
}

void mlir::cuir::interp::joinClock(VectorClock &into, const VectorClock &from) {
  if (into.size() < from.size())
    into.resize(from.size(), 0);
  for (size_t a = 0; a < from.size(); ++a)
    into[a] = std::max(into[a], from[a]);
}

float mlir::cuir::interp::roundTo(ElemKind kind, float x) {
  switch (kind) {
  case ElemKind::BF16:
    return roundBF16(x);
  case ElemKind::F16:
    return static_cast<float>(static_cast<_Float16>(x));
  default:
    return x;
  }
}

int64_t mlir::cuir::interp::wrapInt(int64_t x, unsigned width) {
  if (width >= 64)
    return x;
  if (width == 1)
    return x & 1;
  uint64_t mask = (uint64_t(1) << width) - 1;
  uint64_t u = uint64_t(x) & mask;
  uint64_t sign = uint64_t(1) << (width - 1);
  return (u & sign) ? int64_t(u | ~mask) : int64_t(u);
}

Tile Tile::floats(ElemKind kind, ArrayRef<int64_t> shape) {
  Tile t;
  t.kind = kind;
  t.shape.assign(shape.begin(), shape.end());
  t.f = std::make_shared<std::vector<float>>(t.numElements());
  return t;
}

Tile Tile::ints(unsigned width, ArrayRef<int64_t> shape) {
  Tile t;
  t.kind = ElemKind::Int;
  t.width = width;
  t.shape.assign(shape.begin(), shape.end());
  t.i = std::make_shared<std::vector<int64_t>>(t.numElements());
  return t;
}

Tile Tile::scalarF(ElemKind kind, float v) {
  Tile t = floats(kind, {});
  (*t.f)[0] = roundTo(kind, v);
  return t;
}

Tile Tile::scalarI(unsigned width, int64_t v) {
  Tile t = ints(width, {});
  (*t.i)[0] = wrapInt(v, width);
  return t;
}

View View::contiguous(std::shared_ptr<Buffer> buffer, ArrayRef<int64_t> shape) {
  View v;
  v.buffer = std::move(buffer);
  v.sizes.assign(shape.begin(), shape.end());
  v.strides.resize(shape.size());
  int64_t stride = 1;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    v.strides[d] = stride;
    stride *= shape[d];
  }
  return v;
}
