#!/usr/bin/env python3
# GPU targets through relaxc (gpu_cases.py CASE --relaxc PATH --work DIR): a small CNN-like model
# with a symbolic batch compiled for vulkan runs on this machine's Vulkan driver (Mesa lavapipe)
# and matches onnxruntime at two sizes; compiled for cuda every kernel passes ptxas; a kernel
# that fails its first build takes the one-thread fallback with a warning and still matches;
# device errors are clean `error:` lines.
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frontend_cases import cases_main, model, ort, vi  # noqa: E402


def cnn():
    """Conv + bias + Relu -> global average pool -> Flatten -> MatMul + Add -> Softmax, with a
    residual Add and a Sigmoid on the way: injective, reduction and multi-stage kernels."""
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3, "w")
    b = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b")
    fc = numpy_helper.from_array(rng.standard_normal((8, 5)).astype(np.float32), "fc")
    fb = numpy_helper.from_array(rng.standard_normal(5).astype(np.float32), "fb")
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv0", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu0"),
        helper.make_node("Sigmoid", ["r"], ["s"], name="sigmoid0"),
        helper.make_node("Add", ["r", "s"], ["a"], name="add0"),
        helper.make_node("GlobalAveragePool", ["a"], ["p"], name="pool0"),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten0"),
        helper.make_node("MatMul", ["f", "fc"], ["m"], name="matmul0"),
        helper.make_node("Add", ["m", "fb"], ["l"], name="add1"),
        helper.make_node("Softmax", ["l"], ["y"], name="softmax0", axis=-1),
    ]
    return model(nodes, [vi("x", TensorProto.FLOAT, ["n", 3, 12, 10])],
                 [vi("y", TensorProto.FLOAT, ["n", 5])], [w, b, fc, fb])


def compile_for(r, m, name, target, env=None):
    onnx_path = r.path(name + ".onnx")
    onnx.save(m, onnx_path)
    so = r.path(name + ".so")
    p = r.check_call([r.relaxc, "compile", onnx_path, "-o", so, "--target", target, "--stats"],
                     env=env)
    return so, p


def close(got, want, what):
    for g, w in zip(got, want):
        if g.shape != w.shape or not np.allclose(g, w, rtol=1e-4, atol=1e-5):
            raise SystemExit(f"FAIL {what}: max abs diff {np.abs(g - w).max()}")
    print(f"PASS {what}: matches onnxruntime (max abs diff "
          f"{max(float(np.abs(g - w).max()) for g, w in zip(got, want)):.2e})")


def fallbacks(stats):
    m = re.search(r"device kernels: (\d+), fallbacks: (\d+)", stats)
    if not m:
        raise SystemExit("FAIL: no 'device kernels:' line in --stats")
    return int(m.group(1)), int(m.group(2))


