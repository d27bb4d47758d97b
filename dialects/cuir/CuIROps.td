//===- CuIROps.td - CuIR operations ------------------------*- tablegen -*-===//

#ifndef CUIR_OPS_TD
#define CUIR_OPS_TD

include "cuir/CuIRDialect.td"
include "cuir/CuIRAttrs.td"
include "cuir/CuIRTypes.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/InferIntRangeInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def CuIR_RegisterTile : RankedTensorOf<[AnyFloat, AnyInteger, Index]>;

//===----------------------------------------------------------------------===//
// Kernels and workers
//===----------------------------------------------------------------------===//

def CuIR_KernelOp : CuIR_Op<"kernel", [
    AutomaticAllocationScope, FunctionOpInterface, IsolatedFromAbove,
    SingleBlockImplicitTerminator<"ReturnOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a GPU kernel: its parameters, launch grid, block size and arch";
  let description = [{
    A kernel launched over a grid of thread blocks. Its body is executed by
    every block; `cuir.block_id` tells a block where it is. Work inside the
    body belongs to the whole block unless a `cuir.bind` hands it to
    warpgroups or warps.

    The grid is an affine map whose dimensions are the kernel's `index`
    parameters, in order: with parameters `(%B: index, %H: index, %N: index)`,
    `grid = (b, h, n) -> (n ceildiv 128, h, b)` launches `ceil(N/128) x H x B`
    blocks. `threads` is the number of threads of a block and `arch` the
    target (`sm_80`, `sm_90` or `sm_90a`).

    ```mlir
    cuir.kernel @flash_fwd(%q: memref<?x?xbf16, #cuir.mem<global>>, %N: index)
        grid (d0) -> (d0 ceildiv 128) threads 128 arch "sm_80" {
      ...
    }
    ```

    A kernel whose KV loops walk a runtime block mask names it with the
    attribute `cuir.block_mask = @sym`, a `cuir.block_mask` op of the same
    module, and has its four lists as arguments of type
    `memref<?xi32, #cuir.mem<global>>` whose `cuir.arg` is
    `block_mask:kv_num_blocks`, `block_mask:kv_indices`,
    `block_mask:full_kv_num_blocks` and `block_mask:full_kv_indices`; a
    backward kernel, whose query steps walk the transposed lists, has
    `block_mask:q_num_blocks`, `block_mask:q_indices`,
    `block_mask:full_q_num_blocks` and `block_mask:full_q_indices` instead.
    Every argument of the block mask names an argument of the kernel of the
    same type.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       AffineMapAttr:$grid,
                       ConfinedAttr<I64Attr, [IntPositive]>:$threads,
                       StrAttr:$arch,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name,
      "::mlir::FunctionType":$type, "::mlir::AffineMap":$grid,
      "int64_t":$threads, "::llvm::StringRef":$arch)>];
  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    /// The kernel's `index` parameters, in order: the grid's dimensions.
    ::llvm::SmallVector<::mlir::BlockArgument> getIndexParams();
    /// Number of workers of `kind` in a block of this kernel.
    int64_t getNumWorkers(WorkerKind kind);
  }];
}

def CuIR_ReturnOp : CuIR_Op<"return", [Pure, HasParent<"KernelOp">,
                                        ReturnLike, Terminator]> {
  let summary = "terminates a kernel";
  let assemblyFormat = "attr-dict";
}

def CuIR_Dimension : I32EnumAttr<"Dimension", "a grid axis", [
    I32EnumAttrCase<"x", 0>,
    I32EnumAttrCase<"y", 1>,
    I32EnumAttrCase<"z", 2>]> {
  let cppNamespace = "::mlir::cuir";
  let genSpecializedAttr = 0;
  // The generated message names the C++ enum; say what a user writes.
  let parameterParser = [{[&]() -> ::mlir::FailureOr<::mlir::cuir::Dimension> {
    auto loc = $_parser.getCurrentLocation();
    std::string axis;
    if (::mlir::failed($_parser.parseKeywordOrString(&axis)))
      return ::mlir::failure();
    if (auto dim = ::mlir::cuir::symbolizeDimension(axis))
      return *dim;
    return {(::llvm::LogicalResult)($_parser.emitError(loc)
        << "expected block dimension x, y or z, got '" << axis << "'")};
  }()}];
}

// The default `$value` format, so that the op prints the bare axis name; the
// generic form is `#cuir<dim x>`, as upstream's `#gpu<dim x>`.
def CuIR_DimensionAttr : EnumAttr<CuIR_Dialect, CuIR_Dimension, "dim"> {
  let description = [{
    The grid axis `cuir.block_id` reads: `x`, `y` or `z`. The op prints it
    bare (`cuir.block_id x`); the generic form is `#cuir<dim x>`.
  }];
}

def CuIR_BlockIdOp : CuIR_Op<"block_id", [Pure,
    DeclareOpInterfaceMethods<InferIntRangeInterface, ["inferResultRanges"]>]> {
  let summary = "the index of the executing thread block along one grid axis";
  let description = [{
    `%bx = cuir.block_id x` is the block's coordinate along grid dimension
    `x` (0), `y` (1) or `z` (2), i.e. CUDA's `blockIdx`. Its integer range:
    below the grid's extent on the axis, the kernel's sizes below 2^30 (for
    `n ceildiv 128`, below 2^23), and below CUDA's limit (2^31 - 1 on `x`,
    65535 on `y` and `z`).
  }];
  let arguments = (ins CuIR_DimensionAttr:$dim);
  let results = (outs Index:$result);
  // `` because the attribute prints its own leading space.
  let assemblyFormat = "`` $dim attr-dict";
  let hasVerifier = 1;
}

