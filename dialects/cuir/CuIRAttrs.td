//===- CuIRAttrs.td - CuIR enums and attributes ------------*- tablegen -*-===//

#ifndef CUIR_ATTRS_TD
#define CUIR_ATTRS_TD

include "cuir/CuIRDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def CuIR_MemorySpace : I32EnumAttr<"MemorySpace", "GPU memory space", [
    I32EnumAttrCase<"Global", 0, "global">,
    I32EnumAttrCase<"Shared", 1, "shared">,
    I32EnumAttrCase<"Register", 2, "register">]> {
  let cppNamespace = "::mlir::cuir";
  let genSpecializedAttr = 0;
}

def CuIR_FragmentKind : I32EnumAttr<"FragmentKind",
    "role of a register fragment in a tensor-core instruction", [
    I32EnumAttrCase<"A", 0, "a">,
    I32EnumAttrCase<"B", 1, "b">,
    I32EnumAttrCase<"Acc", 2, "acc">,
    I32EnumAttrCase<"Row", 3, "row">]> {
  let cppNamespace = "::mlir::cuir";
  let genSpecializedAttr = 0;
}

def CuIR_MmaInstr : I32EnumAttr<"MmaInstr", "tensor-core instruction", [
    I32EnumAttrCase<"MmaM16N8K16", 0, "mma_m16n8k16">,
    I32EnumAttrCase<"WgmmaM64NK16", 1, "wgmma_m64nNk16">]> {
  let cppNamespace = "::mlir::cuir";
  let genSpecializedAttr = 0;
}

def CuIR_WorkerKind : I32EnumAttr<"WorkerKind", "granularity of a worker", [
    I32EnumAttrCase<"Block", 0, "block">,
    I32EnumAttrCase<"Warpgroup", 1, "warpgroup">,
    I32EnumAttrCase<"Warp", 2, "warp">]> {
  let cppNamespace = "::mlir::cuir";
}

def CuIR_WorkerRole : I32EnumAttr<"WorkerRole", "role of a worker", [
    I32EnumAttrCase<"All", 0, "all">,
    I32EnumAttrCase<"Producer", 1, "producer">,
    I32EnumAttrCase<"Consumer", 2, "consumer">]> {
  let cppNamespace = "::mlir::cuir";
}

def CuIR_CopyEngine : I32EnumAttr<"CopyEngine", "asynchronous copy engine", [
    I32EnumAttrCase<"CpAsync", 0, "cp_async">,
    I32EnumAttrCase<"Tma", 1, "tma">]> {
  let cppNamespace = "::mlir::cuir";
}

def CuIR_Normalizer : I32EnumAttr<"Normalizer", "how scores become weights", [
    I32EnumAttrCase<"Softmax", 0, "softmax">,
    I32EnumAttrCase<"Sigmoid", 1, "sigmoid">]> {
  let cppNamespace = "::mlir::cuir";
  let genSpecializedAttr = 0;
}

def CuIR_Rewrite : I32EnumAttr<"Rewrite",
    "a transform's rewrite: what lowering hands to one patcher", [
    I32EnumAttrCase<"Scores", 0, "scores">,
    I32EnumAttrCase<"Parameter", 1, "parameter">,
    I32EnumAttrCase<"Constant", 2, "constant">,
    I32EnumAttrCase<"Normalizer", 3, "normalizer">,
    I32EnumAttrCase<"Split", 4, "split">,
    I32EnumAttrCase<"Blocks", 5, "blocks">,
    I32EnumAttrCase<"ParamGrad", 6, "param_grad">]> {
  let cppNamespace = "::mlir::cuir";
  let genSpecializedAttr = 0;
}

def CuIR_ReduceKind : I32EnumAttr<"ReduceKind", "row reduction", [
    I32EnumAttrCase<"Max", 0, "max">,
    I32EnumAttrCase<"Sum", 1, "sum">]> {
  let cppNamespace = "::mlir::cuir";
}

