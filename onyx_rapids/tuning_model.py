"""Input-sensitive autotuning models (issue 38, step 4): which configuration of an algorithm
to run on a graph, predicted from the graph's attributes.

The method follows the input-sensitivity study: a training table of measured times
(:func:`onyx_rapids.tuning.measure`: one row per graph, algorithm and configuration, each
graph of an algorithm measured on the same pool of configurations) is turned, per algorithm,
into

* ``most_frequent``: the configuration fastest on most training graphs (one choice for all);
* a decision tree per graph kind (``directed``, ``undirected``, ``bipartite``) from the
  attributes (:data:`FEATURES`) to the fastest configuration;
* a throughput regressor from (attributes, configuration) to the slowdown ``log(ms / best)``
  against the graph's fastest configuration, which ranks the whole pool for any graph.  A
  gradient-boosting model and a multi-layer perceptron are both trained; the one whose top-1
  pick reaches the larger share of the peak (``best_ms / ms_of_pick``) over leave-one-graph-out
  folds of the training graphs is kept, and both scores are recorded;
* ``auto``: the strategy ``tuning="auto"`` follows (:meth:`Model.choices`), whichever of the
  defaults, the most frequent best, the tree and the regressor's top-1 reaches the larger
  share of the peak over the same leave-one-graph-out folds (ties go to the simpler one, in
  that order): measured times are noisy and a model that cannot beat the defaults on graphs
  it has not seen should not replace them.

Training needs scikit-learn (the ``tune`` extra); a trained :class:`Model` keeps only plain
arrays (the trees' nodes, the boosting stages, the perceptron's weights), so it is saved as one
JSON file and ranks configurations with NumPy alone, equal to scikit-learn's predictions::

    >>> from onyx_rapids import tuning_model
    >>> model = tuning_model.train("training.parquet", seed=0)          # doctest: +SKIP
    >>> model.save("model.json")                                        # doctest: +SKIP
    >>> model = tuning_model.load_model("model.json")                   # doctest: +SKIP
    >>> best = model.choices("pagerank", g.attributes())[0]             # doctest: +SKIP
    >>> onyx.pagerank(g, **best)                                        # doctest: +SKIP
    >>> tuning_model.evaluate(model, "held_out.parquet")                # doctest: +SKIP

:func:`evaluate` scores a model on a held-out table (graphs it was not trained on): the share
of each graph's measured peak reached by the defaults, ``most_frequent``, the tree, and the
regressor's top-1 and ``tuning="auto"``'s first and first three choices.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import pathlib

import numpy as np

from .attributes import STRUCTURAL

__all__ = ["FEATURES", "LOG_FEATURES", "KINDS", "STRATEGIES", "FILL", "FORMAT",
           "FORMAT_VERSION", "MODEL_ENV", "Model", "ModelError", "attribute_vector",
           "default_model_path", "evaluate", "feature_names", "load_model", "read_table",
           "train"]

FORMAT, FORMAT_VERSION = "onyx_rapids.tuning-model", 1
#: Environment variable naming the model file :func:`default_model_path` returns.
MODEL_ENV = "ONYX_RAPIDS_TUNING_MODEL"

_DEGREE = ("mean", "max", "std", "skew", "gini", "p50", "p90", "p99", "top1_share",
           "balanced_inequality")
#: The numeric attributes the models read, in this order (then ``weighted``, ``multigraph``
#: as 0/1 and ``kind`` one-hot: :func:`feature_names`).
FEATURES = ("n", "m", "edges", "density", "volume", "self_loops", "isolated_share",
            "zero_in_share", "zero_out_share",
            *(f"{side}_degree_{key}" for side in ("out", "in") for key in _DEGREE),
            "left_n", "left_degree_mean", "left_degree_max",
            "right_n", "right_degree_mean", "right_degree_max",
            "degree_assortativity", "diameter_estimate", "reached_share", "wedges",
            "transitivity_estimate", "average_clustering_estimate",
            "weight_mean", "weight_std", "weight_min", "weight_max")
#: Features read through log1p: counts and degree scales, which span orders of magnitude.
LOG_FEATURES = frozenset(
    ("n", "m", "edges", "volume", "self_loops", "wedges", "diameter_estimate", "left_n",
     "right_n", "left_degree_mean", "left_degree_max", "right_degree_mean", "right_degree_max",
     *(f"{side}_degree_{key}" for side in ("out", "in")
       for key in ("mean", "max", "std", "p50", "p90", "p99"))))
KINDS = ("directed", "undirected", "bipartite")
#: What ``tuning="auto"`` can follow, simplest first (ties of their scores go to the first).
STRATEGIES = ("defaults", "most_frequent", "tree", "regressor")
#: The value of a feature that is None (undefined for the graph) or missing from the config.
FILL = -1.0
_ACTIVATIONS = {"identity": lambda x: x, "relu": lambda x: np.maximum(x, 0.0),
                "tanh": np.tanh, "logistic": lambda x: 1.0 / (1.0 + np.exp(-x))}


class ModelError(ValueError):
    """A model file that cannot be used: not JSON, not this format or version, or a missing
    or malformed entry (the message names the file and the entry)."""


def feature_names() -> list[str]:
    """The names of the attribute features, in the order of the models' inputs
    (``log1p(n)`` for a feature of :data:`LOG_FEATURES`).

    >>> feature_names()[:2], feature_names()[3], feature_names()[-1]
    (['log1p(n)', 'log1p(m)'], 'density', 'kind=bipartite')
    """
    return [f"log1p({key})" if key in LOG_FEATURES else key for key in FEATURES] \
        + ["weighted", "multigraph", *(f"kind={k}" for k in KINDS)]


def _number(value) -> float:
    if value is None or isinstance(value, str):
        return FILL
    value = float(value)
    return value if math.isfinite(value) else FILL


def attribute_vector(attributes: dict) -> np.ndarray:
    """The attribute features of a graph (``g.attributes()``) as a float64 vector (ValueError
    for a dict without the keys or with an unknown kind)."""
    missing = [k for k in (*FEATURES, "weighted", "multigraph", "kind") if k not in attributes]
    if missing:
        raise ValueError(f"attributes lack {', '.join(missing)} (pass g.attributes())")
    if attributes["kind"] not in KINDS:
        raise ValueError(f"attributes: unknown kind {attributes['kind']!r}")
    values = []
    for key in FEATURES:
        value = _number(attributes[key])
        values.append(math.log1p(value) if key in LOG_FEATURES and value != FILL else value)
    values += [float(bool(attributes["weighted"])), float(bool(attributes["multigraph"]))]
    values += [float(attributes["kind"] == k) for k in KINDS]
    return np.array(values, dtype=np.float64)


def _config_columns(pool: list[dict]) -> list[str]:
    """The configuration features of a pool: ``option=<json value>`` one-hots (absent and None
    are ``option=null``) and, for an option whose values are numbers, ``option`` itself."""
    names = []
    for option in sorted({key for config in pool for key in config}):
        names += [f"{option}={v}" for v in sorted({json.dumps(c.get(option)) for c in pool})]
        numbers = [c[option] for c in pool if c.get(option) is not None]
        if numbers and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                           for v in numbers):
            names.append(option)
    return names


def _config_matrix(pool: list[dict], names: list[str]) -> np.ndarray:
    out = np.empty((len(pool), len(names)))
    for i, config in enumerate(pool):
        for j, name in enumerate(names):
            option, eq, value = name.partition("=")
            if eq:
                out[i, j] = float(json.dumps(config.get(option)) == value)
            else:
                out[i, j] = _number(config.get(option))
    return out


# ------------------------------------------------------------------------ NumPy inference

def _leaves(tree: dict, X: np.ndarray) -> np.ndarray:
    """The leaf of each row of ``X`` (rounded to float32 first, as scikit-learn's trees)."""
    X = X.astype(np.float32).astype(np.float64)
    rows = np.arange(len(X))
    node = np.zeros(len(X), dtype=np.int64)
    while True:
        left = tree["children_left"][node]
        inner = left >= 0
        if not inner.any():
            return node
        feature = np.where(inner, tree["feature"][node], 0)
        go_left = X[rows, feature] <= tree["threshold"][node]
        node = np.where(inner, np.where(go_left, left, tree["children_right"][node]), node)


def _stacked(stages: list) -> dict:
    """A boosting model's trees as (stages x nodes) arrays, padded with leaves, so that every
    stage descends one level at a time together (:func:`_predict_regressor`)."""
    width = max(len(t["children_left"]) for t in stages)

    def pad(key, fill, dtype):
        out = np.full((len(stages), width), fill, dtype=dtype)
        for i, t in enumerate(stages):
            out[i, :len(t[key])] = t[key]
        return out

    return {"left": pad("children_left", -1, np.int64),
            "right": pad("children_right", -1, np.int64),
            "feature": pad("feature", 0, np.int64),
            "threshold": pad("threshold", 0.0, np.float64),
            "value": pad("value", 0.0, np.float64)}


def _predict_regressor(reg: dict, X: np.ndarray) -> np.ndarray:
    """The exported regressor ``reg``'s predictions for the rows of ``X``."""
    if reg["kind"] == "gbm":
        if "_stacked" not in reg:
            reg["_stacked"] = _stacked(reg["stages"])
        t = reg["_stacked"]
        X = X.astype(np.float32).astype(np.float64)  # as scikit-learn's trees
        stage = np.arange(t["left"].shape[0])[:, None]
        rows = np.arange(len(X))[None, :]
        node = np.zeros((t["left"].shape[0], len(X)), dtype=np.int64)
        while True:  # every stage and row one level down
            left = t["left"][stage, node]
            inner = left >= 0
            if not inner.any():
                break
            go_left = X[rows, t["feature"][stage, node]] <= t["threshold"][stage, node]
            node = np.where(inner, np.where(go_left, left, t["right"][stage, node]), node)
        return reg["init"] + reg["learning_rate"] * t["value"][stage, node].sum(axis=0)
    if reg["kind"] == "mlp":
        h = (X - reg["mean"]) / reg["scale"]
        last = len(reg["coefs"]) - 1
        for i, (w, b) in enumerate(zip(reg["coefs"], reg["intercepts"])):
            h = h @ w + b
            if i < last:
                h = _ACTIVATIONS[reg["activation"]](h)
        return h[:, 0]
    return np.zeros(len(X))  # "constant": a pool of one


# ------------------------------------------------------------------------ the model

class Model:
    """Per algorithm: the pool of configurations, the most frequent best, a decision tree per
    graph kind and a throughput regressor, all as plain arrays (:func:`train`,
    :func:`load_model`).  Metadata: ``model.meta`` (``device``, ``backend``,
    ``attributes_version``, ``created``, ``library_version``, ``graphs``)."""

    def __init__(self, doc: dict, source: str = "(in memory)"):
        self._doc = doc
        self._source = source
        self._algos = _parse(doc, source)
        self._pools = {name: tuple(json.loads(c) for c in algo["pool"])  # decoded once
                       for name, algo in self._algos.items()}
        self.meta = {k: v for k, v in doc.items() if k not in ("algorithms", "features")}

    @property
    def source(self) -> str:
        """Where the model came from: its file, or ``(in memory)``."""
        return self._source

    @property
    def algorithms(self) -> list[str]:
        """The algorithms the model tunes."""
        return sorted(self._algos)

    def _get(self, name: str) -> dict:
        try:
            return self._algos[name]
        except KeyError:
            raise ValueError(f"the tuning model ({self._source}) has no algorithm {name!r}; "
                             f"it has {', '.join(self.algorithms) or 'none'}") from None

    def _vector(self, attributes: dict) -> np.ndarray:
        version = attributes.get("version")
        if version is not None and version != self.meta["attributes_version"]:
            raise ValueError(f"attributes version {version}, the tuning model "
                             f"({self._source}) was trained on version "
                             f"{self.meta['attributes_version']}")
        if not self.structure:  # trained without them: they are not read
            attributes = {**attributes, **dict.fromkeys(STRUCTURAL)}
        return attribute_vector(attributes)

    @property
    def structure(self) -> bool:
        """Whether the model reads the costly attributes
        (:data:`onyx_rapids.attributes.STRUCTURAL`); False: ``g.attributes(structure=False)``
        serves it."""
        return self.meta.get("structure", True)

    @property
    def quick(self) -> bool:
        """Whether the model reads ``g.attributes(quick=True)`` (the degree part estimated
        from samples, no structural keys: what a tuned call can afford on its first call)."""
        return self.meta.get("quick", False)

    def graph_attributes(self, g) -> dict:
        """The attributes of graph ``g`` that this model reads (cached on the graph)."""
        return g.attributes(quick=True) if self.quick else g.attributes(structure=self.structure)

    def pool(self, name: str) -> list[dict]:
        """The configurations measured for algorithm ``name`` (keyword dicts; ``{}`` the
        library's defaults)."""
        self._get(name)
        return [dict(c) for c in self._pools[name]]

    def most_frequent(self, name: str) -> dict:
        """The configuration fastest on most training graphs of ``name``."""
        return dict(self._pools[name][self._get(name)["most_frequent"]])

    def tree_choice(self, name: str, attributes: dict) -> dict:
        """The decision tree's configuration for a graph with ``attributes`` (its kind's tree;
        :meth:`most_frequent` for a kind no training graph had)."""
        algo = self._get(name)
        x = self._vector(attributes)
        tree = algo["trees"].get(attributes["kind"])
        if tree is None:
            return self.most_frequent(name)
        if "constant" in tree:
            index = tree["constant"]
        else:
            leaf = _leaves(tree, x[None])[0]
            index = tree["classes"][int(np.argmax(tree["value"][leaf]))]
        return dict(self._pools[name][index])

    def predict(self, name: str, attributes: dict) -> np.ndarray:
        """The regressor's predicted ``log(ms / best ms)`` of each pool configuration (in
        :meth:`pool`'s order) on a graph with ``attributes``."""
        algo = self._get(name)
        x = self._vector(attributes)
        configs = algo["config_matrix"]
        X = np.hstack([np.repeat(x[None], len(configs), axis=0), configs])
        return _predict_regressor(algo["regressor"], X)

    def rank(self, name: str, attributes: dict) -> list[dict]:
        """Every pool configuration of ``name``, predicted fastest first on a graph with
        ``attributes`` (NumPy only)."""
        order = np.argsort(self.predict(name, attributes), kind="stable")
        pool = self._pools[name]
        return [dict(pool[i]) for i in order]

    def auto(self, name: str) -> str:
        """The strategy ``tuning="auto"`` follows for ``name`` (:data:`STRATEGIES`)."""
        return self._get(name)["auto"]

    def choices(self, name: str, attributes: dict) -> list[dict]:
        """Every pool configuration of ``name`` in the order ``tuning`` tries them on a graph
        with ``attributes``: first the :meth:`auto` strategy's pick (the defaults, the most
        frequent best, the tree's or the regressor's top-1), then the rest of :meth:`rank`.
        ``tuning="auto"`` runs the first, ``tuning="search"`` times the first three."""
        ranked = self.rank(name, attributes)
        first = ranked[0] if self.auto(name) == "regressor" else self.pick(name, attributes)
        return [first] + [c for c in ranked if c != first]

    def pick(self, name: str, attributes: dict) -> dict:
        """:meth:`choices`' first alone, what ``tuning="auto"`` runs: the regressor predicts
        only when :meth:`auto` follows it."""
        strategy = self.auto(name)
        if strategy == "defaults":
            return {}
        if strategy == "most_frequent":
            return self.most_frequent(name)
        if strategy == "tree":
            return self.tree_choice(name, attributes)
        return self.rank(name, attributes)[0]

    def importances(self, name: str) -> dict:
        """The attributes the decision trees of ``name`` split on, by importance: each
        tree's feature importances, averaged over the graph kinds' trees (a constant tree
        splits on none), largest first."""
        self._get(name)  # a name the model has
        trees = self._doc["algorithms"][name]["trees"].values()
        total: dict = {}
        for tree in trees:
            for key, value in tree.get("importances", {}).items():
                total[key] = total.get(key, 0.0) + float(value) / len(trees)
        return dict(sorted(total.items(), key=lambda kv: (-kv[1], kv[0])))

    def describe(self, name: str) -> str:
        """The trees (as text, with their feature importances), the most frequent best and
        the regressor with both leave-one-graph-out scores, for printing."""
        self._get(name)
        algo = self._doc["algorithms"][name]
        reg = algo["regressor"]
        lines = [f"{name}: {len(algo['pool'])} configurations, {len(algo['graphs'])} "
                 f"training graphs; most frequent best {algo['pool'][algo['most_frequent']]}"]
        for kind, tree in algo["trees"].items():
            if "constant" in tree:
                lines.append(f"tree ({kind}): always {algo['pool'][tree['constant']]}")
                continue
            lines.append(f"tree ({kind}), classes: "
                         + ", ".join(f"{i}={algo['pool'][i]}" for i in tree["classes"]))
            lines.append(tree["text"].rstrip())
            lines.append("importances: " + ", ".join(
                f"{k} {v:.3f}" for k, v in tree["importances"].items()))
        def percents(scores):
            return ", ".join(f"{k} {'n/a' if v is None else f'{100 * v:.1f}%'}"
                             for k, v in scores.items())

        lines.append(f"regressor: {reg['kind']} (leave-one-graph-out top-1 share of peak: "
                     f"{percents(reg['scores']) or 'n/a'})")
        auto = percents(algo.get("auto_scores", {}))
        lines.append(f"tuning=\"auto\": {self.auto(name)}"
                     + (f" (leave-one-graph-out share of peak: {auto})" if auto else ""))
        return "\n".join(lines)

    def save(self, path) -> None:
        """Write the model as one JSON file (:func:`load_model` reads it)."""
        with open(path, "w") as f:
            json.dump(self._doc, f, allow_nan=False)


def default_model_path() -> pathlib.Path:
    """The model file the library reads: ``$ONYX_RAPIDS_TUNING_MODEL`` when set, else
    ``onyx_rapids/data/tuning/model.json`` in the package (which may not exist).

    >>> default_model_path().name  # doctest: +SKIP
    'model.json'
    """
    env = os.environ.get(MODEL_ENV)
    if env:
        return pathlib.Path(env)
    return pathlib.Path(__file__).parent / "data" / "tuning" / "model.json"


def load_model(path=None) -> Model:
    """The model saved at ``path`` (default :func:`default_model_path`); needs no scikit-learn.
    FileNotFoundError for a missing file, :class:`ModelError` for one that is not a valid
    model of this format version.

    >>> model = load_model("model.json")  # doctest: +SKIP
    """
    path = os.fspath(default_model_path() if path is None else path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no tuning model file {path}")
    try:
        with open(path) as f:
            doc = json.load(f)
    except (ValueError, UnicodeDecodeError) as e:
        raise ModelError(f"model file {path}: not JSON ({e})") from None
    return Model(doc, path)


# ------------------------------------------------------------------------ file checks

class _Reader:
    """Checks a model document, raising ModelError naming the file and the entry."""

    def __init__(self, source):
        self.source = source

    def fail(self, message):
        raise ModelError(f"model file {self.source}: {message}")

    def get(self, obj, key, where, types):
        if not isinstance(obj, dict):
            self.fail(f"{where} is not an object")
        if key not in obj:
            self.fail(f"{where} has no {key!r}")
        value, types = obj[key], types if isinstance(types, tuple) else (types,)
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            self.fail(f"{where}.{key} is a {type(value).__name__}, not "
                      f"{' or '.join(t.__name__ for t in types)}")
        return value

    def array(self, obj, key, where, integer, shape):
        """``obj[key]`` as an array of ``shape`` (None: any length on that axis)."""
        value = self.get(obj, key, where, list)
        try:
            a = np.asarray(value)
        except ValueError:
            self.fail(f"{where}.{key} is a ragged array")
        if a.size == 0 and len(shape) == a.ndim:
            a = a.astype(np.int64 if integer else np.float64)
        if a.dtype.kind not in ("iu" if integer else "iuf"):
            self.fail(f"{where}.{key} holds {a.dtype} values, not "
                      f"{'integers' if integer else 'numbers'}")
        if a.ndim != len(shape) or any(s is not None and s != d for s, d in zip(shape, a.shape)):
            self.fail(f"{where}.{key} has shape {a.shape}, expected "
                      f"({', '.join('any' if s is None else str(s) for s in shape)})")
        a = a.astype(np.int64 if integer else np.float64)
        if not integer and not np.isfinite(a).all():
            self.fail(f"{where}.{key} holds non-finite values")
        return a

    def tree(self, obj, where, width, outputs):
        """A scikit-learn tree's arrays; ``outputs`` None: a value per node (a regressor)."""
        left = self.array(obj, "children_left", where, True, (None,))
        n = len(left)
        if n == 0:
            self.fail(f"{where} has no nodes")
        tree = {"children_left": left,
                "children_right": self.array(obj, "children_right", where, True, (n,)),
                "feature": self.array(obj, "feature", where, True, (n,)),
                "threshold": self.array(obj, "threshold", where, False, (n,)),
                "value": self.array(obj, "value", where, False,
                                    (n,) if outputs is None else (n, outputs))}
        inner = left >= 0
        right, feature = tree["children_right"], tree["feature"]
        nodes = np.arange(n)
        if ((right >= 0) != inner).any() or (inner & ((left <= nodes) | (right <= nodes)
                                                      | (left >= n) | (right >= n))).any() \
                or (inner & ((feature < 0) | (feature >= width))).any():
            self.fail(f"{where} has children or features out of range")
        return tree


def _parse(doc, source) -> dict:
    """The validated document's algorithms as NumPy arrays (ModelError naming ``source``)."""
    r = _Reader(source)
    if not isinstance(doc, dict):
        r.fail("not a tuning model (a JSON object is expected)")
    if doc.get("format") != FORMAT:
        r.fail(f"format {doc.get('format')!r}, not {FORMAT!r}")
    version = r.get(doc, "format_version", "the model", int)
    if version != FORMAT_VERSION:
        r.fail(f"format_version {version}, this onyx_rapids reads {FORMAT_VERSION}")
    for key in ("created", "device", "backend"):
        r.get(doc, key, "the model", str)
    r.get(doc, "attributes_version", "the model", int)
    for flag, default in (("structure", True), ("quick", False)):
        if not isinstance(doc.get(flag, default), bool):
            r.fail(f"{flag} {doc[flag]!r} is not true or false")
    r.get(doc, "graphs", "the model", list)
    names = feature_names()
    if r.get(doc, "features", "the model", list) != names:
        r.fail("its attribute features differ from this onyx_rapids's")
    out = {}
    for name, algo in r.get(doc, "algorithms", "the model", dict).items():
        where = f"algorithms.{name}"
        pool_text = r.get(algo, "pool", where, list)
        try:
            pool = [json.loads(c) for c in pool_text]
        except (TypeError, ValueError):
            r.fail(f"{where}.pool holds an entry that is not a JSON string")
        if not pool or not all(isinstance(c, dict) for c in pool) \
                or [json.dumps(c, sort_keys=True) for c in pool] != pool_text:
            r.fail(f"{where}.pool is not a list of canonical JSON objects")
        r.get(algo, "graphs", where, list)
        columns = _config_columns(pool)
        if r.get(algo, "config_features", where, list) != columns:
            r.fail(f"{where}.config_features differ from those of its pool")
        width = len(names) + len(columns)
        size = len(pool)
        parsed = {"pool": pool_text, "config_matrix": _config_matrix(pool, columns), "trees": {}}
        parsed["most_frequent"] = r.get(algo, "most_frequent", where, int)
        if not 0 <= parsed["most_frequent"] < size:
            r.fail(f"{where}.most_frequent is out of the pool")
        for kind, tree in r.get(algo, "trees", where, dict).items():
            at = f"{where}.trees.{kind}"
            if kind not in KINDS:
                r.fail(f"{at}: unknown graph kind")
            if isinstance(tree, dict) and "constant" in tree:
                index = r.get(tree, "constant", at, int)
                if not 0 <= index < size:
                    r.fail(f"{at}.constant is out of the pool")
                parsed["trees"][kind] = {"constant": index}
                continue
            classes = r.array(tree, "classes", at, True, (None,))
            if len(classes) == 0 or ((classes < 0) | (classes >= size)).any():
                r.fail(f"{at}.classes are out of the pool")
            r.get(tree, "text", at, str)
            r.get(tree, "importances", at, dict)
            parsed["trees"][kind] = {**r.tree(tree, at, len(names), len(classes)),
                                     "classes": classes}
        parsed["regressor"] = _parse_regressor(r, r.get(algo, "regressor", where, dict),
                                               f"{where}.regressor", width, size)
        parsed["auto"] = algo.get("auto", "regressor")  # files before it: the regressor
        if parsed["auto"] not in STRATEGIES:
            r.fail(f"{where}.auto {parsed['auto']!r} is not one of {', '.join(STRATEGIES)}")
        auto_scores = algo.get("auto_scores", {})
        numbers = isinstance(auto_scores, dict) and all(
            v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
            for v in auto_scores.values())
        if not numbers or not set(auto_scores) <= set(STRATEGIES):
            r.fail(f"{where}.auto_scores is not a map of {', '.join(STRATEGIES)} to numbers")
        out[name] = parsed
    return out


def _parse_regressor(r, reg, where, width, size) -> dict:
    kind = r.get(reg, "kind", where, str)
    scores = r.get(reg, "scores", where, dict)
    if not all(v is None or isinstance(v, (int, float)) for v in scores.values()):
        r.fail(f"{where}.scores are not numbers")
    if kind == "constant":
        if size != 1:
            r.fail(f"{where} is constant for a pool of {size}")
        return {"kind": kind}
    if kind == "gbm":
        stages = r.get(reg, "stages", where, list)
        if not stages:
            r.fail(f"{where}.stages is empty")
        return {"kind": kind, "init": float(r.get(reg, "init", where, (int, float))),
                "learning_rate": float(r.get(reg, "learning_rate", where, (int, float))),
                "stages": [r.tree(s, f"{where}.stages[{i}]", width, None)
                           for i, s in enumerate(stages)]}
    if kind == "mlp":
        activation = r.get(reg, "activation", where, str)
        if activation not in _ACTIVATIONS:
            r.fail(f"{where}.activation {activation!r} is not one of {', '.join(_ACTIVATIONS)}")
        coefs, intercepts = r.get(reg, "coefs", where, list), r.get(reg, "intercepts", where, list)
        if not coefs or len(coefs) != len(intercepts):
            r.fail(f"{where} has {len(coefs)} coefs and {len(intercepts)} intercepts")
        out = {"kind": kind, "activation": activation,
               "mean": r.array(reg, "mean", where, False, (width,)),
               "scale": r.array(reg, "scale", where, False, (width,)), "coefs": [],
               "intercepts": []}
        rows = width
        for i in range(len(coefs)):
            last = i == len(coefs) - 1
            w = r.array({"w": coefs[i]}, "w", f"{where}.coefs[{i}]", False,
                        (rows, 1 if last else None))
            out["coefs"].append(w)
            out["intercepts"].append(r.array({"b": intercepts[i]}, "b",
                                             f"{where}.intercepts[{i}]", False, (w.shape[1],)))
            rows = w.shape[1]
        return out
    r.fail(f"{where}.kind {kind!r} is not gbm, mlp or constant")


# ------------------------------------------------------------------------ training

def _export_tree(tree, values) -> dict:
    return {"children_left": tree.children_left.tolist(),
            "children_right": tree.children_right.tolist(), "feature": tree.feature.tolist(),
            "threshold": tree.threshold.tolist(), "value": values.tolist()}


def _export_gbm(gbm) -> dict:
    return {"kind": "gbm", "init": float(np.ravel(gbm.init_.constant_)[0]),
            "learning_rate": float(gbm.learning_rate),
            "stages": [_export_tree(t.tree_, t.tree_.value[:, 0, 0])
                       for t in gbm.estimators_[:, 0]]}


def _export_mlp(pipe) -> dict:
    scaler, mlp = pipe[0], pipe[-1]
    return {"kind": "mlp", "activation": mlp.activation, "mean": scaler.mean_.tolist(),
            "scale": scaler.scale_.tolist(), "coefs": [c.tolist() for c in mlp.coefs_],
            "intercepts": [b.tolist() for b in mlp.intercepts_]}


def _regressors(seed):
    """The two candidate regressors, unfitted: name -> estimator."""
    from sklearn.ensemble import GradientBoostingRegressor
    from sklearn.neural_network import MLPRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return {"gbm": GradientBoostingRegressor(n_estimators=100, max_depth=3, random_state=seed),
            "mlp": make_pipeline(StandardScaler(), MLPRegressor(
                hidden_layer_sizes=(32, 32), solver="lbfgs", alpha=1e-3, max_iter=500,
                random_state=seed))}


def read_table(table):
    """A training table: a pandas DataFrame, or the Parquet file(s) at a path or list of
    paths, less the unusable rows (not ``ok``, no finite time, ``agrees`` False or null), with
    canonical ``config`` JSON and ``graph`` names as strings."""
    import pandas as pd

    if isinstance(table, pd.DataFrame):
        frame = table
    else:
        paths = [table] if isinstance(table, (str, os.PathLike)) else list(table)
        frame = pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)
    ok = (frame["status"] == "ok") & np.isfinite(frame["ms"].astype(float)) & (frame["ms"] > 0)
    if "agrees" in frame:
        ok &= frame["agrees"].fillna(False).astype(bool)
    frame = frame[ok].copy()
    frame["config"] = [json.dumps(json.loads(c), sort_keys=True) for c in frame["config"]]
    frame["graph"] = frame["graph"].astype(str)
    return frame


#: The columns of a training table holding ``g.attributes()`` and ``g.attributes(quick=True)``.
PREFIX, QUICK_PREFIX = "attr_", "qattr_"


def _graph_attributes(rows, prefix: str = PREFIX) -> dict:
    """The attributes of a graph from its first row (plain Python values, NaN back to None):
    the ``prefix`` columns (``qattr_``: the quick ones)."""
    import pandas as pd

    first = rows.iloc[0]
    return {key[len(prefix):]: None if np.ndim(v) == 0 and pd.isna(v) else
            v.item() if isinstance(v, np.generic) else v
            for key, v in first.items() if key.startswith(prefix)}


def _quick_columns(frame):
    """``frame`` with its ``qattr_`` columns as the ``attr_`` ones (ValueError naming the
    graphs without them)."""
    quick = [c for c in frame if c.startswith(QUICK_PREFIX)]
    missing = sorted(frame["graph"].unique()) if not quick else sorted(
        frame.loc[frame[f"{QUICK_PREFIX}n"].isna(), "graph"].unique())
    if missing:
        raise ValueError(f"no quick attributes ({QUICK_PREFIX}* columns) for the graphs "
                         f"{', '.join(map(str, missing))}: measure them with a library that "
                         "records them, or train with quick=False")
    frame = frame.drop(columns=[c for c in frame if c.startswith(PREFIX)])
    return frame.rename(columns={c: PREFIX + c[len(QUICK_PREFIX):] for c in quick})


def _single(frame, column):
    values = sorted({str(v) for v in frame[column].dropna()})
    if len(values) != 1:
        raise ValueError(f"the training table has {len(values)} values of {column} "
                         f"({', '.join(values)}); train one model per {column}")
    return frame[column].dropna().iloc[0]


def train(table, *, seed: int = 0, structure: bool = True, quick: bool = False) -> Model:
    """Train a :class:`Model` on a training table (:func:`onyx_rapids.tuning.measure`'s
    rows: a pandas DataFrame or Parquet path(s)), every algorithm in it; needs scikit-learn.
    Only rows with status ``ok``, a finite time and (where the column exists) ``agrees`` are
    used.  The table must hold one device, backend and attributes version, and no graph
    held out for :func:`evaluate`.  ``structure=False`` trains without the costly attributes
    (:data:`onyx_rapids.attributes.STRUCTURAL`: BFS sweeps and wedges), so that a tuned call
    computes only the cheap ones; ``quick=True`` trains on the quick attributes (the
    table's ``qattr_`` columns: ``g.attributes(quick=True)``), which a tuned call computes
    in one small kernel.

    >>> model = train("training.parquet", seed=0)   # doctest: +SKIP
    >>> print(model.describe("pagerank"))           # doctest: +SKIP
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.tree import DecisionTreeClassifier, export_text
    from threadpoolctl import threadpool_limits

    frame = read_table(table)
    if frame.empty:
        raise ValueError("the training table has no usable rows")
    if quick:
        frame, structure = _quick_columns(frame), False
    if not structure:
        frame = frame.assign(**{f"attr_{k}": None for k in STRUCTURAL})
    attr_columns = [c for c in frame if c.startswith("attr_")]
    varying = frame.groupby("graph")[attr_columns].nunique(dropna=False).max(axis=1)
    if (varying > 1).any():
        raise ValueError("graphs with different attributes in different rows: "
                         + ", ".join(map(str, varying.index[varying > 1])))
    names = feature_names()
    doc = {"format": FORMAT, "format_version": FORMAT_VERSION,
           "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "device": str(_single(frame, "device")), "backend": str(_single(frame, "backend")),
           "attributes_version": int(_single(frame, "attributes_version")),
           "library_version": _library_version(),
           "graphs": sorted(frame["graph"].unique().tolist()), "features": names,
           "structure": bool(structure), "quick": bool(quick),
           "algorithms": {}}
    estimators = {}
    for name, rows in frame.groupby("algorithm", sort=True):
        pool_text = sorted(rows["config"].unique(), key=lambda c: (c != "{}", c))
        pool = [json.loads(c) for c in pool_text]
        columns = _config_columns(pool)
        configs = _config_matrix(pool, columns)
        ms = rows.pivot_table(index="graph", columns="config", values="ms",
                              aggfunc="median")[pool_text]
        graphs = ms.index.tolist()
        times = ms.to_numpy(dtype=float)
        best = np.nanmin(times, axis=1)
        best_id = np.nanargmin(times, axis=1)
        ratio = times / best[:, None]
        attrs = {g: _graph_attributes(r) for g, r in rows.groupby("graph")}
        X_attr = np.array([attribute_vector(attrs[g]) for g in graphs])
        kinds = np.array([attrs[g]["kind"] for g in graphs])

        most = _most_frequent(best_id, ratio)

        trees, fitted = {}, {}
        for kind in sorted(set(kinds)):
            X, y = X_attr[kinds == kind], best_id[kinds == kind]
            if len(set(y)) == 1:
                trees[kind] = {"constant": int(np.bincount(y).argmax())}
                continue
            clf = DecisionTreeClassifier(max_depth=4, random_state=seed).fit(X, y)
            fitted[kind] = clf
            trees[kind] = {**_export_tree(clf.tree_, clf.tree_.value[:, 0, :]),
                           "classes": clf.classes_.tolist(),
                           "text": export_text(clf, feature_names=names, decimals=4),
                           "importances": {names[i]: float(clf.feature_importances_[i])
                                           for i in np.argsort(-clf.feature_importances_)
                                           if clf.feature_importances_[i] > 0}}

        g_index, c_index = np.nonzero(np.isfinite(times))
        X = np.hstack([X_attr[g_index], configs[c_index]])
        y = np.log(ratio[g_index, c_index])
        scores, models = {}, {}
        # one BLAS thread: on matrices this small, threads cost more than they give (16x)
        with warnings.catch_warnings(), threadpool_limits(limits=1, user_api="blas"):
            warnings.simplefilter("ignore", ConvergenceWarning)
            for kind, estimator in (_regressors(seed).items() if len(pool) > 1 else ()):
                scores[kind] = _logo_score(estimator, X, y, g_index, c_index, times)
                models[kind] = estimator.fit(X, y)
        if models:
            chosen = "mlp" if (scores["mlp"] or 0) > (scores["gbm"] or 0) else "gbm"
            regressor = (_export_gbm if chosen == "gbm" else _export_mlp)(models[chosen])
        else:
            regressor = {"kind": "constant"}
        regressor["scores"] = scores
        auto_scores = _logo_strategies(X_attr, kinds, best_id, ratio, times, seed,
                                       defaults=pool_text[0] == "{}")
        auto_scores["regressor"] = scores.get(regressor["kind"])
        auto = max(STRATEGIES, key=lambda k: (-np.inf if auto_scores[k] is None
                                              else round(auto_scores[k], 6),
                                              -STRATEGIES.index(k)))
        doc["algorithms"][name] = {"pool": pool_text, "graphs": graphs, "most_frequent": int(most),
                                   "config_features": columns, "trees": trees,
                                   "regressor": regressor, "auto": auto,
                                   "auto_scores": auto_scores}
        estimators[name] = {"trees": fitted, **models}
    model = Model(doc, "(trained)")
    model._estimators = estimators  # the scikit-learn estimators (not saved): for checks
    return model


def _most_frequent(best_id, ratio) -> int:
    """The configuration fastest on most graphs (ties: the smaller mean slowdown, then the
    first in the pool)."""
    counts = np.bincount(best_id, minlength=ratio.shape[1])
    mean_ratio = np.where(np.isnan(ratio), np.inf, ratio).mean(axis=0)  # unmeasured: inf
    return int(min(np.flatnonzero(counts == counts.max()), key=lambda i: (mean_ratio[i], i)))


def _logo_strategies(X_attr, kinds, best_id, ratio, times, seed, defaults=True) -> dict:
    """The mean share of the peak that the defaults (pool index 0; None when ``defaults`` is
    False: no usable row of ``{}``), the most frequent best and the kind's decision tree reach
    on each training graph when chosen from the others (None for a single graph); a pick not
    measured on the graph counts as nothing reached."""
    from sklearn.tree import DecisionTreeClassifier

    count = len(best_id)
    if count < 2:
        return dict.fromkeys(("defaults", "most_frequent", "tree"))

    def share(g, pick):
        t = times[g, pick]
        return float(np.nanmin(times[g]) / t) if np.isfinite(t) else 0.0

    out = {"defaults": [], "most_frequent": [], "tree": []}
    for g in range(count):
        others = np.arange(count) != g
        most = _most_frequent(best_id[others], ratio[others])
        same = others & (kinds == kinds[g])
        if not same.any():
            tree = most
        elif len(set(best_id[same])) == 1:
            tree = int(best_id[same][0])
        else:
            clf = DecisionTreeClassifier(max_depth=4, random_state=seed)
            tree = int(clf.fit(X_attr[same], best_id[same]).predict(X_attr[g][None])[0])
        out["defaults"].append(share(g, 0))
        out["most_frequent"].append(share(g, most))
        out["tree"].append(share(g, tree))
    scores = {k: float(np.mean(v)) for k, v in out.items()}
    return scores if defaults else {**scores, "defaults": None}


def _logo_score(estimator, X, y, g_index, c_index, times):
    """The mean share of the peak (best ms / ms of the pick) that ``estimator``'s top-1 pick
    reaches on each graph when trained on the others (None for a single graph)."""
    from sklearn.base import clone

    graphs = np.unique(g_index)
    if len(graphs) < 2:
        return None
    shares = []
    for g in graphs:
        held = g_index == g
        fit = clone(estimator).fit(X[~held], y[~held])
        pick = c_index[held][np.argmin(fit.predict(X[held]))]
        shares.append(np.nanmin(times[g]) / times[g, pick])
    return float(np.mean(shares))


def _library_version():
    try:
        from . import __version__
        return __version__
    except ImportError:
        return None


# ------------------------------------------------------------------------ evaluation

def evaluate(model, table, *, in_sample: bool = False):
    """Per (algorithm, graph) of a held-out table (a DataFrame or Parquet path(s), read as
    :func:`train` reads them), the share of the graph's peak (its fastest measured
    configuration) reached, in percent (``best_ms / ms_of_pick * 100``), by the defaults
    (``{}``), ``most_frequent``, ``tree``, the regressor's top-1 (``regressor``),
    ``tuning="auto"``'s pick (``top1``: :meth:`Model.choices`' first) and the best of the
    first three (``top3``: what ``tuning="search"`` times); NaN where no pick was measured
    on the graph.  Only measured times are read.  ``model`` None: :func:`load_model`'s
    default.  A graph the model was trained on raises ValueError unless ``in_sample``.

    >>> scores = evaluate(model, "held_out.parquet")                     # doctest: +SKIP
    >>> scores.groupby("algorithm")[["defaults", "tree", "top1", "top3"]].mean()  # doctest: +SKIP
    """
    import pandas as pd

    model = load_model() if model is None else model
    frame = read_table(table)
    frame = frame[frame["algorithm"].isin(model.algorithms)]
    seen = sorted(set(frame["graph"]) & set(model.meta["graphs"]))
    if seen and not in_sample:
        raise ValueError(f"graphs the model was trained on: {', '.join(map(str, seen))} "
                         "(evaluate held-out graphs, or pass in_sample=True)")
    rows = []
    for (name, graph), group in frame.groupby(["algorithm", "graph"], sort=True):
        measured = group.groupby("config")["ms"].median()
        best = float(measured.min())
        attrs = _graph_attributes(group, QUICK_PREFIX if model.quick else PREFIX)

        def share(*configs):
            times = [measured.get(json.dumps(c, sort_keys=True), np.nan) for c in configs]
            return 100 * best / np.nanmin(times) if np.isfinite(times).any() else np.nan

        chosen = model.choices(name, attrs)
        rows.append({"algorithm": name, "graph": graph, "best_ms": best,
                     "best_config": measured.idxmin(), "defaults": share({}),
                     "most_frequent": share(model.most_frequent(name)),
                     "tree": share(model.tree_choice(name, attrs)),
                     "regressor": share(model.rank(name, attrs)[0]),
                     "top1": share(chosen[0]), "top3": share(*chosen[:3])})
    return pd.DataFrame(rows, columns=["algorithm", "graph", "best_ms", "best_config",
                                       "defaults", "most_frequent", "tree", "regressor",
                                       "top1", "top3"])
