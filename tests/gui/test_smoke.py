"""The window as a user meets it: opens, probes off the GUI thread, pages, snapshots, drops, language."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from fakes.machines import small_machine
from rigcheck.core.catalog import load_catalog
from rigcheck.core.machine import Machine, load_machine, save_machine
from rigcheck.gui import i18n
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages.fit import FitPage
from rigcheck.gui.pages.overview import ModelCard, OverviewPage
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture(autouse=True)
def english() -> object:
    i18n.set_language("en")
    yield
    i18n.set_language("en")


@pytest.fixture
def window(qtbot: QtBot, settings: QSettings) -> MainWindow:
    state = AppState(load_catalog(use_overlay=False), settings)
    win = MainWindow(state, small_machine)
    qtbot.addWidget(win)
    return win


def answered(qtbot: QtBot, window: MainWindow) -> None:
    """The pages' answers worked out on the pool have been shown (the Overview's cards, Fit's table)."""
    qtbot.waitUntil(lambda: not window.busy(), timeout=20000)


def probed(qtbot: QtBot, window: MainWindow) -> None:
    window.start_probe()
    qtbot.waitUntil(lambda: window.state.machine is not None, timeout=5000)
    window.state.pool.waitForDone()
    answered(qtbot, window)


def test_window_opens_with_its_pages_and_probes(qtbot: QtBot, window: MainWindow) -> None:
    window.show()
    assert list(window.pages) == ["overview", "models", "fit", "compat", "monitor", "upgrade", "fleet"]
    probed(qtbot, window)
    assert "This computer" in window.machine_label.text()
    assert "not this computer" not in window.machine_label.text()
    overview = window.pages["overview"]
    assert isinstance(overview, OverviewPage)
    assert overview.cards, "the 'what you can run' cards are shown"
    window.close()


def test_snapshot_is_labelled_not_this_computer(qtbot: QtBot, window: MainWindow) -> None:
    assert window.open_snapshot(FIXTURES / "rtx4090-64gb.json")
    assert "not this computer" in window.machine_label.text()
    assert window.state.is_live is False
    answered(qtbot, window)
    cards = window.pages["overview"].cards  # type: ignore[attr-defined]
    by_id = {card.spec.id: card for card in cards}
    assert by_id["qwen3-8b"].verdict == "fits"
    assert by_id["llama-3.3-70b"].verdict == "fits_with_offload"
    assert str(FIXTURES / "rtx4090-64gb.json") in window._recent()


def test_bad_snapshot_gets_a_message(
    window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "exec", lambda box: shown.append(box.text()) or 0)
    path = tmp_path / "bad.json"
    path.write_text("{")
    assert not window.open_snapshot(path)
    assert shown and shown[0].startswith(f"{path}: not valid JSON")
    assert window.state.machine is None


def test_card_opens_the_model_in_fit(qtbot: QtBot, window: MainWindow) -> None:
    window.open_snapshot(FIXTURES / "rtx4090-64gb.json")
    answered(qtbot, window)
    card = next(c for c in window.pages["overview"].cards if c.spec.id == "qwen3-8b")  # type: ignore[attr-defined]
    assert isinstance(card, ModelCard)
    qtbot.mouseClick(card, Qt.MouseButton.LeftButton)
    assert window.stack.currentWidget() is window.pages["fit"]
    fit_page = window.pages["fit"]
    assert isinstance(fit_page, FitPage)
    assert fit_page.model is not None and fit_page.model.id == "qwen3-8b"


def test_a_card_opens_fit_with_its_own_settings(qtbot: QtBot, window: MainWindow) -> None:
    window.open_snapshot(FIXTURES / "rtx4090-64gb.json")
    fit_page = window.pages["fit"]
    assert isinstance(fit_page, FitPage)
    fit_page.context_value.setValue(65536)  # the last-used context is not the card's
    fit_page.quant.setCurrentIndex(fit_page.quant.findData("q2_k"))
    answered(qtbot, window)
    card = next(c for c in window.pages["overview"].cards if c.spec.id == "qwen3-8b")  # type: ignore[attr-defined]
    assert isinstance(card, ModelCard)
    qtbot.mouseClick(card, Qt.MouseButton.LeftButton)
    assert fit_page.result is not None
    assert fit_page.context_value.value() == card.context == fit_page.result.estimate.context
    assert fit_page.result.verdict == card.verdict
    assert fit_page.quant.currentIndex() == fit_page._quant_index(card.quant)


