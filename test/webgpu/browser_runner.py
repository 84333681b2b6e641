"""A browser that runs many webgpu artifacts (the node-test harness's `relaxc run` for
--target webgpu): one chromium-headless-shell on runner.html with one WebGPU device and the web
runtime; each run() hands the page an artifact and its inputs through a server on 127.0.0.1 and
waits for the outputs. A run that takes longer than its time limit restarts the browser.

    with BrowserRunner(chromium, web_dir) as r:
        outputs = r.run("model.so", {"x": array}, timeout=60)   # {name: array} or BrowserError
"""
import base64
import http.server
import json
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading

import numpy as np

from browser import BrowserError, copy_web_runtime

NAMES = {np.float32: "float32", np.float64: "float64", np.float16: "float16", np.int8: "int8",
         np.int16: "int16", np.int32: "int32", np.int64: "int64", np.uint8: "uint8",
         np.uint16: "uint16", np.uint32: "uint32", np.uint64: "uint64", np.bool_: "bool"}
TYPES = {v: k for k, v in NAMES.items()}
TYPES["bfloat16"] = np.uint16


class BrowserRunner:
    def __init__(self, chromium, web_dir, startup_timeout=120):
        self.chromium = chromium
        self.site = tempfile.mkdtemp(prefix="relax-webgpu-runner-")
        here = os.path.dirname(os.path.abspath(__file__))
        copy_web_runtime(web_dir, self.site)
        shutil.copy(os.path.join(here, "runner.html"), self.site)
        self.jobs = queue.Queue()
        self.results = {}
        self.cv = threading.Condition()
        self.lock = threading.Lock()  # one run at a time
        self.next_id = 0
        self.proc = None
        self.startup_timeout = startup_timeout
        self._serve()

    def _serve(self):
        runner = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            extensions_map = dict(http.server.SimpleHTTPRequestHandler.extensions_map,
                                  **{".wasm": "application/wasm", ".js": "text/javascript"})

            def __init__(self, *a, **k):
                super().__init__(*a, directory=runner.site, **k)

            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path != "/next":
                    return super().do_GET()
                job = runner.jobs.get()
                body = json.dumps(job).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the browser was stopped

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                msg = json.loads(self.rfile.read(n))
                self.send_response(204)
                self.end_headers()
                with runner.cv:
                    runner.results[msg.get("id")] = msg
                    runner.cv.notify_all()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _start(self):
        self.profile = tempfile.mkdtemp(prefix="relax-chromium-")
        url = "http://127.0.0.1:%d/runner.html" % self.server.server_address[1]
        argv = [self.chromium, "--headless", "--no-sandbox", "--enable-unsafe-webgpu",
                "--enable-logging=stderr", "--v=0", "--no-first-run", "--disable-gpu-sandbox",
                "--user-data-dir=" + self.profile, url]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)

    def _stop(self):
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self.proc = None
        shutil.rmtree(self.profile, ignore_errors=True)
        # A page stuck in a job leaves its /next request pending: drain stale jobs.
        while not self.jobs.empty():
            self.jobs.get_nowait()

    def run(self, artifact, inputs, timeout=120):
        """Runs `artifact` on `inputs` ({name: ndarray}) in the browser; returns {name: ndarray}
        in output order. Raises BrowserError with the runtime's message."""
        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                self._stop()
                self._start()
            self.next_id += 1
            job_id = self.next_id
            name = "job%d.so" % job_id
            shutil.copy(artifact, os.path.join(self.site, name))
            enc = []
            for k, v in inputs.items():
                v = np.asarray(v, order="C")  # (ascontiguousarray makes a 0-d array 1-d)
                dt = NAMES.get(v.dtype.type)
                if dt is None:
                    raise BrowserError("input '%s': dtype %s has no browser form" % (k, v.dtype))
                raw = (v.astype(np.uint8) if v.dtype == np.bool_ else v).tobytes()
                enc.append({"name": k, "dtype": dt, "shape": [int(d) for d in v.shape],
                            "data": base64.b64encode(raw).decode()})
            self.jobs.put({"id": job_id, "name": os.path.basename(artifact), "artifact": name,
                           "inputs": enc})
            try:
                with self.cv:
                    if not self.cv.wait_for(lambda: job_id in self.results, timeout=timeout):
                        self._stop()
                        raise BrowserError("the browser did not finish within %g s" % timeout)
                    msg = self.results.pop(job_id)
            finally:
                os.unlink(os.path.join(self.site, name))
            if msg.get("error"):
                raise BrowserError(msg["error"])
            out = {}
            for o in msg["outputs"]:
                t = TYPES.get(o["dtype"], np.uint8)
                a = np.frombuffer(base64.b64decode(o["data"]),
                                  dtype=np.uint8 if t is np.bool_ else t).reshape(o["shape"])
                out[o["name"]] = a != 0 if t is np.bool_ else a
            return out

    def close(self):
        with self.lock:
            self.jobs.put({"stop": True})
            self._stop()
        self.server.shutdown()
        shutil.rmtree(self.site, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
