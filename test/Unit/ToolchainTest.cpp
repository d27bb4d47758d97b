//===- ToolchainTest.cpp - Finding clang, CUDA, Python and diff -----------===//
//
// Discovery runs on a fake environment and a PATH of temporary directories
// holding fake executables (shell scripts).
//
//===----------------------------------------------------------------------===//

#include "cuir/Support/Toolchain.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace mlir::cuir;
using llvm::StringRef;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace {

class ToolchainTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(fs::createUniqueDirectory("cuir-toolchain-test", root));
  }
  void TearDown() override { fs::remove_directories(root); }

  /// `root/relative`, created as a shell script exiting with `status`.
  std::string addProgram(StringRef relative, int status = 0) {
    std::string file = under(relative);
    EXPECT_FALSE(fs::create_directories(path::parent_path(file)));
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec);
    EXPECT_FALSE(ec);
    os << "#!/bin/sh\nexit " << status << "\n";
    os.close();
    EXPECT_FALSE(fs::setPermissions(file, fs::all_read | fs::all_exe |
                                              fs::owner_write));
    return file;
  }

  std::string under(StringRef relative) const {
    llvm::SmallString<256> file(root);
    path::append(file, relative);
    return std::string(file);
  }

  /// An environment with `vars` and PATH = `dirs` (under the root).
  ToolEnvironment
  makeEnv(std::initializer_list<std::pair<StringRef, std::string>> vars,
          std::initializer_list<StringRef> dirs = {}) {
    auto values = std::make_shared<llvm::StringMap<std::string>>();
    for (const auto &[name, value] : vars)
      (*values)[name] = value;
    ToolEnvironment env;
    env.getEnv = [values](StringRef name) -> std::optional<std::string> {
      auto it = values->find(name);
      if (it == values->end())
        return std::nullopt;
      return it->second;
    };
    for (StringRef dir : dirs)
      env.path.push_back(under(dir));
    return env;
  }

  static std::string message(llvm::Error err) {
    return llvm::toString(std::move(err));
  }

  llvm::SmallString<128> root;
};

TEST_F(ToolchainTest, ClangFromTheEnvironmentFirst) {
  std::string fromEnv = addProgram("env/clang++");
  addProgram("bin/clang++-22");
  llvm::Expected<std::string> clang =
      findClang("", makeEnv({{"CUIR_CLANG", fromEnv}}, {"bin"}));
  ASSERT_TRUE(bool(clang)) << message(clang.takeError());
  EXPECT_EQ(*clang, fromEnv);
}

TEST_F(ToolchainTest, ClangOnPathWithoutTheEnvironment) {
  std::string onPath = addProgram("bin/clang++-22");
  llvm::Expected<std::string> clang = findClang("", makeEnv({}, {"bin"}));
  ASSERT_TRUE(bool(clang)) << message(clang.takeError());
  EXPECT_EQ(*clang, onPath);
}

TEST_F(ToolchainTest, TheOptionBeatsTheEnvironment) {
  std::string given = addProgram("opt/clang++");
  std::string fromEnv = addProgram("env/clang++");
  llvm::Expected<std::string> clang =
      findClang(given, makeEnv({{"CUIR_CLANG", fromEnv}}));
  ASSERT_TRUE(bool(clang)) << message(clang.takeError());
  EXPECT_EQ(*clang, given);
}

TEST_F(ToolchainTest, AMissingClangFromTheEnvironmentNamesTheVariable) {
  llvm::Expected<std::string> clang =
      findClang("", makeEnv({{"CUIR_CLANG", under("none/clang++")}}, {}));
  ASSERT_FALSE(bool(clang));
  std::string text = message(clang.takeError());
  EXPECT_NE(text.find("$CUIR_CLANG names '" + under("none/clang++") +
                      "', which is not an executable file"),
            std::string::npos)
      << text;
}

TEST_F(ToolchainTest, CudaPathBeforeCudaHomeAndPath) {
  addProgram("cuda-a/bin/ptxas");
  addProgram("cuda-b/bin/ptxas");
  addProgram("cuda-c/bin/ptxas");
  llvm::Expected<std::string> toolkit = findCudaToolkit(
      "", makeEnv({{"CUDA_PATH", under("cuda-a")},
                   {"CUDA_HOME", under("cuda-b")}},
                  {"cuda-c/bin"}));
  ASSERT_TRUE(bool(toolkit)) << message(toolkit.takeError());
  EXPECT_EQ(*toolkit, under("cuda-a"));
}

