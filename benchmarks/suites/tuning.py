"""Suite ``tuning`` (issue 38): the autotuner's training data.  On every graph, every
configuration of each tuned algorithm's pool (:func:`onyx_rapids.tuning.pool`: the defaults,
each option changed alone, and seeded random combinations) is timed by
:func:`onyx_rapids.tuning.measure` and checked against the defaults' result; the rows carry
the graph's attributes (``attr_*``) and the configuration (``config``), so the run's Parquet
file is a training table for :func:`onyx_rapids.tuning_model.train` as it is.

* algorithms (:data:`onyx_rapids.tuning.TUNED`) with
  :func:`onyx_rapids.tuning.training_inputs`: bfs and sssp from the highest-degree vertex,
  pagerank, weakly_connected_components, betweenness_centrality from 16 sampled sources,
  label_propagation and personalized_pagerank with k = ``--ks`` (32) features;
* one case per (graph, algorithm): role ``ours`` is the defaults' row (``{}``), every other
  configuration a ``variant`` (``speedup_vs_ours`` its gain over the defaults); ``params``
  ``reference_drift``: the defaults timed again after the pool (alternating with its
  fastest other configuration), over their first time;
* checks (against the defaults' result, :data:`CHECKS`): bfs hops and wcc partitions exact,
  sssp distances within 1e-5 relative, the propagations within the agreement tolerance of
  ``catalog.AGREE``;
* ``attributes`` rows: the quick attributes (what the packaged model reads on a graph's
  first tuned call), the degree-only ones and the full ``g.attributes()``, each the median
  of uncached calls with the kernels compiled beforehand, next to a warm default pagerank
  call and the packaged model's prediction (``params``: ``quick_ms``, ``degree_only_ms``,
  ``attributes_ms``, ``pagerank_ms``, ``predict_ms`` and the ratios).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np

from onyx_rapids import tuning

from .. import catalog
from ..common import (column, compare, free_memory, median, results_frame, results_table,
                      suffixed, time_calls)

TUNED = tuning.TUNED
PER_FEATURE = tuple(tuning.FEATURES)
RANDOM = tuning.POOL_RANDOM  # the pools' random configurations (--random N; tests: fewer)

#: The training corpus: generated families at several sizes, skews and densities, and two of
#: the embedded real graphs (tiny: where a call's fixed cost decides).
TRAINING = ("rmat:16:16,rmat:18:8,rmat:20:16,rmat:18:32:0.45,rmat:19:16:0.6,rmat:17:4:0.5,"
            "er:262144:8,er:1048576:16,er:65536:32,grid:512,grid:1024,road:1024:0.1,"
            "road:768:0.25,ratings:200000:20000:2000000,powerlaw:262144:8:2.1,"
            "powerlaw:1048576:4:2.5,powerlaw:131072:16:3.0,smallworld:262144:10:0.05,"
            "smallworld:1048576:6:0.3,dataset:karate,dataset:les_miserables")
#: Held out: other seeds (``~``), sizes and parameters of the families, and one family
#: (delaunay) never trained on.
HELD_OUT = ("rmat:19:12:0.52~5,rmat:17:24~6,er:524288:12~3,road:896:0.15~2,grid:640~3,"
            "powerlaw:524288:10:2.3~4,smallworld:524288:8:0.1~1,"
            "ratings:300000:50000:3000000~2,delaunay:500000~1,dataset:florentine_families")


def algorithms():
    return TUNED


def _sorted(frame, name):
    return column(frame.sort_values("vertex"), name)


def _exact(metric, name):
    def check(ref, ours):
        rec = compare(metric, _sorted(ours, name), _sorted(ref, name), against="defaults")
        return rec["ok"], f"{metric} {rec['value']}"
    return check


def _distance(ref, ours):
    rec = compare("distance", _sorted(ours, "distance"), _sorted(ref, "distance"),
                  against="defaults", tol=1e-5)
    return rec["ok"], f"distance {rec['value']}"


def _values(name, k):
    entry = catalog.get(name)
    metric, tol = catalog.agreement_metric(name)

    def check(ref, ours):
        a = catalog.result_matrix(entry, ours.sort_values("vertex"), k)
        b = catalog.result_matrix(entry, ref.sort_values("vertex"), k)
        rec = compare(metric, a, b, against="defaults", tol=tol)
        return rec["ok"], f"{metric} {rec['value']:.3g} (tol {tol:g})"
    return check


#: check(defaults' frame, configuration's frame) -> (ok, detail), by algorithm (k features).
CHECKS = {"bfs": lambda k: _exact("hops", "distance"), "sssp": lambda k: _distance,
          "weakly_connected_components": lambda k: _exact("partition", "labels")}


def _attributes_cost(run, spec, g):
    """``g.attributes()`` with nothing cached: the median of ``run.repeat`` uncached calls of
    :func:`onyx_rapids.attributes.attributes` of each kind (quick, degree-only, full; at least
    7 of the quick ones, a fraction of a millisecond) after a warm-up call of each, which
    compiles the kernels for this graph's types (the first GPU run, timing compilation too,
    measured 4-9 s on graphs whose warm attributes take milliseconds); then one warm default
    pagerank call.  The graph's cache gets the values last."""
    from onyx_rapids import attributes as graph_attributes

    def uncached(repeat, **kw):
        _, _, times = time_calls(lambda: graph_attributes.attributes(g, **kw), repeat)
        return median(times)

    row = run.row(spec.text, "attributes", "cost", "uncached", "ours", "ours")
    quick_ms = uncached(max(run.repeat, 7), quick=True)
    degree_ms = uncached(run.repeat, structure=False)
    ms = uncached(run.repeat)
    quick, degrees, attrs = (g.attributes(quick=True), g.attributes(structure=False),
                             g.attributes())
    pr = catalog.get("pagerank")
    _, _, times = time_calls(lambda: catalog.call(pr, g, {}, info=False), run.repeat)
    pagerank_ms = median(times)
    model, _ = tuning.model_for("auto")  # the packaged model's prediction, where it serves
    predict_ms = None
    if model is not None and "pagerank" in model.algorithms:
        _, _, times = time_calls(lambda: model.pick("pagerank", model.graph_attributes(g)), 7)
        predict_ms = median(times)
    row.update(ms=ms, repeats=run.repeat, params={
        "attributes_ms": ms, "degree_only_ms": degree_ms, "quick_ms": quick_ms,
        "pagerank_ms": pagerank_ms, "ratio": ms / pagerank_ms,
        "degree_only_ratio": degree_ms / pagerank_ms, "quick_ratio": quick_ms / pagerank_ms,
        "predict_ms": predict_ms})
    ok = all(a["n"] == g.n and a["m"] == g.m for a in (quick, degrees, attrs))
    run.check(row, {"ok": ok, "against": "the graph", "metric": "n, m",
                    "value": f"{attrs['n']}, {attrs['m']}"}, f"attributes of {spec.text}")
    run.log(f"{spec.text}: attributes {ms:.1f} ms (degree-only {degree_ms:.1f} ms, quick "
            f"{quick_ms:.2f} ms; a prediction {predict_ms or math.nan:.2f} ms), one pagerank "
            f"call {pagerank_ms:.2f} ms")


