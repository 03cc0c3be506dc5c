"""One answer everywhere: the same model on the same machine gets the same recommendation from
``rigcheck fit --json``, a report's JSON, ``rigcheck upgrade --json`` (before, and after when nothing
changes), ``rigcheck fleet --model`` and the GUI's view model (Overview cards, the Models page)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes.cli import run_cli
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.recommend import recommend
from rigcheck.core.machine import CPU, Machine, Memory, load_machine, save_machine
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.report.report import build_report, render_json
from rigcheck.gui.fitview import fit_view, recommend_catalog

FIXTURES = Path(__file__).parent / "fixtures" / "machines"
GIB = 1024**3


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def _cpu_only(tmp_path: Path) -> Path:
    """The issue's case: no GPU at all, 64 GiB of RAM."""
    box = Machine(cpu=CPU(logical_cores=16, model="AMD Ryzen 7 7700X 8-Core Processor"),
                  memory=Memory(total_bytes=64 * GIB), gpus=())  # fmt: skip
    path = tmp_path / "cpu-only.json"
    save_machine(box, path)
    return path


def _answer(quant: object, where: object, tokens: object) -> tuple[object, object, float | None]:
    return (quant, where, round(float(tokens), 1) if isinstance(tokens, (int, float)) else None)


@pytest.mark.parametrize(
    ("machine_file", "model_id"),
    [
        ("cpu", "llama-3.1-8b"),
        ("rtx4090-64gb.json", "llama-3.1-8b"),
        ("rtx4090-64gb.json", "llama-3.1-70b"),
        ("rtx4090-64gb.json", "gpt-oss-120b"),
        ("two-gpus-128gb.json", "qwen3-30b-a3b"),
    ],
)
def test_every_surface_gives_one_answer(
    catalog: Catalog, tmp_path: Path, machine_file: str, model_id: str
) -> None:
    path = _cpu_only(tmp_path) if machine_file == "cpu" else FIXTURES / machine_file
    machine = load_machine(path)
    spec = catalog.model(model_id)
    assert spec is not None
    rec = recommend(from_catalog(spec), machine, "inference", catalog)
    assert rec.best is not None
    expected = _answer(rec.best.quant, rec.best.where, rec.best.decode_tokens_per_s)

    # rigcheck fit --json
    code, out = run_cli("fit", model_id, "--machine", str(path), "--json")
    assert code == 0
    cli = json.loads(out)
    assert cli["recommended"] is True
    assert _answer(cli["quant"], cli["placement"]["where"], cli["speed"]["decode_tokens_per_s"]) == expected
    assert cli["where"] == rec.best.where
    assert [r["quant"] for r in cli["ladder"]] == [r.quant for r in rec.ladder]

    # a report's JSON (rigcheck audit --format json writes the same document)
    report = json.loads(render_json(build_report(machine, catalog, models=[model_id])))
    (held,) = report["fits"]
    assert _answer(held["quant"], held["where"], held["decode_tokens_per_s"]) == expected

    # rigcheck upgrade --json with nothing changed: before and after are the answer
    code, out = run_cli("upgrade", "--machine", str(path), "--models", model_id, "--json")
    assert code == 0
    (change,) = json.loads(out)["models"]
    for side in ("before", "after"):
        o = change[side]
        assert _answer(o["quant"], o["where"], o["decode_tokens_per_s"]) == expected
    assert change["better"] is None and not change["newly_runnable"]

    # rigcheck fleet --model over that machine's report
    report_file = tmp_path / "node.json"
    report_file.write_text(render_json(build_report(machine, catalog, models=[model_id])), encoding="utf-8")
    code, out = run_cli("fleet", str(report_file), "--model", model_id, "--json")
    assert code == 0
    fleet = json.loads(out)
    cells = [c for row in fleet["models"] for c in row["nodes"]]
    assert [(c["quant"], round(c["decode_tokens_per_s"], 1)) for c in cells] == [(expected[0], expected[2])]

    # the GUI's view model: the Overview card and the Models page's fit column paint this
    view = fit_view(rec)
    assert _answer(view.quant, view.where, view.tokens_per_s) == expected
    column = recommend_catalog([spec], machine, catalog, live=False)[model_id]
    assert column == view


def test_no_gpu_means_runs_on_the_cpu(tmp_path: Path) -> None:
    code, out = run_cli("fit", "llama-3.1-8b", "--machine", str(_cpu_only(tmp_path)))
    assert code == 0
    assert "runs on the CPU" in out and "offload" not in out.split("\n\n")[0].lower()
    code, out = run_cli("fit", "llama-3.1-8b", "--machine", str(_cpu_only(tmp_path)), "--json")
    data = json.loads(out)
    assert data["where"] == "cpu" and all(r["where"] in ("cpu", None) for r in data["ladder"])
