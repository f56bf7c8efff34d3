"""Input kinds: every input an algorithm takes besides the graph (start vertices, label seeds,
per-vertex values, a potential matrix, a count), each kind declared once and serving every
entry point.

An algorithm declares its inputs in the registry (:class:`onyx_rapids.registry.Input`) with
one of the kind objects below; the kind then

* normalizes a user's value for the algorithm (``LABELS.normalize(g, labels, k)``, with the
  error messages that name the argument, the value and the fix), in the forms people hold
  (frames keyed by ``vertex`` or ``node``, Series and dicts keyed by vertex, ``(side, id)``
  on a bipartite graph),
* checks a value that needs no graph (:meth:`Kind.check`: a :class:`Number`'s range, which
  the registry runs on every call for the algorithms' numeric parameters too),
* parses the command line's text and gives its default (:func:`from_cli`), and
* generates fixed random inputs for the benchmarks (:func:`generate`)::

    >>> import onyx_rapids as onyx
    >>> onyx.registry.get("label_propagation").inputs[0].kind is LABELS
    True
    >>> LABELS.name
    'labels'

Kinds that several inputs share with different behaviour (PageRank's ``personalization`` is
a distribution, belief propagation's ``priors`` are positive) are objects of the same class
with other settings, or of a subclass; :data:`KINDS` holds the default object of each name.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import device, io, properties as props

__all__ = ["CliContext", "KINDS", "Kind", "LABELS", "MATRIX", "CLASSES", "COUNT", "CORE_ORDER",
           "FLAG", "FLOAT", "DISTRIBUTION", "POSITIVE_VALUES", "SIDES", "VALUES", "VERTEX",
           "VERTICES", "Count", "Flag", "Float", "Int", "Number", "from_cli", "generate", "kind",
           "starts", "wanted"]

#: Seed of the benchmarks' generated inputs.
SEED = 1

# Default start vertices and label seeds on the embedded karate graph: the two club leaders.
KARATE_LEADERS = (0, 33)


@dataclass(frozen=True)
class CliContext:
    """What a command-line default is drawn from: the algorithm's declaration, the graph, the
    embedded dataset's name (or None), ``--k`` (or None), ``--seed`` and the flag of a name."""

    spec: object
    g: object
    dataset: str | None
    k: int | None
    seed: int
    flag: Callable[[str], str]


class Kind:
    """An input kind; see the module docstring.  ``name`` is the kind the registry and
    ``onyx-rapids list`` show."""

    name = ""
    what = ""  # the command line's help: what the flag takes and its default
    metavar = "VALUE"  # what a missing value is called in the command line's error

    def help(self, optional: bool) -> str:
        return self.what

    def describe(self) -> str:
        """The legal values in words (``onyx-rapids list``, messages)."""
        return self.what

    def check(self, value, arg: str):
        """``value`` checked and normalized where a kind can do so alone (numbers: their
        range); kinds whose value needs the graph (frames, arrays) are normalized by the
        algorithm (:meth:`normalize`), and come back as they are here."""
        return value

    def parse(self, text: str, flag: str):
        """The value of ``flag``'s command-line ``text``."""
        raise NotImplementedError

    def default(self, ctx: CliContext, name: str, chosen: dict):
        """The command line's value when the flag is not given (``chosen``: the inputs
        built before this one)."""
        raise ValueError(f"{ctx.spec.name} needs {ctx.flag(name)} {self.metavar}")

    def generate(self, g, k: int, rng):
        """A benchmark input for ``g`` with k features (``rng``: the algorithm's stream)."""
        raise ValueError(f"no benchmark input of kind {self.name!r}")


def _chosen_of(ctx: CliContext, chosen: dict, cls) -> list:
    """The values already chosen of the inputs whose kind is a ``cls``, in declaration
    order."""
    return [chosen[i.name] for i in ctx.spec.inputs
            if isinstance(i.kind, cls) and i.name in chosen]


# ------------------------------------------------------------------------ start vertices


def starts(g, source, sources):
    """Internal ids (host int64) of ``source`` (one vertex) or ``sources`` (a list): exactly
    one of them, naming vertices of ``g`` (ValueError naming the argument otherwise).  On a
    bipartite graph a vertex is named ``(side, id)`` (:func:`side_starts`)."""
    if (source is None) == (sources is None):
        raise ValueError("give exactly one of source (one vertex) or sources (a list)")
    if g.sides is not None:
        return side_starts(g, [source] if sources is None else sources,
                           "source" if sources is None else "sources")
    named = _named_starts(g, source, sources)
    if len(named) == 0:
        raise ValueError("sources must name at least one vertex")
    try:
        return device.to_host(g.to_internal(named)).reshape(-1).astype(np.int64)
    except ValueError as e:
        raise ValueError(f"{'source' if sources is None else 'sources'}: {e}") from e


