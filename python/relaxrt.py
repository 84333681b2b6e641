"""relaxrt: run a relaxc artifact in-process from Python (ctypes + numpy, no compiled extension).

    from relaxrt import Module
    m = Module("model.so")
    outs = m.run({"x": x})            # list of np.ndarray, in m.output_names order

An input with a default (an ONNX initializer that is also a graph input, IR version >= 4,
compiled without --freeze-initializers; TensorInfo.has_default) may be left out of the feeds: the
runtime then takes its default (m.input_default(name) returns a copy of it).

Tensors on a GPU artifact's device (issue 30): m.device names it ("vulkan:0"; "cpu:0" for a CPU
artifact); m.to_device(array) returns a DeviceTensor (device memory from RelaxDeviceAlloc, filled
by one copy), which run() takes as a feed with no copy; with m.outputs_on_device = True, run()
returns DeviceTensors (t.numpy() copies one back to the host; t.free(), or garbage collection,
releases it). m.device_traffic() returns the device's running totals of launches, staged and
copied bytes and host-mapped buffers (take differences around a run).

The runtime is librelax_runtime.so (include/relax/runtime/module_api.h): given as `lib`, else
the file named by the environment variable RELAX_RUNTIME_LIB, else build/lib/ of this
repository. Inputs are converted to C-contiguous arrays (never to another dtype: a wrong dtype
is the runtime's error); outputs are copied into numpy arrays the caller owns. Any failure
raises relaxrt.Error with the runtime's message (the text relax-run prints after "error: ").
Storage-only dtypes (bfloat16, float8_*, int4/uint4) go in and come out as their bit patterns
(uint16, uint8, int8), as with relax-run's .npy files.
"""

import ctypes
import os
import threading
import weakref

import numpy as np

__all__ = ["Module", "Error", "TensorInfo", "DeviceTensor", "load_library"]


class Error(RuntimeError):
    """A failure reported by the relaxc runtime (message as relax-run prints it)."""


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [
    ("dl_tensor", _DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", _DELETER),
]


class _DeviceTraffic(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int64) for n in ("launches", "staged_bytes", "copy_in_bytes",
                                               "copy_out_bytes", "host_mapped_buffers")]


# DLDeviceType names (DeviceToString's), for Module.device.
_DEVICE_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal",
                 10: "rocm", 15: "webgpu"}


class _TensorInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype_name", ctypes.c_char_p),
        ("dtype", _DLDataType),
        ("ndim", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("dim_names", ctypes.POINTER(ctypes.c_char_p)),
    ]


class TensorInfo:
    """One input or output: name, dtype name ("float32"), shape (None for a symbolic dim),
    dim_names (the symbolic dim's name or expression, None for a fixed dim) and has_default (an
    input that may be left out of the feeds; always False for outputs)."""

    def __init__(self, info, has_default=False):
        self.has_default = has_default
        self.name = info.name.decode()
        self.dtype = info.dtype_name.decode()
        self.shape = tuple(None if info.shape[i] < 0 else int(info.shape[i])
                           for i in range(info.ndim))
        self.dim_names = tuple(None if info.dim_names[i] is None else info.dim_names[i].decode()
                               for i in range(info.ndim))

    def __repr__(self):
        dims = ", ".join(str(d) if d is not None else n for d, n in zip(self.shape, self.dim_names))
        return f"{self.name}: {self.dtype}[{dims}]" + (" = default" if self.has_default else "")


# DLPack codes: 0 int, 1 uint, 2 float, 4 bfloat. bool is {uint, 1 bit} in this runtime.
_CODES = {"i": 0, "u": 1, "f": 2}


def _dl_dtype(dt):
    if dt == np.bool_:
        return _DLDataType(1, 1, 1)
    if dt.kind not in _CODES:
        raise Error(f"unsupported numpy dtype {dt} (expected bool, int, uint or float)")
    return _DLDataType(_CODES[dt.kind], dt.itemsize * 8, 1)


