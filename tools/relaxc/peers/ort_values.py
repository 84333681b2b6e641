# relaxc diff's reference side (embedded into relaxc; run as `python -c SOURCE ARGS`).
#
#   values MODEL OUT_DIR [NAME=FILE.npy ...]
#       Runs MODEL with onnxruntime (CPU, graph optimizations off: every node computes its own
#       value) with every value a main-graph node computes exposed as a graph output; writes
#       OUT_DIR/<k>.npy per value and OUT_DIR/index.json: the nodes in graph (topological)
#       order with their inputs and outputs, and value name -> file.
#   repro MODEL NODE_INDEX VALUES_DIR OUT_DIR
#       Writes OUT_DIR/model.onnx holding the main graph's node NODE_INDEX (0-based) alone (its initializer and Constant inputs
#       kept as initializers, the others graph inputs of the shapes and types VALUES_DIR holds
#       for them), OUT_DIR/input_<k>.npy with those values and OUT_DIR/repro.json (input name ->
#       file).
import json
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def fail(msg):
    sys.stderr.write("error: " + msg + "\n")
    sys.exit(1)


def text(s):
    return s.decode("utf-8", "replace") if isinstance(s, bytes) else s


def node_label(n, i):
    return text(n.name or (n.output[0] if len(n.output) and n.output[0] else "<node %d>" % i))


def load_input(path):
    """A tensor's .npy, or a sequence's folder of 0.npy, 1.npy, ..."""
    if os.path.isdir(path):
        count = len([f for f in os.listdir(path) if f.endswith(".npy")])
        return [np.load(os.path.join(path, "%d.npy" % k), allow_pickle=False)
                for k in range(count)]
    return np.load(path, allow_pickle=False)


def values(model_path, out_dir, specs):
    import onnxruntime as ort

    model = onnx.load(model_path)
    g = model.graph
    initializers = {t.name for t in g.initializer}
    graph_outputs = [o.name for o in g.output]
    known = set(graph_outputs)
    for n in g.node:
        for o in n.output:
            if o and o not in known and o not in initializers:
                # No type: onnxruntime infers it (an output needs only its name).
                g.output.append(onnx.ValueInfoProto(name=o))
                known.add(o)
    feeds = {}
    for spec in specs:
        name, _, path = spec.rpartition("=")  # the path (a scratch path) has no '='
        feeds[name] = load_input(path)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    results = sess.run(names, feeds)
    index = {"nodes": [], "values": {}, "graph_outputs": graph_outputs,
             "onnxruntime": ort.__version__}
    for i, n in enumerate(g.node):
        index["nodes"].append({"name": node_label(n, i), "op_type": text(n.op_type),
                               "domain": text(n.domain),
                               "inputs": [text(x) for x in n.input],
                               "outputs": [text(x) for x in n.output]})
    for name, value in feeds.items():  # graph inputs too (a repro's inputs may be one)
        if not isinstance(value, np.ndarray):
            continue
        f = "input_%d.npy" % len(index["values"])
        np.save(os.path.join(out_dir, f), value, allow_pickle=False)
        index["values"][name] = f
    for k, (name, value) in enumerate(zip(names, results)):
        if not isinstance(value, np.ndarray):
            continue  # a sequence or map: not compared
        f = "%d.npy" % k
        np.save(os.path.join(out_dir, f), value, allow_pickle=False)
        index["values"][name] = f
    with open(os.path.join(out_dir, "index.json"), "w") as fh:
        json.dump(index, fh)


def constant_value(n):
    for a in n.attribute:
        if a.name == "value":
            return numpy_helper.to_array(a.t)
        if a.name in ("value_float", "value_int"):
            return np.array(a.f if a.name == "value_float" else a.i,
                            dtype=np.float32 if a.name == "value_float" else np.int64)
        if a.name in ("value_floats", "value_ints"):
            return np.array(list(a.floats) if a.name == "value_floats" else list(a.ints),
                            dtype=np.float32 if a.name == "value_floats" else np.int64)
    return None


def repro(model_path, node_index, values_dir, out_dir):
    model = onnx.load(model_path)
    g = model.graph
    if not 0 <= node_index < len(g.node):
        fail("the model has no node %d" % node_index)
    node = g.node[node_index]
    node_name = node_label(node, node_index)
    if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
           for a in node.attribute):
        fail("node '%s' (%s) has subgraphs; no single-node repro is written" %
             (node_name, node.op_type))
    with open(os.path.join(values_dir, "index.json")) as fh:
        index = json.load(fh)
    inits = {t.name: t for t in g.initializer}
    consts = {n.output[0]: n for n in g.node if n.op_type == "Constant" and len(n.output)}
    graph_inputs = {i.name for i in g.input}
    new_inits, new_inputs, files = [], [], {}
    for name in node.input:
        if not name or name in files or any(t.name == name for t in new_inits):
            continue
        if name in inits and name not in graph_inputs:
            new_inits.append(inits[name])
            continue
        if name in consts and constant_value(consts[name]) is not None:
            new_inits.append(numpy_helper.from_array(constant_value(consts[name]), name))
            continue
        if name in index["values"]:
            arr = np.load(os.path.join(values_dir, index["values"][name]), allow_pickle=False)
        elif name in inits:
            arr = numpy_helper.to_array(inits[name])
        else:
            fail("the value of input '%s' of node '%s' is not known" % (name, node_name))
        f = "input_%d.npy" % len(files)
        np.save(os.path.join(out_dir, f), arr, allow_pickle=False)
        files[name] = f
        new_inputs.append(helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(arr.dtype), list(arr.shape)))
    outputs = []
    for name in node.output:
        if not name:
            continue
        if name not in index["values"]:
            outputs.append(onnx.ValueInfoProto(name=name))
            continue
        arr = np.load(os.path.join(values_dir, index["values"][name]), allow_pickle=False)
        outputs.append(helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(arr.dtype), list(arr.shape)))
    graph = helper.make_graph([node], "repro_" + node.op_type, new_inputs, outputs, new_inits)
    m = helper.make_model(graph, opset_imports=list(model.opset_import))
    m.ir_version = model.ir_version
    onnx.save(m, os.path.join(out_dir, "model.onnx"))
    with open(os.path.join(out_dir, "repro.json"), "w") as fh:
        json.dump({"node": node_name, "op_type": node.op_type, "inputs": files}, fh)


def main(argv):
    if len(argv) >= 2 and argv[0] == "values":
        if len(argv) < 3:
            fail("usage: values MODEL OUT_DIR [NAME=FILE.npy ...]")
        values(argv[1], argv[2], argv[3:])
    elif len(argv) == 5 and argv[0] == "repro":
        repro(argv[1], int(argv[2]), argv[3], argv[4])
    else:
        fail("usage: values MODEL OUT_DIR [NAME=FILE ...] | repro MODEL NODE_INDEX VALUES_DIR "
             "OUT_DIR")


main(sys.argv[1:])
