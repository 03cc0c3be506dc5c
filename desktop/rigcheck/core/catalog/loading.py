"""Loading the catalog: the shipped files, the user overlay (bounded, bad files skipped), and the parsed-
TOML cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterable, Iterator
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from rigcheck.core.catalog.checks import _records, load_toml, parse_file
from rigcheck.core.catalog.common import OVERLAY_ENV
from rigcheck.core.catalog.table import _FIELDS, KINDS, Catalog
from rigcheck.core.errors import InputError


def default_overlay_dir() -> Path:
    """``$RIGCHECK_CATALOG_OVERLAY``, else ``catalog/`` in the platform's user data folder."""
    if os.environ.get(OVERLAY_ENV):
        return Path(os.environ[OVERLAY_ENV])
    from platformdirs import user_data_path

    return user_data_path("rigcheck", appauthor=False) / "catalog"


#: catalog files another module reads with a loader of its own (not catalog records):
#: engine_builds.toml by core/engine_builds.py
OWN_LOADER_FILES = frozenset({"engine_builds.toml"})


def _walk(folder: Traversable) -> Iterator[Traversable]:
    for child in sorted(folder.iterdir(), key=lambda t: t.name):
        if child.is_dir():
            yield from _walk(child)
        elif child.name.endswith(".toml") and child.name not in OWN_LOADER_FILES:
            yield child


def _shipped_files() -> Iterator[tuple[str, str]]:
    root = files("rigcheck.catalog")
    for item in _walk(root):
        yield f"catalog/{_relative(root, item)}", item.read_text(encoding="utf-8")


def _relative(root: Traversable, item: Traversable) -> str:
    text, base = str(item), str(root)
    return text[len(base) :].lstrip("/\\").replace("\\", "/") if text.startswith(base) else item.name


#: one overlay file: the whole shipped catalog is ~400 kB of TOML, so a megabyte is a big overlay
MAX_OVERLAY_FILE_BYTES = 1024 * 1024
#: all overlay files together (TOML is parsed in pure Python: ~0.1 s per MB on every command)
MAX_OVERLAY_BYTES = 4 * 1024 * 1024
#: entries of all overlay files together (the shipped catalog has about a thousand)
MAX_OVERLAY_ENTRIES = 5000


def _overlay_files(folder: Path, problems: list[str]) -> Iterator[tuple[str, str]]:
    try:
        paths = sorted(p for p in folder.rglob("*.toml") if p.is_file())
    except OSError as exc:
        problems.append(f"{folder}: cannot read the overlay folder ({exc.strerror or exc})")
        return
    total = 0
    for path in paths:
        if path.name in OWN_LOADER_FILES:  # read by a loader of its own, which never overlays it
            problems.append(
                f"{path}: {path.name} is not read from the overlay (RigCheck uses its shipped copy); "
                "file skipped"
            )
            continue
        try:
            with path.open("rb") as handle:
                raw = handle.read(MAX_OVERLAY_FILE_BYTES + 1)
            if len(raw) > MAX_OVERLAY_FILE_BYTES:
                problems.append(
                    f"{path}: larger than {MAX_OVERLAY_FILE_BYTES // 1024**2} MiB, more than an overlay "
                    "RigCheck reads; file skipped"
                )
                continue
            total += len(raw)
            if total > MAX_OVERLAY_BYTES:
                problems.append(
                    f"{path}: the overlay files pass {MAX_OVERLAY_BYTES // 1024**2} MiB in all; file skipped"
                )
                continue
            yield str(path), raw.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc}); file skipped")


def _merge(target: dict[str, dict[str, Any]], parsed: dict[str, list[Any]]) -> None:
    for kind, records in parsed.items():
        key = KINDS[kind][1]
        bucket = target.setdefault(kind, {})
        for record in records:
            bucket[key(record)] = record


def _parse_shipped(shipped: Iterable[tuple[str, str]]) -> dict[str, dict[str, Any]]:
    return _records_of_files((name, load_toml(name, text)) for name, text in shipped)


