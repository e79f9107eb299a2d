# lit configuration of gatejit's pass tests: each .mlir file runs its RUN
# lines with gatejit-opt and LLVM's FileCheck / not.
import os
import lit.formats

config.name = "gatejit-passes"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
params = lit_config.params
tools = params.get("tools_dir", "/usr/lib/llvm-22/bin")
config.substitutions.append(("gatejit-opt", params["gatejit_opt"]))
config.substitutions.append(("FileCheck", os.path.join(tools, "FileCheck")))
config.substitutions.append(("%not", os.path.join(tools, "not")))
