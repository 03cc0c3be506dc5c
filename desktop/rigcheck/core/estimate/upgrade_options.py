"""What it would take to run a model: the cheapest catalog GPUs that hold it (:func:`cheapest_gpus_for`),
and for training more RAM or enough of a big GPU to shard it (:func:`training_options`), each an
:class:`~rigcheck.core.estimate.upgrade_records.Option` with its price notes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from rigcheck.core.catalog import Catalog, GpuSpec
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.buying import best_owned, is_step_down, newest_years, owned_count, standing
from rigcheck.core.estimate.chassis import chassis, needs_said
from rigcheck.core.estimate.cost import DEFAULT_PRICES, GpuCost, Prices, gpu_cost
from rigcheck.core.estimate.fit import (
    GPU_MARGIN,
    MEGATRAIN_HOST_BYTES,
    FitResult,
    Placement,
    budgets,
    estimate_speed,
    fit,
    place,
)
from rigcheck.core.estimate.memory import GIB, MemoryEstimate, Request, estimate_memory
from rigcheck.core.estimate.upgrade_records import (
    NODE_GPUS,
    Option,
    _gpu_names,
    _money,
    _specs,
    _tokens,
    _workload,
    catalog_model,
)
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.spec import ModelInfo
from rigcheck.core.said import Joined, Num, Percent, Text, say
from rigcheck.core.whatif import upgrade

#: the weight format assumed when a GPU is sized for inference without one: llama.cpp's usual choice
DEFAULT_INFERENCE_QUANT = "q4_k_m"
#: the big GPUs :func:`training_options` sizes a sharded run with (besides the machine's own GPU)
TRAINING_GPUS: tuple[str, ...] = (
    "nvidia-geforce-rtx-5090",
    "nvidia-rtx-pro-6000-blackwell-workstation",
    "nvidia-a100-sxm4-80gb",
    "nvidia-h100-sxm5",
    "nvidia-h200",
    "nvidia-b200",
    "amd-instinct-mi300x",
)
#: RAM sizes offered, GiB: what boards and DIMM kits commonly add up to
RAM_SIZES_GIB: tuple[int, ...] = (16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048)
#: a desktop board's RAM limit (4 DIMMs of 48 GiB on AM5/LGA1700, 64 GiB DIMMs push it to 256 GiB)
DESKTOP_RAM_LIMIT_GIB = 256
#: most GPUs a sharded training option may take before it is not worth listing
MAX_SHARDED_GPUS = 64
#: how many options a listing keeps
MAX_OPTIONS = 8
#: where a GPU for a what-if may come from: cards that go into a desktop or server (not laptops or SoCs)
_BUYABLE_SEGMENTS = (None, "desktop", "workstation", "datacenter")
ZERO3_SOURCE = "ZeRO (arXiv 1910.02054) §5.3: stage 3 keeps (2 + 2 + K)·Ψ / N_d bytes of model states per GPU"


def _cost(spec: GpuSpec, prices: Prices) -> GpuCost:
    return gpu_cost(spec, prices)


def _price_note(cost: GpuCost, count: int) -> list[Text]:
    notes: list[Text] = []
    each: Text = Joined("", (" ", say("each"))) if count > 1 else ""
    if cost.purchase is not None:
        when = f", {cost.purchase.date}" if cost.purchase.date else ""
        kind = {"launch": "launch price", "street": "street price", "user": "your price"}.get(
            cost.purchase.kind, "price"
        )
        used: Text = Joined("", (", ", say("used"))) if cost.purchase.used else ""
        notes.append(
            Joined(
                "",
                (say(kind), " ", _money(cost.purchase.usd), each, used, when, f" ({cost.purchase.source})"),
            )
        )
    else:
        notes.append(say("purchase price unknown: the catalog has none for {gpu}", gpu=cost.name))
    if cost.rent_per_hour is not None:
        when = f", {cost.rent_per_hour.date}" if cost.rent_per_hour.date else ""
        notes.append(
            Joined(
                "",
                (
                    say("cloud rent"),
                    " ",
                    _money(cost.rent_per_hour.usd),
                    "/h",
                    each,
                    when,
                    f" ({cost.rent_per_hour.source})",
                ),
            )
        )
    return notes


# -- cheapest GPUs --------------------------------------------------------------------------------

#: the machine a catalog GPU is sized in when no base is given: a 16-thread desktop with 128 GiB of RAM
_GENERIC_BOX = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=128 * GIB), gpus=())


def buyable_gpus(catalog: Catalog) -> list[GpuSpec]:
    """Catalog GPUs one can put in a box: desktop, workstation and data-centre cards with a known
    memory size (laptop GPUs and SoCs, Apple's included, come with their computer)."""
    return [
        g for g in catalog.gpus if g.memory_gb and g.segment in _BUYABLE_SEGMENTS and not g.unified_memory
    ]


def _runs_on_gpus(est: MemoryEstimate, machine: Machine, catalog: Catalog) -> FitResult | None:
    """``fit`` with no offload, the estimate shared: the placement and speed when it fits entirely."""
    budget = budgets(machine, live=False)
    placement = place(est, budget, "none")
    if placement is None:
        return None
    speed = estimate_speed(est, placement, machine, catalog)
    return FitResult("fits", placement, speed, est, budget, ())


def cheapest_gpus_for(
    model_id: str,
    catalog: Catalog,
    *,
    min_tokens_per_s: float = 10.0,
    workload: str = "inference",
    quant: str | None = None,
    context: int | None = None,
    max_count: int = 8,
    base: Machine | None = None,
    prices: Prices = DEFAULT_PRICES,
) -> list[Option]:
    """Catalog GPUs (1 to ``max_count`` of one kind, layer split) that run the model entirely in GPU
    memory in place of ``base``'s GPUs; with a ``base``, only GPUs of a form factor it takes, at most as
    many as it holds (:mod:`rigcheck.core.estimate.chassis`), each option noting what else it needs
    (slots, power cables, a bigger PSU); GPUs it cannot take stay only as ``rent_only`` options. The
    options are the fewest of each kind, sorted by purchase price (unknown prices last, the rentable
    first among them); at most :data:`MAX_OPTIONS`, always including the cheapest one to rent when any is.

    Inference without ``quant`` sizes Q4_K_M. Training is estimated on one GPU (as ``fit`` places it),
    so training options are single GPUs. A GPU known to be slower than ``min_tokens_per_s`` is left
    out; one whose speed cannot be estimated (throughput not published) stays, with a note.
    """
    model = catalog_model(model_id, catalog)
    kind = _workload(workload)
    if kind == "inference":
        req = Request(quant=quant or DEFAULT_INFERENCE_QUANT, context=context)
    else:
        req = Request(quant=quant, context=context, workload=kind)
    est = estimate_memory(model, req, catalog)
    machine = base or _GENERIC_BOX
    box = chassis(base, catalog) if base is not None else None
    owned = (
        best_owned(base, catalog) if base is not None and box is not None and box.max_gpus else (None, None)
    )
    newest = newest_years(catalog)
    options: list[Option] = []
    for spec in buyable_gpus(catalog):
        if is_step_down(spec, owned):  # never a smaller or slower GPU than the one owned
            continue
        have = owned_count(base, catalog, spec.id) if base is not None else 0
        # What does not fit the machine (an SXM module for a desktop) is still an option to rent.
        fits_box = box is None or box.takes(spec)
        rent_only = not fits_box
        if rent_only and gpu_cost(spec, prices).rent_per_hour is None:
            continue
        most = max_count if box is None or rent_only else min(max_count, box.max_gpus)
        counts = range(1, most + 1) if kind == "inference" else range(1, 2)
        capacity = max(spec.memory_gb) * GIB * (1 - GPU_MARGIN)
        first = max(1, math.ceil(est.total_bytes / capacity)) if kind == "inference" else 1
        for count in counts:
            if count < first:
                continue
            trial = upgrade(machine, gpus=[spec] * count)
            result = _runs_on_gpus(est, trial, catalog)
            if result is not None:
                break
        else:
            continue
        tps = _tokens(result)
        if tps is not None and tps < min_tokens_per_s:
            continue
        if not rent_only and 0 < count <= have:
            continue  # it already runs on the GPUs the machine has: nothing to buy
        extra: list[Text] = []
        if box is not None and rent_only:
            extra.append(say("to rent only: this machine is {why}", why=say(box.why)))
        elif base is not None:
            extra = [say("also needs {what}", what=n) for n in needs_said(base, trial, catalog, count)]
        option = _gpu_option(
            model, est, spec, count, trial, tps=tps, prices=prices, extra=extra,
            owned=0 if rent_only else have, newest=newest,
        )  # fmt: skip
        options.append(replace(option, purchase_usd=None, rent_only=True) if rent_only else option)
    return _cheapest_first(options)


def _gpu_option(
    model: ModelInfo,
    est: MemoryEstimate,
    spec: GpuSpec,
    count: int,
    machine: Machine,
    *,
    tps: float | None,
    prices: Prices,
    extra: Sequence[Text] = (),
    verdict: str = "fits",
    owned: int = 0,
    newest: dict[tuple[str, str | None], int] | None = None,
) -> Option:
    cost = _cost(spec, prices)
    rank = standing(spec, cost, newest if newest is not None else {})
    buy = count - owned
    values = {"quant": est.quant_name, "context": Num(est.context), "count": count}
    notes: list[Text] = [
        say("{quant}, {context}-token context, entirely on the GPU", **values)
        if count == 1
        else say("{quant}, {context}-token context, entirely on the {count} GPUs", **values),
        *extra,
    ]
    if tps is None:
        notes.append(
            say("speed unknown: the catalog has no tensor throughput or bandwidth for {gpu}", gpu=spec.name)
        )
    if count > NODE_GPUS:
        notes.append(
            say(
                "{count} GPUs are more than one server's {node}: {machines} machines",
                count=count,
                node=NODE_GPUS,
                machines=math.ceil(count / NODE_GPUS),
            )
        )
    if owned:
        notes.append(say("you have {owned} already: {buy} more to buy", owned=owned, buy=buy))
    if rank == "superseded" and cost.purchase is not None:
        notes.append(
            say(
                "no current price in the catalog: a newer generation has replaced the {gpu} (launched "
                "{year}), so its launch price of {price} says nothing about what it costs today",
                gpu=spec.name,
                year=spec.release_year or "?",
                price=_money(cost.purchase.usd),
            )
        )
    else:
        notes.extend(_price_note(cost, buy))
        if rank == "launch":
            notes.append(say("no current price in the catalog: ranked by its launch price (MSRP)"))
    if cost.breakeven_hours is not None:
        notes.append(
            say(
                "buying beats renting after {hours} hours of use ({months} months at {share})",
                hours=Num(cost.breakeven_hours),
                months=Num(cost.breakeven_months or 0, 1, group=False),
                share=Percent(prices.utilization),
            )
        )
    priced = cost.purchase is not None and rank in ("current", "launch")
    description: Text = (
        say("{buy} more × {gpu} ({count} in all, keeps yours)", buy=buy, gpu=spec.name, count=count)
        if owned
        else f"{count} × {spec.name}"
    )
    return Option(
        description_said=description,
        machine=machine,
        verdict=verdict,
        tokens_per_s=tps,
        purchase_usd=cost.purchase.usd * buy if cost.purchase and priced else None,
        rent_usd_hour=cost.rent_per_hour.usd * count if cost.rent_per_hour else None,
        notes_said=tuple(notes),
        kind="gpu",
        model_id=model.id,
        gpu_id=spec.id,
        count=count,
        ram_gib=machine.memory.total_bytes / GIB,
        cost=cost,
        quant=est.quant_name,
        owned=owned,
        price_standing=rank,
    )


def _cheapest_first(options: list[Option]) -> list[Option]:
    def key(o: Option) -> tuple[bool, bool, float, bool, float, float]:
        return (
            o.purchase_usd is None,
            o.price_standing != "current",  # a dated current price ranks before a launch price
            o.purchase_usd or 0.0,
            o.rent_usd_hour is None,
            o.rent_usd_hour or 0.0,
            -(o.tokens_per_s or 0.0),
        )

    ranked = sorted(options, key=key)
    kept = ranked[:MAX_OPTIONS]
    rentable = [o for o in ranked if o.rent_usd_hour is not None]
    if rentable and not any(o.rent_usd_hour is not None for o in kept):
        cheapest = min(rentable, key=lambda o: o.rent_usd_hour or 0.0)
        kept = [*kept[: MAX_OPTIONS - 1], cheapest]
    return kept


# -- training -------------------------------------------------------------------------------------


def training_options(
    model_id: str,
    machine: Machine,
    catalog: Catalog,
    *,
    workload: str = "full",
    context: int = 2048,
    prices: Prices = DEFAULT_PRICES,
) -> list[Option]:
    """What it takes to train ``model_id`` from ``machine``: RAM options first (the machine's GPUs and
    the smallest common RAM size that MegaTrain-style or ZeRO-Offload training fits in, ~12 bytes per
    parameter in RAM), then GPU options, cheapest first: the fewest of the machine's own GPU and of a
    few big catalog GPUs (:data:`TRAINING_GPUS`) that hold it, sharded ZeRO-3/FSDP-style when one
    GPU is not enough."""
    model = catalog_model(model_id, catalog)
    kind = _workload(workload)
    if kind == "inference":
        raise InputError("--workload", "training options need a training workload: lora, qlora or full")
    req = Request(context=context, workload=kind)
    est = estimate_memory(model, req, catalog)
    options: list[Option] = []

    ram = _ram_option(model, machine, req, catalog)
    if ram is not None:
        options.append(ram)

    ids = list(TRAINING_GPUS)
    own = [s for s in _specs(machine, catalog) if s is not None]
    if own and own[0].id not in ids:
        ids.insert(0, own[0].id)
    gpu_options = []
    for gpu_id in ids:
        spec = catalog.gpu(gpu_id)
        if spec is None or not spec.memory_gb:
            continue
        option = _sharded_option(model, est, spec, machine, catalog, prices=prices)
        if option is not None:
            gpu_options.append(option)
    options.extend(_cheapest_first(gpu_options))
    return options


def _ram_option(model: ModelInfo, machine: Machine, req: Request, catalog: Catalog) -> Option | None:
    if not machine.gpus or req.workload != "full":
        return None
    have = machine.memory.total_bytes / GIB
    for size in (have, *(s for s in RAM_SIZES_GIB if s > have)):
        trial = upgrade(machine, ram_gb=size)
        result = fit(model, trial, req, catalog, live=False, advise=False)
        if result.verdict == "does_not_fit":
            continue
        style = {"full": "MegaTrain-style", "optimizer": "ZeRO-Offload"}.get(
            result.placement.offload, "on the GPU"
        )
        gpus = _gpu_names(machine)
        more = size - have
        grow = f"+{more:g} GiB, " if more > 0 else "already installed, "
        notes: list[Text] = [
            result.reasons_said[0],
            "MegaTrain keeps the bf16 weights, their gradients at the step and fp32 Adam states in RAM: "
            f"{MEGATRAIN_HOST_BYTES} bytes per parameter "
            f"({MEGATRAIN_HOST_BYTES * model.arch.params_total / GIB:,.0f} GiB for this model)",
            "RAM price not in the catalog",
        ]
        if size > DESKTOP_RAM_LIMIT_GIB:
            notes.append(
                f"more than {DESKTOP_RAM_LIMIT_GIB} GiB needs a workstation or server board (desktop boards "
                f"take up to {DESKTOP_RAM_LIMIT_GIB} GiB)"
            )
        return Option(
            description_said=f"{size:,.0f} GiB RAM ({grow}{style}, keeps your {gpus})",
            machine=trial,
            verdict=result.verdict,
            tokens_per_s=result.speed.train_tokens_per_s,
            purchase_usd=None,
            rent_usd_hour=None,
            notes_said=tuple(notes),
            kind="ram",
            model_id=model.id,
            ram_gib=float(size),
            quant=result.estimate.quant_name,
        )
    return None


def _sharded_option(
    model: ModelInfo,
    est: MemoryEstimate,
    spec: GpuSpec,
    machine: Machine,
    catalog: Catalog,
    *,
    prices: Prices,
) -> Option | None:
    """The fewest ``spec`` GPUs that hold the run: one if ``fit`` places it, else ZeRO stage 3 (FSDP):
    weights, gradients and optimizer states split evenly, each GPU keeping its own activations."""
    single = upgrade(machine, gpus=[spec])
    result = _runs_on_gpus(est, single, catalog)
    if result is not None:
        return _gpu_option(
            model, est, spec, 1, single, tps=_tokens(result), prices=prices, newest=newest_years(catalog)
        )
    capacity = int(max(spec.memory_gb) * GIB * (1 - GPU_MARGIN))
    runtime = est.total("activations") + est.total("overhead")
    states = est.total_bytes - runtime
    room = capacity - runtime
    if room <= 0:
        return None
    count = max(2, math.ceil(states / room))
    if count > MAX_SHARDED_GPUS:
        return None
    trial = upgrade(machine, gpus=[spec] * count)
    per_gpu = states // count + runtime
    placement = Placement(
        (per_gpu, *(0 for _ in range(count - 1))), 0, model.arch.num_layers, model.arch.num_layers, "none"
    )
    one = estimate_speed(est, placement, single, catalog).train_tokens_per_s
    tps = one * count if one is not None else None
    extra = [
        f"sharded ZeRO-3/FSDP-style: {states / GIB:,.0f} GiB of weights, gradients and optimizer states over "
        f"{count} GPUs ({per_gpu / GIB:,.1f} GiB each with activations; {ZERO3_SOURCE})",
        "speed: one GPU's rate × the GPU count, communication not counted (an upper bound)",
    ]
    return _gpu_option(
        model, est, spec, count, trial, tps=tps, prices=prices, extra=extra, newest=newest_years(catalog)
    )
