"""Fit: one model on the selected machine, recomputed as the user changes anything.

The estimate takes well under a millisecond (BENCHMARKS.md), so it runs on the GUI thread on every
change; the chart is painted directly with QPainter. The format table (a recommendation over every
format, and the commands) is worked out on the pool and shown when ready.
"""

from __future__ import annotations

import math
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

from rigcheck.core.catalog import Backend
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.commands import Commands
from rigcheck.core.estimate.fit import FitResult, Offload, fit, max_context
from rigcheck.core.estimate.measured import BenchRow, apply_measured, load_llama_bench
from rigcheck.core.estimate.memory import LLAMA_CPP_ENGINES, Request, resolve_quant
from rigcheck.core.estimate.recommend import (
    Recommendation,
    display_quant,
    longest_running_context,
    recommend,
)
from rigcheck.core.estimate.training_advice import training_steps
from rigcheck.core.estimate.training_profiles import FRAMEWORKS, PROFILES
from rigcheck.core.known_text import in_language
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.models.spec import ModelInfo
from rigcheck.core.units import approx_speed, fmt_bytes
from rigcheck.gui.cited import split_sources
from rigcheck.gui.fitchoices import (
    ENGINES,
    VENDOR_BACKENDS,
    backend_choices,
    engine_choices,
    format_choices,
    offload_choices,
    training_format,
)
from rigcheck.gui.fitview import view_of_result
from rigcheck.gui.i18n import num, tr
from rigcheck.gui.markup import units_whole
from rigcheck.gui.memory_chart import CATEGORY_COLOURS, CATEGORY_NAMES, MemoryChart
from rigcheck.gui.pages.fit_ladder import FormatLadder
from rigcheck.gui.pages.fit_training import (
    gpu_count_box,
    refresh_box,
    training_extras,
    with_training_gpus,
)
from rigcheck.gui.state import BACKEND_NAMES, NUMBER_RANGES, AppState
from rigcheck.gui.what_it_takes import take_button
from rigcheck.gui.widgets import Card, esc, heading, muted, off_screen, scroll_page, subheading, tooltip
from rigcheck.gui.workers import Job

if TYPE_CHECKING:
    from PySide6.QtGui import QShowEvent

QUANTS = (
    "bf16",
    "fp8",
    "q8_0",
    "q6_k",
    "q5_k_m",
    "q4_k_m",
    "iq4_xs",
    "q3_k_m",
    "q2_k",
    "nf4",
    "gptq-4bit",
    "awq-4bit",
    "mxfp4",
    "fp8-fp4-experts",
)
FILE_QUANT = "file"
KV_TYPES = ("f16", "bf16", "fp8", "q8_0", "q4_0")
WORKLOADS = (
    ("inference", "Inference"),
    ("lora", "LoRA fine-tune"),
    ("qlora", "QLoRA fine-tune"),
    ("full", "Full fine-tune"),
)
OFFLOADS = (
    ("auto", "Automatic"),
    ("none", "GPU only"),
    ("layers", "Layers to RAM (llama.cpp)"),
    ("experts", "MoE experts to RAM (llama.cpp --n-cpu-moe)"),
    ("optimizer", "Optimizer to RAM (ZeRO-Offload)"),
    ("full", "Everything in RAM (MegaTrain)"),
)
#: llama.cpp --split-mode, as the estimator splits (core/estimate/placement/split.py)
SPLITS = (
    ("layer", "Layers over every GPU (llama.cpp default)"),
    ("tensor", "Rows of every matrix (-sm row / tensor)"),
    ("none", "The main GPU alone (-sm none)"),
)
#: the GPU-layers box's value for "as many as fit" (llama.cpp -ngl unset)
AUTO_GPU_LAYERS = -1
#: llama.cpp's GPU backends, as ``rigcheck fit --backend`` takes them; "" is each vendor's usual one
#: (speed.default_backend: CUDA, ROCm, Metal, Vulkan for Intel)
BACKEND_CHOICES = (("", "Automatic"), *BACKEND_NAMES.items())
SLIDER_STEPS = 1000
#: how long the context slider rests before the estimate follows it
SLIDER_DEBOUNCE_MS = 60
MIN_CONTEXT = 256
BOUND_WORDS = {
    "memory_bandwidth": "GPU memory bandwidth",
    "compute": "compute",
    "pcie": "PCIe transfers",
    "ram_bandwidth": "RAM bandwidth",
    "cpu_optimizer": "the CPU optimizer",
}


