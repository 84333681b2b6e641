"""Writes the small ONNX model of the embedding-API tests (test/capi): symbolic dims batch, n.

    x: float32[batch, n, 3]
    y = (x + [1, 2, 3]) * 2                      float32[batch, n, 3]
    z = Softmax(Tanh(x @ W + b), axis=-1)        float32[batch, n, 5]   (W, b: fixed seed)

With a second path it also writes the model of the optional-input tests (IR version 8, where an
initializer that is also a graph input is a default the caller may override):

    x: float32[batch, 3], B: float32[3] = [1, 2, 3] (initializer)
    y = (x + B) * 2                              float32[batch, 3]

Usage: make_model.py OUT.onnx [DEFAULTS.onnx]
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build_model():
    """The model (onnx.ModelProto), checked by the ONNX checker."""
    rng = np.random.default_rng(7)
    w = rng.standard_normal((3, 5)).astype(np.float32)
    b = rng.standard_normal((5,)).astype(np.float32)
    inits = [
        numpy_helper.from_array(np.array([1, 2, 3], np.float32), "B"),
        numpy_helper.from_array(np.array(2, np.float32), "two"),
        numpy_helper.from_array(w, "W"),
        numpy_helper.from_array(b, "bias"),
    ]
    nodes = [
        helper.make_node("Add", ["x", "B"], ["xb"], name="add_b"),
        helper.make_node("Mul", ["xb", "two"], ["y"], name="mul_two"),
        helper.make_node("MatMul", ["x", "W"], ["xw"], name="matmul"),
        helper.make_node("Add", ["xw", "bias"], ["xwb"], name="add_bias"),
        helper.make_node("Tanh", ["xwb"], ["t"], name="tanh"),
        helper.make_node("Softmax", ["t"], ["z"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "capi_small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "n", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "n", 3]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", "n", 5])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def build_defaults_model():
    """The optional-input model: B is both an initializer and a graph input."""
    inits = [numpy_helper.from_array(np.array([1, 2, 3], np.float32), "B"),
             numpy_helper.from_array(np.array(2, np.float32), "two")]
    nodes = [helper.make_node("Add", ["x", "B"], ["xb"], name="add_b"),
             helper.make_node("Mul", ["xb", "two"], ["y"], name="mul_two")]
    graph = helper.make_graph(
        nodes, "capi_defaults",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3]),
         helper.make_tensor_value_info("B", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main():
    onnx.save(build_model(), sys.argv[1])
    if len(sys.argv) > 2:
        onnx.save(build_defaults_model(), sys.argv[2])


if __name__ == "__main__":
    main()
