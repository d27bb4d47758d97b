// RUN: cuir-opt %s -split-input-file -verify-diagnostics
//
// cuir.block_mask and a kernel's cuir.block_mask attribute: one case per
// verifier branch.

// expected-error @below {{tile sizes must be positive, got 0 x 128}}
cuir.block_mask @m() tiles 0 x 128 coords(%b, %h, %q, %kv) {
  %t = arith.constant true
  cuir.yield %t : i1
}

// -----

// expected-error @below {{tile sizes must be positive, got 64 x -128}}
cuir.block_mask @m() tiles 64 x -128 coords(%b, %h, %q, %kv) {
  %t = arith.constant true
  cuir.yield %t : i1
}

// -----

cuir.block_mask @m() tiles 128 x 128 coords(%b, %h, %q, %kv) {
  // expected-error @below {{must yield exactly one 'i1' in a cuir.block_mask}}
  cuir.yield %q : index
}

// -----

cuir.block_mask @m() tiles 128 x 128 coords(%b, %h, %q, %kv) {
  // expected-error @below {{must yield exactly one 'i1' in a cuir.block_mask}}
  cuir.yield
}

// -----

// expected-error @below {{expected the four coordinates (b, h, q, kv), got 3}}
cuir.block_mask @m() tiles 128 x 128 coords(%b, %h, %q) {
  %t = arith.constant true
  cuir.yield %t : i1
}

// -----

// expected-error @below {{a block mask depends on batch, heads or kv_heads, not 'seq'}}
cuir.block_mask @m() tiles 128 x 128 depends [seq] coords(%b, %h, %q, %kv) {
  %t = arith.constant true
  cuir.yield %t : i1
}

// -----

// expected-error @below {{'batch' is listed twice}}
cuir.block_mask @m() tiles 128 x 128 depends [batch, batch] coords(%b, %h, %q, %kv) {
  %t = arith.constant true
  cuir.yield %t : i1
}

// -----

// expected-error @below {{argument #0 needs the kernel argument it stands for: {cuir.arg = "..."}}}
cuir.block_mask @m(%n: index) tiles 128 x 128 coords(%b, %h, %q, %kv) {
  %t = arith.constant true
  cuir.yield %t : i1
}

// -----

// expected-error @below {{argument 'Nkv' is declared twice}}
cuir.block_mask @m(%n: index {cuir.arg = "Nkv"}, %m: index {cuir.arg = "Nkv"}) tiles 128 x 128 coords(%b, %h, %q, %kv) {
  %t = arith.constant true
  cuir.yield %t : i1
}

// -----

// expected-error @below {{argument 'block_mask:kv_indices' is one of the block lists; a block mask cannot read the lists it defines}}
cuir.block_mask @m(%l: memref<?xi32, #cuir.mem<global>> {cuir.arg = "block_mask:kv_indices"}) tiles 128 x 128 coords(%b, %h, %q, %kv) {
  %t = arith.constant true
  cuir.yield %t : i1
}

// -----

// expected-error @below {{argument 'param:x' must be index, i32, i64, f32 or a memref in #cuir.mem<global>, not 'f16'}}
cuir.block_mask @m(%x: f16 {cuir.arg = "param:x"}) tiles 128 x 128 coords(%b, %h, %q, %kv) {
  %t = arith.constant true
  cuir.yield %t : i1
}

// -----

// expected-error @below {{argument 'param:x' is a memref in shared memory; kernel buffers are in #cuir.mem<global>}}
cuir.block_mask @m(%x: memref<4xi32, #cuir.mem<shared>> {cuir.arg = "param:x"}) tiles 128 x 128 coords(%b, %h, %q, %kv) {
  %t = arith.constant true
  cuir.yield %t : i1
}

// -----

// expected-error @below {{argument 'param:w' is a scalar; cuir.extent is only for arrays}}
cuir.block_mask @m(%w: i32 {cuir.arg = "param:w", cuir.extent = "batch"}) tiles 128 x 128 coords(%b, %h, %q, %kv) {
  %t = arith.constant true
  cuir.yield %t : i1
}

