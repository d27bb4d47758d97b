//===- Toolchain.cpp - The external tools CuIR runs -----------------------===//

#include "cuir/Support/Toolchain.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Mutex.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"

#include <mutex>

using namespace mlir;
using llvm::SmallString;
using llvm::SmallVector;
using llvm::StringRef;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

static constexpr StringRef kDefaultClang = "/usr/lib/llvm-22/bin/clang++";
static constexpr StringRef kDefaultCudaPath = "/usr/local/cuda";
static constexpr StringRef kDefaultPython = "/usr/bin/python3";
/// Importing torch from a cold disk takes seconds; a hung interpreter must
/// not hang the pass.
static constexpr unsigned kTorchImportSeconds = 30;

cuir::ToolEnvironment cuir::ToolEnvironment::fromProcess() {
  ToolEnvironment env;
  env.getEnv = [](StringRef name) { return llvm::sys::Process::GetEnv(name); };
  if (std::optional<std::string> path = env.getEnv("PATH")) {
    SmallVector<StringRef> dirs;
    StringRef(*path).split(dirs, llvm::sys::EnvPathSeparator, -1,
                           /*KeepEmpty=*/false);
    env.path.assign(dirs.begin(), dirs.end());
  }
  return env;
}

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// `found`, or its error followed by how to point CuIR at the tool.
static llvm::Expected<std::string>
withAdvice(llvm::Expected<std::string> found, StringRef advice) {
  if (found)
    return found;
  return makeError(llvm::toString(found.takeError()) + "; " + advice);
}

/// $`name`, if set and not empty.
static std::optional<std::string> getNonEmpty(const cuir::ToolEnvironment &env,
                                              StringRef name) {
  std::optional<std::string> value =
      env.getEnv ? env.getEnv(name) : std::nullopt;
  if (value && value->empty())
    return std::nullopt;
  return value;
}

/// `name` in the directories of `env.path` (an empty PATH finds nothing,
/// where LLVM would search the process's).
static std::optional<std::string> findOnPath(StringRef name,
                                             const cuir::ToolEnvironment &env) {
  if (env.path.empty())
    return std::nullopt;
  SmallVector<StringRef> dirs(env.path.begin(), env.path.end());
  llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(name, dirs);
  if (!found)
    return std::nullopt;
  return *found;
}

static bool isExecutableFile(StringRef file) {
  return fs::is_regular_file(file) && fs::can_execute(file);
}

/// `given` (from `origin`, for the message) as a program: a path must be an
/// executable file, a bare name is looked up on PATH.
static llvm::Expected<std::string>
resolveGiven(StringRef given, const llvm::Twine &origin,
             const cuir::ToolEnvironment &env) {
  if (!given.contains('/')) {
    if (std::optional<std::string> found = findOnPath(given, env))
      return *found;
    return makeError(origin + " names '" + given + "', which is not on PATH");
  }
  if (isExecutableFile(given))
    return given.str();
  return makeError(origin + " names '" + given +
                   "', which is not an executable file");
}

static llvm::Expected<std::string>
findClangIn(StringRef explicitPath, const cuir::ToolEnvironment &env) {
  if (!explicitPath.empty())
    return resolveGiven(explicitPath, "the option clang=", env);
  if (std::optional<std::string> fromEnv = getNonEmpty(env, "CUIR_CLANG"))
    return resolveGiven(*fromEnv, "$CUIR_CLANG", env);
  if (std::optional<std::string> found = findOnPath("clang++-22", env))
    return *found;
  if (isExecutableFile(kDefaultClang))
    return kDefaultClang.str();
  return makeError("no clang++ with the CUDA front end: $CUIR_CLANG is not "
                   "set, clang++-22 is not on PATH and " +
                   kDefaultClang + " does not exist");
}

llvm::Expected<std::string>
cuir::findClang(StringRef explicitPath, const ToolEnvironment &env) {
  return withAdvice(findClangIn(explicitPath, env),
                    "set $CUIR_CLANG (or the option clang=) to a clang++ 22 "
                    "with the CUDA front end");
}

/// `root` if it holds bin/ptxas; `origin` names where it came from.
static llvm::Expected<std::string> checkToolkit(StringRef root,
                                                const llvm::Twine &origin) {
  SmallString<256> ptxas(root);
  path::append(ptxas, "bin", "ptxas");
  if (isExecutableFile(ptxas))
    return root.str();
  return makeError(origin + " names '" + root +
                   "', which is not a CUDA toolkit (it has no bin/ptxas)");
}

