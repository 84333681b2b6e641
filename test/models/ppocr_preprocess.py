#!/usr/bin/env python3
# PP-OCR text-direction classifier preprocessing (resize_norm_img): image file -> float32 [1,3,48,192] .npy.
import argparse
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

CLS_SHAPE = (3, 48, 192)  # C, H, W of PP-OCR's cls_image_shape


def _read_ppm(path):
    """Reads a binary 8-bit PPM (P6) into an HxWx3 uint8 array (RGB)."""
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos) + 1
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    pos += 1  # the single whitespace after maxval
    if fields[0] != b"P6" or int(fields[3]) != 255:
        raise ValueError(f"{path}: expected an 8-bit binary PPM")
    w, h = int(fields[1]), int(fields[2])
    return np.frombuffer(data, np.uint8, w * h * 3, pos).reshape(h, w, 3)


def image_size(path):
    out = subprocess.run(["identify", "-format", "%w %h", path + "[0]"], check=True,
                         capture_output=True, text=True).stdout.split()
    return int(out[0]), int(out[1])


def preprocess(path):
    """Exactly PP-OCR's cls resize_norm_img: keep aspect ratio at height 48, width capped at 192,
    /255, (x-0.5)/0.5, HWC->CHW, right-pad with zeros to width 192; BGR channel order as cv2 loads
    it. Resizing is done by ImageMagick (bilinear-like triangle filter) instead of cv2."""
    c, img_h, img_w = CLS_SHAPE
    w, h = image_size(path)
    ratio = w / float(h)
    resized_w = img_w if math.ceil(img_h * ratio) > img_w else int(math.ceil(img_h * ratio))
    with tempfile.TemporaryDirectory() as tmp:
        ppm = os.path.join(tmp, "resized.ppm")
        subprocess.run(["convert", path, "-alpha", "off", "-colorspace", "sRGB", "-filter", "Triangle",
                        "-resize", f"{resized_w}x{img_h}!", "-depth", "8", "ppm:" + ppm], check=True)
        rgb = _read_ppm(ppm)
    bgr = rgb[:, :, ::-1].astype("float32")
    x = bgr.transpose((2, 0, 1)) / 255
    x -= 0.5
    x /= 0.5
    padded = np.zeros((c, img_h, img_w), dtype=np.float32)
    padded[:, :, 0:resized_w] = x
    return padded[np.newaxis, ...]


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("image")
    p.add_argument("out_npy")
    args = p.parse_args()
    x = preprocess(args.image)
    np.save(args.out_npy, x)
    print(f"{args.out_npy}: shape={list(x.shape)} dtype={x.dtype}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
