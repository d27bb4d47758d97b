"""cuir.flex_attention's argument checks, on CPU (each bad call prints its error), and its tracing memo."""
import torch

import cuir
from cuir import flex

bf = dict(dtype=torch.bfloat16)


def t(*shape, **kw):
    return torch.zeros(*shape, **{**bf, **kw})


def call(label, *args, **kw):
    try:
        cuir.flex_attention(*args, **kw)
        print(f"{label}: accepted")
    except Exception as e:  # the checks' messages are what this test is about
        print(f"{label}: {type(e).__name__}: {e}")


q, k = t(1, 4, 32, 64), t(1, 2, 48, 64)
call("not a tensor", [1], k, k)
call("3-D", t(4, 32, 64), k, k)
call("dtype float32", q.float(), k.float(), k.float())
call("mixed dtypes", q, k.half(), k)
call("batch", q, t(2, 2, 48, 64), t(2, 2, 48, 64))
call("value length", q, k, t(1, 2, 40, 64))
call("head dim 96", t(1, 4, 32, 96), t(1, 2, 48, 96), t(1, 2, 48, 96))
call("value head dim", q, k, t(1, 2, 48, 128))
call("gqa off", q, k, k)
call("gqa 3 of 2", t(1, 3, 32, 64), k, k, enable_gqa=True)
call("too many query rows", t(1, 2, 65536 * 128, 64, device="meta"), t(1, 2, 8, 64, device="meta"),
     t(1, 2, 8, 64, device="meta"))
call("too many keys", t(1, 2, 8, 64, device="meta"), t(1, 2, 2 ** 30 + 1, 64, device="meta"),
     t(1, 2, 2 ** 30 + 1, 64, device="meta"))
call("cpu", q, k, k, enable_gqa=True)

# The checks of the functions and options come after the tensors' (these need no GPU either: they stop
# before the device is asked anything).
flex_check = flex._check_mods
for label, fn in (("score_mod with 4 arguments", lambda b, h, q_idx, kv_idx: b),):
    try:
        flex_check(fn, None)
    except TypeError as e:
        print(f"{label}: TypeError: {e}")
try:
    flex._mask_mod_of(42, 32, 48)
except TypeError as e:
    print(f"block_mask int: TypeError: {e}")


class FakeBlockMask:  # FlexAttention's BlockMask as flex_attention reads it
    kv_num_blocks = None
    seq_lengths = (32, 64)

    @staticmethod
    def mask_mod(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx


try:
    flex._mask_mod_of(FakeBlockMask(), 32, 48)
except ValueError as e:
    print(f"block_mask lengths: ValueError: {e}")
print("block_mask mask_mod:", flex._mask_mod_of(FakeBlockMask(), 32, 64) is FakeBlockMask.mask_mod)
try:
    flex._pick_kernel("sm70", "cpu")
except ValueError as e:
    print(f"kernel sm70: ValueError: {e}")

# Tracing is memoised; the captured tensor's values are looked up at each call and are not in the text.
slopes = torch.tensor([0.5, 0.25])


def alibi(score, b, h, q_idx, kv_idx):
    return score + slopes[h] * (kv_idx - q_idx)


text1, values1 = flex._traced(alibi, None, "softmax")
slopes = torch.tensor([2.0, 4.0])  # rebound to new values of the same shape
text2, values2 = flex._traced(alibi, None, "softmax")
print("same text:", text1 == text2, "no values in it:", "cuir.default" not in text1)
print("current values:", values2["slopes"].tolist())
