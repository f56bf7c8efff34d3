"""Small test graphs (multigraphs on purpose: self-loops and parallel edges exercise the
operators), with their edges in internal ids."""

from __future__ import annotations

import numpy as np
import pandas as pd

from onyx_rapids import Graph, device


def random_directed(n=14, m=40, seed=0, weights=0):
    """Random ids (negative and large), multi-edges, self-loops and dangling vertices."""
    rng = np.random.default_rng(seed)
    ids = np.sort(rng.choice(np.arange(-50, 10**12, 7919), size=n, replace=False))
    src = rng.integers(0, n - 3, m)  # the last three vertices have no out-edges
    dst = rng.integers(0, n, m)
    src[:2], dst[:2] = 1, 1  # a self-loop, twice: a multi-edge too
    cols = {"src": ids[src], "dst": ids[dst]}
    for j in range(weights):
        cols[f"w{j}"] = (rng.random(m) + 0.1).astype(np.float32)
    return pd.DataFrame(cols)


def random_undirected(n=12, m=20, seed=1):
    """An undirected graph with an isolated vertex (added through vertices=)."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n - 1, m)
    dst = rng.integers(0, n - 1, m)
    return pd.DataFrame({"src": src, "dst": dst}), [n - 1]


def csr_edges(g):
    """(src, dst) of the graph's stored edges in CSR order, internal ids, NumPy."""
    offsets = device.to_host(g.out_offsets).astype(np.int64)
    dst = device.to_host(g.out_indices).astype(np.int64)
    src = np.repeat(np.arange(g.n), np.diff(offsets))
    return src, dst


def build(kind, seed=0, weights=0):
    if kind == "directed":
        df = random_directed(seed=seed, weights=weights)
        w = [f"w{j}" for j in range(weights)] or None
        return Graph.from_edgelist(df, "src", "dst", weight=w, multigraph=True, directed=True)
    df, extra = random_undirected(seed=seed)
    return Graph.from_edgelist(df, "src", "dst", directed=False, vertices=extra, multigraph=True)


def predecessor_ids(g, predecessor):
    """Internal ids of a predecessor column (nullable Int64), -1 where it is null."""
    valid = predecessor.notna().to_numpy()
    ids = predecessor.to_numpy(dtype=np.int64, na_value=0)
    out = np.full(ids.shape, -1, dtype=np.int64)
    if valid.any():
        out[valid] = device.to_host(g.to_internal(ids[valid]))
    return out


def pandas(frame):
    """A result frame as pandas (cuDF's on a GPU machine)."""
    return getattr(frame, "to_pandas", lambda: frame)()


def assert_refused(call, needles):
    """``call(g)`` on the path 0 - 1 - 2 raises a ValueError whose message holds every one of
    ``needles`` (the refusal tests of the approximation knobs)."""
    import pytest

    g = Graph.from_edgelist(pd.DataFrame({"src": [0, 1], "dst": [1, 2]}))
    with pytest.raises(ValueError) as e:
        call(g)
    for needle in needles:
        assert needle in str(e.value)


def run_cli(capsys, *argv):
    """``onyx-rapids argv`` in-process: (exit code, stdout, stderr)."""
    from onyx_rapids import cli

    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def fail_configuration(monkeypatch, config: dict, message: str) -> None:
    """Make every tuning call of ``config`` raise RuntimeError(``message``), as a kernel that
    cannot launch does (tests of tuning.measure and the tuning suite)."""
    from onyx_rapids import tuning

    options = tuning.call_options

    def failing(name, chosen, *a, **k):
        if chosen == config:
            raise RuntimeError(message)
        return options(name, chosen, *a, **k)
    monkeypatch.setattr(tuning, "call_options", failing)


def watch_algorithm(monkeypatch, name: str, before) -> None:
    """Make every call of algorithm ``name`` through the registry (as tuning.measure calls it)
    run ``before(kwargs)`` first, then the algorithm itself."""
    import dataclasses

    from onyx_rapids import registry

    get = registry.get
    spec = get(name)

    def watched(*a, **k):
        before(k)
        return spec.function(*a, **k)
    spied = dataclasses.replace(spec, function=watched)
    monkeypatch.setattr(registry, "get", lambda n: spied if n == spec.name else get(n))
