# The row sets of bench_perf.py (core: the seven rows of docs/performance.md; extended: the suite's models of issue 29) and their defaults.
"""Which models bench_perf.py times, at which input sizes, and where each set's report goes.

A row is one model at one fixed input size. Rows of the core set take random float inputs of a
given shape (token ids for MiniLM); rows of the extended set are models of the real-model suite
(test/models/model_specs.py: the export cache's manifest and the silero-vad wheel), and their
inputs come from the suite's own generator (model_specs.make_inputs, seed 0) at the row's size,
so token ids stay inside each model's vocabulary, masks and scalar inputs (Silero's sample rate)
are what the suite feeds, and Silero's audio is scaled as in the suite.

Sets:
  core      PP-OCR cls (2 batch sizes), det, rec, all-MiniLM-L6-v2, ResNet-18, MobileNetV2, plus
            the 1024^3 matmul; all five engines; docs/performance.md
  extended  every model added by issue 29 plus the suite's efficientnet_b0, squeezenet1_1,
            vit_b_16, bert_classifier, Silero VAD (one 16 kHz chunk), the LSTM LM and the GPT-2
            decoder step; relaxc, onnxruntime and OpenVINO; docs/performance-extended.md. The
            three small recurrent/step rows are marked dispatch-bound: their time is dominated by
            per-kernel overhead, and the report calls them out.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "test", "models"))
import model_specs  # noqa: E402


def shape_str(shape):
    return "x".join(str(d) for d in shape)


class Row:
    def __init__(self, key, name, model, inputs, spec=None, size=None, label=None, dispatch_bound=False):
        self.key = key          # unique id, used in file names
        self.name = name        # table label
        self.model = model      # path of the original ONNX file
        self.inputs = inputs    # {input name: shape}; dtype and graph order come from the model
        self.spec = spec        # model_specs spec: inputs made by model_specs.make_inputs (else random)
        self.size = size        # {dim name: value} of the spec
        self.label = label      # shape column text (default: the input shapes)
        self.dispatch_bound = dispatch_bound  # small model whose time is mostly per-kernel overhead

    @property
    def shape(self):
        if self.label:
            return self.label
        shapes = list(self.inputs.values())
        return ", ".join(shape_str(s) for s in shapes) if len(set(map(tuple, shapes))) > 1 \
            else shape_str(shapes[0])


def spec_row(key, name, spec, size, label=None, dispatch_bound=False, missing=""):
    """A row of a model_specs spec at one size (spec None: the model is missing; its file path
    `missing` makes the row report "model file not found")."""
    if spec is None:
        return Row(key, name, missing, {}, label=label or model_specs.size_label(size),
                   dispatch_bound=dispatch_bound)
    inputs = {n: tuple(size[d] if isinstance(d, str) else d for d in s["shape"]) for n, s in spec["inputs"].items()}
    return Row(key, name, spec["file"], inputs, spec=spec, size=size, label=label, dispatch_bound=dispatch_bound)


def core_rows(args):
    cls, det = args.cls_model, os.path.join(args.model_dir, "ch_PP-OCRv4_det_infer.onnx")
    rec = os.path.join(args.model_dir, "ch_PP-OCRv4_rec_infer.onnx")
    exp = args.export_dir
    seq = {"input_ids": (1, 128), "attention_mask": (1, 128), "token_type_ids": (1, 128)}
    return [
        Row("cls_b1", "PP-OCR cls (mobile v2.0)", cls, {"x": (1, 3, 48, 192)}),
        Row("cls_b8", "PP-OCR cls (mobile v2.0)", cls, {"x": (8, 3, 48, 192)}),
        Row("det", "PP-OCRv4 det", det, {"x": (1, 3, 640, 640)}),
        Row("rec", "PP-OCRv4 rec", rec, {"x": (1, 3, 48, 320)}),
        Row("minilm", "all-MiniLM-L6-v2 (seq 128)", os.path.join(exp, "all_minilm_l6_v2.onnx"), seq),
        Row("resnet18", "ResNet-18", os.path.join(exp, "resnet18.onnx"), {"input": (1, 3, 224, 224)}),
        Row("mobilenet_v2", "MobileNetV2", os.path.join(exp, "mobilenet_v2.onnx"), {"input": (1, 3, 224, 224)}),
    ]


# (suite model, table label, size, shape label or None, dispatch-bound) of the extended set.
EXTENDED = [
    ("resnet50", "ResNet-50", {"batch": 1}, None, False),
    ("mobilenet_v3_small", "MobileNetV3-Small", {"batch": 1}, None, False),
    ("efficientnet_b0", "EfficientNet-B0", {"batch": 1}, None, False),
    ("efficientnet_b1", "EfficientNet-B1", {"batch": 1}, None, False),
    ("regnet_x_400mf", "RegNetX-400MF", {"batch": 1}, None, False),
    ("shufflenet_v2_x0_5", "ShuffleNetV2 x0.5", {"batch": 1}, None, False),
    ("squeezenet1_1", "SqueezeNet 1.1", {"batch": 1}, None, False),
    ("convnext_small", "ConvNeXt-Small", {"batch": 1}, None, False),
    ("swin_v2_t", "Swin V2-T", {"batch": 1}, None, False),
    ("vit_b_16", "ViT-B/16", {"batch": 1}, None, False),
    ("lraspp_mobilenet_v3_large", "LR-ASPP MobileNetV3-Large", {"batch": 1, "height": 320, "width": 320}, None, False),
    ("yolo_style_detector", "YOLO-style detector (1.9 M)", {"batch": 1, "height": 320, "width": 320}, None, False),
    ("distilbert", "DistilBERT (seq 128)", {"batch": 1, "sequence": 128}, "batch 1, seq 128", False),
    ("bert_classifier", "BERT classifier, 2 layers (seq 128)", {"batch": 1, "sequence": 128}, "batch 1, seq 128",
     False),
    ("whisper_tiny_encoder", "Whisper-tiny encoder", {"batch": 1}, None, False),
    ("gru_classifier", "GRU classifier (2-layer bidir.)", {"batch": 1, "sequence": 32}, "batch 1, seq 32", False),
    ("silero_vad", "Silero VAD (16 kHz chunk)", {"batch": 1, "window": 576, "sr": 16000}, "1x576, 16 kHz", True),
    ("lstm_lm", "LSTM LM (2 layers)", {"batch": 1, "sequence": 32}, "batch 1, seq 32", True),
    ("gpt2_decoder_step", "GPT-2 decoder step (2 layers)", {"batch": 1, "past": 32}, "batch 1, past 32", True),
]


def extended_rows(args):
    specs = model_specs.export_specs(args.export_dir)
    silero = model_specs.site_packages_dir(args.venv or "", os.path.join("silero_vad", "data"))
    if silero:
        specs.update(model_specs.silero_specs(silero))
    rows = []
    for name, label, size, shape_label, dispatch in EXTENDED:
        missing = os.path.join(args.export_dir or "", name + ".onnx") if name != "silero_vad" else \
            f"silero_vad.onnx of the silero-vad wheel in the venv {args.venv!r}"
        rows.append(spec_row(name, label, specs.get(name), size, shape_label, dispatch, missing))
    return rows


class RowSet:
    def __init__(self, rows, doc, engines, matmul, title, inputs_text):
        self.rows = rows                # fn(args) -> [Row]
        self.doc = doc                  # report file, relative to the repository root
        self.engines = engines          # default --engines
        self.matmul = matmul            # time the 1024^3 matmul too
        self.title = title              # the report's heading
        self.inputs_text = inputs_text  # the report's "inputs:" line


ROW_SETS = {
    "core": RowSet(core_rows, os.path.join("docs", "performance.md"), ["relaxc", "ort", "openvino", "iree", "tvm"],
                   True, "relaxc performance next to onnxruntime, OpenVINO, IREE and TVM",
                   "float uniform(-1, 1) seed 0; MiniLM: random token ids, attention mask all ones, token types zero."),
    "extended": RowSet(extended_rows, os.path.join("docs", "performance-extended.md"), ["relaxc", "ort", "openvino"],
                       False, "relaxc performance on the extended model set (issue 29)",
                       "the real-model suite's generator (test/models/model_specs.py make_inputs, seed 0) at the "
                       "row's size: floats standard normal (Silero's audio and state x 0.1), token ids uniform in "
                       "the model's vocabulary, attention masks all ones at batch 1, Silero's sr = 16000."),
}


def make_rows(set_name, args):
    return ROW_SETS[set_name].rows(args)


def spec_feeds(row):
    """{input name: array} of a row made from a suite spec (model_specs.make_inputs, seed 0)."""
    return model_specs.make_inputs(row.spec, row.size, 0)