class FitPage(FormatLadder, QWidget):
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

    def _combo(self, name: str, items: list[tuple[str, str]]) -> QComboBox:
        combo = QComboBox()
        combo.setAccessibleName(name)
        # a long choice ("Strati su tutte le GPU (predefinito di llama.cpp)") no longer widens the settings
        # card at 900 px and squeezes the memory bars beside it: the box shows what fits, the list is whole
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(14)
        for key, text in items:
            combo.addItem(text, key)
        return combo

    # -- state -----------------------------------------------------------------------------------

    def _restore(self) -> None:
        settings = self.state.settings
        quant = str(settings.value("fit/quant", "q4_k_m")).lower()
        index = self.quant.findData(quant)
        self.quant.setCurrentIndex(index if index >= 0 else self.quant.findData("q4_k_m"))
        self.context_value.setValue(
            int(self.state.number("fit/context", 8192, *NUMBER_RANGES["fit/context"]))
        )
        self.backend.setCurrentIndex(max(self.backend.findData(self.state.backend or ""), 0))

    def retranslate(self) -> None:
        """After a language switch: the file's own format row and the results again; every setting stays."""
        file_index = self.quant.findData(FILE_QUANT)
        if file_index >= 0 and self.model is not None and self.model.weights is not None:
            self.quant.setItemText(file_index, _file_quant_text(self.model))
        self.recompute()

    @Slot(str)
    def _backend_changed(self, backend: str) -> None:
        index = max(self.backend.findData(backend), 0)
        if index != self.backend.currentIndex():
            self.backend.setCurrentIndex(index)

    @Slot()
    def _engine_changed(self) -> None:
        """The backend choice is llama.cpp's (and Ollama's, which runs llama.cpp): other engines run their own
        kernels. A training run uses a training stack, so the inference engine, its backend and KV cache do
        not apply to it."""
        inference = self.workload.currentData() == "inference"
        self.engine.setEnabled(inference)
        self.kv.setEnabled(inference)
        self.backend.setEnabled(
            inference and self.engine.currentData() in LLAMA_CPP_ENGINES and self.backend.count() > 1
        )
        # how layers split over GPUs, and a -ngl cap, are llama.cpp's (Ollama's) inference choices; the split
        # only means something with two GPUs or more
        llama = inference and self.engine.currentData() in LLAMA_CPP_ENGINES
        machine = self.state.machine
        self.split.setEnabled(llama and machine is not None and len(machine.gpus) > 1)
        self.gpu_layers.setEnabled(llama and machine is not None and bool(machine.gpus))
        self.engine_build.setEnabled(inference and self.engine.currentData() == "llama.cpp")
        for widget in (self.framework, self.lora_rank, self.checkpointing, self.training_gpus):
            widget.setEnabled(not inference)
        self.lora_rank.setEnabled(self.workload.currentData() in ("lora", "qlora"))
        self.extras.enable(self.workload.currentData(), self.model)
        # only the settings that apply are shown: a training stack's for training, an engine's for
        # inference, the split with two GPUs or more (a greyed row still reads as a choice to make)
        for widget in (self.engine, self.kv, self.backend, self.engine_build, self.split, self.gpu_layers,
                       self.framework, self.lora_rank, self.checkpointing, self.training_gpus,
                       *self.extras.widgets()):  # fmt: skip
            self.form.setRowVisible(widget, widget.isEnabled())

    def _engine_formats(self) -> None:
        """MLX and ExLlamaV3 run formats of their own (MLX's group-64 quantizations, EXL3); the other engines
        the GGUF and checkpoint formats. A training run shows its own format and is left alone."""
        if not self.quant.isEnabled():
            return
        items = [(q, _quant_name(self.state, q)) for q in format_choices(self.engine.currentData(), QUANTS)]
        file_index = self.quant.findData(FILE_QUANT)
        if file_index >= 0:
            items.insert(0, (FILE_QUANT, self.quant.itemText(file_index)))
        _refill(self.quant, items)

    def _training_widgets(self) -> None:
        """How a training run trains: the framework (its own defaults), LoRA rank, checkpointing."""
        self.framework = self._combo(
            tr("Training framework"),
            [(f, PROFILES[f].stack) for f in FRAMEWORKS],  # the first, TRL + PEFT, is the default
        )
        self.framework.setToolTip(
            tr("The fine-tuning stack whose defaults (loss, checkpointing, kernels, LoRA) size the memory")
        )
        self.lora_rank = QSpinBox()
        self.lora_rank.setRange(0, 4096)
        self.lora_rank.setSpecialValueText(tr("framework default"))
        self.lora_rank.setAccessibleName(tr("LoRA rank"))
        self.checkpointing = self._combo(
            tr("Checkpointing"),
            [("", tr("framework default"))] + [(m, m) for m in ("none", "selective", "full", "offloaded")],
        )
        self.training_gpus = gpu_count_box()  # rigcheck fit --gpus; the default the CLI's (fit_training)
        self.extras = training_extras(
            self._combo
        )  # --optimizer, --precision, --lora-targets, --linear-kernels

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

    def _refresh_choices(self) -> None:
        """Offer only what applies: offload modes of this workload and model kind, backends of this
        machine's GPUs, and for training the format it trains on (shown, not choosable)."""
        workload = self.workload.currentData()
        is_moe = bool(self.model is not None and self.model.arch.is_moe)
        _refill(self.offload, [(k, tr(v)) for k, v in OFFLOADS if k in offload_choices(workload, is_moe)])
        machine = self.state.machine
        vendors = [g.vendor for g in machine.gpus] if machine is not None else list(VENDOR_BACKENDS)
        _refill(self.engine, [(e, e) for e in engine_choices(vendors if machine is not None else ())])
        allowed = backend_choices(vendors)
        names = dict(BACKEND_CHOICES)
        _refill(
            self.backend,
            [(b, names[b] if b else tr(names[b])) for b in allowed],
            prefer=self.state.backend or "",
        )
        used = training_format(workload)
        if used is not None:
            if self.quant.isEnabled():
                self._inference_quant = self.quant.currentIndex()
            self.quant.blockSignals(True)
            self.quant.setCurrentIndex(max(self.quant.findData(used), 0))
            self.quant.blockSignals(False)
            self.quant.setEnabled(False)
            self.quant.setToolTip(
                tr(
                    "Training uses the format of its method: "
                    "NF4 for QLoRA, BF16 for LoRA and full fine-tuning"
                )
            )
        elif not self.quant.isEnabled():
            self.quant.blockSignals(True)
            if self._inference_quant >= 0:
                self.quant.setCurrentIndex(self._inference_quant)
            self.quant.blockSignals(False)
            self.quant.setEnabled(True)
            self.quant.setToolTip("")
        self._engine_changed()

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

    def _max(self) -> int:
        return self.model.arch.max_context if self.model and self.model.arch.max_context else 131072

    def _to_slider(self, tokens: int) -> int:
        span = math.log(self._max() / MIN_CONTEXT) or 1.0
        return round(SLIDER_STEPS * math.log(max(tokens, MIN_CONTEXT) / MIN_CONTEXT) / span)

    def _from_slider(self, value: int) -> int:
        tokens = MIN_CONTEXT * (self._max() / MIN_CONTEXT) ** (value / SLIDER_STEPS)
        step = 256 if tokens < 16384 else 1024
        return min(self._max(), max(MIN_CONTEXT, int(round(tokens / step) * step)))

    def _sync_slider(self) -> None:
        # the arrow keys move the context a quarter of a doubling (8k -> ~9.7k), Page Up/Down one doubling
        doublings = max(math.log2(self._max() / MIN_CONTEXT), 1.0)
        self.context.setPageStep(max(1, round(SLIDER_STEPS / doublings)))
        self.context.setSingleStep(max(1, round(SLIDER_STEPS / doublings / 4)))
        self.context.blockSignals(True)
        self.context.setValue(self._to_slider(self.context_value.value()))
        self.context.blockSignals(False)

    @Slot(int)
    def _slider_moved(self, value: int) -> None:
        """The number follows the slider at once; the estimate once the slider rests (a drag sends a
        value per pixel, each a full recomputation)."""
        self.context_value.blockSignals(True)
        self.context_value.setValue(self._from_slider(value))
        self.context_value.blockSignals(False)
        self._slider_timer.start()

    def busy(self) -> bool:
        """A slider move is waiting for its recomputation, or the format table for its answers."""
        return self._slider_timer.isActive() or self._ladder_job is not None

    @Slot(int)
    def _context_typed(self, _value: int) -> None:
        self._sync_slider()
        self.recompute()

    def request(self) -> Request:
        """The settings asked; a training run on the GPUs the CLI would use (fit_training)."""
        quant = self.quant.currentData()
        asked = Request(
            quant=None if quant == FILE_QUANT else quant,
            context=self.context_value.value(),
            batch=self.batch.value(),
            kv_type=self.kv.currentData(),
            workload=self.workload.currentData(),
            engine=self.engine.currentData(),
            backend=self._backend(),
            framework=(self.framework.currentData() or None)
            if self.workload.currentData() != "inference"
            else None,
            lora_rank=self.lora_rank.value() or None,
            checkpointing=self.checkpointing.currentData() or None,
            engine_build=(self.engine_build.value() or None)
            if self.engine.currentData() == "llama.cpp"
            else None,
        )
        return with_training_gpus(self.extras.apply(asked), self.training_gpus.value(), self.state.machine)

    def _gpu_layers(self) -> int | None:
        """llama.cpp -ngl N, or None for as many as fit."""
        value = self.gpu_layers.value()
        return None if value == AUTO_GPU_LAYERS else value

    def _offload(self) -> Offload:
        """The offload chosen; a GPU-layers cap means layer offload (-ngl) where offload is automatic."""
        chosen: Offload = self.offload.currentData()
        return "layers" if self._gpu_layers() is not None and chosen == "auto" else chosen

    def _backend(self) -> Backend | None:
        """The chosen llama.cpp backend; None for Automatic and for the engines that do not take one."""
        chosen = self.backend.currentData()
        return chosen if chosen and self.engine.currentData() in LLAMA_CPP_ENGINES else None

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

    # -- solvers ---------------------------------------------------------------------------------

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


