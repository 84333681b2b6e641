#!/usr/bin/env python3
"""Device placement on a GPU artifact (issue 30): runs it with device memory (RELAX_GPU_UNIFIED=0)
and with unified memory, on random inputs, and checks that

  - the device-memory run matches onnxruntime (CPU) within --rtol / --atol;
  - the unified-memory run gives the same outputs bit for bit;
  - with device memory the host maps no buffer a kernel uses ("host-mapped buffers: 0"), no
    launch stages a buffer ("staged: 0"), and the only copies are the inputs to the device and
    the outputs back (bytes per run = the inputs' bytes + the outputs' bytes, plus
    --internal-copies for a model whose host work reads device data), as `relaxc run --repeat`
    reports them.

Usage: gpu_placement.py --relaxc BIN --artifact ART (--model MODEL.onnx | --model-name FILE)
                        --work DIR --shape NAME=D0,D1,... [--shape ...] [--compile TARGET]
                        [--seed N] [--rtol R --atol A] [--internal-copies BYTES]
--model-name looks the file up in $RELAX_MODEL_DIR, then $RELAX_EXPORT_DIR; --compile compiles it
for TARGET into ART first.
Exit 0 = pass, 1 = fail, 77 = skipped (no Vulkan device, or an exported model that is missing).
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np
import onnxruntime as ort

DTYPES = {"tensor(float)": np.float32, "tensor(int64)": np.int64, "tensor(int32)": np.int32,
          "tensor(bool)": np.bool_}


def random_input(rng, info, shape):
    dtype = DTYPES.get(info.type)
    if dtype is None:
        sys.exit(f"input '{info.name}': dtype {info.type} is not supported by this test")
    if dtype == np.float32:
        return rng.standard_normal(shape).astype(np.float32)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    # Token ids and masks: small non-negative values every such input accepts.
    hi = 2 if "mask" in info.name or "type" in info.name else 100
    return rng.integers(0, hi, shape).astype(dtype)


def run(relaxc, artifact, feeds, out_dir, unified):
    args = [relaxc, "run", artifact, "--repeat", "2", "-o", out_dir]
    for name, path in feeds.items():
        args += ["--input", f"{name}={path}"]
    env = dict(os.environ, RELAX_GPU_UNIFIED="1" if unified else "0")
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=1200)
    if p.returncode != 0:
        if "no Vulkan device" in p.stderr or "libvulkan.so.1 not found" in p.stderr:
            print(p.stderr.strip())
            sys.exit(77)
        sys.exit(f"relaxc run (unified={unified}) failed:\n{p.stderr}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--artifact", required=True)
    ap.add_argument("--model")
    ap.add_argument("--model-name")
    ap.add_argument("--compile", metavar="TARGET")
    ap.add_argument("--work", required=True)
    ap.add_argument("--shape", action="append", default=[])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--internal-copies", type=int, default=0,
                    help="bytes per run of the copies the compiler inserted between host and "
                         "device work (--stats: device copies), beyond the inputs and outputs")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    if not a.model:
        for d in (os.environ.get("RELAX_MODEL_DIR", ""), os.environ.get("RELAX_EXPORT_DIR", "")):
            if d and os.path.isfile(os.path.join(d, a.model_name or "")):
                a.model = os.path.join(d, a.model_name)
                break
        if not a.model:
            print(f"skipped: model {a.model_name} not found (scripts/export_models.sh)")
            return 77
    if a.compile:
        p = subprocess.run([a.relaxc, "compile", a.model, "--target", a.compile, "-o", a.artifact,
                            "--stats"], capture_output=True, text=True, timeout=1200)
        if p.returncode != 0:
            sys.exit(f"relaxc compile failed:\n{p.stderr}")
        for line in p.stdout.splitlines():
            if line.startswith("placement:"):
                print(" ", line)
    shapes = {}
    for s in a.shape:
        name, dims = s.split("=", 1)
        shapes[name] = [int(d) for d in dims.split(",")]
    sess = ort.InferenceSession(a.model, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(a.seed)
    feeds, paths, in_bytes = {}, {}, 0
    for info in sess.get_inputs():
        shape = shapes.get(info.name)
        if shape is None:
            shape = [d if isinstance(d, int) else None for d in info.shape]
            if None in shape:
                sys.exit(f"input '{info.name}' has symbolic dims {info.shape}: give --shape")
        x = random_input(rng, info, shape)
        feeds[info.name] = x
        paths[info.name] = os.path.join(a.work, re.sub(r"[^A-Za-z0-9_.-]", "_", info.name) + ".npy")
        np.save(paths[info.name], x)
        in_bytes += x.nbytes
    expected = sess.run(None, feeds)
    names = [o.name for o in sess.get_outputs()]
    out_bytes = sum(e.nbytes for e in expected)

    failures = []
    outs = {}
    for unified in (False, True):
        d = os.path.join(a.work, "unified" if unified else "device")
        text = run(a.relaxc, a.artifact, paths, d, unified)
        outs[unified] = [np.load(os.path.join(d, re.sub(r"[^A-Za-z0-9_.-]", "_", n) + ".npy"))
                         for n in names]
        if unified:
            continue
        m = re.search(r"buffers in place: (\d+), staged: (\d+) \((\d+) bytes in, (\d+) bytes out",
                      text)
        c = re.search(r"device copies: (\d+) per run \((\d+) bytes to the device, (\d+) bytes to "
                      r"the host\); host-mapped buffers: (\d+) per run", text)
        if not m or not c:
            failures.append(f"no device counters in relaxc run's output:\n{text}")
            continue
        staged = int(m.group(2))
        to_dev, to_host, mapped = int(c.group(2)), int(c.group(3)), int(c.group(4))
        print(f"  device memory: {m.group(1)} buffers in place, {staged} staged; copies "
              f"{to_dev} bytes in (inputs {in_bytes}), {to_host} bytes out (outputs {out_bytes}); "
              f"host-mapped buffers {mapped}")
        if staged or int(m.group(3)) or int(m.group(4)):
            failures.append(f"launches staged {staged} buffers with device memory")
        if mapped:
            failures.append(f"{mapped} kernel buffers per run were host-mapped memory")
        if to_dev + to_host != in_bytes + out_bytes + a.internal_copies or to_dev < in_bytes or \
                to_host < out_bytes:
            failures.append(f"copies per run: {to_dev} bytes in / {to_host} bytes out, expected "
                            f"the inputs' {in_bytes} / the outputs' {out_bytes}"
                            f" + {a.internal_copies} bytes of internal copies")
    for i, n in enumerate(names):
        dev, uni, ref = outs[False][i], outs[True][i], expected[i]
        if dev.shape != ref.shape:
            failures.append(f"{n}: shape {dev.shape}, onnxruntime {ref.shape}")
            continue
        if dev.dtype.kind == "f":
            diff = float(np.max(np.abs(dev.astype(np.float64) - ref))) if dev.size else 0.0
            ok = np.allclose(dev, ref, rtol=a.rtol, atol=a.atol, equal_nan=True)
        else:
            diff, ok = 0.0, np.array_equal(dev, ref)
        print(f"  {n}: max abs diff {diff:.3g} vs onnxruntime "
              f"({'OK' if ok else 'MISMATCH'}); unified memory "
              f"{'bit for bit' if np.array_equal(dev, uni, equal_nan=dev.dtype.kind == 'f') else 'DIFFERS'}")
        if not ok:
            failures.append(f"{n}: differs from onnxruntime (max abs diff {diff:.3g})")
        if dev.tobytes() != uni.tobytes():
            failures.append(f"{n}: the unified-memory run differs from the device-memory run")
    for f in failures:
        print("FAIL:", f)
    print("PASS" if not failures else "FAIL")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
