"""Random graphs: a few symbolic dims with two sizes each (one artifact, two runs), then 1..k
nodes, each a random op of the table built by its builder (graph.Reject rolls it back)."""
import numpy as np

import ops_elementwise  # noqa: F401  (the modules register their builders)
import ops_index  # noqa: F401
import ops_misc  # noqa: F401
import ops_nn  # noqa: F401
import ops_reduce  # noqa: F401
import ops_shape  # noqa: F401
import registry
from graph import GraphBuilder, Reject

SYM_NAMES = ["N", "M", "T", "B"]
OPSETS = list(range(13, 22))  # relaxc reads 1..22; onnx 1.16's checker and reference know <= 21


def sym_env(rng):
    """Up to 3 symbolic dims; each takes two sizes (at least one pair differs)."""
    if rng.random() < 0.15:
        return {}
    k = int(rng.integers(1, 4))
    env = {}
    for name in SYM_NAMES[:k]:
        a = int(rng.integers(1, 6))
        b = int(rng.integers(1, 6))
        env[name] = (a, b)
    if all(a == b for a, b in env.values()):
        name = SYM_NAMES[0]
        a = env[name][0]
        env[name] = (a, a % 5 + 1)
    return env


def generate(rng, opset, max_nodes, ops=None, stats=None):
    """A GraphBuilder with 1..max_nodes nodes (None when no node could be built)."""
    gb = GraphBuilder(rng, opset, sym_env(rng))
    avail = ops or registry.available(opset)
    target = int(rng.integers(1, max_nodes + 1))
    tries = 0
    while len(gb.nodes) < target and tries < target * 10:
        tries += 1
        name = avail[int(rng.integers(len(avail)))]
        if registry.schema(name, opset) is None:
            continue
        snap = gb.snapshot()
        try:
            registry.BUILDERS[name](registry.Ctx(gb, name, opset))
        except Reject:
            gb.rollback(snap)
        except Exception as e:  # noqa: BLE001  a builder bug: counted, never fatal
            gb.rollback(snap)
            if stats is not None:
                key = f"{name}: {type(e).__name__}: {str(e)[:120]}"
                stats[key] = stats.get(key, 0) + 1
    return gb if gb.nodes else None


def graph_rng(seed, index):
    """The generator of graph `index` of a run with `seed` (graphs can be regenerated alone)."""
    return np.random.default_rng([seed, index])
