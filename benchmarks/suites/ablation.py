"""Suites ``ablation`` and ``profile`` (undirected-mode graphs).

ablation (ONYX Table 7.2 / Figure 7.3, SIMD-X's ablation): every variant of an algorithm that
the registry lists (``variants()``: feature_aware x change_driven x fold x direction for the
propagations, direction x filter x fused for the traversals), timed against the library's
defaults ("ours", variant ``default``).  Iterative algorithms run ``max_iter`` 10 (quick 2) at
tol 1e-12, so every variant does the same iterations; ms per iteration = median call /
iterations.  The default algorithms are those with a ``feature_aware`` option; any other
registry algorithm may be named.  Bipartite algorithms (ALS) run on ratings graphs only, and
ratings graphs run them only.  ``--ks`` sweeps k (Figure 7.3: ``--variants`` to keep FA/NFA).
Each result must be sane (finite; sums where they apply) and agree with the default's
(catalog.AGREE; traversals: suites.traversal.METRIC).  ``params`` also hold iterations,
direction, kernels compiled, compile ms (first call - median) and, on a GPU, the peak bytes
one call holds through CuPy's memory pool (``peak_run_bytes``).

profile: one call per variant (the default, plus ``--variants``) split by
``operators.profile_kernels`` into each generated kernel (launches, ms, registers on a GPU)
and the rest (set-up, convergence tests, result frame); checked against an unprofiled call.
"""

from __future__ import annotations

import numpy as np

from onyx_rapids import device, operators
from onyx_rapids.registry import variant_name

from .. import catalog
from ..catalog import call, make_inputs
from ..common import compare, free_memory, median, sane, timed
from .traversal import METRIC as TRAVERSAL_METRIC
from .traversal import _values as traversal_values

MAX_ITER = {False: 10, True: 2}
TOL = 1e-12


def algorithms():
    return tuple(a for a, e in catalog.algorithms().items()
                 if "fold" in e.options)


def _setup(run, spec, stats, entry):
    """(ks, context) for the algorithm on this graph, or the n/a reason."""
    ratings = spec.kind == "ratings"
    if (entry.graph == "bipartite") != ratings:
        return ("n/a: bipartite algorithms run on ratings graphs only" if not ratings else
                "n/a: ratings graphs run the bipartite algorithms only"), None
    context = {}
    if ratings:
        context["sides"] = None  # filled per graph below
    k_inputs = {"sources", "labels", "k", "features", "priors", "potential", "init"}
    ks = run.ks if entry.iterative and entry.input_names() & k_inputs else (1,)
    return ks, context


def _sides(g, stats):
    return (device.to_host(g.vertices) >= stats["params"]["users"]).astype(np.int8)


def _result(entry, frame, g, k):
    if entry.name in TRAVERSAL_METRIC:
        return traversal_values(entry.name, frame, g)
    return catalog.result_matrix(entry, frame, k)


def _agree(entry, mine, ref, against):
    metric, tol = TRAVERSAL_METRIC.get(entry.name) or catalog.agreement_metric(entry.name)
    return compare(metric, mine, ref, against=against, tol=tol)


def _variants(run, entry):
    """The registry's variants named in ``--variants``, and option settings given there as
    ``name=value[/name=value]`` (e.g. ``width=4``) that the algorithm supports."""
    chosen = entry.variants()
    if run.variants:
        named = [v for v in chosen if variant_name(v).lower() in run.variants]
        settings = [catalog.parse_options(v) for v in run.variants if "=" in v]
        chosen = named + [o for o in settings if set(o) <= set(entry.options)]
    return chosen


class _Peak:
    """High-water mark of the bytes CuPy's pool hands out (a CuPy MemoryHook's callbacks)."""

    name = "onyx_benchmarks_peak"

    def __init__(self):
        self.live = self.peak = 0

    def malloc_postprocess(self, **kw):
        self.live += int(kw["mem_size"])
        self.peak = max(self.peak, self.live)

    def free_postprocess(self, **kw):
        self.live -= int(kw["mem_size"])


def _peak_hook():
    if device.BACKEND != "gpu":
        return None
    hook = type("PeakHook", (_Peak, device.xp.cuda.MemoryHook), {})()
    _Peak.__init__(hook)
    return hook


def _cases(run, spec, g, stats):
    """(name, entry, ks, context) of each algorithm this run measures; an algorithm that cannot
    run on this graph gets its row (the reason) and is skipped."""
    for name in run.algorithms:
        entry = catalog.get(name)
        ks, context = _setup(run, spec, stats, entry)
        if context is None:
            run.row(spec.text, name, "-", "default", "ours", "ours", status=ks)
            continue
        if "sides" in context:
            context["sides"] = _sides(g, stats)
        yield name, entry, ks, context


