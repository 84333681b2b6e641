#!/usr/bin/env python3
# PP-OCR preprocessing: classifier and recognizer (resize_norm_img: height 48, [-1, 1], zero-padded
# width) and detector (placed on a white canvas of multiples of 32, ImageNet mean/std) -> .npy.
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


def _load_rgb(path, w, h, extra=()):
    with tempfile.TemporaryDirectory() as tmp:
        ppm = os.path.join(tmp, "resized.ppm")
        subprocess.run(["convert", path, "-alpha", "off", "-colorspace", "sRGB", *extra, "-depth", "8",
                        "ppm:" + ppm], check=True)
        rgb = _read_ppm(ppm)
    assert rgb.shape == (h, w, 3), rgb.shape
    return rgb


def preprocess_rec(path, width):
    """PP-OCR's recognizer resize_norm_img: height 48, width ceil(48 * aspect) capped at `width`,
    [-1, 1], BGR, zero-padded on the right to `width` -> [1, 3, 48, width]."""
    w, h = image_size(path)
    resized_w = min(width, int(math.ceil(48 * w / float(h))))
    rgb = _load_rgb(path, resized_w, 48, ["-filter", "Triangle", "-resize", f"{resized_w}x48!"])
    x = (rgb[:, :, ::-1].astype("float32").transpose((2, 0, 1)) / 255 - 0.5) / 0.5
    out = np.zeros((3, 48, width), np.float32)
    out[:, :, :resized_w] = x
    return out[np.newaxis, ...]


def preprocess_det(path, h, w):
    """The detector's input: the image centered on a white h x w canvas (both multiples of 32),
    BGR, /255, minus the ImageNet mean, over its std -> [1, 3, h, w]."""
    rgb = _load_rgb(path, w, h, ["-background", "white", "-gravity", "center", "-extent", f"{w}x{h}"])
    x = rgb[:, :, ::-1].astype("float32") / 255
    mean = np.array([0.485, 0.456, 0.406], np.float32)
    std = np.array([0.229, 0.224, 0.225], np.float32)
    return ((x - mean) / std).transpose((2, 0, 1))[np.newaxis, ...].astype(np.float32)


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