def _named_starts(g, source, sources):
    """The ids of ``source`` or ``sources`` as one flat sequence: on a labelled graph one
    ``source`` is one label, a tuple too (NetworkX's grid nodes ``(0, 1)``), and ``sources``
    a list of labels as given; else integer ids as an array."""
    if g.id_map.labels is not None:
        if sources is None:
            return _one_label(source)
        return [sources] if isinstance(sources, (str, bytes)) else sources
    return np.atleast_1d(np.asarray(source if sources is None else sources)).ravel()


def _is_pair(named) -> bool:
    return isinstance(named, (tuple, list, np.ndarray)) and len(named) == 2


def side_starts(g, named, arg: str) -> np.ndarray:
    """Internal ids (host int64) of the vertices ``named`` on the bipartite graph ``g``: a list
    of ``(side, id)`` pairs (side: its name, "left"/"right" or 0/1), or a frame of ``side``
    and ``vertex`` columns (as :func:`onyx_rapids.io.to_frame` writes them).

    >>> import pandas as pd, onyx_rapids as onyx
    >>> g = onyx.Graph.from_bipartite(pd.DataFrame({"user": [1, 2], "item": [1, 3]}),
    ...                               "user", "item")
    >>> side_starts(g, [("item", 1), ("user", 1)], "sources").tolist()
    [2, 0]
    """
    if io.is_frame(named):
        frame = io.to_pandas(named)
        if not {"side", "vertex"} <= set(frame.columns):
            raise ValueError(f"{arg}: a frame of vertices of a bipartite graph needs 'side' and "
                             f"'vertex' columns (it has {', '.join(map(str, frame.columns))})")
        named = list(zip(frame["side"], frame["vertex"]))
    named = list(named)
    if not named:
        raise ValueError(f"{arg} must name at least one vertex")
    left, right = g.side_names
    for pair in named:
        if not _is_pair(pair):
            shown = f"{arg}={pair!r}" if arg == "source" else f"{arg}: {pair!r}"
            raise ValueError(
                f"{shown}: this graph is bipartite ({left!r}, {right!r}), where an id may "
                f"name a vertex on each side; name the vertex with its side, e.g. "
                f"{arg}={_example(arg, (left, pair))} or {_example(arg, (right, pair))}")
    codes = np.array([_side_of(g, pair, arg) for pair in named])
    out = np.empty(len(named), dtype=np.int64)
    for code in (0, 1):
        at = np.flatnonzero(codes == code)
        if at.size:
            try:
                found = g.to_internal([named[j][1] for j in at], side=code)
            except (TypeError, ValueError) as e:
                raise type(e)(f"{arg}: {e}") from e
            out[at] = device.to_host(found)
    return out


def _side_of(g, pair, arg: str) -> int:
    """0 or 1: the side of a ``(side, id)`` pair naming a vertex of ``arg``."""
    try:
        return g.side_code(pair[0])
    except ValueError:
        left, right = g.side_names
        raise ValueError(f"{arg}: {tuple(pair)!r} names no side of this graph; a side is "
                         f"{left!r} or {right!r} (or 'left'/'right', 0/1)") from None


def _example(arg: str, pair) -> str:
    return repr(pair) if arg == "source" else repr([pair])


def _vertex_id(text: str, flag: str, g=None):
    """The vertex a command line's ``text`` names: an integer id, or on a graph whose ids are
    labels (a Parquet edge list of strings, say) the label ``text`` itself, or the integer it
    spells where that, not the text, is one of the graph's labels."""
    text = text.strip()
    labels = None if g is None else g.id_map.labels
    if labels is not None:
        if labels.codes(_one_label(text))[0] >= 0:
            return text
        try:
            number = int(text)
        except ValueError:
            return text
        return number if labels.codes(_one_label(number))[0] >= 0 else text
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{flag} {text!r} is not a vertex id (an integer: this graph's ids "
                         "are integers); the edge list's columns are named by --src and "
                         "--dst") from None


def _one_label(label):
    """A host object array of the one label ``label``."""
    out = np.empty(1, dtype=object)
    out[0] = label
    return out


def _default_vertices(g, dataset, many: bool) -> list:
    """Karate: the two club leaders (0 and 33; one: 0); elsewhere the highest-degree vertex
    (its original id: a label on a labelled graph)."""
    if dataset == "karate":
        return list(KARATE_LEADERS if many else KARATE_LEADERS[:1])
    degree = device.to_host(g.out_degree) + device.to_host(g.in_degree)
    return g.id_map.original(np.array([int(np.argmax(degree))])).tolist()


