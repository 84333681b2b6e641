# Parses the per-callee table that `relaxc run --profile` / `relax-run --profile` print; shared by the benchmarks.
"""`relaxc run ART --profile` (and `relax-run ART --profile`) print, after the outputs, one line
per callee summed over all runs of the invocation:

      total ms    calls   share  callee
         5.363        4   61.9%  gru_1
         0.018       60    0.2%  vm.builtin.alloc_tensor

Callees named `vm.builtin.*` are VM builtins (allocation, shape checks, tuples); every other
callee is a kernel (a call_tir PrimFunc or an external library call). With `--repeat 1` the
invocation runs once, so the counts are per inference; with `--repeat K > 1` relax-run adds one
warm-up run (K + 1 runs in the counts).
"""
import re

_LINE = re.compile(r"\s+([0-9.]+)\s+(\d+)\s+[0-9.]+%\s+(\S+)$")


def parse_profile(text):
    """{callee: (total ms, calls)} from the printed profile table."""
    rows = {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if m:
            rows[m.group(3)] = (float(m.group(1)), int(m.group(2)))
    return rows


def call_counts(rows, runs=1):
    """(kernel calls, VM builtin calls) per run of a parsed profile covering `runs` runs."""
    kernels = sum(c for k, (_, c) in rows.items() if not k.startswith("vm.builtin."))
    builtins = sum(c for k, (_, c) in rows.items() if k.startswith("vm.builtin."))
    return kernels // runs, builtins // runs
