#!/usr/bin/env python3
# Compiles the PP-OCR classifier (or --model) with `relaxc compile` into a fresh artifact; fails on error or crash,
# and for a GPU --target on any one-thread fallback kernel (and, for cuda, a kernel without ptxas register counts).
import argparse
import os
import re
import subprocess
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--relaxc", required=True)
    p.add_argument("--model", default=os.environ.get("RELAX_CLS_MODEL"))
    p.add_argument("--model-name", help="a model file in RELAX_MODEL_DIR (instead of --model)")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--target", default=None, help="relaxc compile --target (vulkan, 'cuda -arch=sm_90')")
    p.add_argument("--full-only", action="store_true",
                   help="exit 77 (skipped) unless RELAX_TEST_FULL=1 (scripts/test_full.sh)")
    args = p.parse_args()
    if args.full_only and os.environ.get("RELAX_TEST_FULL") != "1":
        print("SKIP: full run only (RELAX_TEST_FULL=1, scripts/test_full.sh)")
        return 77
    if args.model_name:
        args.model = os.path.join(os.environ.get("RELAX_MODEL_DIR", ""), args.model_name)
    if not args.model or not os.path.isfile(args.model):
        print(f"FAIL: model not found: {args.model!r} (run scripts/setup.sh)")
        return 1
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    if os.path.exists(args.output):
        os.remove(args.output)  # never let a stale artifact pass
    cmd = [args.relaxc, "compile", args.model, "-o", args.output, "--stats"]
    if args.target:
        cmd += ["--target", args.target]
    print("+ " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, errors="replace")
    sys.stdout.write(proc.stdout)
    rc = proc.returncode
    if rc != 0:
        print(f"FAIL: relaxc compile exited with {rc}" + (" (crash)" if rc < 0 or rc >= 128 else ""))
        return 1
    if not os.path.isfile(args.output) or os.path.getsize(args.output) == 0:
        print(f"FAIL: relaxc compile did not write {args.output}")
        return 1
    if args.target and args.target != "cpu":
        m = re.search(r"device kernels: (\d+), fallbacks: (\d+)", proc.stdout)
        if not m:
            print("FAIL: no 'device kernels: N, fallbacks: F' line in --stats")
            return 1
        n, fb = int(m.group(1)), int(m.group(2))
        if fb != 0 or n == 0:
            print(f"FAIL: {n} device kernels, {fb} one-thread fallback(s); expected fallbacks: 0")
            return 1
        if args.target.startswith("cuda"):
            regs = len(re.findall(r"registers=\d+", proc.stdout))
            if regs != n:
                print(f"FAIL: {regs} of {n} kernels show a ptxas register count")
                return 1
        print(f"OK: {args.target}: {n} device kernels, fallbacks: 0")
    print(f"OK: {args.output} ({os.path.getsize(args.output)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
