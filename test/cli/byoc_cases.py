#!/usr/bin/env python3
# The BYOC core through relaxc (byoc_cases.py CASE --relaxc PATH --work DIR): a pattern table
# given as a file partitions a model and --partition-report shows the regions and each
# predicate refusal (a symbolic dim that cannot be proved small enough); --partition-graph
# draws the graph; a C-ABI plugin built here takes Relu and Sigmoid regions, one run from an
# object linked into the artifact, one from the plugin's runtime library, and the artifact
# matches onnxruntime; plugins that fail give errors naming the plugin and the region.
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frontend_cases import cases_main, model, ort, vi  # noqa: E402

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOY = """plugin toy merge
pattern conv2d_bias_relu = nn.relu(add(nn.conv2d(*, const){shape[3] <= 4096}, *))
pattern sigmoid = sigmoid(*)
"""


def conv_model(w_dim="w"):
    rng = np.random.default_rng(5)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b")
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv0", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu0"),
             helper.make_node("Sigmoid", ["r"], ["y"], name="sigmoid0")]
    return model(nodes, [vi("x", TensorProto.FLOAT, [1, 3, 8, w_dim])],
                 [vi("y", TensorProto.FLOAT, [1, 4, 8, w_dim])], [w, b])


def run(cmd, expect_rc=0, env=None):
    print("+ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    sys.stdout.write(p.stdout + p.stderr)
    if p.returncode != expect_rc:
        raise SystemExit(f"FAIL: exit code {p.returncode}, expected {expect_rc}")
    return p


def expect(text, what, where):
    if what not in text:
        raise SystemExit(f"FAIL: expected {what!r} in the {where}")
    print(f"PASS: {where} has {what!r}")


def case_report_refusal(r):
    """An unbounded width w refuses `shape[3] <= 4096`; --bound w=1..1024 proves it."""
    onnx_path = r.path("conv.onnx")
    onnx.save(conv_model(), onnx_path)
    pat = r.path("toy.pat")
    with open(pat, "w") as f:
        f.write(TOY)
    base = [r.relaxc, "compile", onnx_path, "--pass-option", f"partition.patterns={pat}",
            "--partition-report"]
    p = run(base + ["-o", r.path("a.so")])
    expect(p.stdout, "plugin toy: 1 regions, 1 composites, 1 refused", "report")
    expect(p.stdout, "= nn.conv2d((1, 3, 8, w), (4, 3, 3, 3)) -> (1, 4, 8, w)", "report")
    expect(p.stdout, "pattern toy.conv2d_bias_relu: predicate `shape[3] <= 4096` failed: "
                     "cannot prove w <= 4096 (dim 3 of the output)", "report")
    p = run(base + ["-o", r.path("b.so"), "--bound", "w=1..1024",
                    "--partition-graph", r.path("g.svg")])
    expect(p.stdout, "plugin toy: 1 regions, 2 composites, 0 refused", "report")
    expect(p.stdout, "toy.conv2d_bias_relu (@toy_conv2d_bias_relu)", "report")
    with open(r.path("g.svg")) as f:
        svg = f.read()
    expect(svg, "<svg", "graph")
    expect(svg, "toy: relax_byoc_toy_toy_region", "graph")
    expect(svg, "plugin toy", "graph")
    # The pattern-file plugin emits no code: running its artifact is a clean error.
    p = run([r.relaxc, "run", r.path("b.so"), "--input", "x=" + save(r, np.zeros((1, 3, 8, 5),
                                                                        np.float32))],
            expect_rc=1)
    expect(p.stderr, "error: kernel symbol 'relax_byoc_toy_toy_region' not found", "stderr")
    # --byoc=none: nothing is partitioned.
    p = run(base + ["-o", r.path("c.so"), "--byoc=none"])
    expect(p.stdout, "no codegen plugin is active", "report")
    p = run([r.relaxc, "compile", onnx_path, "-o", r.path("d.so"), "--byoc=nosuch"], expect_rc=1)
    expect(p.stderr, "error: --byoc: unknown codegen plugin 'nosuch'", "stderr")


def save(r, arr, name="x"):
    f = r.path(name + ".npy")
    np.save(f, arr)
    return f


def build_tiny(r, *defines, runtime=False):
    name = "libtiny" + "".join(d.lower().replace("tiny_", "_") for d in defines) + ".so"
    out = r.path(name)
    run(["cc", "-shared", "-fPIC", "-O1", "-Wall", "-Werror", f"-I{SRC}/include",
         *[f"-D{d}" for d in defines], os.path.join(SRC, "test/cli/data/tiny_plugin.c"), "-o",
         out, "-lm"])
    return out


def tiny_env(r):
    env = dict(os.environ)
    env.update(TINY_WORK=r.work, TINY_INCLUDE=f"{SRC}/include", TINY_TRACE="1",
               TINY_RUNTIME_LIB="libtiny_runtime.so")
    return env


def case_c_plugin(r):
    """A C-ABI plugin: Relu from a linked object, Sigmoid from a runtime library."""
    plugin = build_tiny(r)
    build_tiny(r, "TINY_RUNTIME")  # libtiny_runtime.so, found next to the artifact
    m = conv_model(w_dim=6)
    onnx_path = r.path("conv.onnx")
    onnx.save(m, onnx_path)
    so = r.path("tiny.so")
    env = tiny_env(r)
    p = run([r.relaxc, "compile", onnx_path, "-o", so, "--plugin", plugin, "--partition-report"],
            env=env)
    expect(p.stdout, "plugin tiny: 2 regions, 2 composites, 0 refused", "report")
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 6)).astype(np.float32)
    out = r.path("out")
    p = run([r.relaxc, "run", so, "--input", "x=" + save(r, x), "--output-dir", out], env=env)
    expect(p.stderr, "tiny: tiny_region ran tiny.relu with 1 ops", "stderr")
    expect(p.stderr, "tiny: tiny_region_1 ran tiny.sigmoid with 1 ops", "stderr")
    got = np.load(os.path.join(out, "y.npy"))
    want = ort(m, {"x": x})[0]
    if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
        raise SystemExit(f"FAIL: max abs diff {np.abs(got - want).max()}")
    print(f"PASS: matches onnxruntime (max abs diff {np.abs(got - want).max():.2e})")
    # Without its runtime library the artifact does not load, and says which library it needs.
    os.rename(r.path("libtiny_runtime.so"), r.path("libtiny_runtime.so.moved"))
    try:
        p = run([r.relaxc, "run", so, "--input", "x=" + save(r, x)], expect_rc=1, env=env)
        expect(p.stderr, "needs the runtime library 'libtiny_runtime.so' of codegen plugin 'tiny'",
               "stderr")
    finally:
        os.rename(r.path("libtiny_runtime.so.moved"), r.path("libtiny_runtime.so"))
    # --byoc=none disables --plugin ones too.
    p = run([r.relaxc, "compile", onnx_path, "-o", r.path("none.so"), "--plugin", plugin,
             "--byoc=none", "--partition-report"], env=env)
    expect(p.stdout, "no codegen plugin is active", "report")


