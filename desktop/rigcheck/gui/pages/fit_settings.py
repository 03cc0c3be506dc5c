"""The Fit page's settings form: the choices each row offers (formats, KV types, workloads, offloads,
multi-GPU splits, engines and their backends), which rows apply to the workload and engine chosen, and the
``Request`` the rows ask for."""

from __future__ import annotations

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QComboBox, QFormLayout, QSpinBox

from rigcheck.core.catalog import Backend
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.fit import Offload
from rigcheck.core.estimate.memory import LLAMA_CPP_ENGINES, Request, resolve_quant
from rigcheck.core.estimate.recommend import display_quant
from rigcheck.core.estimate.training_profiles import FRAMEWORKS, PROFILES
from rigcheck.core.models.spec import ModelInfo
from rigcheck.gui.fitchoices import (
    VENDOR_BACKENDS,
    backend_choices,
    engine_choices,
    format_choices,
    offload_choices,
    training_format,
)
from rigcheck.gui.i18n import tr
from rigcheck.gui.pages.fit_training import TrainingExtras, gpu_count_box, training_extras, with_training_gpus
from rigcheck.gui.state import BACKEND_NAMES, NUMBER_RANGES, AppState

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


class FitSettings:
    """FitPage's settings rows (``quant`` … ``gpu_layers``, the training rows) and the request they ask."""

    state: AppState
    model: ModelInfo | None
    form: QFormLayout
    quant: QComboBox
    context_value: QSpinBox
    batch: QSpinBox
    kv: QComboBox
    workload: QComboBox
    offload: QComboBox
    engine: QComboBox
    backend: QComboBox
    engine_build: QSpinBox
    split: QComboBox
    gpu_layers: QSpinBox
    framework: QComboBox
    lora_rank: QSpinBox
    checkpointing: QComboBox
    training_gpus: QSpinBox
    extras: TrainingExtras
    _inference_quant: int

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

    def _restore(self) -> None:
        settings = self.state.settings
        quant = str(settings.value("fit/quant", "q4_k_m")).lower()
        index = self.quant.findData(quant)
        self.quant.setCurrentIndex(index if index >= 0 else self.quant.findData("q4_k_m"))
        self.context_value.setValue(
            int(self.state.number("fit/context", 8192, *NUMBER_RANGES["fit/context"]))
        )
        self.backend.setCurrentIndex(max(self.backend.findData(self.state.backend or ""), 0))

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
