#!/usr/bin/env python3
# PP-OCR pre- and post-processing in numpy/OpenCV: detector input and DB box extraction, perspective
# crops, classifier and recognizer inputs, CTC greedy decoding. Follows the PaddleOCR/RapidOCR
# conventions (det: DB thresholds, unclip; cls/rec: height 48, [-1, 1]; rec: CTC with blank 0).
import math

import cv2
import numpy as np

# Detector (DB) settings, PaddleOCR's defaults.
DET_LIMIT_SIDE = 960  # the longer side is shrunk to at most this; never enlarged
DET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
DET_STD = np.array([0.229, 0.224, 0.225], np.float32)
DB_THRESH = 0.3  # probability -> text pixel
DB_BOX_THRESH = 0.6  # mean probability inside a box to keep it
DB_UNCLIP_RATIO = 1.5  # how far the shrunk text kernel is grown back
DB_MIN_SIZE = 3
# Classifier: [3, 48, 192]; "180" wins only above this probability.
CLS_SHAPE = (3, 48, 192)
CLS_THRESH = 0.9
REC_HEIGHT = 48


def det_input(img):
    """BGR uint8 HxWx3 -> ([1, 3, h, w] float32, (h/H, w/W)): both sides resized to the nearest
    multiple of 32 (at least 32) after shrinking the longer side to DET_LIMIT_SIDE, /255, minus the
    ImageNet mean, over its std."""
    h, w = img.shape[:2]
    ratio = min(1.0, DET_LIMIT_SIDE / max(h, w))
    rh = max(32, int(round(h * ratio / 32)) * 32)
    rw = max(32, int(round(w * ratio / 32)) * 32)
    x = cv2.resize(img, (rw, rh)).astype(np.float32) / 255
    x = (x - DET_MEAN) / DET_STD
    return x.transpose(2, 0, 1)[np.newaxis].astype(np.float32), (rh / h, rw / w)


def _order_box(pts):
    """Four points -> top-left, top-right, bottom-right, bottom-left (float32 [4, 2])."""
    pts = np.asarray(pts, np.float32)
    by_x = pts[np.argsort(pts[:, 0], kind="stable")]
    left = by_x[:2][np.argsort(by_x[:2, 1], kind="stable")]
    right = by_x[2:][np.argsort(by_x[2:, 1], kind="stable")]
    return np.array([left[0], right[0], right[1], left[1]], np.float32)


def _box_score(prob, box):
    """Mean probability inside the polygon `box` (map coordinates)."""
    h, w = prob.shape
    x0 = int(np.clip(np.floor(box[:, 0].min()), 0, w - 1))
    x1 = int(np.clip(np.ceil(box[:, 0].max()), 0, w - 1))
    y0 = int(np.clip(np.floor(box[:, 1].min()), 0, h - 1))
    y1 = int(np.clip(np.ceil(box[:, 1].max()), 0, h - 1))
    mask = np.zeros((y1 - y0 + 1, x1 - x0 + 1), np.uint8)
    shifted = (box - np.array([x0, y0], np.float32)).round().astype(np.int32)
    cv2.fillPoly(mask, [shifted], 1)
    return cv2.mean(prob[y0:y1 + 1, x0:x1 + 1], mask)[0]


def _unclip(rect):
    """Grows a minAreaRect ((cx, cy), (w, h), angle) by DB's offset distance
    area * ratio / perimeter on every side. The minimum-area rectangle of the rounded offset
    polygon DB uses is exactly this rectangle."""
    (cx, cy), (w, h), angle = rect
    d = w * h * DB_UNCLIP_RATIO / (2 * (w + h))
    return ((cx, cy), (w + 2 * d, h + 2 * d), angle)