def _np_dtype(dl):
    if dl.lanes != 1:
        raise Error(f"unsupported output dtype (code={dl.code}, bits={dl.bits}, lanes={dl.lanes})")
    if dl.code == 1 and dl.bits == 1:
        return np.dtype(np.bool_)
    nbytes = max(1, (dl.bits + 7) // 8)
    if dl.code == 2 and dl.bits in (16, 32, 64):
        return np.dtype(f"float{dl.bits}")
    if dl.code == 0 or (dl.code >= 10 and dl.bits == 8):  # int, or float8 bit patterns
        return np.dtype(f"int{nbytes * 8}") if dl.code == 0 else np.dtype(np.uint8)
    if dl.code in (1, 4):  # uint, bfloat16 bit patterns
        return np.dtype(f"uint{nbytes * 8}")
    raise Error(f"unsupported output dtype (code={dl.code}, bits={dl.bits})")


_LIB = None
_LIB_LOCK = threading.Lock()


def _default_library_path():
    env = os.environ.get("RELAX_RUNTIME_LIB")
    if env:
        return env
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(repo, "build", "lib", "librelax_runtime.so")


def load_library(path=None):
    """Loads (once per path) and returns the runtime library (ctypes.CDLL)."""
    global _LIB
    path = path or _default_library_path()
    with _LIB_LOCK:
        if _LIB is not None and _LIB[0] == path:
            return _LIB[1]
        if not os.path.exists(path):
            raise Error(f"relaxc runtime library not found: {path} (build it, or set "
                        "RELAX_RUNTIME_LIB)")
        lib = ctypes.CDLL(path)
        lib.RelaxGetLastError.restype = ctypes.c_char_p
        lib.RelaxModuleLoad.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.RelaxModuleLoad.restype = ctypes.c_int32
        lib.RelaxModuleFree.argtypes = [ctypes.c_void_p]
        lib.RelaxModuleFree.restype = None
        for f in (lib.RelaxModuleNumInputs, lib.RelaxModuleNumOutputs):
            f.argtypes = [ctypes.c_void_p]
            f.restype = ctypes.c_int32
        for f in (lib.RelaxModuleGetInputInfo, lib.RelaxModuleGetOutputInfo):
            f.argtypes = [ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(_TensorInfo)]
            f.restype = ctypes.c_int32
        lib.RelaxModuleRun.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.POINTER(_DLTensor)),
                                       ctypes.c_int32,
                                       ctypes.POINTER(ctypes.POINTER(_DLManagedTensor)),
                                       ctypes.c_int32]
        lib.RelaxModuleRun.restype = ctypes.c_int32
        lib.RelaxModuleDevice.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DLDevice)]
        lib.RelaxDeviceAlloc.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                         ctypes.POINTER(ctypes.c_void_p)]
        lib.RelaxDeviceFree.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.RelaxDeviceCopy.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DLTensor),
                                        ctypes.POINTER(_DLTensor)]
        lib.RelaxModuleSetOutputsOnDevice.argtypes = [ctypes.c_void_p, ctypes.c_int32]
        lib.RelaxModuleDeviceTraffic.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DeviceTraffic)]
        for f in (lib.RelaxModuleDevice, lib.RelaxDeviceAlloc, lib.RelaxDeviceFree,
                  lib.RelaxDeviceCopy, lib.RelaxModuleSetOutputsOnDevice,
                  lib.RelaxModuleDeviceTraffic):
            f.restype = ctypes.c_int32
        lib.RelaxModuleInputHasDefault.argtypes = [ctypes.c_void_p, ctypes.c_int32,
                                                   ctypes.POINTER(ctypes.c_int32)]
        lib.RelaxModuleInputHasDefault.restype = ctypes.c_int32
        lib.RelaxModuleGetInputDefault.argtypes = [ctypes.c_void_p, ctypes.c_int32,
                                                   ctypes.POINTER(ctypes.POINTER(_DLManagedTensor))]
        lib.RelaxModuleGetInputDefault.restype = ctypes.c_int32
        _LIB = (path, lib)
        return lib