def measure(run, spec, g, stats) -> None:
    _attributes_cost(run, spec, g)
    confirm = getattr(run, "confirm", None)
    for name in run.algorithms:
        k = run.ks[0] if name in PER_FEATURE else 1
        inputs = tuning.training_inputs(name, g, k)
        check = CHECKS[name](k) if name in CHECKS else _values(name, k)
        if confirm is not None:  # the finalists of an earlier pool, timed again
            wanted = confirm.get(name, {}).get(spec.text)
            if not wanted:
                run.log(f"{spec.text} {name}: nothing to confirm")
                continue
            # as the pools hold them: sssp's delta a factor of its default (DeltaFactor), not
            # an absolute delta (a first confirm run timed {"delta": 4.0} as delta = 4)
            configs = [tuning._decoded(json.loads(c)) for c in wanted]
        else:
            configs = tuning.pool(name, given=set(inputs) - {"seed"} or None, features=k,
                                  random_count=RANDOM if run.random_count is None
                                  else run.random_count)
        began = time.perf_counter()
        frame = tuning.measure(g, name, inputs, configs=configs, repeat=run.repeat,
                               graph_name=spec.text, check=check)
        drift = float(frame["reference_drift"].iloc[0])
        run.log(f"{spec.text} {name}: {len(configs)} configurations in "
                f"{time.perf_counter() - began:.1f} s (the defaults again at the end: "
                f"{drift:.2f}x their first time); best {frame['config'].iloc[0]} "
                f"{frame['ms'].iloc[0]:.3f} ms")
        for rec in frame.to_dict("records"):
            default = rec["config"] == "{}"
            row = run.row(spec.text, name, "pool" if confirm is None else "confirm",
                          rec["config"], "ours",
                          "ours" if default else "variant", k=k if k > 1 else None)
            refused = rec["status"].startswith("refused")
            failed = rec["status"].startswith("error")
            row.update({key: rec[key] for key in rec if key.startswith(("attr", "qattr_"))
                        or key in ("config", "edges_per_s", "agrees", "backend")})
            row.update(ms=None if refused or failed else rec["ms"],
                       repeats=0 if refused or failed else int(rec["repeat"]),
                       status=f"n/a: {rec['status']}" if refused else rec["status"],
                       params={"config": json.loads(rec["config"]), "inputs": sorted(inputs),
                               "reference_drift": drift})
            what = f"{name} {rec['config']} on {spec.text}"
            if failed:  # a configuration that raised fails the run, as a wrong one does
                row.update(check="error", check_detail=rec["status"])
                run.log.fail(f"{what}: {rec['status']}")
            elif not refused:
                run.check(row, {"ok": rec["agrees"], "against": "the defaults",
                                "metric": rec["check_detail"], "value": ""}, what)
        del frame
        free_memory()


