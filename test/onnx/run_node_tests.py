#!/usr/bin/env python3
# ONNX backend node-test conformance tier: runs every node test relaxc supports and checks against expected.txt.
"""Run the ONNX backend node tests (Debian libonnx-testdata) through relaxc.

For each test whose model uses only op types relaxc has a converter for (read from
lib/frontend/onnx/convert_*.cc), the .pb inputs are written as .npy, the model is compiled with
`relaxc compile`, run with `relaxc run --output-dir`, and every output is compared with the expected
.pb output. Each test gets one status:

  pass           all outputs of all data sets match (shape, dtype, values)
  compile-error  `relaxc compile` exited cleanly (exit 1/2 with an `error:` line)
  run-error      `relaxc run` exited cleanly with an error (or the harness could not feed the inputs)
  mismatch       an output differs in shape, dtype or value
  crash          a signal, an exit code >= 128, or a non-zero exit without a clean `error:` line
  timeout        compile + run took longer than the per-test timeout

The statuses are compared with the checked-in expectations file; the run fails if any status
differs (a newly passing test must be moved to `pass`), if the file lists tests that were not run or
misses tests that were, and always if any test crashed. `--update-expected` rewrites the file from
this run, keeping the hand-written reason of every entry whose status did not change.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

STATUSES = ("pass", "compile-error", "run-error", "mismatch", "crash", "timeout")
RTOL = 1e-4
ATOL = 1e-5
DEFAULT_DATA = "/usr/share/libonnx-testdata/data/node"



def numbered_pbs(ds, prefix):
    """The test data set's <prefix>_<k>.pb files in numeric order of k."""
    return sorted(glob.glob(os.path.join(ds, f"{prefix}_*.pb")),
                  key=lambda s: int(re.search(prefix + r"_(\d+)", s).group(1)))

def supported_ops(src_root):
    """Op types with a converter: every `(*t)["Op"] = ...` registration in the ONNX frontend."""
    ops = set()
    for path in glob.glob(os.path.join(src_root, "lib", "frontend", "onnx", "convert_*.cc")):
        with open(path) as f:
            ops.update(re.findall(r'\(\*t\)\["([A-Za-z0-9_]+)"\]\s*=', f.read()))
    return ops


def model_ops(model):
    return sorted({n.op_type for n in model.graph.node})


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
    if rc < 0 or rc >= 128:
        return "crash", f"{describe_rc(rc)}: {short(first_error_line(out))}; repro: {repro}"
    if rc in (1, 2) and re.search(r"(^|\s)error:", out):
        msg = first_error_line(out)
        msg = re.sub(r"^.*?error:\s*", "", msg)
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


def compare_output(name, got, want):
    """Returns None when `got` matches `want`, else a one-line reason."""
    if got.dtype != want.dtype:
        return f"output {name}: dtype {got.dtype}, expected {want.dtype}"
    if got.shape != want.shape:
        return f"output {name}: shape {list(got.shape)}, expected {list(want.shape)}"
    if want.dtype.kind in "fc":
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        ok = np.isclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True)
        if not ok.all():
            bad = int((~ok).sum())
            with np.errstate(invalid="ignore"):
                diff = np.abs(g - w)
            diff = np.where(np.isnan(diff), np.inf, diff)
            return (f"output {name}: {bad}/{want.size} values differ (max abs diff {float(diff.max()):.3g},"
                    f" rtol {RTOL} atol {ATOL})")
        return None
    if not np.array_equal(got, want):
        bad = int((got != want).sum())
        return f"output {name}: {bad}/{want.size} values differ (exact compare)"
    return None