def _check(lib, rc):
    if rc != 0:
        raise Error(lib.RelaxGetLastError().decode(errors="replace"))


def _host_tensor(a, keep):
    """A DLTensor over C-contiguous numpy array `a` (its shape array appended to `keep`)."""
    shape = (ctypes.c_int64 * max(1, a.ndim))(*a.shape)
    keep.append(shape)
    t = _DLTensor()
    t.data = a.ctypes.data if a.size else None
    t.device = _DLDevice(1, 0)
    t.ndim = a.ndim
    t.dtype = _dl_dtype(a.dtype)
    t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    t.strides = None
    t.byte_offset = 0
    return t


class DeviceTensor:
    """A tensor in the memory of a module's device (Module.to_device, or an output of run()
    with outputs_on_device). free() (or garbage collection) releases it; closing the module
    frees those from to_device, and numpy() needs the module open."""

    def __init__(self, module, dl, release):
        self._module = module  # keeps the runtime library and device memory registry alive
        self._dl = dl  # a _DLTensor whose data is device memory
        self._release = release
        self._uses = 0  # runs in progress reading it (free() waits for them; module._cond)
        self.shape = tuple(dl.shape[i] for i in range(dl.ndim))
        self.dtype = _np_dtype(dl.dtype)

    def numpy(self):
        """A new numpy array with this tensor's contents (one copy from the device)."""
        if self._dl is None:
            raise Error("device tensor is freed")
        out = np.empty(self.shape, dtype=self.dtype)
        keep = []
        host = _host_tensor(out, keep)
        host.dtype = self._dl.dtype  # (bool: the runtime's {uint, 1})
        self._module._device_call(self._module._lib.RelaxDeviceCopy, ctypes.byref(self._dl),
                                  ctypes.byref(host))
        return out

    def free(self):
        """Releases the device memory, after the runs in progress that read it (on other
        threads) end."""
        cond = self._module._cond
        with cond:
            while self._uses:
                cond.wait()
            if self._dl is not None:
                release, self._dl = self._release, None
                release()

    def __del__(self):
        try:
            self.free()
        except Exception:
            pass

    def __repr__(self):
        state = "freed" if self._dl is None else self._module.device
        return f"DeviceTensor({self.dtype}{list(self.shape)}, {state})"


