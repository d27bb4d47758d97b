//===- LiftTest.cpp - Pure parts of the lift ------------------------------===//
//
// Extraction of the MLIR from an answer, the lift-cache key and index, the
// prompt templates and the closed loop (with a scripted client; the real
// HTTP client is tested against a local server in test/LLM).
//
//===----------------------------------------------------------------------===//

#include "cuir/Lift/Extract.h"
#include "cuir/Lift/LiftCache.h"
#include "cuir/Lift/Lifter.h"
#include "cuir/Lift/Prompt.h"
#include "cuir/Lift/Validate.h"
#include "cuir/Lift/VariantCheck.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace mlir::cuir;
using namespace mlir::cuir::lift;
using llvm::StringRef;

namespace {

std::string errorOf(llvm::Expected<std::string> value) {
  if (value)
    return "(no error; got '" + *value + "')";
  return llvm::toString(value.takeError());
}

//===----------------------------------------------------------------------===//
// Extraction
//===----------------------------------------------------------------------===//

TEST(ExtractTest, TheOneMlirBlock) {
  auto mlir = extractMLIR("Step 1: ...\n\n```cuda\nint x;\n```\n"
                          "Step 3:\n```mlir\ncuir.kernel @k\n  // body\n```\n"
                          "Done.\n");
  ASSERT_TRUE(bool(mlir)) << llvm::toString(mlir.takeError());
  EXPECT_EQ(*mlir, "cuir.kernel @k\n  // body\n");
}

TEST(ExtractTest, FenceVariants) {
  // Tildes, upper case, an info string after the language, CRLF.
  auto tilde = extractMLIR("~~~MLIR title\r\na\r\n~~~\r\n");
  ASSERT_TRUE(bool(tilde));
  EXPECT_EQ(*tilde, "a\n");
  // A longer fence may contain shorter ones; the block ends at the first
  // fence at least as long.
  auto nested = extractMLIR("````mlir\n```\ninside\n````\n");
  ASSERT_TRUE(bool(nested));
  EXPECT_EQ(*nested, "```\ninside\n");
  // Up to three spaces of indentation; four make it code, not a fence.
  auto indented = extractMLIR("   ```mlir\nx\n   ```\n");
  ASSERT_TRUE(bool(indented));
  EXPECT_EQ(*indented, "x\n");
  EXPECT_NE(errorOf(extractMLIR("    ```mlir\nx\n    ```\n"))
                .find("no ```mlir code block"),
            std::string::npos);
  // No final newline after the closing fence.
  auto last = extractMLIR("```mlir\ny\n```");
  ASSERT_TRUE(bool(last));
  EXPECT_EQ(*last, "y\n");
}

TEST(ExtractTest, Problems) {
  EXPECT_EQ(errorOf(extractMLIR("Sorry, no code.")),
            "the answer has no ```mlir code block; put the complete lifted "
            "module in one block that starts with ```mlir");
  EXPECT_NE(errorOf(extractMLIR("```\nx\n```\n```cpp\ny\n```\n"))
                .find("(its code blocks: unlabelled, 'cpp')"),
            std::string::npos);
  EXPECT_NE(errorOf(extractMLIR("```mlir\na\n```\ntext\n```mlir\nb\n```\n"))
                .find("has 2 ```mlir code blocks (starting on lines 1 and 5)"),
            std::string::npos);
  // Of several blocks, the one with the kernel; two kernels are ambiguous.
  auto snippet = extractMLIR("Step 1: `x` is\n```mlir\n%a = cuir.alloc\n```\n"
                             "Step 3:\n```mlir\ncuir.kernel @k\n```\n");
  ASSERT_TRUE(bool(snippet)) << llvm::toString(snippet.takeError());
  EXPECT_EQ(*snippet, "cuir.kernel @k\n");
  EXPECT_NE(errorOf(extractMLIR("```mlir\ncuir.kernel @a\n```\n"
                                "```mlir\ncuir.kernel @b\n```\n"))
                .find("has 2 ```mlir code blocks"),
            std::string::npos);
  EXPECT_NE(
      errorOf(extractMLIR("intro\n```mlir\ncuir.kernel @k("))
          .find("starts on line 2 is never closed (was the answer cut off?)"),
      std::string::npos);
  EXPECT_NE(errorOf(extractMLIR("```mlir\n  \n```\n")).find("is empty"),
            std::string::npos);
}

TEST(ExtractTest, KeyOpOfATransfer) {
  // The transfer's answers quote the kernel and give a variant.
  auto variant = extractMLIR("The kernel:\n```mlir\ncuir.kernel @k\n```\n"
                             "```mlir\ncuir.variant @v\n```\n",
                             "cuir.variant", "the complete cuir.variant");
  ASSERT_TRUE(bool(variant)) << llvm::toString(variant.takeError());
  EXPECT_EQ(*variant, "cuir.variant @v\n");
  EXPECT_EQ(
      errorOf(extractMLIR("none", "cuir.variant", "the complete cuir.variant")),
      "the answer has no ```mlir code block; put the complete "
      "cuir.variant in one block that starts with ```mlir");
}

//===----------------------------------------------------------------------===//
// The lift cache
//===----------------------------------------------------------------------===//

TEST(LiftCacheTest, KeyIsStable) {
  // sha256(b"cuir-lift-v1\n" + text), computed independently with Python's
  // hashlib: a change of the key's definition invalidates every cache.
  EXPECT_EQ(computeLiftKey(1, "__global__ void k() {}\n"),
            "e94478b540cf0b892bae89b37af528f1a6ee617edccaafe9786e67e6f408521d");
  EXPECT_EQ(computeLiftKey(2, "__global__ void k() {}\n"),
            "edb4c1ae7e3fe74c658c0e34ea3e6a5ce4cb299058f7ad2c8f1684016210dff4");
  EXPECT_EQ(computeLiftKey(1, ""),
            "e2fe59eedd7c753c7bfef00e0989370265ce124ce332670332da2f77828ff8b1");
  EXPECT_NE(computeLiftKey(1, "a"), computeLiftKey(1, "a\n"));
}

TEST(LiftCacheTest, TransferKeyIsStable) {
  // sha256(b"cuir-transfer-v1\n2\nab" + b"c"), computed with Python's
  // hashlib; the reference's size keeps it apart from the CuIR.
  EXPECT_EQ(computeTransferKey(1, "ab", "c"),
            "4f791238527d37007437eaf082d51ca33ff57fee9a3e85d3598382c05ed9220c");
  EXPECT_EQ(computeTransferKey(1, "", ""),
            "ed968b5ab49a108ab7f87aba7bb1b61d761ae76b6bd4080fe9d076f9767c89c1");
  EXPECT_NE(computeTransferKey(1, "ab", "c"), computeTransferKey(1, "a", "bc"));
  EXPECT_NE(computeTransferKey(1, "", "x"), computeLiftKey(1, "x"));
  EXPECT_EQ(getUserVariantCachePath("", "k"), "k.variant.mlir");
}

TEST(LiftCacheTest, CheckLevels) {
  for (LiftCheck check :
       {LiftCheck::None, LiftCheck::Semantic, LiftCheck::Project})
    EXPECT_EQ(parseLiftCheck(getLiftCheckName(check)), check);
  EXPECT_EQ(getLiftCheckName(LiftCheck::Semantic), "semantic");
  EXPECT_EQ(parseLiftCheck("Semantic"), std::nullopt);
  EXPECT_EQ(parseLiftCheck(""), std::nullopt);
  // An entry is replaced by a lift that passed as much or more, never less.
  EXPECT_TRUE(mayReplace(LiftCheck::None, LiftCheck::Semantic));
  EXPECT_TRUE(mayReplace(LiftCheck::Semantic, LiftCheck::Semantic));
  EXPECT_FALSE(mayReplace(LiftCheck::Semantic, LiftCheck::None));
  EXPECT_FALSE(mayReplace(LiftCheck::Project, LiftCheck::Semantic));
}

TEST(LiftCacheTest, ContentHash) {
  // FIPS 180-2 test vectors.
  EXPECT_EQ(computeContentHash(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(computeContentHash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(LiftCacheTest, RecordedCheck) {
  mlir::MLIRContext context;
  auto recorded = [&](StringRef attrs) {
    auto module = mlir::parseSourceString<mlir::ModuleOp>(
        ("module attributes {" + attrs + "} {}").str(), &context);
    EXPECT_TRUE(module) << attrs.str();
    return module ? getRecordedCheck(*module) : LiftCheck::Project;
  };
  EXPECT_EQ(recorded("cuir.lift_check = {level = \"semantic\"}"),
            LiftCheck::Semantic);
  EXPECT_EQ(recorded("cuir.lift_check = {level = \"none\"}"), LiftCheck::None);
  // Entries of earlier lifts record nothing; anything unreadable counts as
  // no check.
  EXPECT_EQ(recorded("cuir.source_path = \"k.cu\""), LiftCheck::None);
  EXPECT_EQ(recorded("cuir.lift_check = {level = \"strong\"}"),
            LiftCheck::None);
  EXPECT_EQ(recorded("cuir.lift_check = {level = 3}"), LiftCheck::None);
  EXPECT_EQ(recorded("cuir.lift_check = \"semantic\""), LiftCheck::None);
}

class TempDirTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("cuir-lift-test", dir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }
  std::string path(StringRef name) {
    llvm::SmallString<128> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  void write(StringRef name, StringRef text) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path(name), ec);
    ASSERT_FALSE(ec);
    os << text;
  }
  std::string loadError(StringRef text) {
    write("index.json", text);
    auto index = LiftCacheIndex::load(path("index.json"));
    if (index)
      return "(loaded)";
    return llvm::toString(index.takeError());
  }
  llvm::SmallString<128> dir;
};

const char *const kKeyA =
    "e94478b540cf0b892bae89b37af528f1a6ee617edccaafe9786e67e6f408521d";

TEST_F(TempDirTest, IndexLoadsAndResolvesPaths) {
  write("index.json",
        std::string(R"({"version": 1, "entries": [{"key": ")") + kKeyA +
            R"(", "source": "sm80/k.cu", "cuir": "sm80/k.cuir.mlir"}]})");
  auto index = LiftCacheIndex::load(path("index.json"));
  ASSERT_TRUE(bool(index)) << llvm::toString(index.takeError());
  ASSERT_EQ(index->getEntries().size(), 1u);
  const BundledLift *entry = index->lookup(kKeyA);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->sourcePath, path("sm80/k.cu"));
  EXPECT_EQ(entry->cuirPath, path("sm80/k.cuir.mlir"));
  EXPECT_EQ(index->lookup(computeLiftKey(1, "other")), nullptr);
  // The empty index the repository ships.
  EXPECT_EQ(loadError(R"({"version": 1, "entries": []})"), "(loaded)");
}

