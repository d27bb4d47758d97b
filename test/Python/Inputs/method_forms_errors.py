"""Traces one score_mod that method-forms.test expects to be refused."""
import sys

from cuir.variant import trace


def type_name(score, b, h, q_idx, kv_idx):
    return score + len(q_idx.type())


def to_class(score, b, h, q_idx, kv_idx):
    return score + q_idx.to(list)


trace({"type-name": type_name, "to-class": to_class}[sys.argv[1]], None)
