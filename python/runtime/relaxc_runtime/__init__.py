"""relaxc_runtime: load and run artifacts compiled by relaxc, without the compiler (no LLVM,
MLIR or ONNX in the process). The same Module as relaxc's:

    import relaxc_runtime
    m = relaxc_runtime.load("model.so", device="cpu")
    y, = m.run({"x": x})                 # NumPy arrays (or DLPack CPU tensors) in, NumPy out

Errors are relaxc_runtime.Error: InputError, ArtifactError (and CompileError, never raised
here), with the messages relax-run prints.
"""

from ._errors import ArtifactError, CompileError, Error, InputError
from ._runtime import DeviceTensor, Module, TensorInfo, load

__all__ = ["load", "Module", "TensorInfo", "DeviceTensor", "Error", "CompileError",
           "InputError", "ArtifactError"]
__version__ = "0.1.0"
