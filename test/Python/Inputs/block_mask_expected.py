"""tools/gpu/check_block_mask.py's expected lists (the torch computation the GPU check compares the
classification with), on the CPU against a brute-force classification: every pair of every tile evaluated
alone, the lists built one entry at a time (descending, zeros after the count). Ragged lengths, Nq != Nkv,
masks of the catalogue that read the batch or the head, and a broken broadcast claim."""
import pathlib
import sys

import torch

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools" / "gpu"))
import check_block_mask as cbm  # noqa: E402
from cuir import catalogue  # noqa: E402

BM, BN = 4, 8


def brute_lists(mask_mod, Bp, Hp, Nq, Nkv):
    QB, KB = -(-Nq // BM), -(-Nkv // BN)
    cls = {}
    for b in range(Bp):
        for h in range(Hp):
            for m in range(QB):
                for n in range(KB):
                    vis = [bool(mask_mod(torch.tensor(b), torch.tensor(h), torch.tensor(q), torch.tensor(kv)))
                           for q in range(m * BM, min(Nq, m * BM + BM)) for kv in range(n * BN, min(Nkv, n * BN + BN))]
                    cls[b, h, m, n] = 0 if not any(vis) else 2 if all(vis) and len(vis) == BM * BN else 1
    out = {}
    for prefix, outer, inner in (("kv", QB, KB), ("q", KB, QB)):
        for c, num, idx in ((1, f"{prefix}_num_blocks", f"{prefix}_indices"),
                            (2, f"full_{prefix}_num_blocks", f"full_{prefix}_indices")):
            counts, lists = [], []
            for b in range(Bp):
                for h in range(Hp):
                    for o in range(outer):
                        key = (lambda i: (b, h, o, i)) if prefix == "kv" else (lambda i: (b, h, i, o))
                        row = [i for i in reversed(range(inner)) if cls[key(i)] == c]
                        counts.append(len(row))
                        lists.append(row + [0] * (inner - len(row)))
            out[num] = torch.tensor(counts, dtype=torch.int32).view(Bp, Hp, outer)
            out[idx] = torch.tensor(lists, dtype=torch.int32).view(Bp, Hp, outer, inner)
    return out


B, H, Nq, Nkv = 2, 3, 13, 19
for name, depends in (("causal", []), ("document", []), ("prefix_lm", ["batch"]), ("window_per_head", ["heads"]),
                      ("random_mask", [])):
    entry = catalogue.get(name)
    mask_mod = entry.mods(entry.make(B, H, Nq, Nkv, "cpu"))[1]
    info = {"block_m": BM, "block_n": BN, "depends": depends}
    classes, broadcast = cbm.expected_classes(mask_mod, info, B, H, Nq, Nkv, "cpu", True)
    want = brute_lists(mask_mod, B if "batch" in depends else 1, H if "heads" in depends else 1, Nq, Nkv)
    got = cbm.lists_of(classes)

    class Lists:  # compare_lists reads attributes, as of a cuir.BlockMask
        pass
    bm = Lists()
    for n, t in got.items():
        setattr(bm, n, t)
    print(f"{name}: classes {list(classes.shape)} broadcast {broadcast or 'ok'} lists "
          f"{cbm.compare_lists(bm, want) or 'equal'} partial {int((classes == 1).sum())} full "
          f"{int((classes == 2).sum())}")

# A mask that reads the batch index claimed not to: the broadcast check says where it differs.
padding = lambda b, h, q_idx, kv_idx: kv_idx < 5 + 7 * b  # noqa: E731
_, broadcast = cbm.expected_classes(padding, {"block_m": BM, "block_n": BN, "depends": []}, B, H, Nq, Nkv, "cpu",
                                    True)
print("padding without batch:", broadcast)
