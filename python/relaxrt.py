"""relaxrt: the old name of the relaxc package's runtime (relaxc.load's Module), kept as an alias so
that code written against it keeps working. New code imports relaxc (or relaxc_runtime).

    from relaxrt import Module, Error
    m = Module("model.so")            # relaxc_runtime.Module / relaxc.Module
    outs = m.run({"x": x})            # list of np.ndarray, in m.output_names order
    dx = m.to_device(x)               # a DeviceTensor on a GPU artifact's device
    m.outputs_on_device = True        # run() returns DeviceTensors; t.numpy() copies one back

Every name is the package's: Module, DeviceTensor, TensorInfo, Error (and InputError,
ArtifactError, its subclasses), load. Module(path, lib=None, device=None) takes the old `lib`
argument and ignores it, as load_library(path) does: the runtime is the package's extension,
which compiles in the embedding C API (include/relax/runtime/module_api.h), not
librelax_runtime.so. One difference from the ctypes binding this file was: TensorInfo.shape
names a symbolic dim ("batch") where it held None (dim_names is unchanged).

The package is imported from the installed relaxc_runtime or relaxc; failing both, from
$RELAXC_PACKAGE_DIR, else build/python-pkg/site of this checkout (the copy
test/python/install_package.sh makes).
"""

import os
import sys


def _import_package():
    for name in ("relaxc_runtime", "relaxc"):
        try:
            return __import__(name)
        except ImportError:
            pass
    here = os.path.dirname(os.path.abspath(__file__))
    site = os.environ.get("RELAXC_PACKAGE_DIR") or \
        os.path.join(here, "..", "build", "python-pkg", "site")
    sys.path.insert(0, os.path.abspath(site))
    try:
        return __import__("relaxc")
    except ImportError as e:
        raise ImportError(f"relaxrt is an alias of the relaxc package, which is not importable "
                          f"(pip install . from the checkout, or bash "
                          f"test/python/install_package.sh build/python-pkg): {e}") from e


_pkg = _import_package()

Error = _pkg.Error
InputError = _pkg.InputError
ArtifactError = _pkg.ArtifactError
DeviceTensor = _pkg.DeviceTensor
TensorInfo = _pkg.TensorInfo
load = _pkg.load

__all__ = ["Module", "Error", "InputError", "ArtifactError", "TensorInfo", "DeviceTensor",
           "load", "load_library"]


def load_library(path=None):
    """A no-op kept for old callers (the runtime is the package's extension): returns `path`."""
    return path


class Module(_pkg.Module):
    """The package's Module (relaxc.Module); `lib` is accepted and ignored."""

    def __init__(self, path, lib=None, device=None):
        super().__init__(path, device)
