//===- cuir-opt.cpp - The CuIR optimizer driver ---------------------------===//
//
// mlir-opt with the CuIR dialect and passes. Besides .mlir files it reads
// CUDA sources (.cu, .cuh): they become an empty module that carries the
// source path and text, from which `--lift` starts.
//
// Every output is staged beside its destination and moved into place, with
// the outputs of --lower as one set, only when the whole pipeline and the
// printing succeeded (include/cuir/Support/OutputFiles.h).
//
//===----------------------------------------------------------------------===//

#include "cuir/InitCuIR.h"
#include "cuir/Passes/Passes.h"
#include "cuir/Support/Nesting.h"
#include "cuir/Support/OutputFiles.h"
#include "cuir/Support/SourceFile.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

static const char *const kHelpHeader =
    "cuir-opt: lift, transfer, check and lower expert GPU attention kernels\n\n"
    "Reads CuIR (.mlir) or a CUDA kernel (.cu), runs the given passes and "
    "prints the result.\n"
    "  cuir-opt kernels/sm80/flash_fwd.cu --lift --transfer=prefixlm --lower "
    "-o out/prefixlm.cu\n"
    "  cuir-opt kernel.cuir.mlir --transfer=softcap --cuir-split-full-partial "
    "--cuir-interpret\n"
    "With -o <file>.cu, --lower writes the patched kernel there, with its "
    ".diff, PTX, cubins and library beside it, and the Target CuIR goes to "
    "<file>.target.cuir.mlir.\n"
    "Outputs appear whole and only when the whole pipeline succeeded; the "
    "input may be the output. A failing pass reports a diagnostic with its "
    "location and exits non-zero, and an earlier output stays as it was.\n"
    "IR printed from a CUDA input, from IR with locations or for a .cu "
    "output carries its source locations (what --lower needs) unless "
    "--mlir-print-debuginfo=false.\n";

static llvm::cl::opt<std::string> withBackward(
    "with-backward",
    llvm::cl::desc("Also run the pipeline on this backward kernel source "
                   "(e.g. kernels/sm80/flash_bwd.cu), with -o <file>.cu: "
                   "the variant's backward pass is lifted, transferred, "
                   "split and lowered as the forward was, into "
                   "<file>_bwd.cu and its siblings, in the same set of "
                   "outputs (both or neither)"),
    llvm::cl::value_desc("flash_bwd.cu"), llvm::cl::init(""));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "cuir-opt") << message << "\n";
  return 1;
}

/// Kernels and their CuIR are well below this; a larger input (or a device
/// that never ends, /dev/zero) is refused rather than read for ever.
constexpr uint64_t kMaxInputBytes = uint64_t(256) << 20;

/// Reads `file` to its end, failing past kMaxInputBytes.
static llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readBounded(llvm::sys::fs::file_t file, StringRef name) {
  llvm::SmallVector<char, 0> bytes;
  constexpr size_t kChunk = 1 << 20;
  while (true) {
    size_t size = bytes.size();
    bytes.resize_for_overwrite(size + kChunk);
    llvm::Expected<size_t> read = llvm::sys::fs::readNativeFile(
        file, llvm::MutableArrayRef<char>(bytes.data() + size, kChunk));
    if (!read)
      return read.takeError();
    bytes.truncate(size + *read);
    if (*read == 0)
      break;
    if (bytes.size() > kMaxInputBytes)
      return llvm::createStringError("larger than 256 MiB, more than any "
                                     "kernel or CuIR");
  }
  return llvm::MemoryBuffer::getMemBufferCopy(
      StringRef(bytes.data(), bytes.size()), name);
}

/// The input, read into memory rather than mapped: the output may replace
/// it while it is being read.
static std::unique_ptr<llvm::MemoryBuffer> readInput(StringRef path,
                                                     std::string &error) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer = nullptr;
  if (path == "-") {
    buffer = readBounded(llvm::sys::fs::getStdinHandle(), "<stdin>");
  } else if (llvm::Expected<llvm::sys::fs::file_t> file =
                 llvm::sys::fs::openNativeFileForRead(path)) {
    buffer = readBounded(*file, path);
    llvm::sys::fs::closeFile(*file);
  } else {
    buffer = file.takeError();
  }
  if (!buffer) {
    error = "cannot open input file '" + path.str() +
            "': " + llvm::toString(buffer.takeError());
    return nullptr;
  }
  return std::move(*buffer);
}

/// CuIR lifted from CUDA is lowered through its source locations: printing
/// keeps them unless the user said otherwise.
static void printLocationsByDefault() {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find("mlir-print-debuginfo");
  if (it == options.end() || it->second->getNumOccurrences() != 0)
    return;
  *static_cast<llvm::cl::opt<bool> *>(it->second) = true;
}

