"""InferenceSession: onnxruntime's session interface over relaxc, so that code written for
onnxruntime switches with its import line:

    import relaxc as ort            # was: import onnxruntime as ort
    sess = ort.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
    y, = sess.run(None, {sess.get_inputs()[0].name: x})

The model is compiled once per (model, options, target, relaxc build) and the artifact cached
(relaxc/_cache.py); later sessions load it."""

from __future__ import annotations

import os
import stat
import warnings
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from . import _cache, _compiler, _compiler_ext
from ._errors import InputError
from ._runtime import Module, TensorInfo, load

__all__ = ["InferenceSession", "NodeArg", "get_available_providers"]

# ONNX element type names as onnxruntime spells them in NodeArg.type.
_ORT_TYPES = {"float32": "float", "float64": "double", "float16": "float16",
              "bfloat16": "bfloat16", "int8": "int8", "int16": "int16", "int32": "int32",
              "int64": "int64", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32",
              "uint64": "uint64", "bool": "bool"}

_PROVIDERS = {"CPUExecutionProvider": "cpu"}


def get_available_providers() -> List[str]:
    """The execution providers InferenceSession takes (onnxruntime's names)."""
    return list(_PROVIDERS)


class NodeArg:
    """An input or output as onnxruntime describes it: name, shape (ints for fixed dims, the
    symbolic dim's name otherwise) and type ("tensor(float)")."""

    __slots__ = ("name", "shape", "type")

    def __init__(self, info: TensorInfo) -> None:
        self.name = info.name
        self.shape: List[Union[int, str]] = list(info.shape)
        self.type = f"tensor({_ORT_TYPES.get(info.dtype, info.dtype)})"

    def __repr__(self) -> str:
        return f"NodeArg(name='{self.name}', type='{self.type}', shape={self.shape})"


def _target(providers: Optional[Sequence[Any]], target: Optional[str]) -> str:
    if target is not None:
        return target
    if isinstance(providers, str):
        providers = [providers]
    for p in providers or []:
        name = p[0] if isinstance(p, (tuple, list)) else p
        if name in _PROVIDERS:
            return _PROVIDERS[name]
        warnings.warn(f"relaxc.InferenceSession: execution provider '{name}' is not available "
                      f"here (available: {', '.join(_PROVIDERS)}); using the others",
                      stacklevel=3)
    return "cpu"


# The serialized key of an ONNX external-data entry ("location", field 1 of a
# StringStringEntryProto): its presence means some tensor's bytes live in another file.
_EXTERNAL_DATA_MARK = b"\x0a\x08location"
_MAX_MODEL_BYTES = 2 << 30  # protobuf's limit for one message


def _read_model(path: str) -> Optional[bytes]:
    """The bytes of the model file at `path`; None (compile from the path, which gives the
    compiler's error) for anything but a regular file of a size protobuf can parse: a FIFO
    would block and /dev/zero never end."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_MODEL_BYTES:
        return None
    with open(path, "rb") as f:
        return f.read(_MAX_MODEL_BYTES + 1)


class InferenceSession:
    """onnxruntime.InferenceSession's interface over a relaxc artifact.

    path_or_bytes: the ONNX model's path or bytes (or an onnx.ModelProto). providers:
    onnxruntime's provider names; CPUExecutionProvider compiles for "cpu" (others warn and are
    skipped, as onnxruntime does). sess_options is accepted and ignored. relaxc's own keyword
    arguments: target (overrides providers), bounds, byoc, options and the others of
    relaxc.compile(); device (relaxc.load's); cache=False compiles without the cache."""

    def __init__(self, path_or_bytes: Any, sess_options: Any = None,
                 providers: Optional[Sequence[Any]] = None, provider_options: Any = None,
                 *, target: Optional[str] = None, device: Optional[str] = None,
                 cache: bool = True, **compile_kwargs: Any) -> None:
        del sess_options, provider_options  # onnxruntime's; nothing to set here
        self._providers = ["CPUExecutionProvider"]
        options = _compiler.compile_options(_target(providers, target), **compile_kwargs)
        data = _compiler.model_bytes(path_or_bytes)
        path = None
        if data is None:
            path = _compiler.checked_path(path_or_bytes, _compiler.CompileError)
            data = _read_model(path)
        name = path if path is not None else "<model bytes>"

        def compile_fn() -> Any:
            # The bytes the cache key was computed from (no second read of the file), or the
            # path when the model has tensors in external data (CompileOnnxBytes refuses them).
            if data is None:
                a = _compiler_ext.compile_path(path, options)
            else:
                a = _compiler_ext.compile_bytes(data, name, options)
            for w in a.warnings:
                warnings.warn(w, stacklevel=4)
            return _compiler.Artifact(a)

        # The cache keys on the model's bytes: a model whose weights live in other files (ONNX
        # external data, whose "location" entries name them) is compiled every time, so that
        # changed weights are never served from a stale artifact.
        if cache and data is not None and _EXTERNAL_DATA_MARK not in data:
            self._module: Module = _cache.cached_artifact(
                data, options, compile_fn, lambda p: Module(p, device),
                lambda a: load(a, device))
        else:
            if data is not None and _EXTERNAL_DATA_MARK in data and path is not None:
                data = None  # compile from the path: the external files are read beside it
            self._module = load(compile_fn(), device)
        self._inputs = [NodeArg(i) for i in self._module.inputs]
        self._outputs = [NodeArg(o) for o in self._module.outputs]

    def get_inputs(self) -> List[NodeArg]:
        return list(self._inputs)

    def get_outputs(self) -> List[NodeArg]:
        return list(self._outputs)

    def get_providers(self) -> List[str]:
        return list(self._providers)

    def get_modelmeta(self) -> Any:
        raise NotImplementedError("relaxc.InferenceSession has no model metadata")

    def run(self, output_names: Optional[Sequence[str]], input_feed: Mapping[str, Any],
            run_options: Any = None) -> List[np.ndarray]:
        """The outputs named in `output_names` (None: all, in the model's order) as NumPy
        arrays, for the feeds {input name: array}. Raises relaxc.InputError."""
        del run_options
        outs = self._module.run(input_feed)
        if output_names is None:
            return outs
        if isinstance(output_names, str):
            output_names = [output_names]
        index: Dict[str, int] = {n: i for i, n in enumerate(self._module.output_names)}
        for n in output_names:
            if n not in index:
                raise InputError(f"unknown output '{n}' (outputs: "
                                 f"{', '.join(self._module.output_names)})")
        return [outs[index[n]] for n in output_names]

    @property
    def module(self) -> Module:
        """The relaxc Module the session runs."""
        return self._module
