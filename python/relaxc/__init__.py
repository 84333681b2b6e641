"""relaxc: compile ONNX models ahead of time and run the artifacts, from Python.

    import relaxc
    art = relaxc.compile("model.onnx", target="cpu", bounds={"batch": (1, 64)})
    art.save("model.so")
    m = relaxc.load("model.so")          # or relaxc.load(art)
    y, = m.run({"x": x})                 # NumPy arrays (or torch CPU tensors) in, NumPy out
    g = relaxc.load(relaxc.compile("model.onnx", target="vulkan"))
    dx = g.to_device(x)                  # a DeviceTensor in the GPU's memory
    dy, = g.run({"x": dx}, outputs_on_device=True)   # no host copy; dy.numpy() copies back

    sess = relaxc.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])

Errors are relaxc.Error: CompileError, InputError, ArtifactError, with the CLI's messages.
"""

from ._errors import ArtifactError, CompileError, Error, InputError
from ._runtime import DeviceTensor, Module, TensorInfo, load
from ._compiler import Artifact, compile
from ._session import InferenceSession, NodeArg, get_available_providers

__all__ = ["compile", "load", "Artifact", "Module", "TensorInfo", "DeviceTensor",
           "InferenceSession", "NodeArg", "get_available_providers", "Error", "CompileError",
           "InputError", "ArtifactError"]
__version__ = "0.1.0"