def case_plugin_errors(r):
    """Broken plugins: errors name the plugin (and the region when its codegen fails)."""
    onnx_path = r.path("conv.onnx")
    onnx.save(conv_model(w_dim=6), onnx_path)
    env = tiny_env(r)
    bad_abi = build_tiny(r, "TINY_BAD_ABI")
    p = run([r.relaxc, "compile", onnx_path, "-o", r.path("a.so"), "--plugin", bad_abi],
            expect_rc=1, env=env)
    expect(p.stderr, "was built for plugin ABI version 99, but this relaxc has version 1", "stderr")
    failing = build_tiny(r, "TINY_FAIL")
    p = run([r.relaxc, "compile", onnx_path, "-o", r.path("b.so"), "--plugin", failing],
            expect_rc=1, env=env)
    expect(p.stderr, "error: codegen plugin 'tiny' failed on region 'tiny_region': the tiny "
                     "accelerator is out of order", "stderr")
    bad_utf8 = build_tiny(r, "TINY_BAD_UTF8")
    p = run([r.relaxc, "compile", onnx_path, "-o", r.path("u.so"), "--plugin", bad_utf8],
            expect_rc=1, env=env)
    expect(p.stderr, "error: codegen plugin 'tiny' failed on region 'tiny_region", "stderr")
    expect(p.stderr, "its payload is not valid UTF-8 ('\\xFF", "stderr")
    p = run([r.relaxc, "compile", onnx_path, "-o", r.path("c.so"), "--plugin",
             r.path("missing.so")], expect_rc=1)
    expect(p.stderr, "error: cannot load codegen plugin", "stderr")
    p = run([r.relaxc, "compile", onnx_path, "-o", r.path("d.so"), "--plugin",
             "/lib/x86_64-linux-gnu/libm.so.6"], expect_rc=1)
    expect(p.stderr, "does not export relax_plugin_get_info", "stderr")


def case_deep_pattern(r):
    """A 40 KB pattern table of 20,000 nested parentheses (it used to overflow the stack of the
    recursive-descent parser) is a clean error naming the file and the depth; 150 levels parse."""
    onnx_path = r.path("conv.onnx")
    onnx.save(conv_model(w_dim=6), onnx_path)
    for depth, rc in ((20000, 1), (150, 0)):
        pat = r.path(f"deep{depth}.pat")
        with open(pat, "w") as f:
            f.write("plugin deep\npattern p = " + "(" * depth + "sigmoid(*)" + ")" * depth + "\n")
        p = run([r.relaxc, "compile", onnx_path, "-o", r.path(f"deep{depth}.so"), "--pass-option",
                 f"partition.patterns={pat}", "--partition-report"], expect_rc=rc)
        if rc:
            expect(p.stderr, f"error: {pat}:2:", "stderr")
            expect(p.stderr, "patterns are nested more than 200 deep", "stderr")
        else:
            expect(p.stdout, "plugin deep: 1 regions", "report")


CASES = {"report_refusal": case_report_refusal, "c_plugin": case_c_plugin,
         "plugin_errors": case_plugin_errors, "deep_pattern": case_deep_pattern}

if __name__ == "__main__":
    sys.exit(cases_main(CASES, __doc__))
