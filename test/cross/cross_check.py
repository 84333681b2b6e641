#!/usr/bin/env python3
# Models compiled for another host triple, run under an emulator, compared with onnxruntime here.
"""Cross-target model check: each model is compiled ONCE by relaxc (this machine) for
`--target` (default "cpu -mtriple=aarch64-linux-gnu -mcpu=cortex-a76"); the one artifact runs
at two input sizes with a relax-run built for that triple (scripts/build_aarch64_runtime.sh),
started through `--emulator` (default `qemu-aarch64 -L /usr/aarch64-linux-gnu`: Debian's
qemu-user with the arm64 cross C library; containers have no binfmt, so qemu is called
directly). Every output is compared with onnxruntime on this machine at rtol 1e-4 / atol 1e-5.

Models: PP-OCR cls, det and rec (the rapidocr-onnxruntime wheel of the core venv) and
all-MiniLM-L6-v2 (the export cache's). `--models` picks some (CI runs a sample: see
test/models/tests.cmake). Prints one line per model and size with the emulated run's time, then
`cross: N passed, M failed`. Without the export cache and with RELAX_EXPORT_MODELS=0, MiniLM is
skipped (said on its line).

`--foreign NATIVE_RELAX_RUN` checks the loader instead: the classifier compiled for the target
given to this machine's relax-run, and compiled for this machine given to the target's
relax-run, must each fail with an `error:` naming both triples.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "models"))
import compare  # noqa: E402
import model_specs  # noqa: E402
import ort_reference  # noqa: E402

# name -> (file under the rapidocr wheel's models/, input name, two NCHW sizes)
PPOCR = {
    "cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", "x", [(1, 3, 48, 192), (3, 3, 64, 100)]),
    "det": ("ch_PP-OCRv4_det_infer.onnx", "x", [(1, 3, 160, 160), (1, 3, 96, 224)]),
    "rec": ("ch_PP-OCRv4_rec_infer.onnx", "x", [(1, 3, 48, 160), (2, 3, 48, 96)]),
}


def specs(args):
    out = {}
    rapid = model_specs.site_packages_dir(args.venv or "", os.path.join("rapidocr_onnxruntime", "models"))
    for name, (file, inp, sizes) in PPOCR.items():
        feeds = []
        for k, shape in enumerate(sizes):
            rng = np.random.default_rng(100 + k)
            feeds.append({inp: rng.random(shape, dtype=np.float32)})
        out[name] = (os.path.join(rapid, file) if rapid else file, feeds)
    exported = model_specs.export_specs(args.export_dir)
    if "all_minilm_l6_v2" in exported:
        s = exported["all_minilm_l6_v2"]
        out["minilm"] = (s["file"], [model_specs.make_inputs(s, z, 1000 + k) for k, z in enumerate(s["sizes"])])
    else:
        out["minilm"] = ("all_minilm_l6_v2.onnx (export cache)", [])
    return out


def check_foreign(args, emulator, model):
    """Each relax-run refuses the other machine's artifact, naming both triples."""
    os.makedirs(args.work, exist_ok=True)
    arts = {}
    for tag, target in (("target", args.target), ("native", "cpu")):
        arts[tag] = os.path.join(args.work, f"cls_{tag}.so")
        p = subprocess.run([args.relaxc, "compile", model, "--target", target, "-o", arts[tag]],
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAIL: compile for '{target}': {(p.stderr or p.stdout).strip()[-400:]}")
            return 1
    x = os.path.join(args.work, "x.npy")
    np.save(x, np.zeros((1, 3, 48, 192), np.float32))
    ok = True
    for what, cmd in (("this machine's relax-run, the target's artifact", [args.foreign, arts["target"]]),
                      ("the target's relax-run, this machine's artifact",
                       emulator + [args.relax_run, arts["native"]])):
        p = subprocess.run(cmd + ["--input", f"x={x}"], capture_output=True, text=True)
        err = (p.stderr + p.stdout).strip()
        triples = re.findall(r"\b(x86_64|aarch64)-unknown-linux-gnu\b", err)
        good = p.returncode == 1 and err.startswith("error:") and {"x86_64", "aarch64"} <= set(triples)
        print(f"{'ok  ' if good else 'FAIL'} {what}: exit {p.returncode}: {err[-300:]}")
        ok &= good
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--relax-run", required=True, help="relax-run built for the target's triple")
    ap.add_argument("--emulator", default="qemu-aarch64 -L /usr/aarch64-linux-gnu",
                    help="command prefix that runs the target's programs here ('' runs them directly)")
    ap.add_argument("--target", default="cpu -mtriple=aarch64-linux-gnu -mcpu=cortex-a76")
    ap.add_argument("--work", required=True)
    ap.add_argument("--models", default="cls,det,rec,minilm")
    ap.add_argument("--venv", default=os.environ.get("RELAX_VENV"))
    ap.add_argument("--export-dir", default=os.environ.get("RELAX_EXPORT_DIR"))
    ap.add_argument("--rtol", type=float, default=compare.RTOL)
    ap.add_argument("--atol", type=float, default=compare.ATOL)
    ap.add_argument("--foreign", metavar="NATIVE_RELAX_RUN", default=None,
                    help="check that each relax-run refuses the other triple's artifact")
    args = ap.parse_args()
    emulator = shlex.split(args.emulator)
    if emulator and subprocess.run(["which", emulator[0]], capture_output=True).returncode != 0:
        print(f"error: {emulator[0]} not found (Debian qemu-user; bash scripts/setup.sh installs it)")
        return 1
    all_specs = specs(args)
    if args.foreign:
        return check_foreign(args, emulator, all_specs["cls"][0])
    passed = failed = 0
    for name in [m for m in args.models.split(",") if m]:
        if name not in all_specs:
            print(f"error: unknown model {name!r} (known: {', '.join(all_specs)})")
            return 2
        model, feeds = all_specs[name]
        if name == "minilm" and not feeds and os.environ.get("RELAX_EXPORT_MODELS") == "0":
            print("SKIP minilm: RELAX_EXPORT_MODELS=0 and no export cache")
            continue
        if not os.path.isfile(model) or not feeds:
            print(f"FAIL {name}: model not found: {model} (scripts/setup.sh, scripts/export_models.sh)")
            failed += 1
            continue
        mdir = os.path.join(args.work, name)
        os.makedirs(mdir, exist_ok=True)
        artifact = os.path.join(mdir, "model.so")
        t0 = time.monotonic()
        p = subprocess.run([args.relaxc, "compile", model, "--target", args.target, "-o", artifact],
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAIL {name}: compile: {(p.stderr or p.stdout).strip()[-400:]}")
            failed += 1
            continue
        print(f"{name}: compiled for '{args.target}' in {time.monotonic() - t0:.1f} s", flush=True)
        ok = True
        for k, feed in enumerate(feeds):
            tag = ",".join(f"{n}={'x'.join(map(str, a.shape))}" for n, a in feed.items())
            out = os.path.join(mdir, f"out{k}")
            os.makedirs(out, exist_ok=True)
            cmd = emulator + [args.relax_run, artifact, "--output-dir", out]
            for j, (iname, arr) in enumerate(feed.items()):
                path = os.path.join(mdir, f"in{k}_{j}.npy")
                np.save(path, arr)
                cmd += ["--input", f"{iname}={path}"]
            t0 = time.monotonic()
            p = subprocess.run(cmd, capture_output=True, text=True)
            dt = time.monotonic() - t0
            if p.returncode != 0:
                print(f"  FAIL {tag}: relax-run exited {p.returncode}: {(p.stderr or p.stdout).strip()[-400:]}")
                ok = False
                continue
            for oname, want in ort_reference.run(model, feed):
                path = os.path.join(out, ort_reference.sanitize(oname) + ".npy")
                if not os.path.isfile(path):
                    print(f"  FAIL {tag}: no output {oname}")
                    ok = False
                    continue
                good, msg = compare.compare(np.load(path), np.asarray(want), args.rtol, args.atol)
                print(f"  {'ok  ' if good else 'FAIL'} {tag} (run {dt:.1f} s) {oname} "
                      f"{list(np.asarray(want).shape)}: {msg}", flush=True)
                ok &= good
        passed += ok
        failed += not ok
    print(f"cross: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
