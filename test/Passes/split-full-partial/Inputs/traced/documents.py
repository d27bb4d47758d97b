# Packed documents: a captured tensor indexed by q_idx and kv_idx.
import torch
NAME = "documents"
document_id = torch.tensor([0, 0, 0, 1, 1, 2, 2, 2] * 32, dtype=torch.int32)
def mask_mod(b, h, q_idx, kv_idx):
    return document_id[q_idx] == document_id[kv_idx]
