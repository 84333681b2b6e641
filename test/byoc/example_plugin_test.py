#!/usr/bin/env python3
# The out-of-tree example plugin (backends/plugins/example), checked as docs/byoc.md tells a vendor
# to use it. Steps (test/byoc/tests.cmake runs each as one test):
#   sdk:        relaxc installed into a clean prefix, which is then moved (relocatable); a copy of
#               the plugin's folder configured and built against the moved prefix with
#               find_package(relaxc) without warnings; the plugin counted (< 300 lines); its
#               pattern table quoted in docs/byoc.md; a small program linked with relaxc::runtime;
#   classifier: the PP-OCR classifier compiled with the installed relaxc and --plugin: the
#               --partition-report lists 15 conv2d [+ bias add | batch_norm] + relu regions of the
#               plugin; run at two sizes with TOYACC_TRACE=1: outputs match onnxruntime and every
#               region's trace line appears once per run; the same without fold-batch-norm
#               (conv2d + batch_norm + relu regions), at a third size;
#   no-compiler: TOYACC_CC names no program, or is a hostile string (quotes, ';', $(...),
#               backticks, a leading '-'): compile fails with an error naming the plugin and the
#               region, and no command runs.
import argparse
import os
import re
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
import compare  # noqa: E402
import ort_reference  # noqa: E402

MAX_PLUGIN_LINES = 300
CONV_REGIONS = 15  # the classifier's conv2d [+ bias add | batch_norm] + relu chains


def run(cmd, env=None, check=True, **kw):
    print("+ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", env=env, **kw)
    if check and p.returncode != 0:
        sys.stdout.write(p.stdout + p.stderr)
        raise SystemExit(f"FAIL: exit code {p.returncode}: {' '.join(cmd)}")
    return p


def paths(work):
    prefix = os.path.join(work, "prefix")
    return {"prefix": prefix, "relaxc": os.path.join(prefix, "bin", "relaxc"),
            "relax-run": os.path.join(prefix, "bin", "relax-run"),
            "plugin": os.path.join(work, "plugin-build", "libtoyacc_plugin.so")}


def count_lines(folder):
    """Every line of the plugin's sources and build file (comments and blank lines included)."""
    total, per_file = 0, []
    for root, _, files in os.walk(folder):
        for f in sorted(files):
            if f.endswith((".c", ".cc", ".cpp", ".h", ".hpp")) or f == "CMakeLists.txt":
                with open(os.path.join(root, f), encoding="utf-8") as fh:
                    n = len(fh.read().splitlines())
                per_file.append(f"{os.path.relpath(os.path.join(root, f), folder)}: {n}")
                total += n
    return total, per_file


def step_sdk(args):
    p = paths(args.work)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    stage = os.path.join(args.work, "stage")
    run([args.cmake, "--install", args.build_dir, "--prefix", stage])
    os.rename(stage, p["prefix"])  # the package must not remember where it was installed
    for rel in ["bin/relaxc", "bin/relax-run", "bin/relax-opt", "lib/librelax_runtime.so",
                "include/relax/partition/plugin_c_api.h", "include/relax/runtime/c_api.h",
                "include/relax/runtime/module_api.h", "lib/cmake/relaxc/relaxcConfig.cmake",
                "lib/cmake/relaxc/relaxcConfigVersion.cmake"]:
        if not os.path.exists(os.path.join(p["prefix"], rel)):
            raise SystemExit(f"FAIL: the install has no {rel}")
    for f in os.listdir(os.path.join(p["prefix"], "lib", "cmake", "relaxc")):
        with open(os.path.join(p["prefix"], "lib", "cmake", "relaxc", f)) as fh:
            if stage in fh.read():
                raise SystemExit(f"FAIL: {f} names the install directory {stage} (not relocatable)")
    run([p["relaxc"], "--help"])

    # The plugin as a vendor has it: its own folder, nothing of relaxc's source tree around it.
    src = os.path.join(args.work, "plugin-src")
    shutil.copytree(args.plugin_dir, src)
    total, per_file = count_lines(src)
    print(f"plugin lines: {total} ({', '.join(per_file)})")
    if total >= MAX_PLUGIN_LINES:
        raise SystemExit(f"FAIL: the example plugin has {total} lines, expected < {MAX_PLUGIN_LINES}")
    # docs/byoc.md quotes the plugin's pattern table: it must not drift.
    with open(os.path.join(src, "toyacc_plugin.cc"), encoding="utf-8") as fh:
        table = re.search(r'kPatterns = R"\((.*?)\)";', fh.read(), re.S).group(1).strip()
    with open(os.path.join(args.plugin_dir, "..", "..", "..", "docs", "byoc.md"), encoding="utf-8") as fh:
        if table not in fh.read():
            raise SystemExit("FAIL: docs/byoc.md does not quote the example's pattern table:\n" + table)
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    build = os.path.join(args.work, "plugin-build")
    run([args.cmake, "-S", src, "-B", build, *gen, "-DCMAKE_BUILD_TYPE=Release",
         f"-DCMAKE_PREFIX_PATH={p['prefix']}"])
    out = run([args.cmake, "--build", build])
    if "warning" in out.stdout.lower():
        sys.stdout.write(out.stdout)
        raise SystemExit("FAIL: the plugin builds with warnings")
    if not os.path.isfile(p["plugin"]):
        raise SystemExit(f"FAIL: the plugin build made no {p['plugin']}")

    # relaxc::runtime and relaxc_RELAXC_EXECUTABLE from the same package.
    consumer = os.path.join(args.work, "consumer-build")
    run([args.cmake, "-S", os.path.join(HERE, "sdk_consumer"), "-B", consumer, *gen,
         f"-DCMAKE_PREFIX_PATH={p['prefix']}"])
    run([args.cmake, "--build", consumer])
    out = run([os.path.join(consumer, "sdk_consumer")])
    print(out.stdout.strip())
    print("PASS: installed, relocated, plugin built against the package")
    return 0


