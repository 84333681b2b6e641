#!/usr/bin/env python3
# The GPU check folder's runner (`scripts/gpu_check.sh run DIR`): runs every artifact with the bundled relax-run, compares with the references without numpy, prints a table.
"""Run the GPU check folder made by `scripts/gpu_check.sh prepare` (python3 and bash only: no
numpy, no compiler, no network).

Every case's cuda, vulkan, cpu and cuda-byoc (cuda with the cublas/cudnn plugins) artifacts run through DIR/bin/relax-run (LD_LIBRARY_PATH=DIR/lib)
with --repeat (one untimed warm-up, then the mean latency); each output is read by the .npy reader
below and compared with onnxruntime CPU's (|got - ref| <= atol + rtol * |ref|). The table: case,
max abs diff per target, relaxc latency per target, and per GPU target the kernel time per run
from the device's timers (CUDA events, Vulkan timestamp queries; relax-run's "kernel time:"
line; n/a where the device has no timer or a run was not timed). A target whose
driver is missing shows its error (e.g. "libcuda.so.1 not found") instead of numbers. Exit status 1
on a mismatch, a crash, a timeout or another run error (a missing driver is not a failure unless
--require cuda,vulkan names it).
"""
import argparse
import ast
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

TARGETS = ("cuda", "vulkan", "cpu", "cuda-byoc")
# Where cuda-byoc's plugin libraries (lib/librelax_byoc_{cublas,cudnn}.so) find the CUDA toolkit's
# cuBLAS/cuBLASLt 13, cuDNN 9 and cudart 13 when the system's library path does not have them:
# RELAX_CUDA_LIB_DIR (colon-separated), CUDA_HOME / CUDA_PATH, /usr/local/cuda, and the nvidia-*
# pip wheels' lib folders (nvidia/cublas/lib, nvidia/cudnn/lib, ...) of this python3.
CUDA_LIB_CANDIDATES = ("lib64", "lib", "targets/x86_64-linux/lib")
# .npy dtype descr -> (struct code, item size); little-endian and byte-sized ones only.
DTYPES = {"<f4": ("f", 4), "<f8": ("d", 8), "<f2": ("e", 2), "<i8": ("q", 8), "<i4": ("i", 4),
          "<i2": ("h", 2), "|i1": ("b", 1), "<u8": ("Q", 8), "<u4": ("I", 4), "<u2": ("H", 2),
          "|u1": ("B", 1), "|b1": ("?", 1)}


def read_npy(path):
    """(descr, shape, flat list of values) of a C-order .npy (format 1.0-3.0)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError(f"{path}: not a .npy file")
    major = data[6]
    if major == 1:
        hlen, start = struct.unpack("<H", data[8:10])[0], 10
    else:
        hlen, start = struct.unpack("<I", data[8:12])[0], 12
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    if header["fortran_order"]:
        raise ValueError(f"{path}: Fortran order is not supported")
    descr, shape = header["descr"], tuple(header["shape"])
    if descr not in DTYPES:
        raise ValueError(f"{path}: dtype {descr} is not supported")
    code, size = DTYPES[descr]
    n = 1
    for d in shape:
        n *= d
    body = data[start + hlen:start + hlen + n * size]
    return descr, shape, list(struct.unpack(f"<{n}{code}", body))


def compare(got_path, ref_path, rtol, atol):
    """(ok, max abs diff or None, message)."""
    gd, gs, gv = read_npy(got_path)
    rd, rs, rv = read_npy(ref_path)
    if gs != rs or gd != rd:
        return False, None, f"shape/dtype {gd}{list(gs)} vs reference {rd}{list(rs)}"
    worst, bad = 0.0, 0
    for g, r in zip(gv, rv):
        g, r = float(g), float(r)
        if math.isnan(g) or math.isnan(r):
            bad += math.isnan(g) != math.isnan(r)
            continue
        if math.isinf(g) or math.isinf(r):
            bad += g != r
            continue
        d = abs(g - r)
        worst = max(worst, d)
        bad += d > atol + rtol * abs(r)
    msg = f"{bad}/{len(rv)} element(s) out of tolerance" if bad else "ok"
    return bad == 0, worst, msg


def short_error(text):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for l in lines:
        if "error:" in l:
            l = re.sub(r"^.*?error:\s*", "", l)
            m = re.search(r"(lib\w+\.so\.\d+) not found", l)
            if m:
                return m.group(0)
            m = re.search(r"(lib\w+\.so[.\d]*): cannot open shared object", l)
            if m:
                return m.group(1) + " not found"
            m = re.search(r"no CUDA device: .*", l)
            return m.group(0)[:70] if m else l[:70]
    return (lines[-1][:70] if lines else "no output")


def cuda_lib_dirs():
    """Existing directories that may hold the CUDA libraries cuda-byoc's plugins need."""
    dirs = [d for d in os.environ.get("RELAX_CUDA_LIB_DIR", "").split(":") if d]
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            dirs += [os.path.join(root, sub) for sub in CUDA_LIB_CANDIDATES]
    for site in sys.path:
        nv = os.path.join(site, "nvidia")
        if site and os.path.isdir(nv):
            dirs += sorted(os.path.join(nv, d, "lib") for d in os.listdir(nv))
    out = []
    for d in dirs:
        if os.path.isdir(d) and d not in out:
            out.append(d)
    return out


