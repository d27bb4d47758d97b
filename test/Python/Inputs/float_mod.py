# torch's % of floats takes the divisor's sign (fmod, plus the divisor where the signs differ); torch.fmod the
# dividend's, of floats and of ints. Scores include exact multiples of the divisors (a zero remainder keeps
# its sign in fmod and is not fixed up).
import torch


def SCORES(shape):
    g = torch.Generator().manual_seed(9)
    s = torch.randn(shape, generator=g) * 4
    s.view(-1)[::5] = torch.round(s.view(-1)[::5]) * 0.75  # multiples of 0.75 and of 1.5 among them
    return s


def score_mod(score, b, h, q_idx, kv_idx):
    return score % 1.5 + torch.remainder(score, -0.75) + torch.fmod(score, 2.0) + \
        torch.fmod(q_idx - kv_idx, 4) + (kv_idx - q_idx).float() % 2.5


def mask_mod(b, h, q_idx, kv_idx):
    return torch.fmod(q_idx - kv_idx, 3) == -1
