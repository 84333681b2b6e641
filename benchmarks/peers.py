# Shared peer-engine code of the side-by-side benchmarks (bench_cls.py, bench_perf.py): run, load, compile.
"""Helpers shared by the benchmarks that time relaxc next to onnxruntime, OpenVINO (CPU plugin,
f32), IREE (llvm-cpu) and TVM (Relax, llvm, untuned):

- subprocess helpers (`run_cmd`, `run_child` with the child's peak RSS) and one-line failure
  reasons for "n/a: <reason>" cells (`short_reason`, `fail_reason`);
- `drop_shape_casts`, the ONNX clean-up TVM's Relax frontend needs on Shape-derived Casts;
- `make_runner`: load an artifact of one peer engine in this process and return a callable that
  runs it on fixed inputs (called by the benchmarks' `--worker` subprocesses);
- `iree_compile` and `tvm_build`: build a peer artifact from a (static-shape) ONNX file.

Nothing here imports onnxruntime, OpenVINO, IREE or TVM at module import time, so the module loads in any
venv with numpy; a missing package only turns into an "n/a" for that engine.
"""
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np

# Packages whose versions the reports list.
PEER_PACKAGES = ("numpy", "onnx", "onnxruntime", "openvino", "iree-base-compiler", "iree-base-runtime",
                 "apache-tvm")


def short_reason(exc_or_text, limit=160):
    """One line, at most `limit` characters, for an 'n/a: <reason>' cell."""
    text = exc_or_text if isinstance(exc_or_text, str) else f"{type(exc_or_text).__name__}: {exc_or_text}"
    lines = [l.strip() for l in text.strip().splitlines() if l.strip()]
    # Prefer the last line that looks like an error message.
    pick = next((l for l in reversed(lines) if "rror" in l or "xception" in l), lines[-1] if lines else "unknown")
    pick = pick.replace("|", "/")
    return pick if len(pick) <= limit else pick[: limit - 3] + "..."


def fail_reason(rc, text):
    """Reason for a failed subprocess: its error message, or the signal that killed it."""
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        return f"crashed with {name}" + (f" ({short_reason(text, 100)})" if text.strip() else "")
    return short_reason(text) if text.strip() else f"exit code {rc}"


def run_cmd(cmd, env=None, timeout=None):
    """Runs a command; returns (returncode, stdout+stderr, seconds)."""
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return p.returncode, p.stdout, time.perf_counter() - t0


