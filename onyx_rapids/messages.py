"""Error-message parts shared across the library: how many offending items a message names and
how they are listed (the input readers of :mod:`onyx_rapids.io`, the id lookups of
:mod:`onyx_rapids.ids`, the builds of :mod:`onyx_rapids.construction`), and the two refusals of
symmetric input (``directed=False`` CSR) that the device build and the host build both raise.

It imports nothing, so that every layer may use it."""

SHOW = 10  # how many offending items an error message names


def listing(items, total=None) -> str:
    """The first :data:`SHOW` of ``items`` joined by commas, then ``... (total in all)`` when
    there are more (``total``: how many there are, when ``items`` holds only the first)."""
    items = list(items)
    total = len(items) if total is None else total
    shown = ", ".join(str(x) for x in items[:SHOW])
    return shown + (f", ... ({total} in all)" if total > SHOW else "")


def no_reverse_message(edges: str) -> str:
    """The error of symmetric input (``directed=False`` CSR) with ``edges`` lacking a reverse."""
    return ("directed=False needs a symmetric edge set (every u->v with a v->u), but "
            f"{edges} have no reverse edge; pass directed=True, or add the reverse edges")


def asymmetric_weights_message(edges: str) -> str:
    """The error of symmetric input whose ``edges`` weigh otherwise than their reverse."""
    return ("directed=False needs symmetric weights, but the weights of "
            f"{edges} differ from their reverse edge's; pass directed=True, or make the "
            "weights symmetric")
