// RUN: cuir-opt %s -split-input-file -verify-diagnostics
//
// One case per verifier branch of cuir.scatter_add (and its cuir.yield).

#acc = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#g = #cuir.mem<global>
func.func @no_inputs(%grad: memref<4xf32, #g>, %i: index) {
  // expected-error @below {{needs at least one input tile}}
  cuir.scatter_add () at [%i, %i, %i, %i] into %grad : () -> memref<4xf32, #g> {
  ^bb0(%bi: index, %hi: index, %qi: index, %ki: index):
    %z = arith.constant 0.0 : f32
    cuir.yield %hi, %z : index, f32
  }
  return
}

// -----

#acc = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#acc2 = #cuir.frag<acc, mma_m16n8k16, warps = [2, 2]>
#g = #cuir.mem<global>
func.func @layouts(%a: tensor<64x64xf32, #acc>, %b: tensor<64x64xf32, #acc2>, %grad: memref<4xf32, #g>, %i: index) {
  // expected-error @below {{inputs must share one shape and layout}}
  cuir.scatter_add (%a, %b) at [%i, %i, %i, %i] into %grad : (tensor<64x64xf32, #acc>, tensor<64x64xf32, #acc2>) -> memref<4xf32, #g> {
  ^bb0(%x: f32, %y: f32, %bi: index, %hi: index, %qi: index, %ki: index):
    cuir.yield %hi, %x : index, f32
  }
  return
}

// -----

#acc = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
func.func @shared(%a: tensor<64x64xf32, #acc>, %grad: memref<4xf32, #cuir.mem<shared>>, %i: index) {
  // expected-error @below {{destination}}
  cuir.scatter_add (%a) at [%i, %i, %i, %i] into %grad : (tensor<64x64xf32, #acc>) -> memref<4xf32, #cuir.mem<shared>> {
  ^bb0(%x: f32, %bi: index, %hi: index, %qi: index, %ki: index):
    cuir.yield %hi, %x : index, f32
  }
  return
}

// -----

#acc = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#g = #cuir.mem<global>
func.func @f16_dst(%a: tensor<64x64xf32, #acc>, %grad: memref<4xf16, #g>, %i: index) {
  // expected-error @below {{adds f32 values (red.global.add.f32) into an f32 buffer, not into 'f16'}}
  cuir.scatter_add (%a) at [%i, %i, %i, %i] into %grad : (tensor<64x64xf32, #acc>) -> memref<4xf16, #g> {
  ^bb0(%x: f32, %bi: index, %hi: index, %qi: index, %ki: index):
    cuir.yield %hi, %x : index, f32
  }
  return
}

// -----

#acc = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#g = #cuir.mem<global>
func.func @arity(%a: tensor<64x64xf32, #acc>, %grad: memref<4xf32, #g>, %i: index) {
  // expected-error @below {{body must take 1 element(s) and the coordinates (b, h, q_idx, kv_idx), i.e. 5 arguments, got 4}}
  cuir.scatter_add (%a) at [%i, %i, %i, %i] into %grad : (tensor<64x64xf32, #acc>) -> memref<4xf32, #g> {
  ^bb0(%x: f32, %hi: index, %qi: index, %ki: index):
    cuir.yield %hi, %x : index, f32
  }
  return
}

// -----

#acc = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#g = #cuir.mem<global>
func.func @element_type(%a: tensor<64x64xf32, #acc>, %grad: memref<4xf32, #g>, %i: index) {
  // expected-error @below {{body argument #0 must be 'f32', the element type of input #0}}
  cuir.scatter_add (%a) at [%i, %i, %i, %i] into %grad : (tensor<64x64xf32, #acc>) -> memref<4xf32, #g> {
  ^bb0(%x: f16, %bi: index, %hi: index, %qi: index, %ki: index):
    %y = arith.extf %x : f16 to f32
    cuir.yield %hi, %y : index, f32
  }
  return
}

// -----

#acc = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#g = #cuir.mem<global>
func.func @coordinate(%a: tensor<64x64xf32, #acc>, %grad: memref<4xf32, #g>, %i: index, %j: i32) {
  // expected-error @below {{coordinate argument #4 must be index}}
  cuir.scatter_add (%a) at [%i, %i, %i, %i] into %grad : (tensor<64x64xf32, #acc>) -> memref<4xf32, #g> {
  ^bb0(%x: f32, %bi: index, %hi: index, %qi: index, %ki: i32):
    cuir.yield %hi, %x : index, f32
  }
  return
}

// -----

#acc = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#g = #cuir.mem<global>
func.func @yield(%a: tensor<64x64xf32, #acc>, %grad: memref<4x8xf32, #g>, %i: index) {
  cuir.scatter_add (%a) at [%i, %i, %i, %i] into %grad : (tensor<64x64xf32, #acc>) -> memref<4x8xf32, #g> {
  ^bb0(%x: f32, %bi: index, %hi: index, %qi: index, %ki: index):
    // expected-error @below {{must yield 2 index value(s), one per dimension of the destination, then the f32 value to add, in a cuir.scatter_add body}}
    cuir.yield %hi, %x : index, f32
  }
  return
}

// -----

#acc = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#g = #cuir.mem<global>
func.func @terminator(%a: tensor<64x64xf32, #acc>, %grad: memref<4xf32, #g>, %i: index) {
  // expected-error @below {{body must end in a cuir.yield of the indices and the value to add}}
  cuir.scatter_add (%a) at [%i, %i, %i, %i] into %grad : (tensor<64x64xf32, #acc>) -> memref<4xf32, #g> {
  ^bb0(%x: f32, %bi: index, %hi: index, %qi: index, %ki: index):
    func.return
  }
  return
}

// -----

#row = #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>
#g = #cuir.mem<global>
func.func @rank(%a: tensor<64xf32, #row>, %grad: memref<4xf32, #g>, %i: index) {
  // expected-error @below {{works on 2-D (query x key) tiles}}
  cuir.scatter_add (%a) at [%i, %i, %i, %i] into %grad : (tensor<64xf32, #row>) -> memref<4xf32, #g> {
  ^bb0(%x: f32, %bi: index, %hi: index, %qi: index, %ki: index):
    cuir.yield %hi, %x : index, f32
  }
  return
}
