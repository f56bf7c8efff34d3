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
  Beside it, in the same run: case ``pandas k=K`` times the pandas result frame of typical
  result columns (``vertex`` int64, an n x k float32 block, a nullable int64 ``predecessor``)
  through the pandas path even where cuDF is installed, and case ``device-to-host k=K`` one
  plain copy of as many bytes from the device into a pinned host array (CuPy; a NumPy host
  copy under the simulator), median of at least 5.  The pandas row reports bytes, GB/s and
  the fraction of the copy's bandwidth that it reaches (goal: at least 0.5); its check
  compares the frame's values, nulls and dtypes with the device arrays.
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
    return graphs.unique(np.asarray(src, dtype=np.int64) * span + np.asarray(dst, dtype=np.int64))


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
                back = _edge_keys(cols["dst"], cols["src"], span)
                want = graphs.unique(np.concatenate([want, back]))
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
        del block, out
        if hasattr(io, "_to_frame"):
            _pandas_frame_rows(run, graph, g, k)
        free_memory()


def _typical_columns(g, k):
    """Result columns as the algorithms return them, on the device: an n x k float32 block
    of distinct values and a bfs-like predecessor (original ids, null at every 7th vertex)."""
    xp = device.xp
    ids = xp.arange(g.n, dtype=np.int64)
    block = (xp.arange(g.n * k, dtype=np.float32) * np.float32(0.5)).reshape(g.n, k)
    return block, g.vertices[(ids + 1) % g.n], ids % 7 != 0


def _copy_bandwidth(run, graph, k, nbytes, repeat):
    """Row: one plain device-to-host copy of ``nbytes`` into a pinned host array (a NumPy host
    copy under the simulator); its median ms, or None."""
    xp, gpu = device.xp, device.BACKEND == "gpu"
    label = (f"cupy {xp.__version__}: ndarray.get(out=pinned array)" if gpu
             else "numpy host copy (no GPU: a stand-in)")
    row = run.row(graph, "result frame", f"device-to-host k={k}", "plain copy",
                  "cupy" if gpu else "numpy", "peer", k=k, label=label,
                  params={"bytes": nbytes})
    try:
        words = xp.arange(-(-nbytes // 8), dtype=np.int64)
        src = words.view(np.uint8)[:nbytes]
        if gpu:
            import cupyx

            dst = cupyx.empty_pinned((nbytes,), dtype=np.uint8)
            copy = lambda: src.get(out=dst)  # noqa: E731
        else:
            dst = np.empty(nbytes, dtype=np.uint8)
            copy = lambda: np.copyto(dst, src)  # noqa: E731
    except Exception as e:
        run.error(row, e, "the copy")
        return None
    run.timed(row, copy, repeat=repeat)
    if row["ms"] is None:
        return None
    row["params"]["gb_s"] = nbytes / (row["ms"] * 1e6)
    bad = int((device.to_host(src) != dst).sum())
    run.check(row, {"against": "the device bytes", "metric": "mismatches", "value": bad,
                    "ok": bad == 0}, f"device-to-host copy {graph}")
    return row["ms"]


def _pandas_frame_rows(run, graph, g, k):
    """Rows ``pandas k=K`` (the pandas result frame of typical columns, forced where cuDF is
    installed) and ``device-to-host k=K`` (a plain copy of the same bytes)."""
    repeat = max(run.repeat, 5)
    block, pred, valid = _typical_columns(g, k)
    columns = {"x_*": block, "predecessor": (pred, valid)}
    nbytes = int(g.vertices.nbytes + block.nbytes + g.n * 8 + valid.nbytes)
    copy_ms = _copy_bandwidth(run, graph, k, nbytes, repeat)
    row = run.row(graph, "result frame", f"pandas k={k}", "pandas path", "ours", "ours", k=k,
                  params={"bytes": nbytes, "columns": ["vertex", f"x_0..x_{k - 1}",
                                                      "predecessor"]})
    out = run.timed(row, lambda: io._to_frame(g, columns, pandas=True), repeat=repeat)
    if out is None:
        return
    record = {"against": "the device arrays", "metric": "mismatches", "bytes": nbytes}
    record.update(_frame_mismatches(out, g, block, pred, valid))
    if row["ms"]:
        facts = {"gb_s": nbytes / (row["ms"] * 1e6)}
        if copy_ms:
            facts.update(copy_ms=copy_ms, copy_gb_s=nbytes / (copy_ms * 1e6),
                         fraction_of_copy=copy_ms / row["ms"])
            facts["goal_met"] = facts["fraction_of_copy"] >= 0.5
        row["params"].update(facts)
        record.update({key: facts[key] for key in ("gb_s", "copy_gb_s", "fraction_of_copy")
                       if key in facts})
    run.check(row, record, f"pandas result frame {graph}")
    run.log(f"pandas result frame on {graph}: {nbytes / 1e6:.1f} MB in "
            f"{row['ms']:.2f} ms ({row['params'].get('gb_s', 0):.2f} GB/s), plain copy "
            f"{copy_ms or float('nan'):.2f} ms: {row['params'].get('fraction_of_copy', 0):.2f}"
            " of its bandwidth")


def _frame_mismatches(frame, g, block, pred, valid) -> dict:
    """Values, nulls and dtypes of a pandas result frame against the device arrays."""
    want = {"vertex": "int64", **{f"x_{j}": "float32" for j in range(block.shape[1])},
            "predecessor": "Int64"}
    have = {name: str(frame[name].dtype) for name in frame.columns}
    block, valid = device.to_host(block), device.to_host(valid)
    pred = device.to_host(pred)
    bad = int((frame["vertex"].to_numpy() != device.to_host(g.vertices)).sum())
    for j in range(block.shape[1]):
        bad += int((frame[f"x_{j}"].to_numpy() != block[:, j]).sum())
    column = frame["predecessor"]
    bad += int((column.isna().to_numpy() != ~valid).sum())
    bad += int((column.to_numpy(dtype=np.int64, na_value=0)[valid] != pred[valid]).sum())
    wrong = sorted(name for name in set(want) | set(have) if want.get(name) != have.get(name))
    return {"value": bad, "wrong_dtypes": ", ".join(wrong) or None,
            "ok": bad == 0 and not wrong and list(frame.columns) == list(want)}
