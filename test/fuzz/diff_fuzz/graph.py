"""GraphBuilder: the values a graph defines so far (graph inputs, initializers, node outputs),
with their element types and shapes (ints, symbolic dim names, or None where ONNX shape inference
does not know the dim), and the concrete sizes of every symbolic dim at each run.

Every node is checked when it is added: the graph with it must pass onnx.checker and strict
shape inference, else the node (and the inputs it created) is rolled back (Reject)."""
import numpy as np
import onnx
from onnx import helper, numpy_helper

import dtypes
import values


class Reject(Exception):
    """The candidate node cannot be built validly here."""


class Val:
    def __init__(self, name, dt, shape, exact=True, const=None, kind="node"):
        self.name, self.dt, self.shape = name, dt, list(shape) if shape is not None else None
        self.exact = exact      # bit-identical across correct implementations (no float rounding)
        self.const = const      # the value when known at build time (initializers)
        self.kind = kind        # input | init | node

    @property
    def rank(self):
        return None if self.shape is None else len(self.shape)

    def __repr__(self):
        return f"{self.name}:{dtypes.name(self.dt)}{self.shape}"


def ir_version_for(opset):
    return 8 if opset <= 18 else (9 if opset <= 20 else 10)


class GraphBuilder:
    def __init__(self, rng, opset, sym_env):
        self.rng, self.opset = rng, opset
        self.sym = dict(sym_env)          # dim name -> (size at run 0, size at run 1)
        self.runs = 2 if self.sym else 1
        self.pool = []                    # every Val usable as a node input
        self.inputs = []                  # (Val, gen(rng, concrete shape, run) -> array)
        self.inits = []                   # TensorProto
        self.nodes = []
        self.counter = 0

    # ---- names and sizes ---------------------------------------------------------------------
    def fresh(self, prefix="v"):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def sizes(self, d):
        """The sizes a dim takes over the runs (None when unknown)."""
        if d is None:
            return None
        if isinstance(d, str):
            return self.sym.get(d)
        return (d,) * 2

    def min_dim(self, d):
        s = self.sizes(d)
        return None if s is None else min(s[:self.runs])

    def static(self, d):
        """The dim's size when it is the same at every run, else None."""
        s = self.sizes(d)
        if s is None or len(set(s[:self.runs])) != 1:
            return None
        return s[0]

    def known(self, v):
        return v.shape is not None and all(self.sizes(d) is not None for d in v.shape)

    def concrete(self, shape, run):
        return [self.sizes(d)[run] for d in shape]

    # ---- shapes ------------------------------------------------------------------------------
    def random_shape(self, rank=None, min_rank=0, max_rank=4, min_dim=1, max_dim=5, sym_p=0.35,
                     zero_p=0.03):
        rng = self.rng
        if rank is None:
            rank = int(rng.integers(min_rank, max_rank + 1))
        shape = []
        for _ in range(rank):
            if self.sym and rng.random() < sym_p:
                cands = [s for s, v in self.sym.items() if min(v) >= min_dim]
                if cands:
                    shape.append(cands[int(rng.integers(len(cands)))])
                    continue
            if min_dim == 0 and rng.random() < zero_p:
                shape.append(0)
            else:
                shape.append(int(rng.integers(max(min_dim, 1), max_dim + 1)))
        return shape

    # ---- values ------------------------------------------------------------------------------
    def add_input(self, dt, shape, gen=None):
        v = Val(self.fresh("in"), dt, shape, exact=True, kind="input")
        if gen is None:
            gen = lambda rng, sh, run, dt=dt: values.random_array(rng, dt, sh)  # noqa: E731
        self.inputs.append((v, gen))
        self.pool.append(v)
        return v

    def add_const(self, array, dt=None, pool=False):
        array = np.asarray(array)
        if dt is not None:
            array = array.astype(dtypes.np_type(dt))
        name = self.fresh("c")
        self.inits.append(numpy_helper.from_array(array, name))
        v = Val(name, dtypes.from_numpy(array.dtype), list(array.shape), True, array, "init")
        if pool:
            self.pool.append(v)
        return v

    def snapshot(self):
        return (len(self.pool), len(self.inputs), len(self.inits), len(self.nodes), self.counter)

    def rollback(self, snap):
        p, i, c, n, k = snap
        del self.pool[p:], self.inputs[i:], self.inits[c:], self.nodes[n:]
        self.counter = k

    # ---- nodes -------------------------------------------------------------------------------
    def add_node(self, op, ins, n_out=1, attrs=None, exact=None, domain=""):
        """Adds the node; ins: Val or None (an omitted optional input). Returns its output Vals
        (shapes from strict shape inference). exact: whether outputs are bit-exact (default: no
        for float outputs of a non-exact-preserving op)."""
        outs = [self.fresh() for _ in range(n_out)]
        node = helper.make_node(op, [v.name if v is not None else "" for v in ins], outs,
                                name=f"{op.lower()}{len(self.nodes)}", domain=domain,
                                **(attrs or {}))
        self.nodes.append(node)
        try:
            inferred = self.infer()
        except Exception as e:  # noqa: BLE001 (any checker / inference failure rejects the node)
            self.nodes.pop()
            raise Reject(f"{op}: {str(e).splitlines()[0][:200]}")
        res = []
        all_exact = all(v.exact for v in ins if v is not None)
        for o in outs:
            vi = inferred.get(o)
            if vi is None or not vi.type.HasField("tensor_type") or \
                    vi.type.tensor_type.elem_type not in dtypes.NUMPY:
                self.nodes.pop()
                raise Reject(f"{op}: output {o} not inferred as a supported tensor")
            tt = vi.type.tensor_type
            shape = None
            if tt.HasField("shape"):
                shape = []
                for d in tt.shape.dim:
                    if d.HasField("dim_value"):
                        shape.append(d.dim_value)
                    elif d.HasField("dim_param") and d.dim_param in self.sym:
                        shape.append(d.dim_param)
                    else:
                        shape.append(None)
            ex = exact if exact is not None else (all_exact and not dtypes.is_float(tt.elem_type))
            res.append(Val(o, tt.elem_type, shape, exact=ex and all_exact, kind="node"))
        self.pool.extend(res)
        return res

    def model(self, outputs=None, declare_shapes=True):
        """The ModelProto: outputs default to every node output no node consumes."""
        used = {i for n in self.nodes for i in n.input}
        if outputs is None:
            outputs = [v for v in self.pool if v.kind == "node" and v.name not in used]
        ins = [helper.make_tensor_value_info(v.name, v.dt, [d for d in v.shape])
               for v, _ in self.inputs]
        outs = []
        for v in outputs:
            shape = None
            if declare_shapes and v.shape is not None:
                shape = [d if d is not None else f"u_{v.name}_{k}" for k, d in enumerate(v.shape)]
            outs.append(helper.make_tensor_value_info(v.name, v.dt, shape))
        g = helper.make_graph(list(self.nodes), "fuzz", ins, outs, initializer=list(self.inits))
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", self.opset)],
                                 ir_version=ir_version_for(self.opset), producer_name="diff_fuzz")

    def infer(self):
        m = self.model(outputs=[], declare_shapes=False)
        onnx.checker.check_model(m)
        im = onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True, data_prop=True)
        return {v.name: v for v in im.graph.value_info}

    def feeds(self, rng):
        """One feed dict per run."""
        runs = []
        for r in range(self.runs):
            f = {}
            for (v, gen) in self.inputs:
                f[v.name] = np.asarray(gen(rng, self.concrete(v.shape, r), r))  # 0-d: no scalar
            runs.append(f)
        return runs