// -----

// expected-error @below {{a block mask returns nothing; its region yields the visibility of a pair}}
cuir.block_mask @m() -> i1 tiles 128 x 128 coords(%b, %h, %q, %kv) {
  %t = arith.constant true
  cuir.yield %t : i1
}

// -----

// expected-error @below {{reads coordinate #0 (b) but `depends` does not list batch; the lists would be broadcast over it}}
cuir.block_mask @m() tiles 128 x 128 depends [heads] coords(%b, %h, %q, %kv) {
  %c1 = arith.constant 1 : index
  // expected-note @below {{read here}}
  %v = arith.cmpi ult, %b, %c1 : index
  cuir.yield %v : i1
}

// -----

// A use inside a nested region counts.
// expected-error @below {{reads coordinate #1 (h) but `depends` does not list heads}}
cuir.block_mask @m() tiles 128 x 128 coords(%b, %h, %q, %kv) {
  %c = arith.cmpi ult, %q, %kv : index
  %v = scf.if %c -> i1 {
    %c4 = arith.constant 4 : index
    // expected-note @below {{read here}}
    %lo = arith.cmpi ult, %h, %c4 : index
    scf.yield %lo : i1
  } else {
    %f = arith.constant false
    scf.yield %f : i1
  }
  cuir.yield %v : i1
}

// -----

// expected-error @below {{region must take the coordinates (b, h, q, kv) and the 0 argument(s), 4 block arguments, got 3}}
"cuir.block_mask"() <{sym_name = "m", function_type = () -> (), block_m = 128 : i64, block_n = 128 : i64}> ({
^bb0(%b: index, %h: index, %q: index):
  %t = arith.constant true
  cuir.yield %t : i1
}) : () -> ()

// -----

// expected-error @below {{coordinate #2 (q) must be index, got 'i32'}}
"cuir.block_mask"() <{sym_name = "m", function_type = () -> (), block_m = 128 : i64, block_n = 128 : i64}> ({
^bb0(%b: index, %h: index, %q: i32, %kv: index):
  %t = arith.constant true
  cuir.yield %t : i1
}) : () -> ()

// -----

// expected-error @below {{region argument #4 has type 'i32' but argument #0 is declared 'index'}}
"cuir.block_mask"() <{sym_name = "m", function_type = (index) -> (), block_m = 128 : i64, block_n = 128 : i64, arg_attrs = [{cuir.arg = "Nq"}]}> ({
^bb0(%b: index, %h: index, %q: index, %kv: index, %n: i32):
  %t = arith.constant true
  cuir.yield %t : i1
}) : () -> ()

// -----

// expected-error @below {{has attributes for 2 argument(s) but 1 argument(s)}}
"cuir.block_mask"() <{sym_name = "m", function_type = (index) -> (), block_m = 128 : i64, block_n = 128 : i64, arg_attrs = [{cuir.arg = "Nq"}, {cuir.arg = "Nkv"}]}> ({
^bb0(%b: index, %h: index, %q: index, %kv: index, %n: index):
  %t = arith.constant true
  cuir.yield %t : i1
}) : () -> ()

// -----

// The kernel side.

// expected-error @below {{cuir.block_mask names @nowhere, which is not defined in the module}}
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" attributes {cuir.block_mask = @nowhere} {
}

// -----

cuir.variant @v() normalizer softmax {
}
// expected-error @below {{cuir.block_mask names @v, which is not a cuir.block_mask}}
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" attributes {cuir.block_mask = @v} {
}

// -----

// expected-error @below {{cuir.block_mask must name a cuir.block_mask (@sym), not "m"}}
cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch "sm_80" attributes {cuir.block_mask = "m"} {
}

// -----