/// LLVM's libraries register their options when loaded (every backend's:
/// AMDGPU, AArch64, Polly, ...), none of which cuir-opt uses: --help hides
/// them, as --help-hidden and the parser still have them. Called before MLIR
/// registers its own options and cuir-opt's passes, which stay listed.
static void hideLibraryOptions() {
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    llvm::cl::Option *option = entry.second;
    bool listed = option == &withBackward ||
                  llvm::any_of(option->Categories, [](auto *category) {
                    return category->getName() == "Generic Options" ||
                           category->getName() == "Color Options";
                  });
    if (!listed && option->getOptionHiddenFlag() == llvm::cl::NotHidden)
      option->setHiddenFlag(llvm::cl::Hidden);
  }
}

/// Runs the pipeline with every --lower pass staging its set in `outputs`,
/// printing the IR to `os`; `lowered` receives the .cu each writes.
static LogicalResult
runPipeline(llvm::raw_ostream &os, std::unique_ptr<llvm::MemoryBuffer> input,
            DialectRegistry &registry, MlirOptMainConfig config,
            StringRef defaultLowerOutput, cuir::OutputTransaction &outputs,
            std::vector<std::string> &done,
            std::vector<std::string> *lowered = nullptr) {
  MlirOptMainConfig base = config;
  config.setPassPipelineSetupFn([&, base](PassManager &pm) -> LogicalResult {
    // A pass option LLVM could not parse (`--lower=compile=maybe`) has been
    // explained on stderr by LLVM; MLIR then reports an empty error at an
    // unknown location, which says nothing more.
    ScopedDiagnosticHandler dropEmpty(pm.getContext(), [](Diagnostic &diag) {
      return success(diag.getSeverity() == DiagnosticSeverity::Error &&
                     isa<UnknownLoc>(diag.getLocation()) && diag.str().empty());
    });
    if (failed(base.setupPassPipeline(pm)))
      return failure();
    return cuir::stageLowerOutputs(pm, defaultLowerOutput, outputs, done,
                                   lowered);
  });
  return MlirOptMain(os, std::move(input), registry, config);
}

/// Whether `path` exists and is neither a regular file nor a directory
/// (/dev/null, a pipe), or names a device or a process's descriptor
/// (/dev/stdout, /proc/self/fd/1, whatever they lead to): written in place,
/// never replaced.
static bool isSpecialFile(StringRef path) {
  if (path.starts_with("/dev/") || path.starts_with("/proc/"))
    return llvm::sys::fs::exists(path);
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(path, status))
    return false;
  llvm::sys::fs::file_type type = status.type();
  return type != llvm::sys::fs::file_type::regular_file &&
         type != llvm::sys::fs::file_type::directory_file &&
         type != llvm::sys::fs::file_type::file_not_found;
}

