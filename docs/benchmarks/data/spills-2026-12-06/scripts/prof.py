"""One staged library called 4 times (for ncu: profile the 4th launch of the attention kernel)."""
import sys, pathlib
sys.path.insert(0, "tools/gpu"); sys.path.insert(0, "python")
import torch
import bench_block_sparse as bbs
root, kernel, name, dense, cname, N = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4] == "1", sys.argv[5], int(sys.argv[6])
libs = bbs._libraries(root, kernel)
lib = bbs.Library(libs[(name, dense)], False)
Hq, Hkv = bbs.CONFIGS[cname]; B = bbs.TOKENS // N
q, k, v = (torch.randn(B, H, N, bbs.D, device="cuda", dtype=torch.bfloat16) for H in (Hq, Hkv, Hkv))
doc = bbs.doc_ids(B, N, device="cuda")
params = lib.params(name, B, Hq, N, doc, "cuda")
bm = lib.block_mask(B, Hq, N, params) if (lib.kern.block_mask_info and not dense) else None
for _ in range(4):
    lib(q, k, v, params, bm)
torch.cuda.synchronize()
print("done", name, dense, cname, N)
