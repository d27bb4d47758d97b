// RUN: cuir-opt %S/../interpret/warp-specialized.mlir --transfer=prefixlm | FileCheck %s
//
// On a warp-specialized kernel whose score GEMM is asynchronous (wgmma), the
// variant's mask goes after the GEMM's wait, never between the GEMM and its
// wait (the failure of the CuBridge paper's Figure 2).
// after-gemm-wait-no-hazard.test runs the result.

// CHECK: cuir.bind warpgroup [1] role consumer
// CHECK: %[[S:.*]] = cuir.gemm_async
// CHECK-NEXT: %[[W:.*]] = cuir.gemm_wait %[[S]] pending 0
// CHECK-NOT: cuir.gemm_async
// CHECK: cuir.elementwise (%[[W]]) {{.*}}cuir.variant_scores = "prefixlm"
// This is a test file; the kernel lives in the interpreter's tests.