def case_vulkan_run(r):
    """One vulkan artifact, two batch sizes, on lavapipe."""
    m = cnn()
    so, p = compile_for(r, m, "cnn_vk", "vulkan")
    n, fb = fallbacks(p.stdout)
    if n < 4 or fb != 0:
        raise SystemExit(f"FAIL: expected >= 4 device kernels and no fallback, got {n}, {fb}")
    for batch in (1, 3):
        x = np.random.default_rng(batch).standard_normal((batch, 3, 12, 10)).astype(np.float32)
        close(r.run(so, {"x": x}), ort(m, {"x": x}), f"vulkan batch {batch}")
    # --repeat reports the kernels' time from the device's timestamp queries.
    np.save(r.path("x.npy"), x)
    cmd = [r.relaxc, "run", so, "--input", "x=" + r.path("x.npy"), "--repeat", "3"]
    print("+ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(p.stdout + p.stderr)
    lat = re.search(r"mean latency: ([0-9.]+) ms", p.stdout)
    ker = re.search(r"kernel time: ([0-9.]+) ms per run \(device timers\)", p.stdout)
    if p.returncode != 0 or not lat or not ker or not 0 < float(ker.group(1)) <= float(lat.group(1)):
        raise SystemExit("FAIL: expected a kernel time > 0 and <= the mean latency")
    print(f"PASS: kernel time {ker.group(1)} ms of {lat.group(1)} ms per run")
    # The run's tensors are unified memory: every buffer is used in place, nothing is staged.
    # The launches are queued and waited for once per run.
    traffic = r"device launches: (\d+) per run \((\d+) waits\); buffers in place: (\d+), " \
              r"staged: (\d+) \((\d+) bytes in, (\d+) bytes out per run\)"
    t = re.search(traffic, p.stdout)
    if not t or int(t.group(1)) < 4 or int(t.group(2)) != 1 or int(t.group(4)) != 0 \
            or int(t.group(5)) != 0:
        raise SystemExit("FAIL: expected every buffer in place, 0 bytes staged and 1 wait per run")
    # RELAX_GPU_UNIFIED=0: device memory. Nothing is staged and no kernel buffer is host-mapped;
    # the input goes to the device once and the output comes back once.
    env = dict(os.environ, RELAX_GPU_UNIFIED="0")
    p0 = subprocess.run(cmd, capture_output=True, text=True, env=env)
    t0 = re.search(traffic, p0.stdout)
    c0 = re.search(r"device copies: \d+ per run \((\d+) bytes to the device, (\d+) bytes to the "
                   r"host\); host-mapped buffers: (\d+) per run", p0.stdout)
    want_in, want_out = x.nbytes, x.shape[0] * 5 * 4
    if p0.returncode != 0 or not t0 or not c0 or int(t0.group(4)) != 0 or int(c0.group(3)) != 0 \
            or int(c0.group(1)) != want_in or int(c0.group(2)) != want_out:
        raise SystemExit(f"FAIL: RELAX_GPU_UNIFIED=0 should use device memory (0 staged, 0 "
                         f"host-mapped, {want_in} bytes in, {want_out} out):\n" + p0.stdout + p0.stderr)
    # RELAX_GPU_ASYNC=0: in place, but every launch waits.
    env = dict(os.environ, RELAX_GPU_ASYNC="0")
    p1 = subprocess.run(cmd, capture_output=True, text=True, env=env)
    t1 = re.search(traffic, p1.stdout)
    if p1.returncode != 0 or not t1 or int(t1.group(4)) != 0 or int(t1.group(2)) != int(t1.group(1)):
        raise SystemExit("FAIL: RELAX_GPU_ASYNC=0 should wait per launch:\n" + p1.stdout + p1.stderr)
    print(f"PASS: {t.group(1)} launches, 1 wait, {t.group(3)} buffers in place, 0 staged per run; "
          f"with RELAX_GPU_UNIFIED=0 0 host-mapped, {c0.group(1)} bytes in, {c0.group(2)} out")


def case_cuda_ptxas(r):
    """Every kernel compiles for sm_90, sm_80, sm_100 and sm_120 and passes ptxas (its register
    counts are in --stats; sm_100 and later need PTX 8.6+, which LLVM used to end the process
    on); running a cuda artifact without an NVIDIA driver is a clean error."""
    m = cnn()
    for arch in ("sm_90", "sm_80", "sm_100", "sm_120"):
        so, p = compile_for(r, m, "cnn_" + arch, "cuda -arch=" + arch)
        n, fb = fallbacks(p.stdout)
        regs = re.findall(r"registers=(\d+)", p.stdout)
        if n < 4 or fb != 0 or len(regs) != n:
            raise SystemExit(f"FAIL {arch}: {n} kernels, {fb} fallbacks, {len(regs)} with ptxas "
                             "register counts")
        print(f"PASS {arch}: {n} kernels passed ptxas, no fallback")
    if not os.path.exists("/usr/lib/x86_64-linux-gnu/libcuda.so.1"):
        x = np.zeros((1, 3, 12, 10), np.float32)
        r.run(so, {"x": x}, expect_error="libcuda.so.1")
    # Cross-thread reductions finish in the first warp with shuffles: without a toolkit
    # (RELAX_CUDA_HOME naming an empty folder) the artifact keeps the PTX, which shows them.
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], name="sum0", axes=[1], keepdims=0)]
    m = model(nodes, [vi("x", TensorProto.FLOAT, [4, "m"])], [vi("s", TensorProto.FLOAT, [4])],
              [], opset=11)
    empty = r.path("no_toolkit")
    os.makedirs(empty, exist_ok=True)
    so, p = compile_for(r, m, "sum_ptx", "cuda -arch=sm_90", env=dict(os.environ, RELAX_CUDA_HOME=empty))
    ptx = open(so, "rb").read()
    steps = [int(x) for x in re.findall(rb"shfl\.sync\.down\.b32\s+%r\d+, %r\d+, (\d+), 31, -1;", ptx)]
    if sorted(steps) != [1, 2, 4, 8, 16]:
        raise SystemExit(f"FAIL: expected shfl.sync.down by 16, 8, 4, 2, 1 in the PTX, got {steps}")
    print("PASS: the reduction's last 32 values are combined with warp shuffles")
    # An elementwise kernel over a multiple of 4 elements: each thread's 4 neighbours move as
    # one 16-byte vector (the kernel's pointers are 16-byte aligned and do not alias).
    nodes = [helper.make_node("Add", ["x", "y"], ["a"], name="add0"),
             helper.make_node("Relu", ["a"], ["z"], name="relu0")]
    m = model(nodes, [vi("x", TensorProto.FLOAT, ["n", 64]), vi("y", TensorProto.FLOAT, ["n", 64])],
              [vi("z", TensorProto.FLOAT, ["n", 64])])
    so, p = compile_for(r, m, "add_ptx", "cuda -arch=sm_90", env=dict(os.environ, RELAX_CUDA_HOME=empty))
    ptx = open(so, "rb").read()
    loads = len(re.findall(rb"ld\.global\.nc\.v4\.b32", ptx))
    stores = len(re.findall(rb"st\.global\.v4\.b32", ptx))
    if loads != 2 or stores != 1:
        raise SystemExit(f"FAIL: expected 2 vector loads and 1 vector store, got {loads}, {stores}")
    print("PASS: the elementwise kernel loads and stores 4 floats at a time")


