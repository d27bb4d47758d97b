"""Unit tests of cuir.trace.literals: the one writer of MLIR literals and names."""
import os
import subprocess
import unittest

import torch

from cuir.trace import literals as L
from cuir.trace.verify import find_cuir_opt


class FloatLiterals(unittest.TestCase):
    def test_finite_values_have_a_dot_and_round_to_f32(self):
        self.assertEqual(L.float_literal(1e-05), "1.000000e-05")
        self.assertEqual(L.float_literal(3.0), "3.000000e+00")
        self.assertEqual(L.float_literal(0.1), "1.000000e-01")
        self.assertEqual(L.float_literal(1 / 3), "3.33333343e-01")  # needs 9 digits
        self.assertEqual(L.float_literal(-0.0), "-0.000000e+00")

    def test_specials_are_hex(self):
        self.assertEqual(L.float_literal(float("inf")), "0x7F800000")
        self.assertEqual(L.float_literal(-float("inf")), "0xFF800000")
        self.assertEqual(L.float_literal(float("nan")), "0x7FC00000")

    def test_beyond_f32_is_inf_as_torch_rounds(self):
        self.assertEqual(L.float_literal(1e300), "0x7F800000")
        self.assertEqual(L.float_literal(-1e300), "0xFF800000")
        self.assertEqual(L.float_literal(10**400), "0x7F800000")
        self.assertEqual(L.round_float(1e300), (torch.ones(1) * 1e300).item())

    def test_every_literal_parses_back_to_the_same_f32(self):
        values = [1e-05, 1e-40, 3.4028234e38, 2**-149, 123456.789, -7.25, 2**40]
        for v in values + torch.randn(200).tolist():
            self.assertEqual(L.round_float(float(L.float_literal(v))), L.round_float(v))

    def test_half_types(self):
        self.assertEqual(L.float_literal(1e5, "f16"), "0x7C00")
        self.assertEqual(L.float_literal(float("nan"), "bf16"), "0x7FC0")
        self.assertEqual(L.round_float(float(L.float_literal(0.1, "f16")), "f16"),
                         torch.tensor(0.1, dtype=torch.float16).item())


class IntegerLiterals(unittest.TestCase):
    def test_range_is_checked(self):
        self.assertEqual(L.int_literal(2**31 - 1, "i32"), "2147483647")
        self.assertRaises(ValueError, L.int_literal, 2**31, "i32")
        self.assertEqual(L.int_literal(2**40, "i64"), "1099511627776")
        self.assertRaises(ValueError, L.int_literal, 2**63, "i64")
        self.assertEqual(L.constant_op(True, "i1"), "arith.constant true")
        self.assertEqual(L.constant_op(-5, "index"), "arith.constant -5 : index")


class DenseValues(unittest.TestCase):
    def test_nested_splat_and_bool(self):
        t = torch.tensor([[1, 2], [3, 4]], dtype=torch.int32)
        self.assertEqual(L.dense_attr(t), "dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>")
        self.assertEqual(L.dense_attr(torch.zeros(3, 4)),
                         "dense<0.000000e+00> : tensor<3x4xf32>")
        self.assertEqual(L.dense_attr(torch.tensor([True, False])),
                         "dense<[true, false]> : tensor<2xi1>")
        self.assertEqual(L.dense_attr(torch.tensor([float("-inf"), 0.5])),
                         "dense<[0xFF800000, 5.000000e-01]> : tensor<2xf32>")

    def test_big_tensors_are_hex_little_endian(self):
        text = L.dense_attr(torch.arange(2000, dtype=torch.int32))
        self.assertTrue(text.startswith('dense<"0x0000000001000000'), text[:40])
        self.assertTrue(text.endswith("> : tensor<2000xi32>"))


class Names(unittest.TestCase):
    def test_valid_unique_and_not_reserved(self):
        table = L.NameTable()
        names = [table.unique(n) for n in ("doc", "doc", "score", "b", "__x", "1a", "int")]
        self.assertEqual(names, ["doc", "doc_2", "score_2", "b_2", "_x", "p_1a", "int_2"])
        self.assertEqual(L.identifier("naïve"), "na_ve")


@unittest.skipIf(find_cuir_opt() is None, "cuir-opt not found")
class ParsedByCuirOpt(unittest.TestCase):
    def test_cuir_opt_parses_the_literals(self):
        consts = [L.constant_op(v, "f32") for v in (1e-05, float("nan"), -float("inf"), 1e300)]
        body = "\n".join(f"    %{i} = {c}" for i, c in enumerate(consts))
        text = ("cuir.variant @lits() normalizer softmax {\n  cuir.score_mod {\n"
                "  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):\n"
                f"{body}\n    cuir.yield %0 : f32\n  }}\n}}\n")
        run = subprocess.run([find_cuir_opt(), "-"], input=text, capture_output=True,
                             text=True, env=dict(os.environ))
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("0x7FC00000", run.stdout)
        self.assertIn("0xFF800000", run.stdout)


if __name__ == "__main__":
    unittest.main()
