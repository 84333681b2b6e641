"""The artifact cache of InferenceSession: ~/.cache/relaxc/artifacts/ (or $RELAX_ARTIFACT_CACHE),
one file per compile, named by the sha256 of what decides the artifact's bytes: the model's
bytes, the compile options, the target as this machine resolves it (cpu: the -mcpu the host
CPU gives) and the build of the compiler (the sha256 of its extension library)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
import threading
import warnings
from typing import Any, Callable, Optional

from . import _compiler_ext
from ._errors import Error

__all__ = ["cache_dir", "cache_key", "cached_artifact"]

_build_id: Optional[str] = None
_build_lock = threading.Lock()


def build_id() -> str:
    """The sha256 of the compiler extension: any rebuild of relaxc changes it."""
    global _build_id
    with _build_lock:
        if _build_id is None:
            h = hashlib.sha256()
            with open(_compiler_ext.__file__, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            _build_id = h.hexdigest()
        return _build_id


def cache_dir() -> str:
    env = os.environ.get("RELAX_ARTIFACT_CACHE")
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "relaxc", "artifacts")


def _options_json(options: Any) -> str:
    fields = ("target", "bounds", "byoc", "plugins", "pass_options", "disabled_passes",
              "tuning_db", "freeze_initializers", "bounds_check", "verify")
    return json.dumps({f: getattr(options, f) for f in fields}, sort_keys=True)


def cache_key(model: bytes, options: Any) -> str:
    """The hex sha256 naming the artifact of `model` compiled with `options` (CompileOptions)."""
    h = hashlib.sha256()
    for part in (b"relaxc-artifact-v1", model, _options_json(options).encode(),
                 _compiler_ext.target_key(options.target).encode(), build_id().encode()):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


def _private_dir(path: str) -> None:
    """Creates `path` (mode 0700) where missing; refuses a symlink or anything but a folder of
    ours."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise Error(f"artifact cache '{path}' is not a folder owned by this user")


def cached_artifact(model: bytes, options: Any, compile_fn: Callable[[], Any],
                    load_fn: Callable[[str], Any],
                    load_memory: Callable[[Any], Any]) -> Any:
    """load_fn(path) of the cached artifact of (model, options); on a miss (or a cached file
    that does not load), compile_fn() compiles it and the artifact is written to the cache as
    a new temporary file renamed over its name: readers never see part of a file, and a
    symlink at the name is replaced, never followed. A cache that cannot be used (not a folder
    of ours, read-only, full, something else at the name) is warned about, and the artifact
    is loaded from memory (load_memory) instead."""
    folder = cache_dir()
    try:
        _private_dir(folder)
    except (OSError, Error) as e:
        warnings.warn(f"relaxc: artifact cache not used ({e}); compiling without it",
                      stacklevel=4)
        return load_memory(compile_fn())
    path = os.path.join(folder, cache_key(model, options) + ".so")
    try:
        st = os.lstat(path)
        if stat.S_ISREG(st.st_mode):
            return load_fn(path)
    except FileNotFoundError:
        pass
    except Error:
        pass  # truncated, corrupt, or for another runtime: compile it again
    artifact = compile_fn()
    data = artifact.bytes
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".so", dir=folder)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        tmp = None
    except OSError as e:
        warnings.warn(f"relaxc: could not write to the artifact cache ({e}); the artifact is "
                      f"used from memory", stacklevel=4)
        return load_memory(artifact)
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return load_fn(path)