def CuIR_BindOp : CuIR_Op<"bind", [
    SingleBlockImplicitTerminator<"YieldOp">, NoRegionArguments,
    RecursiveMemoryEffects]> {
  let summary = "a region executed by a set of workers";
  let description = [{
    Hands its region to workers of one granularity: the block, warpgroups
    (128 threads) or warps (32 threads), listed by their index in the block.
    Each listed worker runs the region once; `cuir.worker_id` inside tells it
    which of the listed workers it is (0, 1, ...). `role` records the
    producer/consumer split of warp-specialized kernels, and `regs` the
    register budget the workers set with `setmaxnreg`.

    Workers run concurrently and communicate only through memory and
    barriers; the interpreter runs them one after another and switches only
    when a worker blocks on a barrier.

    ```mlir
    cuir.bind warpgroup [0] role producer regs 24 { ... }
    cuir.bind warpgroup [1, 2] role consumer regs 240 { ... }
    ```
  }];
  let arguments = (ins CuIR_WorkerKind:$kind,
                       DenseI64ArrayAttr:$workers,
                       CuIR_WorkerRole:$role,
                       OptionalAttr<I64Attr>:$regs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $kind $workers `role` $role (`regs` $regs^)? attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Threads of one worker of this bind.
    int64_t getThreadsPerWorker();
  }];
}

