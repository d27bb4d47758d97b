# The function is defined in the file that calls the tracer: the error names
# the line of the construct (7), not the line of the call (12).
import torch


def score_mod(score, b, h, q_idx, kv_idx):
    return score + torch.atan(score)


from cuir.variant import VariantError, trace_variant  # noqa: E402
try:
    trace_variant(score_mod, verify=False)
except VariantError as e:
    print(f"error: {e}")
