//===- Compile.cpp - Write the patched kernel, diff it, compile it --------===//
//
// Everything is written into a directory staged beside the output and moved
// into place as one set only when every step succeeded (by the driver, once
// its whole pipeline has): a failed lowering leaves no file behind.
//
//===----------------------------------------------------------------------===//

#include "cuir/Lower/Lower.h"
#include "cuir/Support/OutputFiles.h"
#include "cuir/Support/Toolchain.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace mlir::cuir;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

/// A line of `ptxas -v` per instantiation; C7514 is its warning that wgmma
/// was serialised.
PtxasCosts mlir::cuir::readPtxasCosts(StringRef log) {
  PtxasCosts costs;
  llvm::Regex frame("([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores");
  SmallVector<StringRef> lines;
  log.split(lines, '\n');
  for (StringRef line : lines) {
    SmallVector<StringRef, 3> m;
    unsigned stack = 0, spill = 0;
    if (frame.match(line, &m) && !m[1].getAsInteger(10, stack) &&
        !m[2].getAsInteger(10, spill)) {
      costs.maxStackBytes = std::max(costs.maxStackBytes, stack);
      costs.maxSpillBytes = std::max(costs.maxSpillBytes, spill);
    }
    if (line.contains("(C7514)"))
      ++costs.serializedWgmma;
  }
  return costs;
}

namespace {

struct Runner {
  std::string tmp;
  Location loc;
  bool verbose = true;

  /// Runs `args`, capturing stdout into `stdoutFile` if given. Returns the
  /// exit code, or -1 when the program could not run.
  int run(ArrayRef<std::string> args, StringRef stdoutFile = "",
          std::string *errText = nullptr) {
    SmallVector<StringRef> refs(args.begin(), args.end());
    SmallString<128> err(tmp);
    path::append(err, ".stderr");
    std::string errPath(err);
    std::optional<StringRef> redirects[] = {
        std::nullopt,
        stdoutFile.empty() ? std::optional<StringRef>() : stdoutFile,
        StringRef(errPath)};
    std::string msg;
    int rc = llvm::sys::ExecuteAndWait(args[0], refs, std::nullopt, redirects,
                                       0, 0, &msg);
    if (errText) {
      if (auto buf = llvm::MemoryBuffer::getFile(errPath))
        *errText = (*buf)->getBuffer().str();
      if (!msg.empty())
        *errText += msg;
    }
    fs::remove(errPath);
    return rc;
  }
};

LogicalResult writeFile(StringRef p, StringRef text, Location loc) {
  std::error_code ec;
  if (auto dir = path::parent_path(p); !dir.empty())
    fs::create_directories(dir);
  llvm::raw_fd_ostream os(p, ec);
  if (ec)
    return emitError(loc) << "cannot write " << p << ": " << ec.message();
  os << text;
  os.close();
  if (os.has_error())
    return emitError(loc) << "cannot write " << p << ": "
                          << os.error().message();
  return success();
}

/// Warns when the patched kernel costs more than registers: the variant runs,
/// but slower than it should, and the log says why.
void warnOnPtxasCosts(StringRef log, StringRef arch, StringRef logName,
                      Location loc) {
  PtxasCosts costs = readPtxasCosts(log);
  if (!costs.any())
    return;
  InFlightDiagnostic diag =
      emitWarning(loc) << "ptxas on the patched kernel for " << arch << ":";
  if (costs.maxSpillBytes)
    diag << " spills up to " << costs.maxSpillBytes << " bytes;";
  if (costs.maxStackBytes)
    diag << " a stack frame of up to " << costs.maxStackBytes << " bytes;";
  if (costs.serializedWgmma)
    diag << " wgmma serialised in " << costs.serializedWgmma
         << " instantiations;";
  diag << " the variant runs, slower than its source would (" << logName
       << ", beside the output)";
}

} // namespace

/// The end of a tool's report, for a diagnostic.
static StringRef tail(StringRef text) { return text.take_back(4000); }

/// The files of `opt.output`'s set: those listed by its manifest.
static std::vector<std::string> readSetFiles(StringRef manifestPath) {
  std::vector<std::string> files;
  auto buffer = llvm::MemoryBuffer::getFile(manifestPath);
  if (!buffer)
    return files;
  StringRef text = (*buffer)->getBuffer();
  auto json = nlohmann::json::parse(text.begin(), text.end(), nullptr,
                                    /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("files") ||
      !json["files"].is_array())
    return files;
  for (const auto &f : json["files"])
    if (f.is_string())
      files.push_back(f.get<std::string>());
  return files;
}

