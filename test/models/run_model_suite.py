#!/usr/bin/env python3
# The real-model suite: compiles each model once with relaxc, runs the one artifact at every size, compares with onnxruntime.
"""Run the real-model suite (test/models) through relaxc and check it against expected_models.txt.

Models: the trained Silero VAD models of the silero-vad wheel (core venv) and the models of the
export cache (scripts/export_models.sh: vision nets, BERT classifier, GPT-2 decoder step, LSTM LM,
all-MiniLM-L6-v2); see model_specs.py for their inputs and sizes. Each model is compiled ONCE with
`relaxc compile`; the one artifact runs (`relaxc run --output-dir`) at two sizes of every dynamic
axis, and every output is compared with onnxruntime at rtol 1e-4 / atol 1e-5 (compare.py). The
real jobs (OCR, voice activity, sentence embeddings, text generation) are separate tests
(test/models/jobs, models.job.*) that call the artifacts in-process.

Each model gets one status (the first failing size decides):
  pass           every size matches
  compile-error  `relaxc compile` exited cleanly with an `error:` line (the reason names the ops
                 without a converter when that is why)
  run-error      `relaxc run` exited cleanly with an error
  mismatch       an output differs in shape, dtype or value
  crash          a signal, an exit code >= 128, or a failure without a clean `error:` line
  timeout        compile or run took longer than --timeout
  missing        the model file is absent (export cache not built; see --exported)

expected_models.txt lists every model that does not pass, with its status and reason; a model
not listed must pass. The run fails if a status differs (a listed model that now passes must be
removed, so the list only shrinks), on any crash, and on a missing model file unless allowed.
`--update-expected` rewrites the file, keeping the hand-written reason of unchanged entries.
The last line is `models: N passed, M failed, K not run`.

GPU targets: `--target vulkan` (or `--target "cuda -arch=sm_90"`) compiles with that target and
--stats, and a model whose --stats shows a one-thread fallback kernel gets status `fallback`
(for cuda every kernel must also show its ptxas register count). Vulkan artifacts run on this
machine's Vulkan driver (lavapipe); `--compile-only` (cuda here: no NVIDIA driver) stops after
the compile. The expectations file is then expected_models_<target kind>.txt, and --rtol/--atol
set the bar (the GPU tests use 1e-3 / 1e-4). `--full-only` skips (exit 77) unless
RELAX_TEST_FULL=1, for the heavy cases of scripts/test_full.sh.

`--heavy-sample K [--seed S]` runs only a seeded sample of K of the heavy exported models
(model_specs.HEAVY_MODELS; the K with the smallest seeded hash, model_specs.heavy_sample) and
counts the others as not run (their expectations are kept, never called stale); with
RELAX_TEST_FULL=1 it is ignored and every model runs. CI (scripts/test.sh) uses it.
"""
import argparse
import concurrent.futures
import hashlib
import os
import re
import shutil
import subprocess
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare  # noqa: E402
import model_specs  # noqa: E402
import ort_reference  # noqa: E402

STATUSES = ("pass", "compile-error", "fallback", "run-error", "mismatch", "crash", "timeout", "missing")
EXPECTED = os.path.join(HERE, "expected_models.txt")
CACHE_DIR = None  # artifacts by model sha256, for this relaxc binary (set by main)
TARGET = None  # --target (None: the default cpu target)
COMPILE_ONLY = False
RTOL, ATOL = compare.RTOL, compare.ATOL


def check_device_stats(stats):
    """(ok, message) from `relaxc compile --stats` of a GPU target: no one-thread fallback, and
    for cuda a ptxas register count for every kernel."""
    m = re.search(r"device kernels: (\d+), fallbacks: (\d+)", stats)
    if not m:
        return False, "no 'device kernels: N, fallbacks: F' line in --stats"
    n, fb = int(m.group(1)), int(m.group(2))
    if fb:
        names = re.findall(r"kernel: (\S+) [^\n]*fallback", stats)
        return False, f"{fb} of {n} kernels took the one-thread fallback {' '.join(names[:5])}"
    if TARGET.startswith("cuda"):
        regs = len(re.findall(r"registers=\d+", stats))
        if regs != n:
            return False, f"{regs} of {n} kernels show a ptxas register count"
    return True, f"device kernels: {n}, fallbacks: 0"


