"""Fails on purpose with the keyword arguments it received, so that a test
can read back what the interpreter's meta.json held."""


def reference(q, k, v, scale, causal=False, **params):
    got = sorted(params.items()) + [("causal", causal), ("scale", scale)]
    raise RuntimeError(" ".join(f"{k}={v!r}" for k, v in got))