TEST_F(TempDirTest, IndexErrors) {
  EXPECT_NE(loadError("{").find("not a JSON object"), std::string::npos);
  EXPECT_NE(loadError(R"({"version": 2, "entries": []})")
                .find("\"version\" must be 1"),
            std::string::npos);
  EXPECT_NE(loadError(R"({"version": 1})").find("no \"entries\" list"),
            std::string::npos);
  EXPECT_NE(loadError(R"({"version": 1, "entries": [{"key": "abc", )"
                      R"("source": "a.cu", "cuir": "a.mlir"}]})")
                .find("key 'abc' is not 64 lowercase hex digits"),
            std::string::npos);
  EXPECT_NE(loadError(R"({"version": 1, "entries": [{"key": ")" +
                      std::string(kKeyA) + R"(", "source": "a.cu"}]})")
                .find("entry 0 needs the strings"),
            std::string::npos);
  std::string entry = R"({"key": ")" + std::string(kKeyA) +
                      R"(", "source": "a.cu", "cuir": "a.mlir"})";
  EXPECT_NE(
      loadError(R"({"version": 1, "entries": [)" + entry + "," + entry + "]}")
          .find("is listed twice"),
      std::string::npos);
  EXPECT_NE(
      llvm::toString(LiftCacheIndex::load(path("missing.json")).takeError())
          .find("cannot read the lift-cache index"),
      std::string::npos);
}

