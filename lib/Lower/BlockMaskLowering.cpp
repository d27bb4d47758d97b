//===- BlockMaskLowering.cpp - The runtime block mask's classification ----===//
//
// A kernel whose KV loops walk a runtime block mask (`cuir.block_mask =
// @sym`) gets, in its variant library, the classification of its tiles:
// the mask at in-range pairs (`cuir_block_mask_visible`, printed from the
// cuir.block_mask op's region) and two C entry points named after the
// library's attention entry (cuir/block_mask.h), which instantiate the GPU
// classification of cuir/block_mask_classify.cuh. The kernel's list
// arguments (`block_mask:<list>`) become fields `cuir_<list>` of the params
// struct; the kernel side of the lists (its block-iteration point) is the
// block-list patcher's.
//
//===----------------------------------------------------------------------===//

#include "Patcher.h"
#include "ScoreHelper.h"

#include "cuir/Transfer/BlockMask.h"

#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Regex.h"

using namespace mlir;
using namespace mlir::cuir;

std::string mlir::cuir::blockMaskFieldName(StringRef role) {
  return "cuir_" + role.drop_front(kBlockMaskRolePrefix.size()).str();
}

namespace {

/// The params-struct expression of a block-mask argument of role `role`, the
/// kernel argument of that role.
std::optional<std::string> paramsExprOf(StringRef role) {
  if (std::optional<StringRef> name = variantParamName(role))
    return "params." + name->str();
  return llvm::StringSwitch<std::optional<std::string>>(role)
      .Case("B", std::string("params.batch"))
      .Case("Hq", std::string("params.num_heads_q"))
      .Case("Hkv", std::string("params.num_heads_kv"))
      .Case("Nq", std::string("params.seqlen_q"))
      .Case("Nkv", std::string("params.seqlen_kv"))
      .Default(std::nullopt);
}

/// The name of the library's attention entry point: the source's one
/// `extern "C" int <name>(const cuir_attention_params *..., void *...)`.
FailureOr<std::string> attentionEntry(const SourceText &src, StringRef path,
                                      Location loc) {
  llvm::Regex entry("^extern \"C\" int ([A-Za-z_][A-Za-z_0-9]*)\\(const "
                    "cuir_attention_params \\*[A-Za-z_0-9]*, void \\*");
  SmallVector<std::string> found;
  for (unsigned l = 1; l <= src.numLines(); ++l) {
    SmallVector<StringRef> m;
    if (entry.match(src.line(l), &m))
      found.push_back(m[1].str());
  }
  if (found.size() != 1)
    return emitError(loc) << "the runtime block mask's entry points are named "
                             "after the attention entry point, but "
                          << path << " has " << found.size()
                          << " functions 'extern \"C\" int NAME(const "
                             "cuir_attention_params *, void *)' (one needed)";
  return found.front();
}

/// `cuir_block_mask_visible`: the op's region with its coordinates as the
/// parameters b, h, q, kv and its arguments as fields of params.
FailureOr<std::string> visibleFunction(BlockMaskOp op, BlockMaskInfo &info,
                                       SmallVector<std::string> &arrays) {
  SmallVector<std::string> names = {"b", "h", "q", "kv"};
  for (auto [i, arg] : llvm::enumerate(op.getMaskArgs())) {
    StringRef role = op.getArgRole(i);
    if (std::optional<StringRef> param = variantParamName(role))
      info.params.push_back(param->str());
    std::optional<std::string> e = paramsExprOf(role);
    if (!e)
      return emitError(op.getLoc())
             << "argument #" << i << " of the block mask is the kernel's '"
             << role
             << "', which its classification cannot read (it reads the "
                "sizes B, Hq, Hkv, Nq, Nkv and the variant's parameters)";
    if (isa<MemRefType>(arg.getType()))
      arrays.push_back(*e);
    names.push_back(*e);
  }
  FailureOr<FunctionBody> body = printFunctionBody(
      op, names, "  ", "the block mask @" + op.getSymName().str());
  if (failed(body))
    return failure();
  return "// The mask at the in-range pair (q, kv) of batch b and query head h "
         "(cuir.block_mask @" +
         op.getSymName().str() +
         ").\n"
         "__device__ __forceinline__ bool cuir_block_mask_visible(const "
         "cuir_attention_params &params, int b, int h,\n"
         "                                                        int q, int "
         "kv) {\n"
         "  (void)params, (void)b, (void)h, (void)q, (void)kv;\n" +
         body->stmts + "  return " + body->result + ";\n}\n";
}

/// The section appended to the source: the mask, the classification's
/// instantiation and the entry points.
std::string sectionText(const BlockMaskInfo &info,
                        StringRef visible, ArrayRef<std::string> arrays,
                        StringRef variant) {
  std::string bm = std::to_string(info.blockM), bn = std::to_string(info.blockN);
  std::string paramsSet = "params != nullptr";
  for (const std::string &a : arrays)
    paramsSet += " && params->" +
                 StringRef(a).drop_front(strlen("params.")).str() +
                 " != nullptr";
  std::string depends = std::string("{") +
                        (info.perBatch ? "true" : "false") + ", " +
                        (info.perHead ? "true" : "false") + "}";
  return "\n// ---- cuir: the runtime block mask of the variant '" +
         variant.str() +
         "' (generated from the Target CuIR): the mask, and the\n"
         "//      entry points of cuir/block_mask.h that classify its tiles "
         "of " +
         bm + " x " + bn +
         " (cuir/block_mask_classify.cuh) ----\n"
         "#include \"cuir/block_mask.h\"\n"
         "#include \"cuir/block_mask_classify.cuh\"\n\n" +
         visible.str() +
         "\nnamespace {\n"
         "struct cuir_block_mask_predicate {\n"
         "  __device__ __forceinline__ bool operator()(const "
         "cuir_attention_params &params, int b, int h, int q, int kv) const "
         "{\n"
         "    return cuir_block_mask_visible(params, b, h, q, kv);\n"
         "  }\n"
         "};\n"
         "// Whether the mask reads the batch index and the head (else one row "
         "of lists for all).\n"
         "constexpr cuir_kernels::BlockMaskDepends cuir_block_mask_depends" +
         depends +
         ";\n"
         "// The parameter arrays the mask reads are set.\n"
         "bool cuir_block_mask_params_set(const cuir_attention_params "
         "*params) {\n"
         "  return " +
         paramsSet +
         ";\n"
         "}\n"
         "}  // namespace\n\n"
         "extern \"C\" int " +
         info.dimsEntry +
         "(const cuir_attention_params *params, int32_t dims[4]) {\n"
         "  return cuir_kernels::block_mask_dims(params, " +
         bm + ", " + bn +
         ", cuir_block_mask_depends, dims);\n"
         "}\n\n"
         "extern \"C\" int " +
         info.entry +
         "(const cuir_attention_params *params, cuir_block_mask *mask, void "
         "*stream) {\n"
         "  return cuir_kernels::compute_block_mask<cuir_block_mask_predicate, " +
         bm + ", " + bn +
         ">(\n"
         "      params, cuir_block_mask_depends, "
         "cuir_block_mask_params_set(params), mask,\n"
         "      static_cast<cudaStream_t>(stream));\n"
         "}";
}

/// The fields of the kernel's list arguments.
LogicalResult addListFields(KernelOp kernel, PatchContext &ctx,
                            BlockMaskInfo &info) {
  for (BlockArgument arg : kernel.getArguments()) {
    StringRef role = argRole(kernel, arg.getArgNumber());
    if (!role.starts_with(kBlockMaskRolePrefix))
      continue;
    if (!llvm::is_contained(kBlockMaskListRoles, role))
      return emitError(arg.getLoc())
             << "is a block-mask argument '" << role
             << "', which is none of the lists of a block mask (kv_num_blocks, "
                "kv_indices, full_kv_num_blocks, full_kv_indices)";
    ParamField f;
    f.name = blockMaskFieldName(role);
    f.ctype = "const int32_t *";
    f.pytype = "block_mask";
    f.blockMaskList = role.drop_front(kBlockMaskRolePrefix.size()).str();
    info.fields.push_back({f.blockMaskList, f.name});
    if (ctx.fieldNames.insert(f.name).second)
      ctx.fields.push_back(f);
  }
  return success();
}

} // namespace