cuir.block_mask @m() tiles 128 x 128 coords(%b, %h, %q, %kv) {
  %t = arith.constant true
  cuir.yield %t : i1
}
// expected-error @below {{walks the block mask @m but has no argument {cuir.arg = "block_mask:full_kv_indices"} of type 'memref<?xi32, #cuir.mem<global>>'}}
cuir.kernel @k(%a: memref<?xi32, #cuir.mem<global>> {cuir.arg = "block_mask:kv_num_blocks"},
               %b: memref<?xi32, #cuir.mem<global>> {cuir.arg = "block_mask:kv_indices"},
               %c: memref<?xi32, #cuir.mem<global>> {cuir.arg = "block_mask:full_kv_num_blocks"},
               %n: index) grid (n) -> (n) threads 128 arch "sm_80" attributes {cuir.block_mask = @m} {
}

// -----

cuir.block_mask @m() tiles 128 x 128 coords(%b, %h, %q, %kv) {
  %t = arith.constant true
  cuir.yield %t : i1
}
// expected-error @below {{argument 'block_mask:kv_indices' must be 'memref<?xi32, #cuir.mem<global>>', got 'memref<?xi64, #cuir.mem<global>>'}}
cuir.kernel @k(%a: memref<?xi32, #cuir.mem<global>> {cuir.arg = "block_mask:kv_num_blocks"},
               %b: memref<?xi64, #cuir.mem<global>> {cuir.arg = "block_mask:kv_indices"},
               %c: memref<?xi32, #cuir.mem<global>> {cuir.arg = "block_mask:full_kv_num_blocks"},
               %d: memref<?xi32, #cuir.mem<global>> {cuir.arg = "block_mask:full_kv_indices"},
               %n: index) grid (n) -> (n) threads 128 arch "sm_80" attributes {cuir.block_mask = @m} {
}

// -----

cuir.block_mask @m(%w: i32 {cuir.arg = "param:window"}) tiles 128 x 128 coords(%b, %h, %q, %kv) {
  %t = arith.constant true
  cuir.yield %t : i1
}
// expected-error @below {{walks the block mask @m, which reads 'param:window' ('i32'), but the kernel has no such argument}}
cuir.kernel @k(%a: memref<?xi32, #cuir.mem<global>> {cuir.arg = "block_mask:kv_num_blocks"},
               %b: memref<?xi32, #cuir.mem<global>> {cuir.arg = "block_mask:kv_indices"},
               %c: memref<?xi32, #cuir.mem<global>> {cuir.arg = "block_mask:full_kv_num_blocks"},
               %d: memref<?xi32, #cuir.mem<global>> {cuir.arg = "block_mask:full_kv_indices"},
               %n: index) grid (n) -> (n) threads 128 arch "sm_80" attributes {cuir.block_mask = @m} {
}

// -----

cuir.block_mask @m(%w: i32 {cuir.arg = "param:window"}) tiles 128 x 128 coords(%b, %h, %q, %kv) {
  %t = arith.constant true
  cuir.yield %t : i1
}
// expected-error @below {{walks the block mask @m, which reads 'param:window' ('i32'), but the kernel has it with type 'f32'}}
cuir.kernel @k(%a: memref<?xi32, #cuir.mem<global>> {cuir.arg = "block_mask:kv_num_blocks"},
               %b: memref<?xi32, #cuir.mem<global>> {cuir.arg = "block_mask:kv_indices"},
               %c: memref<?xi32, #cuir.mem<global>> {cuir.arg = "block_mask:full_kv_num_blocks"},
               %d: memref<?xi32, #cuir.mem<global>> {cuir.arg = "block_mask:full_kv_indices"},
               %w: f32 {cuir.arg = "param:window"},
               %n: index) grid (n) -> (n) threads 128 arch "sm_80" attributes {cuir.block_mask = @m} {
}

// -----

// A row of lists is per query head or per KV head.
// expected-error @below {{lists `heads` and `kv_heads`: a row of lists is per query head or per KV head, not both}}
cuir.block_mask @m() tiles 64 x 128 depends [heads, kv_heads] coords(%b, %h, %q, %kv) {
  %c4 = arith.constant 4 : index
  %v = arith.cmpi ult, %h, %c4 : index
  cuir.yield %v : i1
}
