# T5-style buckets: a [H, K] table indexed by a bucket computed with log and casts,
# in a nested helper; a second helper's closure captures a bfloat16 tensor.
import math

import torch

NUM_BUCKETS, MAX_DISTANCE = 8, 40
GRID = dict(H=3, Q=30, KV=30)
table = torch.randn(3, NUM_BUCKETS, generator=torch.Generator().manual_seed(2))


def bucket(relative):
    half = NUM_BUCKETS // 2
    offset = (relative > 0).to(torch.long) * half
    distance = torch.abs(relative)
    exact = half // 2
    is_small = distance < exact
    large = exact + (torch.log(distance.float() / exact) / math.log(MAX_DISTANCE / exact)
                     * (half - exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, half - 1))
    return offset + torch.where(is_small, distance, large)


def make_scale():
    scale = torch.tensor([1.0, 0.5, 0.25], dtype=torch.bfloat16)

    def head_scale(h):
        return scale[h]
    return head_scale


head_scale = make_scale()


def score_mod(score, b, h, q_idx, kv_idx):
    return score * head_scale(h) + table[h, bucket(q_idx - kv_idx)]
