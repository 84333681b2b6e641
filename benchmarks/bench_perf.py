# One-run side-by-side benchmark: relaxc vs onnxruntime, OpenVINO, IREE (llvm-cpu) and TVM (Relax, untuned) on a row set; writes this CPU's section of the set's report.
"""Compiles each model with relaxc and the peers, then times every engine on every row at 1 and 2
threads in >= 5 interleaved rounds and writes a markdown report: its CPU's section of the row
set's file (one section per CPU model and ISA; other CPUs' sections stay as they were).

Row sets (--set; perf_rows.py):
  core (default)  PP-OCR classifier 1x3x48x192 and 8x3x48x192, PP-OCRv4 det 1x3x640x640, PP-OCRv4
                  rec 1x3x48x320, all-MiniLM-L6-v2 batch 1 seq 128, ResNet-18 and MobileNetV2
                  1x3x224x224; plus an fp32 1024^3 MatMul (both operands graph inputs) against
                  numpy/OpenBLAS; all engines; docs/performance.md
  extended        19 models of the real-model suite at one size each (torchvision classifiers,
                  LR-ASPP and the YOLO-style detector at 320x320, DistilBERT, the Whisper-tiny
                  encoder, GRU, Silero VAD, LSTM LM, GPT-2 step, ...); relaxc, onnxruntime and
                  OpenVINO; docs/performance-extended.md, whose summary also calls out the
                  dispatch-bound rows (Silero, LSTM LM, GPT-2 step)

Method:
- every timed measurement is a fresh subprocess, so thread settings apply before the engine starts:
  relaxc is `relaxc run ART --repeat K` (its printed median of K runs), the peers are this script's
  `--worker` mode (load, 1 warm-up call, then timed calls; median). Threads: relaxc
  RELAX_NUM_THREADS, onnxruntime intra_op_num_threads, TVM TVM_NUM_THREADS, IREE local-sync driver
  at 1 thread and local-task (IREE's own pool) at 2, numpy OPENBLAS_NUM_THREADS;
- in every round each (row, threads) cell runs all engines back to back, the engine order rotated
  by one each round; the reported time is the median over rounds, the ratio to onnxruntime is the
  median of the per-round ratios;
- max abs diff: each engine's first output vs onnxruntime's on the same input (both thread counts);
- compile time: wall clock of the compile (relaxc: `relaxc compile` of the original ONNX, one
  artifact for all shapes; IREE: iree-import-onnx + iree-compile of a static-shape copy; TVM:
  from_onnx + relax.build of a static-shape copy, in a subprocess). Artifacts are cached in the work
  directory keyed by the model, shape and tool; a cached artifact reports the time measured when
  it was built;
- peak memory: peak RSS (VmHWM; for relaxc GNU time's %M) of the timed subprocess at 1 thread (for
  the Python peers this includes the interpreter and the imported runtime); relaxc additionally
  reports `relaxc run --memory`'s peak of live tensor bytes;
- kernel calls: kernels and VM builtins one inference executes (`relaxc run --repeat 1 --profile`
  at 1 thread, parsed by relaxc_profile.py).

A peer that cannot be installed, imported, compiled or run for a row is reported as "n/a: <reason>".
"""
import argparse
import datetime
import hashlib
import importlib.metadata
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

import safe_write
from perf_rows import ROW_SETS, Row, make_rows, spec_feeds
from ort_reference import sanitize  # noqa: E402,I100  test/models, on sys.path via perf_rows: output file names
from relaxc_profile import call_counts, parse_profile
from peers import PEER_PACKAGES, RSS_MARK, drop_shape_casts, fail_reason, iree_compile, make_runner, peak_rss_kb, \
    run_child, short_reason, time_calls, tvm_build

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
ENGINES = ["relaxc", "ort", "openvino", "iree", "tvm"]
LABEL = {"relaxc": "relaxc", "ort": "onnxruntime", "openvino": "OpenVINO (f32)", "iree": "IREE llvm-cpu",
         "tvm": "TVM Relax (untuned)",
         "numpy": "numpy/OpenBLAS"}
THREADS = (1, 2)


# ------------------------------------------------------------------------------------------------
# Workers (fresh subprocesses)
# ------------------------------------------------------------------------------------------------

