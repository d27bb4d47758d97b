"""The dtype the tracer gives each expression is the one torch gives it."""
import unittest

import numpy as np
import torch

from cuir.variant import trace

F = torch.float32
EXPRESSIONS = {  # name -> (score_mod body, the dtype torch gives it)
    "int32 * python float": (lambda s, b, h, q, k: q * 0.5, F),
    "int32 // int32": (lambda s, b, h, q, k: q // (k + 1), torch.int32),
    "int32 / int32": (lambda s, b, h, q, k: q / (k + 1), F),
    "bool + python int": (lambda s, b, h, q, k: (q > k) + 1, torch.int64),
    "bool + int32": (lambda s, b, h, q, k: (q > k) + k, torch.int32),
    "where(c, 1, 0)": (lambda s, b, h, q, k: torch.where(q > k, 1, 0), torch.int64),
    "where(c, q, 0)": (lambda s, b, h, q, k: torch.where(q > k, q, 0), torch.int32),
    "clamp(int32, min=0.5)": (lambda s, b, h, q, k: torch.clamp(q, min=0.5), F),
    "int32 + int64": (lambda s, b, h, q, k: q + k.long(), torch.int64),
    "int32 + numpy int64": (lambda s, b, h, q, k: q + np.int64(3), torch.int32),
    "exp(int32)": (lambda s, b, h, q, k: torch.exp(q), F),
    "int32 ** 2": (lambda s, b, h, q, k: q ** 2, torch.int32),
    "abs(int32)": (lambda s, b, h, q, k: torch.abs(q - k), torch.int32),
    "int32 + 0-d int64 tensor": (lambda s, b, h, q, k: q + torch.tensor(2), torch.int32),
}


def traced_dtype(body):
    seen = {}

    def score_mod(score, b, h, q_idx, kv_idx):
        out = body(score, b, h, q_idx, kv_idx)
        seen["dtype"] = out.dtype
        return out
    trace(score_mod, verify=False)
    return seen["dtype"]


def torch_dtype(body):
    c = [torch.arange(3, dtype=torch.int32).view(*[3 if i == j else 1 for j in range(4)])
         for i in range(4)]
    return body(torch.randn(1, 1, 1, 1), *c).dtype


class Promotion(unittest.TestCase):
    def test_each_expression_has_torchs_dtype(self):
        for name, (body, expected) in EXPRESSIONS.items():
            with self.subTest(name):
                self.assertEqual(torch_dtype(body), expected)
                self.assertEqual(traced_dtype(body), expected)

    def test_python_int_beyond_int32_is_int64_not_narrowed(self):
        text = trace(lambda s, b, h, q, k: s + (q + 2**33 > 2**33), verify=False).text
        self.assertIn("arith.constant 8589934592 : i64", text)
        self.assertIn("arith.extsi", text)


if __name__ == "__main__":
    unittest.main()
