"""The engine build an estimate is for: an older llama.cpp is slower where a later kernel milestone applies.

The speed factors (catalog/speed.toml) describe a current llama.cpp: benchmarks/fit_speed.py scales every
fit row measured on an older build up by the milestones it predates before fitting. For a build the user
names (``Request.engine_build``, ``rigcheck fit --engine-build bNNNN``), each milestone of
catalog/engine_builds.toml (core/engine_builds.py) newer than that build which applies to the model and
the hardware divides the estimate by the ratio the milestone's PR measured, as a term with its value,
formula and source, and advises the update. A milestone without a published ratio is advice only; one
another step models already (``modeled_by``: Intel Xe2 cooperative matrices, speed/coopmat.py, which reads
the build itself) is not applied twice. No build named: a current one, said as an assumption where a
milestone would apply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rigcheck.core.catalog import GpuSpec
from rigcheck.core.engine_builds import Milestone, load_milestones
from rigcheck.core.models.spec import ArchConfig
from rigcheck.core.said import Joined, Num, Text, render, say

Metric = Literal["decode", "prefill"]
#: the layer kind a milestone names for a Gated DeltaNet layer (ArchConfig.layer_kinds says "linear")
GATED_DELTANET = "gated-deltanet"


@dataclass(frozen=True)
class BuildTerm:
    """One milestone's share of an old build's estimate: tokens/s ÷ ``value`` for ``metric``."""

    milestone: str
    metric: Metric
    value: float
    #: as said: :attr:`formula` in words
    formula_said: Text
    #: the PR and the table its ratio is read from
    source: str

    @property
    def formula(self) -> str:
        return render(self.formula_said)


@dataclass(frozen=True)
class BuildCorrection:
    """What the build changes: the divisors of decode and prefill tokens/s, their terms, the sentences for
    the working (the assumption of a current build included) and the advice to update."""

    decode_divisor: float = 1.0
    prefill_divisor: float = 1.0
    terms: tuple[BuildTerm, ...] = ()
    explanation_said: tuple[Text, ...] = ()
    advice_said: tuple[Text, ...] = ()


def _layer_kinds(arch: ArchConfig) -> set[str]:
    kinds: set[str] = set(arch.layer_kinds)
    if arch.linear_mixer is not None and "linear" in kinds:
        kinds.add(GATED_DELTANET)
    return kinds


def applies(
    milestone: Milestone, *, engine: str, arch: ArchConfig, backend: str | None, spec: GpuSpec | None
) -> bool:
    """Whether ``milestone`` changed what this engine runs for this model on this backend and GPU."""
    if milestone.engine != engine:
        return False
    if milestone.backends and backend not in milestone.backends:
        return False
    if milestone.moe_only and not arch.is_moe:
        return False
    if milestone.model_types or milestone.layer_kinds:
        by_type = arch.model_type in milestone.model_types
        by_kind = bool(_layer_kinds(arch) & set(milestone.layer_kinds))
        if not (by_type or by_kind):
            return False
    if milestone.vendors and (spec is None or spec.vendor not in milestone.vendors):
        return False
    if milestone.architectures:
        name = (spec.architecture or "").lower().replace(" ", "") if spec else ""
        if not any(a in name for a in milestone.architectures):
            return False
    return True


def _ratios(m: Milestone) -> tuple[tuple[Metric, float], ...]:
    if m.modeled_by:
        return ()
    found: list[tuple[Metric, float]] = []
    if m.decode_ratio is not None:
        found.append(("decode", m.decode_ratio))
    if m.prefill_ratio is not None:
        found.append(("prefill", m.prefill_ratio))
    return tuple(found)


def _advice(build: int, m: Milestone, ratios: tuple[tuple[Metric, float], ...]) -> Text:
    if not ratios:
        return say(
            "llama.cpp b{build} is older than PR #{pr} (b{first}, {url}); update (no before/after ratio of "
            "it is catalogued, so the estimate does not change)",
            build=build,
            pr=m.pr,
            first=m.first_build,
            url=m.url,
        )
    gains = tuple(
        say("~×{ratio} decode", ratio=Num(r, 2))
        if metric == "decode"
        else say("~×{ratio} prefill", ratio=Num(r, 2))
        for metric, r in ratios
    )
    return say(
        "llama.cpp b{build} is older than PR #{pr} (b{first}); update for {gains}",
        build=build,
        pr=m.pr,
        first=m.first_build,
        gains=Joined(", ", gains),
    )


def build_correction(
    engine: str,
    build: int | None,
    arch: ArchConfig,
    backend: str | None,
    spec: GpuSpec | None,
    *,
    milestones: Sequence[Milestone] | None = None,
) -> BuildCorrection:
    """What ``build`` of ``engine`` (None: a current one) changes in this model's estimate on ``backend``
    and the GPU ``spec`` (None: the CPU alone), from ``milestones`` (the shipped ones by default)."""
    found = [
        m
        for m in (load_milestones() if milestones is None else milestones)
        if applies(m, engine=engine, arch=arch, backend=backend, spec=spec)
    ]
    if not found:
        return BuildCorrection()
    if build is None:
        newest = max(found, key=lambda m: m.first_build)
        return BuildCorrection(
            explanation_said=(
                say(
                    "{engine} build not given: a current one is assumed (b{first} or later, with PR #{pr})",
                    engine=engine,
                    first=newest.first_build,
                    pr=newest.pr,
                ),
            )
        )
    divisors = {"decode": 1.0, "prefill": 1.0}
    terms: list[BuildTerm] = []
    advice: list[Text] = []
    for m in sorted(found, key=lambda m: m.first_build):
        if m.first_build <= build:
            continue
        ratios = _ratios(m)
        advice.append(_advice(build, m, ratios))
        for metric, ratio in ratios:
            divisors[metric] *= ratio
            template = (
                "decode ÷ {ratio}: {engine} b{build} predates PR #{pr} (b{first})"
                if metric == "decode"
                else "prefill ÷ {ratio}: {engine} b{build} predates PR #{pr} (b{first})"
            )
            formula = say(
                template,
                ratio=Num(ratio, 2),
                engine=engine,
                build=build,
                pr=m.pr,
                first=m.first_build,
            )
            terms.append(BuildTerm(m.id, metric, ratio, formula, m.ratio_source))
    explanation = tuple(say("{formula} ({source})", formula=t.formula_said, source=t.source) for t in terms)
    return BuildCorrection(divisors["decode"], divisors["prefill"], tuple(terms), explanation, tuple(advice))