def parse_report(text, plugin):
    """{runtime function: [composite pattern, ...]} of `plugin`'s regions in the report."""
    regions, cur, in_plugin = {}, None, False
    for line in text.splitlines():
        m = re.match(r"plugin (\S+): (\d+) regions", line)
        if m:
            in_plugin = m.group(1) == plugin
            continue
        if not in_plugin:
            continue
        m = re.match(r"  region (\S+) -> (\S+)$", line)
        if m:
            cur = regions.setdefault(m.group(2), [])
            continue
        m = re.match(r"    (\S+) \(@", line)
        if m and cur is not None:
            cur.append(m.group(1))
    return regions


def compile_classifier(p, model, artifact, extra):
    """Compiles with the plugin; returns its regions from --partition-report (checked)."""
    if os.path.exists(artifact):
        os.remove(artifact)
    out = run([p["relaxc"], "compile", model, "-o", artifact, "--plugin", p["plugin"],
               "--partition-report", *extra])
    sys.stdout.write(out.stdout)
    regions = parse_report(out.stdout, "example")
    conv = {f: c for f, c in regions.items() if c and all(x.startswith("example.conv2d") for x in c)}
    print(f"report{' ' + ' '.join(extra) if extra else ''}: {len(regions)} regions of plugin "
          f"example, {len(conv)} conv2d regions: "
          + ", ".join(f"{f} ({'+'.join(c)})" for f, c in regions.items()))
    if len(conv) != CONV_REGIONS:
        raise SystemExit(f"FAIL: {len(conv)} conv2d regions of plugin example, expected {CONV_REGIONS}")
    if any(len(c) != 1 for c in regions.values()):
        raise SystemExit("FAIL: a region holds several composites (merge_regions = 0)")
    return regions


def run_and_compare(p, model, artifact, regions, b, h, w, seed, case):
    """Runs at [b, 3, h, w] with TOYACC_TRACE=1: each region traced once, outputs as onnxruntime's."""
    ok = True
    input_name = ort_reference.input_names(model)[0]
    shutil.rmtree(case, ignore_errors=True)
    os.makedirs(os.path.join(case, "relaxc"))
    x = np.random.default_rng(seed).standard_normal((b, 3, h, w)).astype(np.float32)
    x_path = os.path.join(case, "input.npy")
    np.save(x_path, x)
    env = dict(os.environ, TOYACC_TRACE="1")
    res = run([p["relax-run"], artifact, "--input", f"{input_name}={x_path}",
               "--output-dir", os.path.join(case, "relaxc")], env=env)
    traced = re.findall(r"^toyacc: ran (\S+)", res.stderr, re.MULTILINE)
    counts = {f: traced.count(f) for f in regions}
    print(f"[{os.path.basename(case)}] trace: {len(traced)} region runs, {len(set(traced))} regions")
    if any(n != 1 for n in counts.values()) or len(traced) != len(regions):
        print(f"  FAIL: each region must run once; runs per region: {counts}; stderr:\n{res.stderr}")
        ok = False
    ort_dir = os.path.join(case, "ort")
    ort_reference.write_outputs(ort_reference.run(model, {input_name: x}), ort_dir)
    for f in sorted(os.listdir(ort_dir)):
        got_path = os.path.join(case, "relaxc", f)
        if not os.path.isfile(got_path):
            print(f"  FAIL: relaxc wrote no {f}")
            ok = False
            continue
        good, msg = compare.compare(np.load(got_path), np.load(os.path.join(ort_dir, f)))
        print(f"  {f}: {'OK' if good else 'MISMATCH'}: {msg}")
        ok &= good
    return ok


