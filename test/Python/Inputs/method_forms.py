# Tensor methods whose arguments differ from the torch function's (.where,
# .masked_fill), the legacy .type() casts (a tensor type or its name), and
# torch.add / .sub with alpha.
import torch


def score_mod(score, b, h, q_idx, kv_idx):
    chunk = (q_idx / 16).type(torch.LongTensor) - (kv_idx / 16).type("torch.IntTensor")
    shifted = score.where(q_idx >= kv_idx, score - 1.5)
    filled = shifted.masked_fill(kv_idx > q_idx + 3, -2.0)
    scaled = torch.add(filled, chunk.float(), alpha=0.25).sub(h, alpha=2)
    return torch.sub(scaled, 1.0, alpha=3)


def mask_mod(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx).where(q_idx >= 16, kv_idx < 16)
