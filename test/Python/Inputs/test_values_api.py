"""trace(): captured tensors' values apart from the text, for a cache keyed on the text."""
import unittest

import torch

from cuir.variant import trace, trace_variant


def make_mask(doc):
    def mask_mod(b, h, q_idx, kv_idx):
        return doc[b, q_idx] == doc[b, kv_idx]
    return mask_mod


class Values(unittest.TestCase):
    def test_text_without_defaults_and_values_by_name(self):
        doc = torch.tensor([[0, 0, 1], [1, 1, 1]], dtype=torch.int32)
        traced = trace(mask_mod=make_mask(doc), defaults=False, verify=False)
        self.assertNotIn("cuir.default", traced.text)
        self.assertIn("%doc: memref<2x3xi32, #cuir.mem<global>> {cuir.param = \"doc\"}",
                      traced.text)
        self.assertEqual(traced.params, [("doc", (2, 3), torch.int32)])
        self.assertTrue(torch.equal(traced.values["doc"], doc))

    def test_new_values_same_text_new_shape_new_text(self):
        a = trace(mask_mod=make_mask(torch.zeros(2, 3, dtype=torch.int32)), defaults=False,
                  verify=False)
        b = trace(mask_mod=make_mask(torch.ones(2, 3, dtype=torch.int32)), defaults=False,
                  verify=False)
        c = trace(mask_mod=make_mask(torch.ones(2, 4, dtype=torch.int32)), defaults=False,
                  verify=False)
        self.assertEqual(a.text, b.text)
        self.assertNotEqual(a.text, c.text)

    def test_defaults_by_default(self):
        text = trace_variant(mask_mod=make_mask(torch.tensor([[4, 5]], dtype=torch.int32)),
                             verify=False)
        self.assertIn("cuir.default = dense<[[4, 5]]> : tensor<1x2xi32>", text)


if __name__ == "__main__":
    unittest.main()
