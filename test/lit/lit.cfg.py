# lit configuration for relaxc's text-IR tests (relax-opt + FileCheck).
import os

import lit.formats

config.name = "relaxc"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".rx"]
# Inputs/ holds files that RUN lines of other tests read.
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
# Keep lit's Output/ directories in the build tree, never in the sources.
config.test_exec_root = lit_config.params.get("exec_root", os.path.join(os.getcwd(), "lit-out"))

# The build's tool dir (relax-opt) and LLVM's (FileCheck, not), from --param or the environment.
tools_dir = lit_config.params.get("relax_tools_dir", os.environ.get("RELAX_TOOLS_DIR", ""))
llvm_dir = lit_config.params.get("llvm_tools_dir", "/usr/lib/llvm-22/bin")
if not tools_dir:
    lit_config.fatal("pass --param relax_tools_dir=<build>/tools (dir holding relax-opt)")
config.environment["PATH"] = os.pathsep.join([tools_dir, llvm_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
config.substitutions.append(("%relax-opt", os.path.join(tools_dir, "relax-opt")))
