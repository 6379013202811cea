# lit configuration for dyn's IR tests (one file per dialect aspect, pass and pipeline) and its
# embedding tests (test/CAPI, test/Plugin, test/Package: docs/embedding.md).
import os
import lit.formats
from lit.llvm import llvm_config

config.name = "DYN"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".c", ".test", ".td"]
config.excludes = ["python", "Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dyn_obj_root, "test")

llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
tool_dirs = [config.dyn_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["dyn-opt", "dyn-tblgen", "mlir-translate", "opt"], tool_dirs)
# the Python the build was configured with (the registry checks run its scripts)
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%mlir_include", config.mlir_include_dir))
# The plugin and the C API share libMLIR with their host, so they exist only in such builds.
if config.dyn_shared_mlir:
    config.available_features.add("shared-mlir")
    llvm_config.add_tool_substitutions(["dyn-capi-test"], [config.dyn_tools_dir])
    # Debian's mlir-opt, not one of dyn's tools.
    llvm_config.add_tool_substitutions(["mlir-opt"], [config.llvm_tools_dir])
    config.substitutions.append(("%dyn_plugin", os.path.join(config.dyn_lib_dir, "DynPlugin.so")))
config.substitutions.append(("%dyn_src_root", config.dyn_src_root))
config.substitutions.append(("%dyn_obj_root", config.dyn_obj_root))
# Projects the tests configure (test/Package) use the compilers dyn was built with.
config.environment["CC"] = config.c_compiler
config.environment["CXX"] = config.cxx_compiler
config.substitutions.append(("%dyn_cc", config.c_compiler))
if os.path.exists(os.path.join(config.cuda_bin_dir, "ptxas")):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", os.path.join(config.cuda_bin_dir, "ptxas")))