TEST_F(ToolchainTest, CudaHomeWhenCudaPathIsUnset) {
  addProgram("cuda-b/bin/ptxas");
  llvm::Expected<std::string> toolkit =
      findCudaToolkit("", makeEnv({{"CUDA_HOME", under("cuda-b")}}));
  ASSERT_TRUE(bool(toolkit)) << message(toolkit.takeError());
  EXPECT_EQ(*toolkit, under("cuda-b"));
}

TEST_F(ToolchainTest, CudaToolkitOfPtxasOnPath) {
  addProgram("cuda-c/bin/ptxas");
  llvm::Expected<std::string> toolkit =
      findCudaToolkit("", makeEnv({}, {"empty", "cuda-c/bin"}));
  ASSERT_TRUE(bool(toolkit)) << message(toolkit.takeError());
  EXPECT_EQ(*toolkit, under("cuda-c"));
}

TEST_F(ToolchainTest, ABadCudaPathIsAnErrorNotAFallback) {
  addProgram("cuda-b/bin/ptxas");
  llvm::Expected<std::string> toolkit = findCudaToolkit(
      "", makeEnv({{"CUDA_PATH", "/nonexistent"},
                   {"CUDA_HOME", under("cuda-b")}}));
  ASSERT_FALSE(bool(toolkit));
  std::string text = message(toolkit.takeError());
  EXPECT_NE(text.find("$CUDA_PATH names '/nonexistent', which is not a CUDA "
                      "toolkit (it has no bin/ptxas)"),
            std::string::npos)
      << text;
}

TEST_F(ToolchainTest, ToolsInTheToolkitsBin) {
  std::string fatbinary = addProgram("cuda/bin/fatbinary");
  llvm::Expected<std::string> found =
      findCudaTool(under("cuda"), "fatbinary");
  ASSERT_TRUE(bool(found)) << message(found.takeError());
  EXPECT_EQ(*found, fatbinary);
  llvm::Expected<std::string> missing = findCudaTool(under("cuda"), "ptxas");
  ASSERT_FALSE(bool(missing));
  std::string text = message(missing.takeError());
  EXPECT_NE(text.find("has no ptxas"), std::string::npos) << text;
  EXPECT_NE(text.find("$CUDA_PATH"), std::string::npos) << text;
}

TEST_F(ToolchainTest, PythonFromTheEnvironmentMustImportTorch) {
  std::string withTorch = addProgram("a/python3", /*status=*/0);
  std::string withoutTorch = addProgram("b/python3", /*status=*/1);
  llvm::Expected<std::string> good =
      findPythonWithTorch("", makeEnv({{"CUIR_PYTHON", withTorch}}));
  ASSERT_TRUE(bool(good)) << message(good.takeError());
  EXPECT_EQ(*good, withTorch);
  llvm::Expected<std::string> bad =
      findPythonWithTorch("", makeEnv({{"CUIR_PYTHON", withoutTorch}}));
  ASSERT_FALSE(bool(bad));
  std::string text = message(bad.takeError());
  EXPECT_NE(text.find("$CUIR_PYTHON names '" + withoutTorch +
                      "', which cannot import torch"),
            std::string::npos)
      << text;
}

TEST_F(ToolchainTest, PythonOnPathWithTorch) {
  std::string withTorch = addProgram("bin/python3", /*status=*/0);
  llvm::Expected<std::string> python =
      findPythonWithTorch("", makeEnv({}, {"bin"}));
  ASSERT_TRUE(bool(python)) << message(python.takeError());
  EXPECT_EQ(*python, withTorch);
}

TEST_F(ToolchainTest, PythonOnPathWithoutTorchIsPassedOver) {
  std::string withoutTorch = addProgram("bin/python3", /*status=*/1);
  llvm::Expected<std::string> python =
      findPythonWithTorch("", makeEnv({}, {"bin"}));
  // Found: the system's /usr/bin/python3, which has torch; not found: the
  // error lists what it tried.
  if (python) {
    EXPECT_NE(*python, withoutTorch);
    return;
  }
  std::string text = message(python.takeError());
  EXPECT_NE(text.find("none of " + withoutTorch), std::string::npos) << text;
  EXPECT_NE(text.find("$CUIR_PYTHON"), std::string::npos) << text;
}

TEST_F(ToolchainTest, DiffOnPathOnly) {
  std::string diff = addProgram("bin/diff");
  llvm::Expected<std::string> found = findDiff(makeEnv({}, {"bin"}));
  ASSERT_TRUE(bool(found)) << message(found.takeError());
  EXPECT_EQ(*found, diff);
  llvm::Expected<std::string> missing = findDiff(makeEnv({}, {}));
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(message(missing.takeError()).find("diff is not on PATH"),
            std::string::npos);
}

} // namespace
