"""python.package.device: tensors on a module's device through the relaxc package (issue 35:
Module.run on DLPack tensors of the module's device; what python/relaxrt.py offered), on a tiny
model (test/capi/make_model.py) compiled for vulkan (lavapipe on a machine without a GPU) with
RELAX_GPU_UNIFIED=0 (device memory, as on a discrete GPU), and for cpu.

- to_device -> run on the DeviceTensor with outputs_on_device -> numpy() equals the host run;
  device_traffic() shows no staging and no host copy then; the module attribute
  outputs_on_device; an earlier run's device output fed back as an input; a DLPack object whose
  __dlpack_device__ is the module's device read in place; a host feed mixed in.
- DeviceTensor: shape, dtype, device, __dlpack_device__; errors (relaxc.Error subclasses):
  a complex dtype, a freed tensor fed or copied back, a device tensor of another device.
- Lifetimes: free() while a run on another thread reads the tensor waits for it; close() frees
  the tensors of to_device (numpy() raises "device tensor is freed"), run outputs then raise
  "module is closed"; a DeviceTensor keeps its module's runtime alive after the Module is gone.
- CPU module: outputs stay NumPy with outputs_on_device; to_device gives host memory that
  np.from_dlpack views; device_traffic() is all zero.

Usage: device_test.py --work DIR
"""

import argparse
import gc
import os
import sys
import threading

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "capi"))
from make_model import build_model  # noqa: E402

failures = []


