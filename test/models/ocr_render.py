#!/usr/bin/env python3
# Renders the OCR pipeline's test page with ImageMagick: several lines of text in two fonts, one line
# rotated 180 degrees. The rendered strings are the ground truth.
import argparse
import json
import os
import subprocess
import sys

FONT_DIR = "/usr/share/fonts/truetype/dejavu"  # Debian fonts-dejavu-core (scripts/setup.sh)
SANS = os.path.join(FONT_DIR, "DejaVuSans.ttf")
SERIF = os.path.join(FONT_DIR, "DejaVuSerif.ttf")

# (text, font, rotated 180 degrees). Plain ASCII words and digits the PP-OCRv4 recognizer reads.
LINES = [
    ("Hello relaxc 2026", SANS, False),
    ("Compiled once for every size", SERIF, False),
    ("Upside down line 42", SANS, True),
    ("Dynamic shapes 1234567890", SERIF, False),
]
POINTSIZE = 36
LINE_GAP = 28  # pixels of white between lines, so the detector keeps them apart
MARGIN = 24


def render(out_dir, lines=LINES):
    """Writes out_dir/page.png (one image with every line, left-aligned, top to bottom) and
    out_dir/truth.json; returns (png path, list of the rendered strings in page order)."""
    os.makedirs(out_dir, exist_ok=True)
    parts = []
    for i, (text, font, upside_down) in enumerate(lines):
        if not os.path.isfile(font):
            raise SystemExit(f"FAIL: font {font} not found (install fonts-dejavu-core)")
        png = os.path.join(out_dir, f"line{i}.png")
        cmd = ["convert", "-background", "white", "-fill", "black", "-font", font, "-pointsize",
               str(POINTSIZE), "label:" + text]
        if upside_down:
            cmd += ["-rotate", "180"]
        subprocess.run(cmd + ["-alpha", "off", "-colorspace", "sRGB", "-type", "TrueColor", "-depth", "8", png],
                       check=True)
        parts.append(png)
    page = os.path.join(out_dir, "page.png")
    # Each line gets LINE_GAP/2 of white above and below; the stack is left-aligned.
    cmd = ["convert", "-background", "white"]
    for png in parts:
        cmd += ["(", png, "-bordercolor", "white", "-border", f"0x{LINE_GAP // 2}", ")"]
    cmd += ["-gravity", "west", "-append", "-bordercolor", "white", "-border", f"{MARGIN}x{MARGIN}",
            "+repage", "-alpha", "off", "-colorspace", "sRGB", "-type", "TrueColor", "-depth", "8",
            page]
    subprocess.run(cmd, check=True)
    truth = [text for text, _, _ in lines]
    with open(os.path.join(out_dir, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
    return page, truth


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("out_dir")
    args = p.parse_args()
    page, truth = render(args.out_dir)
    print(f"{page}: {len(truth)} lines")
    for t in truth:
        print(f"  {t}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
