"""The partial tiles' bits of global tokens + window at B1 H6 Nq 640 Nkv 256 against the mask, per tile."""
import sys, torch
sys.path.insert(0, "python")
from cuir.compile import load_once
kern = load_once(sys.argv[1])
info = kern.block_mask_info
print("info", info)
for (Nq, Nkv, d) in [(640, 256, 128), (640, 256, 64), (300, 517, 128), (1024, 1024, 128), (512, 256, 128), (640, 384, 128)]:
    bm = kern.block_mask(1, 6, Nq, Nkv, head_dim=d, global_tokens=64, window_left=256, window_right=0)
    bits = bm.partial_bits
    if bits is None:
        print(Nq, Nkv, d, "no bits"); continue
    QB, KB = bits.shape[2], bits.shape[3]
    W = bits.shape[4]
    bm_, bn_ = None, None
    for cand in (64, 128, 176, 192, 256):
        if QB == (Nq + 127) // 128 and KB == (Nkv + cand - 1) // cand and W == 128 * cand // 32: bn_ = cand
    q = torch.arange(Nq, device="cuda").view(-1, 1); kv = torch.arange(Nkv, device="cuda").view(1, -1)
    diag = q + Nkv - Nq
    ref = (kv < 64) | (diag < 64) | ((kv >= diag - 256) & (kv <= diag))
    bad = 0
    kvn = bm.kv_num_blocks[0, 0].tolist(); kvi = bm.kv_indices[0, 0].tolist()
    for m in range(QB):
        for s in range(kvn[m]):
            n = kvi[m][s]
            words = bits[0, 0, m, n].view(128, bn_ // 32).to(torch.int64) & 0xffffffff
            sh = torch.arange(32, device=words.device)
            unpacked = ((words.unsqueeze(-1) >> sh) & 1).view(128, bn_)
            r0, c0 = m * 128, n * bn_
            rr, cc = min(128, Nq - r0), min(bn_, Nkv - c0)
            bad += int((unpacked[:rr, :cc].bool() != ref[r0:r0 + rr, c0:c0 + cc]).sum())
    print(Nq, Nkv, d, "QB", QB, "KB", KB, "block_n", bn_, "partial", kvn, "full", bm.full_kv_num_blocks[0,0].tolist(), "bit mismatches", bad)
