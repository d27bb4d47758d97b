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
    file location at all are reported too, constants excepted.
  }];
  let options = [
    Option<"sourceRoot", "source-root", "std::string", /*default=*/"\"\"",
           "Directory against which relative source paths are resolved">,
    Option<"requireAll", "require-all", "bool", /*default=*/"false",
           "Report kernel ops that carry no source location">
  ];
}

def Interpret : Pass<"cuir-interpret", "::mlir::ModuleOp"> {
  let summary = "Runs CuIR kernels on the CPU and compares them with a reference";
  let description = [{
    Executes every `cuir.kernel` of the module (or the one named by `kernel`)
    on random inputs of the given shapes, block by block, in the element
    types the kernel uses, and compares its output (and log-sum-exp, when
    both sides have one) with a reference: the built-in standard attention,
    or `reference(q, k, v, scale, **params)` from a PyTorch file, run by
    `python` on the same inputs (by default `$CUIR_PYTHON`, else the first
    of `python3` on PATH and `/usr/bin/python3` that can import torch; none
    is an error at the option). Parameters are bound by their `cuir.arg`
    role (see docs/ExecutionSemantics.md).

    Asynchronous hazards (reading an async copy's destination or an async
    GEMM's result before its wait, overwriting an in-flight copy's source, a
    wait whose `pending` count does not cover what it waits for) and
    deadlocks are errors that name both ops. A mismatch reports the maximum
    absolute error, the relative error and the first mismatching element
    with its coordinates. Success is reported as a remark on the kernel.

    A backward pass is checked the same way: a `cuir.launch_sequence` runs
    its kernels in order on buffers they share by role (`kernel` may name
    the sequence, not one of its kernels), and a kernel with `dq`, `dk` or
    `dv` parameters in no sequence runs alone. Its `o` and `lse` are the
    reference forward's; dq, dk and dv are compared with the float64
    backward, or a PyTorch file's gradients (autograd through `reference`,
    or its `reference_backward`). A plain access to an output or workspace
    element that another block of the same launch wrote or added to is a
    race (see docs/Interpreter.md, *Backward passes*).

    Options are checked before any pass runs, with errors at the option:
    sizes must be positive and their data (multiplied with overflow checks)
    fit `max-memory`; `params` values must be finite numbers that fit the
    parameters they bind to (see docs/Interpreter.md, *Limits and bad
    input*).

    ```
    cuir-opt k.cuir.mlir --cuir-interpret="Nq=1000 Nkv=777 Hq=4 Hkv=2 causal=1"
    ```
  }];
  let options = [
    Option<"kernelName", "kernel", "std::string", /*default=*/"\"\"",
           "Kernel to run (default: every kernel of the module)">,
    Option<"batch", "B", "int64_t", /*default=*/"1", "Batch size">,
    Option<"headsQ", "Hq", "int64_t", /*default=*/"1", "Query heads">,
    Option<"headsKV", "Hkv", "int64_t", /*default=*/"1", "Key/value heads">,
    Option<"seqQ", "Nq", "int64_t", /*default=*/"128", "Query length">,
    Option<"seqKV", "Nkv", "int64_t", /*default=*/"128", "Key/value length">,
    Option<"headDim", "d", "int64_t", /*default=*/"128", "Head dimension">,
    Option<"causal", "causal", "bool", /*default=*/"false",
           "Causal masking (bottom-right aligned), for the kernel and the "
           "built-in reference">,
    Option<"seed", "seed", "uint64_t", /*default=*/"0",
           "Seed of the random inputs and of the block sample">,
    Option<"sampleBlocks", "blocks", "int64_t", /*default=*/"0",
           "Run only this many thread blocks, chosen at random (0: all)">,
    Option<"tolerance", "tolerance", "double", /*default=*/"1e-2",
           "Largest accepted relative error of the output">,
    Option<"reference", "reference", "std::string", /*default=*/"\"builtin\"",
           "'builtin', or a PyTorch file defining reference(q, k, v, scale, "
           "**params) over [B, H, N, d] tensors (for a backward pass also, "
           "optionally, reference_backward(q, k, v, o, lse, d_o, scale, "
           "**params))">,
    Option<"params", "params", "std::string", /*default=*/"\"\"",
           "Variant parameters: 'name=value;name=v0,v1,...'">,
    Option<"dump", "dump", "std::string", /*default=*/"\"\"",
           "Directory to write inputs and outputs to as .npy files">,
    Option<"python", "python", "std::string", /*default=*/"\"\"",
           "Python interpreter with torch and numpy for PyTorch references "
           "(default: $CUIR_PYTHON, else the first of python3 on PATH and "
           "/usr/bin/python3 that imports torch)">,
    Option<"maxMemory", "max-memory", "int64_t", /*default=*/"4096",
           "Memory limit in MiB on the interpreter's data (inputs, outputs, "
           "the reference's copies, parameters, shared memory, tiles)">
  ];
}

