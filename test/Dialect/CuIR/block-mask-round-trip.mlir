// RUN: cuir-opt %s | FileCheck %s
// RUN: cuir-opt %s | cuir-opt | FileCheck %s
// RUN: cuir-opt %s --mlir-print-op-generic | cuir-opt | FileCheck %s
// RUN: cuir-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: cuir-opt %s | FileCheck %s --check-prefix=NAMES
//
// cuir.block_mask, and a kernel that names one: printed and parsed back.

#G = #cuir.mem<global>

// A document mask: reads b, so its lists are per batch.
// CHECK-LABEL: cuir.block_mask @doc_blocks(
// CHECK-SAME: %[[IDS:.*]]: memref<?xi32, #{{.*}}> {cuir.arg = "param:doc_ids", cuir.extent = "batch*kv"},
// CHECK-SAME: %[[NKV:.*]]: index {cuir.arg = "Nkv"})
// CHECK-SAME: tiles 128 x 64 depends [batch] coords(%[[B:.*]], %{{.*}}, %[[Q:.*]], %[[KV:.*]]) {
// CHECK: %[[ROW:.*]] = arith.muli %[[B]], %[[NKV]] : index
// CHECK: arith.addi %[[ROW]], %[[Q]] : index
// CHECK: memref.load %[[IDS]]
// CHECK: cuir.yield %{{.*}} : i1
// The region's arguments print as the coordinates and the kernel
// arguments they stand for.
// NAMES: cuir.block_mask @doc_blocks(%doc_ids: memref<?xi32, #global> {{.*}}, %Nkv: index {{.*}} coords(%b, %h, %q, %kv) {
// NAMES-NEXT: arith.muli %b, %Nkv : index
// GENERIC: "cuir.block_mask"()
// GENERIC-SAME: block_m = 128 : i64, block_n = 64 : i64, depends = #cuir.mask_dims<batch>
// GENERIC: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<?xi32, #{{.*}}>, %{{.*}}: index):
cuir.block_mask @doc_blocks(%ids: memref<?xi32, #G> {cuir.arg = "param:doc_ids", cuir.extent = "batch*kv"},
                            %Nkv: index {cuir.arg = "Nkv"})
    tiles 128 x 64 depends [batch] coords(%b, %h, %q, %kv) {
  %row = arith.muli %b, %Nkv : index
  %iq = arith.addi %row, %q : index
  %ik = arith.addi %row, %kv : index
  %dq = memref.load %ids[%iq] : memref<?xi32, #G>
  %dk = memref.load %ids[%ik] : memref<?xi32, #G>
  %same = arith.cmpi eq, %dq, %dk : i32
  cuir.yield %same : i1
}

// A window reads neither b nor h: `depends` is omitted, the lists broadcast.
// CHECK-LABEL: cuir.block_mask @window_blocks(%{{.*}}: i32 {cuir.arg = "param:window"})
// CHECK-SAME: tiles 128 x 128 coords(
// GENERIC: depends = #cuir.mask_dims<none>
cuir.block_mask @window_blocks(%w: i32 {cuir.arg = "param:window"})
    tiles 128 x 128 coords(%b, %h, %q, %kv) {
  %d = arith.subi %q, %kv : index
  %di = arith.index_cast %d : index to i32
  %c0 = arith.constant 0 : i32
  %causal = arith.cmpi sge, %di, %c0 : i32
  %near = arith.cmpi slt, %di, %w : i32
  %v = arith.andi %causal, %near : i1
  cuir.yield %v : i1
}

// Listing a dimension the region does not read is allowed (the lists are
// then not broadcast over it); both print in the order batch, heads.
// CHECK-LABEL: cuir.block_mask @per_head()
// CHECK-SAME: tiles 64 x 64 depends [batch, heads] coords(
// GENERIC: depends = #cuir.mask_dims<batch|heads>
cuir.block_mask @per_head() tiles 64 x 64 depends [heads, batch]
    coords(%b, %h, %q, %kv) attributes {note = "kept"} {
  %c2 = arith.constant 2 : index
  %r = arith.remui %h, %c2 : index
  %c0 = arith.constant 0 : index
  %even = arith.cmpi eq, %r, %c0 : index
  cuir.yield %even : i1
}

// A row of lists per KV head (the query heads of its GQA group merged): a
// backward pass's transposed lists of a per-head window.
// CHECK-LABEL: cuir.block_mask @group_window(%{{.*}}: memref<?xi32, #{{.*}}> {cuir.arg = "param:windows", cuir.extent = "heads"})
// CHECK-SAME: tiles 64 x 128 depends [kv_heads] coords(
// GENERIC: depends = #cuir.mask_dims<kv_heads>
cuir.block_mask @group_window(%w: memref<?xi32, #G> {cuir.arg = "param:windows", cuir.extent = "heads"})
    tiles 64 x 128 depends [kv_heads] coords(%b, %h, %q, %kv) {
  %wh = memref.load %w[%h] : memref<?xi32, #G>
  %d = arith.subi %q, %kv : index
  %di = arith.index_cast %d : index to i32
  %near = arith.cmpi slt, %di, %wh : i32
  cuir.yield %near : i1
}

// A kernel walking @doc_blocks: the four lists and the arguments the mask
// reads.
// CHECK-LABEL: cuir.kernel @k(
// CHECK-SAME: attributes {cuir.block_mask = @doc_blocks}
cuir.kernel @k(%ids: memref<?xi32, #G> {cuir.arg = "param:doc_ids", cuir.extent = "batch*kv"},
               %kvn: memref<?xi32, #G> {cuir.arg = "block_mask:kv_num_blocks"},
               %kvi: memref<?xi32, #G> {cuir.arg = "block_mask:kv_indices"},
               %fkvn: memref<?xi32, #G> {cuir.arg = "block_mask:full_kv_num_blocks"},
               %fkvi: memref<?xi32, #G> {cuir.arg = "block_mask:full_kv_indices"},
               %Nkv: index {cuir.arg = "Nkv"})
    grid (n) -> (n ceildiv 128) threads 128 arch "sm_80"
    attributes {cuir.block_mask = @doc_blocks} {
}