// The attention dimensions a runtime block mask reads besides (q, kv): the
// lists are broadcast over the others. kv_heads: a row of lists per KV head,
// for the query heads of its GQA group together.
def CuIR_MaskDims : I32BitEnumAttr<"MaskDims",
    "batch and head dimensions a block mask depends on", [
    I32BitEnumAttrCaseNone<"None", "none">,
    I32BitEnumAttrCaseBit<"Batch", 0, "batch">,
    I32BitEnumAttrCaseBit<"Heads", 1, "heads">,
    I32BitEnumAttrCaseBit<"KvHeads", 2, "kv_heads">]> {
  let cppNamespace = "::mlir::cuir";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class CuIR_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<CuIR_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def CuIR_MemorySpaceAttr : EnumAttr<CuIR_Dialect, CuIR_MemorySpace, "mem"> {
  let summary = "memory space of a memref: global, shared or register";
  let description = [{
    Used as the memory space of memrefs: `memref<64x128xbf16, #cuir.mem<shared>>`.
  }];
  let assemblyFormat = "`<` $value `>`";
}


def CuIR_FragmentLayoutAttr : CuIR_Attr<"FragmentLayout", "frag"> {
  let summary = "register fragment layout of a tensor-core operand";
  let description = [{
    The encoding of a register tile: which tensor-core instruction the tile
    feeds (`mma_m16n8k16` for sm_80 `mma.sync`, `wgmma_m64nNk16` for sm_90
    `wgmma`), which operand it is (`a`, `b`, `acc`, or `row`, a per-row vector
    of an accumulator such as a row maximum), and the grid of warps (for
    `mma_m16n8k16`) or warpgroups (for `wgmma_m64nNk16`) that own it, as
    [rows, columns] of workers.

    ```mlir
    tensor<128x64xf32, #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>>
    ```

    The owner (warp, lane, register) of every element follows the PTX ISA
    fragment layouts; `getOwner` and `getElementCoords` compute it.
  }];
  let parameters = (ins EnumParameter<CuIR_FragmentKind>:$kind,
                        EnumParameter<CuIR_MmaInstr>:$instr,
                        ArrayRefParameter<"int64_t">:$warps);
  let assemblyFormat = "`<` $kind `,` $instr `,` `warps` `=` `[` $warps `]` `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Rows and columns (in elements) of one instruction tile for this
    /// operand: 16x16 for the mma A operand, 16x8 (k x n) for B, 16x8 for the
    /// accumulator; wgmma tiles are 64 rows per warpgroup.
    std::pair<int64_t, int64_t> getInstrTile() const;
    /// Threads that own the tile: 32 per warp or 128 per warpgroup.
    int64_t getNumThreads() const;
    /// Checks that a tile of `shape` can be distributed over this layout.
    ::llvm::LogicalResult verifyShape(
        ::llvm::ArrayRef<int64_t> shape,
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError) const;
    /// The (row, col) element held by `thread` (0 .. getNumThreads()-1) in
    /// its register `reg` (0 .. elements per thread - 1) for a tile of
    /// `shape`. Row layouts return col = 0.
    std::pair<int64_t, int64_t> getElementCoords(
        ::llvm::ArrayRef<int64_t> shape, int64_t thread, int64_t reg) const;
    /// Elements each thread holds for a tile of `shape`.
    int64_t getElementsPerThread(::llvm::ArrayRef<int64_t> shape) const;
  }];
}

def CuIR_NormalizerAttr : EnumAttr<CuIR_Dialect, CuIR_Normalizer, "normalizer"> {
  let summary = "how a kernel turns scores into weights";
  let description = [{
    On a kernel that transfer gave a variant (`cuir.normalizer =
    #cuir.normalizer<sigmoid>`): the variant's normaliser, which lowering
    writes into the manifest.
  }];
  let assemblyFormat = "`<` $value `>`";
}

def CuIR_RewriteAttr : EnumAttr<CuIR_Dialect, CuIR_Rewrite, "rewrite"> {
  let summary = "a transform's rewrite";
  let assemblyFormat = "`<` $value `>`";
}

def CuIR_ChangeAttr : CuIR_Attr<"Change", "change"> {
  let summary = "records that a transform inserted an op or a kernel argument";
  let description = [{
    Set as `cuir.change` on every op (and kernel argument) that a transform
    inserts, with the rewrite that did it: `#cuir.change<scores>` on the
    `cuir.elementwise` that applies a variant's scores, `#cuir.change<split>`
    on the bounds of the full/partial split. The op's location stays that of
    the Source CuIR op it stands for (the op it follows). An operand of an
    unchanged op that now reads a changed value belongs to the same rewrite.
    Lowering diffs Target against Source CuIR and hands each change to the
    patcher of its rewrite; a difference without a record is an error.
  }];
  let parameters = (ins EnumParameter<CuIR_Rewrite>:$rewrite);
  let assemblyFormat = "`<` $rewrite `>`";
}

def CuIR_RemovedAttr : CuIR_Attr<"Removed", "removed"> {
  let summary = "records that a transform removed a Source CuIR op";
  let description = [{
    A kernel's `cuir.removed` array lists the Source CuIR ops its transforms
    erased: the rewrite, the op's name and its location (which, with the name,
    identifies the op in the Source CuIR). An operand that read a removed op's
    result belongs to the same rewrite.

    ```mlir
    cuir.removed = [#cuir.removed<normalizer, "cuir.store", loc("k.cu":12:3)>]
    ```
  }];
  let parameters = (ins EnumParameter<CuIR_Rewrite>:$rewrite,
                        "::mlir::StringAttr":$opName,
                        "::mlir::LocationAttr":$opLoc);
  let assemblyFormat = "`<` $rewrite `,` $opName `,` $opLoc `>`";
}

def CuIR_MaskDimsAttr : EnumAttr<CuIR_Dialect, CuIR_MaskDims, "mask_dims"> {
  let summary = "the batch and head dimensions a block mask depends on";
  let description = [{
    The `depends` of a `cuir.block_mask`: `batch`, `heads`, both
    (`#cuir.mask_dims<batch|heads>`) or `none`. The op prints it as
    `depends [batch, heads]`.
  }];
  let assemblyFormat = "`<` $value `>`";
}

#endif // CUIR_ATTRS_TD