def check(cond, what):
    print(("ok:   " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def expect_error(cls, what, f, contains=""):
    try:
        f()
    except cls as e:
        check(contains in str(e), f"{what}: {cls.__name__}: {e}")
        return
    except Exception as e:  # noqa: BLE001 (the wrong class is the failure reported)
        check(False, f"{what}: expected {cls.__name__}, got {type(e).__name__}: {e}")
        return
    check(False, f"{what}: expected {cls.__name__}, nothing raised")


def same(got, want, what):
    check(all(g.shape == w.shape and np.allclose(g, w, rtol=1e-5, atol=1e-6)
              for g, w in zip(got, want)) and len(got) == len(want), what)


class Wrapped:
    """A foreign DLPack producer (any object with __dlpack__ / __dlpack_device__)."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, **kwargs):
        return self.t.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def delta(m, before):
    after = m.device_traffic()
    return {k: after[k] - before[k] for k in after}


def test_vulkan(relaxc, model):
    os.environ["RELAX_GPU_UNIFIED"] = "0"
    try:
        art = relaxc.compile(model, target="vulkan")
        m = relaxc.load(art)
    except relaxc.Error as e:
        if "Vulkan" in str(e) or "vkCreateInstance" in str(e):
            print(f"SKIP: no Vulkan device: {e}")
            return
        raise
    check(m.device == "vulkan:0", f"device {m.device}")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 9, 3)).astype(np.float32)
    ref = m.run({"x": x})
    check(all(isinstance(r, np.ndarray) for r in ref), "host feeds: NumPy outputs")

    dx = m.to_device(x)
    check(isinstance(dx, relaxc.DeviceTensor) and dx.shape == (2, 9, 3)
          and dx.dtype == np.float32 and dx.device == "vulkan:0",
          f"to_device: {dx.shape} {dx.dtype} on {dx.device}")
    check(dx.__dlpack_device__() == (7, 0), f"__dlpack_device__ {dx.__dlpack_device__()}")
    check(np.array_equal(dx.numpy(), x), "numpy() gives back what to_device copied")

    before = m.device_traffic()
    outs = m.run({"x": dx}, outputs_on_device=True)
    d = delta(m, before)
    check(all(isinstance(o, relaxc.DeviceTensor) for o in outs) and
          [o.shape for o in outs] == [(2, 9, 3), (2, 9, 5)], f"device outputs {outs}")
    check(d["launches"] > 0 and d["staged_bytes"] == 0 and d["copy_in_bytes"] == 0 and
          d["copy_out_bytes"] == 0 and d["host_mapped_buffers"] == 0,
          f"device in, device out: no staging, no host copy: {d}")
    same([o.numpy() for o in outs], ref, "device outputs' numpy() equal the host run")

    before = m.device_traffic()
    host_out = m.run({"x": dx})
    d = delta(m, before)
    check(d["copy_in_bytes"] == 0 and d["staged_bytes"] == 0 and d["copy_out_bytes"] > 0,
          f"device in, host out: only the outputs copied: {d}")
    same(host_out, ref, "device in, host out equals the host run")

    m.outputs_on_device = True  # the module's default
    again = m.run([dx])
    check(all(isinstance(o, relaxc.DeviceTensor) for o in again),
          "Module.outputs_on_device = True: run() returns DeviceTensors")
    m.outputs_on_device = False
    # An output fed back: y has x's shape and dtype.
    y_ref = m.run({"x": ref[0]})
    same(m.run({"x": outs[0]}), y_ref, "a device output fed back as an input")
    # Any DLPack tensor of the module's device is read in place.
    before = m.device_traffic()
    same(m.run({"x": Wrapped(dx)}), ref, "a foreign DLPack tensor on vulkan:0")
    d = delta(m, before)
    check(d["copy_in_bytes"] == 0 and d["staged_bytes"] == 0, f"... read in place: {d}")

    expect_error(relaxc.Error, "to_device of complex64",
                 lambda: m.to_device(np.zeros(3, np.complex64)), "dtype")
    expect_error(relaxc.InputError, "a device tensor of the wrong shape",
                 lambda: m.run({"x": m.to_device(np.zeros((2, 4, 4), np.float32))}),
                 "input 'x': dim 2 must be 3, got 4")

    # free() on one thread while a run on another reads the tensor waits for the run.
    big = rng.standard_normal((16, 256, 3)).astype(np.float32)
    results, errors = [], []

    def runner(t):
        try:
            results.append(m.run({"x": t}))
        except relaxc.Error as e:
            errors.append(str(e))

    for _ in range(5):
        t = m.to_device(big)
        th = threading.Thread(target=runner, args=(t,))
        th.start()
        t.free()
        th.join()
    check(len(results) + len(errors) == 5 and
          all(e == "input 'x': device tensor is freed" for e in errors),
          f"free() during runs on another thread: {len(results)} ran, {len(errors)} refused")

    dx.free()
    dx.free()  # idempotent
    expect_error(relaxc.Error, "a freed tensor fed", lambda: m.run({"x": dx}),
                 "input 'x': device tensor is freed")
    expect_error(relaxc.Error, "numpy() of a freed tensor", dx.numpy, "device tensor is freed")

    dy = m.to_device(x)
    m.close()
    expect_error(relaxc.Error, "numpy() of a to_device tensor after close", dy.numpy,
                 "device tensor is freed")
    expect_error(relaxc.Error, "numpy() of a run output after close", outs[1].numpy,
                 "module is closed")
    expect_error(relaxc.Error, "to_device after close", lambda: m.to_device(x),
                 "module is closed")
    for o in outs + again:
        o.free()

    # A DeviceTensor keeps its module's runtime alive.
    m2 = relaxc.load(art)
    keep = m2.to_device(x)
    out2 = m2.run({"x": keep}, outputs_on_device=True)
    del m2
    gc.collect()
    check(np.array_equal(keep.numpy(), x) and np.allclose(out2[1].numpy(), ref[1]),
          "tensors outlive their Module object (the runtime stays alive)")

    # A device tensor of another device (the CPU module's host memory is fine; a vulkan one
    # fed to a CPU module is not).
    cpu = relaxc.load(relaxc.compile(model, target="cpu"))
    expect_error(relaxc.InputError, "a vulkan tensor fed to a CPU module",
                 lambda: cpu.run({"x": keep}), "a tensor on vulkan:0, but the module runs on cpu")
    cpu.close()
    del os.environ["RELAX_GPU_UNIFIED"]


def test_cpu(relaxc, model):
    m = relaxc.load(relaxc.compile(model, target="cpu"))
    x = np.random.default_rng(1).standard_normal((1, 4, 3)).astype(np.float32)
    ref = m.run({"x": x})
    dx = m.to_device(x)
    check(dx.device == "cpu:0" and dx.__dlpack_device__() == (1, 0), f"cpu to_device: {dx.device}")
    view = np.from_dlpack(dx)
    check(np.array_equal(view, x), "np.from_dlpack of a CPU module's DeviceTensor")
    outs = m.run({"x": dx}, outputs_on_device=True)
    check(all(isinstance(o, np.ndarray) for o in outs), "CPU module: outputs stay NumPy")
    same(outs, ref, "CPU module: a DeviceTensor feed equals the host run")
    check(set(m.device_traffic().values()) == {0}, f"CPU traffic {m.device_traffic()}")
    del view
    m.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    import relaxc
    print(f"relaxc {relaxc.__version__} from {os.path.dirname(relaxc.__file__)}")
    model = build_model()
    test_cpu(relaxc, model)
    test_vulkan(relaxc, model)
    print(f"{len(failures)} failure(s)" if failures else "PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