static llvm::Expected<std::string>
findCudaToolkitIn(StringRef explicitPath, const cuir::ToolEnvironment &env) {
  if (!explicitPath.empty())
    return checkToolkit(explicitPath, "the option cuda-path=");
  for (StringRef var : {"CUDA_PATH", "CUDA_HOME"})
    if (std::optional<std::string> fromEnv = getNonEmpty(env, var))
      return checkToolkit(*fromEnv, "$" + var);
  if (std::optional<std::string> ptxas = findOnPath("ptxas", env)) {
    // ptxas may be a link into the toolkit (/usr/local/bin/ptxas).
    SmallString<256> real;
    if (fs::real_path(*ptxas, real))
      real = *ptxas;
    StringRef root = path::parent_path(path::parent_path(real));
    if (!root.empty())
      return checkToolkit(root, "ptxas on PATH");
  }
  if (fs::is_directory(kDefaultCudaPath))
    return checkToolkit(kDefaultCudaPath, "the default location");
  return makeError("no CUDA toolkit: $CUDA_PATH and $CUDA_HOME are not set, "
                   "ptxas is not on PATH and " +
                   kDefaultCudaPath +
                   " does not exist");
}

static constexpr StringRef kCudaAdvice =
    "set $CUDA_PATH (or the option cuda-path=) to the CUDA toolkit's "
    "directory";

llvm::Expected<std::string>
cuir::findCudaToolkit(StringRef explicitPath, const ToolEnvironment &env) {
  return withAdvice(findCudaToolkitIn(explicitPath, env), kCudaAdvice);
}

llvm::Expected<std::string> cuir::findCudaTool(StringRef toolkit,
                                               StringRef name) {
  SmallString<256> tool(toolkit);
  path::append(tool, "bin", name);
  if (isExecutableFile(tool))
    return std::string(tool);
  return makeError("the CUDA toolkit '" + toolkit + "' has no " + name +
                   " (looked for " + tool + "); " + kCudaAdvice);
}

/// Whether `python -c "import torch"` succeeds, asked once per interpreter
/// and process: every pass that needs a Python would ask again.
static bool importsTorch(StringRef python) {
  static llvm::sys::SmartMutex<true> mutex;
  static llvm::StringMap<bool> known;
  std::lock_guard<llvm::sys::SmartMutex<true>> lock(mutex);
  auto [it, inserted] = known.try_emplace(python, false);
  if (!inserted)
    return it->second;
  StringRef args[] = {python, "-c", "import torch"};
  std::optional<StringRef> quiet[] = {StringRef(""), StringRef(""),
                                      StringRef("")};
  it->second = llvm::sys::ExecuteAndWait(python, args, std::nullopt, quiet,
                                         kTorchImportSeconds) == 0;
  return it->second;
}

/// `given` (from `origin`) as a Python that imports torch.
static llvm::Expected<std::string>
checkPython(StringRef given, const llvm::Twine &origin,
            const cuir::ToolEnvironment &env) {
  llvm::Expected<std::string> python = resolveGiven(given, origin, env);
  if (!python || importsTorch(*python))
    return python;
  return makeError(origin + " names '" + *python +
                   "', which cannot import torch (within " +
                   llvm::Twine(kTorchImportSeconds) + " s)");
}

static llvm::Expected<std::string>
findPythonIn(StringRef explicitPath, const cuir::ToolEnvironment &env) {
  if (!explicitPath.empty())
    return checkPython(explicitPath, "the option python=", env);
  if (std::optional<std::string> fromEnv = getNonEmpty(env, "CUIR_PYTHON"))
    return checkPython(*fromEnv, "$CUIR_PYTHON", env);
  SmallVector<std::string, 2> candidates;
  if (std::optional<std::string> onPath = findOnPath("python3", env))
    candidates.push_back(*onPath);
  if (!llvm::is_contained(candidates, kDefaultPython) &&
      isExecutableFile(kDefaultPython))
    candidates.push_back(kDefaultPython.str());
  for (const std::string &candidate : candidates)
    if (importsTorch(candidate))
      return candidate;
  std::string tried =
      candidates.empty()
          ? ("neither python3 on PATH nor " + kDefaultPython + " exists").str()
          : "none of " + llvm::join(candidates, ", ") + " imports torch";
  return makeError("no Python that can import torch: $CUIR_PYTHON is not set "
                   "and " +
                   tried);
}

llvm::Expected<std::string>
cuir::findPythonWithTorch(StringRef explicitPath, const ToolEnvironment &env) {
  return withAdvice(findPythonIn(explicitPath, env),
                    "set $CUIR_PYTHON (or the option python=) to a Python "
                    "with torch and numpy");
}

llvm::Expected<std::string> cuir::findDiff(const ToolEnvironment &env) {
  if (std::optional<std::string> found = findOnPath("diff", env))
    return *found;
  return makeError("diff is not on PATH; install diffutils or add its "
                   "directory to PATH");
}
