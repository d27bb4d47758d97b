//===- Builtins.cpp - The built-in attention variants ---------------------===//
//
// Each built-in is written in CuIR, as a user's variant file would be. All
// masks align to the bottom-right corner like the source kernels' causal
// mask: query row q sits on key q + off, off = Nkv - Nq.
//
//===----------------------------------------------------------------------===//

#include "cuir/Variants/Variants.h"

#include "cuir/Support/OptionLocation.h"
#include "cuir/Support/ParamValue.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::cuir;

namespace {

struct Builtin {
  const char *name;
  const char *summary;
  const char *text;
};

const Builtin kBuiltins[] = {
    {"causal", "query q sees keys kv <= q + Nkv - Nq",
     R"(cuir.variant @causal(%Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %off = arith.subi %Nkv, %Nq : index
    %diag = arith.addi %q, %off : index
    %ok = arith.cmpi sle, %k, %diag : index
    cuir.yield %ok : i1
  }
})"},
    {"prefixlm", "keys before prefix_len[b] are visible to every query; the rest causally",
     R"(cuir.variant @prefixlm(%prefix_len: memref<?xi32, #cuir.mem<global>> {cuir.param = "prefix_len", cuir.extent = "batch"}, %Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %p = memref.load %prefix_len[%b] : memref<?xi32, #cuir.mem<global>>
    %prefix = arith.index_cast %p : i32 to index
    %in_prefix = arith.cmpi slt, %k, %prefix : index
    %off = arith.subi %Nkv, %Nq : index
    %diag = arith.addi %q, %off : index
    %causal = arith.cmpi sle, %k, %diag : index
    %ok = arith.ori %in_prefix, %causal : i1
    cuir.yield %ok : i1
  }
})"},
    {"softcap", "score -> softcap * tanh(score / softcap)",
     R"(cuir.variant @softcap(%softcap: f32 {cuir.param = "softcap"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %k: index):
    %x = arith.divf %s, %softcap : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %t, %softcap : f32
    cuir.yield %r : f32
  }
})"},
    {"sigmoid", "weights sigmoid(score + sigmoid_bias) instead of a softmax",
     R"(cuir.variant @sigmoid(%sigmoid_bias: f32 {cuir.param = "sigmoid_bias"}) normalizer sigmoid {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %k: index):
    %r = arith.addf %s, %sigmoid_bias : f32
    cuir.yield %r : f32
  }
})"},
    {"alibi", "score + alibi_slopes[h] * (kv - (q + Nkv - Nq))",
     R"(cuir.variant @alibi(%alibi_slopes: memref<?xf32, #cuir.mem<global>> {cuir.param = "alibi_slopes", cuir.extent = "heads"}, %Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %k: index):
    %slope = memref.load %alibi_slopes[%h] : memref<?xf32, #cuir.mem<global>>
    %off = arith.subi %Nkv, %Nq : index
    %diag = arith.addi %q, %off : index
    %d = arith.subi %k, %diag : index
    %di = arith.index_cast %d : index to i32
    %df = arith.sitofp %di : i32 to f32
    %bias = arith.mulf %slope, %df : f32
    %r = arith.addf %s, %bias : f32
    cuir.yield %r : f32
  }
})"},
    {"window", "keys within [q + off - window_left, q + off + window_right]",
     R"(cuir.variant @window(%window_left: i32 {cuir.param = "window_left"}, %window_right: i32 {cuir.param = "window_right"}, %Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %off = arith.subi %Nkv, %Nq : index
    %diag = arith.addi %q, %off : index
    %left = arith.index_cast %window_left : i32 to index
    %right = arith.index_cast %window_right : i32 to index
    %lo = arith.subi %diag, %left : index
    %hi = arith.addi %diag, %right : index
    %above = arith.cmpi sge, %k, %lo : index
    %below = arith.cmpi sle, %k, %hi : index
    %ok = arith.andi %above, %below : i1
    cuir.yield %ok : i1
  }
})"},
    {"global-window",
     "the first global_tokens keys and queries see everything; the rest a "
     "window [q + off - window_left, q + off + window_right]",
     R"(cuir.variant @global_window(%global_tokens: i32 {cuir.param = "global_tokens"}, %window_left: i32 {cuir.param = "window_left"}, %window_right: i32 {cuir.param = "window_right"}, %Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %off = arith.subi %Nkv, %Nq : index
    %diag = arith.addi %q, %off : index
    %g = arith.index_cast %global_tokens : i32 to index
    %global_key = arith.cmpi slt, %k, %g : index
    %global_query = arith.cmpi slt, %diag, %g : index
    %left = arith.index_cast %window_left : i32 to index
    %right = arith.index_cast %window_right : i32 to index
    %lo = arith.subi %diag, %left : index
    %hi = arith.addi %diag, %right : index
    %above = arith.cmpi sge, %k, %lo : index
    %below = arith.cmpi sle, %k, %hi : index
    %in_window = arith.andi %above, %below : i1
    %global = arith.ori %global_key, %global_query : i1
    %ok = arith.ori %global, %in_window : i1
    cuir.yield %ok : i1
  }
})"},
    {"document",
     "query q sees key kv of the same document: doc_ids[b * Nkv + q + off] "
     "== doc_ids[b * Nkv + kv] (jagged / packed sequences)",
     R"(cuir.variant @document(%doc_ids: memref<?xi32, #cuir.mem<global>> {cuir.param = "doc_ids", cuir.extent = "batch*kv"}, %Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %off = arith.subi %Nkv, %Nq : index
    %diag = arith.addi %q, %off : index
    // Rows and keys past the sequence (tile padding) read a valid id; the
    // kernel masks them anyway.
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %last = arith.subi %Nkv, %c1 : index
    %qpos = arith.maxsi %diag, %c0 : index
    %qc = arith.minsi %qpos, %last : index
    %kc = arith.minsi %k, %last : index
    %row = arith.muli %b, %Nkv : index
    %qi = arith.addi %row, %qc : index
    %ki = arith.addi %row, %kc : index
    %dq = memref.load %doc_ids[%qi] : memref<?xi32, #cuir.mem<global>>
    %dk = memref.load %doc_ids[%ki] : memref<?xi32, #cuir.mem<global>>
    %ok = arith.cmpi eq, %dq, %dk : i32
    cuir.yield %ok : i1
  }
})"},
};

