//===- ShortNames.cpp - cuir-opt's short names of the CuIR passes ---------===//

#include "ShortNames.h"

#include "cuir/Passes/Passes.h"

void mlir::cuir::registerCuIROptShortPassNames() {
  registerLiftShortName();
  registerTransferShortName();
  registerLowerShortName();
}