def step_classifier(args):
    p = paths(args.work)
    model = os.environ.get("RELAX_CLS_MODEL")
    if not model or not os.path.isfile(model):
        raise SystemExit(f"FAIL: classifier model not found: {model!r} (run scripts/setup.sh)")
    # The default pipeline folds each batch_norm into its conv (fold-batch-norm): the plugin
    # takes conv2d + bias add + relu. Without that pass it takes conv2d + batch_norm + relu.
    artifact = os.path.join(args.work, "cls_toyacc.so")
    regions = compile_classifier(p, model, artifact, [])
    ok = True
    for (b, h, w), seed in (((1, 48, 192), 1), ((3, 64, 100), 2)):
        ok &= run_and_compare(p, model, artifact, regions, b, h, w, seed,
                              os.path.join(args.work, f"run_{b}x{h}x{w}"))
    artifact_bn = os.path.join(args.work, "cls_toyacc_bn.so")
    regions_bn = compile_classifier(p, model, artifact_bn, ["--disable-pass=fold-batch-norm"])
    if not any(c == ["example.conv2d_bn_relu"] for c in regions_bn.values()):
        print("FAIL: without fold-batch-norm no region is conv2d + batch_norm + relu")
        ok = False
    ok &= run_and_compare(p, model, artifact_bn, regions_bn, 2, 48, 160, 3,
                          os.path.join(args.work, "run_bn_2x48x160"))
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def step_no_compiler(args):
    p = paths(args.work)
    model = os.path.join(args.work, "conv_relu.onnx")
    run([sys.executable, os.path.join(HERE, "make_conv_relu.py"), model])
    # A TOYACC_CC that names no program, then hostile ones: the plugin runs its compiler with an
    # argument vector, so none of them may run a command (no PWNED file appears).
    cwd = os.path.join(args.work, "no-compiler")
    shutil.rmtree(cwd, ignore_errors=True)
    os.makedirs(cwd)
    ok = True
    for cc in ["/nonexistent/toyacc-cc", "cc';touch PWNED;'", "cc;touch PWNED", "$(touch PWNED)",
               "`touch PWNED`", "cc -o PWNED", "-oPWNED", "cc\ntouch PWNED"]:
        env = dict(os.environ, TOYACC_CC=cc)
        res = run([p["relaxc"], "compile", model, "-o", os.path.join(args.work, "never.so"),
                   "--plugin", p["plugin"]], env=env, check=False, cwd=cwd)
        print(f"exit code {res.returncode}; stderr: {res.stderr}")
        want = [r"^error: codegen plugin .example. failed on region .example_region\w*.: toyacc: ",
                re.escape(f"TOYACC_CC={cc} is not a program")]
        bad = [w for w in want if not re.search(w, res.stderr, re.MULTILINE)]
        if res.returncode == 0 or res.returncode >= 128 or res.returncode < 0 or bad:
            print(f"FAIL: expected a clean failure whose message matches {bad}")
            ok = False
        if os.path.exists(os.path.join(cwd, "PWNED")):
            print(f"FAIL: TOYACC_CC={cc!r} ran a command")
            ok = False
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("step", choices=["sdk", "classifier", "no-compiler"])
    ap.add_argument("--build-dir", required=True, help="relaxc's build directory (cmake --install)")
    ap.add_argument("--plugin-dir", required=True, help="backends/plugins/example")
    ap.add_argument("--work", required=True)
    ap.add_argument("--cmake", default="cmake")
    args = ap.parse_args()
    for a in ("build_dir", "plugin_dir", "work"):
        setattr(args, a, os.path.abspath(getattr(args, a)))
    return {"sdk": step_sdk, "classifier": step_classifier, "no-compiler": step_no_compiler}[
        args.step](args)


if __name__ == "__main__":
    sys.exit(main())
