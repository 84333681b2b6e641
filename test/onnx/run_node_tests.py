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
SUITE_EXPECTED = {"debian": "expected.txt", "pypi": "expected_pypi.txt"}


def suite_data(suite):
    if suite == "pypi":
        return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
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
    ds = sorted(glob.glob(os.path.join(test_dir, "test_data_set_*")))
    in_names = graph_input_names(model)
    if ds:
        for i, pb in enumerate(numbered_pbs(ds[0], "input")):
            try:
                t = read_tensor_pb(pb)
                data[t.name or (in_names[i] if i < len(in_names) else "")] = numpy_helper.to_array(t)
            except Exception:
                pass

    def value(name):
        if name in consts:
            return consts[name]
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


def read_tensor_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


def graph_input_names(model):
    inits = {i.name for i in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in inits]


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


def run_test(test_dir, relaxc, work, timeout):
    """Runs one node test; returns (status, reason, strict) where strict says whether a passing
    test also passes at STRICT_RTOL / STRICT_ATOL."""
    model = onnx.load(os.path.join(test_dir, "model.onnx"), load_external_data=False)
    why = out_of_scope_reason(model, test_dir)
    if why:
        return "out-of-scope", why, False
    status, reason, strict = run_compiled(test_dir, model, relaxc, work, timeout)
    return status, reason, strict


def run_compiled(test_dir, model, relaxc, work, timeout):
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
    cached = None
    if CACHE_DIR:
        with open(model_path, "rb") as f:
            cached = os.path.join(CACHE_DIR, hashlib.sha256(f.read()).hexdigest() + ".so")
    try:
        if cached and os.path.isfile(cached):
            artifact = cached
        else:
            p = call([relaxc, "compile", model_path, "-o", artifact])
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
        sets = sorted(glob.glob(os.path.join(test_dir, "test_data_set_*")))
        if not sets:
            return "run-error", "harness: test has no test_data_set_*", False
        for ds in sets:
            dsname = os.path.basename(ds)
            ddir = os.path.join(tdir, dsname)
            outdir = os.path.join(ddir, "out")
            os.makedirs(outdir)
            cmd = [relaxc, "run", artifact, "--output-dir", outdir]
            in_files = numbered_pbs(ds, "input")
            for i, pb in enumerate(in_files):
                try:
                    t = read_tensor_pb(pb)
                    arr = numpy_helper.to_array(t)
                except Exception as e:  # sequences/optionals/strings the harness cannot express as .npy
                    return ("run-error", f"harness: cannot read {dsname}/{os.path.basename(pb)} as a tensor"
                            f" ({short(str(e), 80)})", False)
                if arr.dtype == object:
                    return "run-error", f"harness: input {i} is a string tensor (no .npy form)", False
                iname = t.name or (in_names[i] if i < len(in_names) else f"input_{i}")
                npy = os.path.join(ddir, f"input_{i}.npy")
                np.save(npy, arr, allow_pickle=False)
                cmd += ["--input", f"{iname}={npy}"]
            p = call(cmd)
            if p.returncode != 0:
                return classify_failure(p, "run-error") + (False,)
            out_files = numbered_pbs(ds, "output")
            for i, pb in enumerate(out_files):
                try:
                    t = read_tensor_pb(pb)
                    want = numpy_helper.to_array(t)
                except Exception as e:
                    return ("mismatch", f"harness: cannot read expected {os.path.basename(pb)}"
                            f" ({short(str(e), 80)})", False)
                oname = t.name or (out_names[i] if i < len(out_names) else f"output_{i}")
                got_path = os.path.join(outdir, sanitize(oname) + ".npy")
                if not os.path.isfile(got_path):
                    return "mismatch", f"output {oname}: relaxc wrote no {os.path.basename(got_path)}", False
                try:
                    got = np.load(got_path, allow_pickle=False)
                except Exception as e:
                    return "mismatch", f"output {oname}: unreadable .npy ({short(str(e), 80)})", False
                why = compare_output(oname, got, want)
                if why:
                    return "mismatch", (f"{dsname}: {why}" if len(sets) > 1 else why), False
                if compare_output(oname, got, want, STRICT_RTOL, STRICT_ATOL):
                    strict = False
        shutil.rmtree(tdir, ignore_errors=True)  # keep the work tree small; failures stay
        return "pass", "", strict
    except subprocess.TimeoutExpired:
        return "timeout", f"compile + run exceeded {timeout:g} s", False


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


def write_expected(path, results, old, suite):
    with open(path, "w") as f:
        header = EXPECTED_HEADER
        if suite != "debian":
            header = header.replace("(Debian libonnx-testdata)", "(the pinned onnx wheel's node tests)")
            header = header.replace("--update-expected --docs", f"--update-expected --suite {suite}")
        f.write(header)
        for name in sorted(results):
            st, reason = results[name]["status"], results[name]["reason"]
            if name in old and old[name][0] == st and old[name][1]:
                reason = old[name][1]
            if st != "pass":
                f.write(f"{name} {st} {reason or '-'}\n")


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
    args.expected = args.expected or os.path.join(here, SUITE_EXPECTED[args.suite])
    SUITE = args.suite

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

    chosen = []
    for d in sorted(os.listdir(args.data)):
        tdir = os.path.join(args.data, d)
        mpath = os.path.join(tdir, "model.onnx")
        if not os.path.isfile(mpath) or (args.filter and not re.search(args.filter, d)):
            continue
        m = onnx.load(mpath, load_external_data=False)
        chosen.append((d, tdir, model_ops(m), default_opset(m)))

    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = {pool.submit(run_test, tdir, args.relaxc, args.work, args.timeout): (d, m_ops, opset)
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

    with open(os.path.join(args.work, "results.json"), "w") as f:
        json.dump({"suite": SUITE, "data": args.data, "supported_ops": sorted(ops), "results": results,
                   "rtol": RTOL, "atol": ATOL, "strict_rtol": STRICT_RTOL, "strict_atol": STRICT_ATOL},
                  f, indent=1, sort_keys=True)

    if args.docs and not args.filter:
        subprocess.run([sys.executable, os.path.join(here, "gen_supported_ops.py"),
                        os.path.join(args.work, "results.json"), "--expected", args.expected,
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
    if not args.filter:
        for d in sorted(set(expected) - set(results)):
            problems.append(f"STALE {d}: listed in {os.path.basename(args.expected)} but not in the suite")

    if args.update_expected:
        write_expected(args.expected, results, expected, SUITE)
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
    return rc


if __name__ == "__main__":
    sys.exit(main())
