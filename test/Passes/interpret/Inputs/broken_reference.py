def reference(q, k, v, scale, **params):
    raise RuntimeError("this reference is broken on purpose")