def run_one(folder, case, tag, repeat, timeout, device):
    """run_once; for a GPU target that passes, once more with device memory
    (RELAX_GPU_UNIFIED=0), whose copies go into the note; for one that fails, once more with
    part 1's memory model
    (RELAX_GPU_UNIFIED=0 RELAX_GPU_ASYNC=0: every buffer staged, every launch waited for), whose
    outcome goes into the note: it tells a fault of unified memory / queued launches from one of
    the kernels."""
    r = run_once(folder, case, tag, repeat, timeout, device, {})
    if tag in ("cuda", "vulkan") and r["status"] == "ok":
        # Device placement with device memory (never host-mapped): the same outputs, and the
        # host <-> device bytes per run (inputs in + outputs out for most models).
        rd = run_once(folder, case, tag, repeat, timeout, device, {"RELAX_GPU_UNIFIED": "0"})
        if rd["status"] != "ok":
            r["status"] = rd["status"]
            r["note"] = (r.get("note", "") + f" [device memory: {rd['status']}: "
                         f"{rd.get('note', '')}]").strip()
        elif rd.get("copies"):
            r["note"] = (r.get("note", "") + f" [device memory: {rd['copies']}]").strip()
    if tag in ("cuda", "vulkan") and r["status"] in ("error", "crash", "mismatch", "timeout"):
        r0 = run_once(folder, case, tag, repeat, timeout, device,
                      {"RELAX_GPU_UNIFIED": "0", "RELAX_GPU_ASYNC": "0"})
        r["note"] = (r.get("note", "") + f" [staged, synchronous: {r0['status']}]").strip()
    return r


def run_once(folder, case, tag, repeat, timeout, device, extra_env):
    """{'status': ok|mismatch|error|no-driver|crash|timeout|compile-error, 'diff', 'ms', 'note'}."""
    cdir = os.path.join(folder, "cases", case["name"])
    if tag not in case.get("targets", TARGETS):
        return {"status": "not-prepared", "note": "not in the folder"}
    if tag in case.get("compile_errors", {}):
        return {"status": "compile-error", "note": case["compile_errors"][tag]}
    so = os.path.join(cdir, tag + ".so")
    out = tempfile.mkdtemp(prefix=f"gpu_check_{tag}_")
    try:
        cmd = [os.path.join(folder, "bin", "relax-run"), so, "-o", out, "--repeat", str(repeat),
               "--device", str(device)]
        for name, f in case["inputs"]:
            cmd += ["--input", f"{name}={os.path.join(cdir, f)}"]
        env = dict(os.environ, **extra_env)
        paths = [os.path.join(folder, "lib")] + (cuda_lib_dirs() if tag == "cuda-byoc" else [])
        env["LD_LIBRARY_PATH"] = ":".join(paths) + (
            ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                               errors="replace")
        except subprocess.TimeoutExpired:
            return {"status": "timeout", "note": f"over {timeout:g} s"}
        text = p.stdout + p.stderr
        if p.returncode < 0 or p.returncode >= 128:
            return {"status": "crash", "note": f"exit {p.returncode}: {short_error(text)}"}
        if p.returncode != 0:
            err = short_error(text)
            # cuda-byoc: the CUDA toolkit's libraries missing, or no device the CUDA runtime can
            # use (no driver, or one older than the runtime) are the machine's, not failures.
            no_driver = re.search(r"lib(cuda|vulkan)\.so\.1 not found|no Vulkan (physical )?device"
                                  r"|no CUDA device|lib(cu|nv)\w*\.so[.\d]*: cannot open shared object",
                                  text)
            return {"status": "no-driver" if no_driver else "error", "note": err}
        m = re.search(r"mean latency: ([0-9.]+) ms", text)
        ms = float(m.group(1)) if m else None
        k = re.search(r"kernel time: ([0-9.]+) ms per run", text)
        kernel_ms = float(k.group(1)) if k else None
        c = re.search(r"device copies: \d+ per run \((\d+) bytes to the device, (\d+) bytes to "
                      r"the host\); host-mapped buffers: (\d+)", text)
        copies = (f"{c.group(1)} B in, {c.group(2)} B out, {c.group(3)} host-mapped buffers"
                  if c else "")
        worst, bad = 0.0, []
        for f in case["outputs"]:
            got = os.path.join(out, f)
            if not os.path.isfile(got):
                return {"status": "mismatch", "ms": ms, "note": f"no output {f}"}
            ok, diff, msg = compare(got, os.path.join(cdir, "ref", f), RTOL, ATOL)
            if diff is None:
                return {"status": "mismatch", "ms": ms, "note": f"{f}: {msg}"}
            worst = max(worst, diff)
            if not ok:
                bad.append(f"{f}: {msg}")
        return {"status": "mismatch" if bad else "ok", "diff": worst, "ms": ms,
                "kernel_ms": kernel_ms, "note": "; ".join(bad), "copies": copies}
    finally:
        shutil.rmtree(out, ignore_errors=True)