def CuIR_WorkerIdOp : CuIR_Op<"worker_id", [Pure,
    DeclareOpInterfaceMethods<InferIntRangeInterface, ["inferResultRanges"]>]> {
  let summary = "which of the workers of the enclosing bind is running";
  let description = [{
    In `cuir.bind warpgroup [1, 2]`, `cuir.worker_id` is 0 for warpgroup 1 and
    1 for warpgroup 2: below 1024, the threads of a block (its integer range).
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def CuIR_YieldOp : CuIR_Op<"yield", [Pure, ReturnLike, Terminator,
    ParentOneOf<["BindOp", "ElementwiseOp", "ScatterAddOp", "ScoreModOp",
                 "MaskModOp", "BlockMaskOp"]>]> {
  let summary = "terminates a bind, element-wise, scatter-add, mod or block-mask region";
  let arguments = (ins Variadic<AnyType>:$values);
  let builders = [OpBuilder<(ins), [{ /* nothing to yield */ }]>];
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

def CuIR_AllocOp : CuIR_Op<"alloc", [
    MemoryEffects<[MemAlloc<DefaultResource>]>]> {
  let summary = "allocates a statically shaped shared-memory buffer";
  let description = [{
    `%sK = cuir.alloc : memref<2x64x128xbf16, #cuir.mem<shared>>` allocates a
    two-stage ring of 64x128 tiles in the block's shared memory. `swizzle`
    records the XOR swizzle (in bytes) that the source kernel applies.
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$swizzle);
  let results = (outs AnyStaticShapeMemRef:$buffer);
  let assemblyFormat = "attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

class CuIR_TileCopyOp<string mnemonic, list<Trait> traits = []>
    : CuIR_Op<mnemonic, !listconcat(traits, [AttrSizedOperandSegments])> {
  code tileCopyDecl = [{
    /// The operand that is indexed (the larger buffer): src or dst.
    ::mlir::Value getIndexedBuffer() {
      return getSrcIndices().empty() ? getDst() : getSrc();
    }
    /// The tile operand, whose shape is the shape of the copied tile.
    ::mlir::Value getTileBuffer() {
      return getSrcIndices().empty() ? getSrc() : getDst();
    }
  }];
}

def CuIR_CopyOp : CuIR_TileCopyOp<"copy"> {
  let summary = "synchronous tile copy between memories";
  let description = [{
    Copies a tile between a buffer indexed at the given offsets and a tile
    buffer of the tile's shape. Exactly one side is indexed; it has the tile's
    rank. Elements of the indexed side that fall outside its bounds are
    zero-filled when read and skipped when written, as the predicated copies
    of the source kernels do for ragged tails.

    ```mlir
    cuir.copy %sO -> %gO[%q0, %c0] : memref<128x128xbf16, #cuir.mem<shared>>
        -> memref<?x128xbf16, strided<[?, 1], offset: ?>, #cuir.mem<global>>
    ```
  }];
  let arguments = (ins AnyMemRef:$src, Variadic<Index>:$src_indices,
                       AnyMemRef:$dst, Variadic<Index>:$dst_indices);
  let assemblyFormat = [{
    $src (`[` $src_indices^ `]`)? `->` $dst (`[` $dst_indices^ `]`)?
    attr-dict `:` type($src) `->` type($dst)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = tileCopyDecl;
}

def CuIR_CopyAsyncOp : CuIR_TileCopyOp<"copy_async"> {
  let summary = "asynchronous global-to-shared tile copy (cp.async or TMA)";
  let description = [{
    Starts copying a tile from global to shared memory. With `cp_async` the
    op returns a `!cuir.token`, to be committed into a group with
    `cuir.commit` and waited with `cuir.wait_group`. With `tma` the copy
    completes its bytes on an mbarrier instead (`barrier %bars[%stage]`), and
    becomes visible to the workers that wait on that barrier's phase.

    Until then the destination must not be read and the source must not be
    written: the interpreter reports either as a hazard.

    ```mlir
    %t = cuir.copy_async cp_async %gK[%kv0, %c0] -> %sK
        : memref<?x128xbf16, #cuir.mem<global>> -> memref<64x128xbf16, #cuir.mem<shared>>
    cuir.copy_async tma %gK[%kv0, %c0] -> %sK barrier %full[%stage]
        : memref<?x128xbf16, #cuir.mem<global>> -> memref<64x128xbf16, #cuir.mem<shared>>, !cuir.mbarrier<2>
    ```
  }];
  let arguments = (ins CuIR_CopyEngine:$engine,
                       AnyMemRef:$src, Variadic<Index>:$src_indices,
                       AnyMemRef:$dst, Variadic<Index>:$dst_indices,
                       Optional<CuIR_MBarrierType>:$barrier,
                       Optional<Index>:$barrier_index);
  let results = (outs Optional<CuIR_TokenType>:$token);
  let assemblyFormat = [{
    $engine $src (`[` $src_indices^ `]`)? `->` $dst (`[` $dst_indices^ `]`)?
    (`barrier` $barrier^ `[` $barrier_index `]`)?
    attr-dict `:` type($src) `->` type($dst) (`,` qualified(type($barrier))^)?
    (`->` qualified(type($token))^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = tileCopyDecl;
}

def CuIR_CommitOp : CuIR_Op<"commit"> {
  let summary = "commits asynchronous copies into a group (cp.async.commit_group)";
  let description = [{
    Groups the given `cp.async` copies, in issue order. An empty group is
    allowed, as `cp.async.commit_group` with nothing outstanding.
  }];
  let arguments = (ins Variadic<CuIR_TokenType>:$tokens);
  let results = (outs CuIR_GroupType:$group);
  let assemblyFormat = "($tokens^)? attr-dict";
  let hasVerifier = 1;
}

def CuIR_WaitGroupOp : CuIR_Op<"wait_group"> {
  let summary = "waits until a copy group is complete (cp.async.wait_group)";
  let description = [{
    `cuir.wait_group %g pending 1` blocks the worker until at most one of its
    committed groups is still in flight, as `cp.async.wait_group 1`, and states
    that group `%g` is complete afterwards. The interpreter checks that
    claim: a wait whose `pending` count leaves `%g` in flight is reported.
  }];
  let arguments = (ins CuIR_GroupType:$group,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$pending);
  let assemblyFormat = "$group `pending` $pending attr-dict";
  let hasVerifier = 1;
}

def CuIR_LoadOp : CuIR_Op<"load"> {
  let summary = "loads a shared-memory tile into a register fragment (ldmatrix)";
  let description = [{
    Reads a shared-memory tile into registers distributed in the result's
    fragment layout. With `transpose`, the tile is read transposed
    (`ldmatrix.trans`): a `KxN` result from an `NxK` buffer. A row vector
    (`#cuir.frag<row, ...>`) is read from a 1-D tile of its length: every
    lane reads the elements of its rows (plain `ld.shared`), as a backward
    kernel reads the LSE and D of its query rows.
  }];
  let arguments = (ins AnyMemRef:$src, UnitAttr:$transpose);
  let results = (outs CuIR_RegisterTile:$result);
  let assemblyFormat = "$src (`transpose` $transpose^)? attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def CuIR_StoreOp : CuIR_Op<"store"> {
  let summary = "stores a register tile to shared or global memory";
  let description = [{
    Writes a register tile into a buffer: whole into a shared tile of its
    shape, or into a global buffer at the given offsets, skipping the elements
    that fall outside its bounds.
  }];
  let arguments = (ins CuIR_RegisterTile:$value, AnyMemRef:$dst,
                       Variadic<Index>:$indices);
  let assemblyFormat = [{
    $value `->` $dst (`[` $indices^ `]`)? attr-dict `:` type($value) `->` type($dst)
  }];
  let hasVerifier = 1;
}

def CuIR_AtomicAddOp : CuIR_Op<"atomic_add"> {
  let summary = "adds a register tile into global memory atomically (red.global.add.f32)";
  let description = [{
    Adds every element of an f32 register tile to the global buffer at the
    given offsets, as one `red.global.add.f32` per element: the adds of
    different thread blocks to one element are atomic, so their order is
    the only thing that varies between runs. Elements outside the buffer's
    bounds are skipped, as `cuir.store` skips them. This is how a backward
    kernel that runs one block per KV tile accumulates dQ, which every KV
    tile of a query row contributes to.

    ```mlir
    cuir.atomic_add %dq -> %dq_accum[%q0, %c0]
        : tensor<64x128xf32, #ACC> -> memref<?x128xf32, #cuir.mem<global>>
    ```

    The interpreter checks what the hardware does not: within one launch, an
    element that one block adds to atomically and another block reads or
    writes with plain accesses is a race.
  }];
  let arguments = (ins CuIR_RegisterTile:$value, AnyMemRef:$dst,
                       Variadic<Index>:$indices);
  let assemblyFormat = [{
    $value `->` $dst `[` $indices `]` attr-dict `:` type($value) `->` type($dst)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

class CuIR_GemmBase<string mnemonic, list<Trait> traits = []>
    : CuIR_Op<mnemonic, !listconcat(traits, [
        AllTypesMatch<["acc", "result"]>])> {
  let arguments = (ins AnyType:$a, AnyType:$b, CuIR_RegisterTile:$acc,
                       UnitAttr:$transpose_b);
  let results = (outs CuIR_RegisterTile:$result);
  let assemblyFormat = [{
    $a `,` $b (`transpose_b` $transpose_b^)? `,` $acc attr-dict
    `:` type($a) `,` type($b) `,` type($acc)
  }];
  let hasVerifier = 1;
}

def CuIR_GemmOp : CuIR_GemmBase<"gemm"> {
  let summary = "tile GEMM on the tensor cores (mma.sync)";
  let description = [{
    `result = a * b + acc` over tiles, or `a * transpose(b) + acc` with
    `transpose_b`, in fp32 (or fp16) accumulation. `a` and `b` are register
    fragments or shared-memory tiles (read with ldmatrix as part of the op);
    `acc` is an accumulator fragment. The result is ready when the op
    returns.

    ```mlir
    %s = cuir.gemm %q, %sK transpose_b, %zero
        : tensor<128x128xbf16, #A>, memref<64x128xbf16, #cuir.mem<shared>>,
          tensor<128x64xf32, #ACC>
    ```
  }];
}

def CuIR_GemmAsyncOp : CuIR_GemmBase<"gemm_async"> {
  let summary = "asynchronous tile GEMM (wgmma)";
  let description = [{
    Issues a warpgroup GEMM whose result is in flight until a
    `cuir.gemm_wait` retires it. The result may only feed a `cuir.gemm_wait`,
    the accumulator of a further `cuir.gemm_async` (GEMMs chained on one
    accumulator), or control flow that carries it to one. Reading it any
    other way reads registers the tensor cores are still writing.

    `b` must be a shared-memory tile; `a` a shared tile or register fragment.

    With `acc_transposed`, the instruction computes the transposed product
    (b a^T for a [m x n] result, the hardware's M dimension being n): the
    value is still `a * b + acc`, but the accumulator registers hold its
    transpose, distributed by the result type's layout as an [n x m] tile.
    A backward kernel computes S^T = K Q^T this way so that P^T and dS^T are
    already A fragments; lowering reads the flag to place each element's
    query and key.

    ```mlir
    %s = cuir.gemm_async %sQ, %sK transpose_b, %zero acc_transposed
        : memref<64x128xbf16, #S>, memref<64x128xbf16, #S>, tensor<64x64xf32, #WACC>
    ```
  }];
  let arguments = (ins AnyType:$a, AnyType:$b, CuIR_RegisterTile:$acc,
                       UnitAttr:$transpose_b, UnitAttr:$acc_transposed);
  let assemblyFormat = [{
    $a `,` $b (`transpose_b` $transpose_b^)? `,` $acc
    (`acc_transposed` $acc_transposed^)? attr-dict
    `:` type($a) `,` type($b) `,` type($acc)
  }];
}

def CuIR_GemmWaitOp : CuIR_Op<"gemm_wait", [AllTypesMatch<["acc", "result"]>]> {
  let summary = "waits for asynchronous GEMMs and passes the accumulator through";
  let description = [{
    `%s = cuir.gemm_wait %pending pending 0` blocks until at most `pending`
    of the worker's asynchronous GEMMs are in flight (`wgmma.wait_group`) and
    returns the accumulator `%pending`, now readable. A wait whose `pending`
    count leaves this accumulator's GEMM in flight is reported by the
    interpreter.

    The count is a constant, or an index value where a loop's steps differ
    (a first step with one GEMM in flight, later ones with two):
    `cuir.gemm_wait %s pending %n`. The source then has one instantiation
    per count (`wgmma.wait_group` takes an immediate).
  }];
  let arguments = (ins CuIR_RegisterTile:$acc,
                       Optional<Index>:$pending_count,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$pending);
  let results = (outs CuIR_RegisterTile:$result);
  let assemblyFormat = [{
    $acc `pending` custom<PendingCount>($pending_count, $pending) attr-dict `:` type($acc)
  }];
  let hasVerifier = 1;
}

def CuIR_ReduceRowsOp : CuIR_Op<"reduce_rows", [Pure]> {
  let summary = "reduces each row of an accumulator tile (max or sum)";
  let description = [{
    Reduces a 2-D accumulator tile along its columns into a per-row vector
    in the matching `row` layout, including the shuffles across the threads
    that share a row.
  }];
  let arguments = (ins CuIR_ReduceKind:$kind, CuIR_RegisterTile:$input);
  let results = (outs CuIR_RegisterTile:$result);
  let assemblyFormat = "$kind $input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def CuIR_BroadcastRowsOp : CuIR_Op<"broadcast_rows", [Pure]> {
  let summary = "broadcasts a per-row vector across the columns of a tile";
  let arguments = (ins CuIR_RegisterTile:$input);
  let results = (outs CuIR_RegisterTile:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def CuIR_ConvertLayoutOp : CuIR_Op<"convert_layout", [Pure]> {
  let summary = "reinterprets a register tile in another fragment layout";
  let description = [{
    Moves a register tile into another fragment layout with the same shape
    and element type, e.g. the probabilities `P` from the accumulator layout
    of `S = Q K^T` into the A-operand layout of `O += P V`. For
    `mma_m16n8k16` that move is free: two adjacent 16x8 accumulator tiles
    hold exactly a 16x16 A fragment.

    With `transpose` the result is the input's transpose (a 2-D `MxN` tile
    as an `NxM` tile of the same element type): the registers are the same,
    only their meaning changes. A kernel that computes a transposed tile in
    hardware (the sm_90 backward's `S^T = K Q^T`, whose accumulator is the
    A fragment of `dV += P^T dO`) can then be modelled in the logical
    orientation, `S = Q K^T`, and show where the hardware's orientation is
    used:

    ```mlir
    %pt = cuir.convert_layout %p16 transpose
        : tensor<64x128xbf16, #WACC> -> tensor<128x64xbf16, #WA>
    ```
  }];
  let arguments = (ins CuIR_RegisterTile:$input, UnitAttr:$transpose);
  let results = (outs CuIR_RegisterTile:$result);
  let assemblyFormat = "$input (`transpose` $transpose^)? attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def CuIR_ElementwiseOp : CuIR_Op<"elementwise", [
    SingleBlockImplicitTerminator<"YieldOp">, RecursiveMemoryEffects]> {
  let summary = "applies a scalar function to every element of register tiles";
  let description = [{
    Applies its region to every element of its input tiles, all of one
    shape. The region receives one scalar per input followed by the
    element's attention coordinates `(b, h, q_idx, kv_idx)`: `b` and `h` are
    the given operands, `q_idx` is `q_base` plus the element's row and
    `kv_idx` is `kv_base` plus its column. It yields one element per result
    tile; every result has the inputs' shape and layout. This is where
    score modifications and mask predicates live.

    Several results share one evaluation of the region: a backward kernel's
    scores yield the modified score and its derivative together, so that
    what the derivative reuses (a softcap's `tanh`) is computed once.

    ```mlir
    %masked = cuir.elementwise (%s) at [%b, %h, %q0, %kv0]
        : tensor<128x64xf32, #ACC> -> tensor<128x64xf32, #ACC> {
    ^bb0(%x: f32, %bi: index, %hi: index, %qi: index, %ki: index):
      %ok = arith.cmpi uge, %qi, %ki : index
      %r = arith.select %ok, %x, %ninf : f32
      cuir.yield %r : f32
    }
    ```

    With two results, the result types are listed in parentheses:
    `: (tensor<...>) -> (tensor<...>, tensor<...>)`.
  }];
  let arguments = (ins Variadic<CuIR_RegisterTile>:$inputs, Index:$b, Index:$h,
                       Index:$q_base, Index:$kv_base);
  let results = (outs Variadic<CuIR_RegisterTile>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The block arguments that carry (b, h, q_idx, kv_idx).
    ::mlir::BlockArgument getCoordArg(unsigned i) {
      return getBody().getArgument(getInputs().size() + i);
    }
  }];
}

def CuIR_ScatterAddOp : CuIR_Op<"scatter_add", [SingleBlock]> {
  let summary = "adds one value per tile element into a global buffer, at indices computed per element";
  let description = [{
    Runs its region on every element of its input tiles (all of one shape
    and layout), as `cuir.elementwise` does: the region receives one scalar
    per input followed by the element's coordinates `(b, h, q_idx,
    kv_idx)`, and yields as many `index` values as `dst` has dimensions,
    then one `f32` value. That value is added into `dst` at those indices,
    one `red.global.add.f32` per element: the adds of all threads and
    blocks to one element are atomic. An element whose value is exactly
    zero adds nothing and accesses nothing, so its indices need not be in
    bounds; any other index outside `dst` is an error (the interpreter
    reports it).

    This is how a backward kernel accumulates the gradient of a float
    array parameter of a variant (ALiBi slopes, a bias table): each score
    contributes `dS * d score_mod / d element` to the element its score_mod
    loaded, whose index depends on the score's coordinates. `cuir.atomic_add`
    places a whole tile at one offset and cannot express that scatter. The
    transfer yields `select(dS == 0, 0, dS * partial)`, so that a score the
    mask hides (dS = 0 exactly) adds nothing whatever the partial is there.

    ```mlir
    cuir.scatter_add (%ds) at [%b, %h, %q0, %kv0] into %grad_slopes
        : (tensor<64x128xf32, #ACC>) -> memref<?xf32, #cuir.mem<global>> {
    ^bb0(%d: f32, %bi: index, %hi: index, %qi: index, %ki: index):
      ...
      cuir.yield %hi, %v : index, f32
    }
    ```
  }];
  let arguments = (ins Variadic<CuIR_RegisterTile>:$inputs, Index:$b, Index:$h,
                       Index:$q_base, Index:$kv_base, AnyMemRef:$dst);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Synchronisation
//===----------------------------------------------------------------------===//

def CuIR_BarrierInitOp : CuIR_Op<"barrier.init"> {
  let summary = "allocates and initialises an array of mbarriers";
  let description = [{
    `%full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<2>` creates two
    mbarriers in shared memory, each completing a phase when one worker has
    arrived and all expected transaction bytes have landed. Every barrier
    starts in phase 0.
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntPositive]>:$arrivals);
  let results = (outs CuIR_MBarrierType:$barriers);
  let assemblyFormat = "`arrivals` $arrivals attr-dict `:` qualified(type($barriers))";
}

def CuIR_BarrierArriveOp : CuIR_Op<"barrier.arrive"> {
  let summary = "arrives at an mbarrier, optionally expecting bytes";
  let description = [{
    The executing worker arrives once at barrier `%bars[%i]`. With
    `expect_tx`, it also announces that many bytes of asynchronous copies
    (TMA) that must land before the phase completes
    (`mbarrier.arrive.expect_tx`).
  }];
  let arguments = (ins CuIR_MBarrierType:$barriers, Index:$index,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$expect_tx);
  let assemblyFormat = [{
    $barriers `[` $index `]` (`expect_tx` $expect_tx^)? attr-dict `:` qualified(type($barriers))
  }];
}

def CuIR_BarrierWaitOp : CuIR_Op<"barrier.wait"> {
  let summary = "waits until an mbarrier completes the given phase";
  let description = [{
    Blocks the worker until barrier `%bars[%i]` has completed the phase whose
    parity is `%phase` (0 or 1), as `mbarrier.try_wait.parity`. A wait that
    no worker can ever complete is a deadlock, which the interpreter reports.
  }];
  let arguments = (ins CuIR_MBarrierType:$barriers, Index:$index, Index:$phase);
  let assemblyFormat = [{
    $barriers `[` $index `]` `,` $phase attr-dict `:` qualified(type($barriers))
  }];
}

def CuIR_BarrierSyncOp : CuIR_Op<"barrier.sync"> {
  let summary = "block-wide barrier (__syncthreads)";
  let description = [{
    Every worker of the block waits here until all of them have arrived.
  }];
  let assemblyFormat = "attr-dict";
}

def CuIR_BarrierWarpOp : CuIR_Op<"barrier.warp"> {
  let summary = "warp-wide barrier (__syncwarp)";
  let description = [{
    The threads of each warp of the worker wait for one another; shared
    memory a warp wrote before it is visible to that warp's threads after it.
    Kernels use it where each warp reads back only what it wrote (an
    epilogue staged through shared memory by rows of the warp). The
    interpreter, which runs a worker's tiles whole, counts it as a barrier of
    the worker: a warp that reads another warp's writes after it is not
    caught there (compute-sanitizer's racecheck catches it on the GPU).
  }];
  let assemblyFormat = "attr-dict";
}

def CuIR_BarrierNamedOp : CuIR_Op<"barrier.named"> {
  let summary = "named barrier over a subset of the block's threads";
  let description = [{
    `cuir.barrier.named %id threads 256` synchronises on hardware barrier
    `%id` (1..15; 0 is the block barrier) until 256 threads have arrived
    (`bar.sync`). With `arrive` the worker only arrives and continues
    (`bar.arrive`), as warp-specialized kernels do to hand a turn to another
    warpgroup.
  }];
  let arguments = (ins Index:$id, ConfinedAttr<I64Attr, [IntPositive]>:$threads,
                       UnitAttr:$arrive);
  let assemblyFormat = "$id `threads` $threads (`arrive` $arrive^)? attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Launch sequences
//===----------------------------------------------------------------------===//

def CuIR_LaunchSequenceOp : CuIR_Op<"launch_sequence", [
    Symbol, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "kernels launched one after another on shared buffers";
  let description = [{
    Names the kernels of one pass that a host launches in order on the same
    stream, e.g. a backward pass's preprocessing, main and dQ conversion
    kernels. The kernels share their buffers by role: every kernel's `q`,
    `d_o`, `dq`, ... is the same tensor, and `workspace:<name>` the same
    scratch buffer, so a later kernel reads what an earlier one wrote.
    Kernels of the sequence that have the same role must give it the same
    type (and a workspace the same `cuir.shape`); together they write `dq`,
    `dk` and `dv`.

    ```mlir
    cuir.launch_sequence @flash_bwd [@bwd_preprocess, @bwd_main, @bwd_convert]
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       ConfinedAttr<FlatSymbolRefArrayAttr, [ArrayMinCount<1>]>:$kernels);
  let assemblyFormat = "$sym_name $kernels attr-dict";
  let extraClassDeclaration = [{
    /// The kernels, in launch order (the verifier checks that each exists).
    ::llvm::SmallVector<KernelOp> getKernelOps();
  }];
}

//===----------------------------------------------------------------------===//
// Attention variants
//===----------------------------------------------------------------------===//

def CuIR_VariantOp : CuIR_Op<"variant", [
    Symbol, IsolatedFromAbove, NoTerminator, SingleBlock]> {
  let summary = "an attention variant: score function, mask and normaliser";
  let description = [{
    The semantics a transfer gives a kernel, in FlexAttention's terms: an
    optional `cuir.score_mod` applied to every scaled score, an optional
    `cuir.mask_mod` deciding which (query, key) pairs are visible, and the
    normaliser that turns scores into weights (`softmax`, or `sigmoid`, which
    has no row maximum, row sum or rescale). The variant's parameters are the
    arguments of its body; they become kernel parameters. Each carries its
    name (`cuir.param`). Scalars are f32, i32 or i64, or index for a size
    of the kernel (`B`, `Hq`, `Hkv`, `Nq`, `Nkv`: in [0, 2^30)). A dynamic 1-D
    array carries its extent (`cuir.extent`: `batch`, `heads` or
    `batch*kv`, the latter indexed `b * Nkv + kv`). A captured tensor is a
    memref of static shape (any rank, at least one element) with the
    identity layout in `#cuir.mem<global>`, of i1, i32, i64, f16, bf16 or
    f32, with an optional `cuir.default`: a dense elements attribute of the
    same shape and element type.

    ```mlir
    cuir.variant @relbias(%bias: memref<8x255xf32, #cuir.mem<global>>
                            {cuir.param = "bias",
                             cuir.default = dense<...> : tensor<8x255xf32>})
        normalizer softmax { ... }
    ```

    ```mlir
    cuir.variant @prefixlm(%prefix_len: memref<?xi32, #cuir.mem<global>>
                             {cuir.param = "prefix_len", cuir.extent = "batch"})
        normalizer softmax {
      cuir.mask_mod {
      ^bb0(%b: index, %h: index, %q: index, %k: index):
        ...
        cuir.yield %visible : i1
      }
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       CuIR_NormalizerAttr:$normalizer,
                       OptionalAttr<DictArrayAttr>:$arg_attrs);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The score function, or null for the identity.
    ScoreModOp getScoreMod();
    /// The mask, or null if every pair is visible.
    MaskModOp getMaskMod();
    /// The derivative of the score function, or null if not derived.
    ScoreGradOp getScoreGrad();
    /// Name of parameter `i` (its `cuir.param` attribute).
    ::llvm::StringRef getParamName(unsigned i);
  }];
}

def CuIR_ScoreModOp : CuIR_Op<"score_mod", [HasParent<"VariantOp">,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "the score function of a variant";
  let description = [{
    Maps a scaled score (`softmax_scale * q . k`) and its coordinates
    `(b, h, q_idx, kv_idx)` to the score the normaliser sees.
  }];
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$body attr-dict";
  let hasVerifier = 1;
}

def CuIR_ScoreGradOp : CuIR_Op<"score_grad", [HasParent<"VariantOp">,
    SingleBlock]> {
  let summary = "the score function with its derivatives, for the backward";
  let description = [{
    The variant's `cuir.score_mod` together with its derivatives, derived by
    `--cuir-differentiate-scores` (docs/ScoreDerivative.md). The body takes
    the arguments of the score_mod, `(score: f32, b, h, q_idx, kv_idx:
    index)`, computes the score function as the score_mod does, and ends in
    a `cuir.grad_yield` of the modified score, its derivative with respect
    to `score` and, for each element loaded from a float array parameter of
    the variant (`memref.load`), the partial derivative of the modified
    score with respect to that element. A backward kernel accumulates
    `dS * partial` into the element's gradient; an element listed twice
    (one load reached twice) accumulates both.

    ```mlir
    cuir.score_grad {
    ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
      %slope = memref.load %slopes[%h] : memref<?xf32, #cuir.mem<global>>
      ...
      %r = arith.addf %s, %bias : f32
      %one = arith.constant 1.0 : f32
      cuir.grad_yield %r, %one partials(%slope : f32) = (%dist : f32)
    }
    ```
  }];
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$body attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    GradYieldOp getYield();
    /// The loads of the body (nested ones too) from the variant's float
    /// parameters, in order: the elements that need a partial derivative.
    ::llvm::SmallVector<::mlir::memref::LoadOp> getParamLoads();
  }];
}

def CuIR_GradYieldOp : CuIR_Op<"grad_yield", [Pure, ReturnLike, Terminator,
    HasParent<"ScoreGradOp">, AttrSizedOperandSegments]> {
  let summary = "yields a score, its derivative and the parameters' partials";
  let description = [{
    Terminates a `cuir.score_grad`: `score` is the modified score,
    `dscore` its derivative with respect to the score argument and
    `partials[i]` its partial derivative with respect to `elements[i]`, a
    value the body loads from a float array parameter of the variant. Every
    such load of the body is listed. Derivatives are f32.
  }];
  let arguments = (ins F32:$score, F32:$dscore,
                       Variadic<AnyTypeOf<[F16, BF16, F32]>>:$elements,
                       Variadic<F32>:$partials);
  let assemblyFormat = [{
    $score `,` $dscore
    (`partials` `(` $elements^ `:` type($elements) `)` `=`
     `(` $partials `:` type($partials) `)`)? attr-dict
  }];
  let hasVerifier = 1;
}

def CuIR_MaskModOp : CuIR_Op<"mask_mod", [HasParent<"VariantOp">,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "the mask predicate of a variant";
  let description = [{
    Yields whether the pair `(b, h, q_idx, kv_idx)` is visible (i1).
  }];
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$body attr-dict";
  let hasVerifier = 1;
}

def CuIR_BlockMaskOp : CuIR_Op<"block_mask", [
    Symbol, IsolatedFromAbove, SingleBlockImplicitTerminator<"YieldOp">,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "a runtime block mask: the mask predicate, tile sizes, broadcast";
  let description = [{
    Defines the block lists of a kernel whose mask is classified at run time
    (FlexAttention's BlockMask layout, int32, flat row-major). For a problem
    of `B` batches, `Hq` query heads, `Nq` queries and `Nkv` keys, with
    `QB = ceil(Nq / block_m)` query tiles and `KB = ceil(Nkv / block_n)` KV
    tiles, `B' = B` if `depends` lists `batch` (else 1) and `H' = Hq` if it
    lists `heads`, `H' = Hkv` if it lists `kv_heads` (else 1):

    - `kv_num_blocks [B', H', QB]`, `kv_indices [B', H', QB, KB]`: the
      partial KV tiles of each query tile, `full_kv_num_blocks`,
      `full_kv_indices`: its full ones;
    - `q_num_blocks [B', H', KB]`, `q_indices [B', H', KB, QB]`,
      `full_q_*`: the transposed lists (query tiles per KV tile).

    A tile is EMPTY if its region yields false for every in-range pair
    (`q < Nq`, `kv < Nkv`), FULL if all of its `block_m x block_n` pairs are
    in range and visible (so a ragged last tile is never full), else
    PARTIAL. CuIR writes the indices of a row in descending tile order; the
    first `*_num_blocks` entries of a row are valid.

    With `kv_heads` (for a kernel whose thread block walks the query heads
    of a GQA group with one row of lists, a backward pass), row `g` covers
    the query heads `g * G .. (g + 1) * G - 1`, `G = Hq / Hkv`: a tile is
    EMPTY if it is empty for every one of them, FULL if full for every one,
    else PARTIAL. The region still sees each query head `h`; a kernel that
    masks its partial tiles with the exact mask of each head stays exact.
    `kv_heads` excludes `heads`.

    The op's arguments stand for kernel arguments: each carries the
    `cuir.arg` of the kernel argument it is (`"Nkv"`, `"param:doc_ids"`,
    ...) and, for a variant's array, its `cuir.extent`. Scalars are index,
    i32, i64 or f32; arrays are memrefs in `#cuir.mem<global>`. The region
    receives the pair's coordinates `(b, h, q, kv)` (listed after `coords`)
    followed by the arguments, and yields whether the pair is visible (i1).
    It is evaluated only for in-range coordinates.

    `depends` must list `batch` if the region reads `b` and `heads` or
    `kv_heads` if it reads `h` (any use counts). Listing one the region does not read is
    allowed: the lists are then not broadcast over that dimension, which is
    correct but larger; transformations that drop a use keep the op valid.

    ```mlir
    cuir.block_mask @attention_blocks(
        %ids: memref<?xi32, #cuir.mem<global>>
              {cuir.arg = "param:doc_ids", cuir.extent = "batch*kv"},
        %Nkv: index {cuir.arg = "Nkv"})
        tiles 128 x 128 depends [batch] coords(%b, %h, %q, %kv) {
      %row = arith.muli %b, %Nkv : index
      ...
      cuir.yield %visible : i1
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       I64Attr:$block_m,
                       I64Attr:$block_n,
                       DefaultValuedAttr<CuIR_MaskDimsAttr,
                                         "::mlir::cuir::MaskDims::None">:$depends,
                       OptionalAttr<DictArrayAttr>:$arg_attrs);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name,
      "::llvm::ArrayRef<::mlir::Type>":$argTypes,
      "::llvm::ArrayRef<::mlir::DictionaryAttr>":$argAttrs,
      "int64_t":$blockM, "int64_t":$blockN, "::mlir::cuir::MaskDims":$depends)>];
  let extraClassDeclaration = [{
    /// Coordinate `i` of the region: 0 = b, 1 = h, 2 = q, 3 = kv.
    ::mlir::BlockArgument getCoordArg(unsigned i) {
      return getBody().getArgument(i);
    }
    /// The arguments (kernel arguments) as the region sees them.
    ::mlir::Block::BlockArgListType getMaskArgs() {
      return getBody().getArguments().drop_front(4);
    }
    unsigned getNumMaskArgs() { return getFunctionType().getNumInputs(); }
    /// The `cuir.arg` of argument `i`, or "".
    ::llvm::StringRef getArgRole(unsigned i);
    /// The yielded visibility.
    ::mlir::Value getVisible();
    bool dependsOnBatch() {
      return ::mlir::cuir::bitEnumContainsAll(getDepends(),
                                              ::mlir::cuir::MaskDims::Batch);
    }
    bool dependsOnHeads() {
      return ::mlir::cuir::bitEnumContainsAll(getDepends(),
                                              ::mlir::cuir::MaskDims::Heads);
    }
    /// A row of lists per KV head: its GQA group's query heads merged.
    bool listsPerKvHead() {
      return ::mlir::cuir::bitEnumContainsAll(getDepends(),
                                              ::mlir::cuir::MaskDims::KvHeads);
    }
  }];
}

#endif // CUIR_OPS_TD
