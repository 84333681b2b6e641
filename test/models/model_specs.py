#!/usr/bin/env python3
# The real-model suite's models: where each .onnx comes from, its inputs, and the sizes it runs at.
"""Model specs of the real-model suite (test/models/run_model_suite.py).

A spec is a dict:
  file     path of the .onnx
  source   "wheel" (trained, from a PyPI wheel in the core venv) or "export" (the export cache)
  inputs   {name: {"shape": [int | dim name], "dtype": "float32"|"int64"|"bool",
                   "range": [lo, hi) for integer ids, "mask" for an attention mask (int64, 1 on
                   tokens), "pad_mask" for a key padding mask (bool, True on padding),
                   "value": dim name for an int64 scalar taken from the size (e.g. sr),
                   "scale": float for random float inputs (default 1)}}
  sizes    [{dim name: int}], two per dynamic axis; every size runs the ONE compiled artifact
Random inputs are drawn from a generator seeded per size, so a rerun feeds the same values.
"""
import glob
import hashlib
import json
import os

import numpy as np

SILERO_MODELS = ("silero_vad", "silero_vad_16k_op15", "silero_vad_16k_sequence", "silero_vad_half",
                 "silero_vad_op18_ifless", "silero_vad_openvino_16k")
# (sample rate, window): 512 (256) new samples + 64 (32) context samples per chunk.
SR_WINDOWS = ((16000, 576), (8000, 288))
# Exported models whose compile + two sizes take the suite long (large weights or many kernels):
# scripts/test.sh (CI) runs a seeded sample of them (run_model_suite.py --heavy-sample K --seed S,
# heavy_sample below); the full run (RELAX_TEST_FULL=1, scripts/test_full.sh) runs all of them.
HEAVY_MODELS = ("convnext_small", "distilbert", "efficientnet_b1", "resnet50", "swin_v2_t")

# Absolute tolerance of deep random-init nets whose outputs sum long chains of float products:
# summation order alone moves them by more than the suite's atol 1e-5. Each value is 2.5-4x the
# difference between onnxruntime's own optimised and unoptimised graphs on the model (onnxruntime
# 1.32 at the suite's first size: resnet50 3.2e-5, regnet_x_400mf 1.5e-5, yolo_style_detector
# 1.7e-5; relaxc's largest differences: 4.2e-5, 1.9e-5, 4.5e-5); rtol stays 1e-4.
ATOL = {"resnet50": 8e-5, "regnet_x_400mf": 4e-5, "yolo_style_detector": 8e-5}


def heavy_sample(names, k, seed):
    """The k names of `names` with the smallest seeded hash: a deterministic sample that does not
    change when other names are added (a name's rank depends only on itself and the seed)."""
    def rank(name):
        return hashlib.sha256(f"{seed}:{name}".encode()).hexdigest()
    return sorted(sorted(names, key=rank)[:max(0, k)])


def site_packages_dir(venv, rel):
    for d in sorted(glob.glob(os.path.join(venv, "lib", "python3*", "site-packages", rel))):
        if os.path.isdir(d):
            return d
    return None


def silero_specs(data_dir):
    """Every .onnx of silero_vad/data: batch 1 and 2 where the batch is not static, crossed with
    16 kHz (576-sample window) and 8 kHz (288) where the model takes `sr`; the sequence model with
    2 and 4 chunks. onnxruntime refuses other window lengths for these models."""
    specs = {}
    for name in SILERO_MODELS:
        path = os.path.join(data_dir, name + ".onnx") if data_dir else ""
        audio = {"shape": ["batch", "window"], "dtype": "float32", "scale": 0.1}
        state = {"shape": [2, "batch", 128], "dtype": "float32", "scale": 0.1}
        if name == "silero_vad_16k_sequence":
            inputs = {"input": {"shape": ["chunks", 576], "dtype": "float32", "scale": 0.1},
                      "h": {"shape": [1, 1, 128], "dtype": "float32", "scale": 0.1},
                      "c": {"shape": [1, 1, 128], "dtype": "float32", "scale": 0.1}}
            sizes = [{"chunks": 2}, {"chunks": 4}]
        elif name == "silero_vad_openvino_16k":  # static [1, 576] and [2, 1, 128]
            inputs = {"input": audio, "state": state}
            sizes = [{"batch": 1, "window": 576}]
        elif name == "silero_vad_half":  # no sr input: 16 kHz only
            inputs = {"input": audio, "state": state}
            sizes = [{"batch": b, "window": 576} for b in (1, 2)]
        else:
            inputs = {"input": audio, "state": state, "sr": {"shape": [], "dtype": "int64", "value": "sr"}}
            sizes = [{"batch": b, "window": w, "sr": sr} for b in (1, 2) for sr, w in SR_WINDOWS]
        specs[name] = {"file": path, "source": "wheel", "inputs": inputs, "sizes": sizes}
    return specs


def export_specs(export_dir):
    """The models of the export cache (manifest.json written by export_models.py)."""
    man = os.path.join(export_dir, "manifest.json") if export_dir else ""
    if not man or not os.path.isfile(man):
        return {}
    with open(man) as f:
        manifest = json.load(f)
    specs = {}
    for name, s in manifest.items():
        s = dict(s)
        s["file"] = os.path.join(export_dir, s["file"])
        s["source"] = "export"
        specs[name] = s
    return specs


def make_inputs(spec, size, seed):
    """{input name: array} for one size of a spec (same generator as export_models.py)."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for name, s in spec["inputs"].items():
        shape = [size[d] if isinstance(d, str) else d for d in s["shape"]]
        rg = s.get("range")
        if "value" in s:
            feeds[name] = np.array(size[s["value"]], np.int64).reshape(shape)
        elif s["dtype"] == "float32":
            feeds[name] = (rng.standard_normal(shape) * s.get("scale", 1.0)).astype(np.float32)
        elif rg == "pad_mask":  # bool, True on padding: batch row b pads its last b tokens
            m = np.zeros(shape, bool)
            for b in range(shape[0]):
                m[b, max(1, shape[1] - b):] = True
            feeds[name] = m
        elif rg == "mask":
            m = np.ones(shape, np.int64)
            for b in range(shape[0]):  # batch row b keeps its first (len - b) tokens
                m[b, max(1, shape[1] - b):] = 0
            feeds[name] = m
        else:
            feeds[name] = rng.integers(rg[0], rg[1], size=shape, dtype=np.int64)
    return feeds


def size_label(size):
    return ",".join(f"{k}={v}" for k, v in size.items()) or "static"
