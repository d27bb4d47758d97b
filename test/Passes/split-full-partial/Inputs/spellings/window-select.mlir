// The window as where(kv >= q + off - left, kv <= q + off + right, False), bounds on the other side.
cuir.variant @window(%window_left: i32 {cuir.param = "window_left"}, %window_right: i32 {cuir.param = "window_right"}, %Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %off = arith.subi %Nkv, %Nq : index
    %diag = arith.addi %q, %off : index
    %left = arith.index_cast %window_left : i32 to index
    %right = arith.index_cast %window_right : i32 to index
    %lo = arith.subi %diag, %left : index
    %hi = arith.addi %diag, %right : index
    %above = arith.cmpi sle, %lo, %k : index
    %below = arith.cmpi sge, %hi, %k : index
    %false = arith.constant false
    %ok = arith.select %above, %below, %false : i1
    cuir.yield %ok : i1
  }
}
