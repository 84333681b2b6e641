#!/usr/bin/env python3
# Runs a command that must fail cleanly: checks the exit code (non-zero, not a crash) and that stderr matches every regex.
import argparse
import re
import subprocess
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--exit-code", type=int, default=None, help="exact exit code required (default: any 1..127)")
    p.add_argument("--regex", action="append", default=[], help="must match stderr (repeatable, all must match)")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- command and arguments")
    args = p.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        p.error("no command given")
    print("+ " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    rc = proc.returncode
    sys.stdout.write(proc.stdout)
    sys.stdout.write("stderr: " + proc.stderr)
    failures = []
    if rc < 0:
        failures.append(f"crashed: killed by signal {-rc}")
    elif rc >= 128:
        failures.append(f"crashed: exit code {rc}")
    elif rc == 0:
        failures.append("exit code 0, expected a failure")
    elif args.exit_code is not None and rc != args.exit_code:
        failures.append(f"exit code {rc}, expected {args.exit_code}")
    if not proc.stderr.startswith("error: "):
        failures.append("stderr does not start with 'error: '")
    failures += unmatched(args.regex, proc.stderr, "stderr")
    return report(failures, f"exit code {rc}, message matched")


def unmatched(regexes, text, what):
    """The failures for the regexes that do not match `text` (named `what`)."""
    return [f"{what} does not match /{rx}/" for rx in regexes
            if not re.search(rx, text, re.MULTILINE)]


def report(failures, passed):
    """Prints the failures (or PASS: `passed`); returns the exit code."""
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print(f"PASS: {passed}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