def run_test(test_dir, relaxc, work, timeout):
    """Runs one node test; returns (status, reason)."""
    name = os.path.basename(test_dir)
    tdir = os.path.join(work, name)
    shutil.rmtree(tdir, ignore_errors=True)
    os.makedirs(tdir)
    start = time.monotonic()

    def left():
        return max(1.0, timeout - (time.monotonic() - start))

    def call(cmd):
        return subprocess.run(cmd, capture_output=True, text=True, timeout=left(), errors="replace")

    artifact = os.path.join(tdir, "model.so")
    try:
        p = call([relaxc, "compile", os.path.join(test_dir, "model.onnx"), "-o", artifact])
        if p.returncode != 0:
            return classify_failure(p, "compile-error")
        model = onnx.load(os.path.join(test_dir, "model.onnx"), load_external_data=False)
        in_names = graph_input_names(model)
        out_names = [o.name for o in model.graph.output]
        sets = sorted(glob.glob(os.path.join(test_dir, "test_data_set_*")))
        if not sets:
            return "run-error", "harness: test has no test_data_set_*"
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
                    return "run-error", f"harness: cannot read {dsname}/{os.path.basename(pb)} as a tensor ({short(str(e), 80)})"
                if arr.dtype == object:
                    return "run-error", f"harness: input {i} is a string tensor (no .npy form)"
                iname = t.name or (in_names[i] if i < len(in_names) else f"input_{i}")
                npy = os.path.join(ddir, f"input_{i}.npy")
                np.save(npy, arr, allow_pickle=False)
                cmd += ["--input", f"{iname}={npy}"]
            p = call(cmd)
            if p.returncode != 0:
                return classify_failure(p, "run-error")
            out_files = numbered_pbs(ds, "output")
            for i, pb in enumerate(out_files):
                try:
                    t = read_tensor_pb(pb)
                    want = numpy_helper.to_array(t)
                except Exception as e:
                    return "mismatch", f"harness: cannot read expected {os.path.basename(pb)} ({short(str(e), 80)})"
                oname = t.name or (out_names[i] if i < len(out_names) else f"output_{i}")
                got_path = os.path.join(outdir, sanitize(oname) + ".npy")
                if not os.path.isfile(got_path):
                    return "mismatch", f"output {oname}: relaxc wrote no {os.path.basename(got_path)}"
                try:
                    got = np.load(got_path, allow_pickle=False)
                except Exception as e:
                    return "mismatch", f"output {oname}: unreadable .npy ({short(str(e), 80)})"
                why = compare_output(oname, got, want)
                if why:
                    return "mismatch", (f"{dsname}: {why}" if len(sets) > 1 else why)
        return "pass", ""
    except subprocess.TimeoutExpired:
        return "timeout", f"compile + run exceeded {timeout:g} s"


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
# Expected status of each ONNX backend node test relaxc supports (test/onnx/run_node_tests.py).
# Format: TEST STATUS [REASON]; STATUS is pass, compile-error, run-error, mismatch or timeout
# (crash is never acceptable). The ctest test onnx.node_tests fails when a status differs, so a
# newly passing test must be moved to `pass` here. Regenerate (hand-written reasons of unchanged
# entries are kept) with:
#   scripts/venv-python.sh test/onnx/run_node_tests.py --relaxc build/tools/relaxc \\
#       --work build/test/onnx --update-expected
"""


def write_expected(path, results, old):
    with open(path, "w") as f:
        f.write(EXPECTED_HEADER)
        for name in sorted(results):
            st, reason = results[name]["status"], results[name]["reason"]
            if name in old and old[name][0] == st and old[name][1]:
                reason = old[name][1]
            if st == "pass":
                f.write(f"{name} pass\n")
            else:
                f.write(f"{name} {st} {reason}\n")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--work", required=True, help="work directory (under the build tree)")
    ap.add_argument("--data", default=DEFAULT_DATA, help="directory of node test dirs")
    ap.add_argument("--src", default=os.path.dirname(os.path.dirname(here)), help="relaxc source root")
    ap.add_argument("--expected", default=os.path.join(here, "expected.txt"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60.0, help="per-test seconds")
    ap.add_argument("--filter", default=None, help="only tests whose name matches this regex (no stale check)")
    ap.add_argument("--update-expected", action="store_true", help="rewrite the expectations file")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every test")
    args = ap.parse_args()

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

    chosen, skipped = [], {}
    for d in sorted(os.listdir(args.data)):
        tdir = os.path.join(args.data, d)
        mpath = os.path.join(tdir, "model.onnx")
        if not os.path.isfile(mpath) or (args.filter and not re.search(args.filter, d)):
            continue
        m_ops = model_ops(onnx.load(mpath, load_external_data=False))
        missing = [o for o in m_ops if o not in ops]
        if missing:
            skipped[d] = missing
        else:
            chosen.append((d, tdir, m_ops))

    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = {pool.submit(run_test, tdir, args.relaxc, args.work, args.timeout): (d, m_ops)
                for d, tdir, m_ops in chosen}
        for fut in concurrent.futures.as_completed(futs):
            d, m_ops = futs[fut]
            try:
                st, reason = fut.result()
            except Exception as e:  # a harness bug must not hide the other results
                st, reason = "run-error", f"harness exception: {short(repr(e))}"
            results[d] = {"status": st, "reason": reason, "ops": m_ops}
            if args.verbose:
                print(f"{st:14s} {d} {reason}")

    with open(os.path.join(args.work, "results.json"), "w") as f:
        json.dump({"data": args.data, "supported_ops": sorted(ops), "results": results,
                   "skipped": skipped}, f, indent=1, sort_keys=True)

    expected = load_expected(args.expected)
    problems = []
    for d in sorted(results):
        st, reason = results[d]["status"], results[d]["reason"]
        if st == "crash":
            problems.append(f"CRASH {d}: {reason}")
            continue
        if d not in expected:
            problems.append(f"NEW {d}: {st} {reason} (not in {os.path.basename(args.expected)})")
        elif expected[d][0] != st:
            problems.append(f"CHANGED {d}: expected {expected[d][0]}, got {st} {reason}")
    if not args.filter:
        for d in sorted(set(expected) - set(results)):
            problems.append(f"STALE {d}: listed in {os.path.basename(args.expected)} but not run")

    if args.update_expected:
        write_expected(args.expected, results, expected)
        print(f"wrote {args.expected}")

    counts = {s: 0 for s in STATUSES}
    for r in results.values():
        counts[r["status"]] += 1
    n_pass = counts["pass"]
    print(f"onnx node tests: {n_pass} passed, {len(results) - n_pass} failed"
          f" ({len(skipped)} skipped: unsupported op) in {time.monotonic() - t0:.1f} s")
    print("  " + ", ".join(f"{s}: {counts[s]}" for s in STATUSES))
    for line in problems:
        print(line)
    crashed = counts["crash"] > 0
    if crashed:
        print(f"FAIL: {counts['crash']} test(s) crashed; a crash is always a bug")
    if crashed:
        return 1
    if args.update_expected:
        print(f"updated {args.expected} ({len(problems)} change(s)); review the diff")
        return 0
    if problems:
        print(f"FAIL: {len(problems)} test(s) differ from {args.expected}; fix the regression or run with"
              f" --update-expected and review the diff")
        return 1
    print("OK: all statuses match the expectations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
