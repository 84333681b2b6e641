#!/usr/bin/env python3
"""Differential fuzzer (issue 33): random valid ONNX graphs through relaxc and onnxruntime.

Each graph (1..--max-nodes nodes, a random opset in --opset) is compiled once by relaxc and run on
two feed sets whose symbolic dims differ; onnxruntime (CPU, one thread) runs the same feeds.
Outcomes per graph: skipped (onnxruntime refuses or fails), unsupported (relaxc refuses an op or
attribute with an "unsupported" error), error (another clean relaxc error), crash / timeout
(relaxc died on a signal, exited uncleanly or hung), compared. Compared outputs that differ are
judged by onnx.reference (triage.judge): mismatch, ort_off_spec or borderline. Mismatches, crashes
and onnxruntime off-spec results are minimized and saved under --repro-dir.

  diff_fuzz.py --relaxc R --work DIR (--seconds N | --graphs N) [--seed S] [--opset 13..21]
               [--max-nodes 6] [--repro-dir DIR] [--report FILE.json]
  diff_fuzz.py --relaxc R --work DIR --replay REPRO_DIR

Exits 1 when a mismatch, crash or timeout was found (ort_off_spec, borderline, unsupported and
relaxc errors are reported, and do not fail the run)."""
import argparse
import collections
import json
import os
import re
import shutil
import sys
import time

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402
import generate  # noqa: E402
import registry  # noqa: E402
import runner  # noqa: E402
import triage  # noqa: E402

FAILING = ("mismatch", "crash", "timeout")
# onnxruntime's session errors naming a node it has no kernel (or no type) for
NO_KERNEL = re.compile(r"NOT_IMPLEMENTED.*?(?:node with name '([^']+)'|\(node:'([^']+)')|"
                       r"INVALID_GRAPH.*?Type Error: .* in node \(([^)]+)\)")


def parse_opsets(text):
    if ".." in text:
        a, b = text.split("..")
        return list(range(int(a), int(b) + 1))
    return [int(x) for x in text.split(",")]


