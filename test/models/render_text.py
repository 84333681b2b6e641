#!/usr/bin/env python3
# Renders a line of text (and its 180-degree rotation) with ImageMagick and preprocesses it for the PP-OCR classifier, recognizer and detector.
import argparse
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ppocr_preprocess import preprocess, preprocess_det, preprocess_rec  # noqa: E402

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def render(text, out_dir, font=FONT):
    """Writes upright.png / upside_down.png, upright.npy / upside_down.npy (classifier inputs) and
    rec_upright.npy / det_upright.npy (recognizer and detector inputs); returns the npy paths."""
    os.makedirs(out_dir, exist_ok=True)
    up_png = os.path.join(out_dir, "upright.png")
    down_png = os.path.join(out_dir, "upside_down.png")
    subprocess.run(["convert", "-background", "white", "-fill", "black", "-font", font,
                    "-pointsize", "32", "label:" + text, "-bordercolor", "white", "-border", "6x4",
                    up_png], check=True)
    subprocess.run(["convert", up_png, "-rotate", "180", down_png], check=True)
    paths = {}
    for key, png in (("upright", up_png), ("upside_down", down_png)):
        npy = os.path.join(out_dir, key + ".npy")
        np.save(npy, preprocess(png))
        paths[key] = npy
    # The upright line for the recognizer (width 320) and on a 320x320 canvas for the detector.
    for key, x in (("rec_upright", preprocess_rec(up_png, 320)),
                   ("det_upright", preprocess_det(up_png, 320, 320))):
        npy = os.path.join(out_dir, key + ".npy")
        np.save(npy, x)
        paths[key] = npy
    return paths


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--text", default="Hello relaxc 2026")
    p.add_argument("--font", default=FONT)
    p.add_argument("out_dir")
    args = p.parse_args()
    for key, npy in render(args.text, args.out_dir, args.font).items():
        print(f"{key}: {npy}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
