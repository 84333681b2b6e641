#!/usr/bin/env python3
# Runs a command that must succeed: checks the exit code (0, or --exit-code) and that its output
# (stdout and stderr together) matches every regex. ctest's PASS_REGULAR_EXPRESSION would
# ignore the exit code.
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from expect_error import report, unmatched  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--exit-code", type=int, default=0, help="exit code required (default 0)")
    p.add_argument("--regex", action="append", default=[], help="must match the output (repeatable)")
    p.add_argument("--timeout", type=int, default=300)
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- command and arguments")
    args = p.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        p.error("no command given")
    print("+ " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    out = proc.stdout + proc.stderr
    sys.stdout.write(out)
    failures = []
    if proc.returncode != args.exit_code:
        failures.append(f"exit code {proc.returncode}, expected {args.exit_code}")
    failures += unmatched(args.regex, out, "output")
    return report(failures, f"exit code {proc.returncode}, output matched")


if __name__ == "__main__":
    sys.exit(main())