const Builtin *findBuiltin(StringRef name) {
  for (const Builtin &b : kBuiltins)
    if (name == b.name)
      return &b;
  return nullptr;
}

/// A `{key=value}` default of a spec item, and where both start.
struct SpecDefault {
  StringRef key, value;
  size_t keyOffset, valueOffset;
};

/// One variant of a spec, `name{key=value ...}`.
struct SpecItem {
  StringRef name;
  size_t nameOffset;
  SmallVector<SpecDefault> defaults;
};

/// Reads a spec strictly: comma-separated names, each with an optional
/// `{key=value ...}`; braces balanced and not nested; no empty name, key or
/// value; nothing after a `}` but a comma.
class SpecParser {
public:
  explicit SpecParser(StringRef spec) : spec(spec) {}

  FailureOr<SmallVector<SpecItem>> parse(TextError &error) {
    SmallVector<SpecItem> items;
    while (true) {
      FailureOr<SpecItem> item = parseItem(error);
      if (failed(item))
        return failure();
      items.push_back(std::move(*item));
      skipSpaces();
      if (atEnd())
        return items;
      if (peek() == '}')
        return fail(error, "'}' closes no '{'");
      if (peek() != ',')
        return fail(error, "unexpected '" + Twine(peek()) + "' after '" +
                               items.back().name +
                               "': variants are separated by ','");
      ++pos;
    }
  }

private:
  FailureOr<SpecItem> parseItem(TextError &error) {
    skipSpaces();
    SpecItem item;
    item.nameOffset = pos;
    item.name = take(isNameChar);
    if (item.name.empty())
      return fail(error, atEnd() || peek() == ','
                             ? "empty variant name"
                             : "expected a variant name, not '" +
                                   Twine(peek()) + "'");
    skipSpaces();
    if (atEnd() || peek() != '{')
      return item;
    size_t open = pos++;
    while (true) {
      skipSpaces();
      if (atEnd()) {
        pos = open;
        return fail(error, "unterminated '{'");
      }
      if (peek() == '}') {
        ++pos;
        return item;
      }
      if (peek() == '{')
        return fail(error, "'{' inside '{...}'");
      StringRef key = take(isKeyChar);
      size_t keyOffset = pos - key.size();
      if (key.empty())
        return fail(error, "expected name=value, not '" + Twine(peek()) +
                               "'");
      if (atEnd() || peek() != '=') {
        pos = keyOffset;
        return fail(error, "'" + key + "' needs a value: " + key + "=<value>");
      }
      ++pos;
      if (!atEnd() && peek() == '{')
        return fail(error, "'{' inside '{...}'");
      StringRef value = take(isValueChar);
      if (value.empty())
        return fail(error, "'" + key + "' has no value");
      item.defaults.push_back({key, value, keyOffset, pos - value.size()});
    }
  }