def training_table(rows, case: str = "pool") -> "object":
    """The rows of a run (or a results Parquet frame) as the training table of
    :func:`onyx_rapids.tuning.measure`: the ``case`` rows (``pool``; ``confirm``: a
    ``--confirm`` run's), ``status`` ``ok`` or ``refused: ...``."""
    import pandas as pd

    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
    frame = frame[(frame["suite"] == "tuning") & (frame["case"] == case)].copy()
    frame["status"] = np.where(frame["status"] == "ok", "ok",
                               frame["status"].str.replace("n/a: ", "", regex=False))
    return frame.reset_index(drop=True)


# ------------------------------------------------------------------------ train, evaluate

#: Issue 38's goals on the held-out graphs (percent of each graph's measured peak).
GOAL_TOP3, GOAL_AUTO = 98.0, 95.0
#: The input-sensitivity study (seed 004) on its 70 held-out real graphs, % of the exhaustive
#: search's peak: the MLP's top 3 and the most frequent best configuration; and the
#: attributes its trees found most important.
STUDY = {"bfs": {"top3": 96.3, "most_frequent": 87.5},
         "sssp": {"top3": 99.4, "most_frequent": 93.6}}
STUDY_ATTRIBUTES = ("volume", "degree assortativity", "wedge count", "Gini", "diameter")
COLUMNS = ("defaults", "most_frequent", "tree", "regressor", "top1", "top3")


def _read(paths, case: str = "pool", log=None) -> "object":
    """The training table of results files: a run's Parquet file, or its JSON report (the
    same rows, :func:`benchmarks.common.results_table`).  An (algorithm, graph) in two files
    would count twice: refused for pools; for confirm runs (``case="confirm"``) the later
    file's rows replace the earlier's, said through ``log`` (an algorithm timed again on its
    own, after a run of it that went wrong)."""
    import pandas as pd

    def table(path):
        if str(path).endswith(".json"):
            try:
                return results_frame(results_table(json.loads(Path(path).read_text())))
            except (ValueError, KeyError, TypeError) as e:  # not a run's report
                raise ValueError(f"{path}: not a 'python -m benchmarks run' report "
                                 f"({type(e).__name__}: {e})") from None
        return pd.read_parquet(path)

    frames, where = [], {}
    for path in paths:
        frame = training_table(table(path), case)
        pairs = frame[["algorithm", "graph"]].drop_duplicates().itertuples(index=False)
        for name, graph in pairs:
            earlier = where.get((name, graph))
            if earlier is not None:
                if case != "confirm":
                    raise ValueError(f"{name} on {graph} is in two results files, {earlier} "
                                     f"and {path}: give one run of each graph")
                frames = [f[(f["algorithm"] != name) | (f["graph"] != graph)] for f in frames]
                if log is not None:
                    log(f"{name} on {graph}: the confirm rows of {path} replace {earlier}'s")
            where[(name, graph)] = path
        frames.append(frame)
    if not frames:
        raise ValueError("no results files given")
    return pd.concat(frames, ignore_index=True)


