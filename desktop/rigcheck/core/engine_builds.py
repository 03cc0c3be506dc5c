"""An engine's kernel milestones (``catalog/engine_builds.toml``) and the build a user names.

A milestone is a change in an engine's source after which the same model on the same hardware runs at
another speed: the first build with it (a llama.cpp release tag ``bNNNN``), what it changed (backends,
model types, layer kinds, mixture-of-experts models only, GPU vendors and architectures) and, where the
PR's own before/after table measured it, the ratio after / before for decode and prompt processing. The
speed step that applies them is ``core/estimate/speed/engine_build.py``; this module only reads and checks
the data, with errors that name the file, the entry and the field.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from rigcheck.core.errors import InputError

FILE = "catalog/engine_builds.toml"
#: the words that mean "a build nobody named": the estimate then assumes a current one
UNKNOWN_BUILDS = frozenset({"", "unknown", "current", "latest"})
#: ASCII digits only: `\d` would read Arabic-Indic or full-width digits as a build number
_BUILD = re.compile(r"b?([0-9]{1,6})")


@dataclass(frozen=True)
class Milestone:
    id: str
    engine: str
    pr: int
    url: str
    #: the PR's title as published ("" where the stored copy does not show it)
    title: str
    #: the first build with the change (llama.cpp release tag b<first_build>)
    first_build: int
    build_source: str
    #: backends it changed; empty: every backend (a change to the compute graph)
    backends: tuple[str, ...]
    #: model types (ArchConfig.model_type) and layer kinds (ArchConfig.layer_kinds) it changed; both empty:
    #: every model
    model_types: tuple[str, ...]
    layer_kinds: tuple[str, ...]
    #: a kernel only a mixture-of-experts graph runs (routing, expert mat-vecs): dense models keep their speed
    moe_only: bool
    #: GPU vendors and architectures (catalog ``architecture``, lower case, spaces dropped); empty: any
    vendors: tuple[str, ...]
    architectures: tuple[str, ...]
    #: tokens/s after ÷ before, as the PR's own table measured it; None: no published figure
    decode_ratio: float | None
    prefill_ratio: float | None
    ratio_source: str
    #: another estimator step that models the change already (its ratio is then not applied again)
    modeled_by: str
    notes: str


_TEXT = ("id", "engine", "url", "build_source", "ratio_source")
_OPTIONAL_TEXT = ("title", "modeled_by", "notes")
_LISTS = ("backends", "model_types", "layer_kinds", "vendors", "architectures")
_RATIOS = ("decode_ratio", "prefill_ratio")
_FLAGS = ("moe_only",)
_KNOWN = frozenset((*_TEXT, *_OPTIONAL_TEXT, *_LISTS, *_RATIOS, *_FLAGS, "pr", "first_build"))


def parse_build(text: str | None) -> int | None:
    """The build number of ``b6096`` or ``6096``; None for an unknown build ("", "unknown", "current").
    Anything else raises ValueError with a sentence the CLI prints."""
    words = (text or "").strip().lower()
    if words in UNKNOWN_BUILDS:
        return None
    found = _BUILD.fullmatch(words)
    if found is None or int(found.group(1)) == 0:
        raise ValueError(f"{text!r} is not a llama.cpp build: give its release tag, e.g. b6096, or 'unknown'")
    return int(found.group(1))


def _entry(raw: object, position: int, name: str) -> Milestone:
    if not isinstance(raw, dict):
        raise InputError(name, f"milestone {position}: expected a table")
    label = f"milestone {raw.get('id', position)!r}"

    def bad(field: str, what: str) -> InputError:
        return InputError(name, f"{label}: {field}: {what}")

    unknown = sorted(set(raw) - _KNOWN)
    if unknown:
        raise bad(unknown[0], "unknown field")
    values: dict[str, Any] = {}
    for field in _TEXT:
        value = raw.get(field)
        if not isinstance(value, str) or not value.strip():
            raise bad(field, "required, a non-empty string")
        values[field] = value
    for field in _OPTIONAL_TEXT:
        value = raw.get(field, "")
        if not isinstance(value, str):
            raise bad(field, "a string")
        values[field] = value
    for field in ("pr", "first_build"):
        value = raw.get(field)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise bad(field, "required, a whole number above 0")
        values[field] = value
    for field in _LISTS:
        value = raw.get(field, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise bad(field, "a list of non-empty strings")
        values[field] = tuple(value)
    for field in _FLAGS:
        value = raw.get(field, False)
        if not isinstance(value, bool):
            raise bad(field, "true or false")
        values[field] = value
    for field in _RATIOS:
        value = raw.get(field)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or value <= 0
        ):
            raise bad(field, "a number above 0 (after ÷ before), or left out")
        values[field] = float(value) if value is not None else None
    if not values["url"].startswith("https://"):
        raise bad("url", "an https:// address a reader can open")
    return Milestone(**values)


def parse_milestones(name: str, text: str) -> tuple[Milestone, ...]:
    """The milestones of one TOML text, checked; InputError names the file, the entry and the field."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(name, f"not valid TOML ({exc})") from None
    unknown = sorted(set(data) - {"milestone"})
    if unknown:
        raise InputError(name, f"unknown table [[{unknown[0]}]] (known: milestone)")
    entries = data.get("milestone", [])
    if not isinstance(entries, list):
        raise InputError(name, "milestone: expected an array of tables, written [[milestone]]")
    found = tuple(_entry(raw, i, name) for i, raw in enumerate(entries, 1))
    ids = [m.id for m in found]
    duplicate = next((i for i in ids if ids.count(i) > 1), None)
    if duplicate is not None:
        raise InputError(name, f"milestone {duplicate!r}: duplicate id")
    return found


@cache
def load_milestones() -> tuple[Milestone, ...]:
    """The shipped milestones (``catalog/engine_builds.toml``), read once."""
    text = files("rigcheck.catalog").joinpath("engine_builds.toml").read_text(encoding="utf-8")
    return parse_milestones(FILE, text)
