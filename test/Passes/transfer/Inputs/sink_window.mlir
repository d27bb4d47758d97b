// The variant of sink_window_reference.py, as llm-right.md answers it: what
// --transfer=llm:sink_window_reference.py must give the same Target CuIR as.
cuir.variant @sink_window(%sinks: i32 {cuir.param = "sinks", cuir.default = "4"}, %window: i32 {cuir.param = "window", cuir.default = "64"}, %softcap: f32 {cuir.param = "softcap", cuir.default = "30.0"}, %Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %x = arith.divf %s, %softcap : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %t, %softcap : f32
    cuir.yield %r : f32
  }
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %kv: index):
    %off = arith.subi %Nkv, %Nq : index
    %pos = arith.addi %q, %off : index
    %causal = arith.cmpi sle, %kv, %pos : index
    %n = arith.index_cast %sinks : i32 to index
    %sink = arith.cmpi slt, %kv, %n : index
    %w = arith.index_cast %window : i32 to index
    %dist = arith.subi %pos, %kv : index
    %near = arith.cmpi sle, %dist, %w : index
    %seen = arith.ori %sink, %near : i1
    %ok = arith.andi %causal, %seen : i1
    cuir.yield %ok : i1
  }
}
