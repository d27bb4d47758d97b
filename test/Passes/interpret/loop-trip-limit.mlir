// A loop of more iterations than a kernel's int counter holds is an error at
// the loop, before it runs (a score_mod of 10^12 steps kept the interpreter
// busy for ever).
// RUN: not cuir-opt %cuir_src_root/kernels/sm80/flash_fwd.cuir.mlir --transfer=%s --cuir-interpret="Nq=64 Nkv=64 d=64 kernel=flash_fwd_bf16_d64" -o /dev/null 2>&1 | FileCheck %s
// CHECK: loop-trip-limit.mlir:[[#@LINE+8]]:10: error: runs 1000000000000 iterations (from 0 to 1000000000000 by 1), more than the 2147483647 a kernel's int loop counter holds
cuir.variant @long_loop() normalizer softmax {
  cuir.score_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 1000000000000 : index
    %half = arith.constant 0.5 : f32
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %score) -> (f32) {
      %t = arith.mulf %s, %half : f32
      scf.yield %t : f32
    }
    cuir.yield %r : f32
  }
}