def short(text, n=200):
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def first_error_line(text):
    for line in text.splitlines():
        if "error:" in line:
            return line.strip()
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return lines[-1] if lines else "(no output)"


def classify_failure(p, clean_class):
    """(status, reason) of a failed relaxc process."""
    out = (p.stderr or "") + (p.stdout or "")
    rc = p.returncode
    if clean_class == "compile-error" and rc == 2 and "unsupported op type" in out:
        ops = re.findall(r"^\s+(\S+) \(first at node", out, re.M)
        return "compile-error", "unsupported ops: " + " ".join(sorted(set(ops)))
    if rc < 0 or rc >= 128:
        how = f"signal {-rc}" if rc < 0 else f"exit code {rc}"
        return "crash", f"{how}: {short(first_error_line(out))}; repro: {' '.join(p.args)}"
    if rc in (1, 2) and re.search(r"(^|\s)error:", out):
        msg = re.sub(r"^.*?error:\s*", "", first_error_line(out))
        msg = re.sub(r"'/[^']*/([^/']+\.onnx)'", r"\1", msg)  # no machine-specific paths
        return clean_class, short(msg)
    return "crash", f"unclean failure (exit code {rc}, no `error:` line): {short(first_error_line(out))}"


def run_model(name, spec, relaxc, work, timeout):
    """Returns (status, reason, lines): compile once, run every size, compare."""
    lines = []
    log = lines.append
    if not os.path.isfile(spec["file"]):
        return "missing", f"model file not found: {spec['file']}", lines
    mdir = os.path.join(work, name)
    shutil.rmtree(mdir, ignore_errors=True)
    os.makedirs(mdir)
    start = time.monotonic()

    def call(cmd):
        left = max(1.0, timeout - (time.monotonic() - start))
        return subprocess.run(cmd, capture_output=True, text=True, timeout=left, errors="replace")

    try:
        artifact = os.path.join(mdir, "model.so")
        cached = None
        if CACHE_DIR:
            with open(spec["file"], "rb") as f:
                cached = os.path.join(CACHE_DIR, hashlib.sha256(f.read()).hexdigest() + ".so")
        if cached and os.path.isfile(cached):
            artifact = cached
            log("  compile: cached artifact")
        else:
            t0 = time.monotonic()
            cmd = [relaxc, "compile", spec["file"], "-o", artifact]
            if TARGET:
                cmd += ["--target", TARGET, "--stats"]
            p = call(cmd)
            if p.returncode != 0:
                return classify_failure(p, "compile-error") + (lines,)
            log(f"  compile: {time.monotonic() - t0:.1f} s, {os.path.getsize(artifact) / 1e6:.2f} MB")
            if TARGET:
                ok, msg = check_device_stats(p.stdout)
                log(f"  {TARGET}: {msg}")
                if not ok:
                    return "fallback", msg, lines
            if cached:
                tmp = f"{cached}.{os.getpid()}.{threading.get_ident()}.tmp"
                shutil.copyfile(artifact, tmp)
                os.replace(tmp, cached)

        def run_fn(feeds, tag):
            """relaxc outputs {name: array}, or (status, reason)."""
            ddir = os.path.join(mdir, tag)
            out = os.path.join(ddir, "out")
            os.makedirs(out, exist_ok=True)
            cmd = [relaxc, "run", artifact, "--output-dir", out]
            for k, (iname, arr) in enumerate(feeds.items()):
                npy = os.path.join(ddir, f"input_{k}.npy")
                np.save(npy, arr)
                cmd += ["--input", f"{iname}={npy}"]
            p = call(cmd)
            if p.returncode != 0:
                st, why = classify_failure(p, "run-error")
                return st, f"at {tag}: {why}"
            got = {}
            for oname in spec.get("outputs") or []:
                path = os.path.join(out, ort_reference.sanitize(oname) + ".npy")
                if os.path.isfile(path):
                    got[oname] = np.load(path)
            return got

        if COMPILE_ONLY:
            shutil.rmtree(mdir, ignore_errors=True)
            return "pass", "", lines
        for k, size in enumerate(spec["sizes"]):
            tag = model_specs.size_label(size)
            feeds = model_specs.make_inputs(spec, size, 1000 + k)
            ref = ort_reference.run(spec["file"], feeds)
            spec.setdefault("outputs", [n for n, _ in ref])
            t0 = time.monotonic()
            got = run_fn(feeds, re.sub(r"[^A-Za-z0-9_.=-]", "_", tag))
            if isinstance(got, tuple):
                return got + (lines,)
            log(f"  {tag}: run {time.monotonic() - t0:.2f} s")
            for oname, want in ref:
                if oname not in got:
                    return "mismatch", f"at {tag}: relaxc wrote no output {oname}", lines
                atol = max(ATOL, model_specs.ATOL.get(name, 0.0))
                ok, msg = compare.compare(got[oname], want, RTOL, atol)
                mag = f", max |ref| {float(np.max(np.abs(want))):.3g}" if want.size and want.dtype.kind == "f" else ""
                log(f"    {oname} {list(want.shape)}{mag}: {'OK' if ok else 'MISMATCH'}: {msg}")
                if not ok:
                    return "mismatch", f"at {tag}: output {oname}: {short(msg, 160)}", lines
        shutil.rmtree(mdir, ignore_errors=True)
        return "pass", "", lines
    except subprocess.TimeoutExpired:
        return "timeout", f"compile + runs exceeded {timeout:g} s", lines


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
            if len(parts) < 2 or parts[1] not in STATUSES or parts[1] == "pass":
                raise SystemExit(f"error: {path}:{lineno}: expected 'MODEL STATUS [REASON]', got {line!r}")
            exp[parts[0]] = (parts[1], parts[2].strip() if len(parts) > 2 else "")
    return exp


