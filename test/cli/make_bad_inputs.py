#!/usr/bin/env python3
# Generates the bad inputs for the CLI error tests: broken artifacts, wrong .npy files, a non-ONNX file, an unsupported-op model.
import argparse
import os
import sys

import numpy as np


def write_unsupported_model(path):
    """A tiny valid ONNX model (opset 13) using RandomUniformLike and Multinomial (random ops,
    out of scope), which relaxc does not support."""
    import onnx
    from onnx import TensorProto, helper

    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    n = helper.make_tensor_value_info("n", TensorProto.INT32, [2, 1])
    nodes = [
        helper.make_node("Relu", ["a"], ["y"], name="relu_ok"),
        helper.make_node("RandomUniformLike", ["a"], ["r"], name="rand_node"),
        helper.make_node("Multinomial", ["r"], ["n"], name="multinomial_node"),
    ]
    graph = helper.make_graph(nodes, "unsupported_ops", [a], [y, n])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8,
                              producer_name="relaxc-cli-tests")
    onnx.checker.check_model(model)
    onnx.save(model, path)


def write_small_models(d):
    """Small models for the robustness cases: integer Div, Conv with strides 0, and a
    chain of 3000 Relu nodes (fusion must cap group sizes)."""
    import onnx
    from onnx import TensorProto, helper

    def save(graph, name, opset=13):
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
        onnx.save(model, os.path.join(d, name))

    a = helper.make_tensor_value_info("a", TensorProto.INT64, [3])
    b = helper.make_tensor_value_info("b", TensorProto.INT64, [3])
    y = helper.make_tensor_value_info("y", TensorProto.INT64, [3])
    save(helper.make_graph([helper.make_node("Div", ["a", "b"], ["y"], name="div0")], "div", [a, b], [y]),
         "div_int.onnx")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])
    yc = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 4, 4])
    w = helper.make_tensor("w", TensorProto.FLOAT, [1, 1, 1, 1], [1.0])
    conv = helper.make_node("Conv", ["x", "w"], ["y"], name="conv0", strides=[0, 0])
    save(helper.make_graph([conv], "conv", [x], [yc], initializer=[w]), "conv_strides0.onnx")
    xs = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])
    ys = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])
    nodes = [helper.make_node("Relu", ["x" if i == 0 else f"r{i - 1}"], [f"r{i}" if i < 2999 else "y"],
                              name=f"relu{i}") for i in range(3000)]
    save(helper.make_graph(nodes, "chain", [xs], [ys]), "relu_chain.onnx")
    # A node without op_type or outputs (found by the importer fuzzer: naming it in the
    # unsupported-op report read output 0 of an empty list).
    bare = onnx.NodeProto()
    bare.input.extend(["a"])
    save(helper.make_graph([helper.make_node("Neg", ["a"], ["y"]), bare], "bare", [a], [y]),
         "empty_op_type.onnx", opset=22)
    # Only the ai.onnx.ml opset imported, yet a default-domain node.
    ml_only = helper.make_model(
        helper.make_graph([helper.make_node("Neg", ["a"], ["y"], name="neg_default")], "mlonly",
                          [a], [y]),
        opset_imports=[helper.make_opsetid("ai.onnx.ml", 3)], ir_version=8)
    onnx.save(ml_only, os.path.join(d, "ml_only_default_node.onnx"))
    np.save(os.path.join(d, "div_a.npy"), np.array([7, np.iinfo(np.int64).min, -9], dtype=np.int64))
    np.save(os.path.join(d, "div_b.npy"), np.array([0, -1, 2], dtype=np.int64))
    np.save(os.path.join(d, "chain_x.npy"), np.array([[-1, 2, -3, 4]] * 2, dtype=np.float32))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--artifact", required=True, help="a good compiled classifier artifact")
    p.add_argument("out_dir")
    args = p.parse_args()
    d = args.out_dir
    os.makedirs(d, exist_ok=True)
    data = open(args.artifact, "rb").read()
    if len(data) < 1000:
        sys.exit(f"error: artifact {args.artifact} is too small ({len(data)} bytes)")

    def put(name, blob):
        with open(os.path.join(d, name), "wb") as f:
            f.write(blob)

    # Output paths that are not regular files: compiling to them must be refused (renaming the
    # artifact over a FIFO or a device would replace it).
    fifo = os.path.join(d, "out_fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    os.makedirs(os.path.join(d, "out_dir.so"), exist_ok=True)

    put("truncated_half.so", data[: len(data) // 2])
    put("truncated_100.so", data[:100])
    mid = len(data) // 2
    put("corrupted.so", data[:mid] + bytes([data[mid] ^ 0xFF]) + data[mid + 1:])
    put("not_onnx.onnx", b"this is a plain text file, not an ONNX model\n")
    os.makedirs(os.path.join(d, "a_directory.onnx"), exist_ok=True)
    write_small_models(d)

    rng = np.random.default_rng(0)
    np.save(os.path.join(d, "good.npy"), rng.standard_normal((1, 3, 48, 192)).astype(np.float32))
    np.save(os.path.join(d, "wrong_channels.npy"), rng.standard_normal((1, 4, 48, 192)).astype(np.float32))
    # Height 32 passes the signature but is too small for the model's pooling chain.
    np.save(os.path.join(d, "too_small.npy"), rng.standard_normal((1, 3, 32, 192)).astype(np.float32))
    np.save(os.path.join(d, "wrong_rank.npy"), rng.standard_normal((3, 48, 192)).astype(np.float32))
    np.save(os.path.join(d, "wrong_dtype.npy"), rng.standard_normal((1, 3, 48, 192)).astype(np.float64))
    write_unsupported_model(os.path.join(d, "unsupported_ops.onnx"))
    # Models for the importer/op regression tests (issue 6 section 4), see frontend_cases.py.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import onnx
    from frontend_cases import error_models

    for name, m in error_models().items():
        onnx.save(m, os.path.join(d, name + ".onnx"))
    print(f"wrote bad inputs to {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
