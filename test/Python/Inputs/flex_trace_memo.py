"""cuir.flex_attention's trace memo (flex._traced, CPU: it only traces): a call reuses a trace while nothing
the text depends on changed, and traces again when a constant of the kernel did, wherever it lives."""
import functools

import torch

from cuir import flex

traces = []
_trace = flex._compile.trace


def counting_trace(*args, **kwargs):
    traces.append(1)
    return _trace(*args, **kwargs)


flex._compile.trace = counting_trace


def check(label, score_mod, change=None):
    """Traces before and after `change`: whether the second call traced again, and whether the text changed."""
    first, _ = flex._traced(score_mod, None, "softmax")
    if change:
        change()
    traces.clear()
    second, values = flex._traced(score_mod, None, "softmax")
    print(f"{label}: traced again {bool(traces)}, text changed {first != second}")
    return values


ALPHA = torch.tensor(0.5)
SCALE = 2.0
ONE = torch.tensor([1.5])
BOX = {"a": torch.tensor(0.25)}
SLOPES = torch.ones(4)


def helper(s):
    return s * SCALE


def by_alpha(score, b, h, q_idx, kv_idx):
    return score * ALPHA


def by_helper(score, b, h, q_idx, kv_idx):
    return helper(score)


def by_slope(score, b, h, q_idx, kv_idx):
    return score + SLOPES[h]


def set_global(name, value):
    return lambda: globals().__setitem__(name, value)


# Nothing changed: the trace is reused; a parameter's new values (in place or rebound) need no new trace.
check("unchanged", by_slope)
check("parameter in place", by_slope, lambda: SLOPES.fill_(2.0))
values = check("parameter rebound", by_slope, set_global("SLOPES", torch.full((4,), 3.0)))
print("parameter is the rebound tensor:", values["SLOPES"] is SLOPES)
# A constant of the kernel changed: traced again, with the new value.
check("global 0-d tensor in place", by_alpha, lambda: ALPHA.fill_(3.0))
check("global 0-d tensor rebound", by_alpha, set_global("ALPHA", torch.tensor(7.0)))
check("global float read by a helper", by_helper, set_global("SCALE", 5.0))
check("element [0] in place", lambda score, b, h, q_idx, kv_idx: score + ONE[0], lambda: ONE.fill_(4.0))
check("0-d tensor in a dict", lambda score, b, h, q_idx, kv_idx: score * BOX["a"], lambda: BOX["a"].fill_(9.0))


class Scaled:
    def __init__(self, w):
        self.w = w

    def __call__(self, score, b, h, q_idx, kv_idx):
        return score * self.w


scaled = Scaled(2.0)
check("callable object's attribute", scaled, lambda: setattr(scaled, "w", 6.0))


def weighted(score, b, h, q_idx, kv_idx, w=1.0):
    return score * w


check("functools.partial", functools.partial(weighted, w=2.0))
check("default argument", weighted, lambda: setattr(weighted, "__defaults__", (4.0,)))

# A method of a module (its parameters and submodules reached through self, a set among its fields): reused.
class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.slopes = torch.nn.Parameter(torch.ones(4), requires_grad=False)

    def score(self, score, b, h, q_idx, kv_idx):
        return score + self.slopes[h]


block = Block()
check("module method", block.score)
check("module method, its parameter in place", block.score, lambda: block.slopes.data.fill_(2.0))

# A trained 0-d tensor would be a constant: refused while autograd records, a constant under no_grad.
temperature = torch.nn.Parameter(torch.tensor(1.0))
try:
    flex._traced(lambda score, b, h, q_idx, kv_idx: score / temperature, None, "softmax")
except Exception as e:
    print(f"trained 0-d tensor: {type(e).__name__}: {e}")
with torch.no_grad():
    text, _ = flex._traced(lambda score, b, h, q_idx, kv_idx: score / temperature, None, "softmax")
print("trained 0-d tensor under no_grad: a constant:", "arith.constant 1.000000e+00" in text)
