//===- Lower.cpp - Patch the expert kernel from the Target CuIR -----------===//
//
// Lowering diffs each Target CuIR kernel against its Source CuIR (Diff.h),
// hands every difference to the patcher of the rewrite that recorded it
// (Patcher.h: one file per rewrite) and applies their edits to the expert
// source at once. A difference that no transform recorded is an error at its
// location: lowering never guesses. See docs/Lowering.md.
//
//===----------------------------------------------------------------------===//

#include "cuir/Lower/Lower.h"
#include "cuir/Support/SourceFile.h"

#include "Patcher.h"

#include "cuir/Lower/CppEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace mlir::cuir;

FileLineColRange mlir::cuir::rangeOf(Location loc, bool caller) {
  if (auto r = dyn_cast<FileLineColRange>(loc))
    return r;
  if (auto n = dyn_cast<NameLoc>(loc))
    return rangeOf(n.getChildLoc(), caller);
  if (auto cs = dyn_cast<CallSiteLoc>(loc))
    return rangeOf(caller ? cs.getCaller() : cs.getCallee(), caller);
  if (auto f = dyn_cast<FusedLoc>(loc))
    for (Location l : f.getLocations())
      if (auto r = rangeOf(l, caller))
        return r;
  return {};
}

LogicalResult PatchContext::edit(SourceEdit e, Location loc) {
  std::string conflict;
  if (!patch.add(std::move(e), conflict))
    return emitError(loc) << "cannot patch " << sourcePath << ": " << conflict;
  return success();
}

void PatchContext::addHelper(const std::string &key, const std::string &text) {
  if (helperKeys.insert(key).second)
    helpers.push_back(text);
}

LogicalResult PatchContext::finish(unsigned helperLine, Location loc) {
  // The device helpers that the helpers and the edits call come first.
  std::string calls = llvm::join(helpers, "\n") + patch.render();
  std::string primitives = deviceHelpersUsedBy(calls);
  if (!primitives.empty())
    helpers.insert(helpers.begin(), "// ---- cuir: integer and float ops as "
                                    "MLIR defines them ----\n" +
                                        primitives);
  if (!helpers.empty()) {
    if (firstCallLine)
      helperLine = std::min(helperLine, src.topLevelStart(firstCallLine));
    std::string text;
    for (const std::string &h : helpers)
      text += h + "\n";
    text.pop_back();
    if (failed(edit({SourceEdit::InsertBefore, helperLine, helperLine, text,
                     "", ""},
                    loc)))
      return failure();
  }
  for (const Copy &c : copies) {
    std::string lines = patch.render(c.first, c.last);
    size_t pos = lines.find(c.from);
    if (pos == std::string::npos)
      return emitError(c.loc) << "cannot find '" << c.from << "' to copy";
    lines.replace(pos, c.from.size(), c.to);
    lines.pop_back();
    if (failed(edit({SourceEdit::InsertAfter, c.after, c.after,
                     "\n" + c.header + "\n" + lines, "", ""},
                    c.loc)))
      return failure();
  }
  return success();
}

LogicalResult
mlir::cuir::checkAllWritten(ArrayRef<Difference> differences,
                            const llvm::DenseSet<Operation *> &written) {
  for (const Difference &d : differences) {
    if (d.kind != Difference::Kind::Inserted || written.contains(d.target) ||
        d.target->use_empty() || isa<arith::ConstantOp>(d.target))
      continue;
    return d.target->emitError()
           << "was inserted by the " << stringifyRewrite(d.rewrite)
           << " rewrite, but its patcher did not write it";
  }
  return success();
}

namespace {

/// The patchers, one per rewrite, in the order they run: parameters and
/// constants first, the scores before the normaliser that reads them.
SmallVector<std::unique_ptr<Patcher>> createPatchers() {
  SmallVector<std::unique_ptr<Patcher>> all;
  all.push_back(createParameterPatcher());
  all.push_back(createConstantPatcher());
  all.push_back(createScoresPatcher());
  all.push_back(createNormalizerPatcher());
  all.push_back(createSplitPatcher());
  all.push_back(createBlockListPatcher());
  all.push_back(createParamGradPatcher());
  return all;
}

class Lowerer {
public:
  explicit Lowerer(const LoweringOptions &opt) : opt(opt) {}
  FailureOr<LoweredKernel> run(ModuleOp target, ModuleOp source);

private:
  LogicalResult openSource(KernelOp t, KernelOp s);
  LogicalResult checkSourceIdentity(KernelOp t, KernelOp s, StringRef path,
                                    StringRef text);
  LogicalResult lowerKernel(KernelOp t, KernelOp s);
  std::string manifest() const;
  LogicalResult patchHeader(LoweredKernel &out, Location loc) const;