/// Lists the files of the staged set in its manifest, and names those of the
/// set it replaces that it does not have (an earlier run's PTX when this one
/// compiles nothing, say) in the list of files the commit removes.
static LogicalResult recordSetFiles(const LoweredKernel &lowered,
                                    const LoweringOptions &opt, StringRef tmp,
                                    Location loc) {
  std::string stem = path::stem(opt.output).str();
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(tmp, ec), end; it != end && !ec;
       it.increment(ec))
    if (it->type() != fs::file_type::directory_file)
      files.push_back(StringRef(it->path()).drop_front(tmp.size() + 1).str());
  llvm::sort(files);
  auto manifest = nlohmann::ordered_json::parse(lowered.manifest);
  manifest["files"] = files;
  SmallString<256> manifestPath(tmp);
  path::append(manifestPath, stem + ".json");
  if (failed(writeFile(manifestPath, manifest.dump() + "\n", loc)))
    return failure();

  SmallString<256> previous(path::parent_path(opt.output));
  path::append(previous, stem + ".json");
  std::string stale;
  for (const std::string &f : readSetFiles(previous))
    if (!llvm::is_contained(files, f) && !path::is_absolute(f) &&
        !StringRef(f).contains(".."))
      stale += f + "\n";
  if (stale.empty())
    return success();
  SmallString<256> removeList(tmp);
  path::append(removeList, OutputTransaction::kRemoveListName);
  return writeFile(removeList, stale, loc);
}

FailureOr<CompileTools>
mlir::cuir::findCompileTools(const LoweringOptions &opt, Location loc) {
  ToolEnvironment env = ToolEnvironment::fromProcess();
  CompileTools tools;
  auto take = [&](llvm::Expected<std::string> found, std::string &into,
                  StringRef what) {
    if (!found) {
      emitError(loc) << "cannot find " << what << ": "
                     << llvm::toString(found.takeError());
      return false;
    }
    into = std::move(*found);
    return true;
  };
  if (!take(findDiff(env), tools.diff, "diff, which writes the .diff"))
    return failure();
  if (!opt.compile)
    return tools;
  if (!take(findClang(opt.clang, env), tools.clang, "clang++") ||
      !take(findCudaToolkit(opt.cudaPath, env), tools.cudaPath,
            "the CUDA toolkit") ||
      !take(findCudaTool(tools.cudaPath, "ptxas"), tools.ptxas, "ptxas") ||
      !take(findCudaTool(tools.cudaPath, "fatbinary"), tools.fatbinary,
            "fatbinary"))
    return failure();
  return tools;
}

