#!/usr/bin/env python3
# `scripts/gpu_check.sh prepare OUT`: compiles node tests and real models for cuda, vulkan and cpu into a self-contained check folder.
"""Build the GPU check folder (run it on a GPU machine with `OUT/run.sh`, see scripts/gpu_check.sh).

For every case (a sample of Debian libonnx-testdata node tests, PP-OCR det/rec/cls, MiniLM and
one Silero VAD model) the folder gets the model compiled for `cuda -arch=sm_90`, `vulkan` and
`cpu` (and, for the cases with a Conv, MatMul or Gemm, `cuda-byoc`: cuda with
--byoc=cublas,cudnn, the plugins' runtime libraries bundled in lib/), its inputs (.npy) and onnxruntime CPU's outputs (.npy, the references), plus relax-run with
its non-glibc shared libraries (lib/) and the numpy-free runner gpu_check_run.py. A case whose
compile fails for a target keeps the error (the runner reports it); a case onnxruntime cannot run
is dropped with a note.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "models"))
import model_specs  # noqa: E402
import ort_reference  # noqa: E402

NODE_DATA = "/usr/share/libonnx-testdata/data/node"
NODE_TESTS = (
    "test_abs test_add test_add_bcast test_relu test_sigmoid test_tanh test_exp test_log test_sqrt "
    "test_neg test_mul_bcast test_div_bcast test_sub_bcast test_pow test_erf test_leakyrelu test_elu "
    "test_hardsigmoid test_clip test_softmax_axis_1 test_logsoftmax_axis_1 test_matmul_2d "
    "test_matmul_3d test_matmul_4d test_gemm_default_matrix_bias test_gemm_transposeB "
    "test_conv_with_strides_padding test_conv_with_autopad_same test_convtranspose "
    "test_averagepool_2d_pads test_maxpool_2d_strides test_globalaveragepool test_batchnorm_example "
    "test_instancenorm_example test_layer_normalization_4d_axis1 test_reduce_mean_keepdims_example "
    "test_reduce_sum_keepdims_example test_transpose_default test_concat_2d_axis_1 test_slice "
    "test_gather_0 test_where_example test_argmax_default_axis_example test_hardswish").split()
QUICK_NODE_TESTS = ("test_add_bcast", "test_softmax_axis_1", "test_matmul_3d", "test_conv_with_strides_padding")
SILERO = "silero_vad_op18_ifless"
TARGETS = (("cuda", "cuda -arch=sm_90"), ("vulkan", "vulkan"), ("cpu", "cpu"),
           ("cuda-byoc", "cuda -arch=sm_90"))
# cuda-byoc: the cuda target with the cublas and cudnn BYOC plugins (--byoc=cublas,cudnn), for the
# cases with a Conv, MatMul or Gemm. Their runtime libraries (librelax_byoc_{cublas,cudnn}.so)
# go into lib/; the CUDA libraries they need (cuBLAS/cuBLASLt 13, cuDNN 9, cudart 13: ~2 GiB) do
# not, the GPU machine's CUDA toolkit provides them (gpu_check_run.py finds them).
BYOC_FLAGS = ["--byoc=cublas,cudnn", "--partition-report"]
BYOC_PLUGIN_LIBS = ("librelax_byoc_cublas.so", "librelax_byoc_cudnn.so")
# The folder keeps under 50 MiB with the classifier (~1 MiB); det and Silero add ~7.8 MiB, so
# they come with --with-byoc-models (and the folder is then over the limit, as with MiniLM).
BYOC_CASES = {"test_matmul_2d", "test_matmul_3d", "test_gemm_default_matrix_bias",
              "test_gemm_transposeB", "test_conv_with_strides_padding",
              "test_conv_with_autopad_same", "ppocr_cls", "all_minilm_l6_v2"}
BYOC_MORE_CASES = {"ppocr_det", SILERO}
# Model cases: (name, model file, {input: array}); PP-OCR at one size each.
# The recognizer's 10.8 MiB of weights are in each artifact: cuda only, to keep the folder under
# 50 MiB (its vulkan and cpu runs are tested here: models.vulkan.rec.*, models.rec.*).
TARGETS_OF = {"ppocr_rec": ("cuda",)}


def targets_of(name, byoc, byoc_more):
    """The target tags a case is compiled for."""
    if name in TARGETS_OF:
        return list(TARGETS_OF[name])
    with_byoc = byoc and (name in BYOC_CASES or (byoc_more and name in BYOC_MORE_CASES))
    return [t for t, _ in TARGETS if t != "cuda-byoc" or with_byoc]


def node_case(name):
    import onnx
    from onnx import numpy_helper
    d = os.path.join(NODE_DATA, name)
    model = os.path.join(d, "model.onnx")
    m = onnx.load(model)
    init = {i.name for i in m.graph.initializer}
    names = [i.name for i in m.graph.input if i.name not in init]
    feeds = {}
    for k, n in enumerate(names):
        t = onnx.TensorProto()
        with open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        feeds[n] = numpy_helper.to_array(t)
    return model, feeds


def model_cases(quick, with_minilm):
    rng = np.random.default_rng(7)
    mdir = os.environ.get("RELAX_MODEL_DIR", "")
    cases = [("ppocr_cls", os.path.join(mdir, "ch_ppocr_mobile_v2.0_cls_infer.onnx"),
              {"x": rng.standard_normal((1, 3, 48, 192)).astype(np.float32)})]
    if quick:
        return cases
    cases += [("ppocr_det", os.path.join(mdir, "ch_PP-OCRv4_det_infer.onnx"),
               {"x": rng.standard_normal((1, 3, 320, 320)).astype(np.float32)}),
              ("ppocr_rec", os.path.join(mdir, "ch_PP-OCRv4_rec_infer.onnx"),
               {"x": rng.standard_normal((1, 3, 48, 320)).astype(np.float32)})]
    exp = model_specs.export_specs(os.environ.get("RELAX_EXPORT_DIR"))
    if not with_minilm:
        print("note: MiniLM left out (--with-minilm adds it: ~87 MiB per artifact)")
    elif "all_minilm_l6_v2" in exp:
        s = exp["all_minilm_l6_v2"]
        cases.append(("all_minilm_l6_v2", s["file"], model_specs.make_inputs(s, s["sizes"][1], 1001)))
    else:
        print("note: no export cache (bash scripts/export_models.sh): MiniLM left out")
    silero = model_specs.site_packages_dir(os.environ.get("RELAX_VENV", ""), os.path.join("silero_vad", "data"))
    if silero:
        s = model_specs.silero_specs(silero)[SILERO]
        cases.append((SILERO, s["file"], model_specs.make_inputs(s, s["sizes"][2], 1002)))
    return cases


def bundle_runtime(relax_run, out):
    """relax-run into bin/, its shared libraries other than glibc's into lib/."""
    os.makedirs(os.path.join(out, "bin"), exist_ok=True)
    os.makedirs(os.path.join(out, "lib"), exist_ok=True)
    shutil.copy2(relax_run, os.path.join(out, "bin", "relax-run"))
    ldd = subprocess.run(["ldd", relax_run], capture_output=True, text=True, check=True).stdout
    glibc = re.compile(r"^(libc|libm|libdl|libpthread|librt|ld-linux[^.]*)\.so")
    bundled = []
    for line in ldd.splitlines():
        m = re.match(r"\s*(\S+) => (/\S+)", line)
        if m and not glibc.match(m.group(1)):
            shutil.copy2(os.path.realpath(m.group(2)), os.path.join(out, "lib", m.group(1)))
            bundled.append(m.group(1))
    return bundled


