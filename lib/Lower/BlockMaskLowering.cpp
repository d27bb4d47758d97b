//===- BlockMaskLowering.cpp - The runtime block mask's classification ----===//
//
// Kernels whose KV loops walk a runtime block mask (`cuir.block_mask =
// @sym`) get, in their variant library, the classification of their tiles:
// the mask at in-range pairs (`cuir_block_mask_visible`, printed from the
// cuir.block_mask op's region) and two C entry points named after the
// library's attention entry (cuir/block_mask.h), which instantiate the GPU
// classification of cuir/block_mask_classify.cuh with the tiles of the
// kernels of the call's head dim (the sm_80 kernel's KV tiles differ by head
// dim). The kernels' list arguments (`block_mask:<list>`) become fields
// `cuir_<list>` of the params struct, and so does, for a forward kernel,
// the optional `cuir_partial_bits` (usesMaskBits); the kernel side of the
// lists (the block-iteration point) is the block-list patcher's, that of
// the bits the scores patcher's.
//
//===----------------------------------------------------------------------===//

#include "Patcher.h"
#include "ScoreHelper.h"

#include "cuir/Lower/CppEmitter.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
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

/// The name of the library's entry point: the source's one
/// `extern "C" int <name>(const <params struct> *..., void *...)`.
FailureOr<std::string> attentionEntry(const SourceText &src, StringRef path,
                                      StringRef paramsStruct, Location loc) {
  llvm::Regex entry("^extern \"C\" int ([A-Za-z_][A-Za-z_0-9]*)\\(const " +
                    paramsStruct.str() + " \\*[A-Za-z_0-9]*, void \\*");
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
                          << paramsStruct << " *, void *)' (one needed)";
  return found.front();
}

/// The head dim a kernel is instantiated for: the static last dimension of
/// its q argument.
FailureOr<int64_t> headDimOf(KernelOp kernel) {
  for (BlockArgument arg : kernel.getArguments()) {
    if (argRole(kernel, arg.getArgNumber()) != "q")
      continue;
    auto m = dyn_cast<MemRefType>(arg.getType());
    if (m && m.getRank() > 0 && !m.isDynamicDim(m.getRank() - 1))
      return m.getDimSize(m.getRank() - 1);
  }
  return kernel.emitError()
         << "walks a runtime block mask, but has no q argument of a static "
            "head dim: the classification's tiles are chosen by head dim";
}

/// Whether `v` is `n - 1` (index or i32) for the block argument `n`.
bool isSizeMinusOne(Value v, Value n) {
  auto sub = v.getDefiningOp<arith::SubIOp>();
  return sub && sub.getLhs() == n && matchPattern(sub.getRhs(), m_One());
}

/// The block mask is evaluated at in-range pairs only (q < Nq, kv < Nkv):
/// the padding clamps that the kernel's loads need (`min(q, Nq - 1)`, see
/// docs/Lowering.md) are q itself there, and are dropped.
void dropInRangeClamps(Block &body, Value nq, Value nkv) {
  Value q = body.getArgument(2), kv = body.getArgument(3);
  body.walk([&](arith::MinSIOp min) {
    for (auto [coord, size] : {std::pair(q, nq), std::pair(kv, nkv)}) {
      if (!size)
        continue;
      if ((min.getLhs() == coord && isSizeMinusOne(min.getRhs(), size)) ||
          (min.getRhs() == coord && isSizeMinusOne(min.getLhs(), size)))
        min.getResult().replaceAllUsesWith(coord);
    }
  });
}

/// The mask's C++: the body of `cuir_block_mask_visible`, the parameter
/// arrays it reads (`params.x`) and the variant parameters.
struct VisibleBody {
  std::string text;
  SmallVector<std::string> arrays;
  std::vector<std::string> params;
};

/// The op's region with its coordinates as the parameters b, h, q, kv and
/// its arguments as fields of params.
FailureOr<VisibleBody> printVisible(BlockMaskOp op) {
  VisibleBody out;
  SmallVector<std::string> names = {"b", "h", "q", "kv"};
  for (auto [i, arg] : llvm::enumerate(op.getMaskArgs())) {
    StringRef role = op.getArgRole(i);
    std::optional<std::string> e = paramsExprOf(role);
    if (!e)
      return emitError(op.getLoc())
             << "argument #" << i << " of the block mask is the kernel's '"
             << role
             << "', which its classification cannot read (it reads the "
                "sizes B, Hq, Hkv, Nq, Nkv and the variant's parameters)";
    if (std::optional<StringRef> param = variantParamName(role))
      out.params.push_back(param->str());
    if (isa<MemRefType>(arg.getType()))
      out.arrays.push_back(e->substr(strlen("params.")));
    names.push_back(*e);
  }
  auto simplify = [&](Block &body) {
    Value nq, nkv;
    for (unsigned i = 0, e = op.getNumMaskArgs(); i < e; ++i) {
      StringRef role = op.getArgRole(i);
      if (role == "Nq" || role == "Nkv")
        (role == "Nq" ? nq : nkv) = body.getArgument(4 + i);
    }
    dropInRangeClamps(body, nq, nkv);
  };
  FailureOr<FunctionBody> body = printFunctionBody(
      op, names, "  ", "the block mask @" + op.getSymName().str(), simplify);
  if (failed(body))
    return failure();
  out.text = body->stmts + "  return " + body->result + ";\n";
  return out;
}