  static bool isNameChar(char c) {
    return llvm::isAlnum(c) || c == '_' || c == '-';
  }
  static bool isKeyChar(char c) { return llvm::isAlnum(c) || c == '_'; }
  static bool isValueChar(char c) {
    return !llvm::isSpace(c) && c != '{' && c != '}';
  }

  bool atEnd() const { return pos >= spec.size(); }
  char peek() const { return spec[pos]; }
  void skipSpaces() {
    while (!atEnd() && llvm::isSpace(peek()))
      ++pos;
  }
  StringRef take(bool (*accept)(char)) {
    size_t start = pos;
    while (!atEnd() && accept(peek()))
      ++pos;
    return spec.slice(start, pos);
  }
  LogicalResult fail(TextError &error, const Twine &message) {
    error = {pos, message.str()};
    return failure();
  }

  StringRef spec;
  size_t pos = 0;
};

/// What a built-in's parameter means beyond its type.
enum class Range { NonNegative, Positive };
struct ParamRange {
  StringLiteral name;
  Range range;
  StringLiteral why;
};
const ParamRange kParamRanges[] = {
    {"window_left", Range::NonNegative, "a window counts keys"},
    {"window_right", Range::NonNegative, "a window counts keys"},
    {"global_tokens", Range::NonNegative, "it counts tokens"},
    {"softcap", Range::Positive, "scores are divided by it"},
};

/// Checks the default `text` of the parameter `name` of type `type`.
LogicalResult checkDefault(StringRef name, StringRef text, Type type,
                           TextError &error) {
  FailureOr<ParamValue> value = parseParamValue(text, error);
  if (failed(value) || failed(checkParamValue(*value, type, error)))
    return failure();
  for (const ParamRange &rule : kParamRanges) {
    if (rule.name != name)
      continue;
    for (auto [x, offset, written] :
         llvm::zip(value->numbers, value->offsets, value->texts)) {
      bool positive = rule.range == Range::Positive;
      if (positive ? x > 0 : x >= 0)
        continue;
      error = {offset, name.str() + "=" + written + ": it must be " +
                           (positive ? "positive" : "at least 0") + " (" +
                           rule.why.str() + ")"};
      return failure();
    }
  }
  return success();
}

} // namespace

std::vector<std::string> mlir::cuir::builtinVariantNames() {
  std::vector<std::string> names;
  for (const Builtin &b : kBuiltins)
    names.push_back(b.name);
  return names;
}

std::vector<BuiltinVariantInfo> mlir::cuir::getBuiltinVariants() {
  std::vector<BuiltinVariantInfo> all;
  for (const Builtin &b : kBuiltins)
    all.push_back({b.name, b.summary, b.text});
  return all;
}

bool mlir::cuir::isSizeParam(StringRef name) {
  return llvm::is_contained({StringRef("B"), StringRef("Hq"), StringRef("Hkv"),
                             StringRef("Nq"), StringRef("Nkv")},
                            name);
}

