// The PP-OCR pipeline in the browser: det (DB) -> boxes -> crops -> cls -> rec -> CTC, with the
// three networks compiled by relaxc for webgpu and run by relax.js. Pre- and post-processing are
// plain JS (no OpenCV): PaddleOCR's conventions as test/models/ocr_postprocess.py follows them,
// with axis-aligned boxes (the connected components of the thresholded map; text lines on a
// page are horizontal, upside-down ones included) in place of minimum-area rectangles.

const DET_LIMIT_SIDE = 960, DB_THRESH = 0.3, DB_BOX_THRESH = 0.6, DB_UNCLIP_RATIO = 1.5;
const DB_MIN_SIZE = 3, CLS_W = 192, CLS_THRESH = 0.9, H = 48;
const MEAN = [0.485, 0.456, 0.406], STD = [0.229, 0.224, 0.225];

// An RGB image: {w, h, data: Uint8Array of w*h*3}.
export async function loadImage(url) {
  const bitmap = await createImageBitmap(await (await fetch(url)).blob());
  const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
  const ctx = canvas.getContext("2d");
  ctx.drawImage(bitmap, 0, 0);
  const rgba = ctx.getImageData(0, 0, bitmap.width, bitmap.height).data;
  const data = new Uint8Array(bitmap.width * bitmap.height * 3);
  for (let i = 0, j = 0; i < rgba.length; i += 4, j += 3) {
    data[j] = rgba[i], data[j + 1] = rgba[i + 1], data[j + 2] = rgba[i + 2];
  }
  return {w: bitmap.width, h: bitmap.height, data};
}

// Bilinear resize with pixel centres aligned (OpenCV's INTER_LINEAR), as floats per channel.
function resize(img, w, h) {
  const out = new Float32Array(w * h * 3);
  const sx = img.w / w, sy = img.h / h;
  for (let y = 0; y < h; ++y) {
    const fy = Math.min(Math.max((y + 0.5) * sy - 0.5, 0), img.h - 1);
    const y0 = Math.floor(fy), y1 = Math.min(y0 + 1, img.h - 1), wy = fy - y0;
    for (let x = 0; x < w; ++x) {
      const fx = Math.min(Math.max((x + 0.5) * sx - 0.5, 0), img.w - 1);
      const x0 = Math.floor(fx), x1 = Math.min(x0 + 1, img.w - 1), wx = fx - x0;
      for (let c = 0; c < 3; ++c) {
        const p = (yy, xx) => img.data[(yy * img.w + xx) * 3 + c];
        out[(y * w + x) * 3 + c] = (p(y0, x0) * (1 - wx) + p(y0, x1) * wx) * (1 - wy) +
                                   (p(y1, x0) * (1 - wx) + p(y1, x1) * wx) * wy;
      }
    }
  }
  return out;
}

function detInput(img) {
  const ratio = Math.min(1, DET_LIMIT_SIDE / Math.max(img.w, img.h));
  const rh = Math.max(32, Math.round(img.h * ratio / 32) * 32);
  const rw = Math.max(32, Math.round(img.w * ratio / 32) * 32);
  const px = resize(img, rw, rh);
  const x = new Float32Array(3 * rh * rw);
  for (let i = 0; i < rh * rw; ++i)
    for (let c = 0; c < 3; ++c) {  // BGR, as OpenCV loads it
      const k = 2 - c;
      x[c * rh * rw + i] = (px[i * 3 + k] / 255 - MEAN[c]) / STD[c];
    }
  return {x, shape: [1, 3, rh, rw], sy: rh / img.h, sx: rw / img.w};
}

