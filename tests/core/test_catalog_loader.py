"""The catalog loader's mechanics on files we write here: validation messages, overlay, matching."""

from __future__ import annotations

from pathlib import Path

import pytest

from rigcheck.core import catalog as catalog_module
from rigcheck.core.catalog import Catalog, GpuSpec, _build, load_catalog, parse_file
from rigcheck.core.errors import InputError
from rigcheck.core.machine import GPU

GOOD_GPU = """
[[gpu]]
id = "nvidia-geforce-rtx-4090"
vendor = "nvidia"
name = "GeForce RTX 4090"
match_names = ["NVIDIA GeForce RTX 4090"]
pci_ids = ["10de:2684"]
compute_capability = "8.9"
memory_gb = [24]
source = "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/rtx-4090/"
"""

GOOD_MODEL = """
[[model]]
id = "tiny-llama"
name = "Tiny"
family = "llama"
hf_id = "org/tiny"
source = "https://huggingface.co/org/tiny/blob/main/config.json"
[model.config]
model_type = "llama"
hidden_size = 64
num_hidden_layers = 2
num_attention_heads = 4
vocab_size = 1000
rope_scaling = { rope_type = "llama3", factor = 8.0 }
"""


def problem(name: str, text: str) -> str:
    with pytest.raises(InputError) as info:
        parse_file(name, text)
    message = str(info.value)
    assert message.startswith(f"{name}: ")
    assert "\n" not in message
    return message


def test_good_entries_parse_into_records() -> None:
    parsed = parse_file("gpus.toml", GOOD_GPU + GOOD_MODEL)
    gpu = parsed["gpu"][0]
    assert isinstance(gpu, GpuSpec)
    assert gpu.memory_gb == (24.0,)
    assert gpu.confidence == "primary"
    model = parsed["model"][0]
    assert model.model_type == "llama"
    assert model.config["rope_scaling"] == {"rope_type": "llama3", "factor": 8.0}


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda t: t.replace("memory_gb = [24]", 'memory_gb = ["24"]'),
            "gpu 'nvidia-geforce-rtx-4090': memory_gb[0]: expected a number",
        ),
        (lambda t: t.replace("memory_gb = [24]", "memory_gb = [-24]"), "memory_gb[0]: must not be negative"),
        (
            lambda t: t.replace('compute_capability = "8.9"', 'compute_capability = "sm_89"'),
            "compute_capability: 'sm_89' is not like '8.9'",
        ),
        (lambda t: t.replace('compute_capability = "8.9"', "vram_gb = 24"), "vram_gb: unknown field"),
        (lambda t: t.replace('vendor = "nvidia"', 'vendor = "3dfx"'), "vendor: expected one of"),
        (
            lambda t: t.replace('pci_ids = ["10de:2684"]', 'pci_ids = ["0x2684"]'),
            "pci_ids: '0x2684' is not like",
        ),
        (lambda t: t.replace('id = "nvidia-geforce-rtx-4090"', 'id = "RTX 4090"'), "is not a lower-case id"),
        (
            lambda t: t.replace(
                'source = "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/rtx-4090/"', ""
            ),
            "source: required field missing",
        ),
        (
            lambda t: t.replace(
                'source = "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/rtx-4090/"',
                'source = " "',
            ),
            "source: must name",
        ),
        (lambda t: t + t, "gpu 'nvidia-geforce-rtx-4090': duplicate id in this file"),
        (lambda t: t.replace("[[gpu]]", "[[gpus]]"), "unknown table [[gpus]]"),
        (lambda t: t.replace("[[gpu]]", "[gpu]"), "gpu: expected an array of tables"),
        (lambda t: t.replace('name = "GeForce RTX 4090"', 'name = "GeForce'), "not valid TOML"),
        (
            lambda t: t + 'field_confidence = { vram = "uncertain" }\n',
            "field_confidence: 'vram' is not a GPU field",
        ),
        (
            lambda t: t + 'field_confidence = { bandwidth_gbs = "shaky" }\n',
            "field_confidence.bandwidth_gbs: expected one of",
        ),
    ],
)
def test_bad_gpu_entries_name_file_entry_and_field(edit: object, expected: str) -> None:
    assert expected in problem("catalog/gpus/x.toml", edit(GOOD_GPU))  # type: ignore[operator]


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda t: t.replace('model_type = "llama"\n', ""),
            "model 'tiny-llama': config.model_type: required",
        ),
        (
            lambda t: t.replace("hidden_size = 64", "hidden_size = 0"),
            "config.hidden_size: required, a whole number above 0",
        ),
        (lambda t: t.replace("vocab_size = 1000", 'vocab_size = "1000"'), "config.vocab_size"),
    ],
)
def test_bad_model_entries(edit: object, expected: str) -> None:
    assert expected in problem("catalog/models/x.toml", edit(GOOD_MODEL))  # type: ignore[operator]