def measure(run, spec, g, stats) -> None:
    graph, max_iter = spec.text, MAX_ITER[run.quick]
    for name, entry, ks, context in _cases(run, spec, g, stats):
        for k in ks:
            case, tag = f"k={k}", f"{name} k={k} on {graph}"
            try:
                inputs = make_inputs(entry, g, k, context)
            except Exception as e:
                run.error(run.row(graph, name, case, "default", "ours", "ours", k=k), e, "inputs")
                continue
            ref = None
            for options in [{}] + _variants(run, entry):
                vname = variant_name(options)
                row = run.row(graph, name, case, vname, "ours", "variant" if options else "ours",
                              k=k, label=f"onyx_rapids {vname}",
                              params={"k": k, "max_iter": max_iter, "tol": TOL, **options})
                fn = lambda: call(entry, g, inputs, iterations=max_iter if entry.iterative  # noqa
                                  else None, tol=TOL if entry.iterative else None, **options)
                misses = operators.kernel_cache_info()["misses"]
                free_memory()
                hook = _peak_hook()
                try:
                    if hook is None:
                        (frame, info), first = timed(fn)
                    else:
                        with hook:
                            (frame, info), first = timed(fn)
                    compiled = operators.kernel_cache_info()["misses"] - misses
                    del frame
                    times = []
                    for _ in range(run.repeat):
                        (frame, info), ms = timed(fn)
                        times.append(ms)
                except Exception as e:
                    if isinstance(e, ValueError) and "does not support" in str(e):
                        row.update(status=f"n/a: {' '.join(str(e).split())[:200]}")
                        continue
                    run.error(row, e, f"variant {vname}")
                    continue
                its = int(info.get("iterations") or 1)
                row.update(first_call_ms=first, times_ms=times, repeats=len(times),
                           ms=median(times) / its)
                row["params"].update(iterations=its, direction=info.get("direction"),
                                     kernels_compiled=compiled, compile_ms=first - median(times),
                                     peak_run_bytes=hook.peak if hook else None)
                try:
                    mine = _result(entry, frame, g, k)
                    del frame
                    if entry.name not in TRAVERSAL_METRIC:
                        s = sane(catalog.SUMS.get(name), mine)
                        if not s["ok"]:
                            run.check(row, {**s, "against": "sanity", "metric": "sane"}, tag)
                            continue
                    if ref is None:
                        ref = mine
                        row.update(check="ok", check_against="sanity")
                    else:
                        run.check(row, _agree(entry, mine, ref, "default"), f"{tag} {vname}")
                except Exception as e:
                    run.error(row, e, "the check")
                run.log(f"{tag} {vname}: {row['ms']:.3f} {run.suite.unit}, {its} iterations, "
                        f"check {row['check']}")
            del inputs, ref
            free_memory()


def _describe(spec) -> str:
    steps = "+".join(s.kind[0].upper() for s in getattr(spec, "steps", ()))
    fields = [f"{a}={getattr(spec, a)}" for a in ("direction", "mapping", "k", "group", "coop",
                                                  "width") if hasattr(spec, a)]
    if getattr(spec, "chunk_kernel", False):  # the heavy vertices' chunks of a pull
        fields.append("heavy-chunks")
    return " ".join(fields + ([f"steps={steps}"] if steps else [])) or str(spec)


def _registers(spec):
    if device.is_simulator():
        return None
    for key, value in operators.KERNEL_CACHE.entries.items():
        if key[0] == spec:
            regs = value[0].get_regs_per_thread()
            return max(regs.values()) if isinstance(regs, dict) else regs
    return None


def measure_profile(run, spec, g, stats) -> None:
    graph, max_iter = spec.text, MAX_ITER[run.quick]
    for name, entry, ks, context in _cases(run, spec, g, stats):
        for k in ks:
            inputs = make_inputs(entry, g, k, context)
            for options in [{}] + (_variants(run, entry) if run.variants else []):
                vname = variant_name(options)
                tag = f"{name} k={k} {vname} on {graph}"
                row = run.row(graph, name, f"k={k} {vname}", vname, "ours", "ours", k=k,
                              params={"k": k, "max_iter": max_iter, **options})
                fn = lambda: call(entry, g, inputs, iterations=max_iter if entry.iterative  # noqa
                                  else None, tol=TOL if entry.iterative else None, **options)
                out = run.timed(row, fn)
                if out is None:
                    continue
                try:
                    with operators.profile_kernels() as times:
                        (frame, _), profiled = timed(fn)
                    kernels = [{"kernel": _describe(s), "launches": n, "ms": ms,
                                "registers": _registers(s)}
                               for s, (n, ms) in sorted(times.items(), key=lambda x: -x[1][1])]
                    kernel_ms = sum(x["ms"] for x in kernels)
                    row["params"].update(profiled_call_ms=profiled, kernel_ms=kernel_ms,
                                         other_ms=profiled - kernel_ms, kernels=kernels)
                    run.check(row, _agree(entry, _result(entry, frame, g, k),
                                          _result(entry, out[0], g, k), "unprofiled call"), tag)
                    run.log(f"{tag}: call {row['ms']:.1f} ms = kernels {kernel_ms:.1f} + other "
                            f"{profiled - kernel_ms:.1f} ({len(kernels)} kernels)")
                except Exception as e:
                    run.error(row, e, "the profile")
            free_memory()