HEADER = """\
# Every model of the real-model suite (test/models/run_model_suite.py) that does not pass, with its
# status and reason; a model not listed must compile and match onnxruntime at all its sizes.
# Format: MODEL STATUS REASON; STATUS is compile-error, run-error, mismatch or timeout (crash is
# never acceptable). The ctest tests models.suite.* fail when a status differs, so a model that
# now passes must be removed from this file. Regenerate (hand-written reasons of unchanged
# entries are kept) after `bash scripts/export_models.sh` with:
#   scripts/venv-python.sh test/models/run_model_suite.py --relaxc build/tools/relaxc \\
#       --work build/test/models_suite --update-expected
"""


def write_expected(path, results, old, stale):
    """Rewrites the file: this run's statuses, the entries of models not run kept, `stale` dropped."""
    merged = {n: v for n, v in old.items() if n not in stale}
    for name, (st, reason) in results.items():
        if st == "pass" or st == "missing":
            merged.pop(name, None)
            if st == "missing" and name in old:
                merged[name] = old[name]  # not run: keep what is known
            continue
        if name in old and old[name][0] == st and old[name][1]:
            reason = old[name][1]
        merged[name] = (st, reason)
    header = HEADER
    if os.path.isfile(path):  # keep a file's own header (expected_models_<target>.txt)
        with open(path) as f:
            header = "".join(l for l in f.read().splitlines(True) if l.startswith("#")) or HEADER
    with open(path, "w") as f:
        f.write(header)
        for name in sorted(merged):
            st, reason = merged[name]
            f.write(f"{name} {st} {reason or '-'}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--work", required=True, help="work directory (under the build tree)")
    ap.add_argument("--source", choices=("all", "wheel", "export"), default="all",
                    help="which models: the wheels' (trained), the export cache's, or both")
    ap.add_argument("--venv", default=os.environ.get("RELAX_VENV"), help="core venv (silero-vad wheel)")
    ap.add_argument("--export-dir", default=os.environ.get("RELAX_EXPORT_DIR"),
                    help="export cache (scripts/export_models.sh; default $RELAX_EXPORT_DIR)")
    ap.add_argument("--expected", default=None,
                    help="expectations file (default expected_models.txt, or"
                         " expected_models_<kind>.txt with --target)")
    ap.add_argument("--target", default=None, help="relaxc compile --target (vulkan, 'cuda -arch=sm_90')")
    ap.add_argument("--compile-only", action="store_true",
                    help="compile and check --stats only (cuda without an NVIDIA driver)")
    ap.add_argument("--rtol", type=float, default=compare.RTOL)
    ap.add_argument("--atol", type=float, default=compare.ATOL)
    ap.add_argument("--full-only", action="store_true",
                    help="exit 77 (skipped) unless RELAX_TEST_FULL=1 (scripts/test_full.sh)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=900.0, help="per-model seconds (compile + all runs)")
    ap.add_argument("--filter", default=None, help="only models whose name matches this regex")
    ap.add_argument("--heavy-sample", type=int, default=None, metavar="K",
                    help="of the heavy exported models (model_specs.HEAVY_MODELS) run only a seeded sample"
                         " of K; ignored when RELAX_TEST_FULL=1")
    ap.add_argument("--seed", type=int, default=1, help="seed of --heavy-sample")
    ap.add_argument("--update-expected", action="store_true", help="rewrite the expectations file")
    ap.add_argument("--cache", default=None, help="artifact cache (default: models_artifact_cache beside --work)")
    ap.add_argument("--no-cache", action="store_true", help="compile every model")
    ap.add_argument("--skip-if-not-exported", action="store_true",
                    help="exit 77 (skipped) instead of failing when the export cache is missing and"
                         " RELAX_EXPORT_MODELS=0")
    ap.add_argument("--list", action="store_true", help="print the models and their sizes, run nothing")
    args = ap.parse_args()
    if args.full_only and os.environ.get("RELAX_TEST_FULL") != "1":
        print("SKIP: full run only (RELAX_TEST_FULL=1, scripts/test_full.sh)")
        return 77
    global TARGET, COMPILE_ONLY, RTOL, ATOL
    TARGET, COMPILE_ONLY, RTOL, ATOL = args.target, args.compile_only, args.rtol, args.atol
    if args.expected is None:
        kind = args.target.split()[0] if args.target else ""
        args.expected = os.path.join(HERE, f"expected_models_{kind}.txt") if kind else EXPECTED

    specs = {}
    if args.source in ("all", "wheel"):
        silero = model_specs.site_packages_dir(args.venv or "", os.path.join("silero_vad", "data"))
        if not silero:
            print(f"error: silero_vad/data not found in the venv {args.venv!r}; run 'bash scripts/setup.sh'")
            return 1
        specs.update(model_specs.silero_specs(silero))
    if args.source in ("all", "export"):
        exp = model_specs.export_specs(args.export_dir)
        if not exp and args.skip_if_not_exported and os.environ.get("RELAX_EXPORT_MODELS") == "0":
            print(f"SKIP: RELAX_EXPORT_MODELS=0 and no export cache at {args.export_dir!r}; the exported"
                  f" models are not tested")
            return 77
        if not exp:
            print(f"error: the export cache {args.export_dir!r} has no manifest.json; run"
                  f" 'bash scripts/export_models.sh' (several GB, minutes; RELAX_EXPORT_MODELS=0 skips"
                  f" the exported models in ctest)")
            return 1
        specs.update(exp)
    if args.filter:
        specs = {n: s for n, s in specs.items() if re.search(args.filter, n)}
    sampled_out = set()
    if args.heavy_sample is not None and os.environ.get("RELAX_TEST_FULL") != "1":
        heavy = [n for n in specs if n in model_specs.HEAVY_MODELS]
        keep = set(model_specs.heavy_sample(heavy, args.heavy_sample, args.seed))
        sampled_out = set(heavy) - keep
        specs = {n: s for n, s in specs.items() if n not in sampled_out}
        print(f"heavy models: running {len(keep)} of {len(heavy)} (--heavy-sample {args.heavy_sample}"
              f" --seed {args.seed}): {' '.join(sorted(keep)) or '-'}; not run: {' '.join(sorted(sampled_out)) or '-'}"
              f" (RELAX_TEST_FULL=1 runs all)")
    if args.list:
        for n, s in specs.items():
            print(f"{n}: {s['file']} sizes {[model_specs.size_label(z) for z in s['sizes']]}")
        return 0
    if not os.access(args.relaxc, os.X_OK):
        print(f"error: relaxc not found or not executable: {args.relaxc}")
        return 1
    os.makedirs(args.work, exist_ok=True)
    # A CI run's checkout is fresh: a cache would only copy every artifact once more (vit_b_16's
    # is ~350 MB) onto a disk the tests share.
    if os.environ.get("CI") == "true" and args.cache is None:
        args.no_cache = True
    if not args.no_cache:
        global CACHE_DIR
        root = args.cache or os.path.join(os.path.dirname(os.path.abspath(args.work)), "models_artifact_cache")
        with open(args.relaxc, "rb") as f:
            key = hashlib.sha256(f.read()).hexdigest()[:16]
        if args.target:  # one cache per target
            key += "_" + re.sub(r"[^A-Za-z0-9]+", "_", args.target)
        os.makedirs(os.path.join(root, key), exist_ok=True)
        for other in os.listdir(root):  # artifacts of older relaxc builds (any target)
            if other[:16] != key[:16]:
                shutil.rmtree(os.path.join(root, other), ignore_errors=True)
        CACHE_DIR = os.path.join(root, key)

    t_all = time.monotonic()
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = {pool.submit(run_model, n, s, args.relaxc, args.work, args.timeout): n for n, s in specs.items()}
        for fut in concurrent.futures.as_completed(futs):
            n = futs[fut]
            t = time.monotonic()
            try:
                st, reason, lines = fut.result()
            except Exception as e:  # a harness bug must not hide the other results
                st, reason, lines = "run-error", f"harness exception: {short(repr(e))}", []
            results[n] = (st, reason)
            print(f"[{n}] {st}{': ' + reason if reason else ''}  ({specs[n]['source']}, sizes "
                  f"{'; '.join(model_specs.size_label(z) for z in specs[n]['sizes'])})", flush=True)
            for line in lines:
                print(line)

    expected = load_expected(args.expected)
    problems = []
    stale = set()
    for n in sorted(results):
        st, reason = results[n]
        if st == "crash":
            problems.append(f"CRASH {n}: {reason}")
            continue
        if st == "missing":
            problems.append(f"MISSING {n}: {reason}")
            continue
        want = expected.get(n, ("pass", ""))[0]
        if want == st:
            continue
        if st == "pass":
            problems.append(f"NOW PASSES {n}: listed as {want} in {os.path.basename(args.expected)}; remove it")
        elif n not in expected:
            problems.append(f"REGRESSED {n}: {st} {reason} (not listed, so expected to pass)")
        else:
            problems.append(f"CHANGED {n}: expected {want}, got {st} {reason}")
    if not args.filter:
        def in_source(n):
            wheel = n in model_specs.SILERO_MODELS
            return args.source == "all" or (args.source == "wheel") == wheel

        stale = {n for n in set(expected) - set(results) - sampled_out if in_source(n)}
        for n in sorted(stale):
            problems.append(f"STALE {n}: listed in {os.path.basename(args.expected)} but not in the suite")
    if args.update_expected:
        write_expected(args.expected, results, expected, stale)
        print(f"wrote {args.expected}")

    counts = {s: sum(1 for r in results.values() if r[0] == s) for s in STATUSES}
    print("  " + ", ".join(f"{s}: {counts[s]}" for s in STATUSES) + f"; {time.monotonic() - t_all:.1f} s")
    for line in problems:
        print(line)
    rc = 0
    if counts["crash"]:
        print(f"FAIL: {counts['crash']} model(s) crashed; a crash is always a bug")
        rc = 1
    elif args.update_expected:
        print(f"updated {args.expected} ({len(problems)} change(s)); review the diff")
    elif problems:
        print(f"FAIL: {len(problems)} model(s) differ from {args.expected}; fix the regression or run with"
              f" --update-expected and review the diff")
        rc = 1
    else:
        print("OK: all statuses match the expectations")
    n_pass = counts["pass"]
    print(f"models: {n_pass} passed, {len(results) - n_pass - counts['missing']} failed,"
          f" {counts['missing'] + len(sampled_out)} not run")
    return rc


if __name__ == "__main__":
    sys.exit(main())
