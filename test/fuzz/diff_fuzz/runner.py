"""The three engines: relaxc (compile once, run once per feed set, as subprocesses), onnxruntime
CPU (one thread, graph optimizations off: its kernels as written) and onnx.reference."""
import os
import re
import resource
import shutil
import signal
import subprocess
import warnings

import numpy as np
import onnx


def sanitize(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


class Relaxc:
    """Outcome of relaxc on one model: status is ok | unsupported | error | crash | timeout;
    outs: one {output name: array} per feed set (status ok)."""

    def __init__(self, status, stage="", detail="", ops=(), outs=None, cmd=""):
        self.status, self.stage, self.detail, self.ops = status, stage, detail, list(ops)
        self.outs, self.cmd = outs or [], cmd


def _first_error(text):
    for line in text.splitlines():
        if "error:" in line:
            return re.sub(r"^.*?error:\s*", "", line).strip()
    lines = [x for x in text.splitlines() if x.strip()]
    return lines[-1].strip() if lines else ""


def _describe_rc(rc):
    if rc < 0:
        try:
            return f"signal {signal.Signals(-rc).name}"
        except ValueError:
            return f"signal {-rc}"
    return f"exit code {rc}"


# A refusal of a valid model: an op, attribute value or element type relaxc does not implement
# ("needs a float32 or float64 input, got f16", "only p = 1 and p = 2 are supported").
UNSUPPORTED_RE = re.compile(r"unsupported|not supported|are supported|not implemented|"
                            r"needs a float|f32 or f64|float32 or float64", re.I)


def _classify(p, stage, cmd):
    out = (p.stderr or "") + (p.stdout or "")
    rc = p.returncode
    if rc < 0 or rc >= 128:
        return Relaxc("crash", stage, f"{_describe_rc(rc)}: {_first_error(out)[:300]}", cmd=cmd)
    if re.search(r"out of memory|bad_alloc|std::length_error", out):
        return Relaxc("crash", stage, f"out of memory (limit {MEMORY_LIMIT_MB} MB): "
                      f"{_first_error(out)[:250]}", cmd=cmd)
    if rc in (1, 2) and re.search(r"(^|\s)error:", out):
        msg = _first_error(out)
        if stage == "compile" and "unsupported op type" in out:
            ops = re.findall(r"^\s+(\S+) \(first at node", out, re.M)
            return Relaxc("unsupported", stage, "no converter", ops, cmd=cmd)
        if UNSUPPORTED_RE.search(msg):
            m = re.match(r"([A-Za-z0-9_.]+) '[^']*': ", msg)
            ops = [m.group(1)] if m else ["?"]
            return Relaxc("unsupported", stage, msg[:300], ops, cmd=cmd)
        return Relaxc("error", stage, msg[:300], cmd=cmd)
    return Relaxc("crash", stage, f"unclean exit ({_describe_rc(rc)}, no error line): "
                  f"{_first_error(out)[:300]}", cmd=cmd)


MEMORY_LIMIT_MB = 6144  # address space of each relaxc process (diff_fuzz.py --memory-limit-mb)


def _limit_memory():
    lim = MEMORY_LIMIT_MB << 20
    resource.setrlimit(resource.RLIMIT_AS, (lim, lim))


def run_relaxc(relaxc, model_path, feed_sets, work, compile_timeout=120, run_timeout=60):
    """Compiles model_path into work/model.so and runs it on each feed set. Each process gets
    MEMORY_LIMIT_MB of address space: running out is a finding (status crash), not the
    machine's memory gone."""
    os.makedirs(work, exist_ok=True)
    so = os.path.join(work, "model.so")
    cmd = [relaxc, "compile", model_path, "-o", so]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                           timeout=compile_timeout, preexec_fn=_limit_memory)
    except subprocess.TimeoutExpired:
        return Relaxc("timeout", "compile", f"compile over {compile_timeout} s", cmd=" ".join(cmd))
    if p.returncode != 0:
        return _classify(p, "compile", " ".join(cmd))
    outs = []
    for k, feeds in enumerate(feed_sets):
        d = os.path.join(work, f"run{k}")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, "out"))
        rcmd = [relaxc, "run", so, "--output-dir", os.path.join(d, "out")]
        for name, arr in feeds.items():
            f = os.path.join(d, sanitize(name) + ".npy")
            np.save(f, arr, allow_pickle=False)
            rcmd += ["--input", f"{name}={f}"]
        try:
            p = subprocess.run(rcmd, capture_output=True, text=True, errors="replace",
                               timeout=run_timeout, preexec_fn=_limit_memory)
        except subprocess.TimeoutExpired:
            return Relaxc("timeout", f"run{k}", f"run over {run_timeout} s", cmd=" ".join(rcmd))
        if p.returncode != 0:
            return _classify(p, f"run{k}", " ".join(rcmd))
        got = {}
        for f in os.listdir(os.path.join(d, "out")):
            if f.endswith(".npy"):
                got[f[:-4]] = np.load(os.path.join(d, "out", f), allow_pickle=False)
        outs.append(got)
    return Relaxc("ok", outs=outs)


def relaxc_outputs(model, got):
    """Maps relaxc's files (sanitized names) back to the model's output names."""
    return {o.name: got[sanitize(o.name)] for o in model.graph.output if sanitize(o.name) in got}


class OrtFailure(Exception):
    pass


def run_ort(model, feed_sets):
    """One {output name: array} per feed set; OrtFailure when onnxruntime refuses or fails."""
    import onnxruntime as ort
    ort.set_default_logger_severity(3)  # no per-session warnings (RoiAlign's max mode note)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 4
    try:
        sess = ort.InferenceSession(model.SerializeToString(), so,
                                    providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001
        raise OrtFailure("session: " + str(e).splitlines()[0][:300])
    names = [o.name for o in sess.get_outputs()]
    res = []
    for feeds in feed_sets:
        try:
            vals = sess.run(None, feeds)
        except Exception as e:  # noqa: BLE001
            raise OrtFailure("run: " + str(e).splitlines()[0][:300])
        res.append(dict(zip(names, [np.asarray(v) for v in vals])))
    return res


def _gridsample_as_opset20(model):
    """GridSample's opset-16 modes under their opset-20 names (onnx 1.16's reference only
    implements the latter; the semantics are the same)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for n in m.graph.node:
        for a in n.attribute:
            if n.op_type == "GridSample" and a.name == "mode":
                a.s = {b"bilinear": b"linear", b"bicubic": b"cubic"}.get(a.s, a.s)
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = max(o.version, 20)
    return m


def run_reference(model, feeds):
    """onnx.reference's outputs for one feed set ({name: array}); raises on failure."""
    from onnx.reference import ReferenceEvaluator
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            vals = ReferenceEvaluator(model).run(None, feeds)
        except Exception:  # noqa: BLE001
            if not any(n.op_type == "GridSample" for n in model.graph.node):
                raise
            vals = ReferenceEvaluator(_gridsample_as_opset20(model)).run(None, feeds)
    out = {}
    for o, v in zip(model.graph.output, vals):
        v = np.asarray(v)
        et = o.type.tensor_type.elem_type
        if et and v.dtype != onnx.helper.tensor_dtype_to_np_dtype(et):
            v = v.astype(onnx.helper.tensor_dtype_to_np_dtype(et))  # its float64 leaks
        out[o.name] = v
    return out


def save_model(model, path):
    onnx.save(model, path)
    return path
