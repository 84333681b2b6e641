"""relaxc.compile(): an ONNX model (or text IR) -> Artifact, in memory (relax::driver::Compile)."""

from __future__ import annotations

import os
import warnings
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union

import numpy as np

from . import _compiler_ext
from ._errors import CompileError

__all__ = ["compile", "Artifact", "compile_options"]

Bound = Union[int, Tuple[int, int]]
Model = Union[str, os.PathLike, bytes, bytearray, memoryview, Any]


class Artifact:
    """A compiled model in memory: save() writes the artifact file, relaxc.load() runs it.

    bytes: the artifact file's bytes. stats: the figures of `relaxc compile --stats`
    (kernels, vm_instructions, params_bytes, kernel_bytes, tuned_kernels, schedule_rules,
    device_kernels); stats_text() the CLI's text. warnings: the import warnings (each was also
    issued as a Python warning). bounds: {dim: (min, max)} of the bounds compiled with.
    partition_report / partition_dot / log: with the options of the same names."""

    def __init__(self, compiled: Any) -> None:
        self._a = compiled

    @property
    def bytes(self) -> bytes:
        return self._a.bytes()

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Writes the artifact to `path`: a new temporary file in its folder renamed over it (a
        symlink there is replaced, never written through)."""
        self._a.save(checked_path(path, CompileError))

    @property
    def stats(self) -> Dict[str, Any]:
        return self._a.stats()

    def stats_text(self, at: Optional[Mapping[str, int]] = None) -> str:
        """`relaxc compile --stats`'s text; `at` ({dim: value}) adds the memory plan evaluated
        there (as --stats-at)."""
        values = {}
        for dim, v in dict(at or {}).items():
            known = self.bounds.get(str(dim))
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise CompileError(f"stats_text: at['{dim}'] must be an integer, got {v!r}")
            v = int(v)
            lo, hi = known if known is not None else (0, (1 << 48) - 1)
            if not lo <= v <= hi:
                raise CompileError(f"stats_text: at['{dim}'] = {v} is outside "
                                   f"{'its bound' if known else 'the valid range'} {lo}..{hi}")
            values[str(dim)] = v
        return self._a.stats_text(values)

    @property
    def warnings(self) -> List[str]:
        return list(self._a.warnings)

    @property
    def bounds(self) -> Dict[str, Tuple[int, int]]:
        return dict(self._a.bounds)

    @property
    def partition_report(self) -> str:
        return self._a.partition_report

    @property
    def partition_dot(self) -> str:
        return self._a.partition_dot

    @property
    def log(self) -> str:
        return self._a.log

    def __repr__(self) -> str:
        s = self.stats
        return f"Artifact({s['kernels']} kernels, {s['params_bytes']} bytes of params)"


def checked_path(path: Any, error: type) -> str:
    """os.fspath(path), refusing a NUL byte (the C++ side would cut the name at it) with
    `error` (a relaxc.Error subclass)."""
    p = os.fspath(path)
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    if "\0" in p:
        raise error(f"path {p!r} contains a NUL byte")
    return p


def _names(value: Union[str, os.PathLike, Iterable[Any]]) -> List[str]:
    """A list argument given as one string (or path) is that one name, not its characters."""
    if isinstance(value, (str, bytes, os.PathLike)):
        value = [value]
    return [os.fsdecode(os.fspath(v)) if isinstance(v, (bytes, os.PathLike)) else str(v)
            for v in value]


def _bound_spec(name: str, bound: Bound) -> str:
    if isinstance(bound, int) and not isinstance(bound, bool):
        return f"{name}={bound}"
    if isinstance(bound, (tuple, list)) and len(bound) == 2 and \
            all(isinstance(v, int) and not isinstance(v, bool) for v in bound):
        return f"{name}={bound[0]}..{bound[1]}"
    raise CompileError(f"bounds['{name}']: expected MAX or (MIN, MAX) as integers, got {bound!r}")


def compile_options(target: str = "cpu", bounds: Optional[Mapping[str, Bound]] = None,
                    byoc: Optional[Iterable[str]] = None,
                    options: Optional[Mapping[str, Any]] = None,
                    disabled_passes: Iterable[str] = (), plugins: Iterable[str] = (),
                    tuning_db: Optional[Union[str, os.PathLike]] = None,
                    freeze_initializers: bool = False, bounds_check: bool = False,
                    verify: bool = True, partition_report: bool = False,
                    partition_graph: bool = False,
                    print_ir_after: Iterable[str] = (), print_ir_after_all: bool = False,
                    time_passes: bool = False) -> Any:
    """The CompileOptions of compile()'s keyword arguments (the CLI's spellings underneath)."""
    o = _compiler_ext.CompileOptions()
    o.target = str(target)
    o.bounds = [_bound_spec(str(k), v) for k, v in (bounds or {}).items()]
    if byoc is not None:
        names = [byoc] if isinstance(byoc, str) else list(byoc)
        o.byoc = ",".join(names) if names else "none"
    o.pass_options = [f"{k}={v}" for k, v in (options or {}).items()]
    o.disabled_passes = _names(disabled_passes)
    o.plugins = _names(plugins)
    o.tuning_db = os.fspath(tuning_db) if tuning_db is not None else ""
    o.freeze_initializers = bool(freeze_initializers)
    o.bounds_check = bool(bounds_check)
    o.verify = bool(verify)
    o.partition_report = bool(partition_report)
    o.partition_graph = bool(partition_graph)
    o.print_after = _names(print_ir_after)
    o.print_after_all = bool(print_ir_after_all)
    o.time_passes = bool(time_passes)
    return o


def model_bytes(model: Model) -> Optional[bytes]:
    """The serialized model when `model` is bytes or an onnx.ModelProto; None for a path."""
    if isinstance(model, (str, os.PathLike)):
        return None
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model)
    if hasattr(model, "SerializeToString"):
        return model.SerializeToString()
    raise CompileError(f"cannot compile a {type(model).__name__}: expected a path, the model's "
                       "bytes or an onnx.ModelProto")


def compile(model: Model, target: str = "cpu", bounds: Optional[Mapping[str, Bound]] = None,
            byoc: Optional[Iterable[str]] = None, options: Optional[Mapping[str, Any]] = None,
            **kwargs: Any) -> Artifact:
    """Compiles `model` for `target` and returns the artifact in memory.

    model: a path (ONNX, or text IR when it ends in .rx; external tensor data is read beside
    it), the ONNX model's bytes, or an onnx.ModelProto. target: as `--target` ("cpu",
    "cpu -mcpu=x86-64-v3", "vulkan", "cuda -arch=sm_90"). bounds: {dim: MAX or (MIN, MAX)}
    (--bound). byoc: codegen plugins (["dnnl"]; [] for none; None: the default). options: pass
    options ({"fold-constants.max-elements": 1024}, --pass-option). Keyword arguments:
    disabled_passes, plugins, tuning_db, freeze_initializers, bounds_check, verify,
    partition_report, partition_graph, print_ir_after, print_ir_after_all, time_passes (the
    CLI flags of the same names). Raises relaxc.CompileError with the CLI's message. The GIL is
    released while compiling: compiles on several threads run at once and give the bytes
    `relaxc compile` gives."""
    o = compile_options(target, bounds, byoc, options, **kwargs)
    data = model_bytes(model)
    if data is None:
        a = _compiler_ext.compile_path(checked_path(model, CompileError), o)
    else:
        name = "<onnx.ModelProto>" if hasattr(model, "SerializeToString") else "<model bytes>"
        a = _compiler_ext.compile_bytes(data, name, o)
    for w in a.warnings:
        warnings.warn(w, stacklevel=2)
    return Artifact(a)