/// Sets `cuir.default` on the parameter `d.key` of `variant`, after
/// checking the value; errors point into the spec at `specLoc`.
static LogicalResult setDefault(VariantOp variant, const SpecDefault &d,
                                Location specLoc) {
  Block &body = variant.getBody().front();
  for (unsigned i = 0, e = body.getNumArguments(); i < e; ++i) {
    if (variant.getParamName(i) != d.key || isSizeParam(d.key))
      continue;
    TextError error;
    if (failed(checkDefault(d.key, d.value, body.getArgument(i).getType(),
                            error)))
      return emitError(shiftColumn(specLoc, d.valueOffset + error.offset))
             << "variant '" << variant.getSymName() << "': " << error.message;
    SmallVector<Attribute> dicts(variant.getArgAttrsAttr().begin(),
                                 variant.getArgAttrsAttr().end());
    NamedAttrList attrs(cast<DictionaryAttr>(dicts[i]));
    attrs.set(CuIRDialect::DefaultAttrHelper::getNameStr(), StringAttr::get(variant.getContext(), d.value));
    dicts[i] = attrs.getDictionary(variant.getContext());
    variant.setArgAttrsAttr(ArrayAttr::get(variant.getContext(), dicts));
    return success();
  }
  InFlightDiagnostic diag = emitError(shiftColumn(specLoc, d.keyOffset))
                            << "variant '" << variant.getSymName()
                            << "' has no parameter '" << d.key << "'";
  if (isSizeParam(d.key))
    diag << " (" << d.key << " is a size of the kernel, not a default)";
  diag << "; its parameters are:";
  bool any = false;
  for (unsigned i = 0, e = body.getNumArguments(); i < e; ++i) {
    if (isSizeParam(variant.getParamName(i)))
      continue;
    diag << " " << variant.getParamName(i);
    any = true;
  }
  if (!any)
    diag << " none";
  return diag;
}

/// Each variant once, each default once, and a parameter the composed
/// variants share given one value.
static LogicalResult checkRepeats(ArrayRef<SpecItem> items, Location specLoc) {
  llvm::StringMap<size_t> names;
  llvm::StringMap<const SpecDefault *> defaults;
  for (const SpecItem &item : items) {
    if (!names.try_emplace(item.name, item.nameOffset).second)
      return emitError(shiftColumn(specLoc, item.nameOffset))
             << "'" << item.name << "' is composed twice";
    llvm::StringSet<> keys;
    for (const SpecDefault &d : item.defaults) {
      if (!keys.insert(d.key).second)
        return emitError(shiftColumn(specLoc, d.keyOffset))
               << "'" << d.key << "' is given twice";
      auto [it, inserted] = defaults.try_emplace(d.key, &d);
      if (!inserted && it->second->value != d.value)
        return emitError(shiftColumn(specLoc, d.valueOffset))
               << "'" << d.key << "' is given two values, "
               << it->second->value << " and " << d.value
               << ": the composed variants share the parameter";
    }
  }
  return success();
}

FailureOr<VariantOp> mlir::cuir::buildVariantFromSpec(StringRef spec,
                                                      ModuleOp module,
                                                      Location loc) {
  MLIRContext *ctx = module.getContext();
  TextError error;
  FailureOr<SmallVector<SpecItem>> items = SpecParser(spec).parse(error);
  if (failed(items))
    return emitError(shiftColumn(loc, error.offset))
           << "invalid variant spec '" << spec << "': " << error.message;
  if (failed(checkRepeats(*items, loc)))
    return failure();
  SmallVector<VariantOp> parts;
  OpBuilder builder(ctx);
  builder.setInsertionPointToEnd(module.getBody());
  llvm::scope_exit eraseParts([&] {
    for (VariantOp p : parts)
      p.erase();
  });
  for (const SpecItem &item : *items) {
    const Builtin *builtin = findBuiltin(item.name);
    if (!builtin) {
      InFlightDiagnostic diag = emitError(shiftColumn(loc, item.nameOffset))
                                << "unknown variant '" << item.name
                                << "'; built-in variants:";
      for (const Builtin &b : kBuiltins)
        diag << " " << b.name;
      return diag << " (or give a variant file: --transfer=path/to/v.mlir)";
    }
    ParserConfig config(ctx);
    OwningOpRef<ModuleOp> parsed =
        parseSourceString<ModuleOp>(builtin->text, config, "builtin-variant");
    if (!parsed)
      return emitError(loc) << "internal error: built-in variant '"
                            << item.name << "' does not parse";
    auto variant = cast<VariantOp>(parsed->getBody()->front().clone());
    builder.insert(variant);
    parts.push_back(variant);
    for (const SpecDefault &d : item.defaults)
      if (failed(setDefault(variant, d, loc)))
        return failure();
  }
  if (parts.size() == 1) {
    eraseParts.release();
    return parts.front();
  }
  std::string name;
  for (VariantOp p : parts)
    name += (name.empty() ? "" : "_") + p.getSymName().str();
  return composeVariants(parts, name, module, loc);
}

