"""Suite ``construction`` (directed-mode graphs): what a user waits for before the first
result.

* case ``build``: ``Graph.from_edgelist`` of the spec's edge frame (on the device: cuDF when it
  imports, else pandas) against ``cugraph.Graph.from_cudf_edgelist`` of the same frame, median
  of ``repeat`` after a warm-up.  Checked: our stored edges are the frame's edges (both
  directions of an undirected graph), cuGraph's graph has our vertex count.
* case ``first call``: the first call of every registry algorithm in the process (its kernels
  compiled; ms), with the warm median, ``compile_ms`` = first - warm and the kernels compiled;
  checked: the first call's result agrees with a warm call's.
* case ``result frame``: ``io.to_frame`` of an n x k float32 block (part of every call).
"""

from __future__ import annotations

import numpy as np

from onyx_rapids import device, io, operators
from onyx_rapids.graph import Graph

from .. import catalog, graphs
from ..common import compare, free_memory, median, time_calls
from ..peers.cugraph import frame as device_frame
from .ablation import _agree, _result


def algorithms():
    return tuple(a for a, e in catalog.algorithms().items() if e.graph != "bipartite")


def _edge_keys(src, dst, span):
    return np.unique(np.asarray(src, dtype=np.int64) * span + np.asarray(dst, dtype=np.int64))


def measure(run, spec, g, stats) -> None:
    graph = spec.text
    if spec.kind != "parquet":
        cols, kw, _ = graphs.edge_frame(spec, undirected=False)
        df = device_frame(cols)
        ours = run.row(graph, "graph construction", "build", "from_edgelist", "ours", "ours")
        built = run.timed(ours, lambda: Graph.from_edgelist(df, "src", "dst", **kw))
        if built is not None:
            span = int(max(cols["src"].max(), cols["dst"].max())) + 1
            want = _edge_keys(cols["src"], cols["dst"], span)
            if not kw["directed"]:
                want = np.union1d(want, _edge_keys(cols["dst"], cols["src"], span))
            ids = device.to_host(built.vertices).astype(np.int64)
            have = _edge_keys(ids[device.to_host(built.edge_sources)],
                              ids[device.to_host(built.out_indices)], span)
            run.check(ours, compare("members", have, want, against="the edge frame"),
                      f"build {graph}")
        mod, label = run.peer("cugraph")
        peer = run.row(graph, "graph construction", "build", "from_cudf_edgelist", "cugraph",
                       "peer", label=label)
        if mod is None:
            peer["status"] = f"skipped: {label}"
        else:
            cg = mod._module()

            def build():
                G = cg.Graph(directed=kw["directed"])
                G.from_cudf_edgelist(df, source="src", destination="dst", edge_attr=kw[
                    "weight"], renumber=True)
                return G
            G = run.timed(peer, build, what="cugraph")
            if G is not None and built is not None:
                n = int(G.number_of_vertices())
                run.check(peer, {"against": "ours", "metric": "vertices", "value": n,
                                 "expected": built.n, "ok": n == built.n}, f"cuGraph {graph}")
        del df, cols, built
        free_memory()
    k = run.ks[0]
    und = None
    for name in run.algorithms:
        entry = catalog.get(name)
        h = g
        if entry.graph == "undirected" and g.directed:
            und = und or g.simple_undirected()
            h = und
        row = run.row(graph, name, "first call", "default", "ours", "ours", k=k,
                      params={"k": k})
        try:
            inputs = catalog.make_inputs(entry, h, k, {"k_core_k": 1})
            misses = operators.kernel_cache_info()["misses"]
            (first_frame, _), first, times = time_calls(
                lambda: catalog.call(entry, h, inputs), run.repeat)
            row.update(ms=first, first_call_ms=first, times_ms=times, repeats=len(times))
            row["params"].update(warm_ms=median(times), compile_ms=first - median(times),
                                 kernels_compiled=operators.kernel_cache_info()["misses"]
                                 - misses)
            warm, _ = catalog.call(entry, h, inputs)
            run.check(row, _agree(entry, _result(entry, first_frame, h, k),
                                  _result(entry, warm, h, k), "a warm call"), f"{name} first call")
            run.log(f"{name} on {graph}: first call {first:.1f} ms, warm {median(times):.1f} ms")
        except Exception as e:
            run.error(row, e, "ours")
        free_memory()
    if hasattr(io, "to_frame"):
        row = run.row(graph, "result frame", f"k={k}", "io.to_frame", "ours", "ours", k=k)
        block = device.xp.full((g.n, k), 1.0 / k, dtype=np.float32)
        out = run.timed(row, lambda: io.to_frame(g, {"x_*": block}))
        if out is not None:
            shape = (len(out), len(out.columns))
            run.check(row, {"against": "n x (k + 1)", "metric": "shape", "value": str(shape),
                            "ok": shape == (g.n, k + 1)}, f"result frame {graph}")
