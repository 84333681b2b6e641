"""Real job "Voice activity" (issue 9): Silero VAD on a spoken sentence, relaxc vs onnxruntime.

A sentence is synthesised with espeak-ng, resampled to 16 kHz and padded with silence before and
after. Each model (--models; the .onnx files of the silero-vad wheel) is compiled once with relaxc
and called in-process through the relaxc package (relaxc.load). Streaming models get the clip 512
new samples at a time, each call's window prefixed by the last 64 samples of the previous window
(zeros first) and the recurrent state carried from call to call, as the silero-vad package feeds
them; silero_vad_16k_sequence gets all windows in one call with zero h/c. The speech probabilities
must match onnxruntime's chunk by chunk (rtol 1e-4, atol 1e-5), and the speech segments detected
from them (one hysteresis detector, below, for both engines) must be identical; the segments must
also cover the sentence, not the padding.

Usage: vad.py --relaxc RELAXC --work DIR [--package-dir DIR] [--models NAME,NAME...]
"""

import argparse
import os
import shutil
import subprocess
import sys
import wave

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import job_util  # noqa: E402

RATE = 16000
CHUNK = 512    # new samples per call at 16 kHz
CONTEXT = 64   # samples of the previous window prefixed to each call
SENTENCE = "The quick brown fox jumps over the lazy dog, and then it runs far away."
PAD_S = 1.0    # silence before and after the sentence, seconds
DEFAULT_MODELS = "silero_vad_16k_sequence,silero_vad_op18_ifless,silero_vad_openvino_16k"


def synthesize(work):
    """The sentence at 16 kHz, float32 in [-1, 1], with PAD_S of silence on both sides; and the
    sample range of the speech itself."""
    if not shutil.which("espeak-ng"):
        print("error: espeak-ng not found (apt-get install espeak-ng; scripts/setup.sh does it)")
        sys.exit(1)
    wav = os.path.join(work, "sentence.wav")
    subprocess.run(["espeak-ng", "-s", "150", "-w", wav, SENTENCE], check=True)
    with wave.open(wav) as w:
        rate, width, chans = w.getframerate(), w.getsampwidth(), w.getnchannels()
        raw = w.readframes(w.getnframes())
    assert width == 2, f"expected 16-bit PCM from espeak-ng, got {width * 8}-bit"
    x = np.frombuffer(raw, np.int16).astype(np.float32).reshape(-1, chans).mean(axis=1) / 32768.0
    n_out = int(round(len(x) * RATE / rate))
    t_out = np.arange(n_out) * (rate / RATE)  # resample (linear interpolation)
    speech = np.interp(t_out, np.arange(len(x)), x).astype(np.float32)
    pad = np.zeros(int(PAD_S * RATE), np.float32)
    clip = np.concatenate([pad, speech, pad])
    print(f"espeak-ng: {len(x)} samples at {rate} Hz -> {len(speech)} at {RATE} Hz; clip "
          f"{len(clip) / RATE:.2f} s with {PAD_S} s of silence on each side")
    return clip, (len(pad), len(pad) + len(speech))


