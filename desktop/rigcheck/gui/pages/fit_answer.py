"""The Fit page's answer: the verdict with its memory bars and legend, the reasons and advice (their
sources on hover), the speed card, and the "Why?" table of every number's formula and source."""

from __future__ import annotations

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QLabel, QPushButton, QTextBrowser, QToolButton

from rigcheck.core.estimate.fit import FitResult
from rigcheck.core.estimate.recommend import display_quant
from rigcheck.core.units import approx_speed, fmt_bytes
from rigcheck.gui.cited import split_sources
from rigcheck.gui.fitview import view_of_result
from rigcheck.gui.i18n import num, tr
from rigcheck.gui.markup import units_whole
from rigcheck.gui.memory_chart import CATEGORY_COLOURS, CATEGORY_NAMES, MemoryChart
from rigcheck.gui.state import AppState
from rigcheck.gui.widgets import esc, tooltip

BOUND_WORDS = {
    "memory_bandwidth": "GPU memory bandwidth",
    "compute": "compute",
    "pcie": "PCIe transfers",
    "ram_bandwidth": "RAM bandwidth",
    "cpu_optimizer": "the CPU optimizer",
}


class FitAnswer:
    """FitPage's verdict card (``verdict``, ``chart``, ``legend``, ``reasons``), ``speed`` and ``why``."""

    state: AppState
    result: FitResult | None
    verdict: QLabel
    take_button: QPushButton
    chart: MemoryChart
    legend: QLabel
    reasons: QLabel
    speed: QLabel
    why: QTextBrowser
    why_button: QToolButton

    def _upgrade_question(self) -> tuple[str, str, int | None] | None:
        """What "What would it take?" asks Upgrade: this model, workload and context."""
        result, model = self.result, self.state.model
        if result is None or model is None:
            return None
        return model.id, result.estimate.workload, result.estimate.context

    def _show(self, result: FitResult) -> None:
        self.take_button.setVisible(result.verdict == "does_not_fit")
        view = view_of_result(result)
        glyph, words, colour = view.glyph, view.words, view.colour
        est = result.estimate
        self.verdict.setText(
            f"<span style='color:{colour}; font-size:15pt; font-weight:bold'>{glyph} {tr(words)}</span>"
            f"<br>{esc(display_quant(est.quant_name))} · {num(est.context)} {tr('tokens')} · "
            f"{tr('needs')} {fmt_bytes(est.total_bytes)}"
        )
        machine = self.state.machine
        names = (
            [f"GPU {g.index if g.index is not None else i}" for i, g in enumerate(machine.gpus)]
            if machine
            else []
        )
        # a GPU whose memory is the system RAM (unified): what it leaves unused is the CPU's too
        shared = [i for i, g in enumerate(machine.gpus) if g.unified_memory] if machine else []
        self.chart.show_result(result, names, shared)
        self.legend.setText(
            # each entry keeps its swatch, name and size on one line: only the gaps between entries wrap
            " &nbsp; ".join(
                f"<span style='color:{colour}'>■</span>&nbsp;"
                + f"{tr(CATEGORY_NAMES[category])} {fmt_bytes(est.total(category))}".replace(" ", "&nbsp;")  # type: ignore[arg-type]
                for category, colour in CATEGORY_COLOURS.items()
                if est.total(category)  # type: ignore[arg-type]
            )
            + "<br><span style='color:gray'>"
            + tr("Each bar is one device's own capacity; the filled part is what is placed there.")
            + "</span>"
        )
        # the core's sentences read without their bracketed English URLs; the sources go to the tooltip
        cited = [split_sources(r) for r in result.reasons]
        items = "".join(f"<li>{esc(r)}</li>" for r, _sources in cited)
        items += "".join(f"<li>→ {esc(a)}</li>" for a in result.advice)
        self.reasons.setText(f"<ul style='margin-left:-20px'>{items}</ul>")
        sources = list(dict.fromkeys(s for _r, found in cited for s in found))
        self.reasons.setToolTip(tooltip(tr("Sources") + ":\n" + "\n".join(sources)) if sources else "")
        speed = result.speed
        lines = []
        if speed.decode_tokens_per_s is not None:
            lines.append(  # the number asked for, large: the card's answer before its explanation
                f"<b>{tr('Generation')}</b>: <span style='font-size:x-large; font-weight:600'>"
                f"~{approx_speed(speed.decode_tokens_per_s)}</span> {tr('tokens/s')}"
            )
        if speed.prefill_tokens_per_s is not None:
            lines.append(
                f"<b>{tr('Prompt processing')}</b>: ~{approx_speed(speed.prefill_tokens_per_s)} "
                f"{tr('tokens/s')}"
            )
        if speed.train_tokens_per_s is not None:
            lines.append(
                f"<b>{tr('Training')}</b>: ~{approx_speed(speed.train_tokens_per_s)} {tr('tokens/s')}"
            )
        if speed.bound_by:
            lines.append(f"{tr('Bound by')} <b>{tr(BOUND_WORDS[speed.bound_by])}</b>")
        if not lines:
            lines.append(tr("No speed estimate: it does not fit, or a figure it needs is unknown."))
        lines += [  # "77 GB/s" never broken after its slash
            f"<span style='color:gray'>{units_whole(esc(split_sources(e)[0]))}</span>"
            for e in speed.explanation
        ]
        self.speed.setText("<br>".join(lines))
        self._fill_why(result)

    def _fill_why(self, result: FitResult) -> None:
        est = result.estimate
        rows = "".join(
            f"<tr><td><b>{esc(t.name)}</b></td><td align='right'>{fmt_bytes(t.bytes)}</td>"
            f"<td>{esc(tr(t.provenance))}</td><td>{esc(t.formula)}<br><small>{esc(t.source)}</small></td></tr>"
            for t in est.terms
        )
        notes = "".join(f"<li>{esc(n)}</li>" for n in (*est.model.notes, *est.notes))
        assumed = esc(", ".join(est.model.arch.assumed))
        self.why.setHtml(
            f"<table cellspacing='6'><tr><th align='left'>{tr('part')}</th><th>{tr('bytes')}</th>"
            f"<th align='left'>{tr('from')}</th><th align='left'>{tr('formula and source')}</th></tr>"
            f"{rows}</table>"
            + (f"<p>{tr('Assumed (not in the config)')}: {assumed}</p>" if assumed else "")
            + (f"<ul>{notes}</ul>" if notes else "")
        )

    @Slot(bool)
    def _toggle_why(self, shown: bool) -> None:
        self.why.setVisible(shown)
        self.why_button.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