LogicalResult mlir::cuir::lowerBlockMask(KernelOp kernel, PatchContext &ctx) {
  BlockMaskOp op = getBlockMask(kernel);
  bool hasLists = llvm::any_of(kernel.getArguments(), [&](BlockArgument a) {
    return argRole(kernel, a.getArgNumber()).starts_with(kBlockMaskRolePrefix);
  });
  if (!op) {
    if (hasLists)
      return kernel.emitError()
             << "has block-mask list arguments but no cuir.block_mask "
                "attribute naming the mask that defines them";
    return success();
  }
  if (ctx.blockMask) {
    // Instantiations of other tiles (head dims) share the predicate; the
    // classification takes each call's tiles from its kernel.
    auto first = SymbolTable::lookupNearestSymbolFrom<BlockMaskOp>(
        kernel, StringAttr::get(kernel.getContext(), ctx.blockMask->symbol));
    if (ctx.blockMask->symbol == op.getSymName() ||
        (first && first.getDepends() == op.getDepends() &&
         haveSamePredicate(first, op)))
      return addListFields(kernel, ctx, *ctx.blockMask);
    return kernel.emitError()
           << "walks the block mask @" << op.getSymName()
           << ", another kernel of the module @" << ctx.blockMask->symbol
           << ": a variant library classifies one block mask";
  }
  FailureOr<std::string> entry =
      attentionEntry(ctx.src, ctx.sourcePath, kernel.getLoc());
  if (failed(entry))
    return failure();
  BlockMaskInfo info;
  info.symbol = op.getSymName().str();
  info.blockM = op.getBlockM();
  info.blockN = op.getBlockN();
  info.perBatch = op.dependsOnBatch();
  info.perHead = op.dependsOnHeads();
  info.attentionEntry = *entry;
  info.entry = *entry + "_block_mask";
  info.dimsEntry = *entry + "_block_mask_dims";
  SmallVector<std::string> arrays;
  FailureOr<std::string> visible = visibleFunction(op, info, arrays);
  if (failed(visible) || failed(addListFields(kernel, ctx, info)))
    return failure();
  std::string text = sectionText(info, *visible, arrays, ctx.variantSpec);
  unsigned last = ctx.src.numLines();
  if (failed(ctx.edit({SourceEdit::InsertAfter, last, last, text, "", ""},
                      op.getLoc())))
    return failure();
  ctx.blockMask = std::move(info);
  return success();
}
