// Unsigned index ops on a value that may be negative (q - shift, read at 64
// bits as 2^64 + q - shift): minui, remui, ceildivui and unsigned compares.
cuir.variant @index_unsigned_ops(%shift: i32 {cuir.param = "shift"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %s = arith.index_cast %shift : i32 to index
    %d = arith.subi %q, %s : index
    %m = arith.minui %d, %Nkv : index
    %lt = arith.cmpi ult, %k, %m : index
    %c7 = arith.constant 7 : index
    %r = arith.remui %d, %c7 : index
    %c3 = arith.constant 3 : index
    %not3 = arith.cmpi ne, %r, %c3 : index
    %c5 = arith.constant 5 : index
    %cd = arith.ceildivui %d, %c5 : index
    %below = arith.cmpi ule, %cd, %k : index
    %x = arith.andi %lt, %not3 : i1
    %ok = arith.ori %x, %below : i1
    cuir.yield %ok : i1
  }
}
