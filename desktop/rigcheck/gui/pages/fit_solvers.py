"""The Fit page's two solvers: the longest context that runs (and entirely on the GPU), and the best
format at these settings, the recommendation every surface gives."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QComboBox, QLabel, QSpinBox

from rigcheck.core.errors import InputError
from rigcheck.core.estimate.fit import max_context
from rigcheck.core.estimate.memory import Request, resolve_quant
from rigcheck.core.estimate.recommend import Recommendation, longest_running_context, recommend
from rigcheck.core.known_text import in_language
from rigcheck.core.models.spec import ModelInfo
from rigcheck.gui.i18n import num, tr
from rigcheck.gui.pages.fit_settings import FILE_QUANT
from rigcheck.gui.state import AppState


class FitSolvers:
    """FitPage's "Max context that fits" and "Best format" (their answer in ``solver_text``)."""

    state: AppState
    model: ModelInfo | None
    quant: QComboBox
    offload: QComboBox
    context_value: QSpinBox
    solver_text: QLabel

    if TYPE_CHECKING:  # FitSettings'

        def request(self) -> Request: ...

    def _recommend(self, model: ModelInfo) -> Recommendation | None:
        machine = self.state.machine
        if machine is None:
            return None
        request = self.request()
        try:
            return recommend(
                model, machine, request.workload, self.state.catalog, context=request.context,
                engine=request.engine, live=self.state.is_live, request=request,
            )  # fmt: skip
        except InputError:
            return None

    def _quant_index(self, quant_id: str | None) -> int:
        """The combo row whose format is ``quant_id`` (a catalog id), or -1."""
        if quant_id is None:
            return self.quant.findData(FILE_QUANT)
        for index in range(self.quant.count()):
            data = self.quant.itemData(index)
            if data != FILE_QUANT and resolve_quant(self.state.catalog, data).id == quant_id:
                return index
        return -1

    def _recommended_index(self, model: ModelInfo) -> int:
        rec = self._recommend(model)
        if rec is None or rec.best is None or rec.workload != "inference":
            return -1
        return self._quant_index(rec.best.quant_id)

    @Slot()
    def fit_max_context(self) -> None:
        """The longest context that runs with the offload chosen, and the longest entirely on the GPU."""
        if self.model is None or self.state.machine is None:
            return
        model, machine, request = self.model, self.state.machine, self.request()
        try:
            on_gpu = max_context(model, machine, request, self.state.catalog, live=self.state.is_live)
            runs = longest_running_context(
                model, machine, request, self.state.catalog, offload=self.offload.currentData(),
                live=self.state.is_live,
            )  # fmt: skip
        except InputError as exc:  # an engine that cannot run this model here (ktransformers, a dense model)
            self.solver_text.setText(in_language(str(exc)))
            return
        if runs is None:
            self.solver_text.setText(tr("Not even 512 tokens run with these settings."))
            return
        self.context_value.setValue(runs)
        gpu = f"{num(on_gpu)} {tr('tokens')}" if on_gpu is not None else tr("not even 512 tokens")
        self.solver_text.setText(
            f"{tr('Longest context that runs')}: {num(runs)} {tr('tokens')} · "
            f"{tr('entirely on the GPU')}: {gpu}"
        )

    @Slot()
    def fit_best_quant(self) -> None:
        if self.model is None or self.state.machine is None:
            return
        rec = self._recommend(self.model)
        if rec is None or rec.best is None:
            self.solver_text.setText(tr("No format runs on this machine at this context."))
            return
        index = self._quant_index(rec.best.quant_id)
        if index >= 0:
            self.quant.setCurrentIndex(index)
        self.solver_text.setText(" · ".join(rec.why))
