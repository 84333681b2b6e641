"""python.package: the relaxc package as pip installed it (test/python/install_package.sh), run by
the package venv's python.

- relaxc.compile of PP-OCR cls (bounds on its batch) and MiniLM (export cache; bounds on batch and
  sequence), relaxc.load of the Artifact and of the saved file, Module.run on NumPy arrays
  against onnxruntime (rtol 1e-4 / atol 1e-5); Module.inputs / outputs.
- Two compiles on two threads at once give the bytes of `relaxc compile` (the CLI).
- InferenceSession: get_inputs / get_outputs / run(None, feed) / run([name], feed) against
  onnxruntime's session, the second session loads the cached artifact (no compile).
- Errors: CompileError with the CLI's message, InputError for a wrong dtype and a missing input,
  ArtifactError for a truncated artifact.
- --torch (run by the export venv's python with the installed package on PYTHONPATH): torch CPU
  tensors in through DLPack, a DeviceTensor out to torch (torch.from_dlpack); exits 77 (skip)
  when torch is not importable there.

Usage: package_test.py --relaxc CLI --work DIR [--cls MODEL] [--export-dir DIR] [--torch]
"""

import argparse
import os
import subprocess
import sys
import threading
import time

import numpy as np

SKIP = 77
RTOL, ATOL = 1e-4, 1e-5
failures = []


