# Literals MLIR cannot write as repr() does: 1e-05, 1e+300 (inf in f32), NumPy scalars.
import math

import numpy as np
import torch


def score_mod(score, b, h, q_idx, kv_idx):
    tiny = score * 1e-05 + 3e-08
    huge = torch.where(score > 2.0, score + 1e+300, score)
    return tiny + huge * np.float32(0.5) + np.float64(math.pi) - np.int64(3) * (q_idx > kv_idx)