def _records_of_files(files: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Records of the shipped files' parsed TOML, checked; a bad file raises (a bug, or a bad cache)."""
    merged: dict[str, dict[str, Any]] = {}
    for name, data in files:
        parsed = _records(name, data)
        for kind, records in parsed.items():
            key = KINDS[kind][1]
            clash = next((key(r) for r in records if key(r) in merged.get(kind, {})), None)
            if clash is not None:
                raise InputError(name, f"{kind} {clash!r}: id already used in another catalog file")
        _merge(merged, parsed)
    return merged


def _apply_overlay(
    merged: dict[str, dict[str, Any]], overlay: Iterable[tuple[str, str]], problems: list[str]
) -> Catalog:
    merged = {kind: dict(records) for kind, records in merged.items()}  # the cached copy stays as it was
    entries = 0
    for name, text in overlay:
        try:
            parsed = parse_file(name, text)
        except InputError as exc:
            problems.append(f"{exc}; file skipped")
            continue
        entries += sum(len(records) for records in parsed.values())
        if entries > MAX_OVERLAY_ENTRIES:
            problems.append(
                f"{name}: the overlay files pass {MAX_OVERLAY_ENTRIES:,} entries in all; file skipped"
            )
            continue
        _merge(merged, parsed)
    return Catalog(
        **{_FIELDS[kind]: tuple(records.values()) for kind, records in merged.items()},
        problems=tuple(problems),
    )


def _build(
    shipped: Iterable[tuple[str, str]], overlay: Iterable[tuple[str, str]], problems: list[str]
) -> Catalog:
    return _apply_overlay(_parse_shipped(shipped), overlay, problems)


# Parsing ~400 kB of TOML in pure Python is most of a load (~45 ms of ~80 ms here); the shipped files'
# parsed TOML is therefore kept in the user's cache folder as JSON, keyed by a hash of those files' bytes,
# so any edit (or a new release) re-parses. The cache is data only (never pickle: whoever can write that
# folder must not be able to run code in RigCheck) and is not trusted: its content goes through the same
# record checks as a catalog file, and a cache that fails them, or cannot be read or written, is ignored.
_CACHE_FORMAT = 7  # 7: JSON of the parsed TOML, no longer a pickle of records
CACHE_ENV = "RIGCHECK_CACHE_DIR"
#: a cache file larger than this is not ours (the shipped catalog parses to ~0.4 MB of JSON)
_CACHE_MAX_BYTES = 64 * 1024 * 1024


def _cache_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    from platformdirs import user_cache_path

    return user_cache_path("rigcheck", appauthor=False)


def _read_cache(path: Path, names: list[str]) -> dict[str, dict[str, Any]] | None:
    """The records in a cache file, or None when it is missing, unreadable, or not what we wrote."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(_CACHE_MAX_BYTES + 1)
        if len(raw) > _CACHE_MAX_BYTES:
            return None
        data = json.loads(raw)
    except (OSError, ValueError, RecursionError):
        return None
    if not (isinstance(data, dict) and data.get("format") == _CACHE_FORMAT):
        return None
    entries = data.get("files")
    if not isinstance(entries, list):
        return None
    if [e[0] if isinstance(e, list) and e else None for e in entries] != names:
        return None
    if not all(len(e) == 2 and isinstance(e[1], dict) for e in entries):
        return None
    try:
        return _records_of_files((name, content) for name, content in entries)
    except InputError:
        return None  # tampered with, or written by a buggy version: parse the TOML again


def _shipped_records(use_cache: bool) -> dict[str, dict[str, Any]]:
    shipped = list(_shipped_files())
    if not use_cache:
        return _parse_shipped(shipped)
    digest = hashlib.sha256(f"{_CACHE_FORMAT} {sys.version_info[:2]}".encode())
    for name, text in shipped:
        digest.update(name.encode() + b"\0" + text.encode() + b"\0")
    path = _cache_dir() / f"catalog-{digest.hexdigest()[:24]}.json"
    cached = _read_cache(path, [name for name, _ in shipped])
    if cached is not None:
        return cached
    parsed = [(name, load_toml(name, text)) for name, text in shipped]
    merged = _records_of_files(parsed)  # a bad shipped file is a bug: let it raise
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        payload = {"format": _CACHE_FORMAT, "files": [[name, content] for name, content in parsed]}
        tmp.write_text(json.dumps(payload, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
        tmp.replace(path)
        for old in (*path.parent.glob("catalog-*.json"), *path.parent.glob("catalog-*.pickle")):
            if old != path:
                old.unlink(missing_ok=True)
    except (OSError, TypeError, ValueError):
        pass  # a read-only home or a full disk costs speed, never the catalog
    return merged


def load_catalog(overlay: Path | None = None, *, use_overlay: bool = True, use_cache: bool = True) -> Catalog:
    """The shipped catalog, with the user's overlay folder applied (``overlay`` or the default)."""
    problems: list[str] = []
    folder = overlay if overlay is not None else default_overlay_dir()
    overlay_files: Iterable[tuple[str, str]] = ()
    if use_overlay and folder.is_dir():
        overlay_files = list(_overlay_files(folder, problems))
    return _apply_overlay(_shipped_records(use_cache), overlay_files, problems)
