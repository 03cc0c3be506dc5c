"""What every probe module shares: the context it reads the machine through, and how it reports.

Each vendor module (``_nvidia``, ``_amd``, ``_intel``, ``_apple``, ``_windows``) exposes the same
function, ``probe_gpus(ctx) -> VendorResult``, in the manner of psutil's platform modules. A probe
never raises for a missing library, a missing driver or a refused query: it returns ``None`` for what
it could not read and adds a :class:`~rigcheck.core.machine.Note` saying why.

Everything a probe touches outside Python goes through :class:`ProbeContext`, so tests can point
it at a copied sysfs tree, a fake NVML module or recorded command output.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from rigcheck.core.machine import GPU, Drivers, Level, Note

#: how long any external command may take before we give up on it (seconds)
COMMAND_TIMEOUT_S = 3.0

Runner = Callable[[Sequence[str], float], "str | None"]


def run_command(args: Sequence[str], timeout: float = COMMAND_TIMEOUT_S) -> str | None:
    """Run a command and return its stdout (or stderr when stdout is empty); ``None`` on any failure."""
    try:
        done = subprocess.run(  # noqa: S603 - args come from our own code, never from a shell string
            list(args),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
            errors="replace",
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout if done.stdout.strip() else done.stderr


def _import_pynvml() -> ModuleType:
    import pynvml  # imported lazily: absent on machines without nvidia-ml-py

    module: ModuleType = pynvml
    return module


@dataclass(frozen=True)
class ProbeContext:
    """The outside world as the probes see it; tests replace any part of it."""

    #: file-system root for /sys, /proc, /opt, /usr (a temporary folder in tests)
    root: Path = Path("/")
    #: ``sys.platform`` of the machine being probed
    platform: str = sys.platform
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    run: Runner = run_command
    which: Callable[[str], str | None] = shutil.which
    #: returns the ``pynvml`` module (from nvidia-ml-py); raises ImportError when not installed
    load_nvml: Callable[[], ModuleType] = _import_pynvml

    def path(self, absolute: str) -> Path:
        """Map an absolute path such as ``/sys/class/drm`` under :attr:`root`."""
        return self.root / absolute.lstrip("/")


class Notes:
    """Collects notes for one probe; ``probe`` names it in every note ("nvidia", "amd", …)."""

    def __init__(self, probe: str) -> None:
        self.probe = probe
        self._notes: list[Note] = []

    def add(self, level: Level, message: str) -> None:
        note = Note(self.probe, level, message)
        if note not in self._notes:
            self._notes.append(note)

    def info(self, message: str) -> None:
        self.add("info", message)

    def warning(self, message: str) -> None:
        self.add("warning", message)

    def error(self, message: str) -> None:
        self.add("error", message)

    def collected(self) -> tuple[Note, ...]:
        return tuple(self._notes)


@dataclass(frozen=True)
class VendorResult:
    gpus: tuple[GPU, ...] = ()
    drivers: Drivers = field(default_factory=Drivers)
    notes: tuple[Note, ...] = ()


def read_text(path: Path, notes: Notes | None = None) -> str | None:
    """Read a small sysfs/procfs file: NUL padding and whitespace stripped; ``None`` when unreadable.

    A missing file is silent (most attributes are optional); permission and I/O errors become a note.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except PermissionError:
        if notes is not None:
            notes.warning(f"permission denied reading {path}")
        return None
    except OSError as exc:
        if notes is not None:
            notes.warning(f"cannot read {path}: {exc.strerror or exc}")
        return None
    text = raw.split(b"\x00", 1)[0].decode("utf-8", errors="replace").strip()
    return text or None


def read_int(path: Path, notes: Notes | None = None, base: int = 10) -> int | None:
    """An integer sysfs attribute (``0x``-prefixed hex accepted with ``base=16``); ``None`` otherwise."""
    text = read_text(path, notes)
    if text is None:
        return None
    try:
        return int(text, base)
    except ValueError:
        if notes is not None:
            notes.warning(f"unexpected content in {path}: {text[:40]!r}")
        return None


def hwmon_folder(device: Path, wanted: Sequence[str], *, fallback: bool = True) -> Path | None:
    """The device's first ``hwmon/hwmonN`` folder holding any of the ``wanted`` attribute files; else
    its first hwmon folder (``fallback``) or None."""
    try:
        folders = sorted((device / "hwmon").iterdir())
    except OSError:
        return None
    default = folders[0] if fallback and folders else None
    return next((f for f in folders if any((f / w).exists() for w in wanted)), default)


def pci_ids_name(ctx: ProbeContext, vendor_id: str, device_id: str) -> str | None:
    """The device name from the system's ``pci.ids`` database (hwdata / pciutils), when installed."""
    vendor_id, device_id = vendor_id.lower(), device_id.lower()
    for candidate in ("/usr/share/hwdata/pci.ids", "/usr/share/misc/pci.ids", "/usr/share/pci.ids"):
        path = ctx.path(candidate)
        try:
            with path.open(encoding="utf-8", errors="replace") as handle:
                in_vendor = False
                for line in handle:
                    if line.startswith("#") or not line.strip():
                        continue
                    if not line.startswith("\t"):
                        if in_vendor:
                            return None
                        in_vendor = line[:4].lower() == vendor_id
                    elif in_vendor and not line.startswith("\t\t") and line[1:5].lower() == device_id:
                        return line[5:].strip()
        except OSError:
            continue
    return None
