// The window's distances in int32, compared with the int32 parameters as they are.
cuir.variant @window(%window_left: i32 {cuir.param = "window_left"}, %window_right: i32 {cuir.param = "window_right"}, %Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %q32 = arith.index_cast %q : index to i32
    %k32 = arith.index_cast %k : index to i32
    %nq = arith.index_cast %Nq : index to i32
    %nkv = arith.index_cast %Nkv : index to i32
    %off = arith.subi %nkv, %nq : i32
    %diag = arith.addi %q32, %off : i32
    %behind = arith.subi %diag, %k32 : i32
    %ahead = arith.subi %k32, %diag : i32
    %near_left = arith.cmpi sle, %behind, %window_left : i32
    %near_right = arith.cmpi sge, %window_right, %ahead : i32
    %ok = arith.andi %near_left, %near_right : i1
    cuir.yield %ok : i1
  }
}