def case_fallback(r):
    """A kernel whose first build fails (the RELAX_TEST_BREAK_KERNEL hook) is rebuilt with the
    one-thread schedule: a warning names it and its rule, --stats counts the fallback, and the
    artifact still matches onnxruntime."""
    m = cnn()
    _, p = compile_for(r, m, "cnn_probe", "vulkan")
    names = re.findall(r"kernel: (\S+) rule=\S+\.injective", p.stdout)
    victim = names[0]
    env = dict(os.environ, RELAX_TEST_BREAK_KERNEL=victim)
    so, p = compile_for(r, m, "cnn_fb", "vulkan", env=env)
    if f"warning: kernel '{victim}'" not in p.stderr or "one-thread" not in p.stderr:
        raise SystemExit("FAIL: no fallback warning naming the kernel")
    if fallbacks(p.stdout)[1] != 1:
        raise SystemExit("FAIL: --stats does not count one fallback")
    x = np.random.default_rng(5).standard_normal((2, 3, 12, 10)).astype(np.float32)
    close(r.run(so, {"x": x}), ort(m, {"x": x}), "vulkan with a one-thread fallback kernel")


def case_fallback_barrier(r):
    """A cross-thread reduction kernel (threads synchronize at barriers) has no one-thread form:
    when its build fails, compilation fails with an error naming it."""
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], name="sum0", axes=[1], keepdims=0)]
    m = model(nodes, [vi("x", TensorProto.FLOAT, [4, "m"])], [vi("s", TensorProto.FLOAT, [4])],
              [], opset=11)
    _, p = compile_for(r, m, "sum_probe", "vulkan")
    names = re.findall(r"kernel: (\S+) rule=vulkan\.cross-thread-reduction", p.stdout)
    if not names:
        raise SystemExit("FAIL: ReduceSum over a symbolic axis is not a cross-thread reduction")
    onnx_path = r.path("sum_probe.onnx")
    cmd = [r.relaxc, "compile", onnx_path, "-o", r.path("sum_fb.so"), "--target", "vulkan"]
    print("+ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True,
                       env=dict(os.environ, RELAX_TEST_BREAK_KERNEL=names[0]))
    sys.stdout.write(p.stdout + p.stderr)
    if p.returncode != 1 or f"error: kernel '{names[0]}'" not in p.stderr or \
            "no one-thread form" not in p.stderr:
        raise SystemExit("FAIL: expected an error naming the kernel and why it has no fallback")
    print("PASS: a failing barrier kernel is a clean error")


