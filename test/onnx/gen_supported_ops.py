#!/usr/bin/env python3
# Writes docs/supported_ops.md (per-op ONNX node-test conformance) from run_node_tests.py's results.json files.
"""Generate docs/supported_ops.md from the results of test/onnx/run_node_tests.py, and its
section on onnxruntime's contrib ops from the contrib case files (CONTRIB_CASES).

Takes the results.json of any of the four runs: the Debian suite (libonnx-testdata) and the
pinned onnx wheel's suite, each static and dynamic (--dynamic). One row per ONNX op type used by
any node test: whether relaxc has a converter, the default-domain opsets of the tests that use it,
per run how many of those tests pass (out-of-scope tests not counted; the dynamic runs cover the
tests the static run passes), and the failing static tests with their status and reason (a test
using several ops counts for each of them).
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RUNS = ("debian", "debian-dynamic", "pypi", "pypi-dynamic")
WORK = {"debian": "onnx", "debian-dynamic": "onnx_dynamic", "pypi": "onnx_pypi",
        "pypi-dynamic": "onnx_pypi_dynamic"}
EXPECTED = {"debian": "expected.txt", "debian-dynamic": "expected_dynamic.txt",
            "pypi": "expected_pypi.txt", "pypi-dynamic": "expected_pypi_dynamic.txt"}
REGEN = """\
    ninja -C build relaxc
    R="scripts/venv-python.sh test/onnx/run_node_tests.py --relaxc build/tools/relaxc"
    $R --work build/test/onnx && $R --work build/test/onnx_dynamic --dynamic
    $R --suite pypi --work build/test/onnx_pypi && $R --suite pypi --work build/test/onnx_pypi_dynamic --dynamic
    scripts/venv-python.sh test/onnx/gen_supported_ops.py"""


def md_escape(text):
    return text.replace("|", "\\|").replace("\n", " ")


def load_run(path, run):
    with open(path) as f:
        data = json.load(f)
    results = data["results"]
    exp = os.path.join(HERE, EXPECTED[run])
    if os.path.isfile(exp):
        with open(exp) as f:
            for line in f:
                parts = line.split(None, 2)
                if len(parts) == 3 and not line.startswith("#"):
                    r = results.get(parts[0])
                    if r and r["status"] == parts[1]:
                        r["reason"] = parts[2].strip()  # the (shorter) hand-kept reason
    return data


# The case files of onnxruntime's contrib ops (com.microsoft, and the ops onnxruntime registers in
# the default domain though ONNX has none of that name), each a ctest of its own.
CONTRIB_CASES = (("contrib_transformer_cases", "onnx.contrib_transformer_cases"),
                 ("contrib_quant_cases", "onnx.contrib_quant_cases"))
CONTRIB_HEADER = "## onnxruntime contrib ops (com.microsoft)"


def contrib_lines():
    """The contrib-op section: one row per op the contrib case files build single-node models of
    (their FAMILIES, errors left out), with those cases. Every case compares relaxc with
    onnxruntime 1.32 in its ctest."""
    import onnx
    sys.path.insert(0, HERE)
    import nn_cases
    rows = {}  # (domain, op) -> (ctest, [case names])
    for module, ctest in CONTRIB_CASES:
        if not os.path.isfile(os.path.join(HERE, module + ".py")):
            continue
        mod = __import__(module)
        nn_cases.CASES.clear()
        for fam, fn in mod.FAMILIES.items():
            if fam != "errors":
                fn()
        own = getattr(mod, "CASES", None)
        tables = [nn_cases.CASES] + ([own] if isinstance(own, dict) and own is not nn_cases.CASES
                                     else [])
        for table in tables:
            for fam, cases in table.items():
                for c in cases:
                    for n in c[1].graph.node:
                        if n.domain in ("", "ai.onnx") and onnx.defs.has(n.op_type):
                            continue
                        key = (n.domain or "ai.onnx (onnxruntime)", n.op_type)
                        rows.setdefault(key, (ctest, []))[1].append((fam, c[0]))
    lines = [
        CONTRIB_HEADER,
        "",
        "The contrib ops that onnxruntime's tools write (transformers optimizer, quantizers, graphs",
        "saved at ORT_ENABLE_ALL). Each is lowered to relaxc's own ops and checked by single-node",
        "models against onnxruntime 1.32 (fp32 rtol 1e-4 / atol 1e-5 unless the case file says",
        "otherwise) in the ctest named; whole models in `models.contrib_*`. Regenerate this section",
        "alone with `scripts/venv-python.sh test/onnx/gen_supported_ops.py --contrib-only`.",
        "",
        "| op | domain | ctest | single-node cases (families) |",
        "|---|---|---|---|",
    ]
    for (domain, op), (ctest, cases) in sorted(rows.items(), key=lambda kv: kv[0][1]):
        fams = ", ".join(f"`{f}`" for f in sorted({f for f, _ in cases}))
        lines.append(f"| {op} | {domain} | `{ctest}` | {len(set(cases))} ({fams}) |")
    lines.append("")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("results", nargs="*",
                    help="results.json files (default: build/test/{onnx,onnx_dynamic,onnx_pypi,"
                         "onnx_pypi_dynamic}/results.json, those that exist)")
    ap.add_argument("-o", "--output", default=os.path.join(ROOT, "docs", "supported_ops.md"))
    ap.add_argument("--contrib-only", action="store_true",
                    help="rewrite only the contrib-op section of the existing output")
    args = ap.parse_args()
    if args.contrib_only:
        with open(args.output) as f:
            text = f.read()
        at = text.find("\n" + CONTRIB_HEADER)
        text = (text if at < 0 else text[:at]).rstrip("\n") + "\n\n"
        with open(args.output, "w") as f:
            f.write(text + "\n".join(contrib_lines()))
        print(f"wrote the contrib-op section of {args.output}")
        return 0
    paths = args.results or [os.path.join(ROOT, "build", "test", WORK[r], "results.json") for r in RUNS]
    runs = {}
    for p in paths:
        if not os.path.isfile(p):
            if args.results:
                print(f"error: {p} not found; run test/onnx/run_node_tests.py first", file=sys.stderr)
                return 1
            continue
        with open(p) as f:
            run = json.load(f).get("suite", "debian")
        if run not in RUNS:
            print(f"error: {p}: unknown suite '{run}'", file=sys.stderr)
            return 1
        runs[run] = load_run(p, run)
    if "debian" not in runs and "pypi" not in runs:
        print("error: no static results found; run test/onnx/run_node_tests.py first", file=sys.stderr)
        return 1
    order = [r for r in RUNS if r in runs]

    ops = set()
    per_op = {}  # op -> run -> [(test, result)]
    for run in order:
        ops |= set(runs[run]["supported_ops"])
        for name, r in runs[run]["results"].items():
            for op in r["ops"]:
                per_op.setdefault(op, {}).setdefault(run, []).append((name, r))
    for op in ops:
        per_op.setdefault(op, {})

    lines = [
        "<!-- Generated by test/onnx/gen_supported_ops.py; do not edit by hand. -->",
        "# Supported ONNX operators",
        "",
        "**Generated file, do not edit by hand.** It is produced from the ONNX backend node tests of",
        "two suites, Debian's `libonnx-testdata` (opsets <= 17) and the node tests shipped in the",
        "pinned `onnx` wheel (opsets <= 21), run through `relaxc compile` + `relaxc run` by",
        "`test/onnx/run_node_tests.py` (ctest `onnx.node_tests*`), each static and in the dynamic",
        "variant (every input dim > 1 made symbolic; run on the tests the static variant passes).",
        "Regenerate with:",
        "",
        "```sh",
        REGEN,
        "```",
        "",
    ]
    for run in order:
        data = runs[run]
        res = data["results"]
        total = sum(1 for r in res.values() if r["status"] != "out-of-scope")
        passed = sum(1 for r in res.values() if r["status"] == "pass")
        strict = sum(1 for r in res.values() if r.get("strict"))
        n_oos = len(res) - total
        n_unsup = sum(1 for r in res.values() if r["status"] == "unsupported")
        if run.endswith("-dynamic"):
            lines.append(f"- **{run}**: {passed} of the {total} tests run pass "
                         f"({100.0 * passed / max(1, total):.1f}%); failures are listed in "
                         f"`test/onnx/{EXPECTED[run]}`.")
        else:
            lines.append(
                f"- **{run}**: {len(res)} node tests; {n_oos} out of scope (random ops, training, "
                f"strings), {passed} of the other {total} pass (compared as ONNX's backend runner "
                f"does: rtol {data.get('rtol', 1e-3):g}, atol {data.get('atol', 1e-7):g}; {strict} "
                f"also at rtol {data.get('strict_rtol', 1e-4):g} / atol "
                f"{data.get('strict_atol', 1e-5):g}); {n_unsup} use an op type without a converter."
                f" Expected statuses: `test/onnx/{EXPECTED[run]}`.")
    lines += [
        "",
        "A test using several ops counts for each of them. Columns give passing / run.",
        "",
        "| ONNX op | converter | opsets tested | " + " | ".join(order) +
        " | failing static tests (suite: status: reason: tests) |",
        "|---|---|---|" + "---|" * len(order) + "---|",
    ]
    for op in sorted(per_op):
        by_run = per_op[op]
        opsets = sorted({r.get("opset") for rs in by_run.values() for _, r in rs
                         if r.get("opset") is not None})
        orange = (f"{opsets[0]}" if len(opsets) == 1 else f"{opsets[0]}-{opsets[-1]}") if opsets else "-"
        cols = []
        fails = []
        for run in order:
            tests = sorted(by_run.get(run, []), key=lambda x: x[0])
            counted = [(n, r) for n, r in tests if r["status"] != "out-of-scope"]
            n_pass = sum(1 for _, r in counted if r["status"] == "pass")
            cols.append(f"{n_pass} / {len(counted)}")
            if run.endswith("-dynamic"):
                continue
            groups = {}
            for n, r in counted:
                if r["status"] != "pass":
                    groups.setdefault((r["status"], r["reason"]), []).append(f"`{n}`")
            fails += [f"{run}: {st}: {md_escape(why)}: {', '.join(names)}"
                      for (st, why), names in sorted(groups.items())]
            if len(counted) != len(tests):
                fails.append(f"{run}: out-of-scope: {len(tests) - len(counted)} test(s)")
        conv = "yes" if op in ops else "no"
        lines.append(f"| {op} | {conv} | {orange} | {' | '.join(cols)} | {'<br>'.join(fails)} |")
    lines.append("")
    lines += contrib_lines()
    with open(args.output, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {args.output} ({len(per_op)} ops; runs: {', '.join(order)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
