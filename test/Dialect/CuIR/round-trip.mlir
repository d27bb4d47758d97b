// RUN: cuir-opt %s | FileCheck %s
// RUN: cuir-opt %s | cuir-opt | FileCheck %s
// RUN: cuir-opt %s --mlir-print-op-generic | cuir-opt | FileCheck %s
// RUN: cuir-opt %s | FileCheck %s --check-prefix=TEXT --strict-whitespace
// RUN: cuir-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
//
// Every CuIR op, attribute and type, printed and parsed back.

#A    = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
#B    = #cuir.frag<b, mma_m16n8k16, warps = [4, 1]>
#ACC  = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#ROW  = #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>
#WA   = #cuir.frag<a, wgmma_m64nNk16, warps = [2, 1]>
#WACC = #cuir.frag<acc, wgmma_m64nNk16, warps = [2, 1]>
#G    = #cuir.mem<global>
#S    = #cuir.mem<shared>

// CHECK-DAG: #[[A:.*]] = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
// CHECK-DAG: #[[ACC:.*]] = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
// CHECK-DAG: #[[WACC:.*]] = #cuir.frag<acc, wgmma_m64nNk16, warps = [2, 1]>
// CHECK-DAG: #[[SHARED:.*]] = #cuir.mem<shared>

// CHECK-LABEL: cuir.kernel @sm80_ops(
// CHECK-SAME: grid (d0, d1) -> (d0 ceildiv 128, d1) threads 128 arch "sm_80"
// CHECK-SAME: attributes {note = "kept"}
cuir.kernel @sm80_ops(%g: memref<?x128xbf16, #G>, %lse: memref<?xf32, #G>,
                      %n: index, %h: index)
    grid (n, h) -> (n ceildiv 128, h) threads 128 arch "sm_80"
    attributes {note = "kept"} {
  %c0 = arith.constant 0 : index
  // CHECK: cuir.block_id x
  // CHECK: cuir.block_id y
  // The axis is a bare keyword after one space; generically an enum attribute.
  // TEXT: = cuir.block_id x{{$}}
  // GENERIC: "cuir.block_id"() <{dim = #cuir<dim x>}> : () -> index
  // GENERIC: "cuir.block_id"() <{dim = #cuir<dim y>}> : () -> index
  %bx = cuir.block_id x
  %by = cuir.block_id y
  // CHECK: cuir.alloc {swizzle = 128 : i64} : memref<64x128xbf16, #[[SHARED]]>
  %s = cuir.alloc {swizzle = 128} : memref<64x128xbf16, #S>
  %sq = cuir.alloc : memref<128x128xbf16, #S>
  // CHECK: %[[T:.*]] = cuir.copy_async cp_async %{{.*}}[%{{.*}}, %{{.*}}] -> %{{.*}} : memref<?x128xbf16, #{{.*}}> -> memref<64x128xbf16, #[[SHARED]]> -> !cuir.token
  %t = cuir.copy_async cp_async %g[%bx, %c0] -> %s
      : memref<?x128xbf16, #G> -> memref<64x128xbf16, #S> -> !cuir.token
  // CHECK: %[[G:.*]] = cuir.commit %[[T]]
  %grp = cuir.commit %t
  // CHECK: %{{.*}} = cuir.commit{{$}}
  %empty = cuir.commit
  // CHECK: cuir.wait_group %[[G]] pending 1
  cuir.wait_group %grp pending 1
  // CHECK: cuir.copy %{{.*}}[%{{.*}}, %{{.*}}] -> %{{.*}} : memref<?x128xbf16, #{{.*}}> -> memref<128x128xbf16, #[[SHARED]]>
  cuir.copy %g[%bx, %c0] -> %sq : memref<?x128xbf16, #G> -> memref<128x128xbf16, #S>
  // CHECK: cuir.barrier.sync
  cuir.barrier.sync
  // CHECK: cuir.barrier.warp
  cuir.barrier.warp
  // CHECK: cuir.load %{{.*}} : memref<128x128xbf16, #[[SHARED]]> -> tensor<128x128xbf16, #[[A]]>
  %q = cuir.load %sq : memref<128x128xbf16, #S> -> tensor<128x128xbf16, #A>
  // CHECK: cuir.load %{{.*}} transpose : memref<64x128xbf16, #[[SHARED]]> -> tensor<128x64xbf16, #{{.*}}>
  %kt = cuir.load %s transpose : memref<64x128xbf16, #S> -> tensor<128x64xbf16, #B>
  %z = arith.constant dense<0.0> : tensor<128x64xf32, #ACC>
  // CHECK: cuir.gemm %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x128xbf16, #[[A]]>, tensor<128x64xbf16, #{{.*}}>, tensor<128x64xf32, #[[ACC]]>
  %acc = cuir.gemm %q, %kt, %z
      : tensor<128x128xbf16, #A>, tensor<128x64xbf16, #B>, tensor<128x64xf32, #ACC>
  // CHECK: cuir.gemm %{{.*}}, %{{.*}} transpose_b, %{{.*}} : tensor<128x128xbf16, #[[A]]>, memref<64x128xbf16, #[[SHARED]]>, tensor<128x64xf32, #[[ACC]]>
  %acc2 = cuir.gemm %q, %s transpose_b, %acc
      : tensor<128x128xbf16, #A>, memref<64x128xbf16, #S>, tensor<128x64xf32, #ACC>
  // CHECK: cuir.reduce_rows max %{{.*}} : tensor<128x64xf32, #[[ACC]]> -> tensor<128xf32, #{{.*}}>
  %mx = cuir.reduce_rows max %acc2 : tensor<128x64xf32, #ACC> -> tensor<128xf32, #ROW>
  // CHECK: cuir.reduce_rows sum
  %sm = cuir.reduce_rows sum %acc2 : tensor<128x64xf32, #ACC> -> tensor<128xf32, #ROW>
  // CHECK: cuir.broadcast_rows %{{.*}} : tensor<128xf32, #{{.*}}> -> tensor<128x64xf32, #[[ACC]]>
  %mb = cuir.broadcast_rows %mx : tensor<128xf32, #ROW> -> tensor<128x64xf32, #ACC>
  %d = arith.subf %acc2, %mb : tensor<128x64xf32, #ACC>
  %ninf = arith.constant 0xFF800000 : f32
  // CHECK: cuir.elementwise (%{{.*}}, %{{.*}}) at [%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : (tensor<128x64xf32, #[[ACC]]>, tensor<128x64xf32, #[[ACC]]>) -> tensor<128x64xf32, #[[ACC]]> {
  // CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
  // CHECK: cuir.yield %{{.*}} : f32
  %e = cuir.elementwise (%d, %acc2) at [%c0, %by, %bx, %c0]
      : (tensor<128x64xf32, #ACC>, tensor<128x64xf32, #ACC>) -> tensor<128x64xf32, #ACC> {
  ^bb0(%x: f32, %y: f32, %b: index, %hh: index, %qi: index, %ki: index):
    %ok = arith.cmpi uge, %qi, %ki : index
    %sum = arith.addf %x, %y : f32
    %r = arith.select %ok, %sum, %ninf : f32
    cuir.yield %r : f32
  }
  // Two results from one evaluation (a backward's score and its derivative).
  // CHECK: %{{.*}}:2 = cuir.elementwise (%{{.*}}) at [%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : (tensor<128x64xf32, #[[ACC]]>) -> (tensor<128x64xf32, #[[ACC]]>, tensor<128x64xf32, #[[ACC]]>) {
  // CHECK: cuir.yield %{{.*}}, %{{.*}} : f32, f32
  %sd:2 = cuir.elementwise (%acc2) at [%c0, %by, %bx, %c0]
      : (tensor<128x64xf32, #ACC>) -> (tensor<128x64xf32, #ACC>, tensor<128x64xf32, #ACC>) {
  ^bb0(%x: f32, %b: index, %hh: index, %qi: index, %ki: index):
    %th = math.tanh %x : f32
    %t2 = arith.mulf %th, %th : f32
    cuir.yield %th, %t2 : f32, f32
  }
  %p16 = arith.truncf %e : tensor<128x64xf32, #ACC> to tensor<128x64xbf16, #ACC>
  // CHECK: cuir.convert_layout %{{.*}} : tensor<128x64xbf16, #[[ACC]]> -> tensor<128x64xbf16, #[[A]]>
  %pa = cuir.convert_layout %p16 : tensor<128x64xbf16, #ACC> -> tensor<128x64xbf16, #A>
  // CHECK: cuir.convert_layout %{{.*}} transpose : tensor<128x64xbf16, #[[ACC]]> -> tensor<64x128xbf16, #[[A]]>
  %pt = cuir.convert_layout %p16 transpose : tensor<128x64xbf16, #ACC> -> tensor<64x128xbf16, #A>
  %rows = cuir.alloc : memref<128xf32, #S>
  // CHECK: cuir.load %{{.*}} : memref<128xf32, #[[SHARED]]> -> tensor<128xf32, #{{.*}}>
  %rv = cuir.load %rows : memref<128xf32, #S> -> tensor<128xf32, #ROW>
  %ps = cuir.alloc : memref<128x64xbf16, #S>
  // CHECK: cuir.store %{{.*}} -> %{{.*}} : tensor<128x64xbf16, #[[ACC]]> -> memref<128x64xbf16, #[[SHARED]]>
  cuir.store %p16 -> %ps : tensor<128x64xbf16, #ACC> -> memref<128x64xbf16, #S>
  // CHECK: cuir.store %{{.*}} -> %{{.*}}[%{{.*}}] : tensor<128xf32, #{{.*}}> -> memref<?xf32, #{{.*}}>
  cuir.store %sm -> %lse[%bx] : tensor<128xf32, #ROW> -> memref<?xf32, #G>
  // CHECK: cuir.copy %{{.*}} -> %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x128xbf16, #[[SHARED]]> -> memref<?x128xbf16, #{{.*}}>
  cuir.copy %s -> %g[%bx, %c0] : memref<64x128xbf16, #S> -> memref<?x128xbf16, #G>
  // The implicit terminator is not printed.
  // CHECK-NOT: cuir.return
  cuir.return
}