def _drifts(table) -> dict:
    """(algorithm, graph) -> the pool's ``reference_drift`` (its defaults timed again at the
    end, over their time; 1 where the run did not record it, as runs before it did not)."""
    out = {}
    for key, group in table.groupby(["algorithm", "graph"], sort=False):
        params = json.loads(group["params"].iloc[0]) if "params" in group else {}
        value = params.get("reference_drift")
        out[key] = 1.0 if value is None or not np.isfinite(value) else float(value)
    return out


def _family(graph: str) -> str:
    """A spec without its seed and order (held-out graphs of a trained family differ in
    seed or parameters; the report lists those that share one)."""
    return graph.split("@")[0].split("~")[0]


#: The attributes a model reads (:func:`onyx_rapids.tuning_model.train`'s keywords): every
#: one, the degree part (no BFS sweeps or wedges), the degree part estimated from samples.
ATTRIBUTE_MODES = {"full": {}, "degrees": {"structure": False}, "quick": {"quick": True}}
#: The finalists of a held-out pool that ``--confirm`` runs time again: the pool's fastest.
CONFIRM_TOP = 6
#: A configuration that runs exactly as the defaults (the library's block size spelled out):
#: timed beside ``{}`` in a confirm run, their gap is the pool's noise.
SAME_AS_DEFAULTS = '{"block_size": 256}'


def _fill_quick(table, log=print):
    """``table`` with the ``qattr_`` columns (``g.attributes(quick=True)``) of the graphs
    measured before the library recorded them, computed on graphs built again from their
    specs (:func:`benchmarks.graphs.build`, the suite's directed mode; the host's backend: the
    same graph as the device's, which its exact ``attr_`` degree columns confirm)."""
    from onyx_rapids import attributes as graph_attributes

    from .. import graphs

    need = sorted(table["graph"].unique()) if "qattr_n" not in table else sorted(
        table.loc[table["qattr_n"].isna(), "graph"].unique())
    if not need:
        return table
    table = table.copy()
    for graph in need:
        g, _ = graphs.build(graph, undirected=False)
        quick = graph_attributes.attributes(g, quick=True)
        rows = table["graph"] == graph
        first = table.loc[rows].iloc[0]
        for key in ("n", "m", "out_degree_max", "in_degree_max", "out_degree_mean"):
            if first[f"attr_{key}"] != quick[key]:
                raise ValueError(f"graph {graph} built again has {key} {quick[key]}, the "
                                 f"measured one {first[f'attr_{key}']}: not the same graph")
        for key, value in quick.items():
            if not isinstance(value, (list, dict)):
                table.loc[rows, f"qattr_{key}"] = value
        log(f"quick attributes of {graph} computed again from its spec")
        del g
    return table


def confirm_set(models: dict, held, top: int | None = None) -> dict:
    """The configurations a ``--confirm`` run times again, by algorithm and held-out graph:
    ``{}``, :data:`SAME_AS_DEFAULTS` (where the pool has it), the pool's ``top`` fastest
    (default :data:`CONFIRM_TOP`) and
    every configuration any of ``models`` (name -> Model) picks (most frequent, tree,
    regressor, ``"auto"`` and ``"search"``), each once, ``{}`` first."""
    from onyx_rapids import tuning_model

    top = CONFIRM_TOP if top is None else top
    out: dict = {}
    held = tuning_model.read_table(held)  # measured, agreeing rows only
    for (name, graph), group in held.groupby(["algorithm", "graph"], sort=True):
        measured = group.groupby("config")["ms"].median().sort_values()
        picks = ["{}"] + ([SAME_AS_DEFAULTS] if SAME_AS_DEFAULTS in measured.index else [])
        picks += measured.index[:top].tolist()
        for model in models.values():
            if name not in model.algorithms:
                continue
            attrs = tuning_model._graph_attributes(
                group, tuning_model.QUICK_PREFIX if model.quick else tuning_model.PREFIX)
            chosen = [model.most_frequent(name), model.tree_choice(name, attrs),
                      *model.rank(name, attrs)[:3], *model.choices(name, attrs)[:3]]
            picks += [json.dumps(c, sort_keys=True) for c in chosen]
        out.setdefault(name, {})[graph] = list(dict.fromkeys(picks))
    return out


