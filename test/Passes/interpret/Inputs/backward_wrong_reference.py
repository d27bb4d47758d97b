"""backward_reference.py with dV negated: shows that the runner uses a
file's reference_backward rather than autograd."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import backward_reference  # noqa: E402
from attention_reference import reference  # noqa: E402,F401


def reference_backward(*args, **params):
    dq, dk, dv = backward_reference.reference_backward(*args, **params)
    return dq, dk, -dv