/// One head dim's classification.
std::string tilesArgs(const BlockMaskInfo::Tiles &t) {
  return std::to_string(t.blockM) + ", " + std::to_string(t.blockN);
}

std::string dependsOf(const BlockMaskInfo::Tiles &t) {
  return std::string("cuir_kernels::BlockMaskDepends{") +
         (t.perBatch ? "true" : "false") + ", " +
         (t.perHead ? "true" : "false") + (t.perKvHead ? ", true" : "") + "}";
}

/// `switch (params->head_dim)` over the tiles, each case returning `call(t)`.
std::string switchOnHeadDim(const BlockMaskInfo &info,
                            llvm::function_ref<std::string(
                                const BlockMaskInfo::Tiles &)> call) {
  std::string s = "  if (params == nullptr)\n"
                  "    return cudaErrorInvalidValue;\n"
                  "  switch (params->head_dim) {\n";
  for (const BlockMaskInfo::Tiles &t : info.tiles)
    s += "  case " + std::to_string(t.headDim) + ":\n    return " + call(t) +
         ";\n";
  return s + "  default:\n    return cudaErrorNotSupported;\n  }\n";
}

/// The section appended to the source: the mask, the classification's
/// instantiations and the entry points.
std::string sectionText(const BlockMaskInfo &info, const VisibleBody &body,
                        StringRef variant, StringRef paramsStruct) {
  const std::string params = paramsStruct.str();
  // The section is outside the kernel's namespace, where the lowering's
  // other helpers are: it has its own copies of those the mask calls.
  std::string primitives = deviceHelpersUsedBy(body.text);
  if (StringRef(body.text).contains(std::string(kTanhApproxName) + "("))
    primitives += kTanhApproxHelper;
  if (!primitives.empty())
    primitives = "// ---- cuir: integer and float ops as MLIR defines them, "
                 "for the mask ----\n" +
                 primitives + "\n";
  std::string paramsSet = "params != nullptr";
  for (const std::string &a : body.arrays)
    paramsSet += " && params->" + a + " != nullptr";
  std::string tiles;
  for (const BlockMaskInfo::Tiles &t : info.tiles)
    tiles += "\n//        " + std::to_string(t.blockM) + " x " +
             std::to_string(t.blockN) + " at head dim " +
             std::to_string(t.headDim);
  std::string dims = switchOnHeadDim(info, [](const BlockMaskInfo::Tiles &t) {
    return "cuir_kernels::block_mask_dims(params, " + tilesArgs(t) + ", " +
           dependsOf(t) + ", dims)";
  });
  std::string classify =
      switchOnHeadDim(info, [](const BlockMaskInfo::Tiles &t) {
        return "cuir_kernels::compute_block_mask<cuir_block_mask_predicate, " +
               tilesArgs(t) + ">(\n        params, " + dependsOf(t) +
               ", set, mask, cu_stream)";
      });
  return "\n// ---- cuir: the runtime block mask of the variant '" +
         variant.str() +
         "' (generated from the Target CuIR): the mask,\n"
         "//      and the entry points of cuir/block_mask.h that classify "
         "the kernels' tiles\n"
         "//      (cuir/block_mask_classify.cuh), by head dim:" +
         tiles +
         " ----\n"
         "#include \"cuir/block_mask.h\"\n"
         "#include \"cuir/block_mask_classify.cuh\"\n\n"
         "namespace {\n" +
         primitives +
         "// The mask at the in-range pair (q, kv) of batch b and query head "
         "h (cuir.block_mask @" +
         info.symbol +
         ").\n"
         "__device__ __forceinline__ bool cuir_block_mask_visible(const " +
         params +
         " &params, int b, int h,\n"
         "                                                        int q, int "
         "kv) {\n"
         "  (void)params, (void)b, (void)h, (void)q, (void)kv;\n" +
         body.text +
         "}\n\n"
         "struct cuir_block_mask_predicate {\n"
         "  __device__ __forceinline__ bool operator()(const " +
         params +
         " &params, int b, int h, int q, int kv) const "
         "{\n"
         "    return cuir_block_mask_visible(params, b, h, q, kv);\n"
         "  }\n"
         "};\n"
         "}  // namespace\n\n"
         "extern \"C\" int " +
         info.dimsEntry + "(const " + params +
         " *params, int32_t dims[4]) {\n" + dims +
         "}\n\n"
         "extern \"C\" int " +
         info.entry + "(const " + params +
         " *params, cuir_block_mask *mask,\n"
         "                                void *stream) {\n"
         "  const cudaStream_t cu_stream = static_cast<cudaStream_t>(stream);\n"
         "  // the parameter arrays the mask reads are set\n"
         "  const bool set = " +
         paramsSet + ";\n" + classify + "}";
}