def db_boxes(prob, scale, image_shape):
    """DB post-processing of the detector's probability map [1, 1, h, w] -> list of boxes in image
    coordinates (float32 [4, 2]: tl, tr, br, bl), sorted top to bottom, then left to right."""
    prob = np.asarray(prob, np.float32)[0, 0]
    mask = (prob > DB_THRESH).astype(np.uint8)
    mask = cv2.dilate(mask, np.ones((2, 2), np.uint8))
    contours, _ = cv2.findContours(mask * 255, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    img_h, img_w = image_shape[:2]
    sy, sx = scale
    boxes = []
    for contour in contours:
        rect = cv2.minAreaRect(contour)
        if min(rect[1]) < DB_MIN_SIZE:
            continue
        if _box_score(prob, cv2.boxPoints(rect)) < DB_BOX_THRESH:
            continue
        grown = _unclip(rect)
        if min(grown[1]) < DB_MIN_SIZE + 2:
            continue
        box = _order_box(cv2.boxPoints(grown))
        box[:, 0] = np.clip(np.round(box[:, 0] / sx), 0, img_w - 1)
        box[:, 1] = np.clip(np.round(box[:, 1] / sy), 0, img_h - 1)
        if np.linalg.norm(box[0] - box[1]) <= 3 or np.linalg.norm(box[0] - box[3]) <= 3:
            continue
        boxes.append(box)
    # Top to bottom; boxes whose tops are within 10 pixels count as one row, left to right.
    boxes.sort(key=lambda b: (b[0, 1], b[0, 0]))
    for i in range(1, len(boxes)):
        j = i
        while j > 0 and abs(boxes[j][0, 1] - boxes[j - 1][0, 1]) < 10 and \
                boxes[j][0, 0] < boxes[j - 1][0, 0]:
            boxes[j], boxes[j - 1] = boxes[j - 1], boxes[j]
            j -= 1
    return boxes


def crop(img, box):
    """Perspective crop of the quadrilateral `box` (tl, tr, br, bl) to an upright rectangle; a crop
    at least 1.5 times taller than wide is turned 90 degrees (vertical text)."""
    w = int(max(np.linalg.norm(box[0] - box[1]), np.linalg.norm(box[2] - box[3])))
    h = int(max(np.linalg.norm(box[0] - box[3]), np.linalg.norm(box[1] - box[2])))
    dst = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    m = cv2.getPerspectiveTransform(box.astype(np.float32), dst)
    out = cv2.warpPerspective(img, m, (w, h), flags=cv2.INTER_CUBIC,
                              borderMode=cv2.BORDER_REPLICATE)
    if out.shape[0] >= 1.5 * out.shape[1]:
        out = np.rot90(out).copy()
    return out


def _resize_norm(img, height, width):
    """Height `height` keeping the aspect ratio (width at most `width`), [-1, 1], CHW, zero-padded on
    the right to `width`."""
    h, w = img.shape[:2]
    rw = min(width, int(math.ceil(height * w / float(h))))
    x = cv2.resize(img, (rw, height)).astype(np.float32).transpose(2, 0, 1) / 255
    out = np.zeros((3, height, width), np.float32)
    out[:, :, :rw] = (x - 0.5) / 0.5
    return out


def cls_input(crops):
    """Every crop at [3, 48, 192] -> [N, 3, 48, 192]."""
    _, h, w = CLS_SHAPE
    return np.stack([_resize_norm(c, h, w) for c in crops]).astype(np.float32)


def cls_apply(crops, probs):
    """Turns every crop the classifier calls '180' (probability > CLS_THRESH) upside down again;
    returns (crops, list of (label, probability))."""
    out, labels = [], []
    for c, p in zip(crops, np.asarray(probs)):
        k = int(np.argmax(p))
        labels.append(("180" if k == 1 else "0", float(p[k])))
        out.append(cv2.rotate(c, cv2.ROTATE_180) if k == 1 and p[k] > CLS_THRESH else c)
    return out, labels


def rec_input(img):
    """One crop -> [1, 3, 48, W], W = ceil(48 * aspect): the recognizer's width follows the line."""
    h, w = img.shape[:2]
    width = max(8, int(math.ceil(REC_HEIGHT * w / float(h))))
    return _resize_norm(img, REC_HEIGHT, width)[np.newaxis]


def load_dictionary(rec_model):
    """The recognizer's character list: the `character` metadata entry of the .onnx that the wheel
    ships (one character a line), with CTC's blank at index 0 and a space appended."""
    import onnx
    model = onnx.load(rec_model, load_external_data=False)
    meta = {p.key: p.value for p in model.metadata_props}
    if "character" not in meta:
        raise SystemExit(f"FAIL: {rec_model} has no 'character' metadata (the dictionary)")
    return ["<blank>"] + meta["character"].splitlines() + [" "]


def ctc_greedy(probs, chars):
    """Recognizer output [1, T, C] -> (text, mean probability of the kept steps): argmax per step,
    repeats collapsed, blanks (index 0) dropped."""
    p = np.asarray(probs)[0]
    idx = p.argmax(axis=1)
    best = p.max(axis=1)
    keep = idx != 0
    keep[1:] &= idx[1:] != idx[:-1]
    if p.shape[1] != len(chars):
        raise SystemExit(f"FAIL: recognizer has {p.shape[1]} classes, dictionary {len(chars)}")
    text = "".join(chars[i] for i in idx[keep])
    return text, float(best[keep].mean()) if keep.any() else 0.0