def id_order(g) -> np.ndarray:
    """Internal positions of the vertices in ascending id order (host): random inputs are
    drawn over it, so that a graph and its :meth:`~onyx_rapids.Graph.reorder` get the same
    vertices and values."""
    return device.to_host(g.id_order())


def in_internal_order(g, rows: np.ndarray) -> np.ndarray:
    """``rows`` given in ascending id order, put in the graph's internal order."""
    out = np.empty_like(rows)
    out[id_order(g)] = rows
    return out


def top_vertex(g):
    """The vertex of largest out-degree (smallest id among ties), as an original id (an int;
    on a labelled graph its label, the first in the labels' order among ties)."""
    if not g.n:
        return 0
    degree, codes = device.to_host(g.out_degree), device.to_host(g.vertices)
    code = int(codes[degree == degree.max()].min())
    if g.id_map.labels is None:
        return code
    return g.id_map.labels.take(np.array([code]))[0]


def with_out_edges(g) -> np.ndarray:
    """Internal positions, in ascending id order, of the vertices with out-edges (every
    vertex when none has)."""
    order = id_order(g)
    degree = device.to_host(g.out_degree)[order]
    return order[degree > 0] if (degree > 0).any() else order


class Vertex(Kind):
    """One vertex id; the benchmarks start from the vertex of largest out-degree."""

    name = "vertex"
    what = "a vertex id (default: 0 on karate, else the highest-degree vertex)"

    def parse(self, text, flag, g=None):
        return _vertex_id(text, flag, g)

    def default(self, ctx, name, chosen):
        return _default_vertices(ctx.g, ctx.dataset, many=False)[0]

    def generate(self, g, k, rng):
        return top_vertex(g)


class Vertices(Kind):
    """Vertex ids, one per feature column; the benchmarks draw k with out-edges."""

    name = "vertices"
    what = ("vertex ids, comma-separated (default: 0,33 on karate, else the highest-degree "
            "vertex)")

    def parse(self, text, flag, g=None):
        ids = [part for part in text.split(",") if part.strip()]
        if not ids:
            raise ValueError(f"{flag} {text!r}: give vertex ids separated by commas, e.g. "
                             f"{flag} 0,33")
        return [_vertex_id(part, flag, g) for part in ids]

    def default(self, ctx, name, chosen):
        return _default_vertices(ctx.g, ctx.dataset, many=True)

    def generate(self, g, k, rng):
        cand = with_out_edges(g)
        idx = rng.choice(cand, size=k, replace=len(cand) < k)
        ids = g.id_map.original(idx)
        return ids if g.id_map.labels is not None else ids.astype(np.int64)


# ------------------------------------------------------------------------------ tables


def read_table(path: str, flag: str):
    """A pandas frame from the Parquet file (or directory) ``path`` given to ``flag``."""
    import pandas as pd

    if not os.path.exists(path):
        raise ValueError(f"{flag} {path!r}: no such file")
    try:
        return pd.read_parquet(path)
    except Exception as e:  # pyarrow raises several kinds for a file that is not Parquet
        reason = " ".join(str(e).split()) or type(e).__name__
        raise ValueError(f"{flag} {path!r} is not a readable Parquet file ({reason})") from e


# -------------------------------------------------------------------------------- labels


def check_classes(classes, k):
    """Refuse label classes outside [0, k)."""
    if classes.size and (int(classes.min()) < 0 or int(classes.max()) >= k):
        raise ValueError(f"labels must be integer classes in [0, {k}), got values from "
                         f"{int(classes.min())} to {int(classes.max())}")


def one_hot_labels(xp, n, ids, classes, k):
    """lp^0 (n x P*k float32: one-hot rows for ``ids`` with ``classes`` (len(ids) x P, in
    [0, k)), 1/k elsewhere) and the labelled mask, as ``xp`` (NumPy or CuPy) arrays."""
    check_classes(classes, k)
    P = classes.shape[1]
    lp0 = xp.full((n, P * k), 1.0 / k, dtype=np.float32)
    lp0[ids] = 0.0
    for p in range(P):
        lp0[ids, p * k + classes[:, p]] = 1.0
    labelled = xp.zeros(n, dtype=bool)
    labelled[ids] = True
    return lp0, labelled


