"""What the Python test scripts print for a call whose outcome is checked: "label: ok" (or its result), or the
error's type and message."""


def show(label, fn):
    try:
        r = fn()
        print(f"{label}: ok" if r is None else f"{label}: {r}")
    except Exception as e:  # the errors' messages are what is checked
        print(f"{label}: {type(e).__name__}: {e}")
