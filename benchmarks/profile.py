"""Where the time of an ablation run goes: each generated kernel, and everything else.

For each chosen algorithm and variant on one ablation graph family: a warm-up call, a timed
call (device synchronized around it), then a call under :func:`onyx_rapids.operators.
profile_kernels`, which synchronizes around every kernel launch.  Prints, per variant, the call
time, the sum of its kernels and the rest (array set-up, convergence checks, frontier tests,
the result frame), then one line per kernel with its launches, time and (on a GPU) registers
per thread.  Writes the same as JSON and Markdown.

    python -m benchmarks.profile --family rmat --algorithms personalized_pagerank \\
        --variants FA/CD,FA/CD/fold [--scale 22] [--k 4] [--max-iter 10] [--out DIR]
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import warnings
from pathlib import Path

from onyx_rapids import device, operators

from . import ablation
from .foundation import Bench, _slug, _timed, variant_name


def _describe(spec) -> str:
    steps = "+".join(s.kind[0].upper() for s in spec.steps)
    return (f"{spec.direction} {spec.mapping} k={spec.k} T={spec.group} coop={spec.coop} "
            f"steps={steps}")


def _registers(kernel):
    if device.is_simulator():
        return None  # the simulator compiles nothing
    regs = kernel.get_regs_per_thread()
    return max(regs.values()) if isinstance(regs, dict) else regs


def profile_variant(algorithm, g, inputs, k, variant, max_iter) -> dict:
    fa, cd, fold = variant
    tol = 1e-12

    def call():
        return ablation.run_algorithm(algorithm, g, inputs, k, variant, tol, max_iter)

    call()  # warm-up: compiles
    (_, info), total_ms = _timed(call)
    with operators.profile_kernels() as times:
        (_, info), profiled_ms = _timed(call)
    kernels = []
    for spec, (launches, ms) in sorted(times.items(), key=lambda item: -item[1][1]):
        kernel = next(value[0] for key, value in operators.KERNEL_CACHE.entries.items()
                      if key[0] == spec)  # generated kernels: ((spec, functions), (kernel, _))
        kernels.append({"kernel": _describe(spec), "launches": launches, "ms": ms,
                        "registers": _registers(kernel)})
    kernel_ms = sum(x["ms"] for x in kernels)
    return {"algorithm": algorithm, "variant": variant_name(variant), "k": k,
            "iterations": int(info["iterations"]), "direction": info.get("direction"),
            "call_ms": total_ms, "profiled_call_ms": profiled_ms, "kernel_ms": kernel_ms,
            "other_ms": profiled_ms - kernel_ms, "kernels": kernels}


def markdown(report: dict) -> str:
    lines = [f"# Kernel profile: {report['device'].get('device')} ({report['date']})", "",
             f"Graph: {report['family']} {report['graph']}; {report['max_iter']} iterations per "
             "call.  call ms: a plain synchronized call; kernels / other: a second call with the "
             "device synchronized around every launch (other = array set-up, convergence "
             "checks, frontier tests, result frame).", ""]
    for r in report["runs"]:
        lines += [f"## {r['algorithm']} k={r['k']} {r['variant']} ({r['direction']})", "",
                  f"call {r['call_ms']:.1f} ms; profiled call {r['profiled_call_ms']:.1f} ms = "
                  f"kernels {r['kernel_ms']:.1f} + other {r['other_ms']:.1f}", "",
                  "| kernel | launches | ms | ms/launch | registers |",
                  "|---|---:|---:|---:|---:|"]
        for x in r["kernels"]:
            regs = "-" if x["registers"] is None else str(x["registers"])
            lines.append(f"| {x['kernel']} | {x['launches']} | {x['ms']:.2f} | "
                         f"{x['ms'] / x['launches']:.3f} | {regs} |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.profile",
                                description=__doc__.splitlines()[0])
    p.add_argument("--family", default="rmat", choices=ablation.FAMILIES)
    p.add_argument("--algorithms", default="personalized_pagerank")
    p.add_argument("--variants", default="FA/CD,FA/CD/fold")
    p.add_argument("--quick", action="store_true", help="the ablation's tiny graphs")
    p.add_argument("--scale", type=int)
    p.add_argument("--grid-side", type=int)
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--max-iter", type=int, default=10)
    p.add_argument("--out", default="benchmarks/results")
    p.add_argument("--tag", default="")
    args = p.parse_args(argv)
    algorithms = ablation._choose(args.algorithms, ablation.ALGORITHMS, "--algorithms", p)
    by_name = {variant_name(v).lower(): v for v in ablation.VARIANTS}
    try:
        variants = [by_name[x.strip().lower()] for x in args.variants.split(",") if x.strip()]
    except KeyError as e:
        p.error(f"--variants: unknown {e}; choose from {', '.join(by_name)}")
    forwarded = ["--quick"] if args.quick else []
    for key in ("scale", "grid_side"):
        if getattr(args, key) is not None:
            forwarded += [f"--{key.replace('_', '-')}", str(getattr(args, key))]
    for algorithm in algorithms:
        if algorithm not in ablation.FAMILY_ALGORITHMS[args.family]:
            p.error(f"{algorithm} does not run on the {args.family} family")
    settings = ablation.parse_args(forwarded + ["--families", args.family])
    bench = Bench()
    g, stats, context = ablation.build_family(bench, settings, args.family)
    warnings.simplefilter("ignore", RuntimeWarning)
    runs = []
    for algorithm in algorithms:
        k = 1 if algorithm == "pagerank" else args.k
        inputs = ablation.make_inputs(algorithm, g, k, context)
        for v in variants:
            if v[1] and not ablation.supports_change_driven(algorithm):
                continue
            r = profile_variant(algorithm, g, inputs, k, v, args.max_iter)
            bench.log(f"{algorithm} {r['variant']}: call {r['call_ms']:.1f} ms, kernels "
                      f"{r['kernel_ms']:.1f} ms, other {r['other_ms']:.1f} ms")
            runs.append(r)
    info = device.info()
    report = {"benchmark": "profile", "date": datetime.date.today().isoformat(), "device": info,
              "family": args.family, "graph": {k: stats[k] for k in ("n", "m", "max_degree")},
              "max_iter": args.max_iter, "runs": runs}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"profile_{_slug(info.get('device'))}_{report['date']}_{args.family}"
    if args.tag:
        stem += f"_{_slug(args.tag)}"
    (out / f"{stem}.json").write_text(json.dumps(report, indent=2) + "\n")
    text = markdown(report)
    (out / f"{stem}.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