/// Writes the IR to a file staged in `outputs` for `path` (or to `path`
/// itself when it is a device or a pipe).
static LogicalResult
runPipelineInto(StringRef path, std::unique_ptr<llvm::MemoryBuffer> input,
                DialectRegistry &registry, const MlirOptMainConfig &config,
                StringRef defaultLowerOutput, cuir::OutputTransaction &outputs,
                std::vector<std::string> &done, std::string &error) {
  llvm::Expected<std::string> temp =
      isSpecialFile(path) ? path.str() : outputs.stageFile(path);
  if (!temp) {
    error = llvm::toString(temp.takeError());
    return failure();
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(*temp, ec);
  if (ec) {
    error = "cannot write '" + path.str() + "': " + ec.message();
    return failure();
  }
  if (failed(runPipeline(os, std::move(input), registry, config,
                         defaultLowerOutput, outputs, done)))
    return failure();
  os.close();
  if (os.has_error()) {
    error = "cannot write '" + path.str() + "': " + os.error().message();
    os.clear_error();
    return failure();
  }
  return success();
}

/// Runs the pipeline with --lower writing `out` (a .cu) and its siblings,
/// and the Target CuIR beside it as <stem>.target.cuir.mlir, all staged.
static LogicalResult lowerToCuda(std::unique_ptr<llvm::MemoryBuffer> input,
                                 StringRef out, DialectRegistry &registry,
                                 const MlirOptMainConfig &config,
                                 cuir::OutputTransaction &outputs,
                                 std::vector<std::string> &done,
                                 std::string &error) {
  std::string ir;
  llvm::raw_string_ostream irStream(ir);
  std::vector<std::string> lowered;
  if (failed(runPipeline(irStream, std::move(input), registry, config, out,
                         outputs, done, &lowered)))
    return failure();
  std::optional<std::string> staged =
      outputs.getStagedDirectory(llvm::sys::path::parent_path(out));
  llvm::SmallString<256> cu(staged.value_or(""));
  llvm::sys::path::append(cu, llvm::sys::path::filename(out));
  if (!staged || !llvm::sys::fs::exists(cu)) {
    error = "-o " + out.str();
    if (lowered.empty())
      error += " asks for CUDA source: add --lower to the pipeline";
    else if (llvm::sys::path::extension(out) != ".cu")
      error += ": --lower writes a .cu file and its siblings; give -o "
               "<file>.cu";
    else
      error += ", but --lower writes " + lowered.front() +
               " (its output= option): give one of them";
    return failure();
  }
  llvm::SmallString<256> irPath(*staged);
  llvm::sys::path::append(irPath,
                          llvm::sys::path::stem(out) + ".target.cuir.mlir");
  std::error_code ec;
  llvm::raw_fd_ostream irFile(irPath, ec);
  if (!ec)
    irFile << ir;
  irFile.close();
  if (ec || irFile.has_error()) {
    irFile.clear_error();
    error = "cannot write the Target CuIR beside " + out.str();
    return failure();
  }
  return success();
}

int main(int argc, char **argv) {
  cuir::startOutputJanitor(); // Before any thread starts.
  llvm::InitLLVM y(argc, argv);
  DialectRegistry registry;
  cuir::registerCuIRDialects(registry);
  cuir::registerAllCuIRPasses();
  // The headline's spellings (--lift, --transfer=..., --lower) beside the
  // library's prefixed names.
  cuir::registerCuIROptShortPassNames();
  hideLibraryOptions();

  auto [inputFilename, outputFilename] =
      registerAndParseCLIOptions(argc, argv, kHelpHeader, registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  // `-o out/x.cu` asks for CUDA: --lower writes it (and its siblings) and
  // the Target CuIR goes to out/x.target.cuir.mlir, as one set.
  bool cudaOutput =
      outputFilename != "-" && cuir::isCudaSourcePath(outputFilename);
  bool cudaInput = cuir::isCudaSourcePath(inputFilename);
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> bwd;
  if (!withBackward.empty()) {
    if (!cudaOutput)
      return fail("--with-backward needs a CUDA output: -o <file>.cu");
    if (!cuir::isCudaSourcePath(withBackward))
      return fail("--with-backward=" + withBackward +
                  ": expected a CUDA source (.cu), the backward kernel to "
                  "lift");
    bwd = readInput(withBackward, error);
    if (!bwd)
      return fail(error);
  }

  std::unique_ptr<llvm::MemoryBuffer> input = readInput(inputFilename, error);
  if (!input)
    return fail(error);
  if (cudaInput || cudaOutput || input->getBuffer().contains("loc("))
    printLocationsByDefault();
  // A CUDA source lands in a string literal: only .mlir can nest too deep.
  if (cudaInput)
    input = cuir::wrapCudaSource(inputFilename, *input);
  else if (failed(cuir::checkNesting(*input, llvm::errs())))
    return 1;

  cuir::OutputTransaction outputs;
  std::vector<std::string> done;
  if (!cudaOutput) {
    LogicalResult ran =
        outputFilename == "-"
            ? runPipeline(llvm::outs(), std::move(input), registry, config,
                          "", outputs, done)
            : runPipelineInto(outputFilename, std::move(input), registry,
                              config, "", outputs, done, error);
    if (failed(ran))
      return error.empty() ? 1 : fail(error);
  } else {
    if (failed(lowerToCuda(std::move(input), outputFilename, registry, config,
                           outputs, done, error)))
      return error.empty() ? 1 : fail(error);
    if (bwd) {
      // The backward pass of the same variant, by the same pipeline.
      StringRef out = outputFilename;
      llvm::SmallString<256> bwdOut = llvm::sys::path::parent_path(out);
      llvm::sys::path::append(bwdOut, llvm::sys::path::stem(out) + "_bwd" +
                                          llvm::sys::path::extension(out));
      if (failed(lowerToCuda(cuir::wrapCudaSource(withBackward, *bwd), bwdOut,
                             registry, config, outputs, done, error)))
        return error.empty() ? 1 : fail(error);
    }
  }
  if (llvm::Error err = outputs.commit())
    return fail(llvm::toString(std::move(err)));
  for (const std::string &line : done)
    llvm::errs() << line << "\n";
  return 0;
}
