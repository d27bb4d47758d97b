# Block-diagonal attention: an integer division of the coordinates.
NAME = "block_diagonal"
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx // 32 == kv_idx // 32