/// The fields of the kernel's list arguments.
LogicalResult addListFields(KernelOp kernel, PatchContext &ctx) {
  for (BlockArgument arg : kernel.getArguments()) {
    StringRef role = argRole(kernel, arg.getArgNumber());
    if (!role.starts_with(kBlockMaskRolePrefix))
      continue;
    if (!llvm::is_contained(kBlockMaskListRoles, role) &&
        !llvm::is_contained(kBlockMaskTransposedListRoles, role) &&
        role != kBlockMaskOrderRole)
      return emitError(arg.getLoc())
             << "is a block-mask argument '" << role
             << "', which is none of the lists of a block mask (kv_num_blocks, "
                "kv_indices, full_kv_num_blocks, full_kv_indices, their q_ "
                "transposes, q_order)";
    ParamField f;
    f.name = blockMaskFieldName(role);
    f.ctype = "const int32_t *";
    f.pytype = "block_mask";
    f.blockMaskList = role.drop_front(kBlockMaskRolePrefix.size()).str();
    if (ctx.fieldNames.insert(f.name).second)
      ctx.fields.push_back(f);
  }
  if (!usesMaskBits(kernel))
    return success();
  ParamField bits;
  bits.name = "cuir_" + kMaskBitsList.str();
  bits.ctype = "const uint32_t *";
  bits.pytype = "block_mask";
  bits.blockMaskList = kMaskBitsList.str();
  if (ctx.fieldNames.insert(bits.name).second)
    ctx.fields.push_back(bits);
  return success();
}

} // namespace

/// Whether loading a thread's words of the mask bits is cheaper than
/// evaluating the mask at each of its scores. Measured on the catalogue
/// (H100, docs/benchmarks/block-sparse.md): a mask that looks up a tensor
/// per key (documents: 1.07-1.18x faster with the bits) or of about ten
/// integer ops (global tokens + window: 1.03-1.14x) gains; one of three ops
/// (block_diagonal's two divisions by 32 and a compare) loses 5%, and so
/// may one whose ops the lowering's clean-up shrinks (dilated: 0.95-1.01);
/// a lookup at (q, kv) is gathered by the scores early in the step already
/// (a random mask: 1-5% slower with both).
static bool maskWorthBits(BlockMaskOp op) {
  constexpr unsigned kMinOps = 6;
  Block &body = op.getBody().front();
  llvm::DenseSet<Value> ofQ = {op.getCoordArg(2)}, ofKv = {op.getCoordArg(3)};
  unsigned ops = 0;
  bool lookup = false;
  for (Operation &o : body.without_terminator()) {
    if (o.hasTrait<OpTrait::ConstantLike>())
      continue;
    ++ops;
    bool q =
        llvm::any_of(o.getOperands(), [&](Value v) { return ofQ.count(v); });
    bool kv =
        llvm::any_of(o.getOperands(), [&](Value v) { return ofKv.count(v); });
    for (Value r : o.getResults()) {
      if (q)
        ofQ.insert(r);
      if (kv)
        ofKv.insert(r);
    }
    if (isa<memref::LoadOp>(o)) {
      if (q && kv)
        return false;
      lookup = true;
    }
  }
  return lookup || ops >= kMinOps;
}

