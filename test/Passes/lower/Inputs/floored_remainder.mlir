// Python's floored remainder as the tracer writes it, tested against zero
// (every third key: (q_idx - kv_idx) % 3 == 0) and against one (the keys one
// past a multiple of -4: (q_idx - kv_idx) % -4 == 1, which stays floored).
cuir.variant @floored_remainder() normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q_idx: index, %kv_idx: index):
    %0 = arith.index_cast %q_idx : index to i32
    %1 = arith.index_cast %kv_idx : index to i32
    %2 = arith.subi %0, %1 : i32
    %c3 = arith.constant 3 : i32
    %c0 = arith.constant 0 : i32
    %r = arith.remsi %2, %c3 : i32
    %ne = arith.cmpi ne, %r, %c0 : i32
    %rneg = arith.cmpi slt, %r, %c0 : i32
    %cneg = arith.constant false
    %signs = arith.xori %rneg, %cneg : i1
    %adjust = arith.andi %ne, %signs : i1
    %radj = arith.addi %r, %c3 : i32
    %mod = arith.select %adjust, %radj, %r : i32
    %every3 = arith.cmpi eq, %mod, %c0 : i32
    %cm4 = arith.constant -4 : i32
    %c1 = arith.constant 1 : i32
    %r4 = arith.remsi %2, %cm4 : i32
    %ne4 = arith.cmpi ne, %r4, %c0 : i32
    %r4neg = arith.cmpi slt, %r4, %c0 : i32
    %cneg4 = arith.constant true
    %signs4 = arith.xori %r4neg, %cneg4 : i1
    %adjust4 = arith.andi %ne4, %signs4 : i1
    %radj4 = arith.addi %r4, %cm4 : i32
    %mod4 = arith.select %adjust4, %radj4, %r4 : i32
    %one = arith.cmpi eq, %mod4, %c1 : i32
    %visible = arith.ori %every3, %one : i1
    cuir.yield %visible : i1
  }
}
