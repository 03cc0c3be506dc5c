"""Issue 17 #5: strings from snapshots and model files reach Qt only as plain text.

A hostname, a GPU name, a probe note or a GGUF model name that holds HTML must show as the characters
it is: never styled, never loading an image, never a link. Every page is opened on a hostile snapshot
and a hostile model, then every label, tooltip and text browser is swept.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QLabel, QTextBrowser, QWidget
from pytestqt.qtbot import QtBot

from fakes.machines import small_machine
from rigcheck.core.catalog import load_catalog
from rigcheck.core.models.resolve import from_catalog
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"
#: what a hostile file would put in any string field
MARK = "<img src='/etc/hostname'><a href='https://evil.example/'>pwn</a>"


def _hostile_snapshot(tmp_path: Path) -> Path:
    data = json.loads((FIXTURES / "rtx4090-64gb.json").read_text())
    data["host"]["hostname"] = "host" + MARK
    data["gpus"][0]["name"] = "NVIDIA GeForce RTX 4090" + MARK
    data["cpu"]["model"] = "CPU" + MARK
    data["drivers"]["nvidia"] = "550.54" + MARK
    data["disks"] = [
        {"path": "/data" + MARK, "total_bytes": 10**12, "free_bytes": 10**11, "purpose": "x" + MARK}
    ]
    data["notes"] = [{"probe": "nvidia" + MARK, "level": "warning", "message": "GPU 0 " + MARK}]
    path = tmp_path / "<img src=x>.json"  # the file name is shown too
    path.write_text(json.dumps(data))
    return path


def _sweep(window: QWidget) -> list[str]:
    """Every place a hostile string is shown as rich text."""
    bad = []
    for label in window.findChildren(QLabel):
        text = label.text()
        if "<img" in text and label.textFormat() != Qt.TextFormat.PlainText:
            bad.append(f"label {label.objectName() or type(label.parent()).__name__}: {text[:120]!r}")
    for widget in window.findChildren(QWidget):
        if "<img" in widget.toolTip():
            bad.append(f"tooltip of {type(widget).__name__}: {widget.toolTip()[:120]!r}")
    for browser in window.findChildren(QTextBrowser):
        shown = browser.toHtml()
        if "<img" in shown or "<a " in shown:  # a real image or link, not the escaped characters
            bad.append(f"text browser: {shown[shown.find('<body') :][:300]!r}")
        if "evil.example" not in browser.toPlainText() and browser.isVisible():
            bad.append("the hostile model note is not shown as text in the Why? browser")
        if browser.openExternalLinks():
            bad.append("a text browser opens external links")
    return bad


def test_hostile_strings_are_plain_text_on_every_page(qtbot: QtBot, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    state = AppState(load_catalog(use_overlay=False), settings)
    window = MainWindow(state, small_machine)
    qtbot.addWidget(window)
    assert window.open_snapshot(_hostile_snapshot(tmp_path))
    model = from_catalog(load_catalog(use_overlay=False).model("qwen3-8b"))  # type: ignore[arg-type]
    state.choose_model(replace(model, name="Qwen" + MARK, notes=("a note " + MARK,)))
    for key in window.pages:
        window.show_page(key)
    fit = window.pages["fit"]
    fit.why_button.click()  # type: ignore[attr-defined]
    problems = _sweep(window)
    assert not problems, "\n".join(problems)


# -- every string field, every page and dialog (issue 30 #5) ---------------------------------------

MARKED = "<b>bold</b><img src='file:///etc/hostname'><a href='https://evil.example/'>pwn</a>"


def _strings(data: object, path: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """The path of every string value in a JSON document."""
    if isinstance(data, str):
        return [path]
    if isinstance(data, dict):
        return [p for k, v in data.items() for p in _strings(v, (*path, k))]
    if isinstance(data, list):
        return [p for i, v in enumerate(data) for p in _strings(v, (*path, i))]
    return []


def _set(data: object, path: tuple[object, ...], value: str) -> None:
    for key in path[:-1]:
        data = data[key]  # type: ignore[index]
    data[path[-1]] = value  # type: ignore[index]


def _marked_snapshot(tmp_path: Path, name: str = "marked.json", host: str = "host") -> Path:
    """The RTX 4090 snapshot with markup appended to every string field the loader still accepts."""
    from rigcheck.core.errors import InputError
    from rigcheck.core.machine import load_machine

    data = json.loads((FIXTURES / "rtx4090-64gb.json").read_text())
    data["notes"] = [{"probe": "nvidia", "level": "warning", "message": "GPU 0"}]
    probe = tmp_path / "probe.json"
    for path in _strings(data):
        if path[-1] in ("schema",):
            continue
        old = data
        for key in path:
            old = old[key]  # type: ignore[index]
        _set(data, path, f"{old}{MARKED}")
        probe.write_text(json.dumps(data))
        try:
            load_machine(probe)
        except InputError:
            _set(data, path, old)  # type: ignore[arg-type]  # an enumerated field: markup is refused there
    data["host"]["hostname"] = host + MARKED
    out = tmp_path / name
    out.write_text(json.dumps(data))
    return out


def _sweep_all(window: QWidget) -> list[str]:
    """Every place markup from a file is rendered as rich text: labels, tooltips (widgets and table,
    tree and list items), pyqtgraph titles, legends and axis labels."""
    from PySide6.QtWidgets import QListWidget, QTableWidget, QTreeWidget

    bad = []
    for label in window.findChildren(QLabel):
        if "<img" in label.text() and label.textFormat() != Qt.TextFormat.PlainText:
            bad.append(f"label in {type(label.parent()).__name__}: {label.text()[:100]!r}")
    for widget in window.findChildren(QWidget):
        if "<img" in widget.toolTip():
            bad.append(f"tooltip of {type(widget).__name__}: {widget.toolTip()[:100]!r}")
    items: list[object] = []
    for table in window.findChildren(QTableWidget):
        items += [table.item(r, c) for r in range(table.rowCount()) for c in range(table.columnCount())]
    for tree in window.findChildren(QTreeWidget):
        stack = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
        while stack:
            item = stack.pop()
            stack += [item.child(i) for i in range(item.childCount())]
            bad += [
                f"tree tooltip: {item.toolTip(c)[:100]!r}"
                for c in range(tree.columnCount())
                if "<img" in item.toolTip(c)
            ]
    for listing in window.findChildren(QListWidget):
        items += [listing.item(r) for r in range(listing.count())]
    bad += [f"item tooltip: {i.toolTip()[:100]!r}" for i in items if i is not None and "<img" in i.toolTip()]  # type: ignore[attr-defined]
    import sys

    if "pyqtgraph" in sys.modules:
        import pyqtgraph as pg

        for plot in window.findChildren(pg.PlotWidget):
            scene = plot.plotItem.scene()
            for item in scene.items() if scene is not None else ():
                if isinstance(item, pg.LabelItem) and "<img" in item.text:
                    bad.append(f"pyqtgraph label: {item.text[:100]!r}")
    return bad


def _marked_catalog() -> object:
    catalog = load_catalog(use_overlay=False)
    gpus = tuple(
        replace(g, name=g.name + MARKED, street_price_source="https://shop.example/" + MARKED)
        if g.id == "nvidia-geforce-rtx-5090"
        else g
        for g in catalog.gpus
    )
    return replace(catalog, gpus=gpus)


def test_markup_in_every_field_is_plain_text_on_every_page(qtbot: QtBot, tmp_path: Path) -> None:
    import csv

    from test_monitor_page import make_sample

    from rigcheck.core.monitor import columns, row

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    state = AppState(_marked_catalog(), settings)  # type: ignore[arg-type]
    window = MainWindow(state, small_machine)
    qtbot.addWidget(window)
    window.resize(1280, 800)
    window.show()
    assert window.open_snapshot(_marked_snapshot(tmp_path))
    for key in window.pages:
        window.show_page(key)
        window.state.pool.waitForDone()
        qtbot.wait(20)
    problems = _sweep_all(window)

    upgrade = window.pages["upgrade"]
    assert upgrade.select_gpu("nvidia-geforce-rtx-5090")  # type: ignore[attr-defined]
    upgrade.add_selected()  # type: ignore[attr-defined]
    upgrade.recompute()  # type: ignore[attr-defined]
    assert any(
        MARKED in upgrade.catalog_list.item(r, 0).text() for r in range(upgrade.catalog_list.rowCount())
    )  # type: ignore[attr-defined]
    problems += _sweep_all(upgrade)

    monitor = window.pages["monitor"]
    recording = tmp_path / "run.csv"  # one GPU, as the snapshot: the legend names it by the snapshot
    with recording.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, columns(make_sample(0, gpus=1)), extrasaction="ignore")
        writer.writeheader()
        for n in range(5):
            writer.writerow({k: "" if v is None else v for k, v in row(make_sample(n, gpus=1)).items()})
    window.show_page("monitor")
    with qtbot.waitSignal(monitor.replay_finished, timeout=10000) as opened:  # type: ignore[attr-defined]
        monitor.open_recording(recording)  # type: ignore[attr-defined]
    assert opened.args == [True]
    problems += _sweep_all(monitor)
    assert any("&lt;b&gt;" in chip.text() for chip in monitor.legend_box.findChildren(QLabel)), (
        "the name is shown, escaped"
    )  # type: ignore[attr-defined]

    fleet_dir = tmp_path / "fleet"
    fleet_dir.mkdir()
    for n in range(2):
        _marked_snapshot(fleet_dir, f"node{n}.json", host=f"node{n}")
    (fleet_dir / "probe.json").unlink()
    fleet = window.pages["fleet"]
    window.show_page("fleet")
    fleet.open_folder(fleet_dir)  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: fleet.fleet is not None, timeout=10000)  # type: ignore[attr-defined]
    problems += _sweep_all(fleet)
    window.close()
    assert not problems, "\n".join(problems)


def test_error_dialogs_show_markup_as_text(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtWidgets import QMessageBox

    shown: list[tuple[Qt.TextFormat, str]] = []
    monkeypatch.setattr(QMessageBox, "exec", lambda box: shown.append((box.textFormat(), box.text())) or 0)
    # the static helper renders text that looks like HTML as HTML: recorded as such, never shown
    monkeypatch.setattr(
        QMessageBox, "warning", lambda _p, _t, text: shown.append((Qt.TextFormat.AutoText, text))
    )
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(AppState(load_catalog(use_overlay=False), settings), small_machine)
    qtbot.addWidget(window)
    data = json.loads((FIXTURES / "rtx4090-64gb.json").read_text())
    bad_schema = tmp_path / "schema.json"
    bad_schema.write_text(json.dumps({**data, "schema": "rigcheck.machine/9" + MARKED}))
    bad_type = tmp_path / "type.json"
    bad_type.write_text(json.dumps({**data, "memory": {"total_bytes": MARKED}}))
    for path in (bad_schema, bad_type):
        assert not window.open_snapshot(path)
    gguf = tmp_path / "model.gguf"
    key = ("general." + MARKED).encode()
    gguf.write_bytes(b"GGUF" + (3).to_bytes(4, "little") + (0).to_bytes(8, "little") + (1).to_bytes(8, "little")
                     + len(key).to_bytes(8, "little") + key + (99).to_bytes(4, "little"))  # fmt: skip
    window.load_path(gguf)
    qtbot.waitUntil(lambda: len(shown) == 3, timeout=5000)
    assert any("<b>" in text for _format, text in shown), "the markup reached a dialog (as text)"
    assert all(fmt == Qt.TextFormat.PlainText for fmt, _text in shown), shown