  const LoweringOptions &opt;
  std::string sourcePath;
  std::unique_ptr<SourceText> src;
  std::unique_ptr<SourcePatch> patch;
  std::unique_ptr<PatchContext> ctx;
  unsigned helperLine = 0;
};

/// Reads the source the kernel was lifted from (one per module).
LogicalResult Lowerer::openSource(KernelOp t, KernelOp s) {
  FileLineColRange kr = rangeOf(s.getLoc());
  if (!kr)
    return s.emitError() << "has no source location: lowering needs the "
                            "lift's locations";
  SmallString<256> path(kr.getFilename().getValue());
  if (!llvm::sys::path::is_absolute(path) && !opt.sourceRoot.empty()) {
    path = opt.sourceRoot;
    llvm::sys::path::append(path, kr.getFilename().getValue());
  }
  if (src)
    return std::string(path) == sourcePath
               ? success()
               : t.emitError() << "comes from another source file than the "
                                  "module's other kernels";
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return t.emitError() << "cannot read the source '" << path
                         << "' (set source-root)";
  if (failed(checkSourceIdentity(t, s, path, (*buf)->getBuffer())))
    return failure();
  sourcePath = std::string(path);
  src = std::make_unique<SourceText>((*buf)->getBuffer());
  patch = std::make_unique<SourcePatch>(*src);
  ctx = std::make_unique<PatchContext>(*src, *patch, sourcePath);
  // A backward pass reads its own params struct.
  if ((*buf)->getBuffer().contains(
          "#include \"cuir/attention_bwd_params.h\"")) {
    ctx->paramsStruct = "cuir_attention_bwd_params";
    ctx->paramsHeader = "cuir/attention_bwd_params.h";
  }
  helperLine = src->declarationStart(kr.getStartLine());
  return success();
}

/// Checks that `text`, read from `path`, is the source both kernels were
/// lifted from: the caller's check (opt.verifySource), and every location
/// naming the file inside its text, so that no patch lands on a line that
/// is not there.
LogicalResult Lowerer::checkSourceIdentity(KernelOp t, KernelOp s,
                                           StringRef path, StringRef text) {
  if (opt.verifySource && failed(opt.verifySource(t.getLoc(), path, text)))
    return failure();
  StringRef file = rangeOf(s.getLoc()).getFilename();
  std::vector<StringRef> lines = splitSourceLines(text);
  for (KernelOp kernel : {s, t}) {
    WalkResult walk = kernel->walk([&](Operation *op) {
      WalkResult inLoc = op->getLoc()->walk([&](Location l) {
        auto range = dyn_cast<FileLineColRange>(l);
        if (!range || range.getFilename() != file)
          return WalkResult::advance();
        if (failed(checkRangeInSource(op, range, lines))) {
          emitRemark(t.getLoc())
              << "the source read for lowering is '" << path
              << "': it is not the text this kernel was lifted from";
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
      return inLoc;
    });
    if (walk.wasInterrupted())
      return failure();
  }
  return success();
}

/// `text` as it may appear inside a C++ comment of either kind: printable
/// ASCII but for a backslash (a line continuation), and no "*/".
static std::string commentSafe(StringRef text) {
  std::string out;
  for (char c : text)
    out += llvm::isPrint(c) && c != '\\' ? c : '?';
  for (size_t at; (at = out.find("*/")) != std::string::npos;)
    out[at + 1] = '?';
  return out;
}

/// Whether a transfer kept the kernel's causal mask (the variant's mask
/// implies it): the causal flag replaced by the constant true, at the flag.
static bool keepsCausal(KernelOp t) {
  for (BlockArgument arg : t.getBody().getArguments()) {
    if (argRole(t, arg.getArgNumber()) != "causal")
      continue;
    for (auto cst : t.getBody().front().getOps<arith::ConstantOp>()) {
      auto value = dyn_cast<BoolAttr>(cst.getValue());
      auto flag = dyn_cast<IntegerAttr>(cst.getValue());
      bool on = (value && value.getValue()) ||
                (flag && flag.getType().isInteger(1) && flag.getInt() != 0);
      ChangeAttr change = getChange(cst.getOperation());
      if (on && change && change.getRewrite() == Rewrite::Constant &&
          cst.getLoc() == arg.getLoc())
        return true;
    }
  }
  return false;
}

LogicalResult Lowerer::lowerKernel(KernelOp t, KernelOp s) {
  MLIRContext *mctx = t.getContext();
  if (StringAttr spec = CuIRDialect::VariantAttrHelper(mctx).getAttr(t))
    ctx->variantSpec = commentSafe(spec.getValue());
  if (NormalizerAttr norm = CuIRDialect::NormalizerAttrHelper(mctx).getAttr(t))
    ctx->normalizer = norm.getValue();
  if (keepsCausal(t))
    ctx->causal = true;
  FailureOr<KernelDiff> diff = diffKernels(t, s);
  if (failed(diff))
    return failure();
  ctx->diff = &*diff;
  ctx->halvedScoreSites = 0;
  for (std::unique_ptr<Patcher> &p : createPatchers())
    if (failed(p->patch(diff->of(p->getRewrite()), *ctx)))
      return failure();
  ctx->diff = nullptr;
  return lowerBlockMask(t, *ctx);
}

/// The manifest's "block_mask": the entries, the tiles and broadcast per
/// head dim, the parameters the mask reads and the list fields.
static nlohmann::ordered_json blockMaskManifest(const BlockMaskInfo &bm) {
  nlohmann::ordered_json tiles = nlohmann::ordered_json::array();
  for (const BlockMaskInfo::Tiles &t : bm.tiles) {
    nlohmann::ordered_json depends = nlohmann::ordered_json::array();
    if (t.perBatch)
      depends.push_back("batch");
    if (t.perHead)
      depends.push_back("heads");
    if (t.perKvHead)
      depends.push_back("kv_heads");
    tiles.push_back({{"head_dim", t.headDim},
                     {"block_m", t.blockM},
                     {"block_n", t.blockN},
                     {"depends", depends}});
  }
  nlohmann::ordered_json fields = nlohmann::ordered_json::object();
  for (const auto &[list, field] : bm.fields)
    fields[list] = field;
  return {{"entry", bm.entry},           {"dims_entry", bm.dimsEntry},
          {"attention_entry", bm.attentionEntry},
          {"mask", bm.symbol},           {"tiles", tiles},
          {"params", bm.params},         {"fields", fields}};
}

std::string Lowerer::manifest() const {
  // The loaders bind each field by its name, type, extent and, for values
  // captured from Python, its default.
  nlohmann::ordered_json m = {
      {"variant", ctx->variantSpec},
      {"normalizer", stringifyNormalizer(ctx->normalizer).str()},
      {"fields", nlohmann::ordered_json::array()},
      {"is_causal", ctx->causal ? 1 : 0}};
  for (const ParamField &f : ctx->fields) {
    nlohmann::ordered_json field = {
        {"name", f.name}, {"type", f.pytype}, {"extent", f.extent}};
    if (!f.blockMaskList.empty())
      field["list"] = f.blockMaskList;
    if (!f.gradOf.empty())
      field["param"] = f.gradOf;
    if (f.rowCentred)
      field["centred"] = "row-diagonal";
    if (!f.defaultValue.empty())
      field["default"] = f.defaultValue;
    if (!f.dtype.empty()) {
      field["dtype"] = f.dtype;
      field["shape"] = std::vector<int64_t>(f.shape.begin(), f.shape.end());
      field["strides"] =
          std::vector<int64_t>(f.strides.begin(), f.strides.end());
      if (f.tensorDefault)
        field["default"] = *f.tensorDefault;
    }
    m["fields"].push_back(field);
  }
  if (const std::optional<BlockMaskInfo> &bm = ctx->blockMask)
    m["block_mask"] = blockMaskManifest(*bm);
  return m.dump() + "\n";
}

/// The params header gains the variant's fields.
LogicalResult Lowerer::patchHeader(LoweredKernel &out, Location loc) const {
  SmallVector<std::string> dirs(opt.includeDirs.begin(), opt.includeDirs.end());
  SmallString<256> guess(llvm::sys::path::parent_path(sourcePath));
  llvm::sys::path::append(guess, "..", "include");
  dirs.push_back(std::string(guess));
  for (const std::string &d : dirs) {
    SmallString<256> h(d);
    llvm::sys::path::append(h, ctx->paramsHeader);
    if (llvm::sys::fs::exists(h)) {
      out.headerPath = std::string(h);
      break;
    }
  }
  if (out.headerPath.empty())
    return emitError(loc) << "the variant adds parameters, but "
                          << ctx->paramsHeader
                          << " was not found (add an include dir)";
  auto buf = llvm::MemoryBuffer::getFile(out.headerPath);
  if (!buf)
    return emitError(loc) << "cannot read " << out.headerPath;
  SourceText header((*buf)->getBuffer());
  SourcePatch hp(header);
  unsigned end = 0;
  for (unsigned l = 1; l <= header.numLines() && !end; ++l)
    if (header.line(l).contains("CUIR VARIANT PARAMETERS END"))
      for (unsigned k = l; k <= header.numLines() && !end; ++k)
        if (header.line(k).contains("*/"))
          end = k;
  if (!end)
    return emitError(loc) << out.headerPath
                          << " has no variant parameter section";
  std::string text =
      "  /* cuir: parameters of the variant '" + ctx->variantSpec + "' */";
  for (const ParamField &f : ctx->fields) {
    // A member the struct already has (softmax_scale): a declaration of
    // the name, outside comments.
    llvm::Regex member("(^|[^A-Za-z0-9_])" + f.name + "[ \t]*(;|=|,|\\[)");
    for (unsigned l = 1; l < end; ++l) {
      std::string line = header.line(l).split("//").first.str();
      for (size_t open; (open = line.find("/*")) != std::string::npos;) {
        size_t close = line.find("*/", open + 2);
        line.erase(open, close == std::string::npos ? std::string::npos
                                                    : close + 2 - open);
      }
      if (!StringRef(line).trim().starts_with("*") && member.match(line))
        return emitError(loc)
               << "the variant's parameter '" << f.name
               << "' has the name of a member that " << ctx->paramsHeader
               << " already has (line " << l << "): rename it";
    }
    std::string note = f.extent;
    if (!f.blockMaskList.empty())
      note = "block mask: " + f.blockMaskList + ", see cuir/block_mask.h";
    if (!f.dtype.empty()) {
      note = f.dtype;
      for (auto [k, d] : llvm::enumerate(f.shape))
        note += (k ? ", " : " [") + std::to_string(d);
      note += "], row-major";
    }
    text += "\n  " + f.ctype + f.name + ";" +
            (note.empty() ? ""
             : f.dtype.empty() && f.blockMaskList.empty()
                 ? "  /* [" + note + "] */"
                 : "  /* " + note + " */");
  }
  std::string conflict;
  hp.add({SourceEdit::InsertAfter, end, end, text, "", ""}, conflict);
  out.headerPatched = hp.render();
  return success();
}

FailureOr<LoweredKernel> Lowerer::run(ModuleOp target, ModuleOp source) {
  bool any = false;
  for (KernelOp t : target.getOps<KernelOp>()) {
    auto s = source.lookupSymbol<KernelOp>(t.getSymName());
    if (!s)
      return t.emitError() << "has no counterpart in the Source CuIR: "
                              "lowering patches the kernel it was lifted from";
    if (failed(openSource(t, s)) || failed(lowerKernel(t, s)))
      return failure();
    any = true;
  }
  if (!any)
    return emitError(target.getLoc())
           << "the module has no cuir.kernel to lower";
  // The block mask's section brings its own device helpers: after finish.
  if (failed(ctx->finish(helperLine, target.getLoc())) ||
      failed(finishBlockMasks(*ctx, target.getLoc())))
    return failure();
  LoweredKernel out;
  out.sourcePath = sourcePath;
  out.headerName = ctx->paramsHeader;
  out.patched = patch->render();
  out.manifest = manifest();
  if (!ctx->fields.empty() && failed(patchHeader(out, target.getLoc())))
    return failure();
  return out;
}

} // namespace

FailureOr<LoweredKernel>
mlir::cuir::lowerToSource(ModuleOp target, ModuleOp source,
                          const LoweringOptions &options) {
  return Lowerer(options).run(target, source);
}
