cuir.variant @huge(%t: memref<65536x65536xi1, #cuir.mem<global>> {cuir.param = "t"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %x = memref.load %t[%q, %k] : memref<65536x65536xi1, #cuir.mem<global>>
    cuir.yield %x : i1
  }
}
