# The unary functions (expm1 among them), pow by constants, clamp, minimum / maximum, abs, sign.
import torch


def score_mod(score, b, h, q_idx, kv_idx):
    pos = torch.abs(score) + 0.5
    a = torch.exp(score * 0.1) + torch.exp2(score * 0.1) + torch.log(pos) + torch.log2(pos)
    c = torch.log1p(pos) + torch.expm1(score * 0.1) + torch.sqrt(pos) + torch.rsqrt(pos) + torch.tanh(score)
    d = torch.sigmoid(score) + torch.sin(score) + torch.cos(score) + torch.erf(score)
    e = pos ** 2 + pos ** 3 + pos ** 0.5 + pos ** -1 + pos ** 2.5 + 2.0 ** (score * 0.1)
    f = torch.clamp(score, -1.0, 2.0) + score.clamp(min=0) + torch.clamp(q_idx - kv_idx, max=3)
    g = torch.minimum(score, (q_idx - kv_idx).float()) + torch.maximum(score, pos * 0.3)
    s = torch.sign(score) + torch.sign(q_idx - kv_idx) + (q_idx - kv_idx).abs() * 0.01
    return a + c + d + e + f + g + s + torch.floor(score) + torch.ceil(score) + (h - 2) ** 3