def test_fit_speaks_plainly(qtbot: QtBot, window: MainWindow) -> None:
    """Rounded speeds, the catalog's format names, and each device against its own capacity."""
    window.open_snapshot(FIXTURES / "rtx4090-64gb.json")
    page = window.pages["fit"]
    assert isinstance(page, FitPage)
    names = [page.quant.itemText(i) for i in range(page.quant.count())]
    assert "BF16" in names and "Q4_K_M" in names and "bf16" not in names
    assert not any("mix" in n for n in names)  # no jargon such as "(file mix)"
    page.quant.setCurrentIndex(page.quant.findData("q4_k_m"))
    text = page.speed.text()
    import re

    shown = re.search(r"Generation</b>: (?:<span[^>]*>)?~([\d,.]+)(?:</span>)? tokens/s", text)
    assert shown is not None
    digits = shown.group(1).replace(",", "").replace(".", "").rstrip("0")
    assert len(digits) <= 2  # two significant figures: "~120", never "~124.5"


def test_overview_shows_and_edits_the_host_bandwidth(qtbot: QtBot, window: MainWindow) -> None:
    window.open_snapshot(FIXTURES / "rtx4090-64gb.json")
    page = window.pages["overview"]
    assert page.bandwidth.value() > 0  # type: ignore[attr-defined]
    assert page.bandwidth_source.text()  # type: ignore[attr-defined]
    page.bandwidth.setValue(321)  # type: ignore[attr-defined]
    page.bandwidth.editingFinished.emit()  # type: ignore[attr-defined]
    machine = window.state.machine
    assert machine is not None
    assert (machine.memory.bandwidth_bytes_per_s, machine.memory.bandwidth_source) == (
        321 * 10**9,
        "measured",
    )
    assert page.bandwidth_source.text() == "measured or entered"  # type: ignore[attr-defined]


def test_fit_page_imports_llama_bench_results(qtbot: QtBot, window: MainWindow) -> None:
    from rigcheck.core.models.resolve import from_catalog

    window.open_snapshot(FIXTURES / "rtx4090-64gb.json")
    page = window.pages["fit"]
    assert isinstance(page, FitPage)
    window.state.choose_model(from_catalog(load_catalog(use_overlay=False).model("llama-3.1-8b")))  # type: ignore[arg-type]
    page.quant.setCurrentIndex(page.quant.findData("q4_k_m"))
    bench = (
        Path(__file__).resolve().parent.parent / "fixtures" / "llama-bench" / "rtx4090-llama3-8b-q4km.json"
    )
    page.import_bench(str(bench))
    assert page.result is not None and page.result.speed.decode_tokens_per_s == 130.58
    assert page.result.speed.measured_from == bench.name
    page.import_bench(str(bench.parent / "README.md"))  # not JSON: a message, no traceback
    assert "not llama-bench JSON" in page.solver_text.text()


def test_fit_page_defaults_to_the_released_format(qtbot: QtBot, window: MainWindow) -> None:
    from rigcheck.core.models.resolve import from_catalog

    window.open_snapshot(FIXTURES / "rtx4090-64gb.json")
    page = window.pages["fit"]
    assert isinstance(page, FitPage)
    window.state.choose_model(from_catalog(load_catalog(use_overlay=False).model("gpt-oss-20b")))  # type: ignore[arg-type]
    assert page.quant.currentData() == "mxfp4"
    assert page.result is not None and page.result.verdict == "fits"