class Run:
    def __init__(self, args):
        self.args = args
        self.count = collections.Counter()
        self.unsupported = collections.Counter()     # op -> graphs
        self.unsupported_why = {}                    # op -> first message
        self.skipped_why = collections.Counter()     # onnxruntime's failure (first line)
        self.covered = set()
        self.findings = collections.defaultdict(list)
        self.signatures = collections.Counter()
        self.builder_errors = {}
        self.minimize_s = 0.0
        self.start = time.monotonic()

    # ---- one graph ---------------------------------------------------------------------------
    def graph(self, index):
        a = self.args
        rng = generate.graph_rng(a.seed, index)
        opset = a.opsets[int(rng.integers(len(a.opsets)))]
        gb = generate.generate(rng, opset, a.max_nodes, stats=self.builder_errors)
        if gb is None:
            self.count["empty"] += 1
            return
        self.count["generated"] += 1
        model = gb.model()
        try:
            feed_sets = gb.feeds(rng)
        except Exception:  # noqa: BLE001  (a generator could not fill an input)
            self.count["no_feeds"] += 1
            return
        exact = {v.name: v.exact for v in gb.pool if v.kind == "node"}
        model, feed_sets, ort_outs = self.ort(model, feed_sets)
        if model is None:
            return
        ops = sorted({n.op_type for n in model.graph.node})
        work = os.path.join(a.work, "g")
        shutil.rmtree(work, ignore_errors=True)
        path = runner.save_model(model, os.path.join(a.work, "model.onnx"))
        r = runner.run_relaxc(a.relaxc, path, feed_sets, work, a.compile_timeout, a.run_timeout)
        where = {"seed": a.seed, "graph": index, "opset": opset, "ops": ops}
        if r.status == "unsupported":
            self.count["unsupported"] += 1
            for o in r.ops:
                self.unsupported[o] += 1
                self.unsupported_why.setdefault(o, r.detail)
            return
        if r.status == "error":
            self.count["relaxc_error"] += 1
            self.findings["relaxc_error"].append(dict(where, stage=r.stage, detail=r.detail))
            return
        if r.status in ("crash", "timeout"):
            run = int(r.stage[3:]) if r.stage.startswith("run") else 0
            outs = [o.name for o in model.graph.output]
            self.finding(r.status, model, feed_sets[run], outs, exact,
                         dict(where, stage=r.stage, detail=r.detail, cmd=r.cmd), {})
            return
        self.count["compared"] += 1
        self.covered.update(ops)
        for k, (got_raw, want) in enumerate(zip(r.outs, ort_outs)):
            got = runner.relaxc_outputs(model, got_raw)
            rerun = triage.rerunner(a.relaxc, model, path, os.path.join(a.work, "rerun"))
            v = triage.judge(model, feed_sets[k], got, want, exact, rerun)
            if v is None:
                continue
            kind, verdict, diffs, ref = v
            if kind in ("borderline", "nan_semantics"):  # listed, not minimized
                self.count[kind] += 1
                self.findings[kind].append(dict(where, run=k, verdict=verdict, diffs=diffs))
                break
            arrays = {}
            for n in diffs:
                arrays.update({f"relaxc_{n}": got.get(n, np.zeros(0)), f"ort_{n}": want[n]})
                if ref is not None:
                    arrays[f"reference_{n}"] = ref[n]
            self.finding(kind, model, feed_sets[k], list(diffs), exact,
                         dict(where, run=k, verdict=verdict, diffs=diffs), arrays)
            break

    def ort(self, model, feed_sets):
        """onnxruntime's outputs. A node it has no kernel for (a type it does not implement) is
        dropped with what depends on it, up to 3 times; then the graph is skipped."""
        for attempt in range(4):
            try:
                return model, feed_sets, runner.run_ort(model, feed_sets)
            except runner.OrtFailure as e:
                m = NO_KERNEL.search(str(e)) if str(e).startswith("session") else None
                name = next(x for x in m.groups() if x) if m else None
                small = triage.drop_node(model, name) if name and attempt < 3 else None
                if small is None:
                    ops = sorted({n.op_type for n in model.graph.node})
                    self.count["skipped_ort"] += 1
                    self.skipped_why[" ".join(ops) + " | " + str(e)[:160]] += 1
                    return None, None, None
                self.count["ort_trimmed_nodes"] += len(model.graph.node) - len(small.graph.node)
                names = {i.name for i in small.graph.input}
                model = small
                feed_sets = [{k: v for k, v in f.items() if k in names} for f in feed_sets]

    # ---- findings ----------------------------------------------------------------------------
    def finding(self, kind, model, feeds, outputs, exact, info, arrays):
        a = self.args
        t0 = time.monotonic()
        mwork = os.path.join(a.work, "min")
        budget = a.minimize_seconds
        if a.seconds is not None:  # a bounded run stays bounded: at most 60 s past its end
            budget = max(0.0, min(budget, a.seconds + 60 - (t0 - self.start)))
        still = triage.Tester(a.relaxc, mwork, kind, exact, budget)
        try:
            small, sfeeds = triage.minimize(model, feeds, outputs, still)
        except Exception as e:  # noqa: BLE001  (never lose the finding to the minimizer)
            small, sfeeds = model, feeds
            info["minimize_error"] = f"{type(e).__name__}: {e}"[:200]
        self.minimize_s += time.monotonic() - t0
        if kind in ("mismatch", "ort_off_spec") and small is not model:
            kind = self.rejudge(kind, small, sfeeds, exact, info)
        self.count[kind] += 1
        sops = sorted({n.op_type for n in small.graph.node})
        info.update(min_ops=sops, min_nodes=len(small.graph.node), min_tests=still.tests,
                    nodes=len(model.graph.node))
        sig = f"{kind}:{' '.join(sops)}"
        self.signatures[sig] += 1
        if small is not model:
            info["min_summary"] = self.summarize(kind, small, sfeeds, exact)
        info["exact"] = {o.name: exact.get(o.name, False) for o in small.graph.output}
        if a.repro_dir and self.signatures[sig] <= a.repros_per_signature:
            info["repro"] = triage.save_repro(a.repro_dir, kind, small, sfeeds,
                                              dict(info, ops=sops), arrays)
        self.findings[kind].append(info)
        print(f"  [{kind}] graph {info['graph']} ops {' '.join(info['ops'])} -> "
              f"{' '.join(sops)} ({len(small.graph.node)} nodes): "
              f"{info.get('verdict', info.get('detail', ''))}", flush=True)

    def rejudge(self, kind, model, feeds, exact, info):
        """The minimized graph's verdict (the reference may judge it where it could not judge
        the whole graph)."""
        a = self.args
        path = runner.save_model(model, os.path.join(a.work, "rejudge.onnx"))
        r = runner.run_relaxc(a.relaxc, path, [feeds], os.path.join(a.work, "rejudge"))
        try:
            want = runner.run_ort(model, [feeds])[0]
        except runner.OrtFailure:
            return kind
        if r.status != "ok":
            return kind
        v = triage.judge(model, feeds, runner.relaxc_outputs(model, r.outs[0]), want, exact)
        if v is not None and v[0] != kind:
            info.update(first_verdict=info.get("verdict"), verdict=v[1], diffs=v[2])
            return v[0]
        return kind

    def summarize(self, kind, model, feeds, exact):
        """The minimized model's outcome: both engines' outputs summarized."""
        a = self.args
        path = runner.save_model(model, os.path.join(a.work, "min_final.onnx"))
        r = runner.run_relaxc(a.relaxc, path, [feeds], os.path.join(a.work, "min_final"))
        s = {"relaxc": r.status if r.status != "ok" else {
            n: compare.summary(v) for n, v in runner.relaxc_outputs(model, r.outs[0]).items()}}
        if kind not in ("crash", "timeout"):
            try:
                s["ort"] = {n: compare.summary(v) for n, v in
                            runner.run_ort(model, [feeds])[0].items()}
            except runner.OrtFailure as e:
                s["ort"] = str(e)
            try:
                s["reference"] = {n: compare.summary(v) for n, v in
                                  runner.run_reference(model, feeds).items()}
            except Exception as e:  # noqa: BLE001
                s["reference"] = f"failed: {e}"[:200]
        return s

    # ---- report ------------------------------------------------------------------------------
    def report(self, seconds):
        ops_all = sorted(set().union(*[set(registry.available(o)) for o in self.args.opsets]))
        c = self.count
        return {
            "seed": self.args.seed, "opsets": [min(self.args.opsets), max(self.args.opsets)],
            "seconds": round(seconds, 1), "minimize_seconds": round(self.minimize_s, 1),
            "graphs_generated": c["generated"], "graphs_compared": c["compared"],
            "skipped_ort_failure": c["skipped_ort"],
            "ort_trimmed_nodes": c["ort_trimmed_nodes"], "graphs_unsupported": c["unsupported"],
            "relaxc_errors": c["relaxc_error"], "mismatches": c["mismatch"],
            "ort_off_spec": c["ort_off_spec"], "borderline": c["borderline"],
            "nan_semantics": c["nan_semantics"],
            "crashes": c["crash"], "timeouts": c["timeout"], "driver_errors": c["driver_error"],
            "ops_covered_count": len(self.covered), "ops_covered": sorted(self.covered),
            "ops_in_table_not_covered": sorted(set(ops_all) - self.covered),
            "unsupported_by_op": dict(self.unsupported.most_common()),
            "unsupported_reason": self.unsupported_why,
            "skipped_reasons_top": dict(self.skipped_why.most_common(25)),
            "finding_signatures": dict(self.signatures.most_common()),
            "findings": {k: v[:50] for k, v in self.findings.items()},
            "generator_builder_errors": self.builder_errors,
        }


