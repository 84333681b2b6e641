# Side-by-side latency benchmark of the PP-OCR text-direction classifier: relaxc vs onnxruntime, IREE and TVM.
"""Compile the classifier with relaxc and each peer, wait for a quiet machine, then time every engine
at 1 thread and at the default thread count on a few input shapes, check each output against
onnxruntime, and write a markdown table (printed and saved to RESULTS.md).

Every timed run happens in a fresh subprocess (`--worker ...`), so thread pools and thread-count
environment variables (TVM_NUM_THREADS, RELAX_NUM_THREADS) are set before the engine starts.
A peer that cannot be installed, imported, compiled or run is reported as "n/a: <reason>".
"""
import argparse
import datetime
import glob
import importlib.metadata
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

import safe_write
from peers import drop_shape_casts, fail_reason, make_runner, run_cmd, short_reason, time_calls, tvm_build

# (1, 3, 32, 320) is too small for this model: after five stride-2 stages the height is 1 and the final
# 2x2 MaxPool gives height 0 (onnxruntime 1.19.2 dies with SIGFPE on it). It stays in the list so every
# engine's handling of it is on record; (1, 3, 48, 320) is the nearest valid wide-line shape.
SHAPES = [(1, 3, 48, 192), (8, 3, 48, 192), (1, 3, 32, 320), (1, 3, 48, 320)]
INPUT_NAME = "x"
MISMATCH_TOL = 1e-3  # outputs are softmax probabilities in [0, 1]
ENGINES = ["relaxc", "ort", "iree", "tvm"]
ENGINE_LABEL = {"relaxc": "relaxc", "ort": "onnxruntime", "iree": "IREE (llvm-cpu)", "tvm": "TVM (Relax, llvm)"}


def shape_str(shape):
    return "x".join(str(d) for d in shape)


# ------------------------------------------------------------------------------------------------
# Workers: run in a subprocess, time one engine on one input, print one JSON line
# ------------------------------------------------------------------------------------------------

def worker_main(args):
    x = np.load(args.input)
    engine, threads = args.worker, args.threads
    if engine not in ("ort", "iree", "tvm"):
        raise SystemExit(f"unknown worker engine {engine}")
    fn = make_runner(engine, args.artifact, [(INPUT_NAME, x)], threads)
    out = fn()
    np.save(args.output, np.asarray(out))
    times = time_calls(fn, args.warmup, args.runs, args.min_seconds)
    print(json.dumps({"median_ms": statistics.median(times), "n": len(times),
                      "min_ms": min(times), "max_ms": max(times)}))
    return 0


def tvm_compile_worker(args):
    """Imports the (Cast-cleaned) ONNX with TVM's Relax frontend for one static shape and exports a .so."""
    shape = [int(d) for d in args.shape.split("x")]
    target = tvm_build(args.onnx, {INPUT_NAME: shape}, {INPUT_NAME: "float32"}, args.output)
    print(json.dumps({"target": target}))
    return 0


# ------------------------------------------------------------------------------------------------
# Orchestrator
# ------------------------------------------------------------------------------------------------

