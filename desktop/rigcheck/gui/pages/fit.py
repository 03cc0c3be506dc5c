"""Fit: one model on the selected machine, recomputed as the user changes anything.

The estimate takes well under a millisecond (BENCHMARKS.md), so it runs on the GUI thread on every
change; the chart is painted directly with QPainter. The format table (a recommendation over every
format, and the commands) is worked out on the pool and shown when ready.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSlider,
    QSpinBox,
    QTableWidget,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from rigcheck.core.errors import InputError
from rigcheck.core.estimate.commands import Commands
from rigcheck.core.estimate.fit import FitResult, fit
from rigcheck.core.estimate.measured import BenchRow, apply_measured, load_llama_bench
from rigcheck.core.estimate.recommend import Recommendation
from rigcheck.core.estimate.training_advice import training_steps
from rigcheck.core.known_text import in_language
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.models.spec import ModelInfo
from rigcheck.gui.fitchoices import ENGINES
from rigcheck.gui.i18n import num, tr
from rigcheck.gui.memory_chart import MemoryChart
from rigcheck.gui.pages.fit_answer import FitAnswer
from rigcheck.gui.pages.fit_context import MIN_CONTEXT, SLIDER_DEBOUNCE_MS, SLIDER_STEPS, ContextSlider
from rigcheck.gui.pages.fit_ladder import FormatLadder
from rigcheck.gui.pages.fit_settings import (
    AUTO_GPU_LAYERS,
    BACKEND_CHOICES,
    FILE_QUANT,
    KV_TYPES,
    OFFLOADS,
    QUANTS,
    SPLITS,
    WORKLOADS,
    FitSettings,
    _file_quant_text,
    _quant_name,
)
from rigcheck.gui.pages.fit_solvers import FitSolvers
from rigcheck.gui.pages.fit_training import refresh_box
from rigcheck.gui.state import AppState
from rigcheck.gui.what_it_takes import take_button
from rigcheck.gui.widgets import Card, esc, heading, muted, off_screen, scroll_page, subheading
from rigcheck.gui.workers import Job

if TYPE_CHECKING:
    from PySide6.QtGui import QShowEvent

__all__ = ["AUTO_GPU_LAYERS", "FitPage"]  # AUTO_GPU_LAYERS: read from here by tests


class FitPage(FitSettings, ContextSlider, FitAnswer, FitSolvers, FormatLadder, QWidget):
    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        self.model: ModelInfo | None = None
        self.result: FitResult | None = None
        self._busy = False
        #: a new machine opened while another page was on screen: its answers are made when this one is shown
        self._machine_pending = False
        #: imported llama-bench rows and the file's name (measured speeds replace estimates they cover)
        self._bench: tuple[tuple[BenchRow, ...], str] | None = None

        page = QVBoxLayout(scroll_page(self))
        page.setContentsMargins(16, 12, 16, 16)
        page.setSpacing(10)
        self.title = heading(tr("Fit"))
        self.subtitle = muted("")
        page.addWidget(self.title)
        page.addWidget(self.subtitle)

        grid = QGridLayout()
        grid.setHorizontalSpacing(16)
        page.addLayout(grid)
        controls = Card()
        controls.setMaximumWidth(460)  # the Italian split choice whole at 1920 px
        form = self.form = QFormLayout()
        controls.body.addWidget(subheading(tr("Settings")))
        controls.body.addLayout(form)
        # the catalog's names, as the verdict and every other page print them ("BF16", "Q4_K_M")
        self.quant = self._combo(tr("Weight format"), [(q, _quant_name(state, q)) for q in QUANTS])
        self.context = QSlider(Qt.Orientation.Horizontal)
        self.context.setRange(0, SLIDER_STEPS)
        self.context.setAccessibleName(tr("Context length"))
        self.context_value = QSpinBox()
        self.context_value.setRange(MIN_CONTEXT, 10_000_000)
        self.context_value.setSingleStep(1024)
        self.context_value.setSuffix(" " + tr("tokens"))
        self.context_value.setAccessibleName(tr("Context length in tokens"))
        context_row = QHBoxLayout()
        context_row.addWidget(self.context, 1)
        context_row.addWidget(self.context_value)
        self.batch = QSpinBox()
        self.batch.setRange(1, 1024)
        self.batch.setAccessibleName(tr("Batch: concurrent sequences"))
        self.kv = self._combo(tr("KV cache type"), [(k, k.upper()) for k in KV_TYPES])
        self.workload = self._combo(tr("Workload"), [(k, tr(v)) for k, v in WORKLOADS])
        self._training_widgets()
        self.offload = self._combo(tr("Offload"), [(k, tr(v)) for k, v in OFFLOADS])
        self.engine = self._combo(tr("Engine"), [(e, e) for e in ENGINES])
        self.split = self._combo(tr("Multi-GPU split"), [(k, tr(v)) for k, v in SPLITS])
        self.gpu_layers = QSpinBox()
        self.gpu_layers.setRange(AUTO_GPU_LAYERS, 999)
        self.gpu_layers.setSpecialValueText(tr("Automatic"))
        self.gpu_layers.setValue(AUTO_GPU_LAYERS)
        self.gpu_layers.setAccessibleName(tr("GPU layers"))
        self.gpu_layers.setToolTip(
            tr("At most this many layers on the GPUs, the rest in RAM (llama.cpp -ngl)")
        )
        # which llama.cpp backend sets the speed factors (a Strix Halo runs ROCm or Vulkan; NVIDIA and Intel
        # cards Vulkan too); only llama.cpp has them
        self.backend = self._combo(
            tr("GPU backend"), [(b, name if b else tr(name)) for b, name in BACKEND_CHOICES]
        )
        self.backend.setToolTip(
            tr("The llama.cpp backend the speed estimate assumes (Automatic: each GPU vendor's usual one)")
        )
        # the llama.cpp build the user runs (rigcheck fit --engine-build): an older one is slower where a
        # later kernel milestone applies (core/estimate/speed/engine_build.py); 0 is a current build
        self.engine_build = QSpinBox()
        self.engine_build.setRange(0, 99999)
        self.engine_build.setPrefix("b")
        self.engine_build.setSpecialValueText(tr("Current"))
        self.engine_build.setAccessibleName(tr("llama.cpp build"))
        self.engine_build.setToolTip(
            tr(
                "The llama.cpp build you run (its release tag): an older one is slower where a later kernel "
                "change applies"
            )
        )
        for text, widget in (
            (tr("Weight format"), self.quant),
            (tr("Context"), context_row),
            (tr("Batch"), self.batch),
            (tr("KV cache type"), self.kv),
            (tr("Workload"), self.workload),
            (tr("Framework"), self.framework),
            (tr("LoRA rank"), self.lora_rank),
            (tr("Checkpointing"), self.checkpointing),
            *self.extras.rows(),
            (tr("Training GPUs"), self.training_gpus),
            (tr("Offload"), self.offload),
            (tr("Engine"), self.engine),
            (tr("GPU backend"), self.backend),
            (tr("llama.cpp build"), self.engine_build),
            (tr("Multi-GPU"), self.split),
            (tr("GPU layers"), self.gpu_layers),
        ):
            if widget is self.workload:  # two groups: what is loaded, then how it runs
                self.run_group = muted(tr("How it runs"))
                form.addRow(self.run_group)
            form.addRow(text, widget)
        self.load_group = muted(tr("What is loaded"))
        form.insertRow(0, self.load_group)
        buttons = QHBoxLayout()
        self.max_context_button = QPushButton(tr("Max context that fits"))
        self.max_context_button.setToolTip(
            tr("The longest context that runs with this offload setting, and entirely on the GPU")
        )
        self.best_quant_button = QPushButton(tr("Best format"))
        self.best_quant_button.setToolTip(
            tr("The recommended format at these settings (the same answer as 'rigcheck fit')")
        )
        buttons.addWidget(self.max_context_button)
        buttons.addWidget(self.best_quant_button)
        controls.body.addLayout(buttons)
        self.bench_button = QPushButton(tr("Import llama-bench results…"))
        self.bench_button.setToolTip(
            tr("Your own 'llama-bench -o json' output: measured speeds replace estimates")
        )
        self.bench_button.clicked.connect(self._choose_bench)
        controls.body.addWidget(self.bench_button)
        self.solver_text = muted("")
        controls.body.addWidget(self.solver_text)
        # the command for these settings, at the foot of the settings it runs (LM Studio's flow: choose,
        # then run); it fills the card's room beside the verdict, which was ~150 px empty at 1024
        controls.body.addSpacing(6)
        controls.body.addWidget(subheading(tr("Command to run it")))
        command_row = QHBoxLayout()
        self.command_engine = QComboBox()
        self.command_engine.setAccessibleName(tr("Engine of the command"))
        # as wide as the longest engine name ("transformers"), never "llama.cp"
        self.command_engine.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.command = QLineEdit()
        self.command.setReadOnly(True)
        self.command.setAccessibleName(tr("Command to run it"))
        self.copy_button = QPushButton(tr("&Copy"))
        self.copy_button.setAccessibleName(tr("Copy the command"))
        self.copy_button.clicked.connect(self.copy_command)
        command_row.addWidget(QLabel(tr("Run it with")))
        command_row.addWidget(self.command_engine)
        command_row.addStretch(1)
        command_row.addWidget(self.copy_button)
        controls.body.addLayout(command_row)
        controls.body.addWidget(self.command)
        self.command_note = muted("")
        self.command_note.setWordWrap(True)
        controls.body.addWidget(self.command_note)
        controls.body.addStretch(1)
        grid.addWidget(controls, 0, 0, 2, 1)

        verdict_card = Card()
        self.verdict = QLabel()
        self.verdict.setAccessibleName(tr("Verdict"))
        self.verdict.setWordWrap(True)
        verdict_card.body.addWidget(self.verdict)
        self.take_button = take_button(state, self._upgrade_question)  # shown when it does not fit
        self.take_button.setVisible(False)
        verdict_card.body.addWidget(self.take_button)
        self.chart = MemoryChart()
        verdict_card.body.addWidget(self.chart)
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        verdict_card.body.addWidget(self.legend)
        self.reasons = QLabel()
        self.reasons.setWordWrap(True)
        self.reasons.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        verdict_card.body.addWidget(self.reasons)
        verdict_card.body.addStretch(1)
        grid.addWidget(verdict_card, 0, 1)

        speed_card = Card()
        speed_card.body.addWidget(subheading(tr("Speed and what bounds it")))
        self.speed = QLabel()
        self.speed.setWordWrap(True)
        self.speed.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        speed_card.body.addWidget(self.speed)
        speed_card.body.addStretch(1)  # the words at the top of the card, the room (if any) below them
        grid.addWidget(speed_card, 1, 1)
        # the settings widen with the window up to their maximum (1920 px: "Layers over every GPU (llama.cpp
        # default)" was cut at "(llama"); below ~1300 px they keep their size hint, as before
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 2)

        ladder_card = Card()
        ladder_card.body.addWidget(subheading(tr("Formats on this machine")))
        self.ladder_note = muted("")
        self.ladder_note.setWordWrap(True)
        ladder_card.body.addWidget(self.ladder_note)
        self.ladder = QTableWidget(0, 6)
        self.ladder.setAccessibleName(tr("Formats on this machine"))
        self.ladder.setHorizontalHeaderLabels(
            [
                tr("Format"),
                tr("Where"),
                tr("Memory"),
                tr("Download"),
                tr("tokens/s"),
                tr("Quality (measured)"),
            ]
        )
        self.ladder.verticalHeader().hide()
        self.ladder.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.ladder.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.ladder.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.ladder.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.ladder.horizontalHeader().setStretchLastSection(True)
        # room between the columns ("15,0 GiB" and "~51" no longer touch); the sizes follow the padding
        self.ladder.setStyleSheet("QTableWidget::item { padding-left: 6px; padding-right: 12px; }")
        left = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        self.ladder.horizontalHeader().setDefaultAlignment(left)  # "Quality" over its text, not mid-table
        self.ladder.setMinimumHeight(200)
        self.ladder.setTabKeyNavigation(False)  # one Tab stop; the arrows move between formats
        self.ladder.cellDoubleClicked.connect(self._ladder_chosen)
        ladder_card.body.addWidget(self.ladder)
        self.command_engine.currentIndexChanged.connect(self._show_command)
        self.commands: Commands | None = None
        self.recommendation: Recommendation | None = None
        self._ladder_job: Job | None = None
        self._ladder_generation = 0
        page.addWidget(ladder_card)

        self.why_button = QToolButton()
        self.why_button.setText(tr("Why? Show every number's formula and source"))
        self.why_button.setCheckable(True)
        self.why_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.why_button.setArrowType(Qt.ArrowType.RightArrow)
        self.why = QTextBrowser()
        self.why.setAccessibleName(tr("Formulas and sources"))
        # Model notes and sources come from files and the hub: shown escaped, and no link is followed.
        self.why.setOpenExternalLinks(False)
        self.why.setOpenLinks(False)
        self.why.setVisible(False)
        self.why.setMinimumHeight(240)
        self.why_button.toggled.connect(self._toggle_why)
        page.addWidget(self.why_button)
        page.addWidget(self.why)
        page.addStretch(1)

        self._restore()
        self._inference_quant = -1  # the format picked for inference, kept while training shows its own
        self._slider_timer = QTimer(self)
        self._slider_timer.setSingleShot(True)
        self._slider_timer.setInterval(SLIDER_DEBOUNCE_MS)
        self._slider_timer.timeout.connect(self.recompute)
        self._refresh_choices()
        self.workload.currentIndexChanged.connect(self._workload_changed)
        # before recompute: the format list follows the engine, so the estimate asks for a format it runs
        self.engine.currentIndexChanged.connect(self._engine_formats)
        for signal in (
            self.quant.currentIndexChanged,
            self.batch.valueChanged,
            self.kv.currentIndexChanged,
            self.offload.currentIndexChanged,
            self.engine.currentIndexChanged,
            self.backend.currentIndexChanged,
            self.framework.currentIndexChanged,
            self.lora_rank.valueChanged,
            self.checkpointing.currentIndexChanged,
            self.split.currentIndexChanged,
            self.gpu_layers.valueChanged,
            self.training_gpus.valueChanged,
            *(widget.currentIndexChanged for widget in self.extras.widgets()),
            self.engine_build.valueChanged,
        ):
            signal.connect(self.recompute)
        self.engine.currentIndexChanged.connect(self._engine_changed)
        self.workload.currentIndexChanged.connect(self._engine_changed)
        self._engine_changed()
        # one backend for every page (Overview and Models give the same answer): the choice is the state's
        self.backend.currentIndexChanged.connect(lambda: self.state.set_backend(self.backend.currentData()))
        state.backend_changed.connect(self._backend_changed)
        self.context.valueChanged.connect(self._slider_moved)
        self.context_value.valueChanged.connect(self._context_typed)
        self.max_context_button.clicked.connect(self.fit_max_context)
        self.best_quant_button.clicked.connect(self.fit_best_quant)
        state.model_chosen.connect(self.set_model)
        state.machine_changed.connect(self._machine_changed)
        model = state.model
        if model is None:
            default = state.catalog.model("llama-3.1-8b")
            model = from_catalog(default) if default is not None else None
        if model is not None:
            self.set_model(model)

    # -- state -----------------------------------------------------------------------------------

    def retranslate(self) -> None:
        """After a language switch: the file's own format row and the results again; every setting stays."""
        file_index = self.quant.findData(FILE_QUANT)
        if file_index >= 0 and self.model is not None and self.model.weights is not None:
            self.quant.setItemText(file_index, _file_quant_text(self.model))
        self.recompute()

    def _machine_changed(self, *_args: object) -> None:
        """A new machine: its choices and answers now if on screen, else when next shown (a fit, the
        format table's dozen on the pool, behind the page the user is looking at)."""
        self._machine_pending = off_screen(self)
        if not self._machine_pending:
            self._workload_changed()
            return
        self._ladder_generation += 1  # a format table still on the pool is of the machine before
        self._ladder_job = None

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if self._machine_pending:
            self._workload_changed()

    @Slot()
    def _workload_changed(self) -> None:
        self._machine_pending = False
        self._refresh_choices()
        self.recompute()

    @Slot(object)
    def set_model(self, model: ModelInfo) -> None:
        self.model = model
        self._busy = True
        self._machine_pending = False  # the choices and answers below are the machine's now
        self._refresh_choices()  # experts offload for a MoE model only
        file_index = self.quant.findData(FILE_QUANT)
        if model.weights is not None and file_index < 0:
            self.quant.insertItem(0, _file_quant_text(model), FILE_QUANT)
        elif model.weights is None and file_index >= 0:
            self.quant.removeItem(file_index)
        # A model card's own format and context (what the card was judged at), when it sent them.
        requested, self.state.requested = self.state.requested, None
        quant_asked, context_asked = requested or (None, None)
        maximum = model.arch.max_context or 131072
        self.context_value.setMaximum(maximum)
        if context_asked:
            self.context_value.setValue(min(context_asked, maximum))
        asked = self._quant_index(quant_asked) if quant_asked else -1
        if asked >= 0:
            self.quant.setCurrentIndex(asked)
        elif model.weights is not None:
            self.quant.setCurrentIndex(0)
        else:
            # The recommendation (docs/recommendation.md), as Overview, Models and 'rigcheck fit' give
            # it; without a machine yet, the format it is released in, else the last choice.
            wanted = str(self.state.settings.value("fit/quant", "q4_k_m")).lower()
            released = {"fp8-e4m3": "fp8"}.get(model.native_quant or "", model.native_quant)
            index = self._recommended_index(model)
            if index < 0 and released:
                index = self.quant.findData(released)
            if index < 0:
                index = self.quant.findData(wanted)
            if index >= 0:
                self.quant.setCurrentIndex(index)
        self.context_value.setValue(min(self.context_value.value(), maximum))
        self._sync_slider()
        self._busy = False
        self.recompute()

    def busy(self) -> bool:
        """A slider move is waiting for its recomputation, or the format table for its answers."""
        return self._slider_timer.isActive() or self._ladder_job is not None

    # -- compute ---------------------------------------------------------------------------------

    @Slot()
    def recompute(self) -> None:
        if self._machine_pending:
            return  # a setting changed meanwhile (a language, a backend): worked out with the rest when shown
        if self._busy or self.model is None or self.state.machine is None:
            if self.model is not None:
                self.title.setText(self.model.name)
                self.subtitle.setText(tr("Waiting for the machine…"))
            return
        model, machine = self.model, self.state.machine
        refresh_box(self.training_gpus, self.request(), machine)
        arch = model.arch
        active = f", {num(arch.params_active / 1e9, 1, group=False)}B {tr('active')}" if arch.is_moe else ""
        self.title.setText(model.name)
        self.subtitle.setText(
            f"{arch.model_type} · {num(arch.params_total / 1e9, 1, group=False)}B "
            f"{tr('parameters')}{active} · "
            f"{arch.num_layers} {tr('layers')} · {tr('on')} {self.state.machine_label}"
        )
        self.state.settings.setValue("fit/context", self.context_value.value())
        if self.quant.currentData() != FILE_QUANT and self.quant.isEnabled():
            self.state.settings.setValue("fit/quant", self.quant.currentData())
        try:
            result = fit(
                model,
                machine,
                self.request(),
                self.state.catalog,
                offload=self._offload(),
                live=self.state.is_live,
                advise=False,
                split=self.split.currentData(),
                gpu_layers=self._gpu_layers(),
            )
        except InputError as exc:
            self.verdict.setText(f"✘ {esc(in_language(str(exc)))}")
            self.result = None
            self.take_button.setVisible(False)
            self._ladder_generation += 1  # a table still being worked out is for settings no longer asked
            self._ladder_job = None
            return
        if (
            result.speed.build_advice_said
        ):  # an older llama.cpp build: the milestones it lacks (no solver runs)
            result = replace(result, advice_said=(*result.advice_said, *result.speed.build_advice_said))
        if self._bench is not None:
            rows, name = self._bench
            result = apply_measured(result, rows, machine, name)
        if result.verdict == "does_not_fit" and result.estimate.workload != "inference":
            # a fine-tune that does not fit: what would (a few fits, milliseconds; training_advice)
            steps = training_steps(
                model, machine, self.request(), self.state.catalog, result.estimate, live=self.state.is_live
            )
            result = replace(result, advice_said=(*result.advice_said, *steps))
        self.result = result
        self._show(result)
        self._fill_ladder(model, result)

    @Slot()
    def _choose_bench(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, tr("llama-bench results"), "", "JSON (*.json);;*")
        if path:
            self.import_bench(path)

    def import_bench(self, path: str) -> None:
        """Use the measured speeds of a ``llama-bench -o json`` file wherever they cover the fit."""
        try:
            rows = load_llama_bench(path)
        except InputError as exc:
            self.solver_text.setText(in_language(str(exc)))
            return
        self._bench = (rows, Path(path).name)
        self.solver_text.setText(f"{tr('llama-bench results')}: {Path(path).name} ({len(rows)})")
        self.recompute()
