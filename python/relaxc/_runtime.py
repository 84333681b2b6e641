"""Loading and running artifacts: relaxc.load() -> Module. Runtime only (no compiler): the
relaxc_runtime package ships this file unchanged."""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _runtime_ext
from ._errors import ArtifactError, InputError

__all__ = ["load", "Module", "TensorInfo", "DeviceTensor"]

DeviceTensor = _runtime_ext.DeviceTensor
DeviceTensor.__doc__ = """A tensor in the memory of a module's device: from Module.to_device(array),
or an output of Module.run(..., outputs_on_device=True) on a GPU module.

shape (a tuple of ints), dtype (a NumPy dtype: storage-only dtypes as their bit patterns),
device ("vulkan:0"; "cpu:0" for a CPU module's to_device). numpy() copies it to a new NumPy
array; free() releases the memory after the runs in progress that read it (garbage collection
does too). Run feeds take it in place, with no host copy. It keeps its module's runtime alive;
closing the module frees the tensors of to_device (numpy() then raises relaxc.Error "device
tensor is freed") and leaves run outputs unreadable ("module is closed").

__dlpack__ / __dlpack_device__ hand out a view of the memory (DLPack device (7, 0) for vulkan:0,
(2, n) for cuda:n, (1, 0) for the host memory of a CPU module's to_device), which consumers on
that device (torch, numpy for the host) take without a copy; the view keeps the tensor alive,
but free() or closing the module invalidates it."""

Dim = Union[int, str]


class TensorInfo:
    """One input or output of a module.

    name: the ONNX graph input/output name. dtype: "float32", "int64", "bool", ...
    shape: one entry per dim: an int for a fixed dim, the symbolic dim's name ("batch") or, for
    an output, the expression of input dims that gives it ("n + 1").
    dim_names: the symbolic name per dim, None for a fixed dim.
    bounds: {dim name: (min, max)} for the symbolic dims compiled with a bound, where known
    (modules loaded from a relaxc.Artifact; an artifact file does not list them).
    has_default: an input that may be left out of the feeds (it takes its default).
    """

    __slots__ = ("name", "dtype", "shape", "dim_names", "bounds", "has_default")

    def __init__(self, name: str, dtype: str, shape: Sequence[int],
                 dim_names: Sequence[Optional[str]], has_default: bool,
                 bounds: Optional[Mapping[str, Tuple[int, int]]] = None) -> None:
        self.name = name
        self.dtype = dtype
        self.dim_names: Tuple[Optional[str], ...] = tuple(dim_names)
        self.shape: Tuple[Dim, ...] = tuple(
            n if d < 0 and n is not None else int(d) for d, n in zip(shape, self.dim_names))
        known = bounds or {}
        self.bounds: Dict[str, Tuple[int, int]] = {
            n: tuple(known[n]) for n in self.dim_names if n is not None and n in known}
        self.has_default = bool(has_default)

    def __repr__(self) -> str:
        dims = ", ".join(str(d) for d in self.shape)
        return f"TensorInfo({self.name}: {self.dtype}[{dims}]" + \
            (", optional" if self.has_default else "") + ")"


def _feed_array(value: Any) -> Any:
    """`value` as something the extension takes without copying where it can: a NumPy array in
    native byte order and C order, a DeviceTensor, or a DLPack tensor (torch) as it is."""
    if isinstance(value, DeviceTensor):
        return value
    if isinstance(value, np.ndarray):
        if not value.dtype.isnative:
            value = value.astype(value.dtype.newbyteorder("="))
        if not value.flags.c_contiguous:  # (np.ascontiguousarray would make a 0-d array 1-d)
            value = value.copy(order="C")
        return value
    if hasattr(value, "__dlpack__"):
        return value
    return _feed_array(np.asarray(value))


