"""The :class:`Fleet`: its table rows, drift from the majority, and per model which nodes run it and how
fast (the report's own verdict when it holds one, else :func:`rigcheck.core.estimate.fit.fit` once per
distinct machine)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from rigcheck.core.i18n import tr
from rigcheck.core.machine import Machine
from rigcheck.core.report.fleet.records import (
    DEFAULT_QUANT,
    DRIFT_FIELDS,
    MISSING,
    RECOMMENDED,
    VERSION_FIELDS,
    Drift,
    FleetCell,
    ModelColumn,
    Node,
    Spread,
    paused_gc,
)
from rigcheck.core.report.fleet.values import (
    _NOT_APPLICABLE,
    _field_value,
    _order_key,
    _relation,
    _short_gpu_name,
    gpu_summary,
    version_key,
    vram_summary,
)
from rigcheck.core.steps import no_steps

if TYPE_CHECKING:
    from rigcheck.core.catalog import Catalog
    from rigcheck.core.estimate.memory import Request
    from rigcheck.core.models.spec import ModelInfo


@dataclass(frozen=True)
class Fleet:
    nodes: tuple[Node, ...]
    #: one line per skipped file: "path: reason"
    problems: tuple[str, ...] = ()
    #: files read, good and bad
    files: int = 0

    def node(self, name: str) -> Node | None:
        return next((n for n in self.nodes if n.name == name), None)

    def row(self, node: Node) -> dict[str, str]:
        """The table's columns: name, gpus, vram, driver, cuda, rocm, torch, failing."""
        m = node.machine
        return {
            "name": node.name,
            "gpus": gpu_summary(m),
            "vram": vram_summary(m),
            "driver": m.drivers.nvidia or m.drivers.amdgpu or MISSING,
            "cuda": m.drivers.cuda_driver or MISSING,
            "rocm": m.drivers.rocm or MISSING,
            "torch": m.software.python_packages.get("torch") or MISSING,
            "failing": str(node.failing),
        }

    def spread(self) -> tuple[Spread, ...]:
        """Per version field (driver, CUDA, amdgpu, ROCm, PyTorch), every value the fleet has, with how
        many nodes have it, oldest first; only fields where nodes differ. Unlike :meth:`drift` this
        includes fields with no majority: drivers 470 (1), 550 (2), 580 (3) are not "agreement"."""
        found = []
        for name in DRIFT_FIELDS:
            if name not in VERSION_FIELDS:
                continue
            counts = Counter(v for n in self.nodes if isinstance(v := _field_value(name, n.machine), str))
            if len(counts) > 1:
                ordered = sorted(counts, key=lambda v: (version_key(v), v))
                found.append(Spread(name, tuple((v, counts[v]) for v in ordered)))
        return tuple(found)

    def _count_drift(self) -> list[Drift]:
        """Nodes with fewer (or more) of the same GPU than most nodes with that GPU: a server with 7 of
        its 8 H100s is flagged even in a fleet too mixed for the "gpu" field to have a majority."""
        groups: dict[str, list[tuple[str, int]]] = {}
        for node in self.nodes:
            names = {_short_gpu_name(g.name) for g in node.machine.gpus}
            if len(names) == 1:
                groups.setdefault(names.pop(), []).append((node.name, len(node.machine.gpus)))
        found = []
        for gpu, members in groups.items():
            counts = Counter(n for _node, n in members)
            usual = max(counts, key=lambda n: (counts[n], n))
            if len(members) < 3 or counts[usual] * 2 <= len(members):
                continue  # too few to say what is usual, or no count most of them share
            odd = [(node, n) for node, n in members if n != usual]
            if odd:
                found.append(
                    Drift(
                        "gpu_count",
                        f"{usual} × {gpu}",
                        tuple(node for node, _n in odd),
                        tuple(f"{n} × {gpu}" for _node, n in odd),
                        tuple("smaller" if n < usual else "larger" for _node, n in odd),
                        counts[usual],
                        len(members),
                    )
                )
        return found

    def _mix_drift(self) -> list[Drift]:
        """Nodes whose GPUs are not all one model (an RTX 3090 beside a 4090: layers split by memory run at
        the slower card's pace), where most nodes with GPUs have a single model."""
        with_gpus = [n for n in self.nodes if n.machine.gpus]
        mixed = []
        for node in with_gpus:
            names = sorted({_short_gpu_name(g.name) for g in node.machine.gpus})
            if len(names) > 1:
                mixed.append((node.name, " + ".join(names)))
        uniform = len(with_gpus) - len(mixed)
        if not mixed or uniform * 2 <= len(with_gpus):
            return []
        return [
            Drift(
                "gpu_mix",
                tr("one GPU model per node"),
                tuple(n for n, _v in mixed),
                tuple(v for _n, v in mixed),
                tuple("different" for _ in mixed),
                uniform,
                len(with_gpus),
            )
        ]

    def drift(self) -> tuple[Drift, ...]:
        """Per field, the nodes whose value differs from the majority's (fields without drift left out).

        ``driver``/``cuda_driver`` compare nodes with an NVIDIA GPU, ``amdgpu``/``rocm`` nodes with an
        AMD GPU, the rest every node; ``torch`` by its public version (2.5.1+cu124 and 2.5.1+rocm6.2
        are the same release). The majority is the value more than half of the nodes have; a field
        where none does is a mixed fleet, not drift, and is left out (one 4090 box among H100 servers
        is not news; one server with 7 of its 8 GPUs is). A node that should have a value and has none
        is "missing", unless most nodes have none either.
        """
        found = []
        for name in DRIFT_FIELDS:
            values = [(n.name, _field_value(name, n.machine)) for n in self.nodes]
            compared = [(n, v) for n, v in values if v is not _NOT_APPLICABLE]
            present = [(n, v) for n, v in compared if isinstance(v, str)]
            if not present:
                continue
            counts = Counter(v for _, v in present)
            majority = max(counts, key=lambda v: (counts[v], _order_key(name, v)))
            if counts[majority] * 2 <= len(present):
                continue  # no value holds a majority: a mixed fleet, not drift
            missing = [n for n, v in compared if v is None]
            report_missing = len(missing) * 2 < len(compared)
            nodes, shown, relations = [], [], []
            for node, value in compared:
                if value is None:
                    if report_missing:
                        nodes.append(node)
                        shown.append(MISSING)
                        relations.append("missing")
                elif value != majority:
                    nodes.append(node)
                    shown.append(str(value))
                    relations.append(_relation(name, str(value), majority))
            if nodes:
                found.append(
                    Drift(
                        name,
                        majority,
                        tuple(nodes),
                        tuple(shown),
                        tuple(relations),
                        counts[majority],
                        len(compared),
                    )
                )
        # the same GPU in a different number: flagged even where the "gpu" field is too mixed to be
        flagged = {n for d in found if d.field == "gpu" for n in d.nodes}
        for count in self._count_drift():
            keep = [k for k, n in enumerate(count.nodes) if n not in flagged]
            if keep:
                found.append(
                    replace(
                        count,
                        nodes=tuple(count.nodes[k] for k in keep),
                        values=tuple(count.values[k] for k in keep),
                        relations=tuple(count.relations[k] for k in keep),
                    )
                )
        found.extend(self._mix_drift())  # GPUs of different models within one node
        return tuple(found)

    @paused_gc()
    def column(
        self,
        model: ModelInfo | str,
        catalog: Catalog,
        *,
        quant: str | None = DEFAULT_QUANT,
        context: int | None = None,
        request: Request | None = None,
        steps: Callable[[float, float], None] = no_steps,
    ) -> ModelColumn:
        """``model`` (a catalog id or a resolved model) on every node at ``quant``; with ``quant`` None,
        each node's recommendation (:func:`rigcheck.core.estimate.recommend.recommend`). ``request``
        carries batch and engine (as ``fit`` takes them). ``steps(done, total)`` is called per node
        (progress, and :class:`rigcheck.core.steps.Cancelled` to stop)."""
        from rigcheck.core.estimate.fit import fit
        from rigcheck.core.estimate.memory import Request, estimate_memory
        from rigcheck.core.estimate.recommend import where_of
        from rigcheck.core.estimate.upgrade import catalog_model, outcome

        info = catalog_model(model, catalog) if isinstance(model, str) else model
        if quant is None:
            judged: dict[str, Any] = {}  # identical machines (a rack of one build) are judged once
            best = []
            for done, node in enumerate(self.nodes):
                steps(done, len(self.nodes))
                best.append(
                    _once(
                        judged,
                        node.machine,
                        lambda m: outcome(info, m, catalog, context=context, request=request),
                    )
                )
            return ModelColumn(
                info.id,
                info.name,
                RECOMMENDED,
                context,
                tuple(
                    FleetCell(node.name, o.verdict, o.decode_tokens_per_s, o.quant, "estimate", o.where)
                    for node, o in zip(self.nodes, best, strict=True)
                ),
            )
        custom = request is not None
        request = replace(request or Request(), quant=quant, context=context)
        # Once, before the loop: an unknown format is one error, not one per node.
        quant_name = estimate_memory(info, request, catalog).quant_name
        cells = []
        fitted: dict[str, Any] = {}  # identical machines (a rack of one build) are judged once
        for done, node in enumerate(self.nodes):
            steps(done, len(self.nodes))
            held = _report_fit(node, info.id, quant_name) if context is None and not custom else None
            if held is not None:
                cells.append(held)
                continue
            result = _once(
                fitted, node.machine, lambda m: fit(info, m, request, catalog, live=False, advise=False)
            )
            cells.append(
                FleetCell(
                    node.name,
                    result.verdict,
                    result.speed.decode_tokens_per_s,
                    quant_name,
                    "estimate",
                    where_of(result),
                )
            )
        return ModelColumn(info.id, info.name, quant_name, context, tuple(cells))

    def can_run(
        self,
        model_id: str,
        catalog: Catalog,
        *,
        quant: str | None = DEFAULT_QUANT,
        context: int | None = None,
        steps: Callable[[float, float], None] = no_steps,
    ) -> list[tuple[Node, str, float | None]]:
        """(node, verdict, decode tokens/s) for every node; verdicts as :func:`fit` gives them."""
        col = self.column(model_id, catalog, quant=quant, context=context, steps=steps)
        return [(n, c.verdict, c.decode_tokens_per_s) for n, c in zip(self.nodes, col.cells, strict=True)]

    def matrix(
        self,
        model_ids: Sequence[str],
        catalog: Catalog,
        *,
        quant: str | None = DEFAULT_QUANT,
        context: int | None = None,
        request: Request | None = None,
    ) -> tuple[ModelColumn, ...]:
        """The machine × model matrix for these catalog models."""
        return tuple(
            self.column(m, catalog, quant=quant, context=context, request=request) for m in model_ids
        )

    @paused_gc()
    def report_matrix(self, catalog: Catalog | None = None) -> tuple[ModelColumn, ...]:
        """The machine × model matrix of the verdicts the reports already hold (inference only).

        Each cell is at the format its report chose. With a ``catalog``, a node read from a plain
        snapshot (``audit --json``, no verdicts) is judged as its report would have been (the
        recommendation, as ``audit --format json`` does), and a fleet of snapshots only gets the models a
        report lists by default; without one such a node is ``unknown``. Empty when nothing holds any.
        """
        from rigcheck.core.estimate.upgrade import POPULAR_MODELS, catalog_model, outcome

        order: dict[str, str] = {}
        for node in self.nodes:
            for f in node.report.fits if node.report else ():
                if f.workload == "inference":
                    order.setdefault(f.model_id, f.name)
        if not order and catalog is not None:
            order = {m: "" for m in POPULAR_MODELS if catalog.model(m) is not None}
        # each node's inference verdicts by model, once (a search per cell was models x nodes x fits)
        held_fits: dict[str, dict[str, Any]] = {}
        for node in self.nodes:
            by_model: dict[str, Any] = {}
            for f in node.report.fits if node.report else ():
                if f.workload == "inference":
                    by_model.setdefault(f.model_id, f)
            held_fits[node.name] = by_model
        columns = []
        for model_id, held_name in order.items():
            info = (
                catalog_model(model_id, catalog) if catalog is not None and catalog.model(model_id) else None
            )
            name = held_name or (info.name if info is not None else model_id)
            cells = []
            for node in self.nodes:
                if node.report is None and info is not None and catalog is not None:
                    o = outcome(info, node.machine, catalog)
                    cells.append(
                        FleetCell(node.name, o.verdict, o.decode_tokens_per_s, o.quant, "estimate", o.where)
                    )
                    continue
                held = held_fits[node.name].get(model_id)
                if held is None:
                    cells.append(FleetCell(node.name, "unknown", None, None, "report"))
                else:
                    cells.append(
                        FleetCell(
                            node.name,
                            held.verdict,
                            held.decode_tokens_per_s,
                            held.quant,
                            "report",
                            held.where,
                        )
                    )
            columns.append(ModelColumn(model_id, name, "best", None, tuple(cells)))
        return tuple(columns)


def _machine_key(machine: Machine) -> str:
    """What an estimate can depend on, as one string: the machine less its name, time and notes."""
    from dataclasses import replace as copy

    anonymous = copy(machine, host=copy(machine.host, hostname=None), taken_at=None, notes=())
    # the dataclasses' repr shows every field (none is repr=False), exactly: 17x cheaper than
    # to_dict + json.dumps, which was 0.4 ms a node in a 10,000-node --model check
    return repr(anonymous)


def _once(cache: dict[str, Any], machine: Machine, judge: Any) -> Any:
    """``judge(machine)``, or the answer already given for an identical machine."""
    key = _machine_key(machine)
    if key not in cache:
        cache[key] = judge(machine)
    return cache[key]


def _report_fit(node: Node, model_id: str, quant_name: str) -> FleetCell | None:
    if node.report is None:
        return None
    for f in node.report.fits:
        if (
            f.model_id == model_id
            and f.workload == "inference"
            and (f.quant or "").lower() == quant_name.lower()
        ):
            return FleetCell(node.name, f.verdict, f.decode_tokens_per_s, f.quant, "report", f.where)
    return None
