"""What every page shares: the catalog, the machine being looked at, and the model being fitted.

One ``AppState`` is made by the composition root (``app.py``) and handed to each page; pages listen
to its signals instead of reaching into each other. Everything it holds is an immutable core record.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QSettings, QThreadPool, Signal

from rigcheck.core.catalog import Backend, Catalog
from rigcheck.core.machine import Machine
from rigcheck.core.models.spec import ModelInfo

#: the llama.cpp GPU backends a user may choose (core.catalog.Backend, less the CPU and engine rows), and
#: their names as llama.cpp writes them
BACKEND_NAMES = {"cuda": "CUDA", "rocm": "ROCm", "metal": "Metal", "vulkan": "Vulkan", "sycl": "SYCL"}


class AppState(QObject):
    #: the machine every page shows changed: (machine, label, is_this_computer)
    machine_changed = Signal(object, str, bool)
    #: a model was chosen (from the Models page, a card, or a dropped file): show it in Fit
    model_chosen = Signal(object)
    #: a page asks the window to show another page, by its key ("fit", "models", …)
    page_requested = Signal(str)
    #: the llama.cpp backend speeds assume changed ("" for each vendor's usual one)
    backend_changed = Signal(str)

    def __init__(
        self,
        catalog: Catalog,
        settings: QSettings,
        pool: QThreadPool | None = None,
        sampler_factory: Callable[[], Any] | None = None,
    ) -> None:
        super().__init__()
        #: makes the live sampler (core.monitor.Sampler); tests pass a fake
        self.sampler_factory = sampler_factory or _default_sampler
        self.catalog = catalog
        self.settings = settings
        self.pool = pool or QThreadPool.globalInstance()
        self.machine: Machine | None = None
        self.machine_label = "This computer"
        self.is_live = True
        self.model: ModelInfo | None = None
        #: the weight format and context the one who chose ``model`` showed it with (a model card's
        #: own settings), for Fit to open with; None: Fit keeps its own
        self.requested: tuple[str | None, int | None] | None = None

    def set_machine(self, machine: Machine, label: str, is_live: bool) -> None:
        self.machine, self.machine_label, self.is_live = machine, label, is_live
        self.machine_changed.emit(machine, label, is_live)

    def choose_model(self, model: ModelInfo, *, quant: str | None = None, context: int | None = None) -> None:
        """Show ``model`` in Fit; with ``quant``/``context``, Fit opens with those settings."""
        self.model = model
        self.requested = (quant, context) if quant is not None or context is not None else None
        self.model_chosen.emit(model)

    @property
    def backend(self) -> Backend | None:
        """The llama.cpp backend the speed estimates on Overview, Models and Fit assume, as
        ``rigcheck fit --backend`` takes it; None: each GPU vendor's usual one."""
        value = str(self.settings.value("estimate/backend", "") or "").lower()
        return value if value in BACKEND_NAMES else None  # type: ignore[return-value]

    def set_backend(self, backend: str | None) -> None:
        if (backend or None) == self.backend:
            return
        self.settings.setValue("estimate/backend", backend or "")
        self.backend_changed.emit(backend or "")

    def psu_watts(self) -> float | None:
        value = self.settings.value("machine/psu_watts", None)
        try:
            return float(value) if value not in (None, "") else None  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return None


def _default_sampler() -> Any:
    from rigcheck.core.monitor import Sampler

    return Sampler()