TEST_F(TempDirTest, AtomicWriteCreatesDirectories) {
  std::string file = getUserCachePath(path("a/b"), kKeyA);
  EXPECT_EQ(llvm::sys::path::filename(file), std::string(kKeyA) + ".mlir");
  ASSERT_FALSE(bool(writeFileAtomically(file, "first")));
  ASSERT_FALSE(bool(writeFileAtomically(file, "second")));
  auto buffer = llvm::MemoryBuffer::getFile(file);
  ASSERT_TRUE(bool(buffer));
  EXPECT_EQ((*buffer)->getBuffer(), "second");
  // Nothing else is left in the directory (no temporary files).
  std::error_code ec;
  unsigned files = 0;
  for (llvm::sys::fs::directory_iterator it(path("a/b"), ec), end;
       it != end && !ec; it.increment(ec))
    ++files;
  EXPECT_EQ(files, 1u);
}

//===----------------------------------------------------------------------===//
// Prompts
//===----------------------------------------------------------------------===//

TEST(PromptTest, Templates) {
  llvm::StringMap<std::string> values;
  values["A"] = "{{B}}";
  values["B_2"] = "two";
  auto text = renderTemplate("x {{A}} {{B_2}} {{not a name}} {{}} }}", values);
  ASSERT_TRUE(bool(text)) << llvm::toString(text.takeError());
  // Inserted text is not expanded again; other braces stay.
  EXPECT_EQ(*text, "x {{B}} two {{not a name}} {{}} }}");
  EXPECT_EQ(errorOf(renderTemplate("{{MISSING}}", values)),
            "prompt template names {{MISSING}}, which has no value");
}