def labelled_rows(lp0, k):
    """The rows of a full lp^0 (n x P*k, non-negative) that are one-hot in every partition."""
    if bool((lp0 < 0).any()):
        raise ValueError("labels (lp^0) must be non-negative")
    rows = lp0.reshape(lp0.shape[0], lp0.shape[1] // k, k)
    one_hot = ((rows == 1).sum(axis=2) == 1) & ((rows == 0).sum(axis=2) == k - 1)
    return one_hot.all(axis=1)


def _classes(labels) -> int:
    """k of a labels frame: its largest class + 1 (2 when it is empty)."""
    values = labels.drop(columns="vertex").to_numpy()
    return int(values.max()) + 1 if values.size else 2


class Labels(Kind):
    """Seed labels: a frame of ``vertex`` (or ``node``) and ``label`` (or ``label_0``.. for P
    partitions) of classes in [0, k), a Series or dict of classes keyed by vertex (the
    labelled vertices only), or a full n x P*k lp^0 array."""

    name = "labels"
    what = ("a Parquet file of vertex,label seed labels (default on karate: the clubs of "
            "vertices 0 and 33)")

    def normalize(self, g, labels, k):
        """lp^0 (n x P*k), the labelled mask and P, on the device."""
        k = CLASSES.check(k, "k")
        xp = device.xp
        if io.is_keyed(labels):
            labels = io.from_mapping(labels, "labels", "label")
            names = io.label_columns(labels)
            ids, classes = io.read_vertex_frame(g, labels, names, name="labels", complete=False,
                                                dtype=np.int64)
            lp0, labelled = one_hot_labels(xp, g.n, ids, classes, k)
            return lp0, labelled, len(names)
        lp0 = g.vertex_property(labels, name="labels")
        if lp0.shape[1] % k:
            raise ValueError(f"labels has {lp0.shape[1]} columns, not a multiple of k={k}")
        return lp0, labelled_rows(lp0, k), lp0.shape[1] // k

    def on_partitions(self, graph, labels, k):
        """As :meth:`normalize` for a partitioned (Dask) graph, on the host:
        ``(None, (ids, classes), P)`` for a frame of labelled vertices (internal ids, classes
        len(ids) x P), else lp^0 (n x P*k) and the labelled mask."""
        k = CLASSES.check(k, "k")
        if io.is_keyed(labels):
            frame = io.keyed_pandas(labels, "labels", graph.vertices, "label")
            names = io.label_columns(frame)
            ids = graph.to_internal(frame["vertex"].to_numpy(), "labels['vertex']")
            if len(np.unique(ids)) != len(ids):
                raise ValueError("labels: a vertex is listed more than once")
            classes = np.stack([frame[c].to_numpy() for c in names], axis=1)
            if classes.dtype.kind not in "iu":
                raise ValueError(f"labels must be integer classes, got dtype {classes.dtype}")
            check_classes(classes, k)
            return None, (ids.astype(np.int64), classes.astype(np.int64)), len(names)
        n = graph.n
        lp0 = np.asarray(device.to_host(labels), dtype=np.float32)
        if lp0.ndim != 2 or lp0.shape[0] != n or lp0.shape[1] % k:
            raise ValueError(f"labels: an n x P*k array needs {n} rows and a multiple of k={k} "
                             f"columns, got shape {lp0.shape}")
        return lp0, labelled_rows(lp0, k), lp0.shape[1] // k

    def parse(self, text, flag):
        """A frame of vertex,label (or vertex,label_0,label_1,.. for several partitions):
        integer classes of the labelled vertices (the algorithm checks the values)."""
        labels = read_table(text, flag)
        if io.key_column(list(labels.columns)) is None or len(labels.columns) < 2:
            raise ValueError(f"{flag} {text!r} needs a 'vertex' (or 'node') column and a 'label' "
                             f"column (or "
                             f"label_0, label_1, ..); it has "
                             f"{', '.join(map(str, labels.columns))}")
        return labels

    def default(self, ctx, name, chosen):
        from . import datasets

        if ctx.dataset != "karate":
            raise ValueError(f"{ctx.spec.name} needs {ctx.flag(name)} PATH.parquet (a frame of "
                             "vertex,label seed labels); only the embedded karate graph has "
                             "default seeds")
        clubs = datasets.load_labels("karate")
        seeds = clubs[clubs["vertex"].isin(KARATE_LEADERS)]
        return seeds.rename(columns={"club": "label"})[["vertex", "label"]].reset_index(
            drop=True)

    def generate(self, g, k, rng):
        return lp_labels(g, k)


def lp_labels(g, k: int, seed: int = SEED, fraction: float = 0.01):
    """``vertex``, ``label``: a fixed random 1% of the vertices, each with a class in [0, k)."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    count = max(1, int(round(g.n * fraction)))
    idx = id_order(g)[np.sort(rng.choice(g.n, size=count, replace=False))]
    ids = g.id_map.original(idx)
    return pd.DataFrame({"vertex": ids if g.id_map.labels is not None else ids.astype(np.int64),
                         "label": rng.integers(0, k, size=count, dtype=np.int64)})


# ------------------------------------------------------------------------ vertex values


def _width(value) -> int | None:
    """Columns of a vertex_values input (a frame keyed by vertex or an n x k array)."""
    if hasattr(value, "columns"):
        return len(value.columns) - (io.key_column(list(value.columns)) is not None)
    shape = getattr(value, "shape", None)
    if shape is not None:
        return 1 if len(shape) == 1 else shape[1]
    return None


class VertexValues(Kind):
    """Values per vertex: a frame keyed by ``vertex`` (or ``node``, or an id index), a Series
    or dict keyed by vertex (``{vertex: [features]}`` for several columns), or an n x k array
    in ``Graph.vertices`` order.  The benchmarks draw ``offset`` + U[0, 1)."""

    name = "vertex_values"

    def __init__(self, offset: float = 0.0):
        self.offset = offset

    def help(self, optional):
        return "a Parquet file keyed by 'vertex', one column per feature" + (
            " (optional)" if optional else " (default: deterministic random n x K values, "
                                           "--k, --seed)")

    def normalize(self, g, values, name):
        """An n x k float32 property in the graph's vertex order."""
        return g.vertex_property(values, name=name)

    def on_partitions(self, graph, values, name):
        """An n x k float32 host array in ``graph.vertices`` order of a partitioned (Dask)
        graph, from an array or a frame keyed by ``vertex`` (every vertex once)."""
        if io.is_keyed(values):
            frame = io.keyed_pandas(values, name, graph.vertices)
            ids = graph.to_internal(frame["vertex"].to_numpy(), f"{name}['vertex']")
            if len(np.unique(ids)) != graph.n or len(ids) != graph.n:
                raise ValueError(f"{name}: every vertex once ({graph.n}), got {len(ids)} rows "
                                 f"for {len(np.unique(ids))} vertices")
            out = np.empty((graph.n, frame.shape[1] - 1), dtype=np.float32)
            out[ids] = frame.drop(columns="vertex").to_numpy(dtype=np.float32)
            return out
        out = np.asarray(device.to_host(values), dtype=np.float32)
        if out.ndim == 1:
            out = out.reshape(-1, 1)
        if out.ndim != 2 or out.shape[0] != graph.n:
            raise ValueError(f"{name}: {graph.n} rows (one per vertex) expected, got shape "
                             f"{out.shape}")
        return out

    def parse(self, text, flag):
        values = read_table(text, flag)
        if io.key_column(list(values.columns)) is None:
            raise ValueError(f"{flag} {text!r} needs a 'vertex' (or 'node') column (one row per "
                             "vertex) "
                             f"and one column per feature; it has "
                             f"{', '.join(map(str, values.columns))}")
        return values

    def default(self, ctx, name, chosen):
        k = ctx.k if ctx.k is not None else _default_width(ctx.spec, ctx.g)
        if k < 1:
            raise ValueError(f"--k {k}: the number of columns of the default {ctx.flag(name)} "
                             "must be at least 1")
        rng = np.random.default_rng(ctx.seed)
        # positive values (priors must be), in the graph's vertex order
        return (0.1 + 0.9 * rng.random((ctx.g.n, k))).astype(np.float32)

    def generate(self, g, k, rng):
        drawn = rng.random((g.n, k), dtype=np.float32)
        if self.offset:
            drawn = self.offset + drawn
        rows = in_internal_order(g, drawn)
        return device.asarray(np.ascontiguousarray(rows, dtype=np.float32))


def _default_width(spec, g) -> int:
    """Columns of a generated vertex_values input without --k: one per weight column where the
    algorithm requires weights (multi-manifold ranking ranks one manifold per weight column),
    else 2."""
    if spec.weights == "required" and g.weight_names:
        return len(g.weight_names)
    return 2


class Distribution(VertexValues):
    """A teleport distribution (PageRank's ``personalization``): one non-negative value per
    vertex, normalized to sum 1; vertices a frame, Series or dict (NetworkX's
    ``personalization={node: value}``) leaves out get 0.

    Read once (:meth:`read`), then either one vertex (:meth:`one_vertex`: the distribution is
    that vertex's one-hot teleport, whatever form named it) or an n x 1 column
    (:meth:`column`); :meth:`normalize` is both steps to the column."""

    def read(self, g, values, name):
        """``(ids, rows)``: the internal ids and values (len(ids) x k) of the vertices a frame,
        Series or dict keyed by vertex names, or ``(None, t)`` with ``t`` the n x k property
        of an array."""
        if io.is_keyed(values):  # a frame, Series or dict keyed by vertex; others get 0
            return io.read_vertex_frame(g, values, name=name, complete=False)
        return None, g.vertex_property(values, name=name)

    def teleport(self, g, values, name):
        """``(vertex, None)`` when ``values`` is one vertex's one-hot teleport (the internal
        id), else ``(None, column)`` with the n x 1 distribution (:meth:`column`).

        A one-entry dict, one-row frame or one-element Series of a positive value is looked
        up on the host like a ``source`` (no device work, as ``personalized_pagerank``'s set-up);
        anything else is read once (:meth:`read`) and checked in full."""
        vertex = _one_entry(g, values)
        if vertex is not None:
            return vertex, None
        read = self.read(g, values, name)
        vertex = self.one_vertex(read)
        return (vertex, None) if vertex is not None else (None, self.column(g, read, name))

    @staticmethod
    def one_vertex(read):
        """The internal id of the one vertex a :meth:`read` of vertices (not an array) gives
        a positive value, all others 0 (a one-key dict, a one-row frame): the distribution
        is then e_v; None otherwise (:meth:`column` takes it, refusing what it must)."""
        ids, rows = read
        if ids is None or rows.shape[1] != 1:
            return None
        values, xp = rows[:, 0], device.xp
        positive = (values > 0) & xp.isfinite(values)
        count, legal = (int(c) for c in device.to_host(xp.stack(
            [positive.sum(), ((values == 0) | positive).all()])))
        if count != 1 or not legal:
            return None
        return int(device.to_host(ids[xp.argmax(positive)]))

    def column(self, g, read, name):
        """The distribution of a :meth:`read` as an n x 1 property summing to 1."""
        ids, t = read
        if ids is not None:
            given, t = t, props.vertex_property(g, t.shape[1])
            t[ids] = given
        if t.shape[1] != 1:
            raise ValueError(f"{name}: one value column per vertex, got {t.shape[1]}")
        xp = device.xp
        if not bool(xp.isfinite(t).all()) or bool((t < 0).any()):
            raise ValueError(f"{name}: values must be finite and non-negative")
        total = float(t.astype(np.float64).sum())
        if not total > 0:
            raise ValueError(f"{name}: values must not all be zero")
        return (t / total).astype(np.float32)

    def normalize(self, g, values, name):
        """The distribution as an n x 1 property summing to 1."""
        return self.column(g, self.read(g, values, name), name)


def _one_entry(g, values):
    """The internal id of the one vertex a host dict, pandas Series or frame of one entry gives
    a positive finite value; None for anything else (bipartite graphs, positional indexes,
    several entries, unknown ids: the full read takes them and raises what it must)."""
    if g.sides is not None:
        return None
    kind = type(values).__name__
    if isinstance(values, dict) and len(values) == 1:
        (key, value), = values.items()
    elif kind == "Series" and type(values).__module__.startswith("pandas") and len(values) == 1:
        if io.positional_index(values.index):  # the full read decides what it means
            return None
        key, value = values.index[0], values.iloc[0]
    elif kind == "DataFrame" and type(values).__module__.startswith("pandas") \
            and values.shape == (1, 2) and list(values.columns).count("vertex") \
            + list(values.columns).count("node") == 1:
        column = "vertex" if "vertex" in values.columns else "node"
        key, value = values[column].iloc[0], values.drop(columns=column).iloc[0, 0]
    else:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)) \
            or not (np.isfinite(value) and value > 0):
        return None
    try:
        return int(starts(g, key, None)[0])
    except (ValueError, TypeError):
        return None


