"""Every compatibility row quotes its source, and the loader refuses a row that lacks what the rules need."""

from __future__ import annotations

import re
from typing import Any

import pytest

from rigcheck.core.catalog import COMPAT_KINDS, KINDS, load_catalog, parse_file
from rigcheck.core.errors import InputError

_FIELD = {
    "cuda_release": "cuda_releases", "cuda_major": "cuda_majors", "arch": "archs",
    "torch_release": "torch_releases", "torch_variant": "torch_variants", "rocm_release": "rocm_releases",
    "framework": "frameworks", "gfx_override": "gfx_overrides", "driver_branch": "driver_branches",
    "wheel": "wheels",
}  # fmt: skip
FOLLOWABLE = re.compile(r"https?://\S+|[\w.-]+/[\w.-]+/\S+@[\w.-]+")


def _rows() -> list[tuple[str, Any]]:
    catalog = load_catalog(use_overlay=False, use_cache=False)
    return [(kind, row) for kind in sorted(COMPAT_KINDS) for row in getattr(catalog, _FIELD[kind])]


ROWS = _rows()


def test_every_compat_kind_is_covered() -> None:
    assert set(_FIELD) == set(COMPAT_KINDS) <= set(KINDS)
    assert {kind for kind, _ in ROWS} == set(COMPAT_KINDS)


@pytest.mark.parametrize(("kind", "row"), ROWS, ids=[f"{k}:{KINDS[k][1](r)}" for k, r in ROWS])
def test_row_quotes_a_followable_source(kind: str, row: Any) -> None:
    quote = row.quote
    assert quote and quote == quote.strip() and len(quote) <= 300, row
    # a fragment cut out of a sentence starts with a letter, digit, quote mark, '#', '|' or '-'
    assert re.match(r"[\w\"'#|\-<>(]", quote), f"{kind} {quote!r} looks like a cut-off fragment"
    for source in (row.source, *row.sources):
        assert FOLLOWABLE.fullmatch(source.strip()), source
        assert "search-index" not in source and "file id" not in source
    assert "search-index" not in (row.notes or "")


def _torch(**fields: str) -> str:
    body = "\n".join(f"{k} = {v}" for k, v in fields.items())
    return f'[[torch_release]]\nversion = "2.16"\n{body}\nsource = "https://pypi.org/project/torch/"\n'


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (_torch(quote='"x"', variants='["cpu"]', latest_patch='"2.16.0"'), "released"),
        (_torch(quote='"x"', variants='["cpu"]', released='"2026-12-01"'), "latest_patch"),
        (_torch(quote='"x"', released='"2026-12-01"', latest_patch='"2.16.0"'), "variants"),
        (_torch(variants='["cpu"]', released='"2026-12-01"', latest_patch='"2.16.0"'), "quote"),
        (
            _torch(quote='"x"', variants='["cpu"]', released='"2026-12-01"', latest_patch='"2.15.1"'),
            "latest_patch",
        ),
        (
            '[[framework]]\nid = "x"\nframework = "x"\nquote = "q"\nsource = "search-index file id 123"\n',
            "source",
        ),
        (
            '[[driver_branch]]\nbranch = "999"\ndesignation = "ltsb"\nquote = "q"\neol = "June 2030"\n'
            'source = "https://docs.nvidia.com/x"\n',
            "eol",
        ),
    ],
)
def test_loader_refuses_incomplete_rows(text: str, problem: str) -> None:
    with pytest.raises(InputError, match=problem):
        parse_file("overlay.toml", text)


def test_a_prerelease_needs_no_date() -> None:
    parsed = parse_file("overlay.toml", _torch(quote='"announced"', prerelease="true"))
    assert parsed["torch_release"][0].prerelease


def test_newest_pytorch_release_is_not_skipped() -> None:
    """Every released series has what the recommendation needs, so the newest one is always considered."""
    catalog = load_catalog(use_overlay=False)
    released = [r for r in catalog.torch_releases if not r.prerelease]
    assert all(r.latest_patch and r.released and r.variants for r in released)
    assert (
        max(released, key=lambda r: tuple(int(p) for p in r.version.split(".")[:2])).latest_patch == "2.15.0"
    )
