"""The Upgrade page's "What would it take?": the question asked from a does-not-fit verdict, and the
ways to run the chosen model (GPUs to buy or rent, or other machines for a built-in GPU) worked out on
the pool and listed in the OptionsTable."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QComboBox, QLabel, QSpinBox

from rigcheck.core.estimate.soldered import MachineChoice, choice_label, machine_choices
from rigcheck.core.estimate.upgrade import Option, Outcome, cheapest_gpus_for
from rigcheck.core.verdict_words import speed_text
from rigcheck.gui.i18n import num, tr
from rigcheck.gui.pages.upgrade_parts import OptionsTable, options_summary, outcome_text
from rigcheck.gui.state import AppState
from rigcheck.gui.widgets import esc
from rigcheck.gui.workers import Job, submit

#: the workload as a question names it ("… to run Llama 3.3 70B for inference?")
ASKED_WORKLOADS = {
    "inference": "inference",
    "qlora": "a QLoRA fine-tune",
    "lora": "a LoRA fine-tune",
    "full": "a full fine-tune",
}


class WaysToRun:
    """UpgradePage's answer to "What would it take?" (``asked``, ``suggestions``, ``options``)."""

    state: AppState
    asked: QLabel
    asked_model: str | None
    question: str
    context: int | None
    target: QComboBox
    workload: QComboBox
    min_speed: QSpinBox
    built_in: bool
    suggestions: QLabel
    options: OptionsTable
    _find_generation: int
    _find_job: Job | None

    if TYPE_CHECKING:  # UpgradePage's

        def _first_fill(self) -> None: ...

        def _show_progress(self) -> None: ...

        def recompute(self) -> None: ...

    def what_would_it_take(
        self, model_id: str, workload: str = "inference", context: int | None = None
    ) -> None:
        """Fill the page in for a model that does not fit (from Fit, Overview or Models): the model is
        added to the comparison, the workload and context are set, and the ways to run it are found."""
        self._first_fill()
        self.asked_model = model_id if self.state.catalog.model(model_id) is not None else None
        self.context = context
        index = self.workload.findData(workload)
        if index >= 0 and index != self.workload.currentIndex():
            self.workload.blockSignals(True)
            self.workload.setCurrentIndex(index)
            self.workload.blockSignals(False)
        spec = self.state.catalog.model(model_id)
        if spec is None:
            self.asked.setText(
                "▲ "
                + esc(
                    tr(
                        "{model} is not a catalog model: Upgrade sizes catalog models only. Pick the closest "
                        "one below.",
                        model=model_id,
                    )
                )
            )
            self.asked.setVisible(True)
            return
        self.target.setCurrentIndex(max(self.target.findData(spec.id), 0))
        words = tr(ASKED_WORKLOADS.get(workload, workload))
        if context:
            question = tr(
                "What would it take to run {model} for {workload} with a {context}-token context?",
                model=spec.name,
                workload=words,
                context=num(context),
            )
        else:
            question = tr(
                "What would it take to run {model} for {workload}?", model=spec.name, workload=words
            )
        self.question = question
        self.asked.setText(f"<b>{esc(question)}</b>")
        self.asked.setVisible(True)
        self.find_cheapest()
        self.recompute()

    @Slot()
    def find_cheapest(self) -> None:
        """The ways to run the chosen model, worked out on the pool: GPUs to buy or rent, or, on a
        built-in machine, other machines."""
        machine = self.state.machine
        model_id = self.target.currentData()
        if model_id is None:
            return
        catalog, workload, context = self.state.catalog, self.workload.currentData(), self.context
        speed, built_in = float(self.min_speed.value()), self.built_in
        self._find_generation += 1
        generation = self._find_generation

        def work() -> list[Option] | list[MachineChoice]:
            if built_in and machine is not None:
                return machine_choices(
                    machine,
                    catalog,
                    model_id=model_id,
                    workload=workload,
                    context=context,
                    min_tokens_per_s=speed,
                )
            return cheapest_gpus_for(model_id, catalog, min_tokens_per_s=speed, workload=workload,
                                     base=machine, context=context)  # fmt: skip

        def done(found: list[Option] | list[MachineChoice]) -> None:
            if generation != self._find_generation:
                return
            self._find_job = None
            self._show_progress()
            self._show_found(found, built_in)

        def failed(message: str) -> None:
            if generation == self._find_generation:
                self._find_job = None
                self._show_progress()
                self.suggestions.setText(f"✘ {message}")

        self.suggestions.setText(tr("Looking for what would run it…"))
        self._find_job = submit(self.state.pool, work, done, failed, owner=self)
        self._show_progress()

    def _show_found(self, found: list[Option] | list[MachineChoice], built_in: bool) -> None:
        if not found:
            self.options.setVisible(False)
            self.suggestions.setText(
                tr("No built-in machine in the catalog has more memory than this one.")
                if built_in
                else tr("No catalog GPU combination reaches that speed.")
            )
            return
        choices = [c for c in found if isinstance(c, MachineChoice)]
        options = [o for o in found if isinstance(o, Option)]
        if choices:
            self.options.show_choices(choices)
            self.suggestions.setText(
                tr(
                    "The same chip family with more memory first, then other machines; none has a price in "
                    "the catalog."
                )
            )
        else:
            self.options.show_options(options)
            self.suggestions.setText(options_summary(options))
        self.options.setVisible(True)  # as tall as its rows (OptionsTable._fit_rows)
        if self.question and self.target.currentData() == self.asked_model:
            self.asked.setText(f"<b>{esc(self.question)}</b><br>{esc(_best_answer(found))}")


def _best_answer(found: list[Option] | list[MachineChoice]) -> str:
    """The first way to run it, in one line: "→ 2 × RTX PRO 6000 …: $17,130 (launch price), ~65 tokens/s"."""
    more = " " + tr("(more below)")
    runs = [
        c
        for c in found
        if isinstance(c, MachineChoice) and getattr(c.outcome, "verdict", "") != "does_not_fit"
    ]
    first = runs[0] if runs else found[0]
    if isinstance(first, MachineChoice):
        outcome = first.outcome if isinstance(first.outcome, Outcome) else None
        speed = outcome_text(outcome) if outcome is not None else ""
        return "→ " + tr("{choice}: {speed}", choice=choice_label(first), speed=speed) + more
    priced = next((o for o in found if isinstance(o, Option) and o.purchase_usd is not None), first)
    assert isinstance(priced, Option)
    speed = speed_text(priced.tokens_per_s) if priced.tokens_per_s else tr("speed unknown")
    if priced.purchase_usd is not None:
        price = f"${num(priced.purchase_usd)}"
        if priced.price_standing == "launch":
            price += " " + tr("(launch price)")
    else:
        price = tr("no current price")
    return "→ " + tr("{option}: {price}, {speed}", option=priced.description, price=price, speed=speed) + more
