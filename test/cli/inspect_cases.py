#!/usr/bin/env python3
# Checks of `relaxc inspect` and `relaxc compile --progress` (issue 36) that a regex on the output
# cannot make:
#   json ART            --json parses, agrees with the sections and with the text output
#   no_manifest ART OUT the artifact without its "manifest" section (an artifact written before
#                       it): inspect says "not recorded", and the loader (relaxc run) still runs it
#   progress MODEL      --progress=always off a terminal prints plain stage lines; never, none
#   cross MODEL OUT     an artifact for AArch64 Linux is inspectable here (nothing is loaded)
import argparse
import ctypes
import ctypes.util
import json
import os
import re
import struct
import subprocess
import sys

TRAILER = 64
ENTRY = 64


def run(cmd, ok=True):
    print("+ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if ok and p.returncode != 0:
        sys.exit(f"FAIL: exit code {p.returncode}\nstdout: {p.stdout}\nstderr: {p.stderr}")
    return p


def check(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)


def case_json(args):
    j = json.loads(run([args.relaxc, "inspect", args.artifact, "--json"]).stdout)
    text = run([args.relaxc, "inspect", args.artifact]).stdout
    print(text)
    check(j["manifest"] is True, "the artifact has a manifest")
    check(j["inputs"][0]["name"] == "x" and j["inputs"][0]["dtype"] == "float32", "input x: float32")
    check(j["inputs"][0]["shape"][1] == 3 and isinstance(j["inputs"][0]["shape"][0], str),
          f"x's shape is [sym, 3, ...]: {j['inputs'][0]['shape']}")
    check(j["inputs"][0]["optional"] is False, "x is required")
    names = [s["name"] for s in j["sections"]]
    for n in ("elf", "params", "executable", "target", "manifest"):
        check(n in names, f"section {n} listed: {names}")
    params = next(s for s in j["sections"] if s["name"] == "params")
    check(j["params"]["bytes"] == params["size"], "params bytes = the params section's size")
    k = j["kernels"]
    check(k["count"] == sum(len(v) for v in k["by_rule"].values()) > 0, "kernel count = sum by rule")
    check(re.search(rf"kernels: {k['count']} host kernels", text), "text shows the same count")
    for rule, kernels in k["by_rule"].items():
        check(f"  {rule} ({len(kernels)}): " in text, f"text lists rule {rule}")
    check(j["host"]["triple"] and j["host"]["cpu_features"], "host triple and CPU features")
    check(j["target"].startswith("cpu") and j["compiler"].startswith("relaxc"), "target, compiler")
    check(j["bounds"] == {}, "no --bound: empty bounds")
    print("PASS")


def case_no_manifest(args):
    data = open(args.artifact, "rb").read()
    t = data[-TRAILER:]
    table_offset, num = struct.unpack_from("<QQ", t, 16)
    entries = [data[table_offset + i * ENTRY: table_offset + (i + 1) * ENTRY] for i in range(num)]
    kept = [e for e in entries if e[:32].rstrip(b"\0") != b"manifest"]
    check(len(kept) == num - 1, "the artifact has one manifest section")
    body = data[:table_offset] + b"".join(kept)
    # The checksum is XXH3_64bits of everything before the trailer (runtime/artifact_format.h).
    lib = ctypes.CDLL(ctypes.util.find_library("xxhash") or "libxxhash.so.0")
    lib.XXH3_64bits.restype = ctypes.c_uint64
    lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    trailer = bytearray(t)
    struct.pack_into("<Q", trailer, 24, len(kept))
    struct.pack_into("<Q", trailer, 40, lib.XXH3_64bits(body, len(body)))
    struct.pack_into("<Q", trailer, 48, len(body) + TRAILER)
    with open(args.out, "wb") as f:
        f.write(body + bytes(trailer))
    text = run([args.relaxc, "inspect", args.out]).stdout
    print(text)
    for rx in (r"compiler: not recorded", r"bounds: not recorded",
               r"kernels: \d+ called by the VM; schedule rules not recorded",
               r"x: float32\[x_d0, 3, x_d2, x_d3\]", r"host: x86_64-\S+, -mcpu not recorded"):
        check(re.search(rx, text), f"output matches /{rx}/")
    check(not re.search(r"^  manifest ", text, re.M), "no manifest section listed")
    j = json.loads(run([args.relaxc, "inspect", args.out, "--json"]).stdout)
    check(j["manifest"] is False and j["kernels"] is None and j["bounds"] is None, "nulls in JSON")
    out = run([args.relaxc, "run", args.out, "--input", f"x={args.input}"]).stdout
    check(re.search(r"shape=\[1, 2\] dtype=float32", out), "relaxc run runs it: " + out)
    print("PASS")


def case_progress(args):
    line = re.compile(r"^\[relaxc\] \d+\.\d s  [a-z-]+", re.M)
    p = run([args.relaxc, "compile", args.model, "-o", args.out, "--progress=always"])
    print(p.stderr)
    check(line.search(p.stderr), "a plain progress line on stderr")
    check("\r" not in p.stderr, "no carriage returns off a terminal")
    p = run([args.relaxc, "compile", args.model, "-o", args.out, "--progress=never"])
    check(not line.search(p.stderr) and "[relaxc]" not in p.stderr, "--progress=never: no lines")
    p = run([args.relaxc, "compile", args.model, "-o", args.out, "--progress=sometimes"], ok=False)
    check(p.returncode == 2 and p.stderr.startswith("error: "), "a bad mode is a usage error")
    print("PASS")


def case_cross(args):
    if not os.path.exists("/usr/aarch64-linux-gnu/lib/libm.so"):
        print("SKIP: the AArch64 C library is not installed (libc6-dev-arm64-cross)")
        sys.exit(77)
    run([args.relaxc, "compile", args.model, "-o", args.out, "--progress=never", "--bound", "x_d0=1..4",
         "--target", "cpu -mtriple=aarch64-linux-gnu -mcpu=cortex-a76"])
    text = run([args.relaxc, "inspect", args.out]).stdout
    print(text)
    for rx in (r"target: cpu -mcpu=cortex-a76 -mtriple=aarch64-linux-gnu",
               r"host: aarch64-unknown-linux-gnu, -mcpu=cortex-a76, \d+ CPU features",
               r"x: float32\[x_d0=1\.\.4, 3, x_d2, x_d3\]", r"bounds: x_d0=1\.\.4",
               r"kernels: \d+ host kernels"):
        check(re.search(rx, text), f"output matches /{rx}/")
    j = json.loads(run([args.relaxc, "inspect", args.out, "--json"]).stdout)
    check(j["bounds"] == {"x_d0": [1, 4]} and "neon" in j["host"]["cpu_features"], "JSON")
    print("PASS")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("case", choices=["json", "no_manifest", "progress", "cross"])
    p.add_argument("--relaxc", required=True)
    p.add_argument("--artifact")
    p.add_argument("--input", help=".npy for input x (no_manifest)")
    p.add_argument("--model", help="ONNX model (progress); a name in RELAX_MODEL_DIR")
    p.add_argument("--out")
    args = p.parse_args()
    if args.model and "/" not in args.model:
        args.model = os.path.join(os.environ.get("RELAX_MODEL_DIR", ""), args.model)
    cases = {"json": case_json, "no_manifest": case_no_manifest, "progress": case_progress,
             "cross": case_cross}
    cases[args.case](args)


if __name__ == "__main__":
    main()
