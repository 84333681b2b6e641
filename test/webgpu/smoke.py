#!/usr/bin/env python3
"""webgpu.browser_smoke (issue 34's foundation): Chromium's WebGPU runs a WGSL kernel whose
results are read back exactly, reports a WGSL error through getCompilationInfo(), and has the
limits the webgpu target is written against; the driver (browser.py) stops a page that never
reports. A missing browser fails, unless RELAX_TEST_WEBGPU=0 (then exit 77: skipped).

Usage: smoke.py [--timeout S]
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import BrowserError, NoBrowser, finish, require_chromium, run_page  # noqa: E402



def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--timeout", type=int, default=120)
    args = p.parse_args()
    try:
        chromium = require_chromium()
    except NoBrowser as e:
        return e.code
    here = os.path.dirname(os.path.abspath(__file__))
    failures = []
    with tempfile.TemporaryDirectory(prefix="relax-webgpu-") as site:
        shutil.copy(os.path.join(here, "smoke.html"), site)
        with open(os.path.join(site, "silent.html"), "w") as f:
            f.write("<!doctype html><p>reports nothing</p>")
        r = run_page(chromium, site, "smoke.html", timeout=args.timeout)
        print(json.dumps(r, indent=2))
        if "error" in r:
            failures.append("the page failed: " + r["error"])
        else:
            if r["wrong"] != 0:
                failures.append("%d of %d elements wrong" % (r["wrong"], r["elements"]))
            if r["good_messages"]:
                failures.append("messages for a valid kernel: %s" % r["good_messages"])
            if not any(m.startswith("error") for m in r["bad_messages"]):
                failures.append("no error for invalid WGSL: %s" % r["bad_messages"])
            lim = r["limits"]
            # The limits the issue states the compiler must meet (WebGPU's defaults).
            for key, least in (("maxStorageBuffersPerShaderStage", 8), ("maxBindGroups", 4),
                               ("maxComputeWorkgroupStorageSize", 16384),
                               ("maxComputeInvocationsPerWorkgroup", 256),
                               ("maxComputeWorkgroupsPerDimension", 65535)):
                if lim[key] < least:
                    failures.append("%s is %s, below %d" % (key, lim[key], least))
        # A page that never reports is stopped at the time limit, with an error.
        try:
            run_page(chromium, site, "silent.html", timeout=8)
            failures.append("a silent page did not time out")
        except BrowserError as e:
            print("ok: silent page: " + str(e).splitlines()[0])
    return finish(failures)


if __name__ == "__main__":
    sys.exit(main())
