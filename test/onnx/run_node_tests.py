#!/usr/bin/env python3
# ONNX backend node-test conformance tier: runs every node test of the suite and checks against expected.txt.
"""Run the ONNX backend node tests (Debian libonnx-testdata) through relaxc.

Every node test is run (not only those whose ops have a converter). Tests that are out of scope
(random ops, training-mode Dropout with ratio > 0, the ai.onnx.preview.training domain, string
tensors, ImageDecoder) are recognized from the model and its data and not compiled. For the
others the .pb inputs are written as .npy, the model is compiled with `relaxc compile`, run with
`relaxc run --output-dir`, and every output is compared with the expected .pb output the way
ONNX's backend test runner does: rtol 1e-3, atol 1e-7 (|got - want| <= atol + rtol * |want|),
NaN equals NaN, exact for integers and bools, shapes and dtypes must match. The count of tests
that also pass at rtol 1e-4 / atol 1e-5 is reported as "strict". Each test gets one status:

  pass           all outputs of all data sets match (shape, dtype, values)
  unsupported    the model uses an op type with no converter (relaxc exits 2 with the
                 unsupported-op message); the reason lists the op types
  out-of-scope   not a conformance target (see above); not a failure
  compile-error  `relaxc compile` exited cleanly (exit 1/2 with an `error:` line)
  run-error      `relaxc run` exited cleanly with an error (or the harness could not feed the inputs)
  mismatch       an output differs in shape, dtype or value
  crash          a signal, an exit code >= 128, or a non-zero exit without a clean `error:` line
  timeout        compile + run took longer than the per-test timeout

The expectations file lists every test that does not pass, with its status and reason; a test
that is not listed must pass. The run fails if any status differs from the file (a listed test
that now passes must be removed, so the list only shrinks), if the file lists tests that do not
exist, and always if any test crashed. `--update-expected` rewrites the file from this run,
keeping the hand-written reason of every entry whose status did not change. The last line is
`debian: N passed, M failed, K skipped` (skipped: out-of-scope; failed: every other non-pass,
unsupported included).
"""
import argparse
import concurrent.futures
import glob
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import onnx
from onnx import numpy_helper

STATUSES = ("pass", "unsupported", "out-of-scope", "compile-error", "run-error", "mismatch", "crash",
            "timeout")
# ONNX's backend test runner (onnx/backend/test/runner): np.testing.assert_allclose(rtol, atol).
RTOL, ATOL = 1e-3, 1e-7
# The stricter tolerance also reported (relaxc's own bar for the trained models).
STRICT_RTOL, STRICT_ATOL = 1e-4, 1e-5
# Suites: Debian's libonnx-testdata (opsets <= 17) and the node tests shipped in the onnx wheel
# pinned in scripts/requirements.txt (opsets <= 21), each with its own expectations file.
SUITE_EXPECTED = {"debian": "expected.txt", "pypi": "expected_pypi.txt",
                  # Debian libonnx-testdata's other model collections (static only): small
                  # models, PyTorch modules and PyTorch operators as exported by ONNX's tools.
                  "simple": "expected_simple.txt",
                  "pytorch-converted": "expected_pytorch_converted.txt",
                  "pytorch-operator": "expected_pytorch_operator.txt"}
# The dynamic variant (--dynamic) runs the tests the static variant passes with every input dim > 1
# made symbolic (make_dynamic); its file lists the static-pass / dynamic-fail tests.
SUITE_EXPECTED_DYNAMIC = {"debian": "expected_dynamic.txt", "pypi": "expected_pypi_dynamic.txt"}
# A GPU target (--target vulkan) runs the tests the static cpu variant passes, compiled for that
# target; expected_<suite>_<target>.txt lists the cpu-pass / target-fail tests.
TARGET = "cpu"
# --target webgpu: the browser that runs the artifacts (test/webgpu/browser_runner.py).
BROWSER = None


class BrowserError(Exception):  # replaced by test/webgpu/browser.py's with --target webgpu
    pass
INT_ELEMS = {onnx.TensorProto.INT8, onnx.TensorProto.INT16, onnx.TensorProto.INT32, onnx.TensorProto.INT64,
             onnx.TensorProto.UINT8, onnx.TensorProto.UINT16, onnx.TensorProto.UINT32,
             onnx.TensorProto.UINT64}