// The LLM client's settings and the closed loop's rounds, shared by --lift
// and --transfer=llm:<reference.py> (passes/LLMPassSupport.h reads them).
defvar LLMOptions = [
    Option<"provider", "provider", "std::string", /*default=*/"\"\"",
           "LLM provider: openai (any OpenAI-compatible server), anthropic, "
           "replay or none (default: $CUIR_LLM_PROVIDER; openai if only an "
           "endpoint is set)">,
    Option<"endpoint", "endpoint", "std::string", /*default=*/"\"\"",
           "Chat endpoint URL or base URL (default: $CUIR_LLM_ENDPOINT, else "
           "the provider's public API); an API key or URL credentials go "
           "over plain http only to a loopback host">,
    Option<"model", "model", "std::string", /*default=*/"\"\"",
           "Model name (default: $CUIR_LLM_MODEL)">,
    Option<"temperature", "temperature", "double", /*default=*/"-1.0",
           "Sampling temperature (negative: $CUIR_LLM_TEMPERATURE, else 0)">,
    Option<"maxTokens", "max-tokens", "int", /*default=*/"0",
           "Token limit of an answer (0: $CUIR_LLM_MAX_TOKENS, else 16384 "
           "for anthropic and the server's own limit for openai)">,
    Option<"timeout", "timeout", "double", /*default=*/"0.0",
           "Seconds one HTTP request may take (0: $CUIR_LLM_TIMEOUT, else "
           "600)">,
    Option<"deadline", "deadline", "double", /*default=*/"0.0",
           "Seconds the pass may wait for its LLM in all, from the first "
           "request, rounds and retries included (0: $CUIR_LLM_DEADLINE, "
           "else 1800)">,
    Option<"progressInterval", "progress-interval", "double",
           /*default=*/"0.0",
           "Seconds between the 'still waiting' lines of a request (0: "
           "$CUIR_LLM_PROGRESS_INTERVAL, else 30)">,
    Option<"allowInsecureHttp", "allow-insecure-http", "bool",
           /*default=*/"false",
           "Send the API key and URL credentials over plain http to a host "
           "that is not loopback, in clear (also "
           "$CUIR_LLM_ALLOW_INSECURE_HTTP=1)">,
    Option<"maxRetries", "max-retries", "int", /*default=*/"-1",
           "Retries of a request after 429, 5xx, a timeout or a dropped "
           "connection (negative: $CUIR_LLM_MAX_RETRIES, else 4)">,
    Option<"backoffMs", "backoff-ms", "int", /*default=*/"-1",
           "First retry delay in ms, doubled on each retry (negative: "
           "$CUIR_LLM_BACKOFF_MS, else 1000)">,
    Option<"maxBackoffMs", "max-backoff-ms", "int", /*default=*/"-1",
           "Longest retry delay in ms, and the longest Retry-After honoured "
           "(negative: $CUIR_LLM_MAX_BACKOFF_MS, else 60000)">,
    Option<"replayFile", "replay-file", "std::string", /*default=*/"\"\"",
           "JSON-lines file of recorded exchanges for provider=replay "
           "(default: $CUIR_LLM_REPLAY_FILE)">,
    Option<"recordFile", "record-file", "std::string", /*default=*/"\"\"",
           "Append every exchange to this JSON-lines file, for replay "
           "(default: $CUIR_LLM_RECORD_FILE)">,
    Option<"maxRounds", "max-rounds", "unsigned", /*default=*/"4",
           "Most answers to ask for before giving up">
];

