"""The standing fuzz suite, GUI half (issue 30 #5, #11, #14, #15; Build 3, 6, 7).

Two properties, drawn by hypothesis and derandomised under CI as test_fuzz.py is:

* hostile strings (tests/fakes/fuzz_gui.py: markup, a link, a ``file://`` image, a table, line
  breaks, bidi controls, 4,000 characters) in every string field a snapshot may hold, in its file name,
  in a model's name and notes, an overlay GPU's name and price source, a fleet's file names and
  reports, a recording's name, a snapshot's schema string and a wrong-typed value, a GGUF key and a
  config.json's ``model_type``: every page and every dialog the app can show is opened on them, and
  nothing renders them as rich text and nothing widens the window past 1024 px;
* hostile values for every QSettings key the app reads (set through Qt, or written into the file by
  hand): every page still opens, with each number inside its range.

About 15 s in the normal run; ``RIGCHECK_FUZZ_SCALE`` scales it as it does the other fuzz files.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from fakes import fuzz
from fakes.fuzz_gui import PAYLOADS, WIDTH, file_name, recorded_dialogs, rendered, strings_of, too_wide
from fakes.machines import small_machine
from test_fuzz import BOX, FUZZ, SNAPSHOT

pytestmark = pytest.mark.gui
GUI = settings(
    FUZZ,
    # no shrinking: each case opens a window (1-4 s); the failing case's draws are printed as they are
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[*FUZZ.suppress_health_check, HealthCheck.function_scoped_fixture],
)
_RUN = itertools.count()
#: the GPU of the catalog an overlay would rename (the Upgrade page adds it)
OVERLAY_GPU = "nvidia-geforce-rtx-5090"


@pytest.fixture(scope="module", autouse=True)
def report() -> Iterator[None]:
    yield
    if os.environ.get("RIGCHECK_FUZZ_REPORT"):
        fuzz.write_report(os.environ["RIGCHECK_FUZZ_REPORT"])


def _case(tmp_path: Path) -> Path:
    folder = tmp_path / f"case{next(_RUN)}"
    folder.mkdir()
    return folder


def _hostile_snapshot(data: st.DataObject, folder: Path, name: str) -> Path:
    """The RTX 4090 snapshot with a drawn payload appended to every string field the loader accepts
    it in (an enumeration refuses markup: that field keeps its value)."""
    from rigcheck.core.errors import InputError
    from rigcheck.core.machine import load_machine

    snapshot = json.loads(json.dumps(SNAPSHOT))
    snapshot["notes"] = [{"probe": "nvidia", "level": "warning", "message": "GPU 0"}]
    snapshot["disks"] = [{"path": "/data", "total_bytes": 10**12, "free_bytes": 10**11, "purpose": "x"}]
    probe = folder / "probe.json"
    for path in strings_of(snapshot):
        if path[-1] == "schema":
            continue
        parent = snapshot
        for key in path[:-1]:
            parent = parent[key]
        old = parent[path[-1]]
        parent[path[-1]] = f"{old}{data.draw(PAYLOADS, label='/'.join(map(str, path)))}"
        probe.write_text(json.dumps(snapshot))
        try:
            load_machine(probe)
        except InputError:
            parent[path[-1]] = old
    probe.unlink()
    out = folder / name
    out.write_text(json.dumps(snapshot))
    return out


def _hostile_catalog(gpu_name: str, price_source: str) -> Any:
    from rigcheck.core.catalog import load_catalog

    catalog = load_catalog(use_overlay=False)
    gpus = tuple(
        replace(g, name=g.name + gpu_name, street_price_source="https://shop.example/" + price_source)
        if g.id == OVERLAY_GPU
        else g
        for g in catalog.gpus
    )
    return replace(catalog, gpus=gpus)


def _recording(path: Path, rows: int = 6, times: list[float] | None = None) -> Path:
    """A one-GPU recording as ``monitor --csv`` writes it (the legend names the GPU by the snapshot)."""
    from rigcheck.core.monitor import GpuSample, Sample, columns, row

    def sample(n: int) -> Sample:
        gpu = GpuSample(index=0, name="x", utilization_percent=10.0 * n, memory_used_bytes=2**30,
                        memory_total_bytes=24 * 2**30, power_watts=100.0, power_limit_watts=450.0,
                        temperature_c=40.0, temperature_slowdown_c=95.0, sm_clock_mhz=2520.0)  # fmt: skip
        t = times[n] if times else n * 0.5
        return Sample(
            t=t, wall=1.7e9 + n, gpus=(gpu,), cpu_percent=12.5, ram_used_bytes=2**33, ram_total_bytes=2**36
        )

    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, columns(sample(0)), extrasaction="ignore")
        writer.writeheader()
        for n in range(len(times) if times else rows):
            writer.writerow({k: "" if v is None else v for k, v in row(sample(n)).items()})
    return path


def _gguf_with_key(path: Path, key: str) -> Path:
    raw = key.encode("utf-8", "surrogatepass")
    path.write_bytes(b"GGUF" + (3).to_bytes(4, "little") + (0).to_bytes(8, "little") + (1).to_bytes(8, "little")
                     + len(raw).to_bytes(8, "little") + raw + (99).to_bytes(4, "little"))  # fmt: skip
    return path


@settings(GUI, max_examples=fuzz.examples(3))
@given(data=st.data())
def test_hostile_strings_are_plain_text_on_every_page_and_dialog(
    qtbot: QtBot, tmp_path: Path, data: st.DataObject
) -> None:
    from rigcheck.core.catalog import load_catalog
    from rigcheck.core.models.resolve import from_catalog
    from rigcheck.gui.main_window import MainWindow
    from rigcheck.gui.state import AppState

    folder = _case(tmp_path)
    draw = data.draw
    snapshot = _hostile_snapshot(data, folder, file_name(draw(PAYLOADS, label="file name"), "snap") + ".json")
    catalog = _hostile_catalog(draw(PAYLOADS, label="overlay GPU name"), draw(PAYLOADS, label="price source"))
    settings_file = QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(AppState(catalog, settings_file), small_machine)
    qtbot.addWidget(window)
    window.resize(WIDTH, 700)
    window.show()
    problems: list[str] = []
    with recorded_dialogs() as dialogs:
        assert window.open_snapshot(snapshot), dialogs.shown
        model = from_catalog(load_catalog(use_overlay=False).model("qwen3-8b"))  # type: ignore[arg-type]
        note = draw(PAYLOADS, label="model note")
        window.state.choose_model(replace(model, name="Qwen" + draw(PAYLOADS, label="model"), notes=(note,)))
        for key in window.pages:
            window.show_page(key)
            window.state.pool.waitForDone()
            qtbot.wait(10)
        window.pages["fit"].why_button.click()  # type: ignore[attr-defined]
        upgrade = window.pages["upgrade"]
        window.show_page("upgrade")
        assert upgrade.select_gpu(OVERLAY_GPU)  # type: ignore[attr-defined]
        upgrade.add_selected()  # type: ignore[attr-defined]
        upgrade.recompute()  # type: ignore[attr-defined]
        window.state.pool.waitForDone()
        qtbot.wait(10)
        problems += [f"upgrade: {p}" for p in rendered(upgrade)]

        monitor = window.pages["monitor"]
        window.show_page("monitor")
        name = file_name(draw(PAYLOADS, label="recording name"), "run") + ".csv"
        with qtbot.waitSignal(monitor.replay_finished, timeout=20000):  # type: ignore[attr-defined]
            monitor.open_recording(_recording(folder / name))  # type: ignore[attr-defined]
        monitor.slider.setValue(monitor.slider.maximum())  # type: ignore[attr-defined]
        problems += [f"monitor: {p}" for p in rendered(monitor)]
        monitor.confirm_replace(folder / name)  # type: ignore[attr-defined]
        assert not monitor.record_to(folder / file_name(draw(PAYLOADS), "no-such-dir") / "x.csv")  # type: ignore[attr-defined]

        lab = folder / "lab"
        lab.mkdir()
        for n in range(2):
            _hostile_snapshot(
                data, lab, file_name(draw(PAYLOADS, label=f"fleet file {n}"), f"node{n}") + ".json"
            )
        (lab / (file_name(draw(PAYLOADS, label="broken fleet file"), "broken") + ".json")).write_text("{")
        fleet = window.pages["fleet"]
        window.show_page("fleet")
        fleet.open_folder(lab)  # type: ignore[attr-defined]
        qtbot.waitUntil(lambda: fleet.fleet is not None, timeout=20000)  # type: ignore[attr-defined]
        fleet.check_model()  # type: ignore[attr-defined]
        qtbot.waitUntil(lambda: bool(fleet.verdicts), timeout=20000)  # type: ignore[attr-defined]
        problems += [f"fleet: {p}" for p in rendered(fleet)]

        # the dialogs: a snapshot's schema string and a wrong-typed value, a GGUF key, config.json's
        # model_type, Save audit onto a folder
        base = json.loads(snapshot.read_text())
        bad_schema = folder / "schema.json"
        bad_schema.write_text(
            json.dumps({**base, "schema": "rigcheck.machine/9" + draw(PAYLOADS, label="schema")})
        )
        bad_type = folder / "type.json"
        bad_type.write_text(
            json.dumps({**base, "memory": {"total_bytes": draw(PAYLOADS, label="wrong type")}})
        )
        for path in (bad_schema, bad_type):
            assert not window.open_snapshot(path)
        before = len(dialogs.shown)
        window.load_path(_gguf_with_key(folder / "model.gguf", "general." + draw(PAYLOADS, label="GGUF key")))
        qtbot.waitUntil(lambda: len(dialogs.shown) > before, timeout=10000)
        config = folder / "cfg"
        config.mkdir()
        (config / "config.json").write_text(json.dumps({"model_type": draw(PAYLOADS, label="model_type")}))
        before = len(dialogs.shown)
        window.load_path(config)
        qtbot.waitUntil(lambda: len(dialogs.shown) > before, timeout=10000)
        taken = folder / file_name(draw(PAYLOADS, label="save target"), "taken")
        taken.mkdir()
        saved = QFileDialog.getSaveFileName
        QFileDialog.getSaveFileName = staticmethod(lambda *_a, **_k: (str(taken), ""))  # type: ignore[method-assign]
        try:
            window._save_audit_dialog()
        finally:
            QFileDialog.getSaveFileName = saved  # type: ignore[method-assign]
        window.show_page("overview")
        window.state.pool.waitForDone()
        qtbot.wait(10)
        problems += rendered(window) + dialogs.problems()
        wide = too_wide(window)
    window.close()
    window.state.pool.waitForDone()
    texts = [text for _kind, _fmt, text in dialogs.shown]
    assert sum("pwn" in t for t in texts) >= 6, f"the payloads reached the dialogs: {texts}"
    fuzz.TALLY["gui: every page and dialog"]["plain text" if not problems else "rich text (bug)"] += 1
    assert not problems, "\n".join(problems)
    assert wide is None, wide


# -- settings (issue 30 #15): every key the app reads, hostile values -------------------------------

#: every QSettings key the app reads, and what its numbers must come back within (None: not a number)
SETTINGS_KEYS: dict[str, tuple[float, float] | None] = {
    "monitor/interval": (0.1, 10.0),
    "monitor/window": (10, 86_400),
    "fit/context": (1, 10_000_000),
    "upgrade/kwh": (0.0, 10.0),
    "machine/psu_watts": (10, 100_000),
    "fit/quant": None,
    "estimate/backend": None,
    "ui/language": None,
    "files/recent": None,
    "window/geometry": None,
    "window/page": None,
}
SETTING_VALUES = st.one_of(
    st.sampled_from([0, -1, 1, -0.0, 2**63 - 1, str(2**63), str(10**30), "0", "-5", "nan", "inf", "-inf", "1e400", "9" * 5000, "",
                     " ", "lots", "true", "<b title=pwn>x</b>", "\x00", "q4_k_m", "cuda", "it", "xx", [],
                     ["/no/such/snapshot.json", 7], {"a": 1}, b"\x00\xff" * 8, b"\x01\xd9\xd0\xcb" + bytes(60)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),  # what a QVariant holds; longer ones as text
    st.text(max_size=12),
)  # fmt: skip
#: what a damaged or hand-edited settings file may hold, written as it is
RAW_VALUES = st.sampled_from(["@Invalid()", "@ByteArray(\\0\\xff)", "@Variant(\\0\\0\\0\\x7f\\0\\0)", "@Size(1 2)",
                              "@Rect(0 0 -5 99999999)", "nan", "-1e400", '"', "\\", "1, 2, 3", "@Point(a b)"])  # fmt: skip


@pytest.mark.qt_log_ignore("QVariant::load")  # Qt's own word on a damaged @Variant(...) value
@settings(GUI, max_examples=fuzz.examples(6))
# always covered: what stopped pages before (issue 30 #15), and what stopped the window itself (a
# geometry that is no QByteArray made restoreGeometry raise on every start)
@example(
    values={"monitor/window": 0, "monitor/interval": -1, "machine/psu_watts": "inf", "window/geometry": "x"},
    raw={},
)
@example(
    values={"fit/context": "nan", "upgrade/kwh": "1e400", "window/page": "lots"},
    raw={"window/geometry": "@Invalid()"},
)
@given(
    values=st.dictionaries(st.sampled_from(sorted(SETTINGS_KEYS)), SETTING_VALUES, min_size=1, max_size=6),
    raw=st.dictionaries(st.sampled_from(sorted(SETTINGS_KEYS)), RAW_VALUES, max_size=3),
)
def test_hostile_settings_never_stop_a_page_from_opening(
    qtbot: QtBot, tmp_path: Path, values: dict[str, Any], raw: dict[str, str]
) -> None:
    from rigcheck.core.machine import load_machine
    from rigcheck.gui import i18n
    from rigcheck.gui.app import create_window, settle
    from rigcheck.gui.state import read_number

    folder = _case(tmp_path)
    ini = folder / "settings.ini"
    lines = ["[General]"] if raw else []
    for key, value in raw.items():  # written by hand; QSettings reads what it can
        lines.append(f"{key.replace('/', '%2F')}={value}")
    ini.write_text("\n".join(lines) + "\n")
    store = QSettings(str(ini), QSettings.Format.IniFormat)
    for key, value in values.items():
        store.setValue(key, value)
    store.sync()
    language = i18n.language()
    try:
        window = create_window(store, snapshot=load_machine(BOX), snapshot_name="rtx4090")
        qtbot.addWidget(window)
        window.show()
        assert settle(window)
        for key in window.pages:
            window.show_page(key)
            assert type(window.pages[key]).__name__.endswith("Page"), key  # built, not its placeholder
            window.state.pool.waitForDone()
        assert settle(window)
        for key, bounds in SETTINGS_KEYS.items():
            if bounds is not None:
                number = read_number(store, key, bounds[0], *bounds)
                assert number is not None and math.isfinite(number) and bounds[0] <= number <= bounds[1], (
                    key,
                    number,
                )
        monitor = window.pages["monitor"]
        assert 0.1 <= monitor.interval.value() <= 10  # type: ignore[attr-defined]
        assert window.state.psu_watts() is None or 10 <= window.state.psu_watts() <= 100_000  # type: ignore[operator]
        window.close()
        window.state.pool.waitForDone()
    finally:
        i18n.set_language(language)
    fuzz.TALLY["gui: hostile settings"]["every page opened"] += 1
