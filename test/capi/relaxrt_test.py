"""The embedding C API (include/relax/runtime/module_api.h) from Python, through python/relaxrt.py
(an alias of the relaxc package, whose runtime extension compiles in lib/vm/module_api.cc):
compile test/capi/make_model.py's model (symbolic batch, n) once with relaxc, run it in this one
process at two sizes (and repeatedly, as a job calls a model in a loop) and compare with
onnxruntime (rtol 1e-4, atol 1e-5); wrong-dtype, wrong-shape and unknown inputs raise
relaxrt.Error with the runtime's message; a truncated artifact is an Error; on vulkan, device
tensors. C functions covered: RelaxModuleLoadOnDevice, RelaxModuleFree, RelaxModuleNumInputs /
NumOutputs, RelaxModuleGetInputInfo / GetOutputInfo, RelaxModuleInputHasDefault, RelaxModuleRun,
RelaxGetLastError, RelaxModuleDevice, RelaxDeviceAlloc, RelaxDeviceCopy, RelaxDeviceFree,
RelaxModuleSetOutputsOnDevice, RelaxModuleDeviceTraffic (RelaxModuleGetInputDefault:
test/cli/initializer_input_cases.py relaxrt). librelax_runtime.so itself (--lib): its exports are
the C API only here; the gtest capi.* links it.

The package is found on PYTHONPATH (build/python-pkg/site, fixture python_package).

Usage: relaxrt_test.py --relaxc RELAXC --lib librelax_runtime.so --work DIR
"""

import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)
import relaxrt  # noqa: E402
from make_model import build_model  # noqa: E402


