#!/usr/bin/env python3
# relaxc tune and compile --tuning-db (relax/schedule/tuning.h): tune writes a database of each
# tunable kernel's measured candidates on this CPU; a compile with it takes the recorded
# settings, gives byte-identical artifacts for the same database and onnxruntime's results; a
# record for another CPU does not apply; bad databases and missing dims are errors. With --byoc,
# tune also records per composite whether a codegen plugin or our kernels ran it faster, which
# compile --byoc=auto follows.
import json
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frontend_cases import cases_main, model, ort, same, vi  # noqa: E402


def convnet():
    """A conv + relu and a dense layer: two register-tiled kernels, a symbolic batch."""
    rng = np.random.default_rng(11)
    w = numpy_helper.from_array(rng.standard_normal((32, 8, 3, 3)).astype(np.float32), "w")
    fc = numpy_helper.from_array(rng.standard_normal((32 * 16 * 16, 40)).astype(np.float32) * 0.01,
                                 "fc")
    x = vi("x", TensorProto.FLOAT, ["n", 8, 16, 16])
    return model([
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Flatten", ["r"], ["f"]),
        helper.make_node("MatMul", ["f", "fc"], ["y"], name="dense"),
    ], [x], [vi("y", TensorProto.FLOAT, ["n", 40])], [w, fc])


def expect_fail(cmd, text):
    print("+ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(p.stdout + p.stderr)
    if p.returncode == 0 or text not in p.stderr or "error:" not in p.stderr:
        raise SystemExit(f"FAIL: expected an error with '{text}', got exit {p.returncode}")


def setup(r, m, model_name, db_name):
    """Saves model `m` in the work folder; returns its path and a database path not there."""
    import onnx

    onnx_path, db = r.path(model_name), r.path(db_name)
    onnx.save(m, onnx_path)
    if os.path.exists(db):
        os.remove(db)
    return onnx_path, db


def matches_ort(r, m, so, shapes, seed):
    """The artifact `so` of model `m` matches onnxruntime on random `x` of each shape."""
    rng = np.random.default_rng(seed)
    for shape in shapes:
        feeds = {"x": rng.standard_normal(shape).astype(np.float32)}
        got, want = r.run(so, feeds), ort(m, feeds)
        if not np.allclose(got[0], want[0], rtol=1e-4, atol=1e-4):
            raise SystemExit(f"FAIL: {shape}: max diff {np.abs(got[0] - want[0]).max()}")
        print(f"PASS: {shape} matches onnxruntime")


def compile_twice(r, name, args, check):
    """Compiles `relaxc compile ARGS` twice, runs `check` on each result, requires
    byte-identical artifacts; returns the first artifact's path."""
    arts = []
    for k in range(2):
        so = r.path(f"{name}{k}.so")
        check(r.check_call([r.relaxc, "compile"] + args + ["-o", so]))
        arts.append(open(so, "rb").read())
    if arts[0] != arts[1]:
        raise SystemExit("FAIL: the same database gave different artifacts")
    return r.path(f"{name}0.so")


def other_cpu(r, data, name):
    """The database `data` with every record moved to another CPU, written to `name`."""
    for rec in data["records"]:
        rec["machine"] = "some-other-cpu"
    path = r.path(name)
    json.dump(data, open(path, "w"))
    return path


def case_tune(r):
    """Tune two candidates, compile with the database, compare."""
    m = convnet()
    onnx_path, db = setup(r, m, "convnet.onnx", "db.json")
    # The missing size of a symbolic dim is an error before any candidate is compiled.
    expect_fail([r.relaxc, "tune", onnx_path, "-o", db], "give its size with --dim n=VALUE")
    if os.path.exists(db):
        raise SystemExit("FAIL: a failed tune wrote the database")
    expect_fail([r.relaxc, "tune", onnx_path, "-o", onnx_path, "--dim", "n=2"],
                "is the input model")
    p = r.check_call([r.relaxc, "tune", onnx_path, "-o", db, "--dim", "n=2", "--rounds", "3",
                      "--only", "tile_rows=4,tile_cols=32",
                      "--only", "tile_rows=4,tile_cols=32,tile_order=1"])
    if "tuned 2 kernels on " not in p.stdout:
        raise SystemExit("FAIL: tune did not report its 2 tunable kernels")
    data = json.load(open(db))
    recs = data["records"]
    if data["format"] != "relaxc-tuning-db" or len(recs) != 2:
        raise SystemExit(f"FAIL: expected 2 records, got {len(recs)}")
    for rec in recs:
        # (the conv's settings also name its tile order)
        if rec["rule"] != "cpu.register-tile" or len(rec["measured_ms"]) != 2 or \
                not any(k.startswith("tile_cols=32,") and k.endswith("tile_rows=4")
                        for k in rec["measured_ms"]):
            raise SystemExit(f"FAIL: record does not hold both measured candidates: {rec}")
    # Force the 4 x 32 tile through the database (whatever was measured) and compile twice.
    for rec in recs:
        rec["params"].update({"tile_cols": 32, "tile_rows": 4})
    forced = r.path("forced.json")
    json.dump(data, open(forced, "w"))
    def used(p):
        if "tuning: 2 PrimFuncs take a setting from the tuning database" not in p.stdout or \
                p.stdout.count('tuning = "tile_cols=32,') != 2:
            raise SystemExit("FAIL: the database's setting was not used")

    so = compile_twice(r, "tuned", [onnx_path, "--tuning-db", forced, "--stats",
                                     "--print-ir-after=schedule"], used)
    matches_ort(r, m, so, [(1, 8, 16, 16), (3, 8, 16, 16)], 12)
    # A record for another CPU leaves the defaults.
    other = other_cpu(r, data, "other.json")
    p = r.check_call([r.relaxc, "compile", onnx_path, "-o", r.path("other.so"), "--tuning-db",
                      other, "--stats"])
    if "tuning: 0 PrimFuncs" not in p.stdout:
        raise SystemExit("FAIL: a record for another CPU was applied")
    # Bad databases.
    bad = r.path("bad.json")
    open(bad, "w").write("{not json")
    expect_fail([r.relaxc, "compile", onnx_path, "-o", r.path("bad.so"), "--tuning-db", bad],
                "tuning database '" + bad + "' is not JSON")
    expect_fail([r.relaxc, "compile", onnx_path, "-o", r.path("bad.so"), "--tuning-db",
                 r.path("missing.json")], "missing.json")
    expect_fail([r.relaxc, "tune", onnx_path, "-o", bad, "--dim", "n=1"], "is not JSON")
    print("PASS: tune, compile --tuning-db, byte-identical artifacts, other CPUs, errors")


def twoconvs():
    """Two conv + relu layers of different shapes (the second strided: derived dims)."""
    rng = np.random.default_rng(13)
    w1 = numpy_helper.from_array(rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.2, "w1")
    w2 = numpy_helper.from_array(rng.standard_normal((16, 16, 3, 3)).astype(np.float32) * 0.2, "w2")
    x = vi("x", TensorProto.FLOAT, ["n", 8, "h", "w"])
    return model([
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2],
                         name="conv2"),
        helper.make_node("Relu", ["c2"], ["y"]),
    ], [x], [vi("y", TensorProto.FLOAT, ["n", 16, None, None])], [w1, w2])


