"""Checking the traced text with cuir-opt before it is handed on."""
import importlib
import re
import subprocess
import sys

from .errors import VariantError


def find_cuir_opt():
    """cuir-opt as cuir.compile finds it, or None."""
    compile_module = importlib.import_module("cuir.compile")
    try:
        return compile_module._cuir_opt()
    except RuntimeError:
        return None


_DIAGNOSTIC = re.compile(r"^([^:\n]*):(\d+):(\d+): error: (.*)$", re.MULTILINE)
_warned = []


def verify(text):
    """Parse and verify `text` with cuir-opt; a failure is an internal error."""
    cuir_opt = find_cuir_opt()
    if cuir_opt is None:
        if not _warned:
            print("cuir.variant: warning: cuir-opt not found (build CuIR or set CUIR_OPT): "
                  "the traced MLIR is not verified", file=sys.stderr)
            _warned.append(True)
        return False
    run = subprocess.run([cuir_opt, "-", "-o", "/dev/null"], input=text,
                         capture_output=True, text=True)
    if run.returncode == 0:
        return True
    match = _DIAGNOSTIC.search(run.stderr)
    if match is None:
        raise VariantError(f"internal tracer error: cuir-opt rejects the traced MLIR:\n"
                           f"{run.stderr[-2000:]}")
    where, line, message = match.group(1), int(match.group(2)), match.group(4)
    # An op traced from the user's line is refused at that line.
    if where.endswith(".py"):
        raise VariantError(f"{where}:{line}: {message}")
    source = text.splitlines()[line - 1].strip() if line <= len(text.splitlines()) else ""
    raise VariantError(f"internal tracer error: cuir-opt rejects line {line} of the traced "
                       f"MLIR: {message}\n  {source[:300]}")
