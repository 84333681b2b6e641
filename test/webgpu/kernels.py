#!/usr/bin/env python3
"""webgpu.kernels.*: every WGSL kernel of models compiled with `--target webgpu` compiles in the
browser (Chromium's WebGPU on SwiftShader) with no error and no warning, and makes a compute
pipeline with the layout the runtime binds (issue 34). A missing browser fails, unless
RELAX_TEST_WEBGPU=0 (then exit 77: skipped).

Usage: kernels.py --relaxc PATH MODEL [MODEL ...] [--timeout S] [--keep DIR]
       kernels.py --relaxc PATH --artifact ART [ART ...]
A MODEL of cls, rec, det or minilm is the issue's model: PP-OCR's from $RELAX_MODEL_DIR (the
rapidocr wheel), MiniLM from $RELAX_EXPORT_DIR (scripts/export_models.sh), as scripts/env.sh sets
them.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import WEB_SOURCE, NoBrowser, finish, require_chromium, run_page  # noqa: E402

NAMED = {"cls": ("RELAX_MODEL_DIR", "ch_ppocr_mobile_v2.0_cls_infer.onnx"),
         "rec": ("RELAX_MODEL_DIR", "ch_PP-OCRv4_rec_infer.onnx"),
         "det": ("RELAX_MODEL_DIR", "ch_PP-OCRv4_det_infer.onnx"),
         "minilm": ("RELAX_EXPORT_DIR", "all_minilm_l6_v2.onnx")}


def read_kernels(relaxc, artifact):
    """The WGSL kernels of `artifact`: [{name, params, source}] from its launch and device
    sections (offsets from `relaxc inspect --json`)."""
    info = json.loads(subprocess.run([relaxc, "inspect", "--json", artifact], check=True,
                                     capture_output=True, text=True).stdout)
    sections = {s["name"]: s for s in info["sections"]}
    with open(artifact, "rb") as f:
        data = f.read()

    def section(name):
        s = sections[name]
        return data[s["offset"]:s["offset"] + s["size"]]
    table = json.loads(section("launch"))
    if table["format"] != "wgsl":
        raise SystemExit("%s: launch table format is %r, not wgsl" % (artifact, table["format"]))
    device = section("device")
    out = []
    for k in table["kernels"]:
        blob = device[k["binary_offset"]:k["binary_offset"] + k["binary_size"]]
        out.append({"name": k["name"], "params": k["params"], "grid": k["grid"],
                    "source": blob.rstrip(b"\0").decode("utf-8")})
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--relaxc", required=True)
    p.add_argument("models", nargs="*")
    p.add_argument("--artifact", nargs="*", default=[])
    p.add_argument("--timeout", type=int, default=300)
    p.add_argument("--keep", help="keep the kernels (one .wgsl each) in this folder")
    args = p.parse_args()
    try:
        chromium = require_chromium()
    except NoBrowser as e:
        return e.code
    here = os.path.dirname(os.path.abspath(__file__))
    failures = []
    with tempfile.TemporaryDirectory(prefix="relax-webgpu-kernels-") as work:
        artifacts = list(args.artifact)
        for i, model in enumerate(args.models):
            if model in NAMED:
                env, name = NAMED[model]
                model = os.path.join(os.environ[env], name)
            art = os.path.join(work, "model%d.so" % i)
            r = subprocess.run([args.relaxc, "compile", model, "--target", "webgpu", "-o", art],
                               capture_output=True, text=True)
            if r.returncode != 0:
                failures.append("%s: compile failed: %s" % (model, r.stderr.strip()[-2000:]))
                continue
            if r.stderr.strip():
                print(r.stderr.strip())
            artifacts.append(art)
        kernels = []
        for art in artifacts:
            kernels += read_kernels(args.relaxc, art)
        site = os.path.join(work, "site")
        os.mkdir(site)
        shutil.copy(os.path.join(here, "kernels.html"), site)
        shutil.copy(os.path.join(WEB_SOURCE, "gpu.js"), site)  # its layoutEntries
        with open(os.path.join(site, "kernels.json"), "w") as f:
            json.dump(kernels, f)
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            for k in kernels:
                with open(os.path.join(args.keep, k["name"] + ".wgsl"), "w") as f:
                    f.write(k["source"])
        result = run_page(chromium, site, "kernels.html", timeout=args.timeout)
        if "error" in result:
            failures.append("the page failed: " + result["error"])
        else:
            bad = 0
            for k in result["kernels"]:
                if k["messages"] or k["pipeline_error"]:
                    bad += 1
                    failures.append("%s: %s %s" % (k["name"], "; ".join(k["messages"][:5]),
                                                   k["pipeline_error"] or ""))
            print("%d kernels compiled in the browser (%s): %d with errors or warnings"
                  % (len(result["kernels"]), result.get("adapter", ""), bad))
    return finish(failures)


if __name__ == "__main__":
    sys.exit(main())