def matmul_models():
    """(name, model, rule form, input sizes): a batch-1 dense layer (GEMV), a batched matmul
    of two inputs with symbolic M, N and K tails, and a strided conv + bias + Relu (implicit
    GEMM)."""
    rng = np.random.default_rng(11)
    w = numpy_helper.from_array(rng.standard_normal((300, 40)).astype(np.float32) * 0.1, "w")
    b = numpy_helper.from_array(rng.standard_normal(40).astype(np.float32), "b")
    gemv = model([helper.make_node("MatMul", ["x", "w"], ["m"], name="dense0"),
                  helper.make_node("Add", ["m", "b"], ["y"], name="bias0")],
                 [vi("x", TensorProto.FLOAT, [1, 300])], [vi("y", TensorProto.FLOAT, [1, 40])],
                 [w, b])
    bmm = model([helper.make_node("MatMul", ["x", "z"], ["y"], name="bmm0")],
                [vi("x", TensorProto.FLOAT, ["n", "s", "k"]),
                 vi("z", TensorProto.FLOAT, ["n", "k", "t"])],
                [vi("y", TensorProto.FLOAT, ["n", "s", "t"])])
    cw = numpy_helper.from_array(rng.standard_normal((12, 5, 3, 3)).astype(np.float32) * 0.3, "cw")
    cb = numpy_helper.from_array(rng.standard_normal(12).astype(np.float32), "cb")
    conv = model([helper.make_node("Conv", ["x", "cw", "cb"], ["c"], name="conv0",
                                   pads=[1, 1, 1, 1], strides=[2, 2]),
                  helper.make_node("Relu", ["c"], ["y"], name="relu0")],
                 [vi("x", TensorProto.FLOAT, ["n", 5, "h", "w"])],
                 [vi("y", TensorProto.FLOAT, ["n", 12, "oh", "ow"])], [cw, cb])
    return [("gemv", gemv, "gemv", [{"x": (1, 300)}]),
            ("bmm", bmm, "tiled-matmul",
             [{"x": (2, 45, 37), "z": (2, 37, 70)}, {"x": (1, 3, 70), "z": (1, 70, 2)}]),
            ("conv", conv, "tiled-matmul", [{"x": (1, 5, 17, 19)}, {"x": (2, 5, 9, 40)}])]


def case_matmul_rules(r):
    """The gemv and tiled-matmul rules: each model takes its rule (alone or as a stage of a
    multi-stage kernel), runs on lavapipe at its sizes and matches onnxruntime; for cuda every
    kernel passes ptxas without spills."""
    for name, m, form, sizes in matmul_models():
        so, p = compile_for(r, m, name + "_vk", "vulkan")
        if not re.search(rf"rule=vulkan\.(multi-stage:)?{form}\b", p.stdout):
            raise SystemExit(f"FAIL {name}: no kernel took the {form} schedule")
        if fallbacks(p.stdout)[1] != 0:
            raise SystemExit(f"FAIL {name}: a kernel fell back")
        for k, shapes in enumerate(sizes):
            rng = np.random.default_rng(k)
            x = {n: rng.standard_normal(sh).astype(np.float32) for n, sh in shapes.items()}
            close(r.run(so, x), ort(m, x), f"vulkan {name} {shapes}")
        _, p = compile_for(r, m, name + "_cu", "cuda -arch=sm_90")
        n, fb = fallbacks(p.stdout)
        regs = re.findall(r"registers=(\d+) spill_bytes=(\d+)", p.stdout)
        if fb != 0 or len(regs) != n or any(int(sp) for _, sp in regs):
            raise SystemExit(f"FAIL {name} cuda: {fb} fallbacks, ptxas reports {regs}")
        print(f"PASS {name} cuda: {n} kernels through ptxas, no spills")


