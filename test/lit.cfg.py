# -*- Python -*-
# lit configuration of the CuIR test suite.

import os

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

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    [ToolSubst("cuir-opt", unresolved="fatal"),
     ToolSubst("CuIRUnitTests", unresolved="fatal")],
    [config.cuir_tools_dir])

# python/cuir is importable by the tests' Python.
config.environment["PYTHONPATH"] = os.path.join(config.cuir_src_root, "python")
