"""What a propagation run does, resolved once from its ``Execution`` (:class:`Plan`): whether
it folds, which direction its steps take, whether the folded bulk pull keeps its sums in
registers and whether change-driven steps may visit only what their push reached.

``fold=None`` is decided here from the run's steps (DGL's ``core.message_passing`` decides
fusion from what the functions are): the bulk pull folds (its update then reads each vertex's
sums where the pull left them), a push or a change-driven step does not.  An algorithm that
runs unfolded by default says so in its registry entry (``defaults=dict(fold=False)``), and
``fold=`` given by the user overrides both.
"""

from __future__ import annotations

import dataclasses

from ... import operators as ops
from ...registry import CHANGED, Refuse

#: Bulk iterations activate every vertex: ``activation_threshold`` would do nothing there.
BULK_ACTIVATION = Refuse(dict(change_driven=False, approximation=CHANGED),
                         "activation_threshold sets which vertices change-driven iterations "
                         "activate; pass change_driven=True or 'auto'",
                         knobs=("activation_threshold",))

#: The rules of every propagation that takes the approximation knobs (with BULK_ACTIVATION):
#: partial edge processing runs in bulk pulls only.
KNOB_RULES = (BULK_ACTIVATION,
              Refuse(dict(change_driven=(True, "auto"), approximation=CHANGED),
                     "edge_fraction runs in bulk iterations; leave change_driven False",
                     knobs=("edge_fraction",)),
              Refuse(dict(direction="push", approximation=CHANGED),
                     "edge_fraction runs in pulls; leave direction unset or 'pull'",
                     knobs=("edge_fraction",)))

#: Keep the aggregate of bulk folded pulls in registers (``ops.Edge(.., store=False)``): the
#: update reads each vertex's sums where the pull left them, so an iteration neither zeroes,
#: adds to nor re-reads an n x k aggregate.  False stores it (the ablation).
REGISTERS = True

#: Run change-driven iterations of ``local`` propagations over the vertices their push reached
#: only (the push marks its destinations; the vertex step visits those, updates the rows in
#: place and counts the next frontier's out-edges in the same kernel), instead of a vertex
#: step over all n.  False: every change-driven iteration visits every vertex (the ablation).
LOCAL = True


@dataclasses.dataclass(frozen=True)
class Plan:
    """A run's execution with its defaults resolved: ``fold`` and ``direction`` ("push",
    "pull", or "auto": chosen per iteration, only by change-driven unfolded runs; under
    ``change_driven="auto"`` they are those of its bulk iterations)."""

    execution: object
    fold: bool
    direction: str

    @classmethod
    def of(cls, execution) -> "Plan":
        change_driven = execution.change_driven is True
        fold = execution.fold
        if fold is None:  # the bulk pull folds; pushes and change-driven steps do not
            fold = not change_driven and execution.direction in (None, "auto", "pull")
        direction = execution.direction or "auto"
        if direction == "auto" and (fold or not change_driven):
            direction = "push" if (change_driven and fold) else "pull"
        return cls(execution, fold, direction)

    @property
    def change_driven(self):
        return self.execution.change_driven

    @property
    def folded_push(self) -> bool:
        return self.fold and self.direction == "push"

    @property
    def bulk_folded_pull(self) -> bool:
        """Bulk (or "auto") iterations in one folded pulling kernel: what the fused engines
        run (:mod:`.engines`)."""
        return self.change_driven is not True and self.fold and self.direction == "pull"

    @property
    def registers(self) -> bool:
        """Whether the bulk folded pull keeps its sums in registers (:data:`REGISTERS`)."""
        return REGISTERS and self.fold and self.direction == "pull"

    def local(self, local: bool, in_kernel: bool) -> bool:
        """Whether the unfolded change-driven steps of a ``local`` propagation visit only
        what their push reached (:data:`LOCAL`; the stop test must run in their kernel)."""
        return bool(local and LOCAL and in_kernel)

    @property
    def options(self) -> ops.MapOptions:
        """The operators' options of every step of the run."""
        return ops.MapOptions.of(self.execution)