def bundle_byoc_plugins(relax_run, out):
    """The cublas/cudnn runtime libraries of the build (beside librelax_runtime.so in build/lib)
    into lib/, where relax-run finds them (bin/../lib); returns {library: the non-glibc libraries
    it needs that are not bundled}, or None when the build has none."""
    lib_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(relax_run))), "lib")
    found = {}
    for lib in BYOC_PLUGIN_LIBS:
        src = os.path.join(lib_dir, lib)
        if not os.path.isfile(src):
            print(f"note: {src} not built (no CUDA toolkit/cuDNN at configure time): cuda-byoc left out")
            return None
        shutil.copy2(src, os.path.join(out, "lib", lib))
        ldd = subprocess.run(["ldd", src], capture_output=True, text=True, check=True).stdout
        found[lib] = sorted({m.group(1) for m in re.finditer(r"^\s*(lib(?:cu|nv)\S*\.so[.\d]*) =>", ldd, re.M)})
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--relax-run", required=True)
    ap.add_argument("--quick", action="store_true", help="4 node tests and the classifier only (the ctest)")
    ap.add_argument("--with-minilm", action="store_true",
                    help="add MiniLM (22.7M float32 weights: ~87 MiB per artifact, over the 50 MiB budget)")
    ap.add_argument("--with-byoc-models", action="store_true",
                    help="cuda-byoc for PP-OCR det and Silero too (~7.8 MiB: over the 50 MiB budget)")
    args = ap.parse_args()
    t_start = time.monotonic()
    out = os.path.abspath(args.out)
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(os.path.join(out, "cases"))
    bundled = bundle_runtime(args.relax_run, out)
    byoc_needs = bundle_byoc_plugins(args.relax_run, out)
    shutil.copy2(os.path.join(HERE, "gpu_check_run.py"), out)
    with open(os.path.join(out, "run.sh"), "w") as f:
        f.write("#!/usr/bin/env bash\n# Runs the GPU check folder: needs bash and python3 only.\n"
                'exec python3 "$(dirname "${BASH_SOURCE[0]}")/gpu_check_run.py" "$(dirname "${BASH_SOURCE[0]}")" "$@"\n')
    os.chmod(os.path.join(out, "run.sh"), 0o755)

    cases = [(n, *node_case(n)) for n in (QUICK_NODE_TESTS if args.quick else NODE_TESTS)]
    cases += model_cases(args.quick, args.with_minilm)
    manifest = {"cases": [], "bundled_libs": bundled, "rtol": 1e-3, "atol": 1e-4,
                "byoc_plugin_libs": sorted(byoc_needs or {}),
                "byoc_cuda_libs": sorted({n for v in (byoc_needs or {}).values() for n in v})}
    for name, model, feeds in cases:
        t0 = time.monotonic()
        if not os.path.isfile(model):
            print(f"[{name}] left out: {model} not found")
            continue
        try:
            ref = ort_reference.run(model, feeds)
        except Exception as e:  # noqa: BLE001 - onnxruntime refuses some node tests
            print(f"[{name}] left out: onnxruntime: {str(e).splitlines()[0][:150]}")
            continue
        cdir = os.path.join(out, "cases", name)
        os.makedirs(os.path.join(cdir, "ref"))
        inputs = []
        for k, (iname, arr) in enumerate(feeds.items()):
            np.save(os.path.join(cdir, f"input_{k}.npy"), np.array(arr, order="C"))  # 0-d stays 0-d
            inputs.append([iname, f"input_{k}.npy"])
        outputs = []
        for oname, arr in ref:
            f = ort_reference.sanitize(oname) + ".npy"
            np.save(os.path.join(cdir, "ref", f), np.array(arr, order="C"))
            outputs.append(f)
        errors = {}
        tags = targets_of(name, byoc_needs is not None, args.with_byoc_models)
        regions = {}
        for tag, target in TARGETS:
            if tag not in tags:
                continue
            so = os.path.join(cdir, tag + ".so")
            flags = BYOC_FLAGS if tag == "cuda-byoc" else []
            p = subprocess.run([args.relaxc, "compile", model, "--target", target, "-o", so, "--stats"] + flags,
                               capture_output=True, text=True, errors="replace")
            for plugin, n in re.findall(r"^plugin (\w+): (\d+) regions", p.stdout, re.M):
                regions[plugin] = int(n)
            if p.returncode != 0:
                lines = p.stderr.strip().splitlines() or ["?"]
                errors[tag] = "compile " + next((l for l in lines if l.startswith("error:")), lines[-1])[:300]
                continue
            m = re.search(r"device kernels: (\d+), fallbacks: (\d+)", p.stdout)
            if m and int(m.group(2)):
                errors[tag] = f"compiled with {m.group(2)} one-thread fallback kernel(s)"
        case = {"name": name, "kind": "model" if not name.startswith("test_") else "node",
                "inputs": inputs, "outputs": outputs, "compile_errors": errors, "targets": list(tags)}
        if regions:
            case["byoc_regions"] = regions
        with open(os.path.join(cdir, "case.json"), "w") as f:
            json.dump(case, f, indent=1)
        manifest["cases"].append(name)
        note = "; ".join([f"{k}: {v}" for k, v in errors.items()] +
                         ([" ".join(f"{k} {v} regions" for k, v in regions.items())] if regions else []))
        print(f"[{name}] {time.monotonic() - t0:.1f} s{'  ' + note if note else ''}", flush=True)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
    print(f"wrote {out}: {len(manifest['cases'])} cases, {size / 2**20:.1f} MiB, bundled {' '.join(bundled)};"
          f" {time.monotonic() - t_start:.0f} s")
    if size > 50 * 2**20 and not (args.with_minilm or args.with_byoc_models):
        print(f"error: the folder is {size / 2**20:.1f} MiB, over the 50 MiB limit")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