def _refill(combo: QComboBox, items: list[tuple[str, str]], prefer: str | None = None) -> None:
    """Give ``combo`` exactly ``items`` (key, text), choosing ``prefer`` where it is offered, else the
    chosen key where it still is, else the first. No change signal: the caller recomputes once
    afterwards (and the app-wide backend is not overwritten by a machine that lacks its GPUs)."""
    keys = [k for k, _text in items]
    current = combo.currentData()
    if [combo.itemData(i) for i in range(combo.count())] == keys:
        return
    fallback = current if current in keys else keys[0]
    chosen = prefer if prefer in keys else fallback
    combo.blockSignals(True)
    combo.clear()
    for key, text in items:
        combo.addItem(text, key)
    combo.setCurrentIndex(keys.index(chosen))
    combo.blockSignals(False)


def _file_quant_text(model: ModelInfo) -> str:
    quant_id = model.weights.quant_id if model.weights is not None else None
    return tr("as in the file") + f" ({quant_id or '?'})"


def _quant_name(state: AppState, quant: str) -> str:
    try:
        return display_quant(resolve_quant(state.catalog, quant).name)
    except InputError:
        return quant.upper()


def _short_name(index: int, name: str) -> str:
    for prefix in ("NVIDIA ", "GeForce ", "AMD ", "Radeon ", "Apple "):
        name = name.replace(prefix, "")
    return f"GPU {index} {name}"[:22]
