"""The traced text is checked by cuir-opt; a rejection is an internal tracer error."""
import contextlib
import io
import unittest

from cuir.trace import VariantError, verify


@unittest.skipIf(verify.find_cuir_opt() is None, "cuir-opt not found")
class Verify(unittest.TestCase):
    def test_rejection_names_the_mlir_line(self):
        text = ("cuir.variant @bad() normalizer softmax {\n  cuir.score_mod {\n"
                "  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):\n"
                "    %0 = arith.addi %score, %score : f32\n    cuir.yield %0 : f32\n  }\n}\n")
        with self.assertRaises(VariantError) as e:
            verify.verify(text)
        self.assertIn("internal tracer error: cuir-opt rejects line 4", str(e.exception))
        self.assertIn("%0 = arith.addi %score, %score : f32", str(e.exception))


class Missing(unittest.TestCase):
    def test_missing_cuir_opt_is_said(self):
        saved, verify.find_cuir_opt = verify.find_cuir_opt, lambda: None
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                self.assertFalse(verify.verify("anything"))
        finally:
            verify.find_cuir_opt = saved
        self.assertIn("cuir-opt not found", err.getvalue())
        self.assertIn("not verified", err.getvalue())


if __name__ == "__main__":
    unittest.main()