def expect_error(fn, needle):
    try:
        fn()
    except relaxrt.Error as e:
        if needle not in str(e):
            raise AssertionError(f"error {str(e)!r} does not contain {needle!r}")
        print(f"  expected error: {e}")
        return
    raise AssertionError(f"no relaxrt.Error (expected one containing {needle!r})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    onnx_path = os.path.join(args.work, "relaxrt_small.onnx")
    so = os.path.join(args.work, "relaxrt_small.so")
    onnx.save(build_model(), onnx_path)
    subprocess.run([args.relaxc, "compile", onnx_path, "-o", so], check=True)

    # The library exports the C API only (module_api.h, c_api.h): no C++ symbol.
    nm = subprocess.run(["nm", "-D", "--defined-only", args.lib], capture_output=True, text=True)
    if nm.returncode == 0:
        exported = sorted(line.split()[-1] for line in nm.stdout.splitlines() if line.strip())
        stray = [s for s in exported if not s.startswith("Relax")]
        assert not stray, f"librelax_runtime.so exports more than the C API: {stray[:10]}"
        assert "RelaxModuleRun" in exported, exported
        print(f"  exports: {' '.join(exported)}")

    m = relaxrt.Module(so)
    print(m)
    assert m.input_names == ["x"], m.input_names
    assert m.output_names == ["y", "z"], m.output_names
    assert m.inputs[0].shape == ("batch", "n", 3) and m.inputs[0].dim_names[:2] == ("batch", "n")
    sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    for shape in [(1, 7, 3), (4, 33, 3)]:
        for rep in range(3):  # the same module, called again and again
            x = rng.standard_normal(shape).astype(np.float32)
            got = m.run({"x": x})
            ref = sess.run(None, {"x": x})
            assert len(got) == len(ref) == 2
            for name, g, r in zip(m.output_names, got, ref):
                assert g.shape == r.shape and g.dtype == r.dtype, (name, g.shape, r.shape, g.dtype)
                np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-5, err_msg=name)
        print(f"  shape {shape}: y, z match onnxruntime (3 runs)")
    # A non-contiguous view is made contiguous by the wrapper.
    x = rng.standard_normal((2, 6, 3)).astype(np.float32)[:, ::2]
    np.testing.assert_allclose(m.run({"x": x})[0], sess.run(None, {"x": x})[0],
                               rtol=1e-4, atol=1e-5)
    # One module shared by several threads (runs on one module are serialized by the runtime).
    import threading
    errors = []

    def worker(seed):
        r = np.random.default_rng(seed)
        try:
            for _ in range(20):
                xt = r.standard_normal((2, 1 + seed, 3)).astype(np.float32)
                for g, ref in zip(m.run({"x": xt}), sess.run(None, {"x": xt})):
                    np.testing.assert_allclose(g, ref, rtol=1e-4, atol=1e-5)
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    print("  4 threads x 20 runs on one module: match onnxruntime")
    # A 0-d input stays 0-d (a scalar must not become shape [1]).
    expect_error(lambda: m.run({"x": np.array(1.0, np.float32)}),
                 "input 'x': expected 3 dims, got 0")
    for _ in range(200):  # many calls in one process: no leak, no state carried between runs
        m.run({"x": x})

    expect_error(lambda: m.run({"x": x.astype(np.float64)}),
                 "input 'x': expected dtype float32, got float64")
    expect_error(lambda: m.run({"x": np.zeros((2, 4, 4), np.float32)}),
                 "input 'x': dim 2 must be 3, got 4")
    expect_error(lambda: m.run({"x": x, "extra": x}), "unknown input 'extra'")
    expect_error(lambda: m.run({}), "missing input 'x'")
    expect_error(lambda: relaxrt.Module(os.path.join(args.work, "no_such.so")),
                 "cannot open artifact")
    with open(so, "rb") as f:
        data = f.read()
    trunc = os.path.join(args.work, "relaxrt_trunc.so")
    with open(trunc, "wb") as f:
        f.write(data[: len(data) // 2])
    expect_error(lambda: relaxrt.Module(trunc), "truncated")
    # Big-endian data is converted to native byte order, not read as garbage.
    xb = rng.standard_normal((1, 5, 3)).astype(np.float32)
    np.testing.assert_allclose(m.run({"x": xb.astype(">f4")})[0], sess.run(None, {"x": xb})[0],
                               rtol=1e-4, atol=1e-5)
    print("  big-endian input: converted, matches onnxruntime")
    # close() on one thread while others run the module waits for their runs (it once freed the
    # module under them: a segfault); runs that start after it raise "module is closed".
    m2 = relaxrt.Module(so)
    xl = rng.standard_normal((8, 4096, 3)).astype(np.float32)
    outcomes = []

    def runner():
        try:
            for _ in range(50):
                m2.run({"x": xl})
            outcomes.append("done")
        except relaxrt.Error as e:
            outcomes.append(str(e))

    threads = [threading.Thread(target=runner) for _ in range(2)]
    for t in threads:
        t.start()
    m2.close()
    for t in threads:
        t.join()
    assert all(o in ("done", "module is closed") for o in outcomes), outcomes
    print(f"  close() during runs on other threads: {outcomes}")
    m.close()
    expect_error(lambda: m.run({"x": x}), "module is closed")
    device_tensors(args, onnx_path, sess, rng)
    print("relaxrt: OK")


def device_tensors(args, onnx_path, sess, rng):
    """Tensors on the device (issue 30), on lavapipe: a vulkan artifact run on DeviceTensors with
    its outputs kept on the device copies nothing between host and device and stages nothing; the
    results (copied back by numpy()) match onnxruntime; host feeds still work."""
    so = os.path.join(args.work, "relaxrt_small_vulkan.so")
    p = subprocess.run([args.relaxc, "compile", onnx_path, "--target", "vulkan", "-o", so],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(f"vulkan compile failed: {p.stderr}")
    os.environ["RELAX_GPU_UNIFIED"] = "0"  # device memory, as on a discrete GPU
    try:
        m = relaxrt.Module(so)
    except relaxrt.Error as e:
        if "no Vulkan" in str(e) or "vkCreateInstance" in str(e):
            print(f"  device tensors: skipped ({e})")
            return
        raise
    assert m.device == "vulkan:0", m.device
    x = rng.standard_normal((2, 9, 3)).astype(np.float32)
    ref = sess.run(None, {"x": x})
    for g, r in zip(m.run({"x": x}), ref):  # host in, host out
        np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-5)
    dx = m.to_device(x)
    assert dx.shape == x.shape and dx.dtype == np.float32, dx
    np.testing.assert_array_equal(dx.numpy(), x)
    expect_error(lambda: m.to_device(np.zeros(3, np.complex64)), "unsupported dtype")
    m.outputs_on_device = True
    before = m.device_traffic()
    outs = m.run({"x": dx})
    after = m.device_traffic()
    delta = {k: after[k] - before[k] for k in after}
    assert all(isinstance(o, relaxrt.DeviceTensor) for o in outs), outs
    assert delta["launches"] > 0 and delta["staged_bytes"] == 0, delta
    assert delta["copy_in_bytes"] == 0 and delta["copy_out_bytes"] == 0, delta
    assert delta["host_mapped_buffers"] == 0, delta
    for o, r in zip(outs, ref):
        np.testing.assert_allclose(o.numpy(), r, rtol=1e-4, atol=1e-5)
    print(f"  device tensors: {delta}; outputs {outs} match onnxruntime")
    # free() on one thread while a run on another reads the tensor waits for the run (it freed
    # the memory under the run: a segfault).
    import threading
    big = rng.standard_normal((64, 512, 3)).astype(np.float32)
    results, refused = [], []

    def runner(d):
        try:
            results.append(m.run({"x": d}))
        except relaxrt.Error as e:  # a run that starts after free(): refused, never a crash
            assert str(e) == "input 'x': device tensor is freed", e
            refused.append(e)

    for _ in range(10):
        d = m.to_device(big)
        t = threading.Thread(target=runner, args=(d,))
        t.start()
        d.free()
        t.join()
    assert len(results) + len(refused) == 10, (results, refused)
    print(f"  free() during runs on other threads: {len(results)} runs ended, "
          f"{len(refused)} refused (started after free)")
    # A freed device tensor is an error, never a read of freed memory; close() frees the rest.
    dx.free()
    expect_error(lambda: m.run({"x": dx}), "device tensor is freed")
    dy = m.to_device(x)
    m.close()
    expect_error(dy.numpy, "device tensor is freed")
    for o in outs:
        o.free()
    del os.environ["RELAX_GPU_UNIFIED"]


if __name__ == "__main__":
    main()