def peak_rss_kb(pid="self"):
    """VmHWM (peak resident set of the process's current address space) in KiB, or 0.

    Unlike ru_maxrss this starts afresh at exec: a child forked from a large parent does not
    inherit the parent's high-water mark."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


RSS_MARK = "__peak_rss_kb="


def run_child(cmd, env=None, timeout=None, exact_rss=False):
    """Runs a command; returns (returncode, stdout+stderr, seconds, peak RSS of the child in KiB).

    The peak RSS is, in order of preference: a line `__peak_rss_kb=N` the child prints (workers
    print their own VmHWM; the line is removed from the text); with exact_rss, GNU time's %M
    (/usr/bin/time wraps the command, which then runs as a fresh fork of the small `time`
    process); else the child's VmHWM polled every 10 ms while it runs. (ru_maxrss from wait4 would
    carry this Python parent's own peak across fork + exec.) On timeout the child is killed and
    returncode is None."""
    import tempfile
    if exact_rss and os.access("/usr/bin/time", os.X_OK):
        cmd = ["/usr/bin/time", "-f", RSS_MARK + "%M", *cmd]
    with tempfile.TemporaryFile() as log:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = None if timeout is None else time.monotonic() + timeout
        timed_out, polled = False, 0
        while p.poll() is None:
            polled = max(polled, peak_rss_kb(p.pid))
            if deadline is not None and time.monotonic() > deadline and not timed_out:
                timed_out = True
                p.kill()
            time.sleep(0.01)
        secs = time.perf_counter() - t0
        log.seek(0)
        text = log.read().decode(errors="replace")
    rss, kept = polled, []
    for line in text.splitlines():
        if line.startswith(RSS_MARK):
            rss = int(line[len(RSS_MARK):])
        elif not line.startswith("Command exited with non-zero status"):
            kept.append(line)
    text = "\n".join(kept)
    if timed_out:
        return None, text + f"\ntimeout after {timeout} s", secs, rss
    return p.returncode, text, secs, rss


# ------------------------------------------------------------------------------------------------
# Model preprocessing for peers
# ------------------------------------------------------------------------------------------------

def drop_shape_casts(model):
    """Removes int32/int64 Casts applied to Shape-derived values (Shape -> Cast -> Slice -> Cast).

    Exact for any real tensor shape (dims fit in int32). TVM's Relax ONNX frontend keeps Shape results
    as symbolic shapes only while no Cast turns them into tensors; with the Casts, Reshape fails."""
    g = model.graph
    prod = {o: n for n in g.node for o in n.output}

    def from_shape(name):
        n = prod.get(name)
        while n is not None:
            if n.op_type == "Shape":
                return True
            if n.op_type not in ("Cast", "Slice", "Gather", "Squeeze", "Unsqueeze"):
                return False
            n = prod.get(n.input[0])
        return False

    graph_outputs = {o.name for o in g.output}
    renamed, keep = {}, []
    for n in g.node:
        to = [a.i for a in n.attribute if a.name == "to"]
        if (n.op_type == "Cast" and to and to[0] in (6, 7) and from_shape(n.input[0])
                and n.output[0] not in graph_outputs):
            renamed[n.output[0]] = renamed.get(n.input[0], n.input[0])
            continue
        for i, name in enumerate(n.input):
            if name in renamed:
                n.input[i] = renamed[name]
        keep.append(n)
    del g.node[:]
    g.node.extend(keep)
    return len(renamed)


# ------------------------------------------------------------------------------------------------
# In-process runners (used inside worker subprocesses)
# ------------------------------------------------------------------------------------------------

def time_calls(fn, warmup, runs, min_seconds, max_seconds=None):
    """Warm-up calls, then >= `runs` timed calls (continuing up to `min_seconds` and 10x runs);
    with `max_seconds`, stops early once that much timed time has passed (at least one call)."""
    for _ in range(warmup):
        fn()
    times = []
    t_start = time.perf_counter()
    while True:
        elapsed = time.perf_counter() - t_start
        if times and max_seconds is not None and elapsed >= max_seconds:
            break
        if len(times) >= runs and (elapsed >= min_seconds or len(times) >= 10 * runs):
            break
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def make_runner(engine, artifact, inputs, threads):
    """Loads `artifact` with a peer engine; returns fn() -> first output as np.ndarray.

    inputs: list of (name, np.ndarray) in the model's graph-input order. threads: 1 = one thread;
    0 = the engine's default; n > 1 = n threads where the engine has a knob (onnxruntime
    intra-op threads, OpenVINO INFERENCE_NUM_THREADS, TVM via the TVM_NUM_THREADS environment
    variable that the caller sets before this process starts; IREE's local-task pool follows its
    own topology detection)."""
    if engine == "ort":
        import onnxruntime as ort
        so = ort.SessionOptions()
        if threads > 0:
            so.intra_op_num_threads = threads
            so.inter_op_num_threads = 1
        sess = ort.InferenceSession(artifact, so, providers=["CPUExecutionProvider"])
        feeds = dict(inputs)
        return lambda: sess.run(None, feeds)[0]
    if engine == "openvino":
        # The ONNX file itself, reshaped to the inputs' static shapes; f32 inference (no bf16
        # down-conversion on CPUs that have it), one stream, latency mode.
        import openvino as ov
        core = ov.Core()
        try:
            model = core.read_model(artifact)
        except RuntimeError as e:  # the frontend's multi-line report: keep its one-line summary
            failed = [l.strip() for l in str(e).splitlines() if "Conversion is failed for" in l]
            raise RuntimeError("OpenVINO ONNX frontend: " + (failed[0] if failed else str(e).strip().splitlines()[0]))
        model.reshape({name: list(x.shape) for name, x in inputs})
        config = {"INFERENCE_PRECISION_HINT": "f32", "NUM_STREAMS": "1",
                  "PERFORMANCE_HINT": "LATENCY"}
        if threads > 0:
            config["INFERENCE_NUM_THREADS"] = str(threads)
        compiled = core.compile_model(model, "CPU", config)
        request = compiled.create_infer_request()
        feeds = dict(inputs)

        def fn():
            request.infer(feeds)
            return np.array(request.get_output_tensor(0).data)
        return fn
    if engine == "iree":
        import iree.runtime as rt
        # local-sync runs every dispatch on the calling thread; local-task uses IREE's worker pool.
        config = rt.Config("local-sync" if threads == 1 else "local-task")
        ctx = rt.SystemContext(config=config)
        with open(artifact, "rb") as f:
            vm_module = rt.VmModule.copy_buffer(ctx.instance, f.read())
        ctx.add_vm_module(vm_module)
        entry = [n for n in vm_module.function_names if not n.startswith("__") and not n.endswith("$async")][0]
        func = getattr(ctx.modules, vm_module.name)[entry]
        args = [x for _, x in inputs]

        def fn():
            r = func(*args)
            if isinstance(r, (list, tuple)):
                r = r[0]
            return np.asarray(r.to_host())
        return fn
    if engine == "tvm":
        import tvm
        from tvm import relax
        dev = tvm.cpu()
        lib = tvm.runtime.load_module(artifact)
        vm = relax.VirtualMachine(lib, dev)
        to_dev = tvm.runtime.tensor if hasattr(tvm.runtime, "tensor") else tvm.nd.array
        args = [to_dev(x, dev) for _, x in inputs]
        main = vm["main"]

        def fn():
            r = main(*args)
            return (r if hasattr(r, "numpy") else r[0]).numpy()
        return fn
    raise ValueError(f"unknown peer engine {engine}")


# ------------------------------------------------------------------------------------------------
# Peer compilers
# ------------------------------------------------------------------------------------------------

def iree_tools():
    """(iree-import-onnx, iree-compile) paths from this venv or PATH; raises RuntimeError if absent."""
    try:
        import iree.compiler  # noqa: F401  (import check; the CLI tools come from the same wheel)
    except Exception as e:  # pragma: no cover - depends on the venv
        raise RuntimeError("iree-base-compiler not importable: " + short_reason(e))
    bindir = os.path.dirname(sys.executable)
    imp = shutil.which("iree-import-onnx", path=bindir) or shutil.which("iree-import-onnx")
    comp = shutil.which("iree-compile", path=bindir) or shutil.which("iree-compile")
    if not imp or not comp:
        raise RuntimeError("iree-import-onnx / iree-compile not found")
    return imp, comp


IREE_FLAGS = ["--iree-input-type=onnx", "--iree-hal-target-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"]


def iree_compile(onnx_path, vmfb, opset=17, timeout=None):
    """iree-import-onnx (upgrading to `opset`: torch-mlir's ONNX lowering lacks e.g. BatchNormalization
    below opset 15) then iree-compile for llvm-cpu/host. Returns seconds; raises RuntimeError."""
    imp, comp = iree_tools()
    mlir = os.path.splitext(vmfb)[0] + ".mlir"
    cmd = [imp, onnx_path, "-o", mlir]
    if opset:
        cmd[2:2] = ["--opset-version", str(opset)]
    try:
        rc, text, t1 = run_cmd(cmd, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"iree-import-onnx timeout after {timeout} s")
    if rc != 0:
        raise RuntimeError("iree-import-onnx failed: " + fail_reason(rc, text))
    try:
        rc, text, t2 = run_cmd([comp, mlir, *IREE_FLAGS, "-o", vmfb], timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"iree-compile timeout after {timeout} s")
    if rc != 0:
        raise RuntimeError("iree-compile failed: " + fail_reason(rc, text))
    try:
        os.remove(mlir)
    except OSError:
        pass
    return t1 + t2


def tvm_build(onnx_path, shapes, dtypes, output):
    """Imports an ONNX file with TVM's Relax frontend for static `shapes` ({input: [dims]}) and
    `dtypes` ({input: "float32"/"int64"}), builds it for llvm -mcpu=<host> with the default pipeline
    (no tuning) and exports a .so. Returns a description of the target. Run it in a subprocess:
    TVM can abort the process on failures."""
    import onnx
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx
    from tvm.target import codegen
    model = onnx.load(onnx_path)
    mod = from_onnx(model, shape_dict=shapes, dtype_dict=dtypes, keep_params_in_input=False)
    cpu = codegen.llvm_get_system_cpu()
    target = tvm.target.Target({"kind": "llvm", "mtriple": "x86_64-linux-gnu", "mcpu": cpu})
    ex = relax.build(mod, target=target)
    ex.export_library(output)
    return f"llvm mcpu={cpu}"