def test_entry_without_id_is_named_by_position() -> None:
    assert "gpu #1: id: required field missing" in problem(
        "x.toml", GOOD_GPU.replace('id = "nvidia-geforce-rtx-4090"', "")
    )


def test_same_id_in_two_shipped_files_is_refused() -> None:
    with pytest.raises(InputError, match="id already used in another catalog file"):
        _build([("a.toml", GOOD_GPU), ("b.toml", GOOD_GPU)], [], [])


def test_overlay_replaces_adds_and_skips_bad_files(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text(
        GOOD_GPU.replace("memory_gb = [24]", "memory_gb = [48]")  # my modded 4090
        + GOOD_GPU.replace("rtx-4090", "rtx-4090-d").replace('pci_ids = ["10de:2684"]', "")
    )
    (tmp_path / "broken.toml").write_text(GOOD_GPU.replace("memory_gb = [24]", 'memory_gb = "lots"'))
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "garbled.toml").write_bytes(b"\xff\xfe not text")
    problems: list[str] = []
    overlay = catalog_module._overlay_files(tmp_path, problems)
    catalog = _build([("catalog/gpus/nvidia.toml", GOOD_GPU)], overlay, problems)
    assert catalog.gpu("nvidia-geforce-rtx-4090").memory_gb == (48.0,)  # type: ignore[union-attr]
    assert catalog.gpu("nvidia-geforce-rtx-4090-d") is not None
    assert len(catalog.problems) == 2
    assert any(
        p.startswith(f"{tmp_path / 'broken.toml'}: gpu 'nvidia-geforce-rtx-4090': memory_gb: expected a list")
        and p.endswith("file skipped")
        for p in catalog.problems
    )
    assert any("garbled.toml: cannot read" in p for p in catalog.problems)


def test_overlay_folder_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RIGCHECK_CATALOG_OVERLAY", str(tmp_path))
    assert catalog_module.default_overlay_dir() == tmp_path
    (tmp_path / "extra.toml").write_text(GOOD_MODEL)
    catalog = load_catalog()
    assert catalog.model("tiny-llama") is not None
    assert catalog.problems == ()


def test_missing_overlay_folder_is_fine(tmp_path: Path) -> None:
    catalog = load_catalog(tmp_path / "does-not-exist")
    assert catalog.problems == ()


def spec(**kw: object) -> GpuSpec:
    base: dict[str, object] = {"id": "x", "vendor": "nvidia", "name": "X", "source": "s"}
    return GpuSpec(**(base | kw))  # type: ignore[arg-type]


def test_match_gpu_by_name_then_unique_pci_id() -> None:
    catalog = Catalog(
        gpus=(
            spec(
                id="a",
                name="GeForce RTX 4090",
                match_names=("NVIDIA GeForce RTX 4090",),
                pci_ids=("10de:2684",),
            ),
            spec(id="b", name="GeForce RTX 3080", pci_ids=("10de:2206",)),
            spec(id="c", name="GeForce RTX 3080 12GB", pci_ids=("10de:2206",)),
            spec(id="d", vendor="amd", name="Radeon RX 7900 XTX", match_names=("AMD Radeon RX 7900 XTX",)),
        )
    )

    def match(name: str, vendor: str = "nvidia", pci: str | None = None) -> str | None:
        found = catalog.match_gpu(GPU(vendor=vendor, name=name, memory_total_bytes=None, pci_id=pci))  # type: ignore[arg-type]
        return found.id if found else None

    assert match("NVIDIA GeForce RTX 4090") == "a"
    assert match("nvidia geforce  rtx 4090") == "a"  # case and spacing
    assert match("NVIDIA GeForce RTX 3080") == "b"  # the name without prefix
    assert match("Graphics Device", pci="10de:2684") == "a"  # unnamed, unique PCI id
    assert match("Graphics Device", pci="10de:2206") is None  # two cards share the die: no guess
    assert match("AMD Radeon RX 7900 XTX", vendor="amd") == "d"
    assert match("AMD Radeon RX 7900 XTX") is None  # vendor must agree


