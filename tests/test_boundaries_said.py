"""The words boundary: the estimate's computation returns what it says as data (``core/said.py``) and
never calls the translation layer; sentences are made when shown (issue 28, Build 5).

Each module listed here has been moved to that form; the check reads its source (imports and calls),
and proves it bites on a module that translates.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from rigcheck.core.catalog import load_catalog
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import Request
from rigcheck.core.i18n import set_language
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.said import Bytes, Joined, Num, Percent, Said, Shown, Sig, render, say
from rigcheck.core.whatif import simulate

ESTIMATE = Path(__file__).resolve().parent.parent / "desktop" / "rigcheck" / "core" / "estimate"
#: the computation modules that say things only as Said values
CONVERTED = (
    "fit.py",
    "verdict.py",
    "advice.py",
    "chassis.py",
    "commands.py",
    "cost.py",
    "soldered.py",
    "solvers.py",
    "upgrade.py",
    "upgrade_options.py",
    "upgrade_records.py",
    "memory.py",
    "memory_cache.py",
    "memory_runtime.py",
    "memory_types.py",
    "memory_weights.py",
    "mlx.py",
    "exllamav3.py",
    "ollama.py",
    "power.py",
    "recommend.py",
    "placement/__init__.py",
    "placement/budget.py",
    "placement/exllamav3.py",
    "placement/inference.py",
    "placement/mlx.py",
    "placement/sglang.py",
    "placement/split.py",
    "placement/types.py",
    "speed/__init__.py",
    "speed/cpu.py",
    "speed/decode.py",
    "speed/estimate.py",
    "speed/experts.py",
    "speed/fixed.py",
    "speed/multigpu.py",
    "speed/prefill.py",
    "speed/reads.py",
    "speed/result.py",
)
#: the translation layer: core/i18n's whole module, and the locale-aware formats of core/units
TRANSLATING = {"tr", "num", "percent", "sig", "month_year", "fmt_bytes", "fmt_watts"}
TRANSLATING_MODULES = {"rigcheck.core.i18n"}


def translation_uses(source: str) -> list[str]:
    """Where ``source`` imports or calls the translation layer, as "line: what"."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module in TRANSLATING_MODULES:
            found.append(f"{node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.ImportFrom) and node.module == "rigcheck.core.units":
            found += [f"{node.lineno}: {a.name}" for a in node.names if a.name in TRANSLATING]
        elif isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if a.name in TRANSLATING_MODULES]
        elif isinstance(node, ast.Call):
            func = node.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            if name in TRANSLATING:
                found.append(f"{node.lineno}: {name}()")
    return found


@pytest.mark.parametrize("module", CONVERTED)
def test_the_computation_does_not_translate(module: str) -> None:
    uses = translation_uses((ESTIMATE / module).read_text(encoding="utf-8"))
    assert not uses, f"{module} calls the translation layer: {uses}"


@pytest.mark.parametrize(
    "source",
    [
        "from rigcheck.core.i18n import tr\n",
        "from rigcheck.core.units import GIB, fmt_bytes\n",
        "import rigcheck.core.i18n\n",
        "from rigcheck.core import i18n\nx = i18n.tr('a')\n",
        "x = num(3)\n",
    ],
)
def test_the_check_bites(source: str) -> None:
    assert translation_uses(source)


def test_said_values_render_as_tr_and_the_formats_did() -> None:
    sentence = say(
        "{a} / {b} / {c} / {d} / {e} / {f} / {g}",
        a=Bytes(3 * 1024**3),
        b=Num(8192),
        c=Num(1.25, 1, group=False, unit=" GiB"),
        d=Percent(0.9),
        e=Sig(0.0712),
        f=Joined(", ", (Percent(0.5), "x")),
        g=Shown(lambda v: f"<{v}>", 7),
    )
    assert render(sentence) == "3.0 GiB / 8,192 / 1.2 GiB / 90% / 0.071 / 50%, x / <7>"
    assert str(Said("no values {here}")) == "no values {here}"  # a template without values is not filled
    assert render("already made") == "already made"


def test_a_fit_keeps_its_sentences_as_data_and_says_them_in_the_language_shown() -> None:
    """gpt-oss-20b on a 12 GB card: the placement sentence holds the GPU bytes as bytes, not text, and
    the same result reads in Italian once the language is Italian (nothing was translated at fit())."""
    catalog = load_catalog(use_overlay=False)
    spec, gpu = catalog.model("gpt-oss-20b"), catalog.gpu("nvidia-geforce-rtx-3060")
    assert spec is not None and gpu is not None
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * 1024**3), gpus=())
    result = fit(from_catalog(spec), simulate(bare, [gpu], 64), Request(), catalog, live=False)
    where = result.reasons_said[0]
    assert isinstance(where, Joined)  # the GPU sentence; the embedding llama.cpp keeps in RAM after "; "
    on_gpu = where.parts[0]
    assert isinstance(on_gpu, Said)
    assert dict(on_gpu.values)["gpu"] == Bytes(sum(result.placement.gpu_bytes))
    english = result.reasons[0]
    assert english.startswith("everything on the GPU: ") and "; the input embedding (" in english
    try:
        set_language("it")
        italian = result.reasons[0]
    finally:
        set_language("en")
    assert re.match(r"tutto nella GPU: \d+,\d GiB dei \d+,\d GiB necessari; l'embedding di input \(", italian)
    assert result.reasons[0] == english


def test_a_power_budget_and_a_gpu_cost_keep_their_numbers_and_say_them_when_read() -> None:
    """An RTX 4090 desktop: the draw sentence holds the watts as numbers and the price formula the dollars,
    and the same records read in Italian once the language is Italian (nothing was translated when they
    were computed)."""
    from rigcheck.core.estimate.cost import gpu_cost
    from rigcheck.core.estimate.power import power_budget

    catalog = load_catalog(use_overlay=False)
    gpu = catalog.gpu("nvidia-geforce-rtx-4090")
    assert gpu is not None
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * 1024**3), gpus=())
    budget = power_budget(simulate(bare, [gpu], 64), catalog, psu_watts=1000)
    draw = budget.reasons_said[0]
    assert isinstance(draw, Said) and dict(draw.values)["peak"] == Num(budget.peak_watts, group=False)
    cost = gpu_cost(gpu, today="2026-01-01")
    per_gib = next(f for f in cost.formulas_said if isinstance(f, Said) and "per GiB" in f.template)
    english = (budget.reasons[0], render(per_gib))
    assert english[0].startswith("Estimated draw: ") and english[1].startswith("Price per GiB of VRAM = $")
    try:
        set_language("it")
        italian = (budget.reasons[0], render(per_gib))
    finally:
        set_language("en")
    assert italian[0].startswith("Assorbimento stimato: ")
    assert italian[1].startswith("Prezzo per GiB di VRAM = $")
    assert (budget.reasons[0], render(per_gib)) == english
