"""Runs a page in a real browser with WebGPU (issue 34's test driver): Debian's
chromium-headless-shell with WebGPU on its bundled SwiftShader Vulkan, the page served from a
static server bound to 127.0.0.1 (a private folder), results read from the page's console lines.

The page reports by logging one line `RELAX_RESULT <json>`; the browser is then stopped. A page
that reports nothing within the time limit is an error (the browser is killed): nothing hangs.

    from browser import find_chromium, run_page
    result = run_page(chromium, folder, "page.html", timeout=60)

The browser is `$RELAX_CHROMIUM`, else chromium-headless-shell on PATH. As root it needs
--no-sandbox. Its profile is a fresh temporary folder.
"""
import functools
import http.server
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading

MARKER = "RELAX_RESULT "


class BrowserError(Exception):
    pass


SKIP = 77  # ctest's SKIP_RETURN_CODE for the browser tests


class NoBrowser(Exception):
    """Raised by require_chromium; `code` is the test's exit status (1, or SKIP)."""

    def __init__(self, code):
        super().__init__(code)
        self.code = code


def require_chromium():
    """The browser for a test: its path, or NoBrowser after printing why (a failure, or a skip
    when RELAX_TEST_WEBGPU=0)."""
    chromium = find_chromium()
    if chromium:
        return chromium
    if os.environ.get("RELAX_TEST_WEBGPU") == "0":
        print("SKIP: no chromium-headless-shell (RELAX_TEST_WEBGPU=0)")
        raise NoBrowser(SKIP)
    print("FAIL: chromium-headless-shell is not installed (bash scripts/setup.sh installs it; "
          "RELAX_TEST_WEBGPU=0 skips the browser tests)")
    raise NoBrowser(1)


# The built web runtime (scripts/build_web.sh: build/web) and the JS source of web/.
WEB_FILES = ("relax_runtime.js", "relax_runtime.wasm", "relax.js", "gpu.js")
WEB_SOURCE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "web")


def copy_web_runtime(web, site):
    """Copies the built web runtime from `web` into the served folder `site`; BrowserError
    naming the missing file when it is not built."""
    for f in WEB_FILES:
        if not os.path.isfile(os.path.join(web, f)):
            raise BrowserError("%s is missing in %s (bash scripts/build_web.sh builds the web "
                               "runtime)" % (f, web))
        shutil.copy(os.path.join(web, f), site)


def finish(failures):
    """Prints the failures (or PASS) and returns the test's exit status."""
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("PASS")
    return 1 if failures else 0


def find_chromium():
    """The browser's path, or None when there is none."""
    env = os.environ.get("RELAX_CHROMIUM")
    if env:
        return env if os.access(env, os.X_OK) else None
    return shutil.which("chromium-headless-shell")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    extensions_map = dict(http.server.SimpleHTTPRequestHandler.extensions_map,
                          **{".wasm": "application/wasm", ".js": "text/javascript"})

    def log_message(self, *args):
        pass


def _serve(folder):
    handler = functools.partial(_Quiet, directory=folder)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _console_text(line):
    # Chromium's console lines on stderr: [..:INFO:CONSOLE:27] "text", source: URL (27)
    start = line.find('"')
    end = line.rfind('", source:')
    if start < 0 or end <= start:
        return None
    return line[start + 1:end]


def run_page(chromium, folder, page, timeout=120, log=None, webgpu=True):
    """Opens http://127.0.0.1:PORT/<page> (PORT: a free port; the server serves `folder`) and
    returns the JSON object of the page's RELAX_RESULT line. Console lines go to `log` (a list)
    when given. Raises BrowserError when the browser fails or the page does not report within
    `timeout` seconds. `webgpu`=False starts the browser without WebGPU (navigator.gpu is
    missing then), as most browsers are today."""
    server = _serve(folder)
    profile = tempfile.mkdtemp(prefix="relax-chromium-")
    url = "http://127.0.0.1:%d/%s" % (server.server_address[1], page)
    argv = [chromium, "--headless", "--no-sandbox"] + (["--enable-unsafe-webgpu"] if webgpu else []) + [
        "--enable-logging=stderr", "--v=0", "--no-first-run", "--disable-gpu-sandbox",
        "--user-data-dir=" + profile, url]
    # Its own process group: Chromium's helper processes (GPU, renderer) inherit stderr, so the
    # whole group is stopped, or the pipe would stay open.
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, errors="replace",
                            start_new_session=True)

    def stop():
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    lines = []
    result = None
    timer = threading.Timer(timeout, stop)
    timer.start()
    try:
        for line in proc.stderr:
            if ":CONSOLE" not in line:
                continue
            text = _console_text(line)
            if text is None:
                continue
            lines.append(text)
            if text.startswith(MARKER):
                result = json.loads(text[len(MARKER):])
                break
    finally:
        timer.cancel()
        stop()
        proc.wait()
        server.shutdown()
        shutil.rmtree(profile, ignore_errors=True)
    if log is not None:
        log.extend(lines)
    if result is None:
        tail = "\n".join(lines[-10:])
        raise BrowserError("the page %s reported no result within %d s (browser exit %s)%s" %
                           (page, timeout, proc.returncode, "; console:\n" + tail if tail else ""))
    return result
