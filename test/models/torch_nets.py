# Hand-written torch architectures of the real-model suite (a YOLO-style detector, a GRU classifier); export venv only.
"""Two small networks written for the suite, exported by export_models.py (needs torch).

- YoloStyleDetector: a one-stage detector in the shape of the YOLOv5n/YOLOv8n family, about 1.8 M
  parameters: a strided conv backbone of CSP blocks (two branches, one through residual
  bottlenecks, concatenated and mixed by a 1x1 conv), a fast spatial pyramid pool (three chained
  5x5 max pools), a top-down + bottom-up neck (nearest 2x upsampling and strided convs, each
  followed by a concat with the lateral feature) and three 1x1 detection heads at strides 8, 16
  and 32. Conv + BatchNorm + SiLU throughout. Input image [batch, 3, height, width] with height
  and width multiples of 32; outputs the raw head maps p3/p4/p5 [batch, 3 * (5 + classes),
  height / s, width / s] (3 anchors per cell; no box decoding).
- GruClassifier: token ids [batch, sequence] (int64) -> embedding -> 2-layer bidirectional GRU
  -> linear head on the last layer's final states (forward and backward concatenated) ->
  logits [batch, classes].
"""
import torch
from torch import nn


class ConvBnSiLU(nn.Sequential):
    def __init__(self, c_in, c_out, k=1, stride=1):
        super().__init__(nn.Conv2d(c_in, c_out, k, stride, k // 2, bias=False), nn.BatchNorm2d(c_out), nn.SiLU())


class Bottleneck(nn.Module):
    """1x1 then 3x3 conv, with the input added back when `residual`."""

    def __init__(self, c, residual=True):
        super().__init__()
        self.a = ConvBnSiLU(c, c, 1)
        self.b = ConvBnSiLU(c, c, 3)
        self.residual = residual

    def forward(self, x):
        y = self.b(self.a(x))
        return x + y if self.residual else y


class CspBlock(nn.Module):
    """Cross-stage partial block: half the channels go through `n` bottlenecks, half bypass them;
    the two halves are concatenated and mixed by a 1x1 conv."""

    def __init__(self, c_in, c_out, n=1, residual=True):
        super().__init__()
        h = c_out // 2
        self.main = ConvBnSiLU(c_in, h, 1)
        self.bypass = ConvBnSiLU(c_in, h, 1)
        self.blocks = nn.Sequential(*[Bottleneck(h, residual) for _ in range(n)])
        self.mix = ConvBnSiLU(2 * h, c_out, 1)

    def forward(self, x):
        return self.mix(torch.cat([self.blocks(self.main(x)), self.bypass(x)], 1))


class FastSpatialPyramidPool(nn.Module):
    """Three chained 5x5 stride-1 max pools; the input and the three results concatenated."""

    def __init__(self, c_in, c_out):
        super().__init__()
        h = c_in // 2
        self.reduce = ConvBnSiLU(c_in, h, 1)
        self.pool = nn.MaxPool2d(5, 1, 2)
        self.expand = ConvBnSiLU(4 * h, c_out, 1)

    def forward(self, x):
        x = self.reduce(x)
        y1 = self.pool(x)
        y2 = self.pool(y1)
        return self.expand(torch.cat([x, y1, y2, self.pool(y2)], 1))


class YoloStyleDetector(nn.Module):
    def __init__(self, classes=80, anchors=3, w=(16, 32, 64, 128, 256)):
        super().__init__()
        self.stem = ConvBnSiLU(3, w[0], 3, 2)                                         # /2
        self.s2 = nn.Sequential(ConvBnSiLU(w[0], w[1], 3, 2), CspBlock(w[1], w[1], 1))  # /4
        self.s3 = nn.Sequential(ConvBnSiLU(w[1], w[2], 3, 2), CspBlock(w[2], w[2], 2))  # /8
        self.s4 = nn.Sequential(ConvBnSiLU(w[2], w[3], 3, 2), CspBlock(w[3], w[3], 3))  # /16
        self.s5 = nn.Sequential(ConvBnSiLU(w[3], w[4], 3, 2), CspBlock(w[4], w[4], 1),
                                FastSpatialPyramidPool(w[4], w[4]))                   # /32
        self.up = nn.Upsample(scale_factor=2.0, mode="nearest")
        # Top-down path.
        self.lat5 = ConvBnSiLU(w[4], w[3], 1)
        self.td4 = CspBlock(2 * w[3], w[3], 1, residual=False)
        self.lat4 = ConvBnSiLU(w[3], w[2], 1)
        self.td3 = CspBlock(2 * w[2], w[2], 1, residual=False)
        # Bottom-up path.
        self.down3 = ConvBnSiLU(w[2], w[2], 3, 2)
        self.bu4 = CspBlock(2 * w[2], w[3], 1, residual=False)
        self.down4 = ConvBnSiLU(w[3], w[3], 3, 2)
        self.bu5 = CspBlock(2 * w[3], w[4], 1, residual=False)
        out = anchors * (5 + classes)
        self.heads = nn.ModuleList([nn.Conv2d(c, out, 1) for c in (w[2], w[3], w[4])])

    def forward(self, x):
        c3 = self.s3(self.s2(self.stem(x)))
        c4 = self.s4(c3)
        c5 = self.s5(c4)
        h5 = self.lat5(c5)
        n4 = self.td4(torch.cat([self.up(h5), c4], 1))
        h4 = self.lat4(n4)
        p3 = self.td3(torch.cat([self.up(h4), c3], 1))
        p4 = self.bu4(torch.cat([self.down3(p3), h4], 1))
        p5 = self.bu5(torch.cat([self.down4(p4), h5], 1))
        return tuple(head(p) for head, p in zip(self.heads, (p3, p4, p5)))


class GruClassifier(nn.Module):
    def __init__(self, vocab=1000, embed=64, hidden=128, classes=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, embed)
        self.gru = nn.GRU(embed, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, classes)

    def forward(self, tokens):
        _, h = self.gru(self.emb(tokens))  # h: [layers * 2, batch, hidden]; the last layer is h[-2:]
        return self.head(torch.cat([h[-2], h[-1]], 1))