def make_dynamic(model):
    """The dynamic variant of a node-test model: every graph-input dim > 1 becomes a dim_param
    (equal sizes share one name, `dyn_<size>`), dims of 1 stay 1, and 1-D integer inputs (which
    feed shape-like operands: Reshape shapes, Slice starts, TopK k...) keep their length. Declared
    output dims > 1 become unknown and value_info is dropped, so nothing static is left for the
    compiler to rely on but what the graph computes. The test data is unchanged."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inits = {t.name for t in m.graph.initializer}
    for vi in m.graph.input:
        if vi.name in inits or not vi.type.HasField("tensor_type"):
            continue
        tt = vi.type.tensor_type
        if not tt.HasField("shape") or (len(tt.shape.dim) == 1 and tt.elem_type in INT_ELEMS):
            continue
        for d in tt.shape.dim:
            if d.HasField("dim_value") and d.dim_value > 1:
                d.dim_param = f"dyn_{d.dim_value}"
    for vi in m.graph.output:
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            for d in vi.type.tensor_type.shape.dim:
                if d.HasField("dim_value") and d.dim_value > 1:
                    d.Clear()
    del m.graph.value_info[:]
    return m


def sampled(name, fraction, seed):
    """Deterministic sample: the test is in when its seeded hash falls below `fraction`."""
    h = int(hashlib.sha256(f"{seed}:{name}".encode()).hexdigest()[:8], 16)
    return h < fraction * 0x100000000


def suite_data(suite):
    if suite == "pypi":
        return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
    if suite in ("simple", "pytorch-converted", "pytorch-operator"):
        return os.path.join(os.path.dirname(DEFAULT_DATA), suite)
    return DEFAULT_DATA
# Op types whose outputs are random: not comparable with fixed expected outputs.
RANDOM_OPS = {"Bernoulli", "Multinomial", "RandomNormal", "RandomNormalLike", "RandomUniform",
              "RandomUniformLike"}
OUT_OF_SCOPE_DOMAINS = {"ai.onnx.preview.training"}
STRING_ELEM = onnx.TensorProto.STRING
# Artifacts of compiled models by the model's sha256, for this relaxc binary (set by main): the
# suites share many identical models, and a rerun with an unchanged relaxc compiles nothing.
CACHE_DIR = None
DEFAULT_DATA = "/usr/share/libonnx-testdata/data/node"



def numbered_pbs(ds, prefix):
    """The test data set's <prefix>_<k>.pb files in numeric order of k."""
    return sorted(glob.glob(os.path.join(ds, f"{prefix}_*.pb")),
                  key=lambda s: int(re.search(prefix + r"_(\d+)", s).group(1)))

def supported_ops(src_root):
    """Op types with a converter: every `(*t)["Op"] = ...` registration (or `{"Op", "relax.op"}`
    table entry) in the ONNX frontend; used for docs/supported_ops.md only."""
    ops = set()
    for path in glob.glob(os.path.join(src_root, "lib", "frontend", "onnx", "convert_*.cc")):
        with open(path) as f:
            text = f.read()
            ops.update(re.findall(r'\(\*t\)\["([A-Za-z0-9_]+)"\]\s*=', text))
            # Table-driven registrations: {"OnnxOp", "relax.op"}.
            ops.update(re.findall(r'\{"([A-Z][A-Za-z0-9_]*)",\s*"relax\.', text))
    return ops


def model_ops(model):
    return sorted({n.op_type for n in model.graph.node})


def default_opset(model):
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return None


def graph_has_strings(model):
    g = model.graph
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type == STRING_ELEM:
            return True
    for t in g.initializer:
        if t.data_type == STRING_ELEM:
            return True
    for n in g.node:
        for a in n.attribute:
            if a.name in ("to",) and a.type == onnx.AttributeProto.INT and a.i == STRING_ELEM:
                return True
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == STRING_ELEM:
                return True
            if a.type == onnx.AttributeProto.STRINGS and n.op_type in ("StringNormalizer",):
                return True
    return False


def dropout_is_random(model, test_dir):
    """Training-mode Dropout with ratio > 0: its mask is random. training_mode and ratio are
    inputs 2 and 1 (opset >= 12), from an initializer, a Constant node or the test data."""
    g = model.graph
    consts = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    for n in g.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    consts[n.output[0]] = numpy_helper.to_array(a.t)
    data = {}
    unreadable = {}  # input name -> why its proto could not be read
    ds = sorted(glob.glob(os.path.join(test_dir, "test_data_set_*")))
    in_names = graph_input_names(model)
    if ds:
        for i, pb in enumerate(numbered_pbs(ds[0], "input")):
            name = in_names[i] if i < len(in_names) else ""
            try:
                t = read_tensor_pb(pb)
                data[t.name or name] = numpy_helper.to_array(t)
            except Exception as e:  # noqa: BLE001 (an error only if a Dropout reads it)
                unreadable[name] = f"{os.path.basename(pb)}: {e}"

    def value(name):
        if name in consts:
            return consts[name]
        if name in unreadable:
            # Deciding from a missing value would call a random Dropout deterministic.
            raise RuntimeError(f"Dropout input '{name}' of the test data cannot be read "
                               f"({unreadable[name]})")
        return data.get(name)

    for n in g.node:
        if n.op_type != "Dropout":
            continue
        if len(n.input) < 3 or not n.input[2]:
            continue  # no training_mode: inference
        mode = value(n.input[2])
        if mode is None or not bool(np.asarray(mode).reshape(-1)[0]):
            continue
        ratio = 0.5
        if len(n.input) > 1 and n.input[1]:
            r = value(n.input[1])
            ratio = float(np.asarray(r).reshape(-1)[0]) if r is not None else 0.5
        if ratio > 0:
            return True
    return False