FailureOr<VariantOp> mlir::cuir::composeVariants(ArrayRef<VariantOp> parts,
                                                 StringRef name,
                                                 ModuleOp module,
                                                 Location loc) {
  MLIRContext *ctx = module.getContext();
  // The union of the parameters, by name.
  SmallVector<Type> types;
  SmallVector<Attribute> attrs;
  llvm::StringMap<unsigned> index;
  Normalizer normalizer = Normalizer::Softmax;
  for (VariantOp part : parts) {
    if (part.getNormalizer() == Normalizer::Sigmoid)
      normalizer = Normalizer::Sigmoid;
    Block &body = part.getBody().front();
    for (unsigned i = 0, e = body.getNumArguments(); i < e; ++i) {
      StringRef pname = part.getParamName(i);
      Type t = body.getArgument(i).getType();
      auto it = index.find(pname);
      if (it != index.end()) {
        if (types[it->second] != t)
          return emitError(loc) << "parameter '" << pname
                                << "' has types " << types[it->second]
                                << " and " << t << " in the composed variants";
        continue;
      }
      index[pname] = types.size();
      types.push_back(t);
      attrs.push_back(part.getArgAttrsAttr()[i]);
    }
  }
  OpBuilder builder(ctx);
  builder.setInsertionPointToEnd(module.getBody());
  auto composed = VariantOp::create(
      builder, loc, StringAttr::get(ctx, name),
      TypeAttr::get(FunctionType::get(ctx, types, {})),
      NormalizerAttr::get(ctx, normalizer), ArrayAttr::get(ctx, attrs));
  Block *body = new Block();
  composed.getBody().push_back(body);
  for (Type t : types)
    body->addArgument(t, loc);

  // Chain the score functions and AND the masks, inside one score_mod and
  // one mask_mod whose arguments are the coordinates.
  Type f32 = builder.getF32Type(), idx = builder.getIndexType();
  auto makeMod = [&](bool score) -> Block * {
    builder.setInsertionPointToEnd(body);
    Operation *mod = score ? ScoreModOp::create(builder, loc).getOperation()
                           : MaskModOp::create(builder, loc).getOperation();
    Block *b = new Block();
    mod->getRegion(0).push_back(b);
    if (score)
      b->addArgument(f32, loc);
    for (int i = 0; i < 4; ++i)
      b->addArgument(idx, loc);
    return b;
  };
  bool anyScore = llvm::any_of(parts, [](VariantOp p) { return p.getScoreMod(); });
  bool anyMask = llvm::any_of(parts, [](VariantOp p) { return p.getMaskMod(); });
  Block *scoreBlock = anyScore ? makeMod(true) : nullptr;
  Block *maskBlock = anyMask ? makeMod(false) : nullptr;
  Value score = scoreBlock ? scoreBlock->getArgument(0) : Value();
  Value visible;
  for (VariantOp part : parts) {
    IRMapping map;
    Block &pbody = part.getBody().front();
    for (unsigned i = 0, e = pbody.getNumArguments(); i < e; ++i)
      map.map(pbody.getArgument(i),
              body->getArgument(index[part.getParamName(i)]));
    auto inlineMod = [&](Operation *mod, Block *into, ValueRange args) {
      Block &src = mod->getRegion(0).front();
      for (auto [from, to] : llvm::zip(src.getArguments(), args))
        map.map(from, to);
      builder.setInsertionPointToEnd(into);
      for (Operation &op : src.without_terminator())
        builder.clone(op, map);
      return map.lookup(src.getTerminator()->getOperand(0));
    };
    if (ScoreModOp s = part.getScoreMod()) {
      SmallVector<Value> args = {score};
      args.append(scoreBlock->getArguments().begin() + 1,
                  scoreBlock->getArguments().end());
      score = inlineMod(s, scoreBlock, args);
    }
    if (MaskModOp m = part.getMaskMod()) {
      Value v = inlineMod(m, maskBlock, maskBlock->getArguments());
      if (visible) {
        builder.setInsertionPointToEnd(maskBlock);
        v = arith::AndIOp::create(builder, loc, visible, v);
      }
      visible = v;
    }
  }
  if (scoreBlock) {
    builder.setInsertionPointToEnd(scoreBlock);
    YieldOp::create(builder, loc, score);
  }
  if (maskBlock) {
    builder.setInsertionPointToEnd(maskBlock);
    YieldOp::create(builder, loc, visible);
  }
  if (failed(composed.verify()))
    return failure();
  return composed;
}