def check(cond, what):
    print(("ok:   " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def close(got, want, what):
    err = float(np.abs(got.astype(np.float64) - want).max()) if got.shape == want.shape else None
    check(got.shape == want.shape and np.allclose(got, want, rtol=RTOL, atol=ATOL),
          f"{what}: shape {list(got.shape)}, max |relaxc - onnxruntime| = {err}")


def expect_error(cls, what, f, contains=""):
    try:
        f()
    except cls as e:
        check(contains in str(e), f"{what}: {cls.__name__}: {e}")
        return str(e)
    except Exception as e:  # noqa: BLE001 (the wrong class is the failure reported)
        check(False, f"{what}: expected {cls.__name__}, got {type(e).__name__}: {e}")
        return None
    check(False, f"{what}: expected {cls.__name__}, nothing raised")
    return None


def cli_compile(relaxc_cli, model, out, bounds):
    cmd = [relaxc_cli, "compile", model, "-o", out]
    for k, (lo, hi) in bounds.items():
        cmd += ["--bound", f"{k}={lo}..{hi}"]
    return subprocess.run(cmd, capture_output=True, text=True)


def test_cls(relaxc, ort, args):
    cls_model = args.cls
    bounds = {"x_d0": (1, 8)}
    # Two compiles on two threads at once (the GIL is released while compiling).
    arts, errors = [None, None], []

    def work(i):
        try:
            arts[i] = relaxc.compile(cls_model, bounds=bounds)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"two compiles of cls on two threads: {time.perf_counter() - t0:.1f} s")
    check(not errors, f"compiles on two threads raise nothing {errors}")
    if errors:
        return
    art = arts[0]
    cli_so = os.path.join(args.work, "cls_cli.so")
    r = cli_compile(args.relaxc, cls_model, cli_so, bounds)
    check(r.returncode == 0, f"relaxc compile (CLI) of cls: {r.stderr.strip()}")
    with open(cli_so, "rb") as f:
        cli_bytes = f.read()
    check(arts[0].bytes == arts[1].bytes == cli_bytes,
          f"the two threads' artifacts and the CLI's are byte-identical ({len(cli_bytes)} bytes)")
    check(art.bounds == {"x_d0": (1, 8)}, f"Artifact.bounds {art.bounds}")
    check(art.stats["kernels"] > 0 and art.stats["params_bytes"] > 0, f"Artifact.stats {art.stats}")

    saved = os.path.join(args.work, "cls.so")
    art.save(saved)
    sess = ort.InferenceSession(cls_model, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    for m, what in ((relaxc.load(art), "load(Artifact)"), (relaxc.load(saved), "load(path)")):
        check([i.name for i in m.inputs] == ["x"] and m.inputs[0].dtype == "float32" and
              m.inputs[0].shape[1] == 3 and isinstance(m.inputs[0].shape[0], str),
              f"{what}: inputs {m.inputs}")
        check(len(m.outputs) == 1 and m.outputs[0].dtype == "float32", f"outputs {m.outputs}")
        for batch in (1, 3):
            x = rng.standard_normal((batch, 3, 48, 192), dtype=np.float32)
            got, = m.run({"x": x})
            close(got, sess.run(None, {"x": x})[0], f"cls {what}, batch {batch}")
    return art, saved


def test_session(relaxc, ort, args):
    cache = os.path.join(args.work, "artifact-cache")
    os.environ["RELAX_ARTIFACT_CACHE"] = cache
    if os.path.isdir(cache):
        for f in os.listdir(cache):
            os.unlink(os.path.join(cache, f))
    t0 = time.perf_counter()
    s1 = relaxc.InferenceSession(args.cls, providers=["CPUExecutionProvider"])
    t1 = time.perf_counter()
    files = sorted(os.listdir(cache))
    check(len(files) == 1, f"InferenceSession compiled once into the cache: {files}")
    stamp = os.stat(os.path.join(cache, files[0])).st_mtime_ns
    s2 = relaxc.InferenceSession(args.cls, providers=["CPUExecutionProvider"])
    t2 = time.perf_counter()
    check(sorted(os.listdir(cache)) == files and
          os.stat(os.path.join(cache, files[0])).st_mtime_ns == stamp,
          f"the second session loads the cached artifact (first {t1 - t0:.2f} s, second "
          f"{t2 - t1:.2f} s)")
    ref = ort.InferenceSession(args.cls, providers=["CPUExecutionProvider"])
    for mine, theirs, what in ((s2.get_inputs(), ref.get_inputs(), "inputs"),
                               (s2.get_outputs(), ref.get_outputs(), "outputs")):
        check([(a.name, a.type, len(a.shape)) for a in mine] ==
              [(a.name, a.type, len(a.shape)) for a in theirs],
              f"get_{what}: {mine} vs onnxruntime's {theirs}")
    x = np.random.default_rng(1).standard_normal((2, 3, 48, 192), dtype=np.float32)
    name = s1.get_inputs()[0].name
    out_name = s1.get_outputs()[0].name
    want = ref.run(None, {name: x})[0]
    close(s1.run(None, {name: x})[0], want, "InferenceSession.run(None, feed)")
    close(s2.run([out_name], {name: x})[0], want, "InferenceSession.run([name], feed)")
    expect_error(relaxc.InputError, "InferenceSession.run of an unknown output",
                 lambda: s2.run(["nope"], {name: x}), "nope")


def test_errors(relaxc, args, art, saved):
    bad = os.path.join(args.work, "bad.onnx")
    with open(bad, "wb") as f:
        f.write(b"this is not an ONNX model")
    r = cli_compile(args.relaxc, bad, os.path.join(args.work, "bad.so"), {})
    cli_msg = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
    check(r.returncode != 0 and cli_msg.startswith("error: "), f"the CLI refuses it: {cli_msg}")
    msg = expect_error(relaxc.CompileError, "compile of a malformed model",
                       lambda: relaxc.compile(bad))
    check(msg is not None and "error: " + msg == cli_msg,
          f"CompileError's message is the CLI's ({msg!r} vs {cli_msg!r})")
    expect_error(relaxc.CompileError, "compile of bytes that are no model",
                 lambda: relaxc.compile(b"\x00garbage"))
    expect_error(relaxc.CompileError, "a bad bound", lambda: relaxc.compile(args.cls,
                                                                          bounds={"x_d0": "x"}))
    m = relaxc.load(art)
    x = np.zeros((1, 3, 48, 192), np.float64)
    expect_error(relaxc.InputError, "a float64 feed for a float32 input",
                 lambda: m.run({"x": x}), "'x'")
    expect_error(relaxc.InputError, "a missing input", lambda: m.run({}), "missing input 'x'")
    expect_error(relaxc.InputError, "an unknown input",
                 lambda: m.run({"x": x.astype(np.float32), "y": x}), "'y'")
    with open(saved, "rb") as f:
        data = f.read()
    cut = os.path.join(args.work, "truncated.so")
    with open(cut, "wb") as f:
        f.write(data[:len(data) // 2])
    expect_error(relaxc.ArtifactError, "a truncated artifact", lambda: relaxc.load(cut),
                 "truncated")
    expect_error(relaxc.ArtifactError, "a truncated artifact given as bytes",
                 lambda: relaxc.load(data[:100]))
    check(relaxc.load(saved, device="cpu").device.startswith("cpu"), "load(device='cpu')")
    expect_error(relaxc.ArtifactError, "a CPU artifact loaded on cuda:0",
                 lambda: relaxc.load(saved, device="cuda:0"))
    expect_error(relaxc.ArtifactError, "a missing artifact",
                 lambda: relaxc.load(os.path.join(args.work, "missing.so")))
    check(issubclass(relaxc.CompileError, relaxc.Error) and
          issubclass(relaxc.InputError, relaxc.Error) and
          issubclass(relaxc.ArtifactError, relaxc.Error), "the errors are relaxc.Error")


def test_minilm(relaxc, ort, args):
    path = os.path.join(args.export_dir or "", "all_minilm_l6_v2.onnx")
    if not (args.export_dir and os.path.isfile(path)):
        if os.environ.get("RELAX_EXPORT_MODELS") == "0":
            print(f"SKIP (MiniLM part): RELAX_EXPORT_MODELS=0 and no {path}")
            return
        check(False, f"MiniLM: {path} not found; run 'bash scripts/export_models.sh' "
                     "(RELAX_EXPORT_MODELS=0 skips this part)")
        return
    import onnx  # the model as an onnx.ModelProto: compile() takes it as it is
    t0 = time.perf_counter()
    art = relaxc.compile(onnx.load(path), bounds={"batch": (1, 4), "sequence": (1, 64)})
    print(f"compiled MiniLM in {time.perf_counter() - t0:.1f} s: {art}")
    m = relaxc.load(art)
    check(m.output_names[0] == "sentence_embedding" and
          [i.shape for i in m.inputs] == [("batch", "sequence")] * 3 and
          all(i.bounds == {"batch": (1, 4), "sequence": (1, 64)} for i in m.inputs),
          f"MiniLM inputs {m.inputs} outputs {m.outputs}")
    job = np.load(os.path.join(args.export_dir, "minilm_job.npz"))
    feeds = {k: job[k] for k in ("input_ids", "attention_mask", "token_type_ids")}
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    close(m.run(feeds)[0], sess.run(["sentence_embedding"], feeds)[0],
          f"MiniLM on {feeds['input_ids'].shape}")
    one = {k: v[:1, :5] for k, v in feeds.items()}
    close(m.run([one[i] for i in m.input_names])[0],
          sess.run(["sentence_embedding"], one)[0], "MiniLM batch 1, sequence 5 (list feeds)")


def test_torch(relaxc, args):
    try:
        import torch
    except ImportError as e:
        print(f"SKIP: torch is not importable by {sys.executable}: {e}")
        return SKIP
    art = relaxc.compile(args.cls, bounds={"x_d0": (1, 8)})
    m = relaxc.load(art)
    torch.manual_seed(0)
    x = torch.randn(2, 3, 48, 192)
    got, = m.run({"x": x})
    want, = m.run({"x": x.numpy().copy()})
    check(isinstance(got, np.ndarray) and np.array_equal(got, want),
          f"torch {torch.__version__} CPU tensor via DLPack gives the NumPy run's output")
    strided = x.transpose(2, 3).contiguous().transpose(2, 3)  # x's values, not C-contiguous
    got_t, = m.run({"x": strided})
    check(np.array_equal(got_t, want), "a non-contiguous torch tensor (copied to C order)")
    expect_error(relaxc.InputError, "a torch float64 tensor", lambda: m.run({"x": x.double()}),
                 "'x'")
    # A DeviceTensor (host memory on a CPU module) to torch through DLPack, and back in.
    dx = m.to_device(x)
    tx = torch.from_dlpack(dx)
    check(torch.equal(tx, x), "torch.from_dlpack of a to_device tensor of a CPU module")
    got_d, = m.run({"x": tx})
    check(np.array_equal(got_d, want), "that view fed back (a torch CPU tensor)")
    return 0


def test_hostile(relaxc, args):
    """What a hostile-input review of the package found (each failed before its fix): outputs
    the VM returns twice alias, DLPack views read freed memory, both packages in one process,
    the session cache serving stale external weights, FIFO / NUL paths, an unusable cache."""
    import warnings
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    work = os.path.join(args.work, "hostile")
    os.makedirs(work, exist_ok=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", 64])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["r"]),
                           helper.make_node("Identity", ["r"], ["r2"])], "alias", [x],
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["b", 64])
                           for n in ("r", "r2")])
    m = relaxc.load(relaxc.compile(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]),
                                   bounds={"b": (1, 8)}))
    r, r2 = m.run({"x": np.ones((2, 64), np.float32)})
    check(not np.shares_memory(r, r2), "two outputs of one value are two arrays")
    t = m.to_device(np.full((8, 64), 7, np.float32))
    view = np.from_dlpack(t)
    t.free()
    check(view[0, 0] == 7, "a DLPack view keeps a freed tensor's memory")
    expect_error(relaxc.Error, "numpy() of a freed tensor", t.numpy, "freed")
    t2 = m.to_device(np.full(1 << 20, 3, np.float32))
    view2 = np.from_dlpack(t2)
    m.close()
    check(view2[-1] == 3, "a DLPack view keeps a closed module's to_device memory")
    del view, view2
    import relaxc_runtime  # noqa: F401 (both packages in one process: their own nanobind domains)
    # External data: the cache must not serve the artifact of the old weights.
    xin = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])
    w = numpy_helper.from_array(np.ones((64, 64), np.float32), "w")
    mg = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "ext", [xin],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])], [w])
    path = os.path.join(work, "ext.onnx")
    for old in ("ext.onnx", "ext.data"):  # onnx.save appends to an existing data file
        if os.path.exists(os.path.join(work, old)):
            os.unlink(os.path.join(work, old))
    onnx.save(helper.make_model(mg, opset_imports=[helper.make_opsetid("", 17)]), path,
              save_as_external_data=True, location="ext.data", size_threshold=0)
    os.environ["RELAX_ARTIFACT_CACHE"] = os.path.join(work, "cache")
    ones = np.ones((1, 64), np.float32)
    first = relaxc.InferenceSession(path).run(None, {"x": ones})[0][0, 0]
    with open(os.path.join(work, "ext.data"), "wb") as f:
        f.write(np.full((64, 64), 2, np.float32).tobytes())
    second = relaxc.InferenceSession(path).run(None, {"x": ones})[0][0, 0]
    check(first == 64 and second == 128, f"changed external weights are used: {first}, {second}")
    fifo = os.path.join(work, "model.fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    expect_error(relaxc.CompileError, "InferenceSession of a FIFO",
                 lambda: relaxc.InferenceSession(fifo), "not a regular file")
    expect_error(relaxc.CompileError, "a NUL in a path", lambda: relaxc.compile(path + "\0x"),
                 "NUL")
    os.environ["RELAX_ARTIFACT_CACHE"] = "/dev/null"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = relaxc.InferenceSession(args.cls)
    check(any("cache not used" in str(c.message) for c in caught) and s.get_inputs(),
          "an unusable cache folder is warned about and skipped")
    del os.environ["RELAX_ARTIFACT_CACHE"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--relaxc", required=True, help="the relaxc CLI")
    ap.add_argument("--work", required=True)
    ap.add_argument("--cls", default=os.environ.get("RELAX_CLS_MODEL"))
    ap.add_argument("--export-dir", default=os.environ.get("RELAX_EXPORT_DIR"))
    ap.add_argument("--torch", action="store_true", help="the DLPack part only (export venv)")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    if not args.cls or not os.path.isfile(args.cls):
        print(f"FAIL: PP-OCR cls model {args.cls!r} not found (run scripts/setup.sh)")
        return 1
    import relaxc
    print(f"relaxc {relaxc.__version__} from {os.path.dirname(relaxc.__file__)}")
    if args.torch:
        rc = test_torch(relaxc, args)
        if rc:
            return rc
    else:
        import onnxruntime as ort
        art, saved = test_cls(relaxc, ort, args) or (None, None)
        test_session(relaxc, ort, args)
        if art is not None:
            test_errors(relaxc, args, art, saved)
        test_minilm(relaxc, ort, args)
        test_hostile(relaxc, args)
    print(f"{len(failures)} failure(s)" if failures else "PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