TEST(PromptTest, TransferPromptsRender) {
  auto system = buildTransferSystemPrompt();
  ASSERT_TRUE(bool(system)) << llvm::toString(system.takeError());
  EXPECT_NE(system->find("### `cuir.variant`"), std::string::npos);
  EXPECT_EQ(system->find("### DenseResourceElementsAttr"), std::string::npos);
  // Every built-in variant is an example, in the text --transfer uses.
  EXPECT_NE(system->find("## `global-window`: "), std::string::npos);
  EXPECT_NE(system->find("```mlir\ncuir.variant @document("),
            std::string::npos);
  auto user = buildTransferPrompt(
      "r.py", "def reference(q, k, v, scale):", {"a", "b"}, "cuir.kernel @a\n");
  ASSERT_TRUE(bool(user)) << llvm::toString(user.takeError());
  EXPECT_NE(user->find("reference `r.py`."), std::string::npos);
  EXPECT_NE(user->find("```python\ndef reference(q, k, v, scale):\n```"),
            std::string::npos);
  EXPECT_NE(user->find("2 kernel(s): `@a`, `@b`."), std::string::npos);
  EXPECT_NE(user->find("The first, `@a`:\n\n```mlir\ncuir.kernel @a\n```"),
            std::string::npos);
  auto repair = buildTransferRepairPrompt(1, 3, "it does not parse", "x\n");
  ASSERT_TRUE(bool(repair)) << llvm::toString(repair.takeError());
  EXPECT_NE(repair->find("Your variant of round 1 (of at most 3) was "
                         "rejected: it does not parse."),
            std::string::npos);
  EXPECT_NE(repair->find("`transfer-round-1.mlir`"), std::string::npos);
}

TEST(PromptTest, NumberedLines) {
  EXPECT_EQ(numberLines("a\nb\n"), "1| a\n2| b\n");
  EXPECT_EQ(numberLines("a\r\nb"), "1| a\n2| b\n");
  std::string ten;
  for (int i = 0; i < 10; ++i)
    ten += "x\n";
  EXPECT_EQ(StringRef(numberLines(ten)).take_front(8), " 1| x\n 2");
}

