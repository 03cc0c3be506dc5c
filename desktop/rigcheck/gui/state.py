"""What every page shares: the catalog, the machine being looked at, and the model being fitted.

One ``AppState`` is made by the composition root (``app.py``) and handed to each page; pages listen
to its signals instead of reaching into each other. Everything it holds is an immutable core record.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QSettings, QThreadPool, Signal

from rigcheck.gui.workers import held_starts

if TYPE_CHECKING:  # the catalog module costs ~40-70 ms to import: not before the window is up
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
    #: "What would it take?" from a does-not-fit verdict: (model id, workload, context or None)
    upgrade_requested = Signal(str, str, object)

    def __init__(
        self,
        catalog: Catalog | Callable[[], Catalog],
        settings: QSettings,
        pool: QThreadPool | None = None,
        sampler_factory: Callable[[], Any] | None = None,
    ) -> None:
        """``catalog`` is the catalog, or a function that loads it: then the window can show before it is
        loaded (on a worker, see MainWindow), and :attr:`catalog` waits for it when asked for earlier."""
        super().__init__()
        #: makes the live sampler (core.monitor.Sampler); tests pass a fake
        self.sampler_factory = sampler_factory or _default_sampler
        self._catalog: Catalog | None = None
        self._load_catalog: Callable[[], Catalog] | None = None
        if callable(catalog):
            self._load_catalog = catalog
        else:
            self._catalog = catalog
        self._catalog_lock = threading.Lock()
        self.settings = settings
        self.pool = pool or QThreadPool.globalInstance()
        self.machine: Machine | None = None
        self.machine_label = "This computer"
        self.is_live = True
        self.model: ModelInfo | None = None
        #: the weight format and context the one who chose ``model`` showed it with (a model card's
        #: own settings), for Fit to open with; None: Fit keeps its own
        self.requested: tuple[str | None, int | None] | None = None

    @property
    def catalog(self) -> Catalog:
        """The catalog; loaded here, on whichever thread asks first, when it was given as a loader (a
        second thread asking meanwhile waits for that load instead of doing it again)."""
        if self._catalog is None:
            with self._catalog_lock:
                if self._catalog is None:
                    assert self._load_catalog is not None
                    self._catalog = self._load_catalog()
        return self._catalog

    @property
    def catalog_loaded(self) -> bool:
        return self._catalog is not None

    def set_machine(self, machine: Machine, label: str, is_live: bool) -> None:
        self.machine, self.machine_label, self.is_live = machine, label, is_live
        with held_starts():  # every page's work for the new machine starts once all have taken it
            self.machine_changed.emit(machine, label, is_live)

    def choose_model(self, model: ModelInfo, *, quant: str | None = None, context: int | None = None) -> None:
        """Show ``model`` in Fit; with ``quant``/``context``, Fit opens with those settings."""
        self.model = model
        self.requested = (quant, context) if quant is not None or context is not None else None
        self.model_chosen.emit(model)

    def ask_upgrade(self, model_id: str, workload: str = "inference", context: int | None = None) -> None:
        """Open Upgrade with ``model_id`` (and its workload and context) filled in and answered."""
        self.upgrade_requested.emit(model_id, workload, context)

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
        with held_starts():
            self.backend_changed.emit(backend or "")

    def psu_watts(self) -> float | None:
        if self.settings.value("machine/psu_watts", None) in (None, ""):
            return None
        return read_number(self.settings, "machine/psu_watts", None, 10, 100_000)  # the snapshot's bounds

    def number(self, key: str, default: float, low: float, high: float) -> float:
        """A number setting, or ``default`` when it is missing, not a number, NaN/inf or out of range."""
        value = read_number(self.settings, key, default, low, high)
        return default if value is None else value


#: the settings read as numbers and their sane ranges (a value outside falls back to the default):
#: a hand-edited or damaged settings file (monitor/window=0, an interval <= 0, psu_watts=inf) must not
#: stop a page from opening, now or on every later start
NUMBER_RANGES = {
    "monitor/interval": (0.1, 10.0),
    "monitor/window": (10, 86_400),
    "fit/context": (1, 10_000_000),
    "upgrade/kwh": (0.0, 10.0),
    "machine/psu_watts": (10, 100_000),
}


def read_number(
    settings: QSettings, key: str, default: float | None, low: float, high: float
) -> float | None:
    """``settings[key]`` as a finite number within ``low``..``high``, else ``default``."""
    import math

    value = settings.value(key, default)
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return default
    return number if math.isfinite(number) and low <= number <= high else default


def _default_sampler() -> Any:
    from rigcheck.core.monitor import Sampler

    return Sampler()
