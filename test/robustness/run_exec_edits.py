#!/usr/bin/env python3
"""Executable-edit robustness test (issue 7): compiles small models once, makes one edited
artifact per seed (exec-edit: one seeded edit of the executable JSON, valid checksum) and runs
each with the ASan+UBSan build of relax-run on a valid input.

A run is OK when it exits 0, or exits 1 with a stderr line starting `error:`. It FAILS on a
signal, a timeout, a sanitizer report ("ERROR: AddressSanitizer", "runtime error:", ...), or any
other exit. Seed s edits case CASES[s % len(CASES)]; everything is deterministic per seed.
Prints a summary (edits, parsed fraction, ok, each failure with its seed and edit) and exits 1 on
any failure, or when fewer than half of the edits still parse (--min-parsed).

  run_exec_edits.py --relaxc R --relax-run-san S --exec-edit E --work DIR [--seeds 0:1000]
                    [--cases tuple,loop,nonzero,cls] [--jobs 2] [--timeout 20]
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CF = os.path.join(HERE, "..", "controlflow")
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                   "AddressSanitizer:", "UndefinedBehaviorSanitizer")


def case_source(case):
    """(source to compile, {input name: array}) of a case."""
    if case == "tuple":
        x = np.random.default_rng(1).standard_normal(16).astype(np.float32)
        return os.path.join(CF, "multi_output.rx"), {"x": x}
    if case == "loop":
        return os.path.join(CF, "loop_match_cast.rx"), {
            "n": np.array(5, dtype=np.int64), "x": np.array([2.0], dtype=np.float32)}
    if case == "nonzero":
        x = (np.random.default_rng(2).random((6, 5)) < 0.4).astype(np.float32)
        return os.path.join(CF, "nonzero_consumer.rx"), {"x": x}
    if case == "cls":
        model = os.environ.get("RELAX_CLS_MODEL")
        if not model or not os.path.isfile(model):
            sys.exit("FAIL: case cls needs RELAX_CLS_MODEL (source scripts/env.sh)")
        x = np.random.default_rng(3).standard_normal((1, 3, 48, 192)).astype(np.float32)
        return model, {"x": x}
    sys.exit(f"FAIL: unknown case {case!r}")


# An edit can turn a loop bound into one never reached (e.g. swapped operands of the counter's
# increment): a well-formed program that does not terminate. The VM's instruction limit makes it
# a clean error; the unedited cases need fewer than 10^4 instructions, and 2 * 10^5 take about 1.5 s
# under ASan.
LIMIT = ["--max-instructions", "200000"]


def run_env():
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=0:allocator_may_return_null=1"
    env["UBSAN_OPTIONS"] = "print_stacktrace=1"
    return env


def classify(rc, out, err):
    """'ok' or the reason of a failure."""
    text = out + err
    for mark in SANITIZER_MARKS:
        if mark in text:
            return "sanitizer report (" + mark.strip(": ") + ")"
    if rc == 0:
        return "ok"
    if rc < 0:
        return f"signal {-rc}"
    if rc == 1 and any(line.startswith("error:") for line in err.splitlines()):
        return "ok"
    return f"exit {rc} without an error: line"


def prepare(case, args):
    """Compiles the case and writes its inputs; returns (artifact, relax-run input flags)."""
    d = os.path.join(args.work, case)
    os.makedirs(d, exist_ok=True)
    src, inputs = case_source(case)
    art = os.path.join(d, "base.so")
    r = subprocess.run([args.relaxc, "compile", src, "-o", art], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: compiling {src}: exit {r.returncode}\n{r.stderr}")
    flags = []
    for name, v in inputs.items():
        p = os.path.join(d, f"in_{name}.npy")
        np.save(p, v)
        flags += ["--input", f"{name}={p}"]
    # The unedited artifact must run cleanly under the sanitizers.
    r = subprocess.run([args.relax_run_san, art] + flags + LIMIT, capture_output=True, text=True,
                       env=run_env(), timeout=args.timeout)
    if r.returncode != 0 or classify(r.returncode, r.stdout, r.stderr) != "ok":
        sys.exit(f"FAIL: unedited {case} does not run: exit {r.returncode}\n{r.stderr}")
    return art, flags


def one_edit(seed, case, base, flags, args):
    """(seed, case, edit description, parses, verdict, stderr tail)."""
    out = os.path.join(args.work, case, f"edit-{seed}.so")
    r = subprocess.run([args.exec_edit, base, out, str(seed)], capture_output=True, text=True)
    if r.returncode != 0:
        return seed, case, "(editor failed)", False, "editor exit %d" % r.returncode, r.stderr
    line = r.stdout.strip()
    edit = line[len("edit "):line.rfind(" parses ")]
    parses = line.endswith("parses yes")
    try:
        p = subprocess.run([args.relax_run_san, out] + flags + LIMIT, capture_output=True, text=True,
                           env=run_env(), timeout=args.timeout, errors="replace")
        verdict = classify(p.returncode, p.stdout, p.stderr)
        tail = p.stderr[-2000:]
    except subprocess.TimeoutExpired:
        verdict, tail = f"timeout ({args.timeout} s)", ""
    if verdict == "ok":
        os.remove(out)  # keep only the failing artifacts
    return seed, case, edit, parses, verdict, tail


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--relax-run-san", required=True)
    ap.add_argument("--exec-edit", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--seeds", default="0:300", help="START:END (END exclusive)")
    ap.add_argument("--cases", default="tuple,loop,nonzero")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--min-parsed", type=float, default=0.5)
    args = ap.parse_args()
    start, end = (int(v) for v in args.seeds.split(":"))
    cases = args.cases.split(",")
    os.makedirs(args.work, exist_ok=True)
    prepared = {c: prepare(c, args) for c in cases}

    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futs = []
        for seed in range(start, end):
            case = cases[seed % len(cases)]
            base, flags = prepared[case]
            futs.append(pool.submit(one_edit, seed, case, base, flags, args))
        for f in futs:
            results.append(f.result())

    n = len(results)
    parsed = sum(1 for r in results if r[3])
    fails = [r for r in results if r[4] != "ok"]
    print(f"exec edits: seeds {start}:{end}, cases {','.join(cases)}")
    print(f"edits {n}, parsed {parsed} ({100.0 * parsed / max(n, 1):.1f} %), "
          f"ok {n - len(fails)}, fail {len(fails)}")
    for c in cases:
        rc = [r for r in results if r[1] == c]
        print(f"  {c}: {len(rc)} edits, {sum(1 for r in rc if r[3])} parsed")
    for seed, case, edit, p, verdict, tail in fails:
        print(f"FAIL seed {seed} case {case}: {edit} (parses {'yes' if p else 'no'}): {verdict}")
        for line in tail.strip().splitlines()[-12:]:
            print("    " + line)
    if n and parsed < args.min_parsed * n:
        print(f"FAIL: only {parsed}/{n} edits parse (need {args.min_parsed:.0%})")
        return 1
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