def replay(args):
    d = args.replay
    info = json.load(open(os.path.join(d, "info.json")))
    model = onnx.load(os.path.join(d, "model.onnx"))
    feeds = {info["inputs"].get(f[:-4], f[:-4]): np.load(os.path.join(d, "inputs", f))
             for f in os.listdir(os.path.join(d, "inputs"))}
    r = runner.run_relaxc(args.relaxc, os.path.join(d, "model.onnx"), [feeds], args.work)
    print(f"relaxc: {r.status} {r.stage} {r.detail}")
    if r.status != "ok":
        return 1 if r.status in FAILING else 0
    got = runner.relaxc_outputs(model, r.outs[0])
    try:
        want = runner.run_ort(model, [feeds])[0]
    except runner.OrtFailure as e:
        print(f"onnxruntime failed: {e}")
        return 0
    v = triage.judge(model, feeds, got, want, info.get("exact", {}))
    if v is None:
        print("relaxc and onnxruntime agree (fixed)")
        return 0
    print(f"{v[0]}: {v[1]}")
    for n, why in v[2].items():
        print(f"  {n}: {why}")
    return 1 if v[0] in FAILING else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--seconds", type=float, help="generate graphs for this long")
    ap.add_argument("--graphs", type=int, help="generate this many graphs")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--first-graph", type=int, default=0, help="index of the first graph")
    ap.add_argument("--opset", default="13..21", help="A..B or a list: the opsets drawn from")
    ap.add_argument("--max-nodes", type=int, default=6)
    ap.add_argument("--repro-dir")
    ap.add_argument("--repros-per-signature", type=int, default=2)
    ap.add_argument("--report")
    ap.add_argument("--minimize-seconds", type=float, default=120)
    ap.add_argument("--compile-timeout", type=float, default=120)
    ap.add_argument("--run-timeout", type=float, default=60)
    ap.add_argument("--memory-limit-mb", type=int, default=runner.MEMORY_LIMIT_MB,
                    help="address space of each relaxc process; running out is a crash")
    ap.add_argument("--replay", help="re-judge a saved repro folder")
    args = ap.parse_args()
    runner.MEMORY_LIMIT_MB = args.memory_limit_mb
    os.makedirs(args.work, exist_ok=True)
    if args.replay:
        return replay(args)
    if args.seconds is None and args.graphs is None:
        ap.error("give --seconds or --graphs")
    args.opsets = parse_opsets(args.opset)
    run = Run(args)
    start = run.start
    i = args.first_graph
    while True:
        if args.graphs is not None and i - args.first_graph >= args.graphs:
            break
        if args.seconds is not None and time.monotonic() - start >= args.seconds:
            break
        try:
            run.graph(i)
        except Exception as e:  # noqa: BLE001  (a driver bug loses one graph, not the run)
            run.count["driver_error"] += 1
            run.findings["driver_error"].append(
                {"graph": i, "error": f"{type(e).__name__}: {e}"[:300]})
            print(f"  [driver_error] graph {i}: {type(e).__name__}: {e}", flush=True)
        i += 1
        if (i - args.first_graph) % 50 == 0:
            c = run.count
            print(f"{i - args.first_graph} graphs, {time.monotonic() - start:.0f} s: compared "
                  f"{c['compared']}, ops {len(run.covered)}, mismatch {c['mismatch']}, "
                  f"off-spec {c['ort_off_spec']}, crash {c['crash']}", flush=True)
    rep = run.report(time.monotonic() - start)
    rep["graph_indices"] = [args.first_graph, i - 1]
    short = {k: v for k, v in rep.items() if k not in (
        "ops_covered", "findings", "unsupported_reason", "skipped_reasons_top")}
    print(json.dumps(short, indent=1))
    if args.report:
        with open(args.report, "w") as f:
            json.dump(rep, f, indent=1, default=str)
    return 1 if any(rep[k] for k in ("mismatches", "crashes", "timeouts")) else 0


if __name__ == "__main__":
    sys.exit(main())
