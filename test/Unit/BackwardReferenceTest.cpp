//===- BackwardReferenceTest.cpp - The interpreter's float64 backward -----===//
//
// builtinBackward is checked against central differences of the built-in
// forward: dX = d(sum(O * dO)) / dX for every input element, at a GQA,
// causal, ragged shape, including rows that see no key.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace mlir::cuir::interp;

namespace {

Problem randomProblem(int64_t Hq, int64_t Hkv, int64_t Nq, int64_t Nkv,
                      bool causal) {
  Problem p{};
  p.B = 1;
  p.Hq = Hq;
  p.Hkv = Hkv;
  p.Nq = Nq;
  p.Nkv = Nkv;
  p.d = 4;
  p.causal = causal;
  p.scale = 0.5f;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  for (auto [v, n] : {std::pair(&p.q, Nq * Hq), std::pair(&p.k, Nkv * Hkv),
                      std::pair(&p.v, Nkv * Hkv), std::pair(&p.dO, Nq * Hq)}) {
    v->resize(n * p.d);
    for (float &x : *v)
      x = normal(rng);
  }
  return p;
}

/// sum(O * dO), the loss whose gradients builtinBackward gives.
double loss(const Problem &p) {
  Output o = builtinReference(p);
  double l = 0;
  for (size_t e = 0; e < o.o.size(); ++e)
    l += o.o[e] * double(p.dO[e]);
  return l;
}

/// Compares `grad` with central differences of the loss in `input`.
void expectMatchesDifferences(Problem p, std::vector<float> Problem::*input,
                              const std::vector<double> &grad) {
  ASSERT_EQ((p.*input).size(), grad.size());
  for (size_t e = 0; e < grad.size(); ++e) {
    float x = (p.*input)[e];
    float hi = x + 1e-2f, lo = x - 1e-2f;
    (p.*input)[e] = hi;
    double lHi = loss(p);
    (p.*input)[e] = lo;
    double lLo = loss(p);
    (p.*input)[e] = x;
    EXPECT_NEAR(grad[e], (lHi - lLo) / (double(hi) - double(lo)), 1e-3)
        << "element " << e;
  }
}

TEST(BuiltinBackward, MatchesDifferencesWithGqaAndCausalMask) {
  Problem p = randomProblem(/*Hq=*/2, /*Hkv=*/1, /*Nq=*/3, /*Nkv=*/5,
                            /*causal=*/true);
  Gradients g = builtinBackward(p, builtinReference(p));
  expectMatchesDifferences(p, &Problem::q, g.dq);
  expectMatchesDifferences(p, &Problem::k, g.dk);
  expectMatchesDifferences(p, &Problem::v, g.dv);
}

TEST(BuiltinBackward, RowsThatSeeNoKeyHaveZeroDq) {
  // Causal with Nq = 5 > Nkv = 2: rows 0..2 see no key.
  Problem p = randomProblem(/*Hq=*/1, /*Hkv=*/1, /*Nq=*/5, /*Nkv=*/2,
                            /*causal=*/true);
  Gradients g = builtinBackward(p, builtinReference(p));
  for (int64_t e = 0; e < 3 * p.d; ++e)
    EXPECT_EQ(g.dq[e], 0.0) << "element " << e;
  expectMatchesDifferences(p, &Problem::q, g.dq);
  expectMatchesDifferences(p, &Problem::k, g.dk);
  expectMatchesDifferences(p, &Problem::v, g.dv);
}

TEST(ReferenceMetaJson, MarksBackwardProblems) {
  Problem p = randomProblem(1, 1, 1, 1, false);
  p.params = nlohmann::json::object();
  nlohmann::json meta = nlohmann::json::parse(referenceMetaJson(p));
  EXPECT_EQ(meta["backward"], true);
  p.dO.clear();
  meta = nlohmann::json::parse(referenceMetaJson(p));
  EXPECT_FALSE(meta.contains("backward"));
}

} // namespace