def case_byoc_auto(r):
    """tune --byoc dnnl records a plugin-or-kernel choice per composite; compile --byoc=auto
    hands the plugin exactly the composites recorded for it."""
    m = twoconvs()
    onnx_path, db = setup(r, m, "twoconvs.onnx", "byoc_db.json")
    expect_fail([r.relaxc, "compile", onnx_path, "-o", r.path("auto.so"), "--byoc=auto"],
                "--byoc=auto needs --tuning-db")
    expect_fail([r.relaxc, "tune", onnx_path, "-o", db, "--byoc", "dnnl", "--dim", "n=1",
                 "--dim", "h=20"], "give its size with --dim w=VALUE")
    p = r.check_call([r.relaxc, "tune", onnx_path, "-o", db, "--byoc", "dnnl", "--rounds", "3",
                      "--dim", "n=1", "--dim", "h=20", "--dim", "w=24"])
    if p.stdout.count("tune: byoc dnnl_conv2d") != 2:
        raise SystemExit("FAIL: tune did not measure the two composites")
    data = json.load(open(db))
    byoc = [rec for rec in data["records"] if rec["rule"] == "byoc:dnnl"]
    if len(byoc) != 2 or any(set(rec["measured_ms"]) < {"kernel", "dnnl"} for rec in byoc):
        raise SystemExit(f"FAIL: expected 2 byoc records with both times, got {byoc}")
    # Force: the first composite to the plugin, the second to our kernels.
    byoc.sort(key=lambda rec: rec["kernel"])
    byoc[0]["params"]["plugin"], byoc[1]["params"]["plugin"] = 1, 0
    forced = r.path("byoc_forced.json")
    json.dump(data, open(forced, "w"))
    def chosen(p):
        if p.stdout.count("predicate `byoc=auto` failed") != 1 or \
                byoc[1]["kernel_key"] not in p.stdout:
            raise SystemExit("FAIL: the composite recorded for our kernels was not refused once")
        if "dnnl" not in p.stdout.split("refused")[0]:
            raise SystemExit("FAIL: the plugin took no region")

    so = compile_twice(r, "auto", [onnx_path, "--byoc=auto", "--tuning-db", forced,
                                   "--partition-report"], chosen)
    matches_ort(r, m, so, [(1, 8, 20, 24), (2, 8, 9, 13)], 14)
    # A record offloading to a plugin this relaxc lacks is an error naming the database.
    for rec in data["records"]:
        if rec["rule"] == "byoc:dnnl":
            rec["rule"] = "byoc:nosuch"
    nosuch = r.path("byoc_nosuch.json")
    json.dump(data, open(nosuch, "w"))
    expect_fail([r.relaxc, "compile", onnx_path, "-o", r.path("nosuch.so"), "--byoc=auto",
                 "--tuning-db", nosuch], "offloads composites to the codegen plugin 'nosuch'")
    # Records of another CPU offload nothing.
    other = other_cpu(r, data, "byoc_other.json")
    p = r.check_call([r.relaxc, "compile", onnx_path, "-o", r.path("other.so"), "--byoc=auto",
                      "--tuning-db", other, "--partition-report"])
    if "dnnl" in p.stdout:
        raise SystemExit("FAIL: a record for another CPU offloaded a composite")
    print("PASS: tune --byoc, compile --byoc=auto, byte-identical artifacts, other CPUs")


CASES = {f.__name__[5:]: f for f in (case_tune, case_byoc_auto)}


def main():
    return cases_main(CASES, __doc__)


if __name__ == "__main__":
    sys.exit(main())
