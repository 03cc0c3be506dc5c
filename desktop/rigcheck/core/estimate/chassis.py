"""What GPUs a machine can take, how many, and what else an upgrade would need.

An upgrade suggestion must fit the machine it is for: a desktop takes PCIe cards, an HGX server SXM
modules, an OAM server OAM modules, and a laptop or a system-on-chip (Apple M, Strix Halo, DGX Spark)
takes none. The kind of machine is read from its GPUs' catalog ``form_factor`` and its CPU:

- any SXM GPU: an SXM server (HGX/DGX baseboard) of up to :data:`NODE_GPUS` modules;
- any OAM GPU: an OAM server (OCP baseboard) of up to :data:`NODE_GPUS` modules;
- only laptop or SoC GPUs: nothing can be added or swapped;
- otherwise PCIe cards: a workstation or server CPU (Xeon, EPYC, Threadripper) or more than
  :data:`DESKTOP_GPUS` GPUs already means a workstation with up to :data:`NODE_GPUS` cards; any other
  machine is a desktop with at most :data:`DESKTOP_GPUS`.

What else a multi-GPU upgrade needs comes from the PSU budget of the machine it would become
(:func:`rigcheck.core.estimate.power.power_budget`): a bigger PSU when the budget says so, a free slot
and a set of GPU power cables per card.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from rigcheck.core.catalog import Catalog, FormFactor, GpuSpec
from rigcheck.core.estimate.power import power_budget
from rigcheck.core.machine import Machine
from rigcheck.core.said import Said, render_all, say

#: GPUs one server baseboard holds (HGX/DGX and OAM boards carry 8)
NODE_GPUS = 8
#: GPUs a desktop takes: a desktop CPU gives its graphics x16 lanes to one slot or splits them x8/x8
#: over two (Intel LGA1700/1851 and AMD AM5 boards); more cards need a workstation platform.
#: Uncertain as a rule: boards with PCIe switches or risers exist, and a 3-4 slot wide card may leave
#: room for only one.
DESKTOP_GPUS = 2

_SERVER_CPU = re.compile(r"\b(?:xeon|epyc|threadripper)\b", re.IGNORECASE)

Kind = Literal["desktop", "workstation", "sxm_server", "oam_server", "built_in"]


@dataclass(frozen=True)
class Chassis:
    """What a machine can take."""

    kind: Kind
    #: the form factors a GPU must have to go in (empty: none can)
    accepts: tuple[FormFactor, ...]
    #: most GPUs it holds in all
    max_gpus: int
    #: one plain sentence: what the machine is and what it takes
    why: str

    def takes(self, spec: GpuSpec) -> bool:
        """Whether ``spec`` can go into this machine (a GPU without a form factor counts as a PCIe card)."""
        return (spec.form_factor or "pcie") in self.accepts


def chassis(machine: Machine, catalog: Catalog) -> Chassis:
    """The kind of machine ``machine`` is, judged from its GPUs' form factors and its CPU."""
    forms: list[FormFactor] = []
    for gpu in machine.gpus:
        spec = catalog.spec_for(gpu)
        if spec is not None and spec.form_factor is not None:
            forms.append(spec.form_factor)
        elif gpu.unified_memory:
            forms.append("soc")
    if "sxm" in forms:
        return Chassis("sxm_server", ("sxm",), NODE_GPUS,
                       f"an SXM server (HGX baseboard): it takes SXM modules, up to {NODE_GPUS}")  # fmt: skip
    if "oam" in forms:
        return Chassis("oam_server", ("oam",), NODE_GPUS,
                       f"an OAM server (OCP baseboard): it takes OAM modules, up to {NODE_GPUS}")  # fmt: skip
    if forms and all(f in ("soc", "laptop") for f in forms):
        why = "a laptop or a system-on-chip with its GPU built in: no GPU can be added or swapped"
        return Chassis("built_in", (), 0, why)
    if (machine.cpu.model and _SERVER_CPU.search(machine.cpu.model)) or len(machine.gpus) > DESKTOP_GPUS:
        why = f"a workstation or server with PCIe slots: it takes PCIe cards, up to {NODE_GPUS}"
        return Chassis("workstation", ("pcie",), NODE_GPUS, why)
    return Chassis("desktop", ("pcie",), DESKTOP_GPUS,
                   f"a desktop: it takes PCIe cards, at most {DESKTOP_GPUS} (its CPU's graphics lanes "
                   "split x8/x8 over two slots)")  # fmt: skip


def needs(before: Machine, after: Machine, catalog: Catalog, cards: int) -> list[str]:
    """:func:`needs_said` in words."""
    return list(render_all(tuple(needs_said(before, after, catalog, cards))))


def needs_said(before: Machine, after: Machine, catalog: Catalog, cards: int) -> list[Said]:
    """What else turning ``before`` into ``after`` would need, ``cards`` being the GPUs installed."""
    found: list[Said] = []
    if cards > 1 and chassis(before, catalog).kind in ("desktop", "workstation"):
        found.append(say("{cards} PCIe x16 slots with room for {cards} cards", cards=cards))
        found.append(
            say(
                "{cards} sets of GPU power cables from the PSU (one per card, with the connector it takes)",
                cards=cards,
            )
        )
    budget = power_budget(after, catalog)
    if budget.psu_watts is None:
        found.append(say("a PSU rating to check the power against (enter it on the Overview page)"))
    elif budget.verdict in ("insufficient", "tight") and budget.suggested_psu_watts:
        found.append(
            say(
                "a PSU of at least {suggested} W (the machine's is {psu} W; it would draw {sustained} W, "
                "peaks {peak} W)",
                suggested=f"{budget.suggested_psu_watts:.0f}",
                psu=f"{budget.psu_watts:.0f}",
                sustained=f"{budget.sustained_watts:.0f}",
                peak=f"{budget.peak_watts:.0f}",
            )
        )
    return found


__all__ = ["DESKTOP_GPUS", "NODE_GPUS", "Chassis", "chassis", "needs", "needs_said"]
