//===- cuir-opt.cpp - The CuIR optimizer driver ---------------------------===//
//
// mlir-opt with the CuIR dialect and passes. Besides .mlir files it reads
// CUDA sources (.cu, .cuh): they become an empty module that carries the
// source path and text, from which `--lift` starts.
//
//===----------------------------------------------------------------------===//

#include "cuir/InitCuIR.h"
#include "cuir/Lower/Lower.h"
#include "cuir/Support/Nesting.h"
#include "cuir/Support/SourceFile.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

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
    ".diff, PTX, cubins and library beside it.\n"
    "A failing pass reports a diagnostic with its location, exits non-zero "
    "and leaves no output file.\n";

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  DialectRegistry registry;
  cuir::registerCuIRDialects(registry);
  cuir::registerAllCuIRPasses();

  auto [inputFilename, outputFilename] =
      registerAndParseCLIOptions(argc, argv, kHelpHeader, registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::WithColor::error(llvm::errs(), "cuir-opt") << errorMessage << "\n";
    return 1;
  }
  // A CUDA source lands in a string literal: only .mlir can nest too deep.
  if (cuir::isCudaSourcePath(inputFilename))
    input = cuir::wrapCudaSource(inputFilename, *input);
  else if (failed(cuir::checkNesting(*input, llvm::errs())))
    return 1;

  // `-o out/x.cu` asks for CUDA: --lower writes it (and its siblings) and
  // the Target CuIR goes to out/x.target.cuir.mlir.
  if (cuir::isCudaSourcePath(outputFilename) && outputFilename != "-") {
    cuir::setDefaultLowerOutput(outputFilename);
    std::string ir;
    llvm::raw_string_ostream irStream(ir);
    if (failed(MlirOptMain(irStream, std::move(input), registry, config)))
      return 1;
    if (!cuir::lowerOutputWritten()) {
      llvm::WithColor::error(llvm::errs(), "cuir-opt")
          << "-o " << outputFilename
          << " asks for CUDA source: add --lower to the pipeline\n";
      return 1;
    }
    std::string irPath =
        llvm::StringRef(outputFilename).rsplit('.').first.str() +
        ".target.cuir.mlir";
    std::unique_ptr<llvm::ToolOutputFile> irFile =
        openOutputFile(irPath, &errorMessage);
    if (!irFile) {
      llvm::WithColor::error(llvm::errs(), "cuir-opt") << errorMessage << "\n";
      return 1;
    }
    irFile->os() << ir;
    irFile->keep();
    return 0;
  }

  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::WithColor::error(llvm::errs(), "cuir-opt") << errorMessage << "\n";
    return 1;
  }
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1; // The output file is removed: no half-written result.
  output->keep();
  return 0;
}
