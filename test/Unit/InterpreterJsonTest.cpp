//===- InterpreterJsonTest.cpp - JSON the interpreter writes --------------===//
//
// The reference's meta.json carries parameter names and values that no
// variant could hold (the library takes any InterpreterOptions::params), so
// the escaping is tested on the writer itself.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"

#include "gtest/gtest.h"

using namespace mlir::cuir::interp;

namespace {

Problem problemWithParams(nlohmann::json params) {
  Problem p{};
  p.causal = true;
  p.scale = 0.125f;
  p.params = std::move(params);
  return p;
}

TEST(ReferenceMetaJson, EscapesParameterNamesAndValues) {
  std::string name = "we\"ird\\name\n";
  Problem p = problemWithParams({{name, "a\"b\\c"}});
  nlohmann::json meta = nlohmann::json::parse(referenceMetaJson(p),
                                              /*cb=*/nullptr,
                                              /*allow_exceptions=*/false);
  ASSERT_FALSE(meta.is_discarded());
  EXPECT_EQ(meta["params"][name], "a\"b\\c");
  EXPECT_EQ(meta["params"]["causal"], true);
  EXPECT_EQ(meta["scale"], 0.125);
}

TEST(ReferenceMetaJson, ReplacesInvalidUtf8) {
  Problem p = problemWithParams({{"bad\xff", "x\xfey"}});
  std::string text = referenceMetaJson(p);
  nlohmann::json meta = nlohmann::json::parse(text, /*cb=*/nullptr,
                                              /*allow_exceptions=*/false);
  ASSERT_FALSE(meta.is_discarded()) << text;
  EXPECT_EQ(meta["params"]["bad\xef\xbf\xbd"], "x\xef\xbf\xbdy");
}

TEST(JsonNumber, WholeNumbersBelow1e17AreIntegers) {
  EXPECT_EQ(dumpJson(jsonNumber(64)), "64");
  EXPECT_EQ(dumpJson(jsonNumber(-0.0)), "0");
  EXPECT_EQ(dumpJson(jsonNumber(-3)), "-3");
  EXPECT_EQ(dumpJson(jsonNumber(0.5)), "0.5");
  EXPECT_TRUE(jsonNumber(1e17).is_number_float());
  EXPECT_TRUE(jsonNumber(99999999999999984.0).is_number_integer());
}

} // namespace
