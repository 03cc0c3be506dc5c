"""Redaction that redacts: identifiers removed from every string of a snapshot or report.

What identifies a machine or its owner: GPU UUIDs (``GPU-…``, ``MIG-…``, ``MIG-GPU-…``), GPU serial
numbers, PCI bus ids, the host name (in any case, also inside the kernel and OS-version strings) and
home-folder paths (``/home/ana``, ``/Users/ana``, ``C:\\Users\\ana`` in any case, ``/root``). The
fields that hold them are emptied (:meth:`Machine.redacted`), and then every other string (notes, GPU
``source``, findings, paths) is scrubbed: the values the machine itself records are replaced wherever
they appear, and the patterns catch the ones it does not record (another GPU's UUID in a note).
Enumerations (vendor, OS, note level) are left alone: no identifier can be spelled as one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from rigcheck.core.machine import Machine

#: what a redacted value is replaced with inside free text
REDACTED = "(redacted)"

_UUID = re.compile(
    r"(?<!\w)(?:MIG-)?(?:GPU-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?!\w)",
    re.IGNORECASE,
)
_PCI_BUS_ID = re.compile(r"(?<![\w:])[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7](?![\w:])", re.IGNORECASE)
#: /home/ana, /Users/ana, C:\Users\ana (the user's name is the part that goes) and /root
_USER_HOME = re.compile(
    r"(?:/home/|/Users/|[a-z]:[\\/]+Users[\\/]+)[^/\\\s\"'<>|]+|(?<![\w.~/-])/root(?![\w.-])",
    re.IGNORECASE,
)
#: dictionary keys whose values are enumerations or ids RigCheck wrote, never free text
_ENUM_KEYS = frozenset(
    {"schema", "vendor", "os", "level", "probe", "bandwidth_source", "driver_model", "purpose", "verdict"}
)
#: known values shorter than this would blank out unrelated text; the patterns still catch the rest
_MIN_KNOWN = 3


def secrets_of(machine: Machine) -> list[str]:
    """The identifying values the machine records, longest first (a host's FQDN before its short name)."""
    found: set[str] = set()
    hostname = machine.host.hostname
    if hostname:
        found.update((hostname, hostname.split(".", 1)[0]))
    for gpu in machine.gpus:
        found.update(v for v in (gpu.uuid, gpu.serial) if v)
        if gpu.pci_bus_id:
            found.add(gpu.pci_bus_id)
            found.add(gpu.pci_bus_id.split(":", 1)[1] if gpu.pci_bus_id.count(":") == 2 else gpu.pci_bus_id)
    home = str(Path.home())
    if home not in ("", "/"):
        found.add(home)
    return sorted((s for s in found if len(s) >= _MIN_KNOWN), key=len, reverse=True)


def known_pattern(known: Iterable[str]) -> re.Pattern[str] | None:
    """One case-insensitive pattern for ``known`` values, each as a whole word; None for none.

    A hyphen ends a word here: a host name is often one part of a hyphenated string (a custom
    kernel's ``6.8.0-labnode7-custom``, ``labnode7-gpu0``), and it survived there before."""
    values = sorted({v for v in known if len(v) >= _MIN_KNOWN}, key=len, reverse=True)
    if not values:
        return None
    alternatives = "|".join(re.escape(value) for value in values)
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


def redact_text(text: str, known: Sequence[str] | re.Pattern[str] | None = ()) -> str:
    """``text`` without UUIDs, PCI bus ids, user home folders (as ``~``) and the ``known`` values."""
    pattern = known if isinstance(known, re.Pattern) or known is None else known_pattern(known)
    if pattern is not None:
        text = pattern.sub(REDACTED, text)
    text = _UUID.sub(REDACTED, text)
    text = _PCI_BUS_ID.sub(REDACTED, text)
    return _USER_HOME.sub("~", text)


def scrub(value: Any, known: re.Pattern[str] | None, key: str = "") -> Any:
    """Every string in ``value`` (a dict of lists of …, keys too) through :func:`redact_text`."""
    if isinstance(value, str):
        return value if key in _ENUM_KEYS else redact_text(value, known)
    if isinstance(value, list | tuple):  # asdict keeps tuples
        return [scrub(v, known, key) for v in value]
    if isinstance(value, dict):
        return {scrub(k, known): scrub(v, known, k if isinstance(k, str) else "") for k, v in value.items()}
    return value


def redact_machine(machine: Machine, source: str = "<redacted snapshot>") -> Machine:
    """A copy for sharing: the identifying fields emptied, and every string of the rest scrubbed."""
    known = known_pattern(secrets_of(machine))
    return Machine.from_dict(scrub(machine.redacted().to_dict(), known), source)
