"""A small gateway to NVML (the ``pynvml`` module of nvidia-ml-py), in the manner of nvitop's libnvml.

:func:`open_nvml` loads the module through the probe context, calls ``nvmlInit`` once and always
``nvmlShutdown`` at the end. Every call made through :class:`Nvml` or :class:`Device` returns
``None`` instead of raising ``NVMLError``, and classifies the error on the way:

- Not Supported: silently ``None`` (the caller decides whether the gap deserves a note);
- Insufficient Permissions: a warning;
- GPU is lost: the device is marked lost and answers ``None`` from then on;
- Function Not Found, or a function absent from an older nvidia-ml-py: an info note, once;
- anything else: a warning with NVML's own text.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from rigcheck.core.probe._common import Notes, ProbeContext

# NVML's error codes (nvml.h); they are part of the C ABI and never change.
NOT_SUPPORTED = 3
NO_PERMISSION = 4
DRIVER_NOT_LOADED = 9
LIBRARY_NOT_FOUND = 12
FUNCTION_NOT_FOUND = 13
GPU_IS_LOST = 15
LIB_RM_VERSION_MISMATCH = 18


def text(value: object) -> str | None:
    """A string NVML returned, whether the bindings gave ``str`` or (older ones) ``bytes``."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if not isinstance(value, str):
        return None
    value = value.split("\x00", 1)[0].strip()
    return value or None


class Nvml:
    """An initialised NVML whose calls return ``None`` instead of raising."""

    def __init__(self, module: Any, notes: Notes) -> None:
        self.module = module
        self.notes = notes
        self._error: type[BaseException] = getattr(module, "NVMLError", Exception)

    def const(self, name: str, default: int) -> int:
        """An ``NVML_*`` constant, or ``default`` when these bindings predate it."""
        value = getattr(self.module, name, default)
        return value if isinstance(value, int) else default

    def call(self, name: str, *args: Any, silent: bool = False) -> Any:
        """``pynvml.<name>(*args)``, or ``None`` when it fails (a note says why unless ``silent``)."""
        return self.call_first((name,), *args, silent=silent)

    def call_first(self, names: Sequence[str], *args: Any, silent: bool = False) -> Any:
        """The first of ``names`` that these bindings and this driver have, e.g. ``_v2`` then v1."""
        return self._invoke(names, args, silent, None)

    def device(self, index: int) -> Device | None:
        """The device at NVML ``index``; ``None`` (with a note) when NVML cannot open it."""
        try:
            handle = self.module.nvmlDeviceGetHandleByIndex(index)
        except self._error as exc:
            if getattr(exc, "value", None) == GPU_IS_LOST:
                self.notes.error(f"GPU {index} fell off the bus before it could be probed (GPU is lost)")
            else:
                self.notes.warning(f"GPU {index}: NVML could not open it (nvmlDeviceGetHandleByIndex: {exc})")
            return None
        return Device(self, index, handle)

    def _invoke(
        self, names: Sequence[str], args: tuple[Any, ...], silent: bool, device: Device | None
    ) -> Any:
        missing_in_driver = False
        for name in names:
            function = getattr(self.module, name, None)
            if function is None:
                continue  # older nvidia-ml-py: try the next name
            try:
                return function(*args)
            except self._error as exc:
                if getattr(exc, "value", None) == FUNCTION_NOT_FOUND:
                    missing_in_driver = True
                    continue
                self._classify(name, exc, silent, device)
                return None
        if not silent:
            if missing_in_driver:
                self.notes.info(f"NVIDIA driver too old for {names[0]}")
            else:
                self.notes.info(f"nvidia-ml-py too old for {names[0]}; consider updating it")
        return None

    def _classify(self, name: str, exc: BaseException, silent: bool, device: Device | None) -> None:
        """Record what a failed call means: a lost GPU, an unsupported field, or a note."""
        code = getattr(exc, "value", None)
        if code == GPU_IS_LOST and device is not None:
            device.lost = True
        elif code == NOT_SUPPORTED:
            if device is not None:
                device.unsupported.add(name)
        elif silent:
            return
        elif code == NO_PERMISSION:
            self.notes.warning(f"NVML refused {name} (Insufficient Permissions)")
        else:
            self.notes.warning(f"NVML call {name} failed: {exc}")


class Device:
    """One GPU's handle; calls go through the gateway and stop once the GPU is lost."""

    def __init__(self, nvml: Nvml, index: int, handle: Any) -> None:
        self.nvml = nvml
        self.index = index
        self.handle = handle
        #: set when a call reported GPU_IS_LOST: the GPU fell off the bus
        self.lost = False
        #: functions that answered Not Supported for this GPU
        self.unsupported: set[str] = set()

    def call(self, name: str, *args: Any, silent: bool = False) -> Any:
        """``pynvml.<name>(handle, *args)``, or ``None``; nothing is asked of a lost GPU."""
        return self.call_first((name,), *args, silent=silent)

    def call_first(self, names: Sequence[str], *args: Any, silent: bool = False) -> Any:
        """Like :meth:`Nvml.call_first` with this device's handle as the first argument."""
        if self.lost:
            return None
        return self.nvml._invoke(names, (self.handle, *args), silent, self)


@contextmanager
def open_nvml(ctx: ProbeContext, notes: Notes) -> Iterator[Nvml | None]:
    """Load and initialise NVML; yields ``None`` (with a note) when that is impossible."""
    module = _load(ctx, notes)
    if module is None or not _init(module, notes):
        yield None
        return
    try:
        yield Nvml(module, notes)
    finally:
        try:
            module.nvmlShutdown()
        except getattr(module, "NVMLError", Exception):
            pass  # nothing useful to tell the user: the probe's results are already in hand


def _load(ctx: ProbeContext, notes: Notes) -> Any:
    try:
        return ctx.load_nvml()
    except ImportError:
        notes.warning("NVIDIA driver library bindings (nvidia-ml-py) not installed")
        return None


def _init(module: Any, notes: Notes) -> bool:
    try:
        module.nvmlInit()
    except getattr(module, "NVMLError", Exception) as exc:
        _note_init_failure(exc, notes)
        return False
    return True


def _note_init_failure(exc: BaseException, notes: Notes) -> None:
    code = getattr(exc, "value", None)
    if code == LIBRARY_NOT_FOUND:
        notes.info("NVIDIA driver library (NVML) not found: no NVIDIA driver installed")
    elif code == DRIVER_NOT_LOADED:
        notes.warning(
            "NVIDIA driver installed but not loaded (nvmlInit: Driver Not Loaded); "
            "is the kernel module loaded?"
        )
    elif code == LIB_RM_VERSION_MISMATCH:
        notes.error("NVIDIA driver/library version mismatch: reboot after a driver update")
    elif code == NO_PERMISSION:
        notes.warning("no permission to use the NVIDIA driver (nvmlInit: Insufficient Permissions)")
    else:
        notes.warning(f"NVML could not start (nvmlInit: {exc})")
