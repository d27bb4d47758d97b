//===- CuIR.h - The CuIR dialect --------------------------------*- C++ -*-===//
//
// Public header of the CuIR dialect: its attributes, types and operations.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_DIALECT_CUIR_H
#define CUIR_DIALECT_CUIR_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferIntRangeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "cuir/Dialect/CuIREnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "cuir/Dialect/CuIRAttrs.h.inc"

// After the attributes: the dialect's discardable-attribute helpers name
// them.
#include "cuir/Dialect/CuIRDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "cuir/Dialect/CuIRTypes.h.inc"

#define GET_OP_CLASSES
#include "cuir/Dialect/CuIROps.h.inc"

namespace mlir::cuir {

/// The memory space of a memref type, if it carries a `#cuir.mem<...>`.
std::optional<MemorySpace> getMemorySpace(Type type);

/// The fragment layout of a register tile, or null if `type` is not a ranked
/// tensor encoded with `#cuir.frag<...>`.
FragmentLayoutAttr getFragmentLayout(Type type);

/// The role (`cuir.arg`) of a variant parameter named `name`: "param:<name>".
std::string variantParamRole(llvm::StringRef name);

/// The name of the variant parameter whose role is `role`, if it is one.
std::optional<llvm::StringRef> variantParamName(llvm::StringRef role);

/// The role prefix of the fp32 gradient buffer that a backward kernel
/// accumulates a float parameter's gradient into ("grad:<name>"), of the
/// parameter's shape.
inline constexpr llvm::StringLiteral kGradRolePrefix = "grad:";

/// The role of `kernel`'s argument `index` (its `cuir.arg`), or "".
llvm::StringRef argRole(KernelOp kernel, unsigned index);

/// The `cuir.arg` roles of a runtime block mask's lists, kernel arguments
/// of type memref<?xi32, #cuir.mem<global>> (FlexAttention's layout).
inline constexpr llvm::StringLiteral kBlockMaskListRoles[] = {
    "block_mask:kv_num_blocks", "block_mask:kv_indices",
    "block_mask:full_kv_num_blocks", "block_mask:full_kv_indices"};

/// The roles of a block mask's transposed lists (the query tiles of each KV
/// tile, partial and full), which a backward kernel's query steps walk.
inline constexpr llvm::StringLiteral kBlockMaskTransposedListRoles[] = {
    "block_mask:q_num_blocks", "block_mask:q_indices",
    "block_mask:full_q_num_blocks", "block_mask:full_q_indices"};

/// The role of a block mask's optional list of the query blocks of each
/// (b', h') from the most listed tiles to the fewest: the order in which a
/// kernel that has it takes its query blocks (heavy-first).
inline constexpr llvm::StringLiteral kBlockMaskOrderRole = "block_mask:q_order";

/// The role prefix of a scratch buffer of a kernel (`workspace:dq_accum`),
/// whose shape its `cuir.shape` gives.
inline constexpr llvm::StringLiteral kWorkspaceRolePrefix = "workspace:";

/// The problem sizes a workspace's `cuir.shape` map takes, in its dimension
/// order.
inline constexpr llvm::StringLiteral kWorkspaceShapeDims[] = {
    "B", "Hq", "Hkv", "Nq", "Nkv", "d"};

/// The roles of a backward kernel's outputs: a kernel with any of them is a
/// backward one, whose `o` and `lse` are inputs.
inline constexpr llvm::StringLiteral kBackwardOutputRoles[] = {"dq", "dk",
                                                               "dv"};

/// Whether `kernel` has a `dq`, `dk` or `dv` argument.
bool isBackwardKernel(KernelOp kernel);

/// The cuir.block_mask that `kernel`'s `cuir.block_mask` attribute names,
/// or null.
BlockMaskOp getBlockMask(KernelOp kernel);

/// The change record (`cuir.change`) of an op, or of the kernel argument
/// `value` is, if any.
ChangeAttr getChange(Operation *op);
ChangeAttr getChange(Value value);

/// The change record of `op` or of the op it is nested in, if any: an op
/// inside an inserted op was inserted too.
ChangeAttr getEnclosingChange(Operation *op);

/// Records on `op` that the rewrite `rewrite` inserted it.
void setChange(Operation *op, Rewrite rewrite);

/// Records on `kernel` that `rewrite` erased `op`, a Source CuIR op.
void recordRemoved(Operation *kernel, Operation *op, Rewrite rewrite);

/// The removals recorded on `kernel`.
SmallVector<RemovedAttr> getRemoved(Operation *kernel);

} // namespace mlir::cuir

#endif // CUIR_DIALECT_CUIR_H
