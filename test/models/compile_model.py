#!/usr/bin/env python3
# Compiles the PP-OCR classifier (or --model) with `relaxc compile` into a fresh artifact; fails on error or crash.
import argparse
import os
import subprocess
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--relaxc", required=True)
    p.add_argument("--model", default=os.environ.get("RELAX_CLS_MODEL"))
    p.add_argument("--model-name", help="a model file in RELAX_MODEL_DIR (instead of --model)")
    p.add_argument("-o", "--output", required=True)
    args = p.parse_args()
    if args.model_name:
        args.model = os.path.join(os.environ.get("RELAX_MODEL_DIR", ""), args.model_name)
    if not args.model or not os.path.isfile(args.model):
        print(f"FAIL: model not found: {args.model!r} (run scripts/setup.sh)")
        return 1
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    if os.path.exists(args.output):
        os.remove(args.output)  # never let a stale artifact pass
    cmd = [args.relaxc, "compile", args.model, "-o", args.output, "--stats"]
    print("+ " + " ".join(cmd), flush=True)
    rc = subprocess.run(cmd).returncode
    if rc != 0:
        print(f"FAIL: relaxc compile exited with {rc}" + (" (crash)" if rc < 0 or rc >= 128 else ""))
        return 1
    if not os.path.isfile(args.output) or os.path.getsize(args.output) == 0:
        print(f"FAIL: relaxc compile did not write {args.output}")
        return 1
    print(f"OK: {args.output} ({os.path.getsize(args.output)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