def test_cache_is_used_and_equals_a_fresh_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RIGCHECK_CACHE_DIR", str(tmp_path))
    fresh = load_catalog(use_overlay=False, use_cache=False)
    first = load_catalog(use_overlay=False)
    assert len(list(tmp_path.glob("catalog-*.json"))) == 1
    assert not list(tmp_path.glob("catalog-*.pickle"))

    def must_not_parse(_files: object) -> None:
        raise AssertionError("the cache was not used")

    monkeypatch.setattr("rigcheck.core.catalog.loading._parse_shipped", must_not_parse)
    cached = load_catalog(use_overlay=False)
    assert cached == first == fresh
    assert cached.gpus and cached.models


def test_corrupt_or_unwritable_cache_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RIGCHECK_CACHE_DIR", str(tmp_path))
    load_catalog(use_overlay=False)
    (cache_file,) = tmp_path.glob("catalog-*.json")
    cache_file.write_bytes(b"not JSON")
    assert load_catalog(use_overlay=False).gpus
    blocker = tmp_path / "file-not-folder"
    blocker.write_text("")
    monkeypatch.setenv("RIGCHECK_CACHE_DIR", str(blocker / "cache"))  # cannot be created
    assert load_catalog(use_overlay=False).gpus


def test_overlay_does_not_change_the_cached_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RIGCHECK_CACHE_DIR", str(tmp_path / "cache"))
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "a.toml").write_text(GOOD_GPU.replace("memory_gb = [24]", "memory_gb = [99]"))
    assert load_catalog(overlay).gpu("nvidia-geforce-rtx-4090").memory_gb == (99.0,)  # type: ignore[union-attr]
    assert load_catalog(use_overlay=False).gpu("nvidia-geforce-rtx-4090").memory_gb == (24.0,)  # type: ignore[union-attr]


class _RunsCode:
    """Unpickling this creates a file: what a tampered pickle cache could do with every command."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (Path.touch, (self.marker,))


def test_a_tampered_cache_never_runs_code_and_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17 #6: whoever can write the cache folder must not run code in rigcheck."""
    import json
    import pickle

    cache = tmp_path / "cache"
    monkeypatch.setenv("RIGCHECK_CACHE_DIR", str(cache))
    fresh = load_catalog(use_overlay=False, use_cache=False)
    load_catalog(use_overlay=False)
    (cache_file,) = [p for p in cache.iterdir() if p.name.startswith("catalog-")]
    marker = tmp_path / "pwned"
    payload = pickle.dumps(_RunsCode(marker))
    cache_file.write_bytes(payload)
    (cache / (cache_file.stem + ".pickle")).write_bytes(payload)
    assert load_catalog(use_overlay=False) == fresh
    assert not marker.exists()

    # Valid JSON whose data breaks the record checks is refused the same way and rewritten.
    cached = json.loads(cache_file.read_text()) if cache_file.suffix == ".json" else None
    assert cached is not None, "the cache must be a data-only JSON file"
    _name, content = cached["files"][0]
    first_kind = next(iter(content))
    content[first_kind][0]["source"] = {"not": "a string"}
    cache_file.write_text(json.dumps(cached))
    assert load_catalog(use_overlay=False) == fresh
    assert json.loads(cache_file.read_text())["files"][0][1][first_kind][0]["source"] != {"not": "a string"}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[[gpu]]\nid = 1" + "0" * 5000, "digits"),
        ("x = " + "[" * 5000 + "]" * 5000, "nested"),
        ("x = " + "{a = " * 200 + "1" + "}" * 200, "nested"),
    ],
)
def test_hostile_overlay_file_is_skipped_not_fatal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, problem: str
) -> None:
    """Issue 17 #7: one bad overlay file (deep nesting, 5,000-digit integers) never stops the app."""
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "bad.toml").write_text(text)
    catalog = load_catalog(overlay)
    assert catalog.gpus
    (line,) = catalog.problems
    assert str(overlay / "bad.toml") in line and problem in line and "\n" not in line