/// Writes the set into `tmp`, a directory staged beside the output.
static LogicalResult writeAndCompileInto(const LoweredKernel &lowered,
                                         const LoweringOptions &opt,
                                         const CompileTools &tools,
                                         StringRef tmp, Location loc) {
  std::string stem = path::stem(opt.output).str();
  auto file = [&](StringRef name) {
    SmallString<256> f(tmp);
    path::append(f, name);
    return std::string(f);
  };
  Runner runner{std::string(tmp), loc};
  std::string err;

  std::string cu = file(stem + ".cu");
  if (failed(writeFile(cu, lowered.patched, loc)) ||
      failed(writeFile(file(stem + ".json"), lowered.manifest, loc)))
    return failure();
  if (!lowered.headerPatched.empty() &&
      failed(writeFile(file(lowered.headerName), lowered.headerPatched, loc)))
    return failure();

  // The unified diff, as a reviewer reads it.
  std::string diffPath = file(stem + ".diff");
  const std::string &diffTool = tools.diff;
  {
    std::string srcName = path::filename(lowered.sourcePath).str();
    int rc = runner.run({diffTool, "-u", "--label", "a/" + srcName, "--label",
                         "b/" + srcName, lowered.sourcePath, cu},
                        diffPath, &err);
    if (rc != 0 && rc != 1)
      return emitError(loc) << "diff failed: " << tail(err);
    if (!lowered.headerPatched.empty()) {
      std::string headerDiff = file(".header.diff");
      rc = runner.run({diffTool, "-u", "--label", "a/" + lowered.headerName,
                       "--label", "b/" + lowered.headerName, lowered.headerPath,
                       file(lowered.headerName)},
                      headerDiff, &err);
      if (rc != 0 && rc != 1)
        return emitError(loc) << "diff failed: " << tail(err);
      auto a = llvm::MemoryBuffer::getFile(diffPath);
      auto b = llvm::MemoryBuffer::getFile(headerDiff);
      std::string both = (*a)->getBuffer().str() + (*b)->getBuffer().str();
      fs::remove(headerDiff);
      if (failed(writeFile(diffPath, both, loc)))
        return failure();
    }
  }

  if (opt.compile) {
    std::string srcDir(path::parent_path(lowered.sourcePath));
    SmallString<256> inc(srcDir);
    path::append(inc, "..", "include");
    std::vector<std::string> flags = {tools.clang,
                                      "-x",
                                      "cuda",
                                      "--cuda-path=" + tools.cudaPath,
                                      "-Wno-unknown-cuda-version",
                                      "-I" + std::string(tmp),
                                      "-I" + tools.cudaPath + "/include/cccl",
                                      "-I" + srcDir,
                                      "-I" + std::string(inc),
                                      "-O3",
                                      "-std=c++17"};
    for (const std::string &d : opt.includeDirs)
      flags.push_back("-I" + d);
    const std::string &ptxas = tools.ptxas;
    for (const std::string &arch : opt.archs) {
      llvm::errs() << "lower: compiling " << stem << " for " << arch << "\n";
      std::vector<std::string> args = flags;
      std::string ptx = file(stem + "." + arch + ".ptx");
      args.insert(args.end(), {"--cuda-gpu-arch=" + arch, "--cuda-device-only",
                               "-S", cu, "-o", ptx});
      if (runner.run(args, "", &err) != 0)
        return emitError(loc)
               << "clang failed on the patched kernel for " << arch << ":\n"
               << tail(err);
      if (opt.keepLLVMIR) {
        std::vector<std::string> ir = flags;
        ir.insert(ir.end(), {"--cuda-gpu-arch=" + arch, "--cuda-device-only",
                             "-emit-llvm", "-S", cu, "-o",
                             file(stem + "." + arch + ".ll")});
        if (runner.run(ir, "", &err) != 0)
          return emitError(loc) << "clang failed to emit LLVM IR:\n" << tail(err);
      }
      // ptxas -v reports registers and spills, kept beside the cubin.
      if (runner.run({ptxas, "-arch=" + arch, "-O3", "-v", ptx, "-o",
                      file(stem + "." + arch + ".cubin")},
                     "", &err) != 0)
        return emitError(loc) << "ptxas failed for " << arch << ":\n" << tail(err);
      std::string logName = stem + "." + arch + ".ptxas.log";
      if (failed(writeFile(file(logName), err, loc)))
        return failure();
      warnOnPtxasCosts(err, arch, logName, loc);
    }
    // The library reuses the cubins and PTX above (as clang's driver would
    // after compiling the device side again): a fat binary of both, embedded
    // by a host-only compile.
    llvm::errs() << "lower: linking lib" << stem << ".so\n";
    std::string fatbin = file(".lib.fatbin");
    std::vector<std::string> fat = {tools.fatbinary, "-64", "--create",
                                    fatbin};
    for (const std::string &arch : opt.archs) {
      std::string sm = StringRef(arch).drop_front(3).str();
      fat.push_back("--image3=kind=elf,sm=" + sm +
                    ",file=" + file(stem + "." + arch + ".cubin"));
      fat.push_back("--image3=kind=ptx,sm=" + sm +
                    ",file=" + file(stem + "." + arch + ".ptx"));
    }
    if (runner.run(fat, "", &err) != 0)
      return emitError(loc) << "fatbinary failed:\n" << tail(err);
    std::vector<std::string> lib = flags;
    lib.insert(lib.end(),
               {"--cuda-host-only", "-Xclang", "-fcuda-include-gpubinary",
                "-Xclang", fatbin, "-fPIC", "-shared", "-fvisibility=hidden",
                cu, "-o", file("lib" + stem + ".so"),
                "-L" + tools.cudaPath + "/lib64", "-lcudart_static", "-ldl",
                "-lpthread", "-lrt"});
    if (runner.run(lib, "", &err) != 0)
      return emitError(loc) << "clang failed to link the library:\n" << tail(err);
    fs::remove(fatbin);
  }
  return recordSetFiles(lowered, opt, tmp, loc);
}

LogicalResult mlir::cuir::writeAndCompile(const LoweredKernel &lowered,
                                          const LoweringOptions &opt,
                                          Location loc) {
  FailureOr<CompileTools> tools = findCompileTools(opt, loc);
  if (failed(tools))
    return failure();
  if (!opt.stagingDir.empty())
    return writeAndCompileInto(lowered, opt, *tools, opt.stagingDir, loc);
  StringRef out = opt.output;
  OutputTransaction outputs;
  llvm::Expected<std::string> dir = outputs.stageDirectory(
      path::parent_path(out), path::stem(out));
  if (!dir)
    return emitError(loc) << llvm::toString(dir.takeError());
  if (failed(writeAndCompileInto(lowered, opt, *tools, *dir, loc)))
    return failure();
  if (llvm::Error err = outputs.commit())
    return emitError(loc) << llvm::toString(std::move(err));
  return success();
}
