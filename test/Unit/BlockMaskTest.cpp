//===- BlockMaskTest.cpp - cuir.block_mask: building and classifying
//-------===//
//
// The lists the interpreter computes from a cuir.block_mask, against small
// cases worked out by hand and against a brute-force classification of a
// C++ restatement of each mask; and the op buildBlockMask makes from a
// kernel's mask condition.
//
//===----------------------------------------------------------------------===//

#include "cuir/Transfer/BlockMask.h"
#include "cuir/Transfer/Transfer.h"
#include "cuir/Variants/Variants.h"
#include "cuir/Interpreter/Interpreter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <functional>

using namespace mlir;
using namespace mlir::cuir;

namespace {

using Pred = std::function<bool(int64_t b, int64_t h, int64_t q, int64_t kv)>;

/// The eight lists by the definition, one pair at a time: the tile classes
/// of DESIGN §9, rows in descending tile order.
BlockMaskLists bruteForce(const Pred &visible, int64_t B, int64_t H, int64_t Nq,
                          int64_t Nkv, int64_t bm, int64_t bn) {
  BlockMaskLists l;
  l.batches = B;
  l.heads = H;
  l.qBlocks = (Nq + bm - 1) / bm;
  l.kvBlocks = (Nkv + bn - 1) / bn;
  int64_t QB = l.qBlocks, KB = l.kvBlocks;
  // 0 empty, 1 partial, 2 full.
  auto cls = [&](int64_t b, int64_t h, int64_t m, int64_t n) {
    int64_t seen = 0, all = 0;
    bool ragged = false;
    for (int64_t q = m * bm; q < (m + 1) * bm; ++q)
      for (int64_t kv = n * bn; kv < (n + 1) * bn; ++kv) {
        if (q >= Nq || kv >= Nkv) {
          ragged = true;
          continue;
        }
        ++all;
        seen += visible(b, h, q, kv);
      }
    return seen == 0 ? 0 : (!ragged && seen == all) ? 2 : 1;
  };
  l.kvNumBlocks.assign(B * H * QB, 0);
  l.fullKvNumBlocks.assign(B * H * QB, 0);
  l.kvIndices.assign(B * H * QB * KB, 0);
  l.fullKvIndices.assign(B * H * QB * KB, 0);
  l.qNumBlocks.assign(B * H * KB, 0);
  l.fullQNumBlocks.assign(B * H * KB, 0);
  l.qIndices.assign(B * H * KB * QB, 0);
  l.fullQIndices.assign(B * H * KB * QB, 0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      int64_t bh = b * H + h;
      for (int64_t m = 0; m < QB; ++m)
        for (int64_t n = KB - 1; n >= 0; --n) {
          int c = cls(b, h, m, n);
          int64_t r = bh * QB + m;
          if (c == 1)
            l.kvIndices[r * KB + l.kvNumBlocks[r]++] = n;
          if (c == 2)
            l.fullKvIndices[r * KB + l.fullKvNumBlocks[r]++] = n;
          ++(c == 0 ? l.emptyTiles : c == 1 ? l.partialTiles : l.fullTiles);
        }
      for (int64_t n = 0; n < KB; ++n)
        for (int64_t m = QB - 1; m >= 0; --m) {
          int c = cls(b, h, m, n);
          int64_t r = bh * KB + n;
          if (c == 1)
            l.qIndices[r * QB + l.qNumBlocks[r]++] = m;
          if (c == 2)
            l.fullQIndices[r * QB + l.fullQNumBlocks[r]++] = m;
        }
      // q_order: selection of the heaviest remaining tile, the last on ties.
      std::vector<bool> taken(QB, false);
      for (int64_t rank = 0; rank < QB; ++rank) {
        int64_t best = -1, bestTiles = -1;
        for (int64_t m = QB - 1; m >= 0; --m) {
          int64_t t =
              l.kvNumBlocks[bh * QB + m] + l.fullKvNumBlocks[bh * QB + m];
          if (!taken[m] && t > bestTiles) {
            best = m;
            bestTiles = t;
          }
        }
        taken[best] = true;
        l.qOrder.push_back(static_cast<int32_t>(best));
      }
    }
  return l;
}

void expectSame(const BlockMaskLists &got, const BlockMaskLists &want) {
  EXPECT_EQ(got.batches, want.batches);
  EXPECT_EQ(got.heads, want.heads);
  EXPECT_EQ(got.qBlocks, want.qBlocks);
  EXPECT_EQ(got.kvBlocks, want.kvBlocks);
  EXPECT_EQ(got.kvNumBlocks, want.kvNumBlocks);
  EXPECT_EQ(got.kvIndices, want.kvIndices);
  EXPECT_EQ(got.fullKvNumBlocks, want.fullKvNumBlocks);
  EXPECT_EQ(got.fullKvIndices, want.fullKvIndices);
  EXPECT_EQ(got.qNumBlocks, want.qNumBlocks);
  EXPECT_EQ(got.qIndices, want.qIndices);
  EXPECT_EQ(got.fullQNumBlocks, want.fullQNumBlocks);
  EXPECT_EQ(got.fullQIndices, want.fullQIndices);
  EXPECT_EQ(got.qOrder, want.qOrder);
  EXPECT_EQ(got.emptyTiles, want.emptyTiles);
  EXPECT_EQ(got.partialTiles, want.partialTiles);
  EXPECT_EQ(got.fullTiles, want.fullTiles);
}

class BlockMaskTest : public ::testing::Test {
protected:
  BlockMaskTest() {
    context.loadDialect<CuIRDialect, arith::ArithDialect, memref::MemRefDialect,
                        scf::SCFDialect, tensor::TensorDialect,
                        math::MathDialect>();
  }

