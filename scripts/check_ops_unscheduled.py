#!/usr/bin/env python3
"""The `ops_unscheduled` test: ops say what they compute, never how it is scheduled.

Every kernel an op builds (lib/op/: TE computes, and the plain loops of recurrent layers, scans
and scatters marked `loop_kernel`) gets its parallel, vector and unrolled loops from the
target's schedule rules (lib/schedule/, backends/*/schedule_rules.cc). This check fails on any
line of lib/op/ that picks a loop kind other than serial (ForKind::kParallel, kVectorized,
kUnrolled, kThreadBinding) or sets a PrimFunc's `schedule` attribute (which makes the schedule
pass skip it).

Usage: check_ops_unscheduled.py [REPO_ROOT]. Exit 0 when clean, 1 with one line per problem
("file:line: ...").
"""

import os
import re
import sys

FORBIDDEN = (
    (re.compile(r"ForKind::k(Parallel|Vectorized|Unrolled|ThreadBinding)\b"),
     "picks a loop kind (a schedule decision: leave loops serial, say which are independent "
     "with their iteration kind, and let a schedule rule choose)"),
    (re.compile(r'attrs\s*\[\s*"schedule"\s*\]'),
     "sets the `schedule` attribute (the schedule pass would skip this kernel)"),
)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    op_dir = os.path.join(root, "lib", "op")
    problems = []
    for name in sorted(os.listdir(op_dir)):
        if not name.endswith((".cc", ".h")):
            continue
        path = os.path.join(op_dir, name)
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                code = line.split("//", 1)[0]
                for pattern, why in FORBIDDEN:
                    if pattern.search(code):
                        problems.append(f"lib/op/{name}:{n}: {why}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
