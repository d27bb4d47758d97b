// Causal for the first 100 rows only: rows from 100 on see nothing, which bounds q + c or c cannot say.
cuir.variant @first_rows() normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %c100 = arith.constant 100 : index
    %causal = arith.cmpi sle, %k, %q : index
    %first = arith.cmpi slt, %q, %c100 : index
    %ok = arith.andi %causal, %first : i1
    cuir.yield %ok : i1
  }
}