def _noise(scoring, drift, confirmed) -> dict:
    """(algorithm, graph) -> the noise of its times in percent: for an algorithm in
    ``confirmed`` (scored on confirm runs) ``{}`` against :data:`SAME_AS_DEFAULTS` (the same
    call), else the pool's drift."""
    out = {}
    for key, group in scoring.groupby(["algorithm", "graph"], sort=False):
        ms = group.groupby("config")["ms"].median()
        if key[0] in confirmed and "{}" in ms.index and SAME_AS_DEFAULTS in ms.index:
            out[key] = 100.0 * abs(ms[SAME_AS_DEFAULTS] / ms["{}"] - 1.0)
        else:
            out[key] = 100.0 * abs(drift.get(key, 1.0) - 1.0)
    return out


def train_and_evaluate(train_paths, held_out_paths, *, model_path, out="benchmarks/results",
                       tag="", seed=0, log=print, attributes="full", confirm_paths=None,
                       confirm_path=None, pool_scored=()) -> dict:
    """Train the tuning models on the ``tuning`` suite's training runs (Parquet results),
    save them to ``model_path`` (the package's model: ``onyx_rapids/data/tuning/model.json``),
    and score them on the held-out runs (:func:`onyx_rapids.tuning_model.evaluate`): per
    (algorithm, graph) the % of the graph's measured peak reached by the defaults, the most
    frequent best, the tree, the regressor's top-1, ``tuning="auto"``'s pick (the strategy
    :meth:`~onyx_rapids.tuning_model.Model.auto` names) and the best of its first three
    (``tuning="search"`` times those); the per-algorithm means and minima, the goals
    (:data:`GOAL_TOP3`, :data:`GOAL_AUTO`, auto above the defaults on average) and each
    algorithm's trees, and the top-1 / top-3 of the models reading the other attribute sets.

    ``attributes`` (:data:`ATTRIBUTE_MODES`) picks the saved model's attributes.  Every mode's
    model is trained (the quick attributes of graphs measured before they were recorded are
    computed again from their specs, :func:`_fill_quick`).  ``confirm_path``: write there the
    configurations to time again (:func:`confirm_set`) and return.  ``confirm_paths``: the
    results of ``run tuning --confirm`` on the held-out graphs: scores then read those times
    (each graph's peak the fastest of its finalists, timed again), the noise is ``{}`` against
    :data:`SAME_AS_DEFAULTS`; the algorithms in ``pool_scored`` are still scored on the pools
    (confirm rows that cannot be used: say why in the notes).  Writes
    ``run-tuning-heldout_<device>_<date>[_<tag>].{md,json}``; returns the report."""
    import datetime

    import pandas as pd

    from onyx_rapids import tuning_model

    from ..common import stem, write_json

    if attributes not in ATTRIBUTE_MODES:
        raise ValueError(f"attributes must be one of {', '.join(ATTRIBUTE_MODES)}, got "
                         f"{attributes!r}")
    train, held = _read(train_paths), _read(held_out_paths)
    overlap = sorted(set(train["graph"]) & set(held["graph"]))
    if overlap:
        raise ValueError(f"graphs both in training and held out: {', '.join(overlap)}")
    unknown = sorted(set(pool_scored) - set(held["algorithm"]))
    if unknown:
        raise ValueError(f"pool_scored: no held-out pools of {', '.join(unknown)}")
    train, held = _fill_quick(train, log), _fill_quick(held, log)
    models = {mode: tuning_model.train(train, seed=seed, **kw)
              for mode, kw in ATTRIBUTE_MODES.items()}
    model = models[attributes]
    if confirm_path is not None:
        chosen = confirm_set(models, held)
        Path(confirm_path).write_text(json.dumps(chosen, indent=1, sort_keys=True) + "\n")
        log(f"wrote {confirm_path}: {sum(len(v) for a in chosen.values() for v in a.values())}"
            f" configurations of {sum(len(a) for a in chosen.values())} held-out pools")
        return {"confirm": chosen, "path": str(confirm_path)}
    Path(model_path).parent.mkdir(parents=True, exist_ok=True)
    model.save(model_path)
    log(f"trained on {train['graph'].nunique()} graphs ({len(train)} rows), {attributes} "
        f"attributes; saved {model_path}")
    scoring, confirmed = held, confirm_paths is not None
    if confirmed:
        scoring = _fill_quick(_read(confirm_paths, "confirm", log), log)
        if set(scoring["graph"]) != set(held["graph"]):
            raise ValueError("the confirm runs' graphs "
                             f"({', '.join(sorted(set(scoring['graph'])))}) are not the "
                             f"held-out ones ({', '.join(sorted(set(held['graph'])))})")
        scoring = pd.concat([scoring[~scoring["algorithm"].isin(pool_scored)],
                             held[held["algorithm"].isin(pool_scored)]], ignore_index=True)
    on_confirm = set(scoring["algorithm"]) - set(pool_scored) if confirmed else set()
    scores = tuning_model.evaluate(model, scoring)
    noise = _noise(scoring, _drifts(scoring), on_confirm)
    scores["noise"] = [noise[(a, g)] for a, g in zip(scores["algorithm"], scores["graph"])]
    missing = scores[scores[list(COLUMNS)].isna().any(axis=1)]
    if len(missing):
        log("no time for a pick on: " + ", ".join(f"{a} {g}" for a, g in
                                                   zip(missing["algorithm"], missing["graph"])))
    # the models reading the other attribute sets: what they lose or win
    variants = {}
    for mode, other in models.items():
        table = tuning_model.evaluate(other, scoring)
        table = table.merge(scores[["algorithm", "graph", "noise"]], on=["algorithm", "graph"])
        variants[mode] = {name: {
            "top1_mean": float(g["top1"].mean()), "top1_min": float(g["top1"].min()),
            "top3_mean": float(g["top3"].mean()), "top3_min": float(g["top3"].min()),
            "auto": other.auto(name),
            "never_loses": bool((g["defaults"] - g["top1"] - g["noise"] <= 0).all())}
            for name, g in table.groupby("algorithm", sort=True)}
    summary = []
    for name, group in scores.groupby("algorithm", sort=True):
        row = {"algorithm": name, "graphs": len(group), "auto": model.auto(name)}
        for c in COLUMNS:
            row[f"{c}_mean"], row[f"{c}_min"] = float(group[c].mean()), float(group[c].min())
        row["goal_top3"] = row["top3_min"] >= GOAL_TOP3
        row["goal_auto"] = row["top1_min"] >= GOAL_AUTO
        row["auto_beats_defaults"] = row["top1_mean"] > row["defaults_mean"]
        # "auto" as the default: on no graph below the defaults by more than the pool's drift
        short = group["defaults"] - group["top1"] - group["noise"]
        row["auto_worst_vs_defaults"] = float((group["top1"] - group["defaults"]).min())
        row["auto_never_loses"] = bool((short <= 0).all())
        summary.append(row)
    device = model.meta["device"]
    date = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    report = {"device": device, "date": date, "model": str(model_path),
              "training_graphs": sorted(set(train["graph"])),
              "held_out_graphs": sorted(set(held["graph"])),
              "held_out_families_in_training": sorted(
                  {_family(g) for g in held["graph"]} & {_family(g) for g in train["graph"]}),
              "scores": scores.to_dict("records"), "summary": summary,
              "attributes": attributes, "confirmed": confirmed, "variants": variants,
              "pool_scored": sorted(pool_scored) if confirmed else [],
              "trees": {name: model.describe(name) for name in model.algorithms},
              "importances": {name: model.importances(name) for name in model.algorithms}}
    peak = ("the fastest of its finalists (the pool's fastest, the defaults and every "
            "model's picks) timed again by `run tuning --confirm`; noise: `{}` against the "
            "identical " + f"`{SAME_AS_DEFAULTS}`" if confirmed else
            "the fastest configuration of the pool; noise: the pool's drift (the defaults "
            "timed again at its end)")
    lines = [f"# Tuning: held-out table ({device}, {date})", "",
             f"Trained on {len(report['training_graphs'])} graphs ({attributes} attributes), "
             f"scored on {len(report['held_out_graphs'])} held-out graphs: % of each graph's "
             f"peak ({peak}). top1 is `tuning=\"auto\"`, top3 "
             f"`tuning=\"search\"`. Goals: top3 >= {GOAL_TOP3:g}% and top1 >= {GOAL_AUTO:g}% on "
             "every graph, top1 above the defaults on average. 'auto never loses': on no graph "
             "is top1 below the defaults by more than the noise, the condition for making "
             "`\"auto\"` the default."
             + (" Scored on the pools, not on the confirm runs: "
                f"{', '.join(report['pool_scored'])} (see the notes)."
                if report["pool_scored"] else ""), "",
             "`auto` follows the strategy (defaults, most frequent, tree or regressor) with the "
             "best leave-one-graph-out share of the peak on the training graphs.", "",
             "| algorithm | graphs | defaults | most frequent | tree | regressor top-1 | auto "
             "follows | top-1 (auto) | top-3 (search) | top-3 goal | auto goal | auto > "
             "defaults | auto never loses (worst) |",
             "|---|---:|" + "---:|" * 4 + "---|" + "---:|" * 2 + "---|---|---|---|"]
    for r in summary:
        cells = [f"{r[f'{c}_mean']:.1f} (min {r[f'{c}_min']:.1f})" for c in COLUMNS]
        cells.insert(COLUMNS.index("top1"), r["auto"])
        lines.append(f"| {r['algorithm']} | {r['graphs']} | {' | '.join(cells)} | "
                     f"{'met' if r['goal_top3'] else 'missed'} | "
                     f"{'met' if r['goal_auto'] else 'missed'} | "
                     f"{'yes' if r['auto_beats_defaults'] else 'no'} | "
                     f"{'yes' if r['auto_never_loses'] else 'no'} "
                     f"({r['auto_worst_vs_defaults']:+.1f}) |")
    lines += ["", "The models of each attribute set (`full`: every attribute; `degrees`: no "
              "BFS sweeps or wedges; `quick`: the degree part estimated from samples, "
              "`g.attributes(quick=True)`):", "",
              "| algorithm | " + " | ".join(f"{mode}: auto / top-1 / top-3 / never loses"
                                          for mode in variants) + " |",
              "|---|" + "---|" * len(variants)]
    for name in sorted(model.algorithms):
        cells = []
        for mode, table in variants.items():
            r = table.get(name)
            cells.append("-" if r is None else
                         f"{r['auto']} / {r['top1_mean']:.1f} (min {r['top1_min']:.1f}) / "
                         f"{r['top3_mean']:.1f} (min {r['top3_min']:.1f}) / "
                         f"{'yes' if r['never_loses'] else 'no'}")
        lines.append(f"| {name} | {' | '.join(cells)} |")
    lines += ["", "Next to the study (seed 004: an MLP on 70 held-out real graphs, its own GPU "
              "and configuration space), means:", "",
              "| algorithm | most frequent: ours | most frequent: study | top-3: ours | "
              "top-3: study |", "|---|---:|---:|---:|---:|"]
    for r in summary:
        if r["algorithm"] in STUDY:
            study = STUDY[r["algorithm"]]
            lines.append(f"| {r['algorithm']} | {r['most_frequent_mean']:.1f} | "
                         f"{study['most_frequent']:.1f} | {r['top3_mean']:.1f} | "
                         f"{study['top3']:.1f} |")
    lines += ["", "The trees' most important attributes (importance averaged over the graph "
              f"kinds' trees; the study's: {', '.join(STUDY_ATTRIBUTES)}):", "",
              "| algorithm | attributes (importance) |", "|---|---|"]
    for name, ranked in report["importances"].items():
        top = ", ".join(f"{k} ({v:.2f})" for k, v in list(ranked.items())[:5])
        lines.append(f"| {name} | {top or 'none (one configuration per kind)'} |")
    lines += ["", "## Every held-out graph", "", "| algorithm | graph | best ms | best "
              "configuration | " + " | ".join(COLUMNS) + " |", "|---|---|---:|---|"
              + "---:|" * len(COLUMNS)]
    for r in report["scores"]:
        lines.append(f"| {r['algorithm']} | {r['graph']} | {r['best_ms']:.3f} | "
                     f"`{r['best_config']}` | "
                     + " | ".join(f"{r[c]:.1f}" for c in COLUMNS) + " |")
    lines += ["", "## The models", ""]
    for name, text in report["trees"].items():
        lines += ["```", text, "```", ""]
    path = stem(out, "tuning-heldout", device, date, tag)
    write_json(suffixed(path, ".json"), report)
    suffixed(path, ".md").write_text("\n".join(lines) + "\n")
    log(f"wrote {path}.{{md,json}}")
    report["markdown"] = "\n".join(lines)
    report["path"] = str(path)
    return report
