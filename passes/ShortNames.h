//===- ShortNames.h - cuir-opt's short names of the CuIR passes -*- C++ -*-===//
//
// `--lift`, `--transfer` and `--lower` are cuir-opt's spellings of
// `--cuir-lift`, `--cuir-transfer` and `--cuir-lower`: the same pass classes
// registered a second time under the short argument, for the driver only
// (registerCuIROptShortPassNames).
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_PASSES_SHORTNAMES_H
#define CUIR_PASSES_SHORTNAMES_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

#include <string>

namespace mlir::cuir {

/// `PassT` under the argument `shortName`: its type, options and behaviour,
/// but reporting the name it was given, so that an error in an option points
/// at the option as written (`--transfer=window{...}:1:31`).
template <typename PassT>
class ShortNamed : public PassT {
public:
  explicit ShortNamed(llvm::StringRef shortName)
      : shortName(shortName.str()),
        description(("Short for --" + PassT::getArgumentName() + ": " +
                     PassT::getDescription())
                        .str()) {}

  llvm::StringRef getArgument() const override { return shortName; }
  llvm::StringRef getDescription() const override { return description; }
  std::unique_ptr<Pass> clonePass() const override {
    return std::make_unique<ShortNamed>(*this);
  }

private:
  std::string shortName;
  std::string description;
};

template <typename PassT>
void registerShortName(llvm::StringRef shortName) {
  std::string name = shortName.str();
  registerPass([name]() -> std::unique_ptr<Pass> {
    return std::make_unique<ShortNamed<PassT>>(name);
  });
}

void registerLiftShortName();
void registerTransferShortName();
void registerLowerShortName();

} // namespace mlir::cuir

#endif // CUIR_PASSES_SHORTNAMES_H