TEST(PromptTest, EmbeddedPromptsRender) {
  auto system = buildSystemPrompt();
  ASSERT_TRUE(bool(system)) << llvm::toString(system.takeError());
  // The reference and the example are in; builtin attributes are not.
  EXPECT_NE(system->find("### `cuir.gemm_async`"), std::string::npos);
  EXPECT_NE(system->find("### FragmentLayoutAttr"), std::string::npos);
  EXPECT_EQ(system->find("### DenseResourceElementsAttr"), std::string::npos);
  EXPECT_NE(system->find("## When an asynchronous result becomes visible"),
            std::string::npos);
  EXPECT_NE(system->find("cuir.kernel @qk_tile("), std::string::npos);
  auto lift = buildLiftPrompt("k.cu", "__global__ void k() {}\n");
  ASSERT_TRUE(bool(lift)) << llvm::toString(lift.takeError());
  EXPECT_NE(lift->find("`k.cu` (1 lines)"), std::string::npos);
  EXPECT_NE(lift->find("1| __global__ void k() {}\n```"), std::string::npos);
  auto repair = buildRepairPrompt(2, 4, "it does not parse", "  oops\n");
  ASSERT_TRUE(bool(repair)) << llvm::toString(repair.takeError());
  EXPECT_NE(repair->find("round 2 (of at most 4) was rejected: it does not "
                         "parse."),
            std::string::npos);
  EXPECT_NE(repair->find("```\noops\n```"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// The loop
//===----------------------------------------------------------------------===//

/// Answers from a list, and remembers what it was asked.
class ScriptedClient : public llm::Client {
public:
  explicit ScriptedClient(std::vector<std::string> answers)
      : answers(std::move(answers)) {}
  llvm::Expected<llm::Response> complete(const llm::Request &request) override {
    requests.push_back(request);
    if (next == answers.size())
      return llvm::createStringError("connection refused");
    return llm::Response{answers[next++], "stop"};
  }
  std::string describe() const override { return "scripted"; }
  std::vector<std::string> answers;
  std::vector<llm::Request> requests;
  size_t next = 0;
};

Verdict acceptGood(StringRef mlir, unsigned) {
  if (mlir.contains("good"))
    return {true, "", ""};
  return {false, "it does not verify", "error: bad op\nnote: here"};
}

TEST(LiftLoopTest, ConvergesInTheSecondRound) {
  ScriptedClient client({"```mlir\nbad\n```", "fixed:\n```mlir\ngood\n```"});
  std::vector<std::string> lines;
  auto result =
      runLiftLoop(client, "sys", "lift it", 4, acceptGood,
                  [&](const llvm::Twine &t) { lines.push_back(t.str()); });
  ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
  EXPECT_EQ(result->mlir, "good\n");
  EXPECT_EQ(result->round, 2u);
  ASSERT_EQ(client.requests.size(), 2u);
  // Round 2 carries round 1's answer and the diagnostics.
  const llm::Request &second = client.requests[1];
  EXPECT_EQ(second.system, "sys");
  ASSERT_EQ(second.messages.size(), 3u);
  EXPECT_EQ(second.messages[1].role, llm::Message::Role::Assistant);
  EXPECT_EQ(second.messages[1].content, "```mlir\nbad\n```");
  EXPECT_NE(second.messages[2].content.find("error: bad op\nnote: here"),
            std::string::npos);
  EXPECT_NE(second.messages[2].content.find("rejected: it does not verify"),
            std::string::npos);
  EXPECT_EQ(lines.back(), "round 2/4: accepted");
  EXPECT_EQ(lines[1], "round 1/4: rejected, it does not verify: error: bad op");
}

TEST(LiftLoopTest, ReportsWhatTheChecksSaidOnAcceptance) {
  ScriptedClient client({"```mlir\ngood\n```"});
  std::vector<std::string> lines;
  auto result = runLiftLoop(
      client, "sys", "lift it", 4,
      [](StringRef, unsigned) {
        return Verdict{true, "", "k.cu:3:1: remark: max abs error 1e-3\n"};
      },
      [&](const llvm::Twine &t) { lines.push_back(t.str()); });
  ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "round 1/4: accepted");
  EXPECT_EQ(lines[2], "  k.cu:3:1: remark: max abs error 1e-3");
}

TEST(LiftLoopTest, GivesUpAfterMaxRounds) {
  ScriptedClient client({"no code", "```mlir\nbad\n```", "```mlir\ngood\n```"});
  auto result = runLiftLoop(client, "sys", "lift it", 2, acceptGood,
                            [](const llvm::Twine &) {});
  ASSERT_FALSE(bool(result));
  EXPECT_EQ(client.requests.size(), 2u);
  // The first rejection was about the missing block; the feedback said so.
  EXPECT_NE(
      client.requests[1].messages[2].content.find("no ```mlir code block"),
      std::string::npos);
  std::string message = llvm::toString(result.takeError());
  EXPECT_EQ(message,
            "no valid CuIR after 2 rounds; the last answer was "
            "rejected, it does not verify:\nerror: bad op\nnote: here");
}

TEST(LiftLoopTest, TransferSpec) {
  // The variant block among others, and the transfer's own repair message.
  ScriptedClient client({"```mlir\ncuir.kernel @k\n```\n"
                         "```mlir\ncuir.variant bad\n```\n",
                         "```mlir\ncuir.variant good\n```\n"});
  LoopSpec spec;
  spec.keyOp = "cuir.variant";
  spec.what = "the complete cuir.variant";
  spec.repair = [](unsigned round, unsigned maxRounds, StringRef stage,
                   StringRef problems) -> llvm::Expected<std::string> {
    return "repair " + std::to_string(round) + "/" + std::to_string(maxRounds) +
           ": " + stage.str() + ": " + problems.str();
  };
  std::vector<std::string> seen;
  auto result = runLiftLoop(
      client, "sys", "write it", 3,
      [&](StringRef mlir, unsigned round) {
        seen.push_back(mlir.str());
        return acceptGood(mlir, round);
      },
      [](const llvm::Twine &) {}, spec);
  ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
  EXPECT_EQ(seen.front(), "cuir.variant bad\n");
  EXPECT_EQ(result->mlir, "cuir.variant good\n");
  EXPECT_EQ(client.requests[1].messages[2].content,
            "repair 1/3: it does not verify: error: bad op\nnote: here");
}

TEST(VariantCheckTest, ProblemShapes) {
  auto problem = parseVariantProblem("2x4x2x200x333");
  ASSERT_TRUE(bool(problem)) << llvm::toString(problem.takeError());
  EXPECT_EQ(problem->batch, 2);
  EXPECT_EQ(problem->headsQ, 4);
  EXPECT_EQ(problem->headsKV, 2);
  EXPECT_EQ(problem->seqQ, 200);
  EXPECT_EQ(problem->seqKV, 333);
  for (StringRef bad : {"2x4x2x200", "2x4x2x200x0", "2x4x2xax333", ""})
    EXPECT_NE(llvm::toString(parseVariantProblem(bad).takeError())
                  .find("is not BxHqxHkvxNqxNkv"),
              std::string::npos)
        << bad.str();
  EXPECT_NE(llvm::toString(parseVariantProblem("1x3x2x8x8").takeError())
                .find("Hq must be a multiple of Hkv"),
            std::string::npos);
}

TEST(LiftLoopTest, ClientErrorsEndTheLoop) {
  ScriptedClient client({});
  auto result = runLiftLoop(client, "sys", "lift it", 4, acceptGood,
                            [](const llvm::Twine &) {});
  ASSERT_FALSE(bool(result));
  EXPECT_EQ(client.requests.size(), 1u);
  EXPECT_EQ(llvm::toString(result.takeError()),
            "the LLM request of round 1/4 failed: connection refused");
}

} // namespace