def openblas_kernel():
    """The core name OpenBLAS chose for this CPU (e.g. "Cooperlake", "SkylakeX", "Zen"), read from the
    OpenBLAS library numpy loaded; "unknown" when it cannot be found."""
    import ctypes
    paths = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            if "openblas" in line.lower() and line.split()[-1].startswith("/"):
                paths.add(line.split()[-1])
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for sym in ("openblas_get_corename", "openblas_get_corename64_"):
            fn = getattr(lib, sym, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return fn().decode()
    return "unknown"


def worker_main(args):
    """Times one peer engine on one row; prints one JSON line."""
    spec = json.loads(args.spec)
    inputs = [(name, np.load(path)) for name, path in spec["inputs"]]
    t0 = time.perf_counter()
    if args.worker == "numpy":
        a, b = inputs[0][1], inputs[1][1]
        fn = lambda: a @ b  # noqa: E731
    else:
        fn = make_runner(args.worker, spec["artifact"], inputs, args.threads)
    out = np.asarray(fn())  # first call: also the warm-up
    init_s = time.perf_counter() - t0
    if spec.get("output"):
        np.save(spec["output"], out)
    times = time_calls(fn, spec["warmup"] - 1, spec["runs"], spec["min_seconds"], spec["max_seconds"])
    res = {"median_ms": statistics.median(times), "n": len(times), "init_s": init_s}
    if args.worker == "numpy":
        res["blas_kernel"] = openblas_kernel()
    print(json.dumps(res))
    print(RSS_MARK + str(peak_rss_kb()))
    return 0


def tvm_compile_main(args):
    spec = json.loads(args.spec)
    print(json.dumps({"target": tvm_build(spec["onnx"], spec["shapes"], spec["dtypes"], spec["output"])}))
    return 0
from perf_report import (ISA_FLAGS, SECTION_BEGIN, SECTION_END, cpu_info, cpu_key, file_sha,  # noqa: E402,F401
                         fmt_load, fmt_mib, fmt_ms, fmt_size, loadavg, merge_report)

# ------------------------------------------------------------------------------------------------
# Orchestrator
# ------------------------------------------------------------------------------------------------


class Perf:
    def __init__(self, args):
        self.args = args
        self.work = os.path.abspath(args.workdir)
        os.makedirs(self.work, exist_ok=True)
        self.rows = make_rows(args.set, args)
        self.engines = args.engines
        self.compiled = {}   # (engine, row.key) -> {"artifact", "seconds", "size", "note", "cached"} or {"na"}
        self.xpaths = {}     # row.key -> [(name, npy path)]
        self.cells = {}      # (row.key, threads, engine) -> {"ms": [..], "ratio": [..], "rss": [..], ...} or {"na"}
        self.relax_k = {}    # (row.key, threads) -> K
        self.relax_mem = {}  # row.key -> live peak bytes
        self.relax_calls = {}  # row.key -> (kernel calls, VM builtin calls) per inference
        self.first_output = {}  # row.key -> name of the model's first graph output
        self.outputs = {}    # (row.key, threads, engine) -> npy path
        self.notes = []
        self.round_loads = []
        self.built = {}      # compile-cache metadata path -> metadata, for artifacts built in this run
        self.matmul = None
        self.blas_kernel = None
        self.versions = {}
        self.relaxc_sha = file_sha(args.relaxc)

    def log(self, msg):
        print(f"[perf] {msg}", file=sys.stderr, flush=True)

    def self_cmd(self, *extra):
        return [sys.executable, os.path.abspath(__file__), *extra]

    # --- inputs and static models ------------------------------------------------------------------
    def model_inputs(self, row):
        """[(name, dtype str)] of the model's real inputs in graph order."""
        import onnx
        from onnx import helper
        m = onnx.load(row.model, load_external_data=False)
        inits = {i.name for i in m.graph.initializer}
        res = []
        for i in m.graph.input:
            if i.name in inits:
                continue
            dt = helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type)
            res.append((i.name, np.dtype(dt).name))
        return res

    def model_outputs(self, row):
        """Names of the model's graph outputs, in order."""
        import onnx
        return [o.name for o in onnx.load(row.model, load_external_data=False).graph.output]

    def make_inputs(self, row):
        paths = []
        rng = np.random.RandomState(0)
        feeds = spec_feeds(row) if row.spec else {}
        for name, dt in self.model_inputs(row):
            if name not in row.inputs:
                raise RuntimeError(f"model input {name} has no shape in the row definition")
            shape = row.inputs[name]
            if name in feeds:  # the suite's generator (extended set)
                x = feeds[name].astype(dt)
            elif dt.startswith("float"):
                x = rng.uniform(-1.0, 1.0, size=shape).astype(dt)
            elif "mask" in name:
                x = np.ones(shape, dtype=dt)
            elif "type" in name:
                x = np.zeros(shape, dtype=dt)
            else:  # token ids: BERT vocabulary
                x = rng.randint(0, 30522, size=shape).astype(dt)
            p = os.path.join(self.work, f"in_{row.key}_{name}.npy")
            np.save(p, x)
            paths.append((name, p))
        self.xpaths[row.key] = paths

    def static_onnx(self, row, for_tvm):
        """A copy of the model with the row's input shapes fixed (TVM: shape Casts dropped too)."""
        import onnx
        p = os.path.join(self.work, f"static_{row.key}{'_tvm' if for_tvm else ''}.onnx")
        m = onnx.load(row.model)
        for i in m.graph.input:
            if i.name in row.inputs:
                for d, v in zip(i.type.tensor_type.shape.dim, row.inputs[i.name]):
                    d.ClearField("dim_param")
                    d.dim_value = v
        note = ""
        if for_tvm:
            n = drop_shape_casts(m)
            note = f"{n} shape Casts removed" if n else ""
        onnx.save(m, p)
        return p, note

    # --- compile (cached) ------------------------------------------------------------------------------
    def cached(self, engine, key_parts, build):
        """Runs build() -> (artifact, seconds, note) unless a matching artifact is cached."""
        key = hashlib.sha256(json.dumps(key_parts, sort_keys=True).encode()).hexdigest()[:16]
        meta_path = os.path.join(self.work, f"compile_{engine}_{key}.json")
        if meta_path in self.built:  # built earlier in this run (e.g. the same model at another shape)
            return self.built[meta_path]
        if os.path.exists(meta_path) and not self.args.no_cache:
            with open(meta_path) as f:
                meta = json.load(f)
            if "na" in meta or os.path.exists(meta.get("artifact", "")):
                meta["cached"] = True
                return meta
        la = loadavg()
        try:
            art, secs, note = build(key)
            meta = {"artifact": art, "seconds": secs, "size": os.path.getsize(art), "note": note,
                    "load": la[0], "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M")}
        except Exception as e:
            meta = {"na": short_reason(str(e))}
        safe_write.write_text(meta_path, json.dumps(meta))
        meta["cached"] = False
        self.built[meta_path] = meta
        return meta

    def compile_relaxc(self, row):
        def build(key):
            out = os.path.join(self.work, f"relaxc_{key}.so")
            rc, text, secs, _ = run_child([self.args.relaxc, "compile", row.model, "-o", out],
                                          timeout=self.args.compile_timeout)
            if rc != 0 or not os.path.exists(out):
                raise RuntimeError("relaxc compile failed: " + fail_reason(rc or 1, text))
            return out, secs, "original ONNX (dynamic dims), one artifact for all shapes"
        return self.cached("relaxc", ["relaxc", self.relaxc_sha, file_sha(row.model)], build)

    def compile_iree(self, row):
        def build(key):
            src, _ = self.static_onnx(row, for_tvm=False)
            out = os.path.join(self.work, f"iree_{key}.vmfb")
            secs = iree_compile(src, out, opset=17, timeout=self.args.compile_timeout)
            return out, secs, "static shape, imported at opset 17"
        ver = self.versions.get("iree-base-compiler")
        return self.cached("iree", ["iree", ver, file_sha(row.model), row.inputs], build)

    def compile_tvm(self, row):
        def build(key):
            src, note = self.static_onnx(row, for_tvm=True)
            out = os.path.join(self.work, f"tvm_{key}.so")
            dtypes = dict(self.model_inputs(row))
            spec = {"onnx": src, "shapes": {k: list(v) for k, v in row.inputs.items()},
                    "dtypes": {k: dtypes[k] for k in row.inputs}, "output": out}
            rc, text, secs, _ = run_child(self.self_cmd("--tvm-compile", "--spec", json.dumps(spec)),
                                          timeout=self.args.compile_timeout)
            if rc != 0:
                raise RuntimeError("TVM compile failed: " + fail_reason(rc if rc is not None else 1, text))
            target = json.loads(text.strip().splitlines()[-1])["target"]
            return out, secs, f"static shape, {target}, default pipeline" + (f"; {note}" if note else "")
        ver = self.versions.get("apache-tvm")
        return self.cached("tvm", ["tvm", ver, file_sha(row.model), row.inputs], build)

    def compile_all(self):
        have = {"iree": self.versions.get("iree-base-compiler") != "not installed"
                and self.versions.get("iree-base-runtime") != "not installed",
                "tvm": self.versions.get("apache-tvm") != "not installed"}
        fns = {"relaxc": self.compile_relaxc, "iree": self.compile_iree, "tvm": self.compile_tvm}
        for row in self.rows:
            if not os.path.exists(row.model):
                for e in self.engines:
                    self.compiled[(e, row.key)] = {"na": f"model file not found: {row.model}"}
                continue
            self.make_inputs(row)
            self.first_output[row.key] = self.model_outputs(row)[0]
            for e in self.engines:
                if e in ("ort", "openvino"):  # both load the ONNX file itself
                    if e == "openvino" and self.versions.get("openvino") == "not installed":
                        self.compiled[(e, row.key)] = {"na": "openvino not installed in this venv"}
                    else:
                        self.compiled[(e, row.key)] = {"artifact": row.model, "size": None}
                    continue
                if e in have and not have[e]:
                    pkg = "iree-base-compiler/runtime" if e == "iree" else "apache-tvm"
                    self.compiled[(e, row.key)] = {"na": f"{pkg} not installed in this venv"}
                    continue
                self.log(f"compile {e} {row.key}")
                c = fns[e](row)
                self.compiled[(e, row.key)] = c
                self.log(f"  -> " + (f"n/a: {c['na']}" if "na" in c else
                                     f"{c['seconds']:.1f} s{' (cached)' if c['cached'] else ''}, {fmt_size(c['size'])}"))

    # --- measurement -------------------------------------------------------------------------------
    def relaxc_cmd(self, art, inputs, repeat, extra=()):
        cmd = [self.args.relaxc, "run", art, "--repeat", str(repeat), *extra]
        for name, p in inputs:
            cmd += ["--input", f"{name}={p}"]
        return cmd

    @staticmethod
    def parse_relaxc(text):
        m = re.search(r"median ([0-9.]+) ms", text)
        if not m:
            raise RuntimeError("relaxc run printed no median: " + short_reason(text))
        mem = re.search(r"memory: peak (\d+) bytes", text)
        return float(m.group(1)), (int(mem.group(1)) if mem else None)

    def relaxc_env(self, threads):
        env = dict(os.environ)
        env["RELAX_NUM_THREADS"] = str(threads)
        return env

    def calibrate_relaxc(self, key, art, inputs, threads):
        """One untimed `relaxc run --memory -o DIR`: output for the diff, live peak, and K."""
        outdir = os.path.join(self.work, f"out_relaxc_{key}_{threads}")
        shutil.rmtree(outdir, ignore_errors=True)
        rc, text, _, _ = run_child(self.relaxc_cmd(art, inputs, 2, ("--memory", "--output-dir", outdir)),
                                   env=self.relaxc_env(threads), timeout=self.args.run_timeout)
        if rc != 0:
            raise RuntimeError("relaxc run failed: " + fail_reason(rc if rc is not None else 1, text))
        ms, mem = self.parse_relaxc(text)
        outs = sorted(f for f in os.listdir(outdir) if f.endswith(".npy"))
        if not outs:
            raise RuntimeError("relaxc run --output-dir wrote no .npy")
        # The peers' first output is the graph's first: pick its file.
        first = sanitize(self.first_output.get(key, "")) + ".npy"
        self.outputs[(key, threads, "relaxc")] = os.path.join(outdir, first if first in outs else outs[0])
        if threads == 1:
            self.relax_mem[key] = mem
            self.count_calls(key, art, inputs)
        self.relax_k[(key, threads)] = self.runs_for(ms)

    def count_calls(self, key, art, inputs):
        """Kernel and VM builtin calls of one inference (`relaxc run --repeat 1 --profile`)."""
        rc, text, _, _ = run_child(self.relaxc_cmd(art, inputs, 1, ("--profile",)), env=self.relaxc_env(1),
                                   timeout=self.args.run_timeout)
        rows = parse_profile(text) if rc == 0 else {}
        if rows:
            self.relax_calls[key] = call_counts(rows)

    def runs_for(self, ms):
        """Timed calls per measurement: about --cell-seconds worth, 3..--max-runs."""
        return int(min(self.args.max_runs, max(3, math.ceil(self.args.cell_seconds * 1e3 / max(ms, 1e-3)))))

    def measure(self, key, threads, engine, art, inputs, first):
        """One timed subprocess; returns (median ms, peak RSS KiB, init seconds or None)."""
        if engine == "relaxc":
            # K runs, the first of them cold: the median of K >= 3 is not moved by it.
            k = self.relax_k[(key, threads)] + 1
            rc, text, _, rss = run_child(self.relaxc_cmd(art, inputs, k), env=self.relaxc_env(threads),
                                         timeout=self.args.run_timeout, exact_rss=True)
            if rc != 0:
                raise RuntimeError("relaxc run failed: " + fail_reason(rc if rc is not None else 1, text))
            return self.parse_relaxc(text)[0], rss, None
        env = dict(os.environ)
        for v in ("TVM_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env.pop(v, None)
        env["TVM_NUM_THREADS"] = str(threads)
        env["OPENBLAS_NUM_THREADS"] = str(threads)
        outp = os.path.join(self.work, f"out_{engine}_{key}_{threads}.npy") if first else None
        spec = {"artifact": art, "inputs": inputs, "output": outp, "warmup": 1, "runs": min(self.args.max_runs, 3),
                "min_seconds": self.args.cell_seconds, "max_seconds": 3 * self.args.cell_seconds}
        rc, text, _, rss = run_child(self.self_cmd("--worker", engine, "--threads", str(threads),
                                                   "--spec", json.dumps(spec)),
                                     env=env, timeout=self.args.run_timeout)
        if rc != 0:
            raise RuntimeError(fail_reason(rc if rc is not None else 1, text))
        res = json.loads([l for l in text.strip().splitlines() if l.startswith("{")][-1])
        if res.get("blas_kernel"):
            self.blas_kernel = res["blas_kernel"]
        if outp:
            self.outputs[(key, threads, engine)] = outp
        return res["median_ms"], rss, res["init_s"]

    def cell_list(self):
        """[(key, threads, engines, artifacts, inputs)] in measurement order."""
        cells = []
        for row in self.rows:
            if row.key not in self.xpaths:
                continue
            for t in THREADS:
                arts = {e: self.compiled[(e, row.key)].get("artifact") for e in self.engines}
                cells.append((row.key, t, list(self.engines), arts, self.xpaths[row.key]))
        if self.matmul:
            for t in THREADS:
                cells.append(("matmul", t, ["relaxc", "numpy"], {"relaxc": self.matmul["artifact"], "numpy": None},
                              self.matmul["inputs"]))
        return cells

    def prepare_matmul(self):
        self.matmul = None
        if self.args.skip_matmul:
            return
        saved = dict(os.environ)
        try:
            import bench_matmul  # sets OPENBLAS/OMP/RELAX_NUM_THREADS=1 at import; restored below
        finally:
            os.environ.clear()
            os.environ.update(saved)
        n = self.args.matmul_n
        onnx_path = os.path.join(self.work, f"matmul_{n}.onnx")
        bench_matmul.build_model(n, n, n, onnx_path)
        rng = np.random.default_rng(0)
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        pa, pb = os.path.join(self.work, "mm_a.npy"), os.path.join(self.work, "mm_b.npy")
        np.save(pa, a)
        np.save(pb, b)
        row = Row("matmul", f"MatMul {n}^3 fp32", onnx_path, {"a": (n, n), "b": (n, n)})
        c = self.compile_relaxc(row)
        self.compiled[("relaxc", "matmul")] = c
        if "na" in c:
            self.notes.append(f"matmul: relaxc n/a: {c['na']}")
            return
        self.matmul = {"artifact": c["artifact"], "inputs": [("a", pa), ("b", pb)], "row": row}

    def measure_all(self):
        cells = self.cell_list()
        # Calibration (untimed): relaxc outputs, live-memory peak and K per cell.
        for key, t, engines, arts, inputs in cells:
            if "relaxc" in engines:
                c = self.compiled[("relaxc", key)]
                if "na" in c:
                    self.cells[(key, t, "relaxc")] = {"na": c["na"]}
                    continue
                try:
                    self.calibrate_relaxc(key, arts["relaxc"], inputs, t)
                except Exception as e:
                    self.cells[(key, t, "relaxc")] = {"na": short_reason(str(e))}
        for key, t, engines, arts, inputs in cells:
            for e in engines:
                c = self.compiled.get((e, key), {})
                if "na" in c and (key, t, e) not in self.cells:
                    self.cells[(key, t, e)] = {"na": c["na"]}
        for r in range(self.args.rounds):
            la = loadavg()
            self.round_loads.append(la[0])
            self.log(f"round {r + 1}/{self.args.rounds} (load {fmt_load(la)})")
            for key, t, engines, arts, inputs in cells:
                order = engines[r % len(engines):] + engines[:r % len(engines)]
                for e in order:
                    cell = self.cells.setdefault((key, t, e), {"ms": [], "rss": [], "init": [], "round": []})
                    if "na" in cell:
                        continue
                    try:
                        ms, rss, init = self.measure(key, t, e, arts[e], inputs, first=not cell["ms"])
                    except Exception as ex:
                        self.cells[(key, t, e)] = {"na": short_reason(str(ex))}
                        self.log(f"  {key} t={t} {e}: n/a: {self.cells[(key, t, e)]['na']}")
                        continue
                    cell["ms"].append(ms)
                    cell["rss"].append(rss)
                    cell["round"].append(r)
                    if init is not None:
                        cell["init"].append(init)
                line = "  ".join(f"{e} {fmt_ms(self.cells[(key, t, e)]['ms'][-1])}"
                                 if self.cells[(key, t, e)].get("ms") else f"{e} n/a" for e in engines)
                self.log(f"  {key} t={t}: {line}")

    # --- results -----------------------------------------------------------------------------------
    def ratio(self, key, t, e, base):
        """Median over rounds of ms(e) / ms(base), rounds where both ran."""
        a, b = self.cells.get((key, t, e), {}), self.cells.get((key, t, base), {})
        if not a.get("ms") or not b.get("ms"):
            return None
        bm = dict(zip(b["round"], b["ms"]))
        rs = [m / bm[r] for r, m in zip(a["round"], a["ms"]) if r in bm]
        return statistics.median(rs) if rs else None

    def maxdiff(self, key, e, base):
        diffs = []
        for t in THREADS:
            pa, pb = self.outputs.get((key, t, e)), self.outputs.get((key, t, base))
            if pa and pb:
                x, y = np.load(pa).astype(np.float64), np.load(pb).astype(np.float64)
                if x.shape != y.shape:
                    return f"shape {x.shape} vs {y.shape}"
                diffs.append(float(np.max(np.abs(x - y))) if x.size else 0.0)
        return f"{max(diffs):.1e}" if diffs else "—"

    def collect_versions(self):
        v = {}
        for pkg in PEER_PACKAGES:
            try:
                v[pkg] = importlib.metadata.version(pkg)
            except importlib.metadata.PackageNotFoundError:
                v[pkg] = "not installed"
        self.versions = v
        try:
            rev = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                                 text=True).stdout.strip()
            dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True).stdout.strip()
            self.relaxc_version = f"git {rev}{' + uncommitted changes in the tree' if dirty else ''}"
        except OSError:
            self.relaxc_version = "unknown"

    def summary(self, ref="ort", rows=None):
        """{threads: (geomean, n, (max ratio, row label))} of relaxc/`ref` over the model rows
        (or over `rows`)."""
        res = {}
        for t in THREADS:
            rs = []
            for row in self.rows if rows is None else rows:
                r = self.ratio(row.key, t, "relaxc", ref)
                if r is not None:
                    rs.append((r, f"{row.name} {row.shape}"))
            if rs:
                gm = math.exp(sum(math.log(r) for r, _ in rs) / len(rs))
                res[t] = (gm, len(rs), max(rs))
        return res

    def render_header(self):
        rs = ROW_SETS[self.args.set]
        if self.args.set == "core":
            what = ("<!-- docs/performance.md: relaxc vs onnxruntime, OpenVINO, IREE and TVM side by side (latency, "
                    "accuracy, compile time, size, memory), one section per CPU; generated by benchmarks/bench_perf.py, "
                    "do not edit by hand. -->")
            how = ["Reproduce (one command, from the repository root; about 10 min, plus about 5 min the first time, "
                   "to compile every artifact):", "", "```sh",
                   "bash benchmarks/perf.sh            # = bench venv + bench_perf.py --rounds 5, writes this file",
                   "```"]
        else:
            what = (f"<!-- {rs.doc}: relaxc vs onnxruntime and OpenVINO on the {self.args.set} row set "
                    "(benchmarks/perf_rows.py: latency, kernel calls, compile time, accuracy, memory), one section per "
                    "CPU; generated by benchmarks/bench_perf.py --set " + self.args.set + ", do not edit by hand. -->")
            how = ["Reproduce (from the repository root, after `bash scripts/export_models.sh`; about 11 min at "
                   "--rounds 5 and 7 min at --rounds 3 on 2 cores, plus about 1.5 min the first time to compile every "
                   "artifact):", "", "```sh",
                   f"bash benchmarks/perf.sh --set {self.args.set}    # = bench venv + bench_perf.py --set "
                   f"{self.args.set} --rounds 5, writes this file",
                   "```"]
        return [
            what,
            f"# {rs.title}",
            "",
            *how,
            "",
            "One section per CPU (model name and ISA extensions) the benchmark has run on, newest run first. "
            "A run replaces only its own CPU's section; the others stay as they were, each with its date, "
            "so compare numbers within a section.",
        ]

    def render_dispatch_summary(self):
        """Summary lines on the dispatch-bound rows (perf_rows.Row.dispatch_bound): each row's
        ratios and kernel calls, and the geometric mean over the other rows."""
        small = [r for r in self.rows if r.dispatch_bound]
        if not small:
            return []
        L = []
        rest = self.summary(rows=[r for r in self.rows if not r.dispatch_bound])
        if rest:
            L.append("- without the dispatch-bound rows: geometric mean of relaxc / onnxruntime "
                     + ", ".join(f"**{gm:.2f}** at {t} thread{'s' if t > 1 else ''} ({n} row{'s' if n > 1 else ''})"
                                 for t, (gm, n, _) in sorted(rest.items())))
        L.append("- dispatch-bound rows (small models: many short kernels, so per-call and VM overhead decide):")
        for row in small:
            parts = []
            for t in THREADS:
                c = self.cells.get((row.key, t, "relaxc"), {})
                r = self.ratio(row.key, t, "relaxc", "ort")
                if c.get("ms") and r is not None:
                    parts.append(f"{fmt_ms(statistics.median(c['ms']))} ms = {r:.2f}x onnxruntime at {t} "
                                 f"thread{'s' if t > 1 else ''}")
            calls = self.relax_calls.get(row.key)
            if calls:
                parts.append(f"{calls[0]} kernel calls + {calls[1]} VM builtin calls per inference")
            L.append(f"  - {row.name} ({row.shape}): " + ("; ".join(parts) if parts else "not measured"))
        return L

    def render_calls(self):
        """Per row: relaxc's kernel and VM builtin calls per inference, compile seconds and the
        1-thread time per kernel call."""
        L = ["", "### relaxc kernel calls and compile time", "",
             "Calls one inference executes (`relaxc run --repeat 1 --profile`, 1 thread): kernels (call_tir "
             "and library calls) and VM builtins (allocation, shape checks, tuples). Compile: wall clock "
             "seconds of `relaxc compile` of the original ONNX (one artifact for all shapes). us / call: the "
             "1-thread median divided by the kernel calls.", "",
             "| model | shape | kernel calls | VM builtin calls | relaxc compile (s) | relaxc ms (1 thread) "
             "| us / kernel call |",
             "|---|---|---:|---:|---:|---:|---:|"]
        for row in self.rows:
            calls = self.relax_calls.get(row.key)
            c = self.compiled.get(("relaxc", row.key), {})
            comp = "n/a" if "na" in c or "seconds" not in c else f"{c['seconds']:.1f}" + ("*" if c.get("cached") else "")
            cell = self.cells.get((row.key, 1, "relaxc"), {})
            ms = statistics.median(cell["ms"]) if cell.get("ms") else None
            per = f"{1e3 * ms / calls[0]:.1f}" if ms and calls and calls[0] else "—"
            L.append(f"| {row.name} | {row.shape} | {calls[0] if calls else '—'} | {calls[1] if calls else '—'} | "
                     f"{comp} | {fmt_ms(ms) if ms else '—'} | {per} |")
        return L

    def render(self, la_before, la_after, started, wall):
        """This CPU's section of docs/performance.md (merge_report puts it in the file)."""
        a = self.args
        cpu = cpu_info()
        key = cpu_key(cpu)
        L = [SECTION_BEGIN + key + " -->", f"## {key}", ""]
        built = sum(c.get("seconds", 0) for c in self.compiled.values() if c.get("cached") is False)
        L.append(f"- date: {started.strftime('%Y-%m-%d %H:%M %Z')}, wall time {wall / 60:.1f} min "
                 f"({built / 60:.0f} min of it compiling)")
        flags = set(cpu.get("Flags", "").split())
        L.append("- ISA extensions: " + (" ".join(f for f in ISA_FLAGS if f in flags) or "none of "
                                          + " ".join(ISA_FLAGS)))
        L.append(f"- machine: {cpu.get('Model name', platform.processor() or 'unknown')}, "
                 f"{cpu.get('CPU(s)', os.cpu_count())} CPUs ({cpu.get('Core(s) per socket', '?')} cores/socket x "
                 f"{cpu.get('Socket(s)', '?')} socket, {cpu.get('Thread(s) per core', '?')} thread/core), "
                 f"{platform.system()} {platform.machine()}; shared with other work")
        L.append(f"- load average (1/5/15 min) before measuring: {fmt_load(la_before)}; after: {fmt_load(la_after)}; "
                 f"1-min load at the start of each round: {', '.join(f'{x:.2f}' for x in self.round_loads)}")
        L.append(f"- relaxc: {self.relaxc_version} (binary sha256 {self.relaxc_sha}); "
                 + ", ".join(f"{k} {v}" for k, v in self.versions.items()) + f", python {platform.python_version()}")
        L.append(f"- method: {a.rounds} interleaved rounds; each round times every (row, threads, engine) cell once "
                 "in a fresh subprocess, engine order rotated by one per round. A cell is the median of "
                 f"about {a.cell_seconds:g} s of calls (3..{a.max_runs}) after a warm-up call (relaxc: "
                 "`relaxc run --repeat K`'s printed median, K+1 runs). Time = median over rounds; ratio = median "
                 "of the per-round ratios to onnxruntime at the same thread count (< 1 = faster than onnxruntime).")
        L.append("- threads: relaxc `RELAX_NUM_THREADS`, onnxruntime `intra_op_num_threads` (inter-op 1), "
                 "OpenVINO `INFERENCE_NUM_THREADS` (with `INFERENCE_PRECISION_HINT=f32`, `NUM_STREAMS=1`, "
                 "`PERFORMANCE_HINT=LATENCY`), TVM `TVM_NUM_THREADS`, IREE `local-sync` driver at 1 thread and `local-task` (IREE's own "
                 "worker pool, sized by its topology detection) at 2, numpy `OPENBLAS_NUM_THREADS`.")
        L.append("- inputs: " + ROW_SETS[a.set].inputs_text)
        L.append("")
        L.append("### Summary")
        L.append("")
        summ = self.summary()
        for t in THREADS:
            if t in summ:
                gm, n, (mx, lab) = summ[t]
                L.append(f"- {t} thread{'s' if t > 1 else ''}: geometric mean of relaxc / onnxruntime over {n} model "
                         f"rows **{gm:.2f}**; max row ratio {mx:.2f} ({lab})")
            else:
                L.append(f"- {t} thread{'s' if t > 1 else ''}: no relaxc / onnxruntime ratio measured")
        if "openvino" in self.engines:
            for t, (gm, n, (mx, lab)) in sorted(self.summary("openvino").items()):
                L.append(f"- {t} thread{'s' if t > 1 else ''}: geometric mean of relaxc / OpenVINO over {n} model "
                         f"rows **{gm:.2f}**; max row ratio {mx:.2f} ({lab})")
        L += self.render_dispatch_summary()
        mm = [(t, self.ratio("matmul", t, "relaxc", "numpy")) for t in THREADS]
        if self.matmul and any(r for _, r in mm):
            L.append(f"- matmul 1024^3 fp32, relaxc / numpy (OpenBLAS, kernel {self.blas_kernel or 'not reported'}) "
                     "time: " + ", ".join(f"{r:.2f} at {t} thread{'s' if t > 1 else ''}" for t, r in mm if r))
        L.append("")
        L.append("### Latency")
        L.append("")
        L.append("Median ms (ratio to onnxruntime at the same thread count).")
        L.append("")
        hdr = "| model | shape | threads | " + " | ".join(LABEL[e] for e in self.engines) + " |"
        L.append(hdr)
        L.append("|---|---|---:|" + "---:|" * len(self.engines))
        na_notes = {}

        def cell_text(key, t, e, base):
            c = self.cells.get((key, t, e), {})
            if "na" in c:
                na_notes.setdefault(c["na"], len(na_notes) + 1)
                return f"n/a: {c['na'] if len(c['na']) <= 40 else c['na'][:37] + '...'} [{na_notes[c['na']]}]"
            if not c.get("ms"):
                return "—"
            txt = fmt_ms(statistics.median(c["ms"]))
            if e != base:
                r = self.ratio(key, t, e, base)
                txt += f" ({r:.2f}x)" if r is not None else ""
            return txt

        for row in self.rows:
            for t in THREADS:
                L.append(f"| {row.name} | {row.shape} | {t} | "
                         + " | ".join(cell_text(row.key, t, e, "ort") for e in self.engines) + " |")
        L += self.render_calls()
        L.append("")
        L.append("### Accuracy, compile time, artifact size, memory")
        L.append("")
        L.append("Max abs diff of the first output vs onnxruntime (same input, both thread counts). Compile: wall "
                 "clock seconds (onnxruntime and OpenVINO: median session creation + first run, in brackets). Size: relaxc `.so`, "
                 "IREE `.vmfb`, TVM `.so`; onnxruntime runs the `.onnx` file itself. Memory: peak RSS (VmHWM) of the timed "
                 "subprocess at 1 thread (max over rounds; Python peers include the interpreter, numpy and the "
                 "runtime library); relaxc also `relaxc run --memory`'s peak of live tensor bytes.")
        L.append("")
        L.append("| model | shape | engine | max abs diff | compile (s) | artifact | peak RSS | notes |")
        L.append("|---|---|---|---:|---:|---:|---:|---|")
        cached_any = False
        for row in self.rows:
            for e in self.engines:
                c = self.compiled.get((e, row.key), {})
                c1 = self.cells.get((row.key, 1, e), {})
                if "na" in c:
                    na_notes.setdefault(c["na"], len(na_notes) + 1)
                    L.append(f"| {row.name} | {row.shape} | {LABEL[e]} | — | n/a | — | — | [{na_notes[c['na']]}] |")
                    continue
                diff = "(reference)" if e == "ort" else self.maxdiff(row.key, e, "ort")
                if e in ("ort", "openvino"):  # both load the .onnx file: session creation + first run
                    comp = f"({statistics.median(c1['init']):.2f})" if c1.get("init") else "—"
                    size = fmt_size(os.path.getsize(row.model)) + " (.onnx)"
                else:
                    comp = f"{c['seconds']:.1f}" + ("*" if c.get("cached") else "")
                    cached_any |= bool(c.get("cached"))
                    size = fmt_size(c["size"])
                rss = fmt_mib(max(c1["rss"])) if c1.get("rss") else "—"
                if e == "relaxc" and self.relax_mem.get(row.key) is not None:
                    rss += f"; live {self.relax_mem[row.key] / 2**20:.1f} MiB"
                note = c.get("note", "")
                L.append(f"| {row.name} | {row.shape} | {LABEL[e]} | {diff} | {comp} | {size} | {rss} | {note} |")
        if cached_any:
            L.append("")
            when = [c for c in self.compiled.values() if c.get("cached") and "date" in c]
            L.append("\\* artifact reused from the benchmark cache (same model, shape and tool build); the compile "
                     "time is the one measured when it was built (" + min(c["date"] for c in when) + " to "
                     + max(c["date"] for c in when) + f", 1-min load {min(c['load'] for c in when):.1f} to "
                     f"{max(c['load'] for c in when):.1f}).")
        if self.matmul:
            L.append("")
            L.append(f"### MatMul {a.matmul_n}^3 fp32 vs numpy (OpenBLAS)")
            L.append("")
            L.append("One-node ONNX MatMul, both operands graph inputs (nothing packed at compile time), built by "
                     "`benchmarks/bench_matmul.py`'s `build_model`; numpy times `a @ b` in a fresh worker with "
                     "`OPENBLAS_NUM_THREADS` = threads; OpenBLAS's kernel for this CPU (`openblas_get_corename`): "
                     f"{self.blas_kernel or 'not reported'}.")
            L.append("")
            L.append("| threads | relaxc ms | numpy ms | relaxc GFLOP/s | numpy GFLOP/s | relaxc / numpy time |")
            L.append("|---:|---:|---:|---:|---:|---:|")
            flop = 2.0 * a.matmul_n ** 3
            for t in THREADS:
                cr, cn = self.cells.get(("matmul", t, "relaxc"), {}), self.cells.get(("matmul", t, "numpy"), {})
                if not cr.get("ms") or not cn.get("ms"):
                    L.append(f"| {t} | {cell_text('matmul', t, 'relaxc', 'numpy')} | "
                             f"{cell_text('matmul', t, 'numpy', 'numpy')} | — | — | — |")
                    continue
                mr, mn = statistics.median(cr["ms"]), statistics.median(cn["ms"])
                L.append(f"| {t} | {fmt_ms(mr)} | {fmt_ms(mn)} | {flop / mr / 1e6:.1f} | {flop / mn / 1e6:.1f} | "
                         f"{self.ratio('matmul', t, 'relaxc', 'numpy'):.2f} |")
            c = self.compiled[("relaxc", "matmul")]
            diff = self.maxdiff("matmul", "relaxc", "numpy")
            L.append("")
            L.append(f"relaxc compile {c['seconds']:.1f} s{'*' if c.get('cached') else ''}, artifact "
                     f"{fmt_size(c['size'])}; max abs diff vs numpy {diff} (|values| up to ~{4 * math.sqrt(a.matmul_n):.0f}).")
        if na_notes:
            L.append("")
            L.append("### n/a reasons")
            L.append("")
            for reason, i in sorted(na_notes.items(), key=lambda kv: kv[1]):
                L.append(f"{i}. {reason}")
        L.append("")
        L.append("### Caveats")
        L.append("")
        L.append("- The machine is shared and has 2 cores: check the load averages above; differences under "
                 "~10 % are noise, and the 2-thread rows suffer most from other work.")
        L.append("- IREE and TVM get a static-shape copy of each model (TVM's frontend needs it), OpenVINO the "
                 "original reshaped to the row's shapes; relaxc and onnxruntime run the original model with its "
                 "dynamic dimensions.")
        L.append("- TVM is untuned (default Relax pipeline, no MetaSchedule); tuned TVM would be faster.")
        L.append("- onnxruntime runs with its default graph optimisations.")
        ncpu = os.cpu_count() or 1
        if self.round_loads and max(self.round_loads) >= ncpu:
            L.append(f"- In this run the 1-min load reached {max(self.round_loads):.1f} on {ncpu} CPUs (other work on "
                     "the machine): the 2-thread cells competed for cores, so treat the 2-thread numbers (and "
                     "any row where an engine is slower at 2 threads than at 1) as contention, not scaling.")
        for n in self.notes:
            L.append(f"- {n}")
        L.append(SECTION_END)
        return L

    def run(self):
        started = datetime.datetime.now().astimezone()
        t0 = time.time()
        self.collect_versions()
        if "ort" not in self.engines:
            raise SystemExit("onnxruntime (ort) is the reference and must be among --engines")
        self.compile_all()
        self.prepare_matmul()
        la_before = loadavg()
        self.log(f"measuring, load {fmt_load(la_before)}")
        self.measure_all()
        la_after = loadavg()
        section = self.render(la_before, la_after, started, time.time() - t0)
        print("\n".join(section))
        summ = self.summary()
        for t, (gm, n, (mx, lab)) in sorted(summ.items()):
            print(f"geomean relaxc/onnxruntime at {t} thread(s) over {n} rows: {gm:.3f}; max {mx:.3f} ({lab})")
        if "openvino" in self.engines:
            for t, (gm, n, (mx, lab)) in sorted(self.summary("openvino").items()):
                print(f"geomean relaxc/OpenVINO at {t} thread(s) over {n} rows: {gm:.3f}; max {mx:.3f} ({lab})")
        if self.args.output:
            old = ""
            if os.path.isfile(self.args.output):
                with open(self.args.output, encoding="utf-8") as f:
                    old = f.read()
            md = merge_report(old, self.render_header(), cpu_key(cpu_info()), section)
            safe_write.write_text(self.args.output, md)
            self.log(f"wrote {self.args.output}")
        return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cache = os.environ.get("RELAX_CACHE", os.path.expanduser("~/.cache/relaxc"))
    ap.add_argument("--relaxc", default=os.path.join(REPO, "build", "tools", "relaxc"))
    ap.add_argument("--cls-model", default=os.environ.get("RELAX_CLS_MODEL", ""))
    ap.add_argument("--model-dir", default=os.environ.get("RELAX_MODEL_DIR", ""),
                    help="directory with ch_PP-OCRv4_det_infer.onnx and ch_PP-OCRv4_rec_infer.onnx")
    ap.add_argument("--export-dir", default=os.environ.get("RELAX_EXPORT_DIR", ""),
                    help="the export cache (scripts/export_models.sh): all_minilm_l6_v2.onnx, resnet18.onnx, "
                         "mobilenet_v2.onnx, and the extended set's models with manifest.json")
    ap.add_argument("--venv", default=os.environ.get("RELAX_VENV", ""),
                    help="core test venv with the silero-vad wheel (extended set's Silero row)")
    ap.add_argument("--set", default="core", choices=sorted(ROW_SETS),
                    help="row set (perf_rows.py): core (docs/performance.md) or extended "
                         "(docs/performance-extended.md)")
    ap.add_argument("--engines", default=None,
                    help="comma list of: " + ",".join(ENGINES) + " (default: the set's; core all five, "
                         "extended relaxc,ort,openvino)")
    ap.add_argument("--rows", default="", help="comma list of row keys of the set to keep (default all); "
                    "--list-rows prints them")
    ap.add_argument("--list-rows", dest="list_rows", action="store_true",
                    help="print the set's row keys, models and shapes, then exit")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cell-seconds", dest="cell_seconds", type=float, default=0.4,
                    help="about this much timed work per measurement")
    ap.add_argument("--max-runs", dest="max_runs", type=int, default=30)
    ap.add_argument("--matmul-n", dest="matmul_n", type=int, default=1024)
    ap.add_argument("--skip-matmul", dest="skip_matmul", action="store_true")
    ap.add_argument("--output", help="write the report here (e.g. docs/performance.md)")
    ap.add_argument("--write-doc", dest="write_doc", action="store_true",
                    help="write the report to the set's file in docs/ (perf.sh passes this)")
    ap.add_argument("--workdir", default=os.path.join(cache, "perf-work"),
                    help="artifacts, inputs and outputs; compiled artifacts are reused across runs")
    ap.add_argument("--no-cache", dest="no_cache", action="store_true", help="recompile everything")
    ap.add_argument("--compile-timeout", dest="compile_timeout", type=float, default=900.0)
    ap.add_argument("--run-timeout", dest="run_timeout", type=float, default=300.0)
    # Internal subprocess modes.
    ap.add_argument("--worker", choices=["ort", "openvino", "iree", "tvm", "numpy"], help=argparse.SUPPRESS)
    ap.add_argument("--tvm-compile", dest="tvm_compile", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--spec", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker_main(args)
    if args.tvm_compile:
        return tvm_compile_main(args)
    rs = ROW_SETS[args.set]
    args.engines = [e for e in args.engines.split(",") if e] if args.engines else list(rs.engines)
    if not rs.matmul:
        args.skip_matmul = True
    if args.write_doc and not args.output:
        args.output = os.path.join(REPO, rs.doc)
    bad = [e for e in args.engines if e not in ENGINES]
    if bad:
        ap.error(f"unknown engines: {bad}")
    if args.rounds < 1:
        ap.error("--rounds must be >= 1 (the report wants >= 5)")
    if args.list_rows:
        for r in make_rows(args.set, args):
            print(f"{r.key}: {r.name} [{r.shape}] {r.model}{' (dispatch-bound)' if r.dispatch_bound else ''}")
        return 0
    if not os.path.exists(args.relaxc):
        ap.error(f"relaxc not found: {args.relaxc}")
    args.relaxc = os.path.abspath(args.relaxc)
    perf = Perf(args)
    if args.rows:
        keep = set(args.rows.split(","))
        unknown = sorted(keep - {r.key for r in perf.rows})
        if unknown:
            ap.error(f"--rows: not in the {args.set} set: {','.join(unknown)} (--list-rows prints its keys)")
        perf.rows = [r for r in perf.rows if r.key in keep]
    return perf.run()


if __name__ == "__main__":
    sys.exit(main())
