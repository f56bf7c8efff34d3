"""Whether a run goes to a fused engine instead of the loop: the persistent kernel of
:mod:`onyx_rapids.kernels.pagerank`, which runs every bulk, folded, pulling iteration of
PageRank (and, as its ``APPNP`` step, of feature propagation) in one launch."""

from __future__ import annotations

from ... import streaming
from ...registry import unsupported


def fused_choice(name, g, plan, *, width: int, nbytes: int, too_wide: str) -> bool:
    """``fused`` as given, or when None, whether the run is one the kernel can do (bulk,
    pulling, folded, ``width`` 1: one teleport or feature column, edges to read, no
    ``edge_access``, no ``approximation``: the kernel runs exact iterations only) and, on
    a graph placed on the host, its ``nbytes`` of edge arrays fit on the device for the call
    or cannot be streamed either (:mod:`onyx_rapids.streaming`: else the generated pull
    streams them, where the kernel would read them zero-copy).
    ``fused=True`` on a run it cannot do is refused (``too_wide``: why, for ``width`` > 1)."""
    execution = plan.execution
    if execution.fused is None:
        return width == 1 and plan.bulk_folded_pull and g.m > 0 \
            and execution.edge_access is None and execution.approximation is None \
            and (not streaming.preferred(g) or streaming.whole_fits(g, nbytes))
    if execution.fused and width != 1:
        raise unsupported(name, "fused=True", too_wide)
    if execution.fused and not plan.bulk_folded_pull:
        raise unsupported(name, "fused=True", "the fused kernel runs folded, pulling "
                          "iterations; leave fold and direction unset")
    return execution.fused