// DB: threshold, dilate 2x2, 8-connected components -> boxes (image coordinates), top to bottom.
function dbBoxes(prob, h, w, sy, sx, img) {
  const mask = new Uint8Array(h * w);
  for (let y = 0; y < h; ++y)
    for (let x = 0; x < w; ++x) {
      let on = false;
      for (let dy = 0; dy <= 1 && !on; ++dy)
        for (let dx = 0; dx <= 1 && !on; ++dx) {
          const yy = y - dy, xx = x - dx;
          on = yy >= 0 && xx >= 0 && prob[yy * w + xx] > DB_THRESH;
        }
      mask[y * w + x] = on ? 1 : 0;
    }
  const seen = new Uint8Array(h * w);
  const boxes = [];
  for (let start = 0; start < h * w; ++start) {
    if (!mask[start] || seen[start]) continue;
    let x0 = w, x1 = -1, y0 = h, y1 = -1;
    const stack = [start];
    seen[start] = 1;
    while (stack.length) {
      const p = stack.pop(), py = Math.floor(p / w), px = p % w;
      x0 = Math.min(x0, px), x1 = Math.max(x1, px), y0 = Math.min(y0, py), y1 = Math.max(y1, py);
      for (let dy = -1; dy <= 1; ++dy)
        for (let dx = -1; dx <= 1; ++dx) {
          const yy = py + dy, xx = px + dx, q = yy * w + xx;
          if (yy >= 0 && yy < h && xx >= 0 && xx < w && mask[q] && !seen[q]) { seen[q] = 1; stack.push(q); }
        }
    }
    const bw = x1 - x0 + 1, bh = y1 - y0 + 1;
    if (Math.min(bw, bh) < DB_MIN_SIZE) continue;
    let sum = 0;
    for (let y = y0; y <= y1; ++y) for (let x = x0; x <= x1; ++x) sum += prob[y * w + x];
    if (sum / (bw * bh) < DB_BOX_THRESH) continue;
    const d = bw * bh * DB_UNCLIP_RATIO / (2 * (bw + bh));
    const cx = (x0 + x1 + 1) / 2, cy = (y0 + y1 + 1) / 2, gw = bw + 2 * d, gh = bh + 2 * d;
    if (Math.min(gw, gh) < DB_MIN_SIZE + 2) continue;
    const clip = (v, hi) => Math.min(Math.max(Math.round(v), 0), hi);
    const box = {x0: clip((cx - gw / 2) / sx, img.w - 1), x1: clip((cx + gw / 2) / sx, img.w - 1),
                 y0: clip((cy - gh / 2) / sy, img.h - 1), y1: clip((cy + gh / 2) / sy, img.h - 1)};
    if (box.x1 - box.x0 <= 3 || box.y1 - box.y0 <= 3) continue;
    boxes.push(box);
  }
  boxes.sort((a, b) => Math.abs(a.y0 - b.y0) < 10 ? a.x0 - b.x0 : a.y0 - b.y0);
  return boxes;
}

function crop(img, b) {
  const w = b.x1 - b.x0, h = b.y1 - b.y0;
  const data = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; ++y)
    data.set(img.data.subarray(((b.y0 + y) * img.w + b.x0) * 3, ((b.y0 + y) * img.w + b.x0 + w) * 3), y * w * 3);
  return {w, h, data};
}

function rotate180(img) {
  const data = new Uint8Array(img.data.length), n = img.w * img.h;
  for (let i = 0; i < n; ++i) data.set(img.data.subarray(i * 3, i * 3 + 3), (n - 1 - i) * 3);
  return {w: img.w, h: img.h, data};
}

// Height 48 keeping the aspect ratio (width at most `width`), BGR, [-1, 1], zero-padded to `width`.
function resizeNorm(img, width, out, offset) {
  const rw = Math.min(width, Math.ceil(H * img.w / img.h));
  const px = resize(img, rw, H);
  for (let c = 0; c < 3; ++c)
    for (let y = 0; y < H; ++y)
      for (let x = 0; x < rw; ++x)
        out[offset + (c * H + y) * width + x] = (px[(y * rw + x) * 3 + (2 - c)] / 255 - 0.5) / 0.5;
}

function ctcGreedy(probs, steps, classes, chars) {
  let text = "", prev = -1;
  for (let t = 0; t < steps; ++t) {
    let best = 0;
    for (let c = 1; c < classes; ++c) if (probs[t * classes + c] > probs[t * classes + best]) best = c;
    if (best !== 0 && best !== prev) text += chars[best];
    prev = best;
  }
  return text;
}

// Reads the text of image `img` with loaded models {det, cls, rec} and the dictionary `chars`
// (CTC's blank first). Returns [{box, cls, text}], top to bottom.
export async function ocr(img, models, chars) {
  const d = detInput(img);
  const [prob] = await models.det.run([{data: d.x, shape: d.shape}]);
  const boxes = dbBoxes(prob.data, d.shape[2], d.shape[3], d.sy, d.sx, img);
  if (!boxes.length) return [];
  let crops = boxes.map(b => crop(img, b));
  const batch = new Float32Array(crops.length * 3 * H * CLS_W);
  crops.forEach((c, i) => resizeNorm(c, CLS_W, batch, i * 3 * H * CLS_W));
  const [cls] = await models.cls.run([{data: batch, shape: [crops.length, 3, H, CLS_W]}]);
  const lines = [];
  for (let i = 0; i < crops.length; ++i) {
    const p0 = cls.data[2 * i], p1 = cls.data[2 * i + 1];
    const label = p1 > p0 ? "180" : "0";
    if (label === "180" && p1 > CLS_THRESH) crops[i] = rotate180(crops[i]);
    const width = Math.max(8, Math.ceil(H * crops[i].w / crops[i].h));
    const x = new Float32Array(3 * H * width);
    resizeNorm(crops[i], width, x, 0);
    const [rec] = await models.rec.run([{data: x, shape: [1, 3, H, width]}]);
    if (rec.shape[2] !== chars.length)
      throw new Error(`the recognizer has ${rec.shape[2]} classes, the dictionary ${chars.length}`);
    lines.push({box: boxes[i], cls: [label, Math.max(p0, p1)], text: ctcGreedy(rec.data, rec.shape[1], rec.shape[2], chars)});
  }
  return lines;
}
