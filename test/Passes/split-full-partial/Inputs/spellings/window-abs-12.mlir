// A symmetric window of 12 keys each side: |q - kv| <= 12.
cuir.variant @window_abs() normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %d = arith.subi %q, %k : index
    %a = math.absi %d : index
    %c12 = arith.constant 12 : index
    %ok = arith.cmpi sle, %a, %c12 : index
    cuir.yield %ok : i1
  }
}