def out_of_scope_reason(model, test_dir):
    """Why the test is out of scope, or None."""
    ops = {n.op_type for n in model.graph.node}
    rnd = sorted(ops & RANDOM_OPS)
    if rnd:
        return f"random op ({', '.join(rnd)})"
    doms = sorted({n.domain for n in model.graph.node} & OUT_OF_SCOPE_DOMAINS)
    if doms:
        return f"training domain ({', '.join(doms)})"
    if "ImageDecoder" in ops:
        return "ImageDecoder (image codecs)"
    if graph_has_strings(model):
        return "string tensors"
    if "Dropout" in ops and dropout_is_random(model, test_dir):
        return "training-mode Dropout with ratio > 0 (random mask)"
    return None


def sanitize(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def first_error_line(text):
    for line in text.splitlines():
        if "error:" in line:
            return line.strip()
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return lines[-1] if lines else "(no output)"


def short(text, n=160):
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def describe_rc(rc):
    if rc < 0:
        try:
            return f"killed by signal {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit code {rc}"


def classify_failure(p, clean_class):
    """Maps a failed relaxc process to (status, reason); a crash's reason ends with its command."""
    out = (p.stderr or "") + (p.stdout or "")
    rc = p.returncode
    repro = " ".join(p.args)
    if clean_class == "compile-error" and rc == 2 and "unsupported op type" in out:
        ops = re.findall(r"^\s+(\S+) \(first at node", out, re.M)
        return "unsupported", "no converter: " + " ".join(sorted(ops))
    if rc < 0 or rc >= 128:
        return "crash", f"{describe_rc(rc)}: {short(first_error_line(out))}; repro: {repro}"
    if rc in (1, 2) and re.search(r"(^|\s)error:", out):
        msg = first_error_line(out)
        msg = re.sub(r"^.*?error:\s*", "", msg)
        msg = re.sub(r"'[^']*/model\.onnx'", "model.onnx", msg)  # no machine-specific paths
        return clean_class, short(msg)
    return "crash", (f"unclean failure ({describe_rc(rc)}, no `error:` line): {short(first_error_line(out))};"
                     f" repro: {repro}")


def read_tensor_pb(path, optional=False):
    """A TensorProto, or for an optional-typed value (`optional`) the tensor an OptionalProto
    holds (an empty optional or a non-tensor element raises: no .npy form)."""
    with open(path, "rb") as f:
        data = f.read()
    if optional:
        o = onnx.OptionalProto()
        o.ParseFromString(data)
        if o.elem_type != onnx.OptionalProto.TENSOR:
            raise ValueError("an empty optional or an optional of a non-tensor")
        t = o.tensor_value
        if not t.name:
            t.name = o.name
        return t
    t = onnx.TensorProto()
    t.ParseFromString(data)
    return t


def is_sequence_type(tp):
    """Whether a graph value's TypeProto is a sequence, or an optional of a sequence."""
    if tp.HasField("optional_type"):
        tp = tp.optional_type.elem_type
    return tp.HasField("sequence_type")


def read_sequence_pb(path, optional=False):
    """(name, [TensorProto]) of a SequenceProto of tensors (inside an OptionalProto when
    `optional`); an empty optional or non-tensor elements raise. relaxc run takes a sequence
    as a directory of 0.npy, 1.npy, ... and writes a sequence output the same way."""
    with open(path, "rb") as f:
        data = f.read()
    if optional:
        o = onnx.OptionalProto()
        o.ParseFromString(data)
        if o.elem_type != onnx.OptionalProto.SEQUENCE:
            raise ValueError("an empty optional or an optional of a non-sequence")
        s, name = o.sequence_value, o.name
    else:
        s = onnx.SequenceProto()
        s.ParseFromString(data)
        name = s.name
    if s.elem_type != onnx.SequenceProto.TENSOR and len(s.tensor_values) == 0 and s.elem_type != 0:
        raise ValueError("a sequence of non-tensors")
    return name or s.name, list(s.tensor_values)


def graph_input_names(model):
    inits = {i.name for i in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in inits]


# Element types NumPy lacks (ONNX 16-22). relaxc run reads and writes them as their bit
# patterns (docs/design.md "Low-precision element types"): bfloat16 as uint16, float8 as uint8,
# int4 as int8 and uint4 as uint8, one value per byte.
BITS_DTYPE = {onnx.TensorProto.BFLOAT16: np.uint16, 17: np.uint8, 18: np.uint8, 19: np.uint8,
              20: np.uint8, 21: np.uint8, 22: np.int8}
# float8 bit patterns -> float32 with onnx's own conversion (the independent reference).
F8_TO_F32 = {17: dict(fn=True, uz=False), 18: dict(fn=True, uz=True), 19: dict(fn=False, uz=False),
             20: dict(fn=True, uz=True)}


def graph_elem_types(values):
    return {v.name: v.type.tensor_type.elem_type for v in values if v.type.HasField("tensor_type")}


def proto_bits(t, elem):
    """The bit patterns (BITS_DTYPE[elem]) of a test-data tensor of low-precision type `elem`."""
    if t.data_type in (onnx.TensorProto.UINT16, onnx.TensorProto.UINT8):  # stored as raw bits
        return numpy_helper.to_array(t).astype(BITS_DTYPE[elem])
    if elem in (21, 22):  # int4: onnx unpacks them (as float32 values)
        return numpy_helper.to_array(t).astype(BITS_DTYPE[elem])
    dims = tuple(t.dims)
    width = np.dtype(BITS_DTYPE[elem])
    if t.raw_data:
        return np.frombuffer(t.raw_data, dtype=width).reshape(dims).copy()
    return np.array(t.int32_data, dtype=np.int64).astype(width).reshape(dims)


def bits_to_comparable(got, elem, want):
    """relaxc's bit-pattern output of low-precision type `elem` in the form `want` has."""
    if elem == onnx.TensorProto.BFLOAT16:
        if want.dtype == np.uint16:
            return got.astype(np.uint16)
        return (got.astype(np.uint32) << 16).view(np.float32)
    if elem in F8_TO_F32:
        f = numpy_helper.float8e5m2_to_float32 if elem in (19, 20) else numpy_helper.float8e4m3_to_float32
        return f(got.astype(np.uint8), **F8_TO_F32[elem]).astype(np.float32).reshape(got.shape)
    return got.astype(want.dtype)


def compare_output(name, got, want, rtol=RTOL, atol=ATOL):
    """Returns None when `got` matches `want`, else a one-line reason."""
    if got.dtype != want.dtype:
        return f"output {name}: dtype {got.dtype}, expected {want.dtype}"
    if got.shape != want.shape:
        return f"output {name}: shape {list(got.shape)}, expected {list(want.shape)}"
    if want.dtype.kind in "fc":
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            ok = np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
            # +-inf must match exactly (isclose already requires that).
        if not ok.all():
            bad = int((~ok).sum())
            with np.errstate(invalid="ignore"):
                diff = np.abs(g - w)
            diff = np.where(np.isnan(diff), np.inf, diff)
            return (f"output {name}: {bad}/{want.size} values differ (max abs diff {float(diff.max()):.3g},"
                    f" rtol {rtol:g} atol {atol:g})")
        return None
    if not np.array_equal(got, want):
        bad = int((got != want).sum())
        return f"output {name}: {bad}/{want.size} values differ (exact compare)"
    return None


def run_test(test_dir, relaxc, work, timeout, dynamic=False):
    """Runs one node test; returns (status, reason, strict) where strict says whether a passing
    test also passes at STRICT_RTOL / STRICT_ATOL. `dynamic` runs the make_dynamic variant."""
    model = onnx.load(os.path.join(test_dir, "model.onnx"), load_external_data=False)
    try:
        why = out_of_scope_reason(model, test_dir)
    except RuntimeError as e:  # the scope cannot be decided: a failure, never a silent skip
        return "run-error", f"harness: {e}", False
    if why:
        return "out-of-scope", why, False
    status, reason, strict = run_compiled(test_dir, model, relaxc, work, timeout, dynamic)
    return status, reason, strict


def run_compiled(test_dir, model, relaxc, work, timeout, dynamic=False):
    name = os.path.basename(test_dir)
    strict = True
    tdir = os.path.join(work, name)
    shutil.rmtree(tdir, ignore_errors=True)
    os.makedirs(tdir)
    start = time.monotonic()

    def left():
        return max(1.0, timeout - (time.monotonic() - start))

    def call(cmd):
        return subprocess.run(cmd, capture_output=True, text=True, timeout=left(), errors="replace")

    artifact = os.path.join(tdir, "model.so")
    model_path = os.path.join(test_dir, "model.onnx")
    if dynamic:
        model_path = os.path.join(tdir, "model_dynamic.onnx")
        onnx.save(make_dynamic(model), model_path)
    cached = None
    if CACHE_DIR:
        with open(model_path, "rb") as f:
            h = hashlib.sha256(f.read())
        h.update(TARGET.encode())
        cached = os.path.join(CACHE_DIR, h.hexdigest() + ".so")
    try:
        if cached and os.path.isfile(cached):
            artifact = cached
        else:
            p = call([relaxc, "compile", model_path, "-o", artifact, "--target", TARGET])
            if p.returncode != 0:
                status, reason = classify_failure(p, "compile-error")
                if status == "unsupported":
                    shutil.rmtree(tdir, ignore_errors=True)
                return status, reason, False
            if cached:
                tmp = f"{cached}.{os.getpid()}.{threading.get_ident()}.tmp"
                shutil.copyfile(artifact, tmp)
                os.replace(tmp, cached)
        in_names = graph_input_names(model)
        out_names = [o.name for o in model.graph.output]
        in_elem = graph_elem_types(model.graph.input)
        out_elem = graph_elem_types(model.graph.output)
        sets = sorted(glob.glob(os.path.join(test_dir, "test_data_set_*")))
        if not sets:
            return "run-error", "harness: test has no test_data_set_*", False
        for ds in sets:
            dsname = os.path.basename(ds)
            ddir = os.path.join(tdir, dsname)
            outdir = os.path.join(ddir, "out")
            os.makedirs(outdir)
            cmd = [relaxc, "run", artifact, "--output-dir", outdir]
            feeds = {}  # --target webgpu: the inputs for the browser runner
            in_files = numbered_pbs(ds, "input")
            inits = {x.name for x in model.graph.initializer}
            real_inputs = [i for i in model.graph.input if i.name not in inits]
            optional_inputs = {k for k, x in enumerate(real_inputs) if x.type.HasField("optional_type")}
            seq_inputs = {k for k, x in enumerate(real_inputs) if is_sequence_type(x.type)}
            for i, pb in enumerate(in_files):
                if i in seq_inputs:
                    try:
                        sname, elems = read_sequence_pb(pb, optional=i in optional_inputs)
                        arrs = [numpy_helper.to_array(e) for e in elems]
                    except Exception as e:
                        return ("run-error", f"harness: cannot read {dsname}/{os.path.basename(pb)} as a"
                                f" sequence of tensors ({short(str(e), 80)})", False)
                    iname = sname if sname in in_names else (
                        in_names[i] if i < len(in_names) else (sname or f"input_{i}"))
                    sdir = os.path.join(ddir, f"input_{i}")
                    os.makedirs(sdir)
                    for k, arr in enumerate(arrs):
                        np.save(os.path.join(sdir, f"{k}.npy"), arr, allow_pickle=False)
                    cmd += ["--input", f"{iname}={sdir}"]
                    feeds = None  # the browser runtime takes tensors only
                    continue
                try:
                    t = read_tensor_pb(pb, optional=i in optional_inputs)
                    arr = numpy_helper.to_array(t)
                except Exception as e:  # sequences/optionals/strings the harness cannot express as .npy
                    return ("run-error", f"harness: cannot read {dsname}/{os.path.basename(pb)} as a tensor"
                            f" ({short(str(e), 80)})", False)
                if arr.dtype == object:
                    return "run-error", f"harness: input {i} is a string tensor (no .npy form)", False
                # Some suites' data name tensors unlike the graph ("x" for input "input").
                iname = t.name if t.name in in_names else (
                    in_names[i] if i < len(in_names) else (t.name or f"input_{i}"))
                if in_elem.get(iname) in BITS_DTYPE:
                    arr = proto_bits(t, in_elem[iname])
                npy = os.path.join(ddir, f"input_{i}.npy")
                np.save(npy, arr, allow_pickle=False)
                cmd += ["--input", f"{iname}={npy}"]
                if feeds is not None:
                    feeds[iname] = arr
            if BROWSER is not None:  # webgpu: the artifact runs in the browser
                if feeds is None:
                    return "run-error", "harness: sequence inputs (the browser runtime takes tensors)", False
                try:
                    outs = BROWSER.run(artifact, feeds, timeout=left())
                except BrowserError as e:
                    return "run-error", short(first_error_line("error: " + str(e))), False
                for oname, arr in outs.items():
                    np.save(os.path.join(outdir, sanitize(oname) + ".npy"), arr, allow_pickle=False)
            else:
                p = call(cmd)
                if p.returncode != 0:
                    return classify_failure(p, "run-error") + (False,)
            out_files = numbered_pbs(ds, "output")
            seq_outputs = {k for k, x in enumerate(model.graph.output) if is_sequence_type(x.type)}
            for i, pb in enumerate(out_files):
                if i in seq_outputs:
                    opt = model.graph.output[i].type.HasField("optional_type")
                    why = compare_sequence_output(pb, out_names, i, outdir, opt)
                    if why:
                        return "mismatch", (f"{dsname}: {why}" if len(sets) > 1 else why), False
                    continue
                try:
                    t = read_tensor_pb(pb)
                    want = numpy_helper.to_array(t)
                except Exception as e:
                    return ("mismatch", f"harness: cannot read expected {os.path.basename(pb)}"
                            f" ({short(str(e), 80)})", False)
                oname = t.name if t.name in out_names else (
                    out_names[i] if i < len(out_names) else (t.name or f"output_{i}"))
                got_path = os.path.join(outdir, sanitize(oname) + ".npy")
                if not os.path.isfile(got_path):
                    return "mismatch", f"output {oname}: relaxc wrote no {os.path.basename(got_path)}", False
                try:
                    got = np.load(got_path, allow_pickle=False)
                except Exception as e:
                    return "mismatch", f"output {oname}: unreadable .npy ({short(str(e), 80)})", False
                if out_elem.get(oname) in BITS_DTYPE:
                    got = bits_to_comparable(got, out_elem[oname], want)
                why = compare_output(oname, got, want)
                if why:
                    return "mismatch", (f"{dsname}: {why}" if len(sets) > 1 else why), False
                if compare_output(oname, got, want, STRICT_RTOL, STRICT_ATOL):
                    strict = False
        shutil.rmtree(tdir, ignore_errors=True)  # keep the work tree small; failures stay
        return "pass", "", strict
    except subprocess.TimeoutExpired:
        return "timeout", f"compile + run exceeded {timeout:g} s", False


def compare_sequence_output(pb, out_names, i, outdir, optional=False):
    """Compares the expected SequenceProto `pb` with relaxc's directory <outdir>/<name>/ of
    0.npy, 1.npy, ...; returns why they differ, or None."""
    try:
        sname, elems = read_sequence_pb(pb, optional=optional)
        want = [numpy_helper.to_array(e) for e in elems]
    except Exception as e:
        return f"harness: cannot read expected {os.path.basename(pb)} ({short(str(e), 80)})"
    oname = sname if sname in out_names else (out_names[i] if i < len(out_names) else f"output_{i}")
    got_dir = os.path.join(outdir, sanitize(oname))
    if not os.path.isdir(got_dir):
        return f"output {oname}: relaxc wrote no sequence directory {os.path.basename(got_dir)}"
    n = len([f for f in os.listdir(got_dir) if f.endswith(".npy")])
    if n != len(want):
        return f"output {oname}: sequence of {n} tensors, expected {len(want)}"
    for k, w in enumerate(want):
        try:
            got = np.load(os.path.join(got_dir, f"{k}.npy"), allow_pickle=False)
        except Exception as e:
            return f"output {oname}[{k}]: unreadable .npy ({short(str(e), 80)})"
        why = compare_output(f"{oname}[{k}]", got, w)
        if why:
            return why
    return None


def load_expected(path):
    exp = {}
    if not os.path.isfile(path):
        return exp
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = line.split(None, 2)
            if len(parts) < 2 or parts[1] not in STATUSES:
                raise SystemExit(f"error: {path}:{lineno}: expected 'TEST STATUS [REASON]', got {line!r}")
            exp[parts[0]] = (parts[1], parts[2].strip() if len(parts) > 2 else "")
    return exp


EXPECTED_HEADER = """\
# Every ONNX backend node test (Debian libonnx-testdata) that does not pass, with its status and
# reason (test/onnx/run_node_tests.py). A test not listed here must pass.
# Format: TEST STATUS REASON; STATUS is unsupported, out-of-scope, compile-error, run-error,
# mismatch or timeout (crash is never acceptable). The ctest test onnx.node_tests fails when a
# status differs, so a test that now passes must be removed from this file. Regenerate
# (hand-written reasons of unchanged entries are kept) with:
#   scripts/venv-python.sh test/onnx/run_node_tests.py --relaxc build/tools/relaxc \\
#       --work build/test/onnx --update-expected --docs
"""


def write_expected(path, results, old, suite, partial=False):
    """Rewrites the expectations file from `results`; a partial run (--filter, --sample) keeps the
    entries of the tests it did not run."""
    with open(path, "w") as f:
        header = EXPECTED_HEADER
        gpu = suite.split("-")[-1] if suite.split("-")[-1] in ("vulkan", "cuda") else ""
        base = suite.replace("-dynamic", "").replace("-" + gpu, "") if gpu else \
            suite.replace("-dynamic", "")
        if base != "debian":
            what = ("the pinned onnx wheel's node tests" if base == "pypi"
                    else f"Debian libonnx-testdata's {base} models")
            header = header.replace("(Debian libonnx-testdata)", f"({what})")
            header = header.replace("--update-expected --docs", f"--update-expected --suite {base}")
        if suite.endswith("-dynamic"):
            header = header.replace("# Every ONNX backend node test", "# Dynamic variant (--dynamic): every node test")
            header = header.replace("that does not pass, with", "that passes static but not dynamic, with")
            header = header.replace("--update-expected", "--dynamic --update-expected")
        if gpu:
            header = header.replace("# Every ONNX backend node test",
                                    f"# Target {gpu} (--target {gpu}): every node test")
            header = header.replace("that does not pass, with", f"that passes on cpu but not on {gpu}, with")
            header = header.replace("--work build/test/onnx --update-expected --docs",
                                    f"--work build/test/onnx_{gpu} --target {gpu} --update-expected")
        f.write(header)
        entries = {}
        if partial:
            entries = {n: v for n, v in old.items() if n not in results}
        for name in results:
            st, reason = results[name]["status"], results[name]["reason"]
            if name in old and old[name][0] == st and old[name][1]:
                reason = old[name][1]
            if st != "pass":
                entries[name] = (st, reason)
        for name in sorted(entries):
            st, reason = entries[name]
            f.write(f"{name} {st} {reason or '-'}\n")


def run_all(chosen, args, results):
    """Runs the chosen tests on args.jobs threads into `results`."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = {pool.submit(run_test, tdir, args.relaxc, args.work, args.timeout, args.dynamic):
                (d, m_ops, opset)
                for d, tdir, m_ops, opset in chosen}
        for fut in concurrent.futures.as_completed(futs):
            d, m_ops, opset = futs[fut]
            try:
                st, reason, strict = fut.result()
            except Exception as e:  # a harness bug must not hide the other results
                st, reason, strict = "run-error", f"harness exception: {short(repr(e))}", False
            results[d] = {"status": st, "reason": reason, "ops": m_ops, "opset": opset,
                          "strict": bool(strict and st == "pass")}
            if args.verbose:
                print(f"{st:14s} {d} {reason}", flush=True)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--work", required=True, help="work directory (under the build tree)")
    ap.add_argument("--suite", choices=sorted(SUITE_EXPECTED), default="debian",
                    help="debian: libonnx-testdata; pypi: the node tests of the pinned onnx wheel")
    ap.add_argument("--data", default=None, help="directory of node test dirs (default: the suite's)")
    ap.add_argument("--src", default=os.path.dirname(os.path.dirname(here)), help="relaxc source root")
    ap.add_argument("--expected", default=None, help="expectations file (default: the suite's)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60.0, help="per-test seconds")
    ap.add_argument("--filter", default=None, help="only tests whose name matches this regex (no stale check)")
    ap.add_argument("--dynamic", action="store_true",
                    help="run the dynamic variant (make_dynamic) of the tests the static expectations"
                         " say pass, against the suite's dynamic expectations file")
    ap.add_argument("--target", default="cpu",
                    help="compile for this target (vulkan runs on this machine's Vulkan driver); a "
                         "target other than cpu runs the tests the static cpu expectations say pass, "
                         "against test/onnx/expected_<suite>_<kind>.txt")
    ap.add_argument("--web", default=None,
                    help="--target webgpu: the built web runtime (default: <build>/web beside relaxc)")
    ap.add_argument("--sample", type=float, default=None,
                    help="run a deterministic sample of this fraction of the tests (no stale check)")
    ap.add_argument("--seed", type=int, default=1, help="seed of --sample")
    ap.add_argument("--update-expected", action="store_true", help="rewrite the expectations file")
    ap.add_argument("--docs", nargs="?", const=os.path.join(os.path.dirname(os.path.dirname(here)), "docs",
                                                          "supported_ops.md"), default=None,
                    help="also regenerate docs/supported_ops.md (or the given path) from this run")
    ap.add_argument("--cache", default=None,
                    help="artifact cache directory (default: onnx_artifact_cache beside --work)")
    ap.add_argument("--no-cache", action="store_true", help="compile every model")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every test")
    args = ap.parse_args()
    args.data = args.data or suite_data(args.suite)
    static_expected = os.path.join(here, SUITE_EXPECTED[args.suite])
    if args.dynamic and args.suite not in SUITE_EXPECTED_DYNAMIC:
        ap.error(f"--dynamic: the {args.suite} suite has no dynamic variant "
                 f"(only {', '.join(sorted(SUITE_EXPECTED_DYNAMIC))})")
    user_expected = args.expected
    if args.dynamic:
        args.expected = args.expected or os.path.join(here, SUITE_EXPECTED_DYNAMIC[args.suite])
    global TARGET
    TARGET = args.target
    gpu_kind = args.target.split()[0]
    if gpu_kind != "cpu":
        if args.dynamic and gpu_kind != "webgpu":
            ap.error("--target and --dynamic cannot be combined yet (except webgpu)")
        dyn = "_dynamic" if args.dynamic else ""
        args.expected = user_expected or os.path.join(here, f"expected_{args.suite}{dyn}_{gpu_kind}.txt")
        if not os.path.exists(args.expected):
            open(args.expected, "w").close()
    args.expected = args.expected or static_expected
    SUITE = args.suite + ("-dynamic" if args.dynamic else "") + \
        (f"-{gpu_kind}" if gpu_kind != "cpu" else "")
    if os.environ.get("RELAX_TEST_FULL") == "1":
        args.sample = None  # scripts/test_full.sh: every test
    partial = bool(args.filter or args.sample is not None)

    if not os.path.isdir(args.data):
        print(f"error: ONNX node test data not found: {args.data}\n"
              f"error: install the Debian package libonnx-testdata (bash scripts/setup.sh)")
        return 1
    if not os.access(args.relaxc, os.X_OK):
        print(f"error: relaxc not found or not executable: {args.relaxc}")
        return 1
    ops = supported_ops(args.src)
    if not ops:
        print(f"error: no ONNX converters found under {args.src}/lib/frontend/onnx")
        return 1
    os.makedirs(args.work, exist_ok=True)
    t0 = time.monotonic()
    if not args.no_cache:
        global CACHE_DIR
        root = args.cache or os.path.join(os.path.dirname(os.path.abspath(args.work)), "onnx_artifact_cache")
        with open(args.relaxc, "rb") as f:
            key = hashlib.sha256(f.read()).hexdigest()[:16]
        os.makedirs(os.path.join(root, key), exist_ok=True)
        for other in os.listdir(root):  # artifacts of older relaxc builds
            if other != key:
                shutil.rmtree(os.path.join(root, other), ignore_errors=True)
        CACHE_DIR = os.path.join(root, key)

    global BROWSER
    if gpu_kind == "webgpu":  # the artifacts run in Chromium with the web runtime
        sys.path.insert(0, os.path.join(os.path.dirname(here), "webgpu"))
        global BrowserError
        from browser import BrowserError, find_chromium
        from browser_runner import BrowserRunner
        chromium = find_chromium()
        web = args.web or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(args.relaxc))), "web")
        if not chromium:
            print("error: --target webgpu needs chromium-headless-shell (bash scripts/setup.sh)")
            return 1
        if not os.path.isfile(os.path.join(web, "relax_runtime.wasm")):
            print(f"error: the web runtime is not built in {web} (bash scripts/build_web.sh)")
            return 1
        BROWSER = BrowserRunner(chromium, web)
    static_listed = load_expected(static_expected) if args.dynamic or gpu_kind != "cpu" else {}
    chosen = []
    for d in sorted(os.listdir(args.data)):
        tdir = os.path.join(args.data, d)
        mpath = os.path.join(tdir, "model.onnx")
        if not os.path.isfile(mpath) or (args.filter and not re.search(args.filter, d)):
            continue
        if args.sample is not None and not sampled(d, args.sample, args.seed):
            continue
        if static_listed and d in static_listed:  # only what the static cpu variant passes
            continue
        m = onnx.load(mpath, load_external_data=False)
        chosen.append((d, tdir, model_ops(m), default_opset(m)))

    results = {}
    try:
        run_all(chosen, args, results)
    finally:
        if BROWSER is not None:
            BROWSER.close()

    with open(os.path.join(args.work, "results.json"), "w") as f:
        json.dump({"suite": SUITE, "data": args.data, "supported_ops": sorted(ops), "results": results,
                   "rtol": RTOL, "atol": ATOL, "strict_rtol": STRICT_RTOL, "strict_atol": STRICT_ATOL},
                  f, indent=1, sort_keys=True)

    if args.docs and not partial:
        # This run's results and those of the other suites/variants in sibling work dirs.
        parent = os.path.dirname(os.path.abspath(args.work))
        files = [os.path.join(args.work, "results.json")]
        for w in ("onnx", "onnx_dynamic", "onnx_pypi", "onnx_pypi_dynamic"):
            f = os.path.join(parent, w, "results.json")
            if os.path.isfile(f) and os.path.abspath(w) != os.path.abspath(args.work) and \
                    os.path.realpath(f) != os.path.realpath(files[0]):
                files.append(f)
        subprocess.run([sys.executable, os.path.join(here, "gen_supported_ops.py"), *files,
                        "-o", args.docs], check=False)

    expected = load_expected(args.expected)
    problems = []
    for d in sorted(results):
        st, reason = results[d]["status"], results[d]["reason"]
        if st == "crash":
            problems.append(f"CRASH {d}: {reason}")
            continue
        want = expected.get(d, ("pass", ""))[0]
        if want == st:
            continue
        if st == "pass":
            problems.append(f"NOW PASSES {d}: listed as {want} in {os.path.basename(args.expected)};"
                            f" remove it")
        elif d not in expected:
            problems.append(f"REGRESSED {d}: {st} {reason} (not listed, so expected to pass)")
        else:
            problems.append(f"CHANGED {d}: expected {want}, got {st} {reason}")
    if not partial:
        for d in sorted(set(expected) - set(results)):
            problems.append(f"STALE {d}: listed in {os.path.basename(args.expected)} but not in the suite")

    if args.update_expected:
        write_expected(args.expected, results, expected, SUITE, partial)
        print(f"wrote {args.expected}")

    counts = {s: 0 for s in STATUSES}
    for r in results.values():
        counts[r["status"]] += 1
    n_pass = counts["pass"]
    n_skip = counts["out-of-scope"]
    n_fail = len(results) - n_pass - n_skip
    n_strict = sum(1 for r in results.values() if r["strict"])
    print("  " + ", ".join(f"{s}: {counts[s]}" for s in STATUSES))
    print(f"  at rtol {STRICT_RTOL:g} / atol {STRICT_ATOL:g}: {n_strict} passed;"
          f" {time.monotonic() - t0:.1f} s")
    for line in problems:
        print(line)
    rc = 0
    if counts["crash"]:
        print(f"FAIL: {counts['crash']} test(s) crashed; a crash is always a bug")
        rc = 1
    elif args.update_expected:
        print(f"updated {args.expected} ({len(problems)} change(s)); review the diff")
    elif problems:
        print(f"FAIL: {len(problems)} test(s) differ from {args.expected}; fix the regression or run with"
              f" --update-expected and review the diff")
        rc = 1
    else:
        print("OK: all statuses match the expectations")
    print(f"{SUITE}: {n_pass} passed, {n_fail} failed, {n_skip} skipped")
    if gpu_kind != "cpu" and results:
        print(f"{SUITE}: {100.0 * n_pass / max(1, len(results) - n_skip):.1f}% of the"
              f" {len(results) - n_skip} cpu-passing tests run also pass on {gpu_kind}")
    if args.dynamic and results:
        print(f"{SUITE}: {100.0 * n_pass / max(1, len(results) - n_skip):.1f}% of the"
              f" {len(results) - n_skip} static-passing tests run also pass dynamic")
    return rc


if __name__ == "__main__":
    sys.exit(main())
