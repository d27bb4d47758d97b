//===- CuIRTypes.td - CuIR types ---------------------------*- tablegen -*-===//

#ifndef CUIR_TYPES_TD
#define CUIR_TYPES_TD

include "cuir/CuIRDialect.td"
include "mlir/IR/AttrTypeBase.td"

class CuIR_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<CuIR_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def CuIR_TokenType : CuIR_Type<"Token", "token"> {
  let summary = "an asynchronous copy in flight";
  let description = [{
    Produced by a `cp.async` `cuir.copy_async`; consumed exactly once by the
    `cuir.commit` that puts the copy into a group.
  }];
}

def CuIR_GroupType : CuIR_Type<"Group", "group"> {
  let summary = "a committed group of asynchronous copies";
  let description = [{
    Produced by `cuir.commit` (`cp.async.commit_group`); the copies of the group
    become visible at the `cuir.wait_group` that covers it.
  }];
}

def CuIR_MBarrierType : CuIR_Type<"MBarrier", "mbarrier"> {
  let summary = "an array of mbarriers in shared memory";
  let description = [{
    `!cuir.mbarrier<N>` is an array of `N` mbarriers, typically one per stage
    of a shared-memory ring. Each barrier counts arrivals and expected
    transaction bytes and flips its phase when both are complete.
  }];
  let parameters = (ins "int64_t":$size);
  let assemblyFormat = "`<` $size `>`";
  let genVerifyDecl = 1;
}

#endif // CUIR_TYPES_TD