def test_fit_page_reacts_to_the_controls(qtbot: QtBot, window: MainWindow) -> None:
    window.open_snapshot(FIXTURES / "rtx4090-64gb.json")
    page = window.pages["fit"]
    assert isinstance(page, FitPage)
    llama = load_catalog(use_overlay=False).model("llama-3.1-70b")
    from rigcheck.core.models.resolve import from_catalog

    window.state.choose_model(from_catalog(llama))  # type: ignore[arg-type]
    page.quant.setCurrentIndex(page.quant.findData("q4_k_m"))
    assert page.result is not None and page.result.verdict == "fits_with_offload"
    page.quant.setCurrentIndex(page.quant.findData("q2_k"))
    first = page.result.estimate.total("weights")
    assert page.result.estimate.total("weights") < 30 * 1024**3 and first == page.result.estimate.total(
        "weights"
    )
    # dragging the context slider recomputes: more context, more KV cache
    page.context.setValue(100)
    qtbot.waitUntil(lambda: not page.busy(), timeout=2000)  # the estimate follows once the slider rests
    small_kv = page.result.estimate.total("kv_cache")
    page.context.setValue(900)
    assert page.busy(), "a drag is debounced: one recomputation when it rests, not one per pixel"
    qtbot.waitUntil(lambda: not page.busy(), timeout=2000)
    assert page.result.estimate.total("kv_cache") > small_kv
    assert page.context_value.value() > 8192
    page.offload.setCurrentIndex(page.offload.findData("none"))
    assert page.result.verdict == "does_not_fit"
    page.why_button.click()
    assert page.why.isVisible() or not page.isVisible()
    assert "formula" in page.why.toHtml()


def test_fit_solvers(qtbot: QtBot, window: MainWindow) -> None:
    window.open_snapshot(FIXTURES / "rtx4090-64gb.json")
    page = window.pages["fit"]
    assert isinstance(page, FitPage)
    page.quant.setCurrentIndex(page.quant.findData("bf16"))
    page.context_value.setValue(131072)
    page.fit_max_context()  # with RAM allowed (Automatic), the whole trained context runs
    assert page.context_value.value() == 131072
    assert "Longest context that runs: 131,072" in page.solver_text.text()
    assert "entirely on the GPU" in page.solver_text.text()
    page.offload.setCurrentIndex(page.offload.findData("none"))
    page.fit_max_context()  # GPU only: shorter, and it fits
    assert page.context_value.value() < 131072
    assert page.result is not None and page.result.verdict == "fits"
    page.offload.setCurrentIndex(page.offload.findData("auto"))
    page.context_value.setValue(8192)
    page.quant.setCurrentIndex(page.quant.findData("q2_k"))
    page.fit_best_quant()  # back to the recommendation, with why
    answered(qtbot, window)
    rec = page.recommendation
    assert rec is not None and rec.best is not None
    assert page.result.estimate.quant_name.removesuffix(" (file mix)") == rec.best.quant
    assert "highest-quality format" in page.solver_text.text()


def test_fit_page_ladder_and_command(qtbot: QtBot, window: MainWindow) -> None:
    from rigcheck.core.models.resolve import from_catalog

    window.open_snapshot(FIXTURES / "rtx4090-64gb.json")
    page = window.pages["fit"]
    assert isinstance(page, FitPage)
    window.state.choose_model(from_catalog(load_catalog(use_overlay=False).model("gpt-oss-120b")))  # type: ignore[arg-type]
    answered(qtbot, window)
    rec = page.recommendation
    assert rec is not None and rec.best is not None
    assert page.quant.currentData() == "mxfp4"  # the recommendation is the default
    assert page.ladder.rowCount() == len(rec.ladder)
    assert page.ladder.item(0, 0).text() == "▶ MXFP4"
    page.command_engine.setCurrentIndex(page.command_engine.findText("llama.cpp"))
    command = page.command.text()
    placement = rec.best.result.placement
    assert f"--n-cpu-moe {placement.cpu_expert_layers}" in command and "-fa on" in command
    page.copy_button.click()
    assert QGuiApplication.clipboard().text() == command
    page._ladder_chosen(len(rec.ladder) - 1, 0)  # double-click the last row: try that format
    assert page.result is not None and page.result.estimate.quant_name.startswith(rec.ladder[-1].quant)