class Sides(VertexValues):
    """The two sides of a bipartite graph: 0 or 1 per vertex, every edge joining both."""

    def normalize(self, g, sides, name):
        """The user's 0/1 sides (aligned by vertex id, int8 on the host), checked against
        every edge."""
        side = device.to_host(g.vertex_property(sides, name=name))
        if side.shape[1] != 1 or not np.isin(side, (0, 1)).all():
            raise ValueError(f"{name} must hold one value, 0 or 1, for each of the {g.n} "
                             "vertices")
        side = side[:, 0].astype(np.int8)
        src = device.to_host(g.edge_sources)
        dst = device.to_host(g.out_indices)
        same = np.flatnonzero(side[src] == side[dst])
        if same.size:
            raise ValueError(f"{name}: every edge must join side 0 and side 1, but "
                             f"{g._describe_edges(device.asarray(same))} join vertices of one "
                             f"side; fix {name}, or omit it to 2-colour the graph")
        return side


# ------------------------------------------------------------------------------ matrices


def _homophily(k: int):
    """A k x k potential that favours equal states: 0.9 on the diagonal, 0.1/(k-1) elsewhere."""
    if k == 1:
        return np.ones((1, 1))
    return np.where(np.eye(k, dtype=bool), 0.9, 0.1 / (k - 1))


