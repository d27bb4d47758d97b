//===- SupportTest.cpp - Nesting limits and parameter values --------------===//

#include "cuir/Support/Nesting.h"
#include "cuir/Support/OptionLocation.h"
#include "cuir/Support/ParamValue.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

#include <string>

using namespace mlir;
using namespace mlir::cuir;
using llvm::StringRef;

namespace {

std::string repeat(StringRef s, unsigned n) {
  std::string out;
  for (unsigned i = 0; i < n; ++i)
    out += s;
  return out;
}

TEST(Nesting, AtTheLimitPasses) {
  std::string text = repeat("{", 8) + repeat("}", 8);
  EXPECT_FALSE(findExcessiveNesting(text, 8));
}

TEST(Nesting, OneBeyondIsReportedAtItsLineAndColumn) {
  std::string text = "module {\n  " + repeat("[", 8) + repeat("]", 8) + "\n}";
  std::optional<NestingExcess> excess = findExcessiveNesting(text, 8);
  ASSERT_TRUE(excess);
  EXPECT_EQ(excess->line, 2u);
  EXPECT_EQ(excess->column, 10u); // the 8th '[' is the 9th open bracket
  EXPECT_EQ(text[excess->offset], '[');
  EXPECT_NE(excess->message.find("deeper than 8 levels"), std::string::npos);
}

TEST(Nesting, EveryBracketKindCounts) {
  EXPECT_TRUE(findExcessiveNesting("tuple<tuple<tuple<i32>>>", 2));
  EXPECT_TRUE(findExcessiveNesting("loc(callsite(callsite(\"a\")))", 2));
  EXPECT_TRUE(findExcessiveNesting("([{", 2));
  EXPECT_FALSE(findExcessiveNesting("([])[]{}<>", 2));
}

TEST(Nesting, StringsAndCommentsAreSkipped) {
  std::string deep = repeat("{", 50);
  EXPECT_FALSE(findExcessiveNesting("\"" + deep + "\"", 4));
  EXPECT_FALSE(findExcessiveNesting("\"a\\\"" + deep + "\"", 4));
  EXPECT_FALSE(findExcessiveNesting("// " + deep + "\n{}", 4));
  // A string literal ends at its line, as the lexer's does.
  EXPECT_TRUE(findExcessiveNesting("\"open\n" + deep, 4));
}

TEST(Nesting, ArrowsAndComparisonsDoNotClose) {
  // `->` closes no '<'; `>=` inside parentheses closes nothing.
  EXPECT_FALSE(findExcessiveNesting("affine_map<(d0) -> (d0)>", 2));
  EXPECT_FALSE(findExcessiveNesting("affine_set<(d0) : (d0 - 1 >= 0)>", 2));
  EXPECT_TRUE(findExcessiveNesting("<(d0) -> (<(<x>)>)>", 3));
  // A stray '<' closes with its bracket, so it cannot accumulate.
  EXPECT_FALSE(findExcessiveNesting(repeat("(a < b)", 100), 2));
}

TEST(Nesting, LongOperatorChainsAreRefused) {
  std::string chain = "(d0) -> (" + repeat("d0 + ", 20) + "d0)";
  EXPECT_FALSE(findExcessiveNesting(chain, 8, 20));
  EXPECT_TRUE(findExcessiveNesting("(" + repeat("d0 + ", 21) + "d0)", 8, 20));
  EXPECT_TRUE(findExcessiveNesting(repeat("-", 21) + "d0", 8, 20));
  EXPECT_TRUE(findExcessiveNesting(repeat("d0 mod ", 21) + "d0", 8, 20));
  // Delimiters end an expression: many constants are no chain.
  EXPECT_FALSE(findExcessiveNesting(
      repeat("%c = arith.constant -1 : i32\n", 100), 8, 20));
}

TEST(Nesting, ContextDiagnosticNamesTheBuffer) {
  MLIRContext context;
  std::string text = repeat("(", kMaxNestingDepth + 1);
  auto buffer = llvm::MemoryBuffer::getMemBuffer(text, "deep.mlir");
  std::string seen;
  context.getDiagEngine().registerHandler([&](Diagnostic &diag) {
    llvm::raw_string_ostream(seen) << diag.getLocation() << ": " << diag;
  });
  EXPECT_TRUE(failed(checkNesting(*buffer, &context)));
  EXPECT_NE(seen.find("deep.mlir\":1:" + std::to_string(kMaxNestingDepth + 1)),
            std::string::npos)
      << seen;
}

TEST(ParamValue, NumbersListsAndRuns) {
  TextError error;
  FailureOr<ParamValue> one = parseParamValue("3.5", error);
  ASSERT_TRUE(succeeded(one));
  EXPECT_EQ(one->numbers, SmallVector<double>({3.5}));
  FailureOr<ParamValue> list = parseParamValue("50, 120", error);
  ASSERT_TRUE(succeeded(list));
  EXPECT_EQ(list->offsets, SmallVector<size_t>({0, 4}));
  FailureOr<ParamValue> runs = parseParamValue("runs:37,80", error);
  ASSERT_TRUE(succeeded(runs));
  EXPECT_TRUE(runs->runs);
  EXPECT_EQ(runs->offsets[1], 8u);
}

TEST(ParamValue, RefusesWhatIsNotAFiniteNumber) {
  TextError error;
  EXPECT_TRUE(failed(parseParamValue("abc", error)));
  EXPECT_EQ(error.message, "'abc' is not a number");
  EXPECT_TRUE(failed(parseParamValue("1,1e400", error)));
  EXPECT_EQ(error.offset, 2u);
  EXPECT_EQ(error.message, "'1e400' is not a finite number");
  EXPECT_TRUE(failed(parseParamValue("nan", error)));
  EXPECT_TRUE(failed(parseParamValue("1,,2", error)));
  EXPECT_EQ(error.message, "element 2 is empty: expected a number");
  EXPECT_TRUE(failed(parseParamValue("runs:0", error)));
  EXPECT_TRUE(failed(parseParamValue("runs:2.5", error)));
}

TEST(ParamValue, ChecksTheParameterType) {
  MLIRContext context;
  Builder b(&context);
  TextError error;
  auto check = [&](StringRef text, Type type) {
    FailureOr<ParamValue> value = parseParamValue(text, error);
    return succeeded(value) && succeeded(checkParamValue(*value, type, error));
  };
  EXPECT_TRUE(check("-2147483648", b.getI32Type()));
  EXPECT_FALSE(check("2147483648", b.getI32Type()));
  EXPECT_EQ(error.message, "'2147483648' is out of the range of i32");
  EXPECT_FALSE(check("1.5", b.getI32Type()));
  EXPECT_FALSE(check("1e300", b.getIndexType()));
  EXPECT_FALSE(check("1e39", b.getF32Type()));
  EXPECT_TRUE(check("1e38", b.getF32Type()));
  EXPECT_FALSE(check("1,2", b.getF32Type()));
  auto array = MemRefType::get({ShapedType::kDynamic}, b.getI32Type());
  EXPECT_TRUE(check("1,2", array));
  EXPECT_TRUE(check("runs:3,4", array));
  EXPECT_FALSE(check("runs:3", b.getI32Type()));
}

TEST(ParamValue, ListsOfParameters) {
  TextError error;
  std::map<std::string, std::string> params;
  EXPECT_TRUE(succeeded(
      parseParamList("variant=softcap,alibi; softcap=3;", params, error)));
  EXPECT_EQ(params["variant"], "softcap,alibi");
  EXPECT_EQ(params["softcap"], "3");
  params.clear();
  EXPECT_TRUE(failed(parseParamList("a=1;a=2", params, error)));
  EXPECT_EQ(error.offset, 4u);
  EXPECT_EQ(error.message, "'a' is given twice");
  params.clear();
  EXPECT_TRUE(failed(parseParamList("softcap=nan", params, error)));
  EXPECT_EQ(error.offset, 8u);
  params.clear();
  EXPECT_TRUE(failed(parseParamList("x", params, error)));
  EXPECT_TRUE(failed(parseParamList("1x=2", params, error)));
  EXPECT_TRUE(failed(parseParamList("x=", params, error)));
}

TEST(OptionLocation, PointsIntoTheOptionAsWritten) {
  MLIRContext context;
  auto loc = cast<FileLineColLoc>(
      getOptionLoc(&context, "transfer", "window{window_left=abc}", 19));
  EXPECT_EQ(loc.getFilename().str(), "--transfer=window{window_left=abc}");
  EXPECT_EQ(loc.getLine(), 1u);
  EXPECT_EQ(loc.getColumn(), 31u); // the 'a' of abc
  auto shifted = cast<FileLineColLoc>(shiftColumn(loc, 2));
  EXPECT_EQ(shifted.getColumn(), 33u);
}

TEST(OptionLocation, FindsAValueAtTheStartOfAWord) {
  EXPECT_EQ(findOptionValue("Nq=1 B=2", "B"), 7u);
  EXPECT_EQ(findOptionValue("Nq=1 params='a=1'", "params"), 13u);
  EXPECT_EQ(findOptionValue("variant={x{y=1}}", "variant"), 9u);
  EXPECT_FALSE(findOptionValue("kernel=B=1", "B"));
  EXPECT_FALSE(findOptionValue("Nq=1", "Nkv"));
}

TEST(OptionLocation, SplitsTopLevelEntriesOnly) {
  llvm::SmallVector<OptionEntry> entries =
      splitOptions("  Nq=64 params='a=1 Nq=2' variant={x{y=1 z=2}} Nq=65 bare");
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0].key, "Nq");
  EXPECT_EQ(entries[0].value, "64");
  EXPECT_EQ(entries[0].valueOffset, 5u);
  EXPECT_EQ(entries[1].key, "params");
  EXPECT_EQ(entries[1].value, "'a=1 Nq=2'");
  EXPECT_EQ(entries[2].key, "variant");
  EXPECT_EQ(entries[2].value, "{x{y=1 z=2}}");
  EXPECT_EQ(entries[3].key, "Nq");
  EXPECT_EQ(entries[3].value, "65");
  EXPECT_TRUE(splitOptions("").empty());
}

} // namespace