def windows(clip):
    """[n_chunks, CONTEXT + CHUNK]: chunk i (the last one zero-padded) prefixed by the last
    CONTEXT samples of window i - 1 (zeros for the first)."""
    n = -(-len(clip) // CHUNK)
    chunks = np.zeros((n, CHUNK), np.float32)
    chunks.reshape(-1)[: len(clip)] = clip
    ctx = np.zeros((n, CONTEXT), np.float32)
    ctx[1:] = chunks[:-1, -CONTEXT:]
    return np.concatenate([ctx, chunks], axis=1)


def probabilities(run, name, input_names, wins):
    """Per-chunk speech probabilities of model `name`; run(feeds) -> list of outputs."""
    if name.endswith("_sequence"):  # all windows in one call, h/c from zero
        feeds = {"input": wins, "h": np.zeros((1, 1, 128), np.float32),
                 "c": np.zeros((1, 1, 128), np.float32)}
        return np.asarray(run(feeds)[0], np.float32).reshape(-1)
    state = np.zeros((2, 1, 128), np.float32)
    probs = []
    for w in wins:  # one call per chunk, state carried
        feeds = {"input": w[None, :], "state": state}
        if "sr" in input_names:
            feeds["sr"] = np.array(RATE, np.int64)
        out, state = run(feeds)[:2]
        probs.append(float(np.asarray(out).reshape(-1)[0]))
    return np.array(probs, np.float32)


def segments(probs, threshold=0.5, min_speech_ms=250, min_silence_ms=100, pad_ms=30):
    """Speech segments [(start, end)] in samples from per-chunk probabilities: speech starts at
    the first chunk >= threshold and ends at the first chunk of a run of chunks below
    threshold - 0.15 that lasts min_silence_ms; segments shorter than min_speech_ms are dropped,
    the rest widened by pad_ms on each side (clipped to the clip and to their neighbours)."""
    low = threshold - 0.15
    min_sil = min_silence_ms * RATE // 1000
    raw, start, quiet_from = [], None, None
    for i, p in enumerate(probs):
        pos = i * CHUNK
        if start is None:
            if p >= threshold:
                start, quiet_from = pos, None
            continue
        if p >= threshold:
            quiet_from = None
        elif p < low:
            quiet_from = pos if quiet_from is None else quiet_from
            if pos + CHUNK - quiet_from >= min_sil:
                raw.append((start, quiet_from))
                start, quiet_from = None, None
    if start is not None:
        raw.append((start, len(probs) * CHUNK))
    raw = [s for s in raw if s[1] - s[0] >= min_speech_ms * RATE // 1000]
    pad, end_all = pad_ms * RATE // 1000, len(probs) * CHUNK
    out = []
    for k, (s, e) in enumerate(raw):
        lo = max(0, s - pad) if not out else max(out[-1][1], s - pad)
        hi = min(end_all, e + pad)
        if k + 1 < len(raw):
            hi = min(hi, (e + raw[k + 1][0]) // 2)
        out.append((lo, hi))
    return out


def fmt(segs):
    return ", ".join(f"{s / RATE:.3f}-{e / RATE:.3f} s" for s, e in segs) or "none"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    job_util.add_common_args(ap)
    ap.add_argument("--models", default=DEFAULT_MODELS,
                    help="comma-separated silero-vad model names (files NAME.onnx of the wheel)")
    ap.add_argument("--data-dir", default=None, help="default: the silero_vad package's data/")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    data_dir = args.data_dir
    if data_dir is None:
        import importlib.util
        spec = importlib.util.find_spec("silero_vad")
        if spec is None:
            print("error: the silero-vad package is not installed in this venv (scripts/setup.sh)")
            return 1
        data_dir = os.path.join(os.path.dirname(spec.origin), "data")

    clip, (sp_lo, sp_hi) = synthesize(args.work)
    wins = windows(clip)
    print(f"{len(wins)} chunks of {CHUNK} samples (+{CONTEXT} context)")
    ok = True
    for name in [m for m in args.models.split(",") if m]:
        onnx_path = os.path.join(data_dir, name + ".onnx")
        print(f"\n== {name}")
        if not os.path.isfile(onnx_path):
            print(f"FAIL: {onnx_path} not found")
            ok = False
            continue
        artifact = job_util.compile_model(args.relaxc, onnx_path, args.work, name)
        mod = job_util.load(artifact, args.package_dir)
        opts = ort.SessionOptions()
        opts.log_severity_level = 3  # no warnings about the wheel's unused initializers
        sess = ort.InferenceSession(onnx_path, opts, providers=["CPUExecutionProvider"])
        ort_in = [i.name for i in sess.get_inputs()]
        rx = probabilities(mod.run, name, mod.input_names, wins)
        ref = probabilities(lambda f: sess.run(None, f), name, ort_in, wins)
        diff = np.abs(rx - ref)
        bad = np.nonzero(diff > 1e-5 + 1e-4 * np.abs(ref))[0]
        print(f"probabilities: max |relaxc - onnxruntime| = {diff.max():.3g} over {len(ref)} "
              f"chunks; max prob {ref.max():.3f}")
        if len(bad):
            i = int(bad[0])
            print(f"FAIL: {len(bad)} chunks differ beyond rtol 1e-4/atol 1e-5, first chunk {i}: "
                  f"relaxc {rx[i]:.7f} vs onnxruntime {ref[i]:.7f}")
            ok = False
        seg_rx, seg_ref = segments(rx), segments(ref)
        print(f"speech segments relaxc:      {fmt(seg_rx)}")
        print(f"speech segments onnxruntime: {fmt(seg_ref)}")
        print(f"the sentence:                {fmt([(sp_lo, sp_hi)])}")
        if seg_rx != seg_ref:
            print("FAIL: the detected segments differ")
            ok = False
        if not seg_ref or seg_ref[0][0] < sp_lo - RATE // 4 or seg_ref[-1][1] > sp_hi + RATE // 4:
            print("FAIL: onnxruntime's segments do not lie on the sentence (the clip or the "
                  "detector is wrong)")
            ok = False
    print()
    return job_util.verdict("vad", ok)


if __name__ == "__main__":
    sys.exit(main())
