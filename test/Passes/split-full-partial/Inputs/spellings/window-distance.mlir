// The window as distances: q + off - kv <= left and kv - (q + off) <= right.
cuir.variant @window(%window_left: i32 {cuir.param = "window_left"}, %window_right: i32 {cuir.param = "window_right"}, %Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %off = arith.subi %Nkv, %Nq : index
    %diag = arith.addi %q, %off : index
    %left = arith.index_cast %window_left : i32 to index
    %right = arith.index_cast %window_right : i32 to index
    %behind = arith.subi %diag, %k : index
    %ahead = arith.subi %k, %diag : index
    %near_left = arith.cmpi sle, %behind, %left : index
    %near_right = arith.cmpi sle, %ahead, %right : index
    %ok = arith.andi %near_right, %near_left : i1
    cuir.yield %ok : i1
  }
}
