// kv + 2^32 <= q + 2^32 + shift: an index constant past int.
cuir.variant @index_big_constant(%shift: i32 {cuir.param = "shift"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %c = arith.constant 4294967296 : index
    %s = arith.index_cast %shift : i32 to index
    %kc = arith.addi %k, %c : index
    %qc = arith.addi %q, %c : index
    %hi = arith.addi %qc, %s : index
    %ok = arith.cmpi sle, %kc, %hi : index
    cuir.yield %ok : i1
  }
}
