//===- Extract.h - The MLIR of an LLM answer --------------------*- C++ -*-===//

#ifndef CUIR_LIFT_EXTRACT_H
#define CUIR_LIFT_EXTRACT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::cuir::lift {

/// Returns the contents of the one fenced code block labelled `mlir`
/// (```mlir or ~~~mlir, any case) in a Markdown answer; of several, the one
/// that contains `keyOp`, if only one does. No such block, several
/// candidates, an unclosed block (a truncated answer) or an empty one is an
/// error whose message can be shown to the model; `what` names what the
/// block must hold in those messages.
llvm::Expected<std::string>
extractMLIR(llvm::StringRef answer, llvm::StringRef keyOp = "cuir.kernel",
            llvm::StringRef what = "the complete lifted module");

} // namespace mlir::cuir::lift

#endif // CUIR_LIFT_EXTRACT_H