def case_scalar_abi(r):
    """Vulkan kernels take their int64 scalars (symbolic dims) as one push-constant block when
    at most 16 (the launch table says "scalars": "push_constants"), else as a storage buffer;
    both run on lavapipe and match onnxruntime."""
    for rank, want in ((3, True), (18, False)):
        dims = [f"d{i}" for i in range(rank)]
        m = model([helper.make_node("Relu", ["x"], ["y"], name="relu0")],
                  [vi("x", TensorProto.FLOAT, dims)], [vi("y", TensorProto.FLOAT, dims)])
        so, _ = compile_for(r, m, f"relu{rank}", "vulkan")
        table = open(so, "rb").read()
        push = b'"scalars":"push_constants"' in table
        if push != want:
            raise SystemExit(f"FAIL: rank {rank}: push constants {push}, expected {want}")
        shape = [2, 3, 5] + [1] * (rank - 3)
        x = np.random.default_rng(rank).standard_normal(shape).astype(np.float32)
        close(r.run(so, {"x": x}), ort(m, {"x": x}),
              f"vulkan relu rank {rank} ({'push constants' if want else 'scalar buffer'})")


def case_device_errors(r):
    """A device index the machine does not have is an error naming it."""
    m = cnn()
    so, _ = compile_for(r, m, "cnn_dev", "vulkan")
    x = np.zeros((1, 3, 12, 10), np.float32)
    np.save(r.path("x.npy"), x)
    cmd = [r.relaxc, "run", so, "--input", "x=" + r.path("x.npy"), "--device", "7"]
    print("+ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(p.stdout + p.stderr)
    if p.returncode != 1 or "error:" not in p.stderr or "device 7" not in p.stderr:
        raise SystemExit("FAIL: --device 7 must be an error naming the device")
    print("PASS: --device 7 is a clean error")
    # Bad values of --device, of the runtime switches and of -arch are clean errors too.
    bad = [([r.relaxc, "run", so, "--input", "x=" + r.path("x.npy"), "--device", "-1"], {}, 2,
            "--device: a GPU index (0, 1, ...) is expected, got '-1'"),
           ([r.relaxc, "run", so, "--input", "x=" + r.path("x.npy")], {"RELAX_GPU_UNIFIED": "abc"},
            1, "RELAX_GPU_UNIFIED='abc' is not a switch"),
           ([r.relaxc, "run", so, "--input", "x=" + r.path("x.npy")], {"RELAX_GPU_ASYNC": "2"}, 1,
            "RELAX_GPU_ASYNC='2' is not a switch"),
           ([r.relaxc, "compile", r.path("cnn_dev.onnx"), "--target", "cuda -arch=sm_10", "-o",
             r.path("bad.so")], {}, 1, "-arch=sm_10 is not a CUDA architecture relaxc builds for"),
           ([r.relaxc, "compile", r.path("cnn_dev.onnx"), "--target", "cuda -arch=sm_999", "-o",
             r.path("bad.so")], {}, 1, "-arch=sm_999 is not a CUDA architecture LLVM")]
    for cmd, env, code, want in bad:
        print("+ " + " ".join(cmd), flush=True)
        p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **env))
        sys.stdout.write(p.stdout + p.stderr)
        if p.returncode != code or not p.stderr.startswith("error: ") or want not in p.stderr \
                or "recognized" in p.stderr:
            raise SystemExit(f"FAIL: expected exit {code} and 'error: {want}'")
    # Off-values of the switches run.
    for val in ("off", "FALSE", "0", "1", ""):
        env = dict(os.environ, RELAX_GPU_UNIFIED=val, RELAX_GPU_ASYNC=val)
        p = subprocess.run([r.relaxc, "run", so, "--input", "x=" + r.path("x.npy")],
                           capture_output=True, text=True, env=env)
        if p.returncode != 0:
            raise SystemExit(f"FAIL: RELAX_GPU_*='{val}' should run:\n{p.stderr}")
    print("PASS: bad --device, switch and -arch values are clean errors")


CASES = {"vulkan_run": case_vulkan_run, "cuda_ptxas": case_cuda_ptxas, "fallback": case_fallback,
         "fallback_barrier": case_fallback_barrier, "device_errors": case_device_errors,
         "matmul_rules": case_matmul_rules, "scalar_abi": case_scalar_abi}

if __name__ == "__main__":
    sys.exit(cases_main(CASES, __doc__))