def Lift : Pass<"cuir-lift", "::mlir::ModuleOp"> {
  let summary = "Lifts the CUDA kernel a module carries into Source CuIR";
  let description = [{
    Runs on the module that cuir-opt makes of a `.cu` input (module
    attributes `cuir.source_path` and `cuir.source_text`) and replaces its
    body by the lifted kernels, keeping the source attributes. cuir-opt
    also spells the pass `--lift` (with the same options), as below; a
    program that embeds CuIR registers `cuir-lift` only.

    The lift comes from the lift cache when it has one for the source text
    (key: SHA-256 of the dialect version and the text): first the bundled
    index (`kernels/lift-cache.json` of the source tree, or `cache-index`),
    then the user cache (`cache-dir`, `$CUIR_LIFT_CACHE`, default
    `~/.cache/cuir/lift`). Otherwise an LLM lifts it in a closed loop: the
    prompt (lib/Lift/prompts) asks for syntax annotation, code-to-worker
    mapping and primitive lifting, carrying the dialect reference and the
    execution semantics; the answer's ```mlir block is parsed, verified, its
    locations checked against the source (`cuir-check-locations` with
    `require-all`), and by default (`check=semantic`) every kernel is run by
    the interpreter against the built-in standard attention on random inputs
    (ragged sizes, grouped heads, batch 2, causal where the kernel masks,
    each instantiation at its head dimension, at the kernel's tolerance);
    then the `validate` pipeline runs. Any failure goes back to the model
    with the diagnostics, for at most `max-rounds` rounds; each round is
    reported on stderr. An accepted lift is stored in the user cache with
    the record of what it passed (`cuir.lift_check`), unless the entry there
    passed a stronger check. A cache entry is used only if it passed at
    least `check` (an entry that records a weaker check is checked first);
    the bundled lifts count as checked by the project. `check=none` accepts
    kernels that are not attention kernels, unchecked.

    One line on stderr says where the Source CuIR came from (the bundled
    index, the user cache or the LLM's round) and what it passed; the module
    records the file that holds it and the file's SHA-256
    (`cuir.source_cuir`), which `--lower` diffs against.

    The LLM is configured by options or the environment (`CUIR_LLM_PROVIDER`,
    `CUIR_LLM_ENDPOINT`, `CUIR_LLM_MODEL`, ...); the API key only by the
    environment (`CUIR_LLM_API_KEY`, `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`).
    Negative or zero numeric options defer to the environment, then to the
    defaults. See docs/Lift.md.

    ```
    cuir-opt kernels/sm80/flash_fwd.cu --lift -o flash_fwd.cuir.mlir
    CUIR_LLM_PROVIDER=openai CUIR_LLM_ENDPOINT=http://localhost:8000/v1 \
      CUIR_LLM_MODEL=qwen3 cuir-opt new_kernel.cu --lift="max-rounds=6"
    ```
  }];
  let dependentDialects = ["::mlir::cuir::CuIRDialect"];
  let options = !listconcat(LLMOptions, [
    Option<"check", "check", "std::string", /*default=*/"\"semantic\"",
           "What a lift must pass to be accepted or taken from the user "
           "cache: semantic (the interpreter against standard attention) or "
           "none (for kernels that are not attention kernels)">,
    Option<"validate", "validate", "std::string", /*default=*/"\"\"",
           "Pass pipeline that must accept a candidate after the location "
           "check, e.g. cuir-interpret{...}; its diagnostics are the "
           "feedback">,
    Option<"cacheIndex", "cache-index", "std::string", /*default=*/"\"\"",
           "Bundled lift-cache index (default: kernels/lift-cache.json of "
           "the source tree)">,
    Option<"cacheDir", "cache-dir", "std::string", /*default=*/"\"\"",
           "User lift cache (default: $CUIR_LIFT_CACHE, else "
           "~/.cache/cuir/lift)">,
    Option<"useCache", "use-cache", "bool", /*default=*/"true",
           "Look in the lift cache before asking the LLM (a new lift is "
           "stored either way)">,
    Option<"dumpPrompt", "dump-prompt", "std::string", /*default=*/"\"\"",
           "Write the first round's prompt (system and user message) to "
           "this file">
  ]);
}

def Transfer : Pass<"cuir-transfer", "::mlir::ModuleOp"> {
  let summary = "Gives every kernel of the module the semantics of an attention variant";
  let description = [{
    Rewrites Source CuIR into Target CuIR for a variant given by name, as a
    composition, as a variant file, or by a PyTorch reference through an LLM
    (cuir-opt also spells the pass `--transfer`, with the same options, as
    below; a program that embeds CuIR registers `cuir-transfer` only):

    ```
    cuir-opt k.cuir.mlir --transfer=prefixlm
    cuir-opt k.cuir.mlir --transfer="prefixlm,softcap{softcap=30},sigmoid"
    cuir-opt k.cuir.mlir --transfer=my_variant.mlir
    cuir-opt k.cuir.mlir --transfer="llm:my_reference.py max-rounds=6"
    ```

    Built-in variants: causal, prefixlm (prefix_len per batch element),
    softcap, sigmoid (sigmoid_bias), alibi (alibi_slopes per head), window
    (window_left, window_right), global-window (global_tokens, window_left,
    window_right) and document (doc_ids per token). `{name=value ...}` gives
    a parameter's default, which the interpreter uses when no value is
    passed. A variant file holds one `cuir.variant` (as `python/cuir` writes
    them from FlexAttention-style score_mod/mask_mod functions).

    The spec is checked before any pass runs: balanced, unnested braces, no
    empty name, key or value, each variant and each key once, defaults that
    are finite numbers of the parameter's type (a list or `runs:` for
    arrays), windows and `global_tokens` at least 0, `softcap` positive. An
    error points at the offending character of the option as written, e.g.
    `--transfer=window{window_left=abc}:1:31: error: ...`.

    `llm:<reference.py>` is for references the tracer cannot express: an LLM
    writes the `cuir.variant` from the Source CuIR and the reference (a file
    defining `reference(q, k, v, scale, **params)`, see
    docs/Interpreter.md), in a closed loop. Each answer is parsed, verified,
    applied to a copy of the kernels, and the Target CuIR is run by the
    interpreter against the reference on `check-shapes`; any failure goes
    back to the model with the diagnostics, for at most `max-rounds` rounds,
    each reported on stderr. The result is what `--transfer=<the accepted
    variant file>` gives; the variant is stored in the user lift cache
    (`<cache-dir>/<key>.variant.mlir`, key: SHA-256 of the reference and the
    Source CuIR) and taken from there next time. The LLM is configured as
    for `--lift` (options below or `CUIR_LLM_*`). Options after the spec:
    `--transfer="llm:ref.py endpoint=... model=..."`. See docs/Lift.md.

    The transfer finds the attention structure by analysis (the score GEMMs
    and where their tiles are complete, the key/value block each reads, the
    online softmax and the P V GEMM), inserts one `cuir.elementwise` after
    each score GEMM's completion that applies the score function to the
    scaled score and the mask (folding the softmax scale into it when there
    is a score function), appends the variant's parameters to the kernel's,
    switches the kernel's own causal mask off (the variant's mask replaces
    it; ragged-tail masks stay), and for a sigmoid normaliser replaces the
    exponentials, drops the rescale, the division by the row sum and the
    log-sum-exp. Masks are applied in every block; `--cuir-split-full-partial`
    then restricts them to the blocks that need them.
  }];
  let options = !listconcat([
    Option<"variant", "variant", "std::string", /*default=*/"\"\"",
           "Variant spec (name, composition with ',', {param=default}), "
           "a .mlir file holding a cuir.variant, or llm:<reference.py>">
  ], LLMOptions, [
    ListOption<"checkShapes", "check-shapes", "std::string",
               "llm: problems the interpreter checks each answer on, as "
               "BxHqxHkvxNqxNkv, each on the next kernel of the module "
               "(default 1x4x2x200x333,2x2x1x257x130)">,
    Option<"checkParams", "check-params", "std::string", /*default=*/"\"\"",
           "llm: values of the variant's parameters for the checks, "
           "'name=value;name=v0,v1' (default: their cuir.default)">,
    Option<"python", "python", "std::string", /*default=*/"\"\"",
           "llm: Python interpreter with torch and numpy for the reference "
           "(default: $CUIR_PYTHON, else the first of python3 on PATH and "
           "/usr/bin/python3 that imports torch)">,
    Option<"cacheDir", "cache-dir", "std::string", /*default=*/"\"\"",
           "llm: where accepted variants are stored (default: the user lift "
           "cache, $CUIR_LIFT_CACHE, else ~/.cache/cuir/lift)">,
    Option<"useCache", "use-cache", "bool", /*default=*/"true",
           "llm: take the variant from the cache when it has one for the "
           "reference and the Source CuIR (a new one is stored either way)">,
    Option<"dumpPrompt", "dump-prompt", "std::string", /*default=*/"\"\"",
           "llm: write the first round's prompt (system and user message) "
           "to this file">
  ]);
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def SplitFullPartial : Pass<"cuir-split-full-partial", "::mlir::ModuleOp"> {
  let summary = "Masks only the key/value blocks that need it and skips the blocks nobody sees";
  let description = [{
    After `--transfer`, the variant's mask runs in every key/value block.
    This pass analyses the mask by its meaning, as a Presburger set over
    (q_idx, kv_idx) and the parameters (docs/MaskAnalysis.md), so that any
    spelling of a mask splits alike: when every query row sees one interval
    of keys [lo(q), hi(q)) with bounds q + c or c (causal, prefix-LM, sliding
    windows, their intersections, and unions whose intervals touch), it derives
    for each block of query rows, at run time from sizes and parameters,
    which key/value blocks are full (no mask), partial (mask) and empty
    (skipped), and rewrites the kernel's loops of masking steps and unmasked
    steps accordingly: masked steps over the partial blocks above the full
    ones, unmasked steps over the full blocks, and a copy of the masked steps
    over the partial blocks below them when the mask has a left edge. Blocks
    outside them are never loaded or computed.

    Other masks are classified at run time (`block-mask=auto`, the
    default), with a remark that says why they are not bounded statically:
    not linear in (q_idx, kv_idx) (documents, lookups, integer division and
    modulo: the remark names the operation), or linear but not one such
    interval a row (global tokens with a window: the remark lists the convex
    pieces). The kernel gets a `cuir.block_mask` (the mask predicate, whose
    tiles a classification kernel sorts into empty, partial and full), four
    list arguments in FlexAttention's BlockMask layout
    (`block_mask:kv_num_blocks`, `block_mask:kv_indices`,
    `block_mask:full_kv_num_blocks`, `block_mask:full_kv_indices`), and its
    loops visit the listed tiles: masked steps over the partial ones,
    unmasked steps over the full ones (docs/BlockSparsity.md).
    `block-mask=runtime` does so for every mask, `block-mask=dense` keeps
    the mask in every block instead. The new bounds and the copied loop
    carry `cuir.change = #cuir.change<split>`, the list reads
    `#cuir.change<blocks>`.

    On the kernels of a backward pass (after the backward transfer), whose
    thread blocks own a KV tile and step over query tiles, every mask is
    classified at run time at the backward's tiles, and the query steps walk
    the transposed lists (`block_mask:q_num_blocks`, `block_mask:q_indices`,
    `block_mask:full_q_num_blocks`, `block_mask:full_q_indices`): masking
    steps over the partial query tiles, unmasked steps (whose scores and
    score derivative lose the mask) over the full ones (docs/Backward.md).
    Left as they are, with a remark: a mask equal to the kernel's own causal
    mask (`block-mask=runtime` lists it anyway) and a mask that reads the
    query head (one thread block steps over every head of a GQA group;
    `block-mask=runtime` refuses it).
  }];
  let options = [
    Option<"blockMask", "block-mask", "std::string", /*default=*/"\"auto\"",
           "Masks the static analysis cannot bound: 'auto' (runtime block "
           "mask), 'runtime' (a runtime block mask for every mask) or "
           "'dense' (every block masked)">
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def DifferentiateScores : Pass<"cuir-differentiate-scores", "::mlir::ModuleOp"> {
  let summary = "Derives the derivatives of every variant's score function for the backward";
  let description = [{
    Adds to every `cuir.variant` with a `cuir.score_mod` a
    `cuir.score_grad`: the score function together with d score_mod /
    d score and, for each element the score_mod loads from a float array
    parameter (a captured tensor, a bias table, ALiBi slopes), the partial
    derivative with respect to that element, which a backward kernel
    accumulates in fp32. An existing `cuir.score_grad` is derived again.

    The derivatives are built by the chain rule (forward mode, one sweep per
    seed) over the arith and math ops the tracer and the built-ins emit,
    reading the forward values rather than recomputing them: softcap's
    `cap * tanh(s / cap)` gives `1 - t * t` of the forward `t`, an additive
    bias gives 1. Ops the score and the elements do not reach (coordinates,
    integer index math) are kept as they are. An op on a differentiated path
    without an exact rule is refused with an error at its location
    (`cannot differentiate ...`); the rules and the conventions at
    non-differentiable points (ties of max/min go to the first operand, the
    derivative of |x| at 0 is 0) are listed in docs/ScoreDerivative.md.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def Lower : Pass<"cuir-lower", "::mlir::ModuleOp"> {
  let summary = "Patches the expert CUDA kernel to the Target CuIR and compiles it through NVPTX";
  let description = [{
    Diffs every kernel of the module (Target CuIR) against the Source CuIR
    it was lifted to, hands each change that a transform recorded
    (`cuir.change`, `cuir.removed`) to the patcher of its rewrite, which
    finds the CUDA lines through the lift's locations, and applies small
    line-level patches in the source's own idiom (see docs/Lowering.md). A
    difference no transform recorded (an edited op, say) is an error at its
    location. cuir-opt also spells the pass
    `--lower` (with the same options), as below; a program that embeds
    CuIR registers `cuir-lower` only. Writes, next to `output`:

      <stem>.cu                     the patched kernel
      <stem>.diff                   a unified diff against the source
      cuir/attention_params.h       the params header with the variant's
                                    fields (when it has parameters)
      <stem>.json                   the variant's fields, for loaders
      <stem>.<arch>.ptx / .cubin    per arch, through clang's CUDA front end,
                                    LLVM's NVPTX back end and ptxas
      lib<stem>.so                  a fat library with the C entry point

    all or nothing, as one set: staged beside `output` and moved into place
    at the end of the pass or, under cuir-opt, once the whole pipeline has
    succeeded (an earlier set stays until then). The Source CuIR comes from
    `source-cuir`, else from the file the lift of this module recorded
    (`cuir.source_cuir`: the bundled lift, the user-cache entry, wherever
    `cache-dir` put it; its SHA-256 must still match), else from the lift
    cache entry of the module's CUDA source (the bundled index, then the
    default user cache). With cuir-opt, `-o out/x.cu` sets `output`:

    ```
    cuir-opt kernels/sm80/flash_fwd.cu --lift --transfer=prefixlm --lower -o out/prefixlm.cu
    ```

    Lowering unmodified Source CuIR reproduces the source byte for byte.

    The tools are found, not fixed: `clang` from the option, else
    `$CUIR_CLANG`, else `clang++-22` on PATH, else
    `/usr/lib/llvm-22/bin/clang++`; ptxas and fatbinary in the `bin` of the
    CUDA toolkit of `cuda-path`, else `$CUDA_PATH`, else `$CUDA_HOME`, else
    the toolkit of `ptxas` on PATH, else `/usr/local/cuda`; `diff` on PATH.
    A tool that cannot be found is an error before any work, naming the
    option and the variable to set (clang++ and the toolkit only with
    `compile`).
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"\"",
           "The patched .cu file (its directory receives the other outputs)">,
    ListOption<"archs", "archs", "std::string",
               "GPU archs to compile for (default sm_80,sm_90)">,
    Option<"compile", "compile", "bool", /*default=*/"true",
           "Compile the patched kernel (PTX, cubins, library)">,
    Option<"keepLLVMIR", "keep-llvm-ir", "bool", /*default=*/"false",
           "Also write the device LLVM IR per arch (<stem>.<arch>.ll)">,
    Option<"sourceCuIR", "source-cuir", "std::string", /*default=*/"\"\"",
           "The Source CuIR file (default: the one the lift recorded, else "
           "the lift cache's)">,
    Option<"sourceRoot", "source-root", "std::string", /*default=*/"\"\"",
           "Directory of the CUDA source named by the locations">,
    ListOption<"includeDirs", "include-dirs", "std::string",
               "Extra include directories for compiling">,
    Option<"clang", "clang", "std::string", /*default=*/"\"\"",
           "clang++ with the CUDA front end and NVPTX (default: $CUIR_CLANG, "
           "else clang++-22 on PATH, else /usr/lib/llvm-22/bin/clang++)">,
    Option<"cudaPath", "cuda-path", "std::string", /*default=*/"\"\"",
           "The CUDA toolkit, whose bin holds ptxas and fatbinary (default: "
           "$CUDA_PATH, else $CUDA_HOME, else the toolkit of ptxas on PATH, "
           "else /usr/local/cuda)">
  ];
}

#endif // CUIR_PASSES_TD
