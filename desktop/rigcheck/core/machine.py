"""The Machine snapshot: what a computer has, as frozen records that round-trip through JSON.

Schema id ``rigcheck.machine/1``. Units are bytes, watts and MHz; versions are strings; a value
nobody could read is ``None`` (``null`` in JSON) and a note in ``Machine.notes`` says why.

Loading accepts a snapshot or a report (``rigcheck.report/1``, whose "machine" is a snapshot) and
validates: required are ``schema`` (exactly this version), ``cpu.logical_cores``,
``memory.total_bytes`` and ``gpus`` with each GPU's ``vendor``, ``name`` and ``memory_total_bytes``
(the key must be there; its value may be null, for unified memory or when unreadable). Everything else
may be missing and then means unknown. Wrong types, negative sizes, unknown schema versions and
files that are not JSON are refused with an ``InputError`` naming the file and the field.

Loading also checks that every physical quantity is one a real computer can have (:data:`BOUNDS`:
RAM 64 MiB – 64 TiB, at most 64 GPUs, 1–4096 logical cores, free memory not above total, …) and that
every string is short, valid Unicode text on one line; ``docs/snapshot.md`` lists the bounds. A
snapshot outside them is refused naming the field, never given a verdict.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from rigcheck.core.errors import InputError
from rigcheck.core.fileio import load_json, read_text_file, write_output
from rigcheck.core.records import decode

SCHEMA = "rigcheck.machine/1"
#: A report (``rigcheck audit --format json``) holds a snapshot; everything that reads a snapshot reads
#: one too. Defined here, not in core.report, so that loading a machine needs no report code.
REPORT_SCHEMA = "rigcheck.report/1"

OS = Literal["linux", "windows", "macos", "other"]
Vendor = Literal["nvidia", "amd", "intel", "apple"]
Level = Literal["info", "warning", "error"]
Container = Literal["docker", "podman", "wsl", "lxc", "kubernetes", "container"]


@dataclass(frozen=True)
class Host:
    hostname: str | None = None
    os: OS | None = None
    os_version: str | None = None
    kernel: str | None = None
    python: str | None = None
    container: Container | None = None
    #: the C library wheels are built against, "glibc 2.35" (Linux; a manylinux_2_X wheel needs glibc >= 2.X)
    libc: str | None = None
    #: Jetson Linux (L4T) release of a Jetson, "36.4.3" (/etc/nv_tegra_release); JetPack 6.x is L4T 36.x
    l4t: str | None = None


@dataclass(frozen=True)
class CPU:
    logical_cores: int
    model: str | None = None
    vendor: str | None = None
    arch: str | None = None
    physical_cores: int | None = None
    max_mhz: float | None = None
    flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Memory:
    total_bytes: int
    available_bytes: int | None = None
    swap_total_bytes: int | None = None
    #: host memory bandwidth, bytes/s, and where it came from: a copy test (``audit --measure``), the
    #: CPU platform catalog (channels × speed), a default, or typed in by the user (``measured``)
    bandwidth_bytes_per_s: int | None = None
    bandwidth_source: Literal["measured", "catalog", "default"] | None = None


@dataclass(frozen=True)
class Disk:
    path: str
    total_bytes: int | None = None
    free_bytes: int | None = None
    #: what lives there: "home", "huggingface", "ollama", "lmstudio", …
    purpose: str | None = None


@dataclass(frozen=True)
class GPU:
    vendor: Vendor
    name: str
    memory_total_bytes: int | None
    index: int | None = None
    catalog_id: str | None = None
    uuid: str | None = None
    serial: str | None = None
    pci_bus_id: str | None = None
    #: PCI "vendor:device" in lower-case hex, e.g. "10de:2684"
    pci_id: str | None = None
    memory_free_bytes: int | None = None
    unified_memory: bool | None = None
    #: system RAM the GPU may map besides its own memory (AMD APUs: the GTT pool), where read
    memory_shared_bytes: int | None = None
    compute_capability: str | None = None
    gfx_target: str | None = None
    #: GPU cores (Apple) or compute units (AMD) where the source reports them
    cores: int | None = None
    power_limit_watts: float | None = None
    power_default_limit_watts: float | None = None
    power_max_limit_watts: float | None = None
    pcie_gen: int | None = None
    pcie_width: int | None = None
    pcie_max_gen: int | None = None
    pcie_max_width: int | None = None
    nvlink_links: int | None = None
    driver_model: Literal["WDDM", "TCC", "MCDM"] | None = None
    mig_enabled: bool | None = None
    #: where the figures came from: "nvml", "sysfs /sys/class/drm/card0/device", "registry", …
    source: str | None = None


@dataclass(frozen=True)
class Drivers:
    nvidia: str | None = None
    #: the highest CUDA version the NVIDIA driver supports, e.g. "12.4"
    cuda_driver: str | None = None
    amdgpu: str | None = None
    rocm: str | None = None


@dataclass(frozen=True)
class CudaToolkit:
    version: str
    path: str | None = None


@dataclass(frozen=True)
class Executable:
    path: str
    version: str | None = None


@dataclass(frozen=True)
class Software:
    cuda_toolkits: tuple[CudaToolkit, ...] = ()
    python_packages: dict[str, str] = field(default_factory=dict)
    executables: dict[str, Executable] = field(default_factory=dict)


@dataclass(frozen=True)
class PSU:
    watts: float | None = None
    #: "user" when typed in, "snapshot" when loaded from a file
    source: str | None = None


@dataclass(frozen=True)
class Note:
    probe: str
    level: Level
    message: str


@dataclass(frozen=True)
class Machine:
    cpu: CPU
    memory: Memory
    gpus: tuple[GPU, ...]
    schema: str = SCHEMA
    taken_at: str | None = None
    host: Host = field(default_factory=Host)
    disks: tuple[Disk, ...] = ()
    drivers: Drivers = field(default_factory=Drivers)
    software: Software = field(default_factory=Software)
    psu: PSU = field(default_factory=PSU)
    notes: tuple[Note, ...] = ()

    # -- conveniences -------------------------------------------------------------------------

    def with_psu(self, watts: float | None, source: str = "user") -> Machine:
        return replace(self, psu=PSU(watts=watts, source=source if watts is not None else None))

    def redacted(self) -> Machine:
        """A copy without hostname, GPU UUIDs, serials and PCI bus ids, and with home paths as ``~``."""
        home = str(Path.home())

        def tidy(path: str) -> str:
            return "~" + path[len(home) :] if home not in ("", "/") and path.startswith(home) else path

        return replace(
            self,
            host=replace(self.host, hostname=None),
            gpus=tuple(replace(g, uuid=None, serial=None, pci_bus_id=None) for g in self.gpus),
            disks=tuple(replace(d, path=tidy(d.path)) for d in self.disks),
            software=replace(
                self.software,
                cuda_toolkits=tuple(
                    replace(t, path=tidy(t.path) if t.path else None) for t in self.software.cuda_toolkits
                ),
                executables={k: replace(e, path=tidy(e.path)) for k, e in self.software.executables.items()},
            ),
        )

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        # Keep the keys in the documented order: schema and taken_at first.
        return {"schema": data.pop("schema"), "taken_at": data.pop("taken_at"), **data}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: object, source: str = "<snapshot>") -> Machine:
        """A snapshot, or the snapshot inside a report (``rigcheck.report/1`` has one under "machine")."""
        if not isinstance(data, Mapping):
            raise InputError(source, "not a RigCheck machine snapshot (expected a JSON object)")
        schema, where = data.get("schema"), ""
        if schema == REPORT_SCHEMA:
            data, where = data.get("machine"), "machine"
            if not isinstance(data, Mapping):
                raise InputError(source, "machine: expected the report's machine snapshot (an object)")
            schema = data.get("schema")
        if schema != SCHEMA:
            field_name = f"{where}.schema" if where else "schema"
            if schema is None:
                raise InputError(source, f'{field_name}: missing; expected "{SCHEMA}" or "{REPORT_SCHEMA}"')
            raise InputError(
                source,
                f'{field_name}: unsupported version {schema!r}; expected "{SCHEMA}" or "{REPORT_SCHEMA}"',
            )
        machine = decode(cls, data, source, where=where)
        assert isinstance(machine, Machine)
        check_machine(machine, source, where=where)
        return machine

    @classmethod
    def from_json(cls, text: str, source: str = "<snapshot>") -> Machine:
        return cls.from_dict(load_json(text, source), source)


# -- sanity bounds --------------------------------------------------------------------------------

KIB, MIB, GIB, TIB = 1024, 1024**2, 1024**3, 1024**4

#: (field, lowest, highest) for every physical quantity a snapshot holds; None is always allowed
#: for the optional ones. The lowest GPU figures are 0, not 1: a driver may report 0 for what it
#: cannot read, and whatever the probe writes must load again. docs/snapshot.md has the same table.
BOUNDS: dict[str, tuple[float, float]] = {
    "memory.total_bytes": (64 * MIB, 64 * TIB),
    "memory.available_bytes": (0, 64 * TIB),
    "memory.swap_total_bytes": (0, 1024 * TIB),
    "cpu.logical_cores": (1, 4096),
    "cpu.physical_cores": (1, 4096),
    "cpu.max_mhz": (0, 100_000),
    "gpus": (0, 64),
    "gpus[].memory_total_bytes": (0, 16 * TIB),
    "gpus[].memory_free_bytes": (0, 16 * TIB),
    "gpus[].index": (0, 4096),
    "gpus[].cores": (0, 10_000_000),
    "gpus[].power_limit_watts": (0, 10_000),
    "gpus[].power_default_limit_watts": (0, 10_000),
    "gpus[].power_max_limit_watts": (0, 10_000),
    "gpus[].pcie_gen": (0, 16),
    "gpus[].pcie_max_gen": (0, 16),
    "gpus[].pcie_width": (0, 64),
    "gpus[].pcie_max_width": (0, 64),
    "gpus[].nvlink_links": (0, 64),
    "disks[].total_bytes": (0, 1024**6),
    "disks[].free_bytes": (0, 1024**6),
    "psu.watts": (10, 100_000),
}
#: how many items a list or table of a snapshot may hold
MAX_ITEMS = {"disks": 1024, "notes": 1024, "cpu.flags": 4096, "software.cuda_toolkits": 256,
             "software.python_packages": 100_000, "software.executables": 1024}  # fmt: skip
#: the longest string a snapshot field may hold (paths are the longest legitimate values)
MAX_STRING = 4096


def _bound(name: str, value: float | None, source: str, where: str) -> None:
    if value is None:
        return
    low, high = BOUNDS[name]
    if not low <= value <= high:
        raise InputError(source, f"{where}: {value!r} is outside the sane range {low:g} to {high:g}")


def check_machine(machine: Machine, source: str, where: str = "", *, strings_checked: bool = False) -> None:
    """Refuse a machine no computer can be (docs/snapshot.md): an ``InputError`` naming the field.

    ``strings_checked``: the caller already knows every string is clean (its JSON text passed
    :func:`rigcheck.core.text.json_strings_clean`), so they are not walked again."""
    from rigcheck.core.text import text_problem

    def at(path: str) -> str:
        return f"{where}.{path}" if where else path

    _bound("memory.total_bytes", machine.memory.total_bytes, source, at("memory.total_bytes"))
    _bound("memory.available_bytes", machine.memory.available_bytes, source, at("memory.available_bytes"))
    _bound("memory.swap_total_bytes", machine.memory.swap_total_bytes, source, at("memory.swap_total_bytes"))
    available = machine.memory.available_bytes
    if available is not None and available > machine.memory.total_bytes:
        raise InputError(source, f"{at('memory.available_bytes')}: {available} is above total_bytes")
    cpu = machine.cpu
    _bound("cpu.logical_cores", cpu.logical_cores, source, at("cpu.logical_cores"))
    _bound("cpu.physical_cores", cpu.physical_cores, source, at("cpu.physical_cores"))
    _bound("cpu.max_mhz", cpu.max_mhz, source, at("cpu.max_mhz"))
    if cpu.physical_cores is not None and cpu.physical_cores > cpu.logical_cores:
        raise InputError(source, f"{at('cpu.physical_cores')}: {cpu.physical_cores} is above logical_cores")
    _bound("gpus", len(machine.gpus), source, at("gpus") + " (count)")
    for i, gpu in enumerate(machine.gpus):
        for name in ("memory_total_bytes", "memory_free_bytes", "index", "cores", "power_limit_watts",
                     "power_default_limit_watts", "power_max_limit_watts", "pcie_gen", "pcie_max_gen",
                     "pcie_width", "pcie_max_width", "nvlink_links"):  # fmt: skip
            _bound(f"gpus[].{name}", getattr(gpu, name), source, at(f"gpus[{i}].{name}"))
        total, free = gpu.memory_total_bytes, gpu.memory_free_bytes
        if total is not None and free is not None and free > total:
            raise InputError(
                source, f"{at(f'gpus[{i}].memory_free_bytes')}: {free} is above memory_total_bytes"
            )
    for i, disk in enumerate(machine.disks):
        _bound("disks[].total_bytes", disk.total_bytes, source, at(f"disks[{i}].total_bytes"))
        _bound("disks[].free_bytes", disk.free_bytes, source, at(f"disks[{i}].free_bytes"))
    _bound("psu.watts", machine.psu.watts, source, at("psu.watts"))
    sizes = {"disks": machine.disks, "notes": machine.notes, "cpu.flags": cpu.flags,
             "software.cuda_toolkits": machine.software.cuda_toolkits,
             "software.python_packages": machine.software.python_packages,
             "software.executables": machine.software.executables}  # fmt: skip
    for name, items in sizes.items():
        if len(items) > MAX_ITEMS[name]:
            raise InputError(source, f"{at(name)}: {len(items)} entries, more than {MAX_ITEMS[name]}")
    if strings_checked or strings_clean(machine, MAX_STRING, multiline=False):
        return
    for path, text in record_strings(machine):
        multiline = path.startswith("notes[") and path.endswith(".message")
        problem = text_problem(text, MAX_STRING, multiline=multiline)
        if problem:
            raise InputError(source, f"{at(path)}: {problem}")


def strings_clean(record: object, max_length: int, *, multiline: bool) -> bool:
    """Whether every string of ``record`` passes :func:`~rigcheck.core.text.text_problem` (``multiline``:
    line breaks allowed everywhere; else nowhere), told in one pass without field paths.

    The fast path of the loaders' string checks: when it says False, :func:`record_strings` walks
    again with paths to name the field (a fleet of 10,000 reports spent most of its check there).
    """
    from rigcheck.core.text import UNSAFE_KEEP_LINES_RE

    found: list[str] = []
    stack: list[object] = [record]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            found.extend(str(key) for key in value)
            stack.extend(value.values())
        elif isinstance(value, tuple | list):
            stack.extend(value)
        elif hasattr(value, "__dataclass_fields__"):
            stack.extend(getattr(value, n) for n in value.__dataclass_fields__)
    if found and max(map(len, found)) > max_length:
        return False
    joined = "".join(found)
    if UNSAFE_KEEP_LINES_RE.search(joined):
        return False
    return multiline or ("\n" not in joined and "\t" not in joined)


def record_strings(record: object) -> list[tuple[str, str]]:
    """Every string in a record (dataclasses, dicts, lists, tuples; keys too) with its field path."""
    found: list[tuple[str, str]] = []
    stack: list[tuple[object, str]] = [(record, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            found.append((path, value))
        elif isinstance(value, dict):
            for key, item in value.items():
                found.append((f"{path}.{key}", str(key)))
                stack.append((item, f"{path}.{key}"))
        elif isinstance(value, tuple | list):
            stack.extend((item, f"{path}[{i}]") for i, item in enumerate(value))
        elif hasattr(value, "__dataclass_fields__"):
            stack.extend(
                (getattr(value, n), f"{path}.{n}" if path else n) for n in value.__dataclass_fields__
            )
    return found


def now_iso() -> str:
    """The current time as ISO 8601 UTC with a ``Z``, to the second."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def load_machine(path: str | Path) -> Machine:
    """Read and validate a snapshot or report file; every problem is an ``InputError`` naming the file."""
    return Machine.from_json(read_text_file(path, "snapshot"), str(path))


def save_machine(machine: Machine, path: str | Path) -> None:
    """Write a snapshot atomically: a crash mid-write never leaves a half file in place."""
    # the same writer as the CLI's -o: symlinks, permissions, hard links and read-only files honoured
    write_output(path, machine.to_json() + "\n")
