// A mask that reads a captured tensor once per query row and once per key
// (documents): no load per score.
cuir.variant @doc_lookup(%doc: memref<256xi32, #cuir.mem<global>> {cuir.param = "doc"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q_idx: index, %kv_idx: index):
    %0 = memref.load %doc[%q_idx] : memref<256xi32, #cuir.mem<global>>
    %1 = memref.load %doc[%kv_idx] : memref<256xi32, #cuir.mem<global>>
    %2 = arith.cmpi eq, %0, %1 : i32
    cuir.yield %2 : i1
  }
}