class Matrix(Kind):
    """A k x k matrix (belief propagation's potential: positive and symmetric)."""

    name = "matrix"
    what = ("a k x k matrix: '0.9,0.1;0.1,0.9', a .npy or a Parquet file (default: 0.9 on "
            "the diagonal)")

    def normalize(self, matrix, k, name, of):
        """A finite, positive, symmetric k x k float64 host matrix (``of``: where k is from)."""
        if hasattr(matrix, "to_numpy"):  # a pandas / cuDF frame
            matrix = matrix.to_numpy()
        try:
            psi = np.asarray(device.to_host(matrix), dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{name} must be a k x k numeric matrix, got "
                            f"{type(matrix).__name__}: {e}") from e
        if psi.shape != (k, k):
            raise ValueError(f"{name} must be {k} x {k} (k from {of}), got shape {psi.shape}")
        if not np.isfinite(psi).all() or (psi <= 0).any():
            raise ValueError(f"{name} must be finite and positive")
        if not np.array_equal(psi, psi.T):
            raise ValueError(f"{name} must be symmetric (Psi == Psi^T)")
        return psi

    def parse(self, text, flag):
        """Inline rows ``0.9,0.1;0.1,0.9``, a .npy file or a Parquet file whose columns are
        the matrix's columns."""
        if os.path.exists(text):
            if text.endswith(".npy"):
                return np.load(text, allow_pickle=False)
            return read_table(text, flag).to_numpy(dtype=np.float64)
        try:
            rows = [[float(x) for x in row.split(",")] for row in text.split(";")
                    if row.strip()]
            return np.array(rows, dtype=np.float64)
        except ValueError:
            raise ValueError(f"{flag} {text!r}: give rows separated by ';' and values by ',' "
                             f"(e.g. {flag} '0.9,0.1;0.1,0.9'), a .npy file or a Parquet "
                             "file") from None

    def default(self, ctx, name, chosen):
        widths = [_width(v) for v in _chosen_of(ctx, chosen, VertexValues)]
        width = next((w for w in widths if w), None)  # k of the vertex values
        return _homophily(width or (ctx.k if ctx.k is not None else 2))

    def generate(self, g, k, rng):
        return np.full((k, k), 0.1) + 0.8 * np.eye(k)


