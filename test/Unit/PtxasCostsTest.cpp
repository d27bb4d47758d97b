//===- PtxasCostsTest.cpp - Reading ptxas -v's report ---------------------===//
//
// The warning lowering prints after ptxas rests on this reading: the largest
// stack frame and spill over the instantiations, and the C7514 count.
//
//===----------------------------------------------------------------------===//

#include "cuir/Lower/Lower.h"

#include "gtest/gtest.h"

using namespace mlir::cuir;

namespace {

TEST(PtxasCostsTest, CleanKernelHasNoCosts) {
  PtxasCosts costs = readPtxasCosts(
      "ptxas info    : Compiling entry function 'flash_fwd<true>' for 'sm_90a'\n"
      "ptxas info    : Function properties for flash_fwd<true>\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 168 registers\n");
  EXPECT_FALSE(costs.any());
}

TEST(PtxasCostsTest, TakesTheLargestOverInstantiations) {
  PtxasCosts costs = readPtxasCosts(
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "    360 bytes stack frame, 72 bytes spill stores, 72 bytes spill loads\n"
      "    40 bytes stack frame, 88 bytes spill stores, 88 bytes spill loads\n");
  EXPECT_TRUE(costs.any());
  EXPECT_EQ(costs.maxStackBytes, 360u);
  EXPECT_EQ(costs.maxSpillBytes, 88u);
  EXPECT_EQ(costs.serializedWgmma, 0u);
}

TEST(PtxasCostsTest, CountsSerialisedWgmma) {
  PtxasCosts costs = readPtxasCosts(
      "ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async "
      "instructions are serialized due to ...\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async "
      "instructions are serialized due to ...\n");
  EXPECT_TRUE(costs.any());
  EXPECT_EQ(costs.serializedWgmma, 2u);
  EXPECT_EQ(costs.maxStackBytes, 0u);
}

TEST(PtxasCostsTest, IgnoresOtherNumbers) {
  PtxasCosts costs = readPtxasCosts("ptxas info    : Used 255 registers, 1024 "
                                    "bytes smem, 528 bytes cmem[0]\n");
  EXPECT_FALSE(costs.any());
}

} // namespace
