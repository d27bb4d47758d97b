//===- Passes.td - CuIR passes -----------------------------*- tablegen -*-===//

#ifndef CUIR_PASSES_TD
#define CUIR_PASSES_TD

include "mlir/Pass/PassBase.td"

def CheckLocations : Pass<"cuir-check-locations", "::mlir::ModuleOp"> {
  let summary = "Checks that every op's location names real lines of its CUDA source";
  let description = [{
    Lowering patches the expert kernel through the source locations that the
    lift attached to every op: a `NameLoc` of the CUDA variable over a
    `file:line:col to line:col` range. This pass checks that every such
    range lies inside the named file: the lines exist and the columns lie
    within them. Files are looked up under `source-root` (default: the
    directory of the module's `cuir.source_path`, else the current
    directory). With `require-all`, ops inside a `cuir.kernel` that carry no
    file location at all are reported too.
  }];
  let options = [
    Option<"sourceRoot", "source-root", "std::string", /*default=*/"\"\"",
           "Directory against which relative source paths are resolved">,
    Option<"requireAll", "require-all", "bool", /*default=*/"false",
           "Report kernel ops that carry no source location">
  ];
}

#endif // CUIR_PASSES_TD