// CHECK-LABEL: cuir.kernel @sm90_ops(
// CHECK-SAME: threads 384 arch "sm_90a"
cuir.kernel @sm90_ops(%g: memref<?x128xbf16, #G>, %n: index)
    grid (n) -> (n ceildiv 128) threads 384 arch "sm_90a" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bx = cuir.block_id x
  %sq = cuir.alloc : memref<128x128xbf16, #S>
  %sk = cuir.alloc : memref<128x128xbf16, #S>
  // CHECK: %[[FULL:.*]] = cuir.barrier.init arrivals 1 : !cuir.mbarrier<2>
  %full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<2>
  // CHECK: cuir.barrier.init arrivals 2 : !cuir.mbarrier<2>
  %empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<2>
  // CHECK: cuir.bind warpgroup [0] role producer regs 24 {
  cuir.bind warpgroup [0] role producer regs 24 {
    // CHECK: cuir.bind warp [0] role producer {
    cuir.bind warp [0] role producer {
      // CHECK: cuir.barrier.arrive %[[FULL]][%{{.*}}] expect_tx 32768 : !cuir.mbarrier<2>
      cuir.barrier.arrive %full[%c0] expect_tx 32768 : !cuir.mbarrier<2>
      // CHECK: cuir.copy_async tma %{{.*}}[%{{.*}}, %{{.*}}] -> %{{.*}} barrier %[[FULL]][%{{.*}}] : memref<?x128xbf16, #{{.*}}> -> memref<128x128xbf16, #[[SHARED]]>, !cuir.mbarrier<2>
      cuir.copy_async tma %g[%bx, %c0] -> %sq barrier %full[%c0]
          : memref<?x128xbf16, #G> -> memref<128x128xbf16, #S>, !cuir.mbarrier<2>
      cuir.copy_async tma %g[%c0, %c0] -> %sk barrier %full[%c0]
          : memref<?x128xbf16, #G> -> memref<128x128xbf16, #S>, !cuir.mbarrier<2>
      // CHECK: cuir.barrier.wait %{{.*}}[%{{.*}}], %{{.*}} : !cuir.mbarrier<2>
      cuir.barrier.wait %empty[%c0], %c0 : !cuir.mbarrier<2>
    }
  }
  // CHECK: cuir.bind warpgroup [1, 2] role consumer regs 240 {
  cuir.bind warpgroup [1, 2] role consumer regs 240 {
    // CHECK: cuir.worker_id
    %wg = cuir.worker_id
    %id = arith.addi %wg, %c1 : index
    // CHECK: cuir.barrier.named %{{.*}} threads 256{{$}}
    cuir.barrier.named %id threads 256
    // CHECK: cuir.barrier.named %{{.*}} threads 256 arrive
    cuir.barrier.named %id threads 256 arrive
    cuir.barrier.wait %full[%c0], %c0 : !cuir.mbarrier<2>
    %z = arith.constant dense<0.0> : tensor<128x128xf32, #WACC>
    // CHECK: %[[P:.*]] = cuir.gemm_async %{{.*}}, %{{.*}} transpose_b, %{{.*}} : memref<128x128xbf16, #[[SHARED]]>, memref<128x128xbf16, #[[SHARED]]>, tensor<128x128xf32, #[[WACC]]>
    %pend = cuir.gemm_async %sq, %sk transpose_b, %z
        : memref<128x128xbf16, #S>, memref<128x128xbf16, #S>, tensor<128x128xf32, #WACC>
    // CHECK: %[[W:.*]] = cuir.gemm_wait %[[P]] pending 0 : tensor<128x128xf32, #[[WACC]]>
    %s = cuir.gemm_wait %pend pending 0 : tensor<128x128xf32, #WACC>
    %p16 = arith.truncf %s : tensor<128x128xf32, #WACC> to tensor<128x128xbf16, #WACC>
    %pa = cuir.convert_layout %p16 : tensor<128x128xbf16, #WACC> -> tensor<128x128xbf16, #WA>
    // CHECK: cuir.gemm_async %{{.*}}, %{{.*}}, %[[W]] : tensor<128x128xbf16, #{{.*}}>, memref<128x128xbf16, #[[SHARED]]>
    %o = cuir.gemm_async %pa, %sk, %s
        : tensor<128x128xbf16, #WA>, memref<128x128xbf16, #S>, tensor<128x128xf32, #WACC>
    // Chained on one accumulator before a single wait.
    %o2 = cuir.gemm_async %pa, %sk, %o
        : tensor<128x128xbf16, #WA>, memref<128x128xbf16, #S>, tensor<128x128xf32, #WACC>
    // A pending count that varies over a loop's steps is an index value.
    // CHECK: cuir.gemm_wait %{{.*}} pending %{{.*}} : tensor<128x128xf32, #[[WACC]]>
    %o3 = cuir.gemm_wait %o2 pending %c0 : tensor<128x128xf32, #WACC>
    // The registers hold the transposed product (a backward's S^T = K Q^T).
    // CHECK: cuir.gemm_async %{{.*}}, %{{.*}} transpose_b, %{{.*}} acc_transposed : memref<64x128xbf16, strided<[128, 1]>, #[[SHARED]]>
    %sq64 = memref.subview %sq[0, 0] [64, 128] [1, 1] : memref<128x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1]>, #S>
    %z64 = arith.constant dense<0.0> : tensor<64x64xf32, #cuir.frag<acc, wgmma_m64nNk16, warps = [1, 1]>>
    %st = cuir.gemm_async %sq64, %sq64 transpose_b, %z64 acc_transposed
        : memref<64x128xbf16, strided<[128, 1]>, #S>, memref<64x128xbf16, strided<[128, 1]>, #S>, tensor<64x64xf32, #cuir.frag<acc, wgmma_m64nNk16, warps = [1, 1]>>
    %stw = cuir.gemm_wait %st pending 0 : tensor<64x64xf32, #cuir.frag<acc, wgmma_m64nNk16, warps = [1, 1]>>
    cuir.barrier.arrive %empty[%c0] : !cuir.mbarrier<2>
  }
  cuir.return
}