class Bench:
    def __init__(self, args):
        self.args = args
        self.work = args.workdir or tempfile.mkdtemp(prefix="relaxc-bench-")
        os.makedirs(self.work, exist_ok=True)
        self.compile = {}    # engine -> {"seconds": float, "note": str} or {"na": reason}
        self.artifacts = {}  # (engine, shape) -> path, or engine -> path for shape-generic artifacts
        self.na = {}         # (engine, shape) -> reason
        self.results = {}    # (engine, shape, threads_label) -> dict or {"na": reason}
        self.versions = {}
        self.notes = []
        self.ref_na = {}     # shape -> why onnxruntime gave no reference output

    def log(self, msg):
        print(f"[bench] {msg}", file=sys.stderr, flush=True)

    def self_cmd(self, *extra):
        return [sys.executable, os.path.abspath(__file__), *extra]

    # --- compile ---------------------------------------------------------------------------------
    def compile_relaxc(self):
        out = os.path.join(self.work, "cls_relaxc.so")
        rc, text, secs = run_cmd([self.args.relaxc, "compile", self.args.model, "-o", out])
        if rc != 0 or not os.path.exists(out):
            self.compile["relaxc"] = {"na": "relaxc compile failed: " + short_reason(text)}
            return
        self.compile["relaxc"] = {"seconds": secs, "note": "one artifact, all shapes"}
        self.artifacts["relaxc"] = out

    def compile_iree(self):
        try:
            import iree.compiler  # noqa: F401  (import check; the CLI tools come from the same wheel)
        except Exception as e:  # pragma: no cover - depends on the venv
            self.compile["iree"] = {"na": "iree-base-compiler not importable: " + short_reason(e)}
            return
        bindir = os.path.dirname(sys.executable)
        imp = shutil.which("iree-import-onnx", path=bindir) or shutil.which("iree-import-onnx")
        comp = shutil.which("iree-compile", path=bindir) or shutil.which("iree-compile")
        if not imp or not comp:
            self.compile["iree"] = {"na": "iree-import-onnx / iree-compile not found"}
            return
        mlir = os.path.join(self.work, "cls_iree.mlir")
        # The model is opset 11; torch-mlir's ONNX lowering has no BatchNormalization for opset < 15,
        # so let the importer upgrade the opset (onnx.version_converter) first.
        rc, text, t_imp = run_cmd([imp, self.args.model, "--opset-version", "17", "-o", mlir])
        if rc != 0:
            self.compile["iree"] = {"na": "iree-import-onnx failed: " + short_reason(text)}
            return
        vmfb = os.path.join(self.work, "cls_iree_dyn.vmfb")
        flags = ["--iree-input-type=onnx", "--iree-hal-target-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"]
        rc, text, t_comp = run_cmd([comp, mlir, *flags, "-o", vmfb])
        if rc == 0:
            self.compile["iree"] = {"seconds": t_imp + t_comp,
                                    "note": "dynamic batch/h/w, one artifact; import with --opset-version 17"}
            self.artifacts["iree"] = vmfb
            return
        # Dynamic dims failed: fall back to one static-shape compile per shape.
        dyn_reason = short_reason(text)
        self.log(f"IREE dynamic-shape compile failed ({dyn_reason}); trying per-shape")
        import onnx
        total = t_imp + t_comp
        for shape in SHAPES:
            m = onnx.load(self.args.model)
            for d, v in zip(m.graph.input[0].type.tensor_type.shape.dim, shape):
                d.ClearField("dim_param")
                d.dim_value = v
            p = os.path.join(self.work, f"cls_iree_{shape_str(shape)}.onnx")
            onnx.save(m, p)
            ms = p[:-5] + ".mlir"
            rc, text, t1 = run_cmd([imp, p, "--opset-version", "17", "-o", ms])
            if rc == 0:
                out = p[:-5] + ".vmfb"
                rc, text, t2 = run_cmd([comp, ms, *flags, "-o", out])
                t1 += t2
            total += t1
            if rc != 0:
                self.na[("iree", shape)] = "iree-compile failed: " + fail_reason(rc, text)
            else:
                self.artifacts[("iree", shape)] = out
        self.compile["iree"] = {"seconds": total, "note": f"per-shape (dynamic failed: {dyn_reason})"}

    def compile_tvm(self):
        rc, text, _ = run_cmd([sys.executable, "-c", "import tvm, tvm.relax.frontend.onnx"])
        if rc != 0:
            self.compile["tvm"] = {"na": "apache-tvm not importable: " + short_reason(text)}
            return
        import onnx
        m = onnx.load(self.args.model)
        n = drop_shape_casts(m)
        cleaned = os.path.join(self.work, "cls_tvm.onnx")
        onnx.save(m, cleaned)
        # TVM's frontend fails on this model with a dynamic input (type inference through the
        # shape subgraph), so compile one static-shape module per shape.
        total, ok, target = 0.0, 0, ""
        for shape in SHAPES:
            out = os.path.join(self.work, f"cls_tvm_{shape_str(shape)}.so")
            try:
                rc, text, secs = run_cmd(self.self_cmd("--tvm-compile", "--onnx", cleaned, "--shape",
                                                       shape_str(shape), "--output", out),
                                         timeout=self.args.compile_timeout)
            except subprocess.TimeoutExpired:
                rc, text, secs = 1, f"timeout after {self.args.compile_timeout} s", self.args.compile_timeout
            total += secs
            if rc != 0:
                self.na[("tvm", shape)] = "TVM compile failed: " + fail_reason(rc, text)
            else:
                ok += 1
                self.artifacts[("tvm", shape)] = out
                target = json.loads(text.strip().splitlines()[-1]).get("target", "")
        if ok == 0:
            self.compile["tvm"] = {"na": next(iter(self.na[("tvm", s)] for s in SHAPES))}
            return
        self.compile["tvm"] = {"seconds": total,
                               "note": f"per-shape x{len(SHAPES)}, {target}, untuned; {n} shape Casts removed"}

    # --- load gate ---------------------------------------------------------------------------------
    @staticmethod
    def loadavg():
        with open("/proc/loadavg") as f:
            return tuple(float(v) for v in f.read().split()[:3])

    def wait_for_quiet(self):
        deadline = time.time() + self.args.max_wait
        waited = 0.0
        t0 = time.time()
        while True:
            la = self.loadavg()
            if la[0] < self.args.max_load:
                break
            if time.time() >= deadline:
                self.notes.append(f"gave up waiting for 1-min load < {self.args.max_load} after "
                                  f"{self.args.max_wait:.0f} s (load {la[0]:.2f}); numbers may be noisy")
                break
            self.log(f"waiting for a quiet machine: load {la[0]:.2f} >= {self.args.max_load}")
            time.sleep(15)
        waited = time.time() - t0
        return self.loadavg(), waited

    # --- measure ------------------------------------------------------------------------------------
    def measure_relaxc(self, shape, xpath, threads):
        art = self.artifacts["relaxc"]
        env = dict(os.environ)
        if threads > 0:
            env["RELAX_NUM_THREADS"] = str(threads)
        else:
            env.pop("RELAX_NUM_THREADS", None)
        outdir = os.path.join(self.work, f"out_relaxc_{shape_str(shape)}_{threads}")
        shutil.rmtree(outdir, ignore_errors=True)
        os.makedirs(outdir)
        base = [self.args.relax_run, art, "--input", f"{INPUT_NAME}={xpath}"]

        def one(repeat, extra=()):
            rc, text, _ = run_cmd([*base, "--repeat", str(repeat), *extra], env=env)
            if rc != 0:
                raise RuntimeError("relax-run failed: " + fail_reason(rc, text))
            for line in text.splitlines():
                if line.startswith("mean latency:"):
                    return float(line.split()[2])
            raise RuntimeError("relax-run printed no 'mean latency' line")

        # Warm-up invocation (also writes the output for the accuracy check), then calibrate
        # the per-invocation repeat count so each invocation amortises its cold first run.
        first = one(2, ("--output-dir", outdir))
        repeat = int(min(10, max(3, math.ceil(self.args.min_invocation_s * 1e3 / max(first, 1e-3)))))
        samples = [one(repeat) for _ in range(self.args.runs)]
        outs = sorted(glob.glob(os.path.join(outdir, "**", "*.npy"), recursive=True))
        if not outs:
            raise RuntimeError("relax-run --output-dir wrote no .npy")
        return {"median_ms": statistics.median(samples), "n": len(samples), "repeat": repeat,
                "out": np.load(outs[0])}

    def measure_worker(self, engine, shape, xpath, threads, artifact, runs=None, warmup=None, min_seconds=None):
        env = dict(os.environ)
        for k in ("TVM_NUM_THREADS", "OMP_NUM_THREADS"):
            env.pop(k, None)
        if threads > 0:
            env["TVM_NUM_THREADS"] = str(threads)
        outp = os.path.join(self.work, f"out_{engine}_{shape_str(shape)}_{threads}.npy")
        cmd = self.self_cmd("--worker", engine, "--artifact", artifact, "--input", xpath, "--threads",
                            str(threads), "--output", outp,
                            "--runs", str(self.args.runs if runs is None else runs),
                            "--warmup", str(self.args.warmup if warmup is None else warmup),
                            "--min-seconds", str(self.args.min_seconds if min_seconds is None else min_seconds))
        try:
            rc, text, _ = run_cmd(cmd, env=env, timeout=self.args.run_timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"timeout after {self.args.run_timeout} s")
        if rc != 0:
            raise RuntimeError(fail_reason(rc, text))
        res = json.loads(text.strip().splitlines()[-1])
        res["out"] = np.load(outp)
        return res

    def artifact_for(self, engine, shape):
        if engine == "ort":
            return self.args.model
        return self.artifacts.get(engine) or self.artifacts.get((engine, shape))

    def measure_all(self):
        for shape in SHAPES:
            x = np.random.RandomState(0).uniform(-1.0, 1.0, size=shape).astype(np.float32)
            xpath = os.path.join(self.work, f"x_{shape_str(shape)}.npy")
            np.save(xpath, x)
            # Reference output in a subprocess: onnxruntime can crash (SIGFPE) on invalid shapes.
            try:
                ref = self.measure_worker("ort", shape, xpath, 0, self.args.model, runs=1, warmup=0,
                                          min_seconds=0)["out"]
                self.ref_na.pop(shape, None)
            except Exception as e:
                ref = None
                self.ref_na[shape] = short_reason(str(e))
                self.log(f"no onnxruntime reference for {shape_str(shape)}: {self.ref_na[shape]}")
            for engine in self.args.peers:
                for threads in (1, 0):
                    key = (engine, shape, threads)
                    if "na" in self.compile.get(engine, {}) and engine != "ort":
                        self.results[key] = {"na": self.compile[engine]["na"]}
                        continue
                    if (engine, shape) in self.na:
                        self.results[key] = {"na": self.na[(engine, shape)]}
                        continue
                    self.log(f"measuring {engine} {shape_str(shape)} threads={threads or 'default'}")
                    try:
                        if engine == "relaxc":
                            r = self.measure_relaxc(shape, xpath, threads)
                        else:
                            r = self.measure_worker(engine, shape, xpath, threads, self.artifact_for(engine, shape))
                        out = np.asarray(r.pop("out"), dtype=np.float32)
                        if ref is None:
                            r["maxdiff"] = None
                        elif out.shape != ref.shape:
                            r["maxdiff"] = float("inf")
                            r["shape_mismatch"] = f"output shape {out.shape} vs ORT {ref.shape}"
                        else:
                            r["maxdiff"] = float(np.max(np.abs(out - ref)))
                        self.results[key] = r
                        self.log(f"  median {r['median_ms']:.3f} ms, max|diff| {r['maxdiff']}")
                    except Exception as e:
                        self.results[key] = {"na": short_reason(str(e))}
                        self.log(f"  n/a: {self.results[key]['na']}")

    # --- report -------------------------------------------------------------------------------------
    def collect_versions(self):
        v = {}
        for pkg in ("numpy", "onnx", "onnxruntime", "iree-base-compiler", "iree-base-runtime", "apache-tvm"):
            try:
                v[pkg] = importlib.metadata.version(pkg)
            except importlib.metadata.PackageNotFoundError:
                v[pkg] = "not installed"
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        try:
            rev = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True,
                                 text=True).stdout.strip()
            dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True).stdout.strip()
            v["relaxc"] = f"git {rev}{' (+ uncommitted changes)' if dirty else ''}"
        except OSError:
            v["relaxc"] = "unknown"
        v["python"] = platform.python_version()
        self.versions = v

    @staticmethod
    def cpu_model():
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.startswith("model name"):
                        return line.split(":", 1)[1].strip()
        except OSError:
            pass
        return platform.processor() or "unknown"

    def render(self, load_before, load_after, waited, uptime_before, uptime_after):
        nproc = os.cpu_count()
        lines = []
        lines.append("# relaxc benchmark: PP-OCR text-direction classifier (ch_ppocr_mobile_v2.0_cls)")
        lines.append("")
        lines.append(f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}")
        lines.append(f"- machine: `nproc`={nproc}, CPU: {self.cpu_model()}, {platform.system()} {platform.machine()}")
        lines.append(f"- load average (1/5/15 min) at start of measurement: {load_before[0]:.2f} / "
                     f"{load_before[1]:.2f} / {load_before[2]:.2f} (waited {waited:.0f} s for 1-min < "
                     f"{self.args.max_load}); at end: {load_after[0]:.2f} / {load_after[1]:.2f} / {load_after[2]:.2f}")
        lines.append(f"- `uptime` at start: `{uptime_before}`; at end: `{uptime_after}`")
        lines.append("- versions: " + ", ".join(f"{k} {v}" for k, v in self.versions.items()))
        lines.append(f"- method: median of >= {self.args.runs} timed runs after {self.args.warmup} warm-up runs "
                     f"(relaxc: median over {self.args.runs} `relax-run --repeat K` invocations of their mean, "
                     f"see README); 'default' threads = each engine's own default on this machine; "
                     f"input uniform(-1, 1), seed 0; max|diff| is vs onnxruntime (default threads), "
                     f"flagged MISMATCH above {MISMATCH_TOL:g}")
        for n in self.notes:
            lines.append(f"- note: {n}")
        lines.append("")
        lines.append("| shape | engine | 1 thread (ms) | default threads (ms) | 1t vs ORT 1t | max abs diff vs ORT |")
        lines.append("|---|---|---:|---:|---:|---|")

        def cell(r):
            if r is None:
                return "—"
            if "na" in r:
                return f"n/a: {r['na']}"
            extra = f" (K={r['repeat']})" if "repeat" in r else ""
            return f"{r['median_ms']:.3f}{extra}"

        for shape in SHAPES:
            ort1 = self.results.get(("ort", shape, 1), {})
            for engine in self.args.peers:
                r1 = self.results.get((engine, shape, 1))
                rd = self.results.get((engine, shape, 0))
                ratio = "—"
                if r1 and "median_ms" in r1 and "median_ms" in ort1:
                    ratio = f"{r1['median_ms'] / ort1['median_ms']:.2f}x"
                diffs = [r["maxdiff"] for r in (r1, rd) if r and r.get("maxdiff") is not None]
                if shape in self.ref_na and any(r and "median_ms" in r for r in (r1, rd)):
                    diff = "no ORT reference: ran without error, output unchecked **SUSPECT**"
                elif diffs:
                    d = max(diffs)
                    diff = f"{d:.2e}" + (" **MISMATCH**" if d > MISMATCH_TOL else "")
                else:
                    diff = "—"
                c1, cd = cell(r1), cell(rd)
                if c1 == cd and c1.startswith("n/a"):
                    cd = "(same)"
                lines.append(f"| {shape_str(shape)} | {ENGINE_LABEL[engine]} | {c1} | {cd} | {ratio} | {diff} |")
        for shape, why in self.ref_na.items():
            lines.append("")
            lines.append(f"No onnxruntime reference for {shape_str(shape)}: {why}.")
        lines.append("")
        lines.append("Compile times (wall clock, measured before the load gate, so they may include "
                     "contention from other work on the machine):")
        lines.append("")
        lines.append("| engine | compile (s) | notes |")
        lines.append("|---|---:|---|")
        for engine in self.args.peers:
            if engine == "ort":
                lines.append("| onnxruntime | — | session creation not counted (no AOT step) |")
                continue
            c = self.compile.get(engine, {"na": "not attempted"})
            if "na" in c:
                lines.append(f"| {ENGINE_LABEL[engine]} | n/a | {c['na']} |")
            else:
                lines.append(f"| {ENGINE_LABEL[engine]} | {c['seconds']:.1f} | {c['note']} |")
        lines.append("")
        return "\n".join(lines)

    def run(self):
        self.collect_versions()
        compilers = {"relaxc": self.compile_relaxc, "iree": self.compile_iree, "tvm": self.compile_tvm}
        for engine in self.args.peers:
            if engine in compilers:
                self.log(f"compiling with {engine}")
                try:
                    compilers[engine]()
                except Exception as e:
                    traceback.print_exc()
                    self.compile[engine] = {"na": short_reason(e)}
                c = self.compile.get(engine, {})
                self.log(f"  {engine}: " + (f"n/a: {c['na']}" if "na" in c else f"{c.get('seconds', 0):.1f} s"))
        uptime = lambda: subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()  # noqa: E731
        load_before, waited = self.wait_for_quiet()
        uptime_before = uptime()
        self.log(f"measuring at load {load_before}")
        self.measure_all()
        load_after = self.loadavg()
        uptime_after = uptime()
        if load_after[0] >= self.args.max_load:
            self.notes.append(f"1-min load rose to {load_after[0]:.2f} during measurement (other work on the "
                              "machine, or the multi-threaded runs themselves)")
        md = self.render(load_before, load_after, waited, uptime_before, uptime_after)
        print(md)
        if self.args.results:
            with safe_write.replacing(self.args.results) as f:
                f.write("<!-- Generated by benchmarks/bench_cls.py (via benchmarks/run.sh); do not edit by hand. -->\n")
                f.write(md)
            self.log(f"wrote {self.args.results}")
        if not self.args.keep_workdir and not self.args.workdir:
            shutil.rmtree(self.work, ignore_errors=True)
        return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="ONNX classifier model")
    ap.add_argument("--relaxc", default="build/tools/relaxc")
    ap.add_argument("--relax-run", dest="relax_run", default="build/tools/relax-run")
    ap.add_argument("--results", help="write the markdown table here (e.g. benchmarks/RESULTS.md)")
    ap.add_argument("--peers", default=",".join(ENGINES), help="comma list of: " + ",".join(ENGINES))
    ap.add_argument("--runs", type=int, default=20, help="timed runs per measurement (>= 20 recommended)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--min-seconds", dest="min_seconds", type=float, default=1.0,
                    help="in-process peers: keep timing past --runs until this much time has passed (max 10x runs)")
    ap.add_argument("--min-invocation-s", dest="min_invocation_s", type=float, default=0.3,
                    help="relaxc: choose --repeat K (3..10) so one relax-run invocation lasts about this long")
    ap.add_argument("--max-load", dest="max_load", type=float, default=1.0)
    ap.add_argument("--max-wait", dest="max_wait", type=float, default=600.0, help="seconds to wait for a quiet machine")
    ap.add_argument("--compile-timeout", dest="compile_timeout", type=float, default=900.0)
    ap.add_argument("--run-timeout", dest="run_timeout", type=float, default=600.0)
    ap.add_argument("--workdir", help="keep artifacts here (default: a temp dir, removed at the end)")
    ap.add_argument("--keep-workdir", dest="keep_workdir", action="store_true")
    # Internal subprocess modes.
    ap.add_argument("--worker", choices=["ort", "iree", "tvm"], help=argparse.SUPPRESS)
    ap.add_argument("--tvm-compile", dest="tvm_compile", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--artifact", help=argparse.SUPPRESS)
    ap.add_argument("--input", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--output", help=argparse.SUPPRESS)
    ap.add_argument("--onnx", help=argparse.SUPPRESS)
    ap.add_argument("--shape", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker_main(args)
    if args.tvm_compile:
        return tvm_compile_worker(args)
    if not args.model:
        ap.error("--model is required")
    args.peers = [p for p in args.peers.split(",") if p]
    bad = [p for p in args.peers if p not in ENGINES]
    if bad:
        ap.error(f"unknown peers: {bad}")
    if args.runs < 1:
        ap.error("--runs must be >= 1")
    return Bench(args).run()


if __name__ == "__main__":
    sys.exit(main())
