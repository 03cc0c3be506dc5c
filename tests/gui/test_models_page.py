"""The Models page: search, filter and sort the catalog, choose a model, look one up on the hub."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QSettings, Qt
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from rigcheck.core.catalog import ModelSpec, load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.recommend import recommend
from rigcheck.core.machine import load_machine
from rigcheck.core.models.hub import Cancelled
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.models.spec import ModelInfo
from rigcheck.gui import i18n
from rigcheck.gui.pages import models as models_page
from rigcheck.gui.pages import models_lookup, models_table  # load_hub_model and tr are read there too
from rigcheck.gui.pages.models import (
    CONTEXT,
    FAMILY,
    FIT,
    HF_ID,
    NAME,
    PARAMS,
    ModelsPage,
    billions,
    tokens,
)
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui

Load = Callable[..., ModelInfo]
FIXTURES = Path(__file__).parent.parent / "fixtures" / "machines"


@pytest.fixture(autouse=True)
def english() -> Iterator[None]:
    i18n.set_language("en")
    try:
        yield
    finally:
        i18n.set_language("en")


@pytest.fixture
def state(tmp_path: Path) -> Iterator[AppState]:
    app_state = AppState(
        load_catalog(use_overlay=False), QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    yield app_state
    assert app_state.pool.waitForDone(5000), "a look-up was left running"


@pytest.fixture
def page(qtbot: QtBot, state: AppState) -> ModelsPage:
    widget = ModelsPage(state)
    qtbot.addWidget(widget)
    widget.resize(1090, 740)
    widget.show()
    widget.activateWindow()
    qtbot.waitActive(widget)
    return widget


def shown(page: ModelsPage) -> list[ModelSpec]:
    return [page.proxy.spec(row) for row in range(page.proxy.rowCount())]


def row_of(page: ModelsPage, model_id: str) -> int:
    return next(row for row, spec in enumerate(shown(page)) if spec.id == model_id)


# -- the table ------------------------------------------------------------------------------------


def test_lists_the_whole_catalog_by_family_then_size(page: ModelsPage, state: AppState) -> None:
    specs = shown(page)
    assert len(specs) == len(state.catalog.models)
    keys = [(s.family.lower(), s.params_b or -1.0) for s in specs]
    assert keys == sorted(keys)
    assert page.count.text() == f"{len(specs)} of {len(specs)} models"
    assert page.table.horizontalHeader().sortIndicatorSection() == FAMILY


def test_cells_show_sizes_and_contexts_as_people_say_them(page: ModelsPage) -> None:
    row = row_of(page, "llama-3.1-8b")
    cell = page.proxy.index
    assert cell(row, NAME).data() == "Llama 3.1 8B"
    assert cell(row, PARAMS).data() == "8.0B"
    assert cell(row, CONTEXT).data() == "128k"
    assert cell(row, HF_ID).data() == "meta-llama/Llama-3.1-8B"
    assert (billions(None), billions(70.554)) == ("—", "70.6B")
    assert [tokens(n) for n in (4096, 131072, 163840, 128000, 1048576, 10485760, 512, None)] == [
        "4k", "128k", "160k", "128k", "1M", "10M", "512", "—",
    ]  # fmt: skip


def test_gated_models_carry_a_lock_and_say_so_in_words(page: ModelsPage) -> None:
    gated = page.proxy.index(row_of(page, "gemma-2-9b"), NAME)
    open_ = page.proxy.index(row_of(page, "qwen3-8b"), NAME)
    lock = gated.data(Qt.ItemDataRole.DecorationRole)
    assert not lock.isNull()
    assert lock.cacheKey() == page.source.lock_icon().cacheKey()
    assert "gated" in gated.data(Qt.ItemDataRole.ToolTipRole)
    assert gated.data(Qt.ItemDataRole.AccessibleTextRole) == "Gemma 2 9B, gated"
    assert open_.data(Qt.ItemDataRole.DecorationRole).cacheKey() != lock.cacheKey()
    assert "gated" not in open_.data(Qt.ItemDataRole.ToolTipRole)


def test_search_narrows_the_rows_case_insensitively(qtbot: QtBot, page: ModelsPage) -> None:
    everything = page.proxy.rowCount()
    qtbot.keyClicks(page.search, "QWEN3")
    specs = shown(page)
    assert 0 < len(specs) < everything
    assert all("qwen3" in f"{s.id} {s.name} {s.hf_id}".lower() for s in specs)
    assert page.count.text() == f"{len(specs)} of {everything} models"

    page.search.clear()
    qtbot.keyClicks(page.search, "mla chat")  # tags and words, all of them
    assert {s.id for s in shown(page)} == {"deepseek-v2-lite", "deepseek-v3"}
    page.search.setText("deepseek-ai/DeepSeek-R1-Distill-Llama")  # the hub id
    assert {s.id for s in shown(page)} == {"deepseek-r1-distill-llama-8b", "deepseek-r1-distill-llama-70b"}
    page.search.setText("no such model")
    assert page.proxy.rowCount() == 0
    assert page.count.text() == f"0 of {everything} models"


def test_family_and_moe_filters_combine_with_search(qtbot: QtBot, page: ModelsPage) -> None:
    page.family.setCurrentIndex(page.family.findData("mistral"))
    assert {s.family for s in shown(page)} == {"mistral"}
    mistral = page.proxy.rowCount()
    qtbot.mouseClick(page.moe_only, Qt.MouseButton.LeftButton)
    assert page.moe_only.isChecked()
    assert {s.id for s in shown(page)} == {"mixtral-8x7b", "mixtral-8x22b", "mistral-small-4-119b"}
    qtbot.keyClicks(page.search, "22b")
    assert [s.id for s in shown(page)] == ["mixtral-8x22b"]
    page.search.clear()
    page.moe_only.setChecked(False)
    assert page.proxy.rowCount() == mistral
    page.family.setCurrentIndex(0)  # All families
    page.moe_only.setChecked(True)
    assert shown(page) and all(s.is_moe for s in shown(page))
    assert page.family.itemText(0) == "All families"


def test_parameters_and_context_sort_as_numbers(qtbot: QtBot, page: ModelsPage) -> None:
    header = page.table.horizontalHeader()
    qtbot.mouseClick(
        header.viewport(),
        Qt.MouseButton.LeftButton,
        pos=QPoint(header.sectionViewportPosition(PARAMS) + 5, header.height() // 2),
    )
    assert header.sortIndicatorSection() == PARAMS
    sizes = [s.params_b for s in shown(page)]
    ascending = header.sortIndicatorOrder() == Qt.SortOrder.AscendingOrder
    assert sizes == sorted(sizes, reverse=not ascending)  # type: ignore[type-var]
    page.table.sortByColumn(PARAMS, Qt.SortOrder.AscendingOrder)
    assert row_of(page, "llama-3.1-8b") < row_of(page, "llama-3.1-70b")  # "70.6B" < "8.0B" as text
    assert row_of(page, "llama-3.1-70b") < row_of(page, "llama-3.1-405b")
    page.table.sortByColumn(CONTEXT, Qt.SortOrder.DescendingOrder)
    contexts = [s.max_context or -1 for s in shown(page)]
    assert contexts == sorted(contexts, reverse=True)
    assert shown(page)[0].id == "llama-4-scout-17b-16e"  # 10M tokens


# -- choosing a model -----------------------------------------------------------------------------


def test_double_click_chooses_the_model(qtbot: QtBot, page: ModelsPage, state: AppState) -> None:
    row = row_of(page, "qwen3-8b")
    index = page.proxy.index(row, NAME)
    page.table.scrollTo(index)
    centre = page.table.visualRect(index).center()
    qtbot.mouseClick(page.table.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    with qtbot.waitSignal(state.model_chosen, timeout=1000) as chosen:
        qtbot.mouseDClick(page.table.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    model = chosen.args[0]
    assert isinstance(model, ModelInfo)
    assert model == from_catalog(state.catalog.model("qwen3-8b"))  # type: ignore[arg-type]
    assert state.model is model


def test_enter_on_a_row_chooses_it(qtbot: QtBot, page: ModelsPage, state: AppState) -> None:
    qtbot.keyClicks(page.search, "phi-4-mini")
    page.table.setFocus()
    page.table.setCurrentIndex(page.proxy.index(0, NAME))
    with qtbot.waitSignal(state.model_chosen, timeout=1000) as chosen:
        qtbot.keyClick(page.table, Qt.Key.Key_Return)
    assert chosen.args[0].id == "phi-4-mini"


def test_fit_button_needs_a_selection_then_chooses_it(
    qtbot: QtBot, page: ModelsPage, state: AppState
) -> None:
    assert not page.fit_button.isEnabled()
    page.table.selectRow(row_of(page, "gpt-oss-20b"))
    assert page.fit_button.isEnabled()
    with qtbot.waitSignal(state.model_chosen, timeout=1000) as chosen:
        qtbot.mouseClick(page.fit_button, Qt.MouseButton.LeftButton)
    assert chosen.args[0].id == "gpt-oss-20b"
    assert chosen.args[0].source == "catalog:gpt-oss-20b"


def test_a_catalog_entry_that_cannot_be_read_is_shown_inline(
    qtbot: QtBot, page: ModelsPage, state: AppState, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(spec: ModelSpec) -> ModelInfo:
        raise InputError(f"catalog:{spec.id}", "config.json: no hidden_size")

    monkeypatch.setattr(models_page, "from_catalog", broken)
    page.table.selectRow(0)
    with qtbot.assertNotEmitted(state.model_chosen):
        page.fit_button.click()
    assert page.message.isVisible()
    assert "no hidden_size" in page.message.text()


# -- the hub --------------------------------------------------------------------------------------


def fake_hub(outcome: ModelInfo | Exception | None, calls: list[dict[str, Any]] | None = None) -> Load:
    """A stand-in for load_hub_model: one progress step, then the outcome (None: wait for cancel)."""

    def load(
        repo_id: str, *, progress: Callable[[str], None], cancel: Callable[[], bool], **kw: Any
    ) -> ModelInfo:
        if calls is not None:
            calls.append({"repo_id": repo_id, **kw})
        progress("config.json")
        if outcome is None:
            deadline = time.monotonic() + 5
            while not cancel():
                if time.monotonic() > deadline:
                    raise AssertionError("never cancelled")
                time.sleep(0.005)
            raise Cancelled
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    return load


def idle(page: ModelsPage) -> bool:
    return page.lookup_button.isEnabled() and not page.cancel_button.isEnabled()


def test_hub_lookup_shows_progress_then_chooses_the_model(
    qtbot: QtBot, page: ModelsPage, state: AppState, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = from_catalog(state.catalog.model("qwen3-8b"))  # type: ignore[arg-type]
    calls: list[dict[str, Any]] = []
    gate_open = False

    def slow(repo_id: str, **kw: Any) -> ModelInfo:
        kw["progress"]("config.json")
        while not gate_open:  # hold the worker so the GUI can be seen mid-way
            time.sleep(0.005)
        return fake_hub(found, calls)(repo_id, **kw)

    monkeypatch.setattr(models_lookup, "load_hub_model", slow)
    qtbot.keyClicks(page.hub_id, "Qwen/Qwen3-8B")
    qtbot.mouseClick(page.lookup_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "config.json" in page.step.text(), timeout=2000)
    assert "Qwen/Qwen3-8B" in page.step.text()
    assert page.activity.isVisible() and page.spinner.maximum() == 0  # busy, not a fake percentage
    assert not page.lookup_button.isEnabled() and page.cancel_button.isEnabled()
    with qtbot.waitSignal(state.model_chosen, timeout=2000) as chosen:
        gate_open = True
    assert chosen.args[0] is found
    assert calls == [{"repo_id": "Qwen/Qwen3-8B", "catalog": state.catalog}]
    assert idle(page) and not page.activity.isVisible()


def test_enter_in_the_hub_field_starts_the_lookup(
    qtbot: QtBot, page: ModelsPage, state: AppState, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = from_catalog(state.catalog.model("phi-4"))  # type: ignore[arg-type]
    monkeypatch.setattr(models_lookup, "load_hub_model", fake_hub(found))
    qtbot.keyClicks(page.hub_id, "microsoft/phi-4")
    with qtbot.waitSignal(state.model_chosen, timeout=2000) as chosen:
        qtbot.keyClick(page.hub_id, Qt.Key.Key_Return)
    assert chosen.args[0] is found


def test_hub_errors_are_one_line_inline_and_the_buttons_come_back(
    qtbot: QtBot, page: ModelsPage, state: AppState, monkeypatch: pytest.MonkeyPatch
) -> None:
    problem = "gated: accept the licence at https://huggingface.co/org/x\n(and a second line)"
    monkeypatch.setattr(models_lookup, "load_hub_model", fake_hub(InputError("hf:org/x", problem)))
    qtbot.keyClicks(page.hub_id, "org/x")
    with qtbot.assertNotEmitted(state.model_chosen):
        page.lookup_button.click()
        qtbot.waitUntil(lambda: idle(page), timeout=2000)
    assert page.message.isVisible()
    assert page.message.text() == "⚠ hf:org/x: gated: accept the licence at https://huggingface.co/org/x"
    assert not page.activity.isVisible()

    monkeypatch.setattr(models_lookup, "load_hub_model", fake_hub(RuntimeError("connection reset")))
    page.lookup_button.click()
    qtbot.waitUntil(lambda: "connection reset" in page.message.text(), timeout=2000)
    assert page.message.text() == "⚠ hf:org/x: RuntimeError: connection reset"
    qtbot.waitUntil(lambda: idle(page), timeout=2000)


def test_cancel_stops_the_lookup(
    qtbot: QtBot, page: ModelsPage, state: AppState, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(models_lookup, "load_hub_model", fake_hub(None))
    qtbot.keyClicks(page.hub_id, "org/huge")
    page.lookup_button.setFocus()
    qtbot.keyClick(page.lookup_button, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: "config.json" in page.step.text(), timeout=2000)
    assert page.cancel_button.hasFocus()  # the focus was on Look up, now disabled
    qtbot.keyClick(page.hub_id, Qt.Key.Key_Return)  # a second look-up while one runs is ignored
    with qtbot.assertNotEmitted(state.model_chosen):
        qtbot.keyClick(page.cancel_button, Qt.Key.Key_Space)
        qtbot.waitUntil(lambda: page.message.text() == "Cancelled", timeout=2000)
    assert idle(page) and not page.activity.isVisible()
    assert page.hub_id.hasFocus()  # the focus was on Cancel, now disabled
    assert state.pool.waitForDone(2000)


def test_an_empty_hub_id_is_explained_not_looked_up(
    qtbot: QtBot, page: ModelsPage, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(models_lookup, "load_hub_model", fake_hub(None, calls))
    qtbot.keyClick(page.hub_id, Qt.Key.Key_Return)
    assert "org/name" in page.message.text()
    assert idle(page) and not calls


# -- this machine's answer -------------------------------------------------------------------------


def test_fit_column_is_the_recommendation_sortable_and_filterable(
    qtbot: QtBot, state: AppState, page: ModelsPage
) -> None:
    machine = load_machine(FIXTURES / "rtx4090-64gb.json")
    state.set_machine(machine, "RTX 4090", False)
    qtbot.waitUntil(lambda: page.source.fit(state.catalog.models[0]) is not None, timeout=20000)
    spec = state.catalog.model("llama-3.1-8b")
    assert spec is not None
    rec = recommend(from_catalog(spec), machine, "inference", state.catalog)
    assert rec.best is not None
    cell = page.proxy.index(row_of(page, "llama-3.1-8b"), FIT).data()
    speed = f"~{rec.best.tokens_per_s:,.0f} tok/s"
    assert cell == f"✓ On the GPU · {rec.best.quant} · {speed}"  # glyph + words + format + speed
    page.table.sortByColumn(FIT, Qt.SortOrder.AscendingOrder)
    views = [page.source.fit(s) for s in shown(page)]
    assert all(v is not None for v in views)
    keys = [v.sort_key() for v in views if v is not None]
    assert keys == sorted(keys)  # on the GPU first, fastest first, "does not fit" last
    assert views[0] is not None and views[0].where == "gpu"
    assert views[-1] is not None and views[-1].where is None  # e.g. a 671B model on 24 GB + 64 GB
    page.gpu_only.setChecked(True)
    kept = shown(page)
    assert kept and all((v := page.source.fit(s)) is not None and v.where == "gpu" for s in kept)
    assert "deepseek-v3" not in {s.id for s in kept}
    assert page.count.text() == f"{len(kept)} of {len(state.catalog.models)} models"


# -- keyboard, accessibility, language -------------------------------------------------------------


def test_tab_order_and_accessible_names(page: ModelsPage) -> None:
    expected = [
        page.search, page.family, page.moe_only, page.gpu_only, page.table, page.hub_id, page.lookup_button,
    ]  # fmt: skip
    page.table.selectRow(0)  # so the Fit button takes part, between the table and the hub field
    expected.insert(5, page.fit_button)
    chain: list[QWidget] = []
    widget: QWidget = page.search
    for _ in range(200):
        if len(chain) == len(expected):
            break
        if widget.focusPolicy() & Qt.FocusPolicy.TabFocus and widget.isEnabled() and widget.isVisible():
            chain.append(widget)
        widget = widget.nextInFocusChain()
    assert chain == expected
    for w in (*expected, page.cancel_button):
        assert w.accessibleName(), w
    buddies = {label.buddy() for label in page.findChildren(models_page.QLabel) if label.buddy()}
    assert {page.search, page.family, page.hub_id} <= buddies


def test_italian(qtbot: QtBot, state: AppState, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: set[str] = set()

    def recording_tr(text: str) -> str:
        asked.add(text)
        return i18n.tr(text)

    monkeypatch.setattr(models_page, "tr", recording_tr)
    monkeypatch.setattr(models_table, "tr", recording_tr)
    monkeypatch.setattr(models_lookup, "tr", recording_tr)
    i18n.set_language("it")
    page = ModelsPage(state)
    qtbot.addWidget(page)
    assert page.moe_only.text() == "Solo mixture of &experts"
    assert page.family.itemText(0) == "Tutte le famiglie"
    assert page.source.headerData(PARAMS, Qt.Orientation.Horizontal) == "Parametri"
    total = len(state.catalog.models)
    assert page.count.text() == f"{total} di {total} modelli"
    # every string the page can show (headers, tooltips, cells, messages) has an Italian entry
    for section in range(page.source.columnCount()):
        for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            page.source.headerData(section, Qt.Orientation.Horizontal, role)
    for row in range(page.source.rowCount()):
        for column in range(page.source.columnCount()):
            for role in (Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.AccessibleTextRole):
                page.source.index(row, column).data(role)
    page.start_lookup()  # empty id: explained
    assert page.message.text() == "⚠ Scrivi un id Hugging Face come org/nome"
    assert len(asked) > 40
    assert {text for text in asked if i18n.tr(text) == text} == set()