# -------------------------------------------------------------------------------- numbers


def _bound(x) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


class Number(Kind):
    """A number in a range: an algorithm's parameter (``alpha``, ``tol``, ``max_iter``,
    ``delta``...) or a count input (``k``).  :meth:`check` is the one validation of such a
    value, wherever it comes from (the registry runs it on every call; the command line on
    ``--param``): bools and strings are refused, integers must be integral, floats finite,
    and the range is ``low``..``high`` (``low_open`` / ``high_open``: the bound itself is
    excluded); ``optional`` accepts None; ``meaning`` is said after the name::

        >>> Float(0, 1, low_open=True, high_open=True).check(0.5, "alpha")
        0.5
        >>> Float(0, 1, low_open=True, high_open=True).check("0.85", "alpha")
        Traceback (most recent call last):
        ...
        ValueError: alpha must be a number in (0, 1), got '0.85' (a str)
    """

    integer = False

    def __init__(self, low=None, high=None, *, low_open=False, high_open=False,
                 optional=False, meaning=""):
        self.low, self.high, self.low_open, self.high_open = low, high, low_open, high_open
        self.optional, self.meaning = optional, meaning

    def describe(self) -> str:
        """The legal values in words: ``a number in (0, 1)``, ``a positive integer``..."""
        noun = "integer" if self.integer else "number"
        low, high = self.low, self.high
        if low is not None and high is not None:
            text = (f"{'an' if self.integer else 'a'} {noun} in {'(' if self.low_open else '['}"
                    f"{_bound(low)}, {_bound(high)}{')' if self.high_open else ']'}")
        elif low == 0 or (self.integer and low == 1 and not self.low_open):
            text = f"a {'positive' if self.low_open or low == 1 else 'non-negative'} " \
                   f"{'' if self.integer else 'finite '}{noun}"
        elif low is not None:
            text = f"a {'' if self.integer else 'finite '}{noun} {'>' if self.low_open else '>='} " \
                   f"{_bound(low)}"
        else:
            text = f"{'an' if self.integer else 'a finite'} {noun}"
        return text + (" or None" if self.optional else "")

    def _value(self, value):
        """``value`` as an int / float, or None when it is not one (bools, strings, NaN,
        infinities, fractional values of an integer)."""
        if isinstance(value, (bool, np.bool_)) or \
                not isinstance(value, (int, float, np.integer, np.floating)):
            return None
        if not np.isfinite(value):
            return None
        if self.integer:
            return int(value) if float(value).is_integer() else None
        return float(value)

    def _in_range(self, x) -> bool:
        low, high = self.low, self.high
        return ((low is None or (x > low if self.low_open else x >= low))
                and (high is None or (x < high if self.high_open else x <= high)))

    def check(self, value, arg: str):
        """``value`` as an int (float) in range, or ValueError naming ``arg``, the legal
        values and the value."""
        if value is None and self.optional:
            return None
        x = self._value(value)
        if x is None or not self._in_range(x):
            named = f"{arg} ({self.meaning})" if self.meaning else arg
            kind = "" if value is None or isinstance(value, (int, float, np.number)) \
                else f" (a {type(value).__name__})"
            raise ValueError(f"{named} must be {self.describe()}, got {value!r}{kind}")
        return x

    def parse(self, text, flag):
        text = text.strip()
        if self.optional and text.lower() in ("none", "null"):
            return None
        try:
            return int(text) if self.integer else float(text)
        except ValueError:
            raise ValueError(f"{flag} {text!r} is not {self.describe()}") from None


