"""Resource report of the generated kernels: registers and local memory per thread.

Runs PageRank and label propagation variants on a small RMAT graph so that their kernels are
compiled, then prints one line per cached kernel (GPU only: the simulator compiles nothing).

    python -m benchmarks.kernel_report [--scale 16] [--k 4]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

import onyx_rapids as onyx
from onyx_rapids import device, operators


def _describe(spec):
    steps = "+".join(s.kind[0].upper() for s in spec.steps)
    return (f"{spec.direction:4s} {spec.mapping:5s} k={spec.k:<3d} T={spec.group:<3d} "
            f"coop={spec.coop:<2d} steps={steps}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=16)
    parser.add_argument("--k", type=int, default=4)
    args = parser.parse_args(argv)
    edges = onyx.datasets.rmat(args.scale, 16, seed=0)
    g = onyx.Graph.from_edgelist(edges, "src", "dst")
    seeds = pd.DataFrame({"vertex": device.to_host(g.vertices)[:: max(1, g.n // 100)]})
    seeds["label"] = np.arange(len(seeds)) % args.k
    warnings.simplefilter("ignore")
    timings = []
    for fa in (True, False):
        for cd in (False, True):
            for fold in (False, True):
                for name, run in (("pagerank", lambda **o: onyx.pagerank(g, max_iter=5, **o)),
                                  ("lp", lambda **o: onyx.label_propagation(
                                      g, seeds, args.k, max_iter=5, **o))):
                    opts = dict(feature_aware=fa, change_driven=cd, fold=fold)
                    run(**opts)
                    device.synchronize()
                    t = time.perf_counter()
                    run(**opts)
                    device.synchronize()
                    timings.append((name, opts, (time.perf_counter() - t) * 1e3 / 5))
    print(f"{'kernel':60s} {'regs':>5s} {'local B':>8s}")
    for (spec, _), (kernel, _) in operators.KERNEL_CACHE.entries.items():
        regs = kernel.get_regs_per_thread()
        local = kernel.get_local_mem_per_thread()
        regs = max(regs.values()) if isinstance(regs, dict) else regs
        local = max(local.values()) if isinstance(local, dict) else local
        print(f"{_describe(spec):60s} {regs:5d} {local:8d}")
    for name, opts, ms in timings:
        print(f"{name:9s} {opts} {ms:8.3f} ms/iter (5 iterations, scale {args.scale})")


if __name__ == "__main__":
    main()