class Module:
    """A loaded artifact. run() may be called any number of times and from several threads
    (runs of one module take turns; load one module per thread to run concurrently).

    outputs_on_device: the default of run()'s outputs_on_device (False)."""

    outputs_on_device: bool = False

    def __init__(self, path: Union[str, os.PathLike], device: Optional[str] = None,
                 bounds: Optional[Mapping[str, Tuple[int, int]]] = None) -> None:
        self.path = os.fspath(path)
        self._m = _runtime_ext.LoadedModule(self.path, device)
        self.device: str = self._m.device
        self.inputs: List[TensorInfo] = [TensorInfo(*i, bounds=bounds) for i in self._m.inputs()]
        self.outputs: List[TensorInfo] = [TensorInfo(*o, bounds=bounds)
                                          for o in self._m.outputs()]
        self.input_names: List[str] = [i.name for i in self.inputs]
        self.output_names: List[str] = [o.name for o in self.outputs]

    def _expected(self) -> str:
        return ", ".join(i.name + (" (optional)" if i.has_default else "")
                         for i in self.inputs) or "none"

    def run(self, feeds: Union[Mapping[str, Any], Sequence[Any]],
            outputs_on_device: Optional[bool] = None) -> List[Any]:
        """Runs the model and returns its outputs as new NumPy arrays, in output order.

        feeds: {input name: array} (NumPy arrays, anything np.asarray takes, or CPU tensors
        with __dlpack__ such as torch tensors), or a sequence in input order. A DeviceTensor
        (to_device, or an earlier run's device output), or a DLPack tensor whose
        __dlpack_device__ is the module's device, is read in place with no host copy (a tensor
        on another device is an InputError). Each input without
        a default must be given; one with a default may be left out. Arrays are read in place
        when they are C-contiguous and of native byte order; dtypes are never converted (a wrong
        dtype is an InputError naming the input). Storage-only dtypes (bfloat16, float8, int4)
        go in and come out as their bit patterns (uint16, uint8, int8). The GIL is released
        while the model runs.

        outputs_on_device (None: the module's outputs_on_device attribute): a GPU module returns
        its outputs as DeviceTensors in device memory instead of NumPy arrays (a run on device
        tensors then copies nothing between host and device). A CPU module returns NumPy arrays
        either way."""
        if isinstance(feeds, Mapping):
            unknown = sorted(set(feeds) - set(self.input_names))
            if unknown:
                raise InputError(f"unknown input '{unknown[0]}' (expected inputs: "
                                 f"{self._expected()})")
            ordered = []
            for info in self.inputs:
                if info.name in feeds:
                    ordered.append(_feed_array(feeds[info.name]))
                elif info.has_default:
                    ordered.append(None)
                else:
                    raise InputError(f"missing input '{info.name}' (expected inputs: "
                                     f"{self._expected()})")
        else:
            ordered = [None if v is None else _feed_array(v) for v in feeds]
        if outputs_on_device is None:
            outputs_on_device = self.outputs_on_device
        return self._m.run(ordered, self.input_names, bool(outputs_on_device))

    def to_device(self, array: Any) -> DeviceTensor:
        """A DeviceTensor holding a copy of `array` (a NumPy array, anything np.asarray takes, or
        a DLPack CPU tensor) in the memory of the module's device: one allocation and one copy,
        with the GIL released. Raises relaxc.Error for a dtype with no runtime equivalent
        (complex) or when the device is out of memory."""
        if not isinstance(array, DeviceTensor) and not hasattr(array, "__dlpack__"):
            array = np.asarray(array)
        return self._m.to_device(_feed_array(array))

    def device_traffic(self) -> Dict[str, int]:
        """Running totals of the host <-> device traffic on the module's device: launches,
        staged_bytes (host buffers copied around kernel launches), copy_in_bytes,
        copy_out_bytes (explicit copies: host inputs in, host outputs out, to_device, numpy())
        and host_mapped_buffers; all 0 for a CPU module. Take differences around a run."""
        return self._m.device_traffic()

    def input_default(self, name: str) -> np.ndarray:
        """A new NumPy array holding the default of input `name` (TensorInfo.has_default)."""
        if name not in self.input_names:
            raise InputError(f"unknown input '{name}' (expected inputs: {self._expected()})")
        return self._m.input_default(self.input_names.index(name))

    def close(self) -> None:
        """Frees the module now (also done when it and its device tensors are garbage-collected),
        after a run in progress on another thread ends; later calls raise relaxc.Error. Frees
        the DeviceTensors of to_device too; device outputs of runs stay allocated until freed
        but can no longer be copied back."""
        self._m.close()

    def __enter__(self) -> "Module":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"Module({self.path!r}, device={self.device!r}, inputs={self.inputs}, "
                f"outputs={self.outputs})")


def load(artifact: Any, device: Optional[str] = None) -> Module:
    """Loads an artifact: a path, the artifact's bytes, or a relaxc.Artifact.

    device: "cpu", "vulkan:0", "cuda:1", ...: the device its kernels run on, which must be of
    the kind the artifact was compiled for (None: that kind, device 0). Raises
    relaxc.ArtifactError for a missing, truncated, corrupt or foreign artifact."""
    if isinstance(artifact, (str, os.PathLike)):
        return Module(artifact, device)
    bounds = getattr(artifact, "bounds", None)
    if isinstance(artifact, (bytes, bytearray, memoryview)):
        data = bytes(artifact)
        write = lambda path: _write_new(path, data)  # noqa: E731
    elif hasattr(artifact, "save"):
        write = artifact.save
    else:
        raise ArtifactError(f"cannot load a {type(artifact).__name__}: expected a path, bytes "
                            "or a relaxc.Artifact")
    # The loader maps a file: a private folder holds it while the module loads.
    folder = tempfile.mkdtemp(prefix="relaxc-load-")
    try:
        path = os.path.join(folder, "artifact.so")
        write(path)
        try:
            module = Module(path, device, bounds=bounds)
        except ArtifactError as e:  # name the artifact as the caller knows it, not the file
            raise ArtifactError(str(e).replace(path, "<in memory>")) from None
        module.path = "<in memory>"
        return module
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _write_new(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