class Int(Number):
    """An integer; ``benchmark``: the benchmarks' value (None: k)."""

    name = "int"
    what = "an integer"
    metavar = "N"
    integer = True

    def __init__(self, low=None, high=None, *, benchmark: int | None = None, **bounds):
        super().__init__(low, high, **bounds)
        self.benchmark = benchmark

    def generate(self, g, k, rng):
        return k if self.benchmark is None else self.benchmark


class Count(Int):
    """An algorithm's k (classes, factors, core order): ``--k``, else the classes of the
    labels given, else 2."""

    def default(self, ctx, name, chosen):
        if ctx.k is not None:
            return ctx.k
        labels = _chosen_of(ctx, chosen, Labels)
        return _classes(labels[0]) if labels else 2


class Float(Number):
    """A number."""

    name = "float"
    what = "a number"
    metavar = "X"


class Flag(Kind):
    """True or False (``clamp``): numbers are refused, not read as truth values."""

    name = "bool"
    what = "true or false"
    metavar = "BOOL"

    def check(self, value, arg: str):
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{arg} must be True or False, got {value!r}")
        return bool(value)

    def parse(self, text, flag):
        lowered = text.strip().lower()
        if lowered not in ("true", "false"):
            raise ValueError(f"{flag} {text!r} is not true or false")
        return lowered == "true"


VERTEX, VERTICES, LABELS = Vertex(), Vertices(), Labels()
VALUES, POSITIVE_VALUES = VertexValues(), VertexValues(offset=0.5)
DISTRIBUTION, SIDES = Distribution(), Sides()
MATRIX, FLOAT = Matrix(), Float()
#: Label propagation's k; :class:`Count` objects of other ranges: ALS's factors, k_core's order.
CLASSES = Count(1, meaning="classes per partition")
COUNT, CORE_ORDER = Count(1), Count(0, benchmark=1)
FLAG = Flag()

#: The default object of each kind name.
KINDS = {k.name: k for k in (VERTEX, VERTICES, VALUES, LABELS, MATRIX, Int(), FLOAT)}


def kind(value) -> Kind:
    """``value`` if a :class:`Kind`, else the default kind of that name (ValueError)."""
    if isinstance(value, Kind):
        return value
    if value not in KINDS:
        raise ValueError(f"Input kind must be one of {tuple(KINDS)}, got {value!r}")
    return KINDS[value]


# ------------------------------------------------------------------------- entry points


def wanted(spec, given) -> list:
    """The inputs of ``spec`` a run passes: those ``given`` (names), the required ones, and one
    start vertex where the algorithm takes one of several optional ones (bfs, sssp) and none
    is given (one optional list alone, betweenness's sources, defaults to every vertex)."""
    starts_ = [i for i in spec.inputs if isinstance(i.kind, (Vertex, Vertices))]
    fill = (len(starts_) > 1 and not any(i.name in given for i in starts_)
            and not any(i.required for i in starts_))
    return [i for i in spec.inputs
            if i.name in given or i.required or (fill and i is starts_[0])]


def from_cli(spec, texts: dict, ctx: CliContext) -> dict:
    """The keyword arguments for ``spec``'s declared inputs from their flags' ``texts``
    (name -> text, or None when not given): parsed, else the kinds' defaults (``--k``, in
    ``ctx.k``, is a given k input's default)."""
    out = {}
    given = {name for name, text in texts.items() if text is not None}
    for inp in wanted(spec, given | ({"k"} if ctx.k is not None else set())):
        text = texts.get(inp.name)
        parse = (functools.partial(inp.kind.parse, g=ctx.g)  # ids: integers or labels
                 if isinstance(inp.kind, (Vertex, Vertices)) else inp.kind.parse)
        out[inp.name] = (parse(text, ctx.flag(inp.name)) if text is not None
                         else inp.kind.default(ctx, inp.name, out))
    return out


def generate(spec, g, k: int, rng, given: dict) -> dict:
    """Benchmark inputs for ``spec`` on ``g`` with k features: ``given`` (name -> value)
    where it names an input, else generated from ``rng`` in declaration order."""
    return {inp.name: given[inp.name] if inp.name in given else inp.kind.generate(g, k, rng)
            for inp in wanted(spec, given)}