def cell_diff(r):
    if r is None:
        return "skipped"
    if "diff" in r:
        return f"{r['diff']:.2e}" + ("" if r["status"] == "ok" else " FAIL")
    if r["status"] == "not-prepared":
        return "-"
    if r["status"] in ("error", "no-driver", "crash", "mismatch", "compile-error"):
        return r["note"][:40] if r["status"] != "crash" else "CRASH"
    return r["status"]


def cell_ms(r, key="ms"):
    if r is None or r.get(key) is None:
        return "n/a"
    return f"{r[key]:.2f} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--targets", default=",".join(TARGETS),
                    help="comma-separated subset of cuda,vulkan,cpu,cuda-byoc")
    ap.add_argument("--filter", default=None, help="only cases whose name matches this regex")
    ap.add_argument("--repeat", type=int, default=5,
                    help="timed runs per artifact after one warm-up (1: one run, no latency)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per artifact run")
    ap.add_argument("--budget", type=float, default=280.0,
                    help="total seconds; later runs are skipped (shown as 'skipped')")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--require", default="", help="targets whose missing driver is a failure (cuda,vulkan,cuda-byoc)")
    args = ap.parse_args()
    folder = os.path.abspath(args.folder)
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    global RTOL, ATOL
    RTOL, ATOL = manifest["rtol"], manifest["atol"]
    targets = [t for t in args.targets.split(",") if t]
    required = {t for t in args.require.split(",") if t}
    cases = []
    for name in manifest["cases"]:
        if args.filter and not re.search(args.filter, name):
            continue
        with open(os.path.join(folder, "cases", name, "case.json")) as f:
            cases.append(json.load(f))
    t0 = time.monotonic()
    results = {}
    dead = set()  # targets whose driver is missing: not retried per case
    for case in cases:
        for tag in targets:
            if tag in dead and tag in case.get("targets", TARGETS) and tag not in case.get("compile_errors", {}):
                results[case["name"], tag] = dict(dead_note[tag])
                continue
            if time.monotonic() - t0 > args.budget:
                results[case["name"], tag] = None
                continue
            r = run_one(folder, case, tag, args.repeat, args.timeout, args.device)
            results[case["name"], tag] = r
            if r["status"] == "no-driver":
                dead.add(tag)
                dead_note[tag] = r
        print(f"[{case['name']}] " + "  ".join(f"{t}: {cell_diff(results[case['name'], t])}" for t in targets),
              file=sys.stderr, flush=True)

    gpu = [t for t in targets if t != "cpu"]
    cols = (["case"] + [f"max abs diff {t}" for t in targets] + [f"relaxc-{t} latency" for t in targets]
            + [f"{t} kernel time" for t in gpu])
    rows = [[c["name"]] + [cell_diff(results[c["name"], t]) for t in targets]
            + [cell_ms(results[c["name"], t]) for t in targets]
            + [cell_ms(results[c["name"], t], "kernel_ms") for t in gpu] for c in cases]
    widths = [max(len(str(x)) for x in col) for col in zip(cols, *rows)]
    print(" | ".join(c.ljust(w) for c, w in zip(cols, widths)))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(str(c).ljust(w) for c, w in zip(row, widths)))

    counts = {}
    failed = []
    for (name, tag), r in results.items():
        st = "skipped" if r is None else r["status"]
        counts[st] = counts.get(st, 0) + 1
        if st in ("mismatch", "crash", "timeout", "error", "compile-error") or (st == "no-driver" and tag in required):
            failed.append(f"{name} {tag}: {st}: {r['note'] if r else ''}")
    print("runs: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
          + f"; rtol {RTOL:g} atol {ATOL:g}; {time.monotonic() - t0:.0f} s")
    for t in sorted(dead):
        print(f"{t}: not run ({dead_note[t]['note']})")
    for line in failed:
        print("FAIL " + line)
    print("FAIL" if failed else "OK")
    return 1 if failed else 0


RTOL, ATOL = 1e-3, 1e-4
dead_note = {}

if __name__ == "__main__":
    sys.exit(main())