bool mlir::cuir::usesMaskBits(KernelOp kernel) {
  BlockMaskOp op = getBlockMask(kernel);
  if (!op || op.listsPerKvHead() || op.getBlockN() % 32 != 0 ||
      op.getBlockN() > 1024 || !maskWorthBits(op))
    return false;
  bool forwardLists = llvm::any_of(kernel.getArguments(), [&](BlockArgument a) {
    return argRole(kernel, a.getArgNumber()) == kBlockMaskListRoles[1];
  });
  // Its KV tiles are read from the lists (the block list's rewrite), so
  // that the block-iteration point is a ListedKvTiles.
  bool walksLists =
      kernel
          .walk([](scf::IfOp tile) {
            ChangeAttr change = getChange(tile);
            return change && change.getRewrite() == Rewrite::Blocks
                       ? WalkResult::interrupt()
                       : WalkResult::advance();
          })
          .wasInterrupted();
  return forwardLists && walksLists;
}

LogicalResult mlir::cuir::lowerBlockMask(KernelOp kernel, PatchContext &ctx) {
  BlockMaskOp op = getBlockMask(kernel);
  if (!op) {
    if (llvm::any_of(kernel.getArguments(), [&](BlockArgument a) {
          return argRole(kernel, a.getArgNumber())
              .starts_with(kBlockMaskRolePrefix);
        }))
      return kernel.emitError()
             << "has block-mask list arguments but no cuir.block_mask "
                "attribute naming the mask that defines them";
    return success();
  }
  FailureOr<int64_t> headDim = headDimOf(kernel);
  if (failed(headDim) || failed(addListFields(kernel, ctx)))
    return failure();
  ctx.blockMaskKernels.push_back({kernel, op, *headDim});
  return success();
}

LogicalResult mlir::cuir::finishBlockMasks(PatchContext &ctx, Location loc) {
  if (ctx.blockMaskKernels.empty())
    return success();
  FailureOr<std::string> entry =
      attentionEntry(ctx.src, ctx.sourcePath, ctx.paramsStruct, loc);
  if (failed(entry))
    return failure();
  BlockMaskInfo info;
  info.attentionEntry = *entry;
  info.entry = *entry + "_block_mask";
  info.dimsEntry = *entry + "_block_mask_dims";
  std::optional<VisibleBody> visible;
  BlockMaskOp first;
  for (const BlockMaskKernel &k : ctx.blockMaskKernels) {
    KernelOp kernel = k.kernel;
    BlockMaskOp op = k.op;
    int64_t headDim = k.headDim;
    FailureOr<VisibleBody> body = printVisible(op);
    if (failed(body))
      return failure();
    // One mask for all the library's kernels, with each head dim's tiles.
    if (visible && body->text != visible->text)
      return kernel.emitError()
             << "walks the block mask @" << op.getSymName()
             << ", whose mask differs from that of @" << first.getSymName()
             << ", which another kernel of the module walks: a variant "
                "library classifies one mask";
    if (!visible) {
      visible = *body;
      first = op;
    }
    BlockMaskInfo::Tiles t{headDim, static_cast<int64_t>(op.getBlockM()),
                           static_cast<int64_t>(op.getBlockN()),
                           op.dependsOnBatch(), op.dependsOnHeads(),
                           op.listsPerKvHead()};
    auto same = llvm::find_if(info.tiles, [&](const BlockMaskInfo::Tiles &o) {
      return o.headDim == headDim;
    });
    if (same == info.tiles.end()) {
      info.tiles.push_back(t);
      continue;
    }
    if (same->blockM != t.blockM || same->blockN != t.blockN ||
        same->perBatch != t.perBatch || same->perHead != t.perHead ||
        same->perKvHead != t.perKvHead)
      return kernel.emitError()
             << "walks the block mask @" << op.getSymName() << " (tiles "
             << t.blockM << " x " << t.blockN
             << "), but another kernel of head dim " << headDim
             << " walks one of other tiles or depends (" << same->blockM
             << " x " << same->blockN
             << "): the classification picks its tiles by head dim";
  }
  info.symbol = first.getSymName().str();
  info.params = visible->params;
  bool bits = llvm::any_of(ctx.blockMaskKernels, [](const BlockMaskKernel &k) {
    return usesMaskBits(k.kernel);
  });
  emitRemark(first.getLoc())
      << (bits ? "the masking steps read the mask of their partial tiles from "
                 "the block mask's bits (partial_bits) where the call gives "
                 "them"
               : "the masking steps evaluate the mask: its bits would cost "
                 "more to load than it does to compute");
  for (const ParamField &f : ctx.fields)
    if (!f.blockMaskList.empty())
      info.fields.push_back({f.blockMaskList, f.name});
  std::string text =
      sectionText(info, *visible, ctx.variantSpec, ctx.paramsStruct);
  unsigned last = ctx.src.numLines();
  if (failed(ctx.edit({SourceEdit::InsertAfter, last, last, text, "", ""},
                      first.getLoc())))
    return failure();
  ctx.blockMask = std::move(info);
  return success();
}
