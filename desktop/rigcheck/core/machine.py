"""The Machine snapshot: what a computer has, as frozen records that round-trip through JSON.

Schema id ``rigcheck.machine/1``. Units are bytes, watts and MHz; versions are strings; a value
nobody could read is ``None`` (``null`` in JSON) and a note in ``Machine.notes`` says why.

Loading validates: required are ``schema`` (exactly this version), ``cpu.logical_cores``,
``memory.total_bytes`` and ``gpus`` with each GPU's ``vendor``, ``name`` and ``memory_total_bytes``
(the key must be there; its value may be null, for unified memory or when unreadable). Everything else
may be missing and then means unknown. Wrong types, negative sizes, unknown schema versions and
files that are not JSON are refused with an ``InputError`` naming the file and the field.
"""

from __future__ import annotations

import json
import math
import types
import typing
from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args, get_origin

from rigcheck.core.errors import InputError

SCHEMA = "rigcheck.machine/1"

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
        if not isinstance(data, Mapping):
            raise InputError(source, "not a RigCheck machine snapshot (expected a JSON object)")
        schema = data.get("schema")
        if schema != SCHEMA:
            if schema is None:
                raise InputError(source, f'schema: missing; expected "{SCHEMA}"')
            raise InputError(source, f'schema: unsupported version {schema!r}; expected "{SCHEMA}"')
        machine = _decode(cls, data, "", source)
        assert isinstance(machine, Machine)
        return machine

    @classmethod
    def from_json(cls, text: str, source: str = "<snapshot>") -> Machine:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(
                source, f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
            ) from None
        return cls.from_dict(data, source)


def now_iso() -> str:
    """The current time as ISO 8601 UTC with a ``Z``, to the second."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def load_machine(path: str | Path) -> Machine:
    """Read and validate a snapshot file; every problem is an ``InputError`` naming the file."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(str(path), "no such file") from None
    except IsADirectoryError:
        raise InputError(str(path), "is a folder, not a snapshot file") from None
    except OSError as exc:
        raise InputError(str(path), f"cannot read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(str(path), "not a text file (invalid UTF-8)") from None
    if not text.strip():
        raise InputError(str(path), "empty file")
    return Machine.from_json(text, str(path))


def save_machine(machine: Machine, path: str | Path) -> None:
    """Write a snapshot atomically: a crash mid-write never leaves a half file in place."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(machine.to_json() + "\n", encoding="utf-8")
    tmp.replace(path)


# -- validation ---------------------------------------------------------------------------------

T = TypeVar("T")

#: numeric fields that may never be negative, by name pattern
_NON_NEGATIVE_SUFFIXES = ("_bytes", "_watts", "_mhz", "_cores", "_links", "_gen", "_width", "watts", "cores")


def _describe(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {shown!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _decode(tp: Any, value: object, where: str, source: str) -> Any:
    """Check ``value`` against the type annotation ``tp`` and build the frozen record."""

    def fail(expected: str) -> typing.NoReturn:
        raise InputError(source, f"{where or 'top level'}: expected {expected}, got {_describe(value)}")

    origin = get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = get_args(tp)
        if value is None:
            if type(None) in args:
                return None
            fail(_expected_name(tp))
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1:
            return _decode(inner[0], value, where, source)
        fail(_expected_name(tp))
    if origin is Literal:
        if value not in get_args(tp):
            fail("one of " + ", ".join(repr(a) for a in get_args(tp)))
        return value
    if origin is tuple:
        if not isinstance(value, list):
            fail("a list")
        (item_tp, _ellipsis) = get_args(tp)
        return tuple(_decode(item_tp, item, f"{where}[{i}]", source) for i, item in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            fail("an object")
        _key_tp, item_tp = get_args(tp)
        return {str(k): _decode(item_tp, v, f"{where}.{k}", source) for k, v in value.items()}
    if is_dataclass(tp):
        if not isinstance(value, dict):
            fail("an object")
        return _decode_record(tp, value, where, source)
    if tp is bool:
        if not isinstance(value, bool):
            fail("true or false")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            fail("a whole number")
        _check_sign(value, where, source)
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            fail("a number")
        if not math.isfinite(value):
            fail("a finite number")
        _check_sign(value, where, source)
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            fail("a string")
        return value
    raise TypeError(f"machine.py cannot decode {tp!r}")  # a programming error, not bad input


def _check_sign(value: float, where: str, source: str) -> None:
    leaf = where.rsplit(".", 1)[-1]
    if value < 0 and leaf.endswith(_NON_NEGATIVE_SUFFIXES):
        raise InputError(source, f"{where}: must not be negative, got {value!r}")


def _decode_record(cls: Any, data: dict[str, Any], where: str, source: str) -> Any:
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        path = f"{where}.{f.name}" if where else f.name
        if f.name not in data:
            if f.default is MISSING and f.default_factory is MISSING:
                raise InputError(source, f"{path}: required field missing")
            continue
        kwargs[f.name] = _decode(hints[f.name], data[f.name], path, source)
    # Unknown keys are ignored: a newer RigCheck may add fields within the same schema version.
    return cls(**kwargs)


_FRIENDLY = {int: "a whole number", float: "a number", bool: "true or false", str: "a string"}


def _expected_name(tp: Any) -> str:
    names = []
    for arg in get_args(tp):
        if arg is type(None):
            names.append("null")
        elif get_origin(arg) is Literal:
            names.append("one of " + ", ".join(repr(a) for a in get_args(arg)))
        else:
            names.append(_FRIENDLY.get(arg, getattr(arg, "__name__", str(arg))))
    return " or ".join(names)