class Module:
    """A loaded artifact. `run` may be called any number of times (one VM, reused)."""

    def __init__(self, path, lib=None):
        self._lib = lib if isinstance(lib, ctypes.CDLL) else load_library(lib)
        self._handle = None
        self._cond = threading.Condition()  # guards _handle against close() during a run
        self._active = 0  # runs in progress
        handle = ctypes.c_void_p()
        _check(self._lib, self._lib.RelaxModuleLoad(os.fsencode(path), ctypes.byref(handle)))
        self._handle = handle
        self.path = path
        self.inputs = self._infos(self._lib.RelaxModuleNumInputs, self._lib.RelaxModuleGetInputInfo,
                                  self._lib.RelaxModuleInputHasDefault)
        self.outputs = self._infos(self._lib.RelaxModuleNumOutputs,
                                   self._lib.RelaxModuleGetOutputInfo)
        self.input_names = [i.name for i in self.inputs]
        self.output_names = [o.name for o in self.outputs]
        dev = _DLDevice()
        _check(self._lib, self._lib.RelaxModuleDevice(self._handle, ctypes.byref(dev)))
        self._dev = dev
        self.device = f"{_DEVICE_NAMES.get(dev.device_type, dev.device_type)}:{dev.device_id}"
        self._outputs_on_device = False
        self._allocated = weakref.WeakSet()  # DeviceTensors from to_device, freed by close()

    @property
    def outputs_on_device(self):
        """Whether run() returns a GPU artifact's outputs as DeviceTensors (default False:
        numpy arrays)."""
        return self._outputs_on_device

    @outputs_on_device.setter
    def outputs_on_device(self, on):
        self._device_call(self._lib.RelaxModuleSetOutputsOnDevice, int(bool(on)))
        self._outputs_on_device = bool(on)

    def _device_call(self, f, *args):
        with self._cond:
            if self._handle is None:
                raise Error("module is closed")
            _check(self._lib, f(self._handle, *args))

    def to_device(self, array):
        """A DeviceTensor holding a copy of `array` in the memory of the module's device."""
        a = np.asarray(array)
        _dl_dtype(a.dtype)  # an unsupported dtype is an Error before anything is allocated
        if not a.dtype.isnative:
            a = a.astype(a.dtype.newbyteorder("="))
        if not a.flags.c_contiguous:
            a = a.copy(order="C")
        data = ctypes.c_void_p()
        self._device_call(self._lib.RelaxDeviceAlloc, a.nbytes, ctypes.byref(data))
        keep = []
        host = _host_tensor(a, keep)
        dev = _host_tensor(a, keep)
        dev.data = data.value
        dev.device = self._dev
        def release():
            with self._cond:
                if self._handle is not None:
                    self._lib.RelaxDeviceFree(self._handle, data)
                    self._allocated.discard(t)

        t = DeviceTensor(self, dev, release)
        t._keep = keep  # the shape array dev points to
        with self._cond:
            self._allocated.add(t)
        try:
            self._device_call(self._lib.RelaxDeviceCopy, ctypes.byref(host), ctypes.byref(dev))
        except Error:
            t.free()
            raise
        return t

    def device_traffic(self):
        """Running totals on the module's device: launches, staged_bytes, copy_in_bytes,
        copy_out_bytes, host_mapped_buffers (all 0 for a CPU artifact)."""
        t = _DeviceTraffic()
        self._device_call(self._lib.RelaxModuleDeviceTraffic, ctypes.byref(t))
        return {n: getattr(t, n) for n, _ in _DeviceTraffic._fields_}

    def _infos(self, count, get, has_default=None):
        out = []
        for i in range(count(self._handle)):
            info = _TensorInfo()
            _check(self._lib, get(self._handle, i, ctypes.byref(info)))
            flag = ctypes.c_int32(0)
            if has_default is not None:
                _check(self._lib, has_default(self._handle, i, ctypes.byref(flag)))
            out.append(TensorInfo(info, bool(flag.value)))
        return out

    def input_default(self, name):
        """A new numpy array holding the default of input `name` (TensorInfo.has_default)."""
        if name not in self.input_names:
            raise Error(f"unknown input '{name}' (expected inputs: "
                        f"{', '.join(self.input_names) or 'none'})")
        with self._cond:
            if self._handle is None:
                raise Error("module is closed")
            out = ctypes.POINTER(_DLManagedTensor)()
            _check(self._lib, self._lib.RelaxModuleGetInputDefault(
                self._handle, self.input_names.index(name), ctypes.byref(out)))
        try:
            return self._to_numpy(out.contents.dl_tensor)
        finally:
            out.contents.deleter(out)

    def run(self, feeds):
        """Runs the model on `feeds` ({input name: array-like}, every input without a default
        exactly once; one with a default left out takes it) and returns the outputs as a list of
        new numpy arrays in output_names order. Several threads may run one module at once;
        close() waits for the runs in progress."""
        with self._cond:
            if self._handle is None:
                raise Error("module is closed")
            self._active += 1
        try:
            return self._run(feeds)
        finally:
            with self._cond:
                self._active -= 1
                self._cond.notify_all()

    def _run(self, feeds):
        unknown = sorted(set(feeds) - set(self.input_names))
        if unknown:
            raise Error(f"unknown input '{unknown[0]}' (expected inputs: "
                        f"{', '.join(self.input_names) or 'none'})")
        arrays, tensors, keep, used = [], [], [], []
        try:
            return self._run_tensors(feeds, arrays, tensors, keep, used)
        finally:
            self._unuse(used)

    @staticmethod
    def _unuse(used):
        for d in used:
            with d._module._cond:
                d._uses -= 1
                d._module._cond.notify_all()
        used.clear()

    def _run_tensors(self, feeds, arrays, tensors, keep, used):
        for info in self.inputs:
            name = info.name
            if name not in feeds and info.has_default:
                tensors.append(None)  # NULL: the runtime takes the default
                continue
            if name not in feeds:
                expected = ", ".join(i.name + (" (optional)" if i.has_default else "")
                                     for i in self.inputs)
                raise Error(f"missing input '{name}' (expected inputs: {expected})")
            if isinstance(feeds[name], DeviceTensor):
                d = feeds[name]
                with d._module._cond:  # free() waits until this run ends
                    if d._dl is None:
                        self._unuse(used)
                        raise Error(f"input '{name}': device tensor is freed")
                    d._uses += 1
                used.append(d)
                tensors.append(d._dl)
                continue
            a = np.asarray(feeds[name])
            if not a.dtype.isnative:  # big-endian data: the runtime reads native byte order
                a = a.astype(a.dtype.newbyteorder("="))
            if not a.flags.c_contiguous:  # (np.ascontiguousarray would make a 0-d array 1-d)
                a = a.copy(order="C")
            arrays.append(a)
            tensors.append(_host_tensor(a, keep))
        n_in, n_out = len(tensors), len(self.output_names)
        in_ptrs = (ctypes.POINTER(_DLTensor) * max(1, n_in))(
            *[ctypes.pointer(t) if t is not None else ctypes.POINTER(_DLTensor)() for t in tensors])
        out_ptrs = (ctypes.POINTER(_DLManagedTensor) * max(1, n_out))()
        _check(self._lib, self._lib.RelaxModuleRun(self._handle, in_ptrs, n_in, out_ptrs, n_out))
        results, err = [], None
        for i in range(n_out):
            m = out_ptrs[i].contents
            if m.dl_tensor.device.device_type != 1:  # a device output: the caller's to free
                ptr = out_ptrs[i]
                results.append(DeviceTensor(self, m.dl_tensor, lambda p=ptr: p.contents.deleter(p)))
                continue
            try:
                if err is None:
                    results.append(self._to_numpy(m.dl_tensor))
            except Error as e:
                err = e
            finally:
                m.deleter(out_ptrs[i])
        if err is not None:
            raise err
        return results

    @staticmethod
    def _to_numpy(t):
        dt = _np_dtype(t.dtype)
        shape = tuple(t.shape[i] for i in range(t.ndim))
        out = np.empty(shape, dtype=dt)
        if out.nbytes:
            ctypes.memmove(out.ctypes.data, t.data + t.byte_offset, out.nbytes)
        return out

    def close(self):
        """Frees the module now (also done when it is garbage-collected), after the runs in
        progress on other threads end; later runs raise Error("module is closed")."""
        cond = getattr(self, "_cond", None)
        if cond is None:  # __init__ failed before the lock existed
            return
        with cond:
            while self._active:
                cond.wait()
            for t in list(getattr(self, "_allocated", ())):
                if t._dl is not None and self._handle is not None:
                    self._lib.RelaxDeviceFree(self._handle, ctypes.c_void_p(t._dl.data))
                t._dl = None
            if self._handle is not None:
                self._lib.RelaxModuleFree(self._handle)
                self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return (f"Module({self.path!r}, inputs=[{', '.join(map(repr, self.inputs))}], "
                f"outputs=[{', '.join(map(repr, self.outputs))}])")
