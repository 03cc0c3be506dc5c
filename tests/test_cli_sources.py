"""Every price, spec and rate a user sees cites something they can open: never an internal path, a
../shared path or a search-index id, and a price always says when it was seen (brief: "Facts in catalog/
cite a source a user can follow … and a date where they age")."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

CATALOG = Path(__file__).resolve().parent.parent / "catalog"
#: what a user cannot follow: this project's internal documents and the research tools' index ids
INTERNAL = re.compile(r"(^|[\s(\"'])(\.\./)?shared/|seeds/\d|search-index|index id|file id \d|\bid \d{6,}")
PRICES = (("street_price_usd", "street_price_date", "street_price_source"),
          ("cloud_price_usd_hour", "cloud_price_date", "cloud_price_source"))  # fmt: skip


def _sources(value: object, key: str, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _sources(v, k, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _sources(v, key, f"{where}[{i}]")
    elif isinstance(value, str) and (key == "sources" or key.endswith("source")):
        yield where, value


def _tables() -> Iterator[tuple[str, dict[str, object]]]:
    for path in sorted(CATALOG.rglob("*.toml")):
        yield str(path.relative_to(CATALOG)), tomllib.loads(path.read_text(encoding="utf-8"))


def test_no_source_is_an_internal_path_or_an_index_id() -> None:
    bad = [
        f"{name}: {where} = {text[:80]!r}"
        for name, table in _tables()
        for where, text in _sources(table, "", "")
        if INTERNAL.search(text)
    ]
    assert not bad, "sources a user cannot follow:\n" + "\n".join(bad)


def test_every_price_has_a_date_and_a_dated_source() -> None:
    bad = []
    for name, table in _tables():
        for gpu in table.get("gpu", []):  # type: ignore[union-attr]
            for price, date, source in PRICES:
                if gpu.get(price) is None:
                    continue
                text = str(gpu.get(source) or gpu.get("source") or "")
                if not re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", str(gpu.get(date) or "")):
                    bad.append(f"{name}: {gpu['id']}: {price} has no {date}")
                if not text or "undated" in text.lower():
                    bad.append(f"{name}: {gpu['id']}: {price} cites no dated source ({text[:60]!r})")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize(
    "text",
    [
        "shared/seeds/002_ab477cb36c5a1177.txt (guide; undated)",
        "../shared/reference/compat-facts.md",
        "third-party notes (search-index file id 69555102599)",
    ],
)
def test_the_check_catches_what_it_names(text: str) -> None:
    assert INTERNAL.search(text)
    assert not INTERNAL.search("https://aimultiple.com/gpu-index (updated 2026-05-20)")
    assert not INTERNAL.search("pciutils/pciids/pci.ids@c1c12547d626ebf05fd0223144ad87fab5e95d06")
