// RUN: cuir-opt %s | cuir-opt | FileCheck %s
// RUN: cuir-opt %s --mlir-print-op-generic | cuir-opt | FileCheck %s

#acc = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#g = #cuir.mem<global>

// CHECK-LABEL: func.func @slopes
// CHECK: cuir.scatter_add (%{{.*}}) at [%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] into %{{.*}} : (tensor<64x64xf32, #{{.*}}>) -> memref<?xf32, #{{.*}}> {
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: index, %[[H:.*]]: index, %{{.*}}: index, %{{.*}}: index):
// CHECK: cuir.yield %[[H]], %{{.*}} : index, f32
func.func @slopes(%ds: tensor<64x64xf32, #acc>, %grad: memref<?xf32, #g>, %b: index, %h: index, %q: index, %kv: index) {
  cuir.scatter_add (%ds) at [%b, %h, %q, %kv] into %grad : (tensor<64x64xf32, #acc>) -> memref<?xf32, #g> {
  ^bb0(%d: f32, %bi: index, %hi: index, %qi: index, %ki: index):
    %dist = arith.subi %ki, %qi : index
    %i = arith.index_cast %dist : index to i32
    %f = arith.sitofp %i : i32 to f32
    %v = arith.mulf %d, %f : f32
    cuir.yield %hi, %v : index, f32
  }
  return
}

// Two inputs (dS and the score), a 2-D table.
// CHECK-LABEL: func.func @table
// CHECK: cuir.scatter_add (%{{.*}}, %{{.*}}) at
// CHECK: cuir.yield %{{.*}}, %{{.*}}, %{{.*}} : index, index, f32
func.func @table(%ds: tensor<64x64xf32, #acc>, %s: tensor<64x64xf32, #acc>, %grad: memref<100x130xf32, #g>, %b: index, %h: index, %q: index, %kv: index) {
  cuir.scatter_add (%ds, %s) at [%b, %h, %q, %kv] into %grad : (tensor<64x64xf32, #acc>, tensor<64x64xf32, #acc>) -> memref<100x130xf32, #g> {
  ^bb0(%d: f32, %x: f32, %bi: index, %hi: index, %qi: index, %ki: index):
    %v = arith.mulf %d, %x : f32
    cuir.yield %qi, %ki, %v : index, index, f32
  }
  return
}
