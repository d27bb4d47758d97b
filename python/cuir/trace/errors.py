"""Errors of the tracer, located at the line of the user's code."""
import inspect
import os
import sys

import torch


class VariantError(Exception):
    """An unsupported construct, with the place in the user's code."""


_TRACER_DIR = os.path.dirname(os.path.abspath(__file__))
_FACADE = os.path.join(os.path.dirname(_TRACER_DIR), "variant.py")
_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))
_SKIPPED_MODULES = ("functools.py", "contextlib.py")


def is_user_file(filename):
    """Whether a frame of `filename` is the user's (not the tracer's or torch's)."""
    path = os.path.abspath(filename)
    if path.startswith(_TRACER_DIR + os.sep) or path == _FACADE:
        return False
    if path.startswith(_TORCH_DIR + os.sep) or filename.startswith("<frozen"):
        return False
    return os.path.basename(path) not in _SKIPPED_MODULES


def _first_user_frame(frames):
    for filename, line in frames:
        if is_user_file(filename):
            return f"{filename}:{line}"
    return None


def current_location():
    """'file:line' of the innermost user frame of the running stack."""
    frames, frame = [], sys._getframe(1)
    while frame is not None:
        frames.append((frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back
    return _first_user_frame(frames)


def traceback_location(tb):
    """'file:line' of the innermost user frame of a traceback."""
    frames = []
    while tb is not None:
        frames.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    return _first_user_frame(reversed(frames))


def definition_location(fn):
    """'file:line' of the definition of a callable, or its repr."""
    target = inspect.unwrap(fn) if callable(fn) else fn
    code = getattr(target, "__code__", None)
    if code is None and hasattr(target, "func"):  # functools.partial
        code = getattr(target.func, "__code__", None)
    if code is None:
        return repr(fn)
    return f"{code.co_filename}:{code.co_firstlineno}"


def located(message, where=None):
    """A VariantError at `where`, or at the current user line."""
    where = where or current_location()
    return VariantError(f"{where}: {message}" if where else message)
