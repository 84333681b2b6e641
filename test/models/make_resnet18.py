#!/usr/bin/env python3
"""Writes a ResNet-18 (torchvision's topology) as ONNX with seeded random weights, without torch:
the graph torch.onnx.export gives for resnet18().eval() (batch norms folded into each Conv's
weight and bias; Conv, Relu, MaxPool, Add, GlobalAveragePool, Flatten, Gemm with transB=1),
with dynamic batch, height and width. Used by the BYOC model tests when the exported-model cache
(scripts/export_models.sh, several GB of torch) is not there.

Usage: make_resnet18.py OUT.onnx [--seed N] [--classes N]
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, p):
        self.n += 1
        return f"{p}_{self.n}"

    def const(self, arr, p):
        nm = self.name(p)
        self.inits.append(numpy_helper.from_array(arr.astype(np.float32), nm))
        return nm

    def conv(self, x, cin, cout, k, stride, pad, gain=1.0):
        # He initialisation; the folded batch norm gives every Conv a bias.
        std = gain * np.sqrt(2.0 / (cin * k * k))
        w = self.const(self.rng.standard_normal((cout, cin, k, k)) * std, "w")
        b = self.const(self.rng.standard_normal(cout) * 0.05, "b")
        y = self.name("conv")
        self.nodes.append(helper.make_node("Conv", [x, w, b], [y], kernel_shape=[k, k],
                                           strides=[stride, stride], pads=[pad] * 4))
        return y

    def op(self, t, ins, **attrs):
        y = self.name(t.lower())
        self.nodes.append(helper.make_node(t, ins, [y], **attrs))
        return y


def resnet18(seed, classes):
    b = Builder(seed)
    x = b.op("Relu", [b.conv("x", 3, 64, 7, 2, 3)])
    x = b.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        for blk in range(2):
            s = stride if blk == 0 else 1
            y = b.op("Relu", [b.conv(x, cin, cout, 3, s, 1)])
            y = b.conv(y, cout, cout, 3, 1, 1, gain=0.5)
            short = x if (s == 1 and cin == cout) else b.conv(x, cin, cout, 1, s, 0)
            x = b.op("Relu", [b.op("Add", [y, short])])
            cin = cout
    x = b.op("Flatten", [b.op("GlobalAveragePool", [x])], axis=1)
    w = b.const(b.rng.standard_normal((classes, 512)) * np.sqrt(1.0 / 512), "fc_w")
    bias = b.const(b.rng.standard_normal(classes) * 0.05, "fc_b")
    b.nodes.append(helper.make_node("Gemm", [x, w, bias], ["logits"], transB=1))
    g = helper.make_graph(
        b.nodes, "resnet18",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, "h", "w"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", classes])],
        b.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("output")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--classes", type=int, default=1000)
    a = p.parse_args()
    onnx.save(resnet18(a.seed, a.classes), a.output)


if __name__ == "__main__":
    main()