  /// Parses `text` (one module) and returns its first block mask.
  BlockMaskOp parseMask(StringRef text) {
    module = parseSourceString<ModuleOp>(text, &context);
    if (!module)
      return {};
    auto masks = module->getOps<BlockMaskOp>();
    return masks.empty() ? BlockMaskOp() : *masks.begin();
  }

  FailureOr<BlockMaskLists>
  lists(BlockMaskOp mask, int64_t B, int64_t Hq, int64_t Nq, int64_t Nkv,
        std::map<std::string, std::string> params = {}) {
    InterpreterOptions opt;
    opt.batch = B;
    opt.headsQ = opt.headsKV = Hq;
    opt.seqQ = Nq;
    opt.seqKV = Nkv;
    opt.params = std::move(params);
    return computeBlockMaskLists(mask, opt);
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

constexpr StringLiteral kCausal = R"mlir(
cuir.block_mask @causal() tiles 2 x 2 coords(%b, %h, %q, %kv) {
  %v = arith.cmpi ule, %kv, %q : index
  cuir.yield %v : i1
})mlir";

// 4 x 4 pairs in 2 x 2 tiles: the diagonal tiles are partial, (1, 0) full,
// (0, 1) empty.
TEST_F(BlockMaskTest, CausalByHand) {
  BlockMaskOp mask = parseMask(kCausal);
  ASSERT_TRUE(mask);
  FailureOr<BlockMaskLists> l = lists(mask, 2, 3, 4, 4);
  ASSERT_TRUE(succeeded(l));
  // Neither b nor h is read: one broadcast row per query tile.
  EXPECT_EQ(l->batches, 1);
  EXPECT_EQ(l->heads, 1);
  EXPECT_EQ(l->kvNumBlocks, (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(l->kvIndices, (std::vector<int32_t>{0, 0, 1, 0}));
  EXPECT_EQ(l->fullKvNumBlocks, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(l->fullKvIndices, (std::vector<int32_t>{0, 0, 0, 0}));
  EXPECT_EQ(l->qNumBlocks, (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(l->qIndices, (std::vector<int32_t>{0, 0, 1, 0}));
  EXPECT_EQ(l->fullQNumBlocks, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(l->fullQIndices, (std::vector<int32_t>{1, 0, 0, 0}));
  // Query tile 1 sees two tiles, tile 0 one.
  EXPECT_EQ(l->qOrder, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(l->partialTiles, 2);
  EXPECT_EQ(l->fullTiles, 1);
  EXPECT_EQ(l->emptyTiles, 1);
}

// Nq = 5, Nkv = 3 in 2 x 2 tiles, every pair visible: only the two tiles
// with all four pairs in range are full, the ragged ones partial, in
// descending order.
TEST_F(BlockMaskTest, RaggedTilesAreNeverFull) {
  BlockMaskOp mask = parseMask(R"mlir(
cuir.block_mask @all() tiles 2 x 2 coords(%b, %h, %q, %kv) {
  %t = arith.constant true
  cuir.yield %t : i1
})mlir");
  ASSERT_TRUE(mask);
  FailureOr<BlockMaskLists> l = lists(mask, 1, 1, 5, 3);
  ASSERT_TRUE(succeeded(l));
  EXPECT_EQ(l->qBlocks, 3);
  EXPECT_EQ(l->kvBlocks, 2);
  EXPECT_EQ(l->kvNumBlocks, (std::vector<int32_t>{1, 1, 2}));
  EXPECT_EQ(l->kvIndices, (std::vector<int32_t>{1, 0, 1, 0, 1, 0}));
  EXPECT_EQ(l->fullKvNumBlocks, (std::vector<int32_t>{1, 1, 0}));
  EXPECT_EQ(l->fullKvIndices, (std::vector<int32_t>{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(l->fullQNumBlocks, (std::vector<int32_t>{2, 0}));
  EXPECT_EQ(l->fullQIndices, (std::vector<int32_t>{1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(l->qNumBlocks, (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(l->qIndices, (std::vector<int32_t>{2, 0, 0, 2, 1, 0}));
}

// Documents: ids per (batch, key), so the lists are per batch.
TEST_F(BlockMaskTest, DocumentMaskPerBatch) {
  BlockMaskOp mask = parseMask(R"mlir(
cuir.block_mask @docs(%ids: memref<?xi32, #cuir.mem<global>> {cuir.arg = "param:doc_ids", cuir.extent = "batch*kv"},
                      %Nkv: index {cuir.arg = "Nkv"})
    tiles 4 x 4 depends [batch] coords(%b, %h, %q, %kv) {
  %row = arith.muli %b, %Nkv : index
  %iq = arith.addi %row, %q : index
  %ik = arith.addi %row, %kv : index
  %dq = memref.load %ids[%iq] : memref<?xi32, #cuir.mem<global>>
  %dk = memref.load %ids[%ik] : memref<?xi32, #cuir.mem<global>>
  %same = arith.cmpi eq, %dq, %dk : i32
  cuir.yield %same : i1
})mlir");
  ASSERT_TRUE(mask);
  // Batch 0: documents of 3, 5 and 6 tokens; batch 1: 8, 1 and 5.
  std::vector<int> ids = {0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2,
                          0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 2, 2, 2, 2};
  std::string text;
  for (int id : ids)
    text += (text.empty() ? "" : ",") + std::to_string(id);
  FailureOr<BlockMaskLists> l = lists(mask, 2, 2, 14, 14, {{"doc_ids", text}});
  ASSERT_TRUE(succeeded(l));
  Pred same = [&](int64_t b, int64_t, int64_t q, int64_t kv) {
    return ids[b * 14 + q] == ids[b * 14 + kv];
  };
  expectSame(*l, bruteForce(same, 2, 1, 14, 14, 4, 4));
  // Batch 1's first tile is one document: full; batch 0's is not.
  EXPECT_EQ(l->fullKvNumBlocks[0], 0);
  EXPECT_EQ(l->fullKvNumBlocks[4], 2);
}

// A window spelled as a user writes it in Python, on i32 after casts:
// (q >= kv) & (q - kv < W).
TEST_F(BlockMaskTest, SlidingWindow) {
  BlockMaskOp mask = parseMask(R"mlir(
cuir.block_mask @window(%w: i32 {cuir.arg = "param:window"})
    tiles 4 x 2 coords(%b, %h, %q, %kv) {
  %qi = arith.index_cast %q : index to i32
  %ki = arith.index_cast %kv : index to i32
  %causal = arith.cmpi sge, %qi, %ki : i32
  %d = arith.subi %qi, %ki : i32
  %near = arith.cmpi slt, %d, %w : i32
  %v = arith.andi %causal, %near : i1
  cuir.yield %v : i1
})mlir");
  ASSERT_TRUE(mask);
  FailureOr<BlockMaskLists> l = lists(mask, 3, 2, 19, 23, {{"window", "8"}});
  ASSERT_TRUE(succeeded(l));
  Pred window = [](int64_t, int64_t, int64_t q, int64_t kv) {
    return q >= kv && q - kv < 8;
  };
  expectSame(*l, bruteForce(window, 1, 1, 19, 23, 4, 2));
  // Tiles (m, n) with 4m - 2n in {2, 4} lie inside the band.
  EXPECT_GT(l->fullTiles, 0);
  EXPECT_GT(l->emptyTiles, 0);
}

// A mask that reads the head: one set of lists per query head, none per
// batch.
TEST_F(BlockMaskTest, PerHeadMask) {
  BlockMaskOp mask = parseMask(R"mlir(
cuir.block_mask @stride() tiles 4 x 4 depends [heads] coords(%b, %h, %q, %kv) {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %hp = arith.addi %h, %c1 : index
  %r = arith.remui %kv, %hp : index
  %c0 = arith.constant 0 : index
  %on = arith.cmpi eq, %r, %c0 : index
  %c8 = arith.constant 8 : index
  %early = arith.cmpi ult, %kv, %c8 : index
  %v = arith.ori %on, %early : i1
  cuir.yield %v : i1
})mlir");
  ASSERT_TRUE(mask);
  FailureOr<BlockMaskLists> l = lists(mask, 2, 3, 9, 17);
  ASSERT_TRUE(succeeded(l));
  Pred stride = [](int64_t, int64_t h, int64_t, int64_t kv) {
    return kv % (h + 1) == 0 || kv < 8;
  };
  expectSame(*l, bruteForce(stride, 1, 3, 9, 17, 4, 4));
  // Head 0 sees every key: its full query tiles have every full KV tile.
  EXPECT_EQ(l->fullKvNumBlocks[0], 4);
  EXPECT_EQ(l->fullKvNumBlocks[3 + 0], 2);
}

// `depends [batch]` on a mask that does not read b: the lists are per batch
// (and equal).
TEST_F(BlockMaskTest, ListedButUnreadDimension) {
  BlockMaskOp mask = parseMask(R"mlir(
cuir.block_mask @causal() tiles 2 x 2 depends [batch] coords(%b, %h, %q, %kv) {
  %v = arith.cmpi ule, %kv, %q : index
  cuir.yield %v : i1
})mlir");
  ASSERT_TRUE(mask);
  FailureOr<BlockMaskLists> l = lists(mask, 2, 1, 4, 4);
  ASSERT_TRUE(succeeded(l));
  Pred causal = [](int64_t, int64_t, int64_t q, int64_t kv) { return kv <= q; };
  expectSame(*l, bruteForce(causal, 2, 1, 4, 4, 2, 2));
}

TEST_F(BlockMaskTest, MissingParameterIsAnError) {
  BlockMaskOp mask = parseMask(R"mlir(
cuir.block_mask @window(%w: i32 {cuir.arg = "param:window"})
    tiles 4 x 4 coords(%b, %h, %q, %kv) {
  %qi = arith.index_cast %q : index to i32
  %v = arith.cmpi slt, %qi, %w : i32
  cuir.yield %v : i1
})mlir");
  ASSERT_TRUE(mask);
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  EXPECT_TRUE(failed(lists(mask, 1, 1, 8, 8)));
  EXPECT_NE(message.find("'window' needs a value"), std::string::npos)
      << message;
}

//===----------------------------------------------------------------------===//
// buildBlockMask
//===----------------------------------------------------------------------===//

/// A kernel whose variant scores mask by documents, reading clamped
/// coordinates (as transfer writes them), a constant and a size computed
/// outside the region. `@MASK@` is replaced by the yielded condition.
constexpr StringLiteral kDocKernel = R"mlir(
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
cuir.kernel @k(%ids: memref<?xi32, #cuir.mem<global>> {cuir.arg = "param:doc_ids", cuir.extent = "batch*kv"},
               %Nq: index {cuir.arg = "Nq"}, %Nkv: index {cuir.arg = "Nkv"},
               %n: index {cuir.arg = "B"})
    grid (d0, d1, d2) -> (d0) threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %ninf = arith.constant 0xFF800000 : f32
  %z = arith.constant dense<0.0> : tensor<64x64xf32, #ACC>
  %last_kv = arith.subi %Nkv, %c1 {cuir.change = #cuir.change<split>} : index
  %bx = cuir.block_id x
  scf.for %j = %c0 to %c1 step %c1 {
    %kv0 = arith.muli %j, %c64 : index
    %s = cuir.elementwise (%z) at [%c0, %c0, %c0, %kv0]
        : (tensor<64x64xf32, #ACC>) -> tensor<64x64xf32, #ACC> {
    ^bb0(%x: f32, %b: index, %h: index, %q: index, %kv: index):
      %last_q = arith.subi %Nq, %c1 : index
      %qc = arith.minsi %q, %last_q : index
      %kc = arith.minsi %kv, %last_kv : index
      %row = arith.muli %b, %Nkv : index
      %iq = arith.addi %row, %qc : index
      %ik = arith.addi %row, %kc : index
      %dq = memref.load %ids[%iq] : memref<?xi32, #cuir.mem<global>>
      %dk = memref.load %ids[%ik] : memref<?xi32, #cuir.mem<global>>
      %same = arith.cmpi eq, %dq, %dk : i32
      %pos = arith.cmpf ogt, %x, %ninf : f32
      %tile = arith.cmpi ult, %kv, %kv0 : index
      %block = arith.cmpi ult, %kv, %bx : index
      %vis = @MASK@
      %r = arith.select %vis, %x, %ninf : f32
      cuir.yield %r : f32
    }
  }
  cuir.return
}
)mlir";

/// Whether an op of `mask` carries a cuir.change (copied from what it was
/// cloned from).
bool hasRecordedChange(BlockMaskOp mask) {
  bool found = false;
  mask.getBody().walk([&](Operation *op) { found |= !!getChange(op); });
  return found;
}

class BuildBlockMaskTest : public BlockMaskTest {
protected:
  /// Parses kDocKernel with `mask` as its condition and builds the block
  /// mask; `error` gets the diagnostics.
  FailureOr<BlockMaskOp> build(StringRef mask, std::string &error,
                               StringRef extra = "") {
    std::string text = kDocKernel.str();
    text.replace(text.find("@MASK@"), 6, mask.str());
    module = parseSourceString<ModuleOp>(text + extra.str(), &context);
    if (!module)
      return failure();
    kernel = *module->getOps<KernelOp>().begin();
    ElementwiseOp ew;
    kernel.walk([&](ElementwiseOp op) { ew = op; });
    auto yield = cast<YieldOp>(ew.getBody().front().getTerminator());
    auto sel = yield.getValues()[0].getDefiningOp<arith::SelectOp>();
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      error += d.str() + "\n";
      for (Diagnostic &note : d.getNotes())
        error += "note: " + note.str() + "\n";
      return success();
    });
    IRRewriter rewriter(&context);
    return buildBlockMask(rewriter, kernel, sel.getCondition(),
                          ew.getCoordArg(0), ew.getCoordArg(1),
                          ew.getCoordArg(2), ew.getCoordArg(3), 16, 8);
  }

  KernelOp kernel;
};

TEST_F(BuildBlockMaskTest, DocumentMask) {
  std::string error;
  FailureOr<BlockMaskOp> mask = build("arith.andi %same, %same : i1", error);
  ASSERT_TRUE(succeeded(mask)) << error;
  EXPECT_EQ(mask->getSymName(), "k_blocks");
  EXPECT_EQ(mask->getBlockM(), 16);
  EXPECT_EQ(mask->getBlockN(), 8);
  EXPECT_TRUE(mask->dependsOnBatch());
  EXPECT_FALSE(mask->dependsOnHeads());
  // The kernel arguments it reads, not B; in the order the slice meets them.
  std::vector<std::string> roles;
  for (unsigned i = 0; i < mask->getNumMaskArgs(); ++i)
    roles.push_back(mask->getArgRole(i).str());
  std::sort(roles.begin(), roles.end());
  EXPECT_EQ(roles, (std::vector<std::string>{"Nkv", "Nq", "param:doc_ids"}));
  for (unsigned i = 0; i < mask->getNumMaskArgs(); ++i)
    if (mask->getArgRole(i) == "param:doc_ids")
      EXPECT_EQ(cast<DictionaryAttr>(mask->getArgAttrsAttr()[i])
                    .getAs<StringAttr>("cuir.extent")
                    .getValue(),
                "batch*kv");
  // Placed after the kernel, which names it.
  EXPECT_EQ(kernel->getNextNode(), mask->getOperation());
  EXPECT_EQ(getBlockMask(kernel), *mask);
  // The constant and the size computed outside the region are cloned in:
  // Nq - 1 and Nkv - 1, both of the constant 1.
  int subs = 0, ones = 0;
  mask->walk([&](Operation *op) {
    subs += isa<arith::SubIOp>(op);
    ones += matchPattern(op, m_One());
  });
  EXPECT_EQ(subs, 2);
  EXPECT_EQ(ones, 1);
  EXPECT_FALSE(hasRecordedChange(*mask));
  EXPECT_TRUE(succeeded(verify(*mask)));

  // What it computes: the documents, at every in-range pair.
  std::vector<int> ids = {0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2,
                          2, 2, 2, 2, 3, 3, 0, 1, 1, 1, 1, 1, 1, 1,
                          1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  std::string text;
  for (int id : ids)
    text += (text.empty() ? "" : ",") + std::to_string(id);
  FailureOr<BlockMaskLists> l = lists(*mask, 2, 1, 20, 20, {{"doc_ids", text}});
  ASSERT_TRUE(succeeded(l));
  Pred same = [&](int64_t b, int64_t, int64_t q, int64_t kv) {
    return ids[b * 20 + q] == ids[b * 20 + kv];
  };
  expectSame(*l, bruteForce(same, 2, 1, 20, 20, 16, 8));
}

TEST_F(BuildBlockMaskTest, SymbolIsUnique) {
  std::string error;
  FailureOr<BlockMaskOp> mask = build(
      "arith.andi %same, %same : i1", error,
      "cuir.block_mask @k_blocks() tiles 1 x 1 coords(%b, %h, %q, %kv) {\n"
      "  %t = arith.constant true\n  cuir.yield %t : i1\n}\n");
  ASSERT_TRUE(succeeded(mask)) << error;
  EXPECT_EQ(mask->getSymName(), "k_blocks_1");
  EXPECT_EQ(getBlockMask(kernel), *mask);
}

TEST_F(BuildBlockMaskTest, ScoreIsNotAKernelArgument) {
  std::string error;
  EXPECT_TRUE(failed(build("arith.andi %same, %pos : i1", error)));
  EXPECT_NE(error.find("the mask reads argument #0 of a 'cuir.elementwise' "
                       "region (an element of its input tiles), which is not "
                       "a kernel argument"),
            std::string::npos)
      << error;
  EXPECT_FALSE(kernel->hasAttr("cuir.block_mask"));
  EXPECT_TRUE(module->getOps<BlockMaskOp>().empty());
}

TEST_F(BuildBlockMaskTest, LoopValueIsNotAKernelArgument) {
  std::string error;
  EXPECT_TRUE(failed(build("arith.andi %same, %tile : i1", error)));
  EXPECT_NE(error.find("the mask reads argument #0 of a 'scf.for' region, "
                       "which is not a kernel argument"),
            std::string::npos)
      << error;
}

TEST_F(BuildBlockMaskTest, BlockIdIsNotAKernelArgument) {
  std::string error;
  EXPECT_TRUE(failed(build("arith.andi %same, %block : i1", error)));
  EXPECT_NE(error.find("the mask reads the result of 'cuir.block_id', which "
                       "is not a kernel argument"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("note: defined here"), std::string::npos) << error;
}

//===----------------------------------------------------------------------===//
// buildBlockMask on kernels that transfer gave a variant
//===----------------------------------------------------------------------===//

class TransferredMaskTest : public BlockMaskTest {
protected:
  /// The pass tests' FA2 kernel (64 x 32 tiles) transferred to `spec`, and
  /// the block mask of its first variant-scores op.
  FailureOr<BlockMaskOp> transferAndBuild(StringRef spec) {
    module = parseSourceFile<ModuleOp>(
        CUIR_TEST_DIR "/Passes/transfer/Inputs/attention.mlir", &context);
    if (!module)
      return failure();
    auto kernel = *module->getOps<KernelOp>().begin();
    FailureOr<VariantOp> variant =
        buildVariantFromSpec(spec, *module, kernel.getLoc());
    if (failed(variant) || failed(transferKernel(kernel, *variant, spec)))
      return failure();
    ElementwiseOp scores;
    kernel.walk([&](ElementwiseOp ew) {
      if (!scores && ew->hasAttr("cuir.variant_scores"))
        scores = ew;
    });
    if (!scores)
      return failure();
    // The mask is the select of a score to -inf (what the split reads).
    Value y = scores.getBody().front().getTerminator()->getOperand(0);
    auto sel = y.getDefiningOp<arith::SelectOp>();
    if (!sel)
      return failure();
    IRRewriter rewriter(&context);
    return buildBlockMask(rewriter, kernel, sel.getCondition(),
                          scores.getCoordArg(0), scores.getCoordArg(1),
                          scores.getCoordArg(2), scores.getCoordArg(3), 64,
                          32);
  }
};

std::string join(const std::vector<int> &values) {
  std::string text;
  for (int v : values)
    text += (text.empty() ? "" : ",") + std::to_string(v);
  return text;
}

// Documents, Nq != Nkv: query q stands at key position q + Nkv - Nq.
TEST_F(TransferredMaskTest, Document) {
  FailureOr<BlockMaskOp> mask = transferAndBuild("document");
  ASSERT_TRUE(succeeded(mask));
  EXPECT_TRUE(mask->dependsOnBatch());
  EXPECT_FALSE(mask->dependsOnHeads());
  EXPECT_TRUE(succeeded(verify(*mask)));
  const int64_t B = 2, Nq = 90, Nkv = 150;
  std::vector<int> ids;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t kv = 0; kv < Nkv; ++kv)
      ids.push_back(b == 0 ? kv / 40 : (kv < 7 ? 0 : kv < 140 ? 1 : 2));
  FailureOr<BlockMaskLists> l =
      lists(*mask, B, 2, Nq, Nkv, {{"doc_ids", join(ids)}});
  ASSERT_TRUE(succeeded(l));
  Pred same = [&](int64_t b, int64_t, int64_t q, int64_t kv) {
    return ids[b * Nkv + q + Nkv - Nq] == ids[b * Nkv + kv];
  };
  expectSame(*l, bruteForce(same, B, 1, Nq, Nkv, 64, 32));
  EXPECT_GT(l->fullTiles, 0);
  EXPECT_GT(l->emptyTiles, 0);
}

TEST_F(TransferredMaskTest, PrefixLM) {
  FailureOr<BlockMaskOp> mask = transferAndBuild("prefixlm");
  ASSERT_TRUE(succeeded(mask));
  const int64_t Nq = 100, Nkv = 130;
  FailureOr<BlockMaskLists> l =
      lists(*mask, 3, 1, Nq, Nkv, {{"prefix_len", "0,50,129"}});
  ASSERT_TRUE(succeeded(l));
  int prefix[] = {0, 50, 129};
  Pred visible = [&](int64_t b, int64_t, int64_t q, int64_t kv) {
    return kv < prefix[b] || kv <= q + Nkv - Nq;
  };
  expectSame(*l, bruteForce(visible, 3, 1, Nq, Nkv, 64, 32));
}

// Neither b nor h: the lists broadcast.
TEST_F(TransferredMaskTest, GlobalWindow) {
  FailureOr<BlockMaskOp> mask = transferAndBuild("global-window");
  ASSERT_TRUE(succeeded(mask));
  EXPECT_FALSE(mask->dependsOnBatch());
  EXPECT_FALSE(mask->dependsOnHeads());
  const int64_t Nq = 200, Nkv = 200;
  FailureOr<BlockMaskLists> l =
      lists(*mask, 2, 2, Nq, Nkv,
            {{"global_tokens", "8"}, {"window_left", "40"},
             {"window_right", "0"}});
  ASSERT_TRUE(succeeded(l));
  Pred visible = [&](int64_t, int64_t, int64_t q, int64_t kv) {
    return kv < 8 || q < 8 || (kv >= q - 40 && kv <= q);
  };
  expectSame(*l, bruteForce(visible, 1, 1, Nq, Nkv, 64, 32));
}

} // namespace
