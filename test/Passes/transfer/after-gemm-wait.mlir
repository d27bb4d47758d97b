// RUN: cuir-opt %S/../interpret/warp-specialized.mlir --transfer=prefixlm | FileCheck %s
// RUN: cuir-opt %S/../interpret/warp-specialized.mlir --transfer=prefixlm --cuir-interpret="Nq=200 Nkv=333 Hq=2 d=16 reference=%S/Inputs/variants_reference.py params=variant=prefixlm;prefix_len=100" -o /dev/null 2>&1 | FileCheck %s --check-prefix=RESULT
//
// On a warp-specialized kernel whose score GEMM is asynchronous (wgmma), the
// variant's mask goes after the GEMM's wait, never between the GEMM and its
// wait (the failure of the CuBridge paper's Figure 2); the interpreter raises
// no hazard and the result matches.

// CHECK: cuir.bind warpgroup [1] role consumer
// CHECK: %[[S:.*]] = cuir.gemm_async
// CHECK-NEXT: %[[W:.*]] = cuir.gemm_wait %[[S]] pending 0
// CHECK-NOT: cuir.gemm_async
// CHECK: cuir.elementwise (%[[W]]) {{.*}} {cuir.variant_scores = "prefixlm"}
// RESULT: remark: matches the reference: @fa3_like
// This is a test file; the kernel lives in the interpreter's tests.