def test_dropping_a_config_json_opens_it_in_fit(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    window.open_snapshot(FIXTURES / "rtx4090-64gb.json")
    spec = load_catalog(use_overlay=False).model("qwen2.5-7b")
    assert spec is not None
    folder = tmp_path / "my-model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(spec.config))
    window.load_path(folder / "config.json")
    qtbot.waitUntil(lambda: window.stack.currentWidget() is window.pages["fit"], timeout=5000)
    window.state.pool.waitForDone()
    assert window.pages["fit"].model.arch.model_type == "qwen2"  # type: ignore[attr-defined]


def test_dropping_a_snapshot_opens_it_as_the_machine(window: MainWindow, tmp_path: Path) -> None:
    path = tmp_path / "lab.json"
    save_machine(small_machine("lab-9"), path)
    window.load_path(path)
    assert window.state.machine is not None and window.state.machine.host.hostname == "lab-9"


def test_a_report_opens_anywhere_a_snapshot_does(window: MainWindow, tmp_path: Path) -> None:
    from rigcheck.core.report.report import build_report, render_json

    path = tmp_path / "lab-3.report.json"
    report = build_report(small_machine("lab-3"), window.state.catalog, models=[])
    path.write_text(render_json(report), encoding="utf-8")
    window.load_path(path)  # dropped
    assert window.state.machine == small_machine("lab-3")
    window.open_snapshot(FIXTURES / "two-gpus-128gb.json")
    assert window.open_snapshot(path)  # File > Open snapshot
    assert window.state.machine == small_machine("lab-3")


def test_bad_dropped_file_is_a_message(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "exec", lambda box: shown.append(box.text()) or 0)
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF\x03\x00\x00\x00\x01")
    window.load_path(bad)
    qtbot.waitUntil(lambda: bool(shown), timeout=5000)
    assert "\n" not in shown[0]


def test_language_switch_to_italian(qtbot: QtBot, window: MainWindow) -> None:
    window.set_language("it")
    assert window.nav.item(0).text() == "Panoramica"
    assert window.nav.item(3).text() == "Compatibilità"
    window.set_language("en")
    assert window.nav.item(0).text() == "Overview"


def test_geometry_language_and_page_persist(qtbot: QtBot, settings: QSettings) -> None:
    state = AppState(load_catalog(use_overlay=False), settings)
    first = MainWindow(state, small_machine)
    qtbot.addWidget(first)
    first.resize(1001, 702)
    first.show_page("fit")
    first.close()
    second = MainWindow(AppState(load_catalog(use_overlay=False), settings), small_machine)
    qtbot.addWidget(second)
    # the offscreen screen is narrower than the window's minimum width, so compare the height
    assert second.size().height() == 702
    assert second.stack.currentWidget() is second.pages["fit"]


def test_screenshots_of_every_page(qtbot: QtBot, tmp_path: Path, settings: QSettings) -> None:
    from rigcheck.gui.app import create_window, screenshots

    machine: Machine = load_machine(FIXTURES / "two-gpus-128gb.json")
    window = create_window(settings, snapshot=machine, snapshot_name="two-gpus-128gb.json")
    qtbot.addWidget(window)
    written = screenshots(window, tmp_path)
    assert [p.name for p in written] == [
        "overview.png",
        "models.png",
        "fit.png",
        "compat.png",
        "monitor.png",
        "upgrade.png",
        "fleet.png",
    ]
    from PySide6.QtGui import QImage

    image = QImage(str(written[0]))
    assert (image.width(), image.height()) == (1280, 800)
    # each PNG names the page that was really on screen when it was grabbed
    assert [QImage(str(p)).text("rigcheck-page") for p in written] == [p.stem for p in written]
    # the Upgrade page's deferred recomputation ran before its picture was taken
    upgrade = window.pages["upgrade"]
    assert upgrade.table.rowCount() > 0 and upgrade.now_text.text()


def test_gui_pages_in_the_cli_help_are_the_windows_pages(window: MainWindow) -> None:
    from rigcheck.cli import GUI_PAGES

    assert tuple(window.pages) == GUI_PAGES


def test_a_page_that_fails_is_a_message_and_fails_the_screenshot(
    qtbot: QtBot, tmp_path: Path, settings: QSettings, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    from rigcheck.gui import main_window
    from rigcheck.gui.app import ScreenshotError, create_window, screenshots

    table = main_window._page_table()

    def broken(_state: AppState) -> OverviewPage:
        raise RuntimeError("the upgrade page is broken")

    monkeypatch.setattr(
        main_window, "_page_table", lambda: [(k, t, broken if k == "upgrade" else f) for k, t, f in table]
    )
    window = create_window(settings, snapshot=small_machine(), snapshot_name="small")
    qtbot.addWidget(window)
    with pytest.raises(ScreenshotError, match="upgrade: RuntimeError: the upgrade page is broken"):
        screenshots(window, tmp_path)
    # the other pages were still written; the failed one shows its failure, not the previous page
    from PySide6.QtGui import QImage

    assert QImage(str(tmp_path / "upgrade.png")).text("rigcheck-page") == "upgrade-failed"
    assert QImage(str(tmp_path / "fleet.png")).text("rigcheck-page") == "fleet"
    err = capsys.readouterr().err
    assert "rigcheck: error: the upgrade page failed to open: RuntimeError" in err
    assert "Traceback" not in err, "no traceback without --debug"


def test_compat_page_groups_by_gpu_and_copies(qtbot: QtBot, window: MainWindow) -> None:
    from PySide6.QtWidgets import QApplication, QToolButton

    from rigcheck.gui.pages.compat import CompatPage

    window.open_snapshot(FIXTURES / "two-gpus-128gb.json")
    page = window.pages["compat"]
    assert isinstance(page, CompatPage)
    qtbot.waitUntil(lambda: not page.busy(), timeout=10000)  # worked out on the pool
    groups = [page.tree.topLevelItem(i).text(0) for i in range(page.tree.topLevelItemCount())]
    assert groups[0].startswith("This machine")
    assert groups[1].startswith("GPU 0: GeForce RTX 3090") and groups[2].startswith("GPU 1: GeForce RTX 4090")
    first_gpu = page.tree.topLevelItem(1)
    statuses = [first_gpu.child(i).text(0) for i in range(first_gpu.childCount())]
    # what does not run here and is not installed is muted ("–"), never a red failure, folded after OK
    assert statuses[-1].startswith("– ") and statuses[-1].endswith("would not work here")
    assert statuses[-2].startswith("✔")
    assert not any(s.startswith("✘") for s in statuses)  # nothing installed on this GPU is broken
    assert page.torch_command.text().startswith("pip install torch==")
    qtbot.mouseClick(page.copy_torch, Qt.MouseButton.LeftButton)
    assert QApplication.clipboard().text() == page.torch_command.text()
    # a Copy button copies a command; a fix that is a sentence of advice is read, not copied
    rows = [group.child(r) for g in range(page.tree.topLevelItemCount()) for group in [page.tree.topLevelItem(g)]
            for r in range(group.childCount())]  # fmt: skip
    commands = {f.subject: f.command for f in page.findings}
    with_button = [r for r in rows if page.tree.itemWidget(r, 5) is not None]
    assert with_button and all(commands.get(r.text(2)) for r in with_button)
    assert any(r.text(4) and page.tree.itemWidget(r, 5) is None for r in rows), "advice gets no Copy button"
    button = page.tree.itemWidget(with_button[0], 5).findChild(QToolButton)
    assert isinstance(button, QToolButton)
    button.click()
    assert QApplication.clipboard().text() == commands[with_button[0].text(2)]
    with_fix = next(r for r in rows if r.text(4))  # the details of a finding with a fix name it
    page.tree.setCurrentItem(with_fix)
    assert "Fix" in page.details.text()


def test_dropping_a_gguf_file_opens_it_in_fit(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    from PySide6.QtCore import QMimeData, QPointF, QUrl
    from PySide6.QtGui import QDropEvent

    from fakes.gguf_files import write_gguf

    window.open_snapshot(FIXTURES / "rtx4090-64gb.json")
    path = tmp_path / "tiny-Q8_0.gguf"
    model = write_gguf(path)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(
        QPointF(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dropEvent(event)
    qtbot.waitUntil(lambda: window.stack.currentWidget() is window.pages["fit"], timeout=5000)
    window.state.pool.waitForDone()
    page = window.pages["fit"]
    assert isinstance(page, FitPage)
    assert page.model is not None and page.model.weights is not None
    assert page.model.weights.total_bytes == model.total_bytes()
    assert page.quant.currentData() == "file"  # the file's own tensor types are used
    assert page.result is not None and page.result.estimate.terms[0].provenance == "file"


@pytest.mark.parametrize("debug", [False, True])
def test_an_error_in_a_slot_is_one_line_unless_debug(
    debug: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from rigcheck.gui.app import _install_excepthook

    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # restored after the test
    _install_excepthook(debug)
    try:
        raise ValueError("a slot broke")
    except ValueError as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)
    err = capsys.readouterr().err
    assert "rigcheck: error: internal error in the app: ValueError: a slot broke" in err
    assert ("Traceback" in err) is debug
