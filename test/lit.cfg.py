# -*- Python -*-
# lit configuration of the CuIR test suite.

import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "CuIR"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".cu"]
config.excludes = ["CMakeLists.txt", "Inputs", "lit.cfg.py", "lit.site.cfg.py",
                   "consumer", "kernel.cu"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.cuir_obj_root, "test")

config.substitutions.append(("%cuir_src_root", config.cuir_src_root))
config.substitutions.append(("%cuir_obj_root", config.cuir_obj_root))
# Longer names first: lit substitutes in order.
config.substitutions.append(("%cmake_generator", config.cmake_generator))
config.substitutions.append(("%cmake", config.cmake_command))
config.substitutions.append(("%mlir_dir", config.mlir_dir))
config.substitutions.append(
    ("%slow_staging", os.path.join(config.cuir_obj_root, "lib",
                                   "CuIRTestSlowStaging.so")))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    [ToolSubst("cuir-opt", unresolved="fatal"),
     ToolSubst("CuIRUnitTests", unresolved="fatal")],
    [config.cuir_tools_dir])

# python/cuir is importable by the tests' Python.
config.environment["PYTHONPATH"] = os.path.join(config.cuir_src_root, "python")


# Features: what a test needs beyond cuir-opt, declared with REQUIRES: so
# that a machine without it reports the test UNSUPPORTED instead of failing.


def find_clang():
    """clang++ 22 with the CUDA front end and NVPTX."""
    for candidate in (os.path.join(config.llvm_tools_dir, "clang++"),
                      shutil.which("clang++-22")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def find_cuda_toolkit():
    """A CUDA toolkit with ptxas: $CUDA_PATH, /usr/local/cuda, or the one
    whose ptxas is on PATH."""
    roots = [os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    ptxas = shutil.which("ptxas")
    if ptxas:
        roots.append(os.path.dirname(os.path.dirname(os.path.realpath(ptxas))))
    for root in roots:
        if root and os.access(os.path.join(root, "bin", "ptxas"), os.X_OK):
            return root
    return None


def imports_torch(python):
    try:
        return subprocess.run([python, "-c", "import torch, numpy"],
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL,
                              timeout=120).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def find_torch_python():
    """A Python with torch and numpy: $CUIR_PYTHON, else /usr/bin/python3,
    else python3 on PATH (which need not be the one with torch)."""
    for candidate in (os.environ.get("CUIR_PYTHON"), "/usr/bin/python3",
                      shutil.which("python3")):
        if candidate and os.access(candidate, os.X_OK) and \
                imports_torch(candidate):
            return candidate
    return None


clang = find_clang()
cuda_path = find_cuda_toolkit()
if clang:
    # Host programs built from lowered code (REQUIRES: host-cxx).
    config.available_features.add("host-cxx")
    config.substitutions.append(("%host_cxx", '"%s"' % clang))
if clang and cuda_path:
    config.available_features.add("cuda-clang")
    config.environment["CUDA_PATH"] = cuda_path
else:
    lit_config.note("no clang++ 22 with a CUDA toolkit (ptxas): tests that "
                    "compile kernels (REQUIRES: cuda-clang) are unsupported")

torch_python = find_torch_python()
if torch_python:
    config.available_features.add("torch")
    # References, the tracer and the tests' scripts run on the Python that
    # has torch; %python is that Python.
    config.environment["CUIR_PYTHON"] = torch_python
    config.substitutions = [(key, value) for key, value in config.substitutions
                            if key != "%python"]
    config.substitutions.append(("%python", '"%s"' % torch_python))
else:
    lit_config.note("no Python with torch and numpy ($CUIR_PYTHON, "
                    "/usr/bin/python3, python3): tests that run PyTorch "
                    "(REQUIRES: torch) are unsupported")
