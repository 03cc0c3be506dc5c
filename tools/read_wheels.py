"""Maintainer script: read the packages' own metadata from PyPI and record it in catalog/compat/wheels.toml.

For each package release the compatibility checks propose (every [[framework]] ``latest``, every catalogued
torch ``latest_patch`` from 2.12 on, the newest release of :data:`NEWEST`, plus ``--also NAME==VERSION``), it
reads:

- the release's files from PyPI's simple index (PEP 691 JSON): which wheels exist, so which platforms pip can
  install it on (manylinux level and architecture, Windows, macOS) and whether there is only a source archive;
- one wheel's ``METADATA`` (PEP 658 when PyPI serves it, else the zip's central directory and that one member
  by HTTP range requests, a few hundred kilobytes instead of the whole wheel): ``Requires-Python``, the torch
  it requires, and, for torch itself, the CUDA toolkit its Linux wheel depends on and on which OS.

The table it writes carries the day it was read; ``tests/core/test_compat_pins.py`` checks every command the
checks propose against it, so a pin pip could not resolve cannot ship. Run it from the repository root:

    python tools/read_wheels.py            # read and rewrite catalog/compat/wheels.toml
    python tools/read_wheels.py --check    # read and print, write nothing

It needs network access to pypi.org and files.pythonhosted.org, nothing else; it imports nothing from
RigCheck but the catalog loader (to list what to read).
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import urllib.request
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "catalog" / "compat" / "wheels.toml"
SIMPLE = "https://pypi.org/simple/{name}/"
PROJECT = "https://pypi.org/project/{name}/{version}/"
#: the Python distribution each [[framework]] id installs (rigcheck.core.compat._rules.PACKAGES, by hand so
#: this script runs without the package installed)
DISTRIBUTIONS = {
    "flash-attn-2": "flash-attn", "xformers": "xformers", "bitsandbytes": "bitsandbytes", "vllm": "vllm",
    "sglang": "sglang", "tensorrt-llm": "tensorrt-llm", "exllamav2": "exllamav2", "deepspeed": "deepspeed",
    "unsloth": "unsloth", "transformer-engine": "transformer-engine", "llama.cpp": "llama-cpp-python",
    "mlx": "mlx",
}  # fmt: skip
#: packages the checks judge without a catalogued ``latest``: their newest PyPI release is read
NEWEST = (
    "bitsandbytes",
    "deepspeed",
    "flash-attn",
    "transformer-engine",
    "exllamav2",
    "mlx",
    "llama-cpp-python",
)
_WHEEL = re.compile(
    r"^(?P<name>.+?)-(?P<version>[^-]+)(-\d[^-]*)?-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>[^-]+)\.whl$"
)
_TOOLKIT = re.compile(r"^(cuda-toolkit|nvidia-cuda-runtime(-cu\d+)?)\b.*?==\s*(?P<v>[\d.]+)(?P<rest>.*)$")


class _Ranged(io.RawIOBase):
    """A remote file read by HTTP range requests, so zipfile can read one member of a large wheel."""

    def __init__(self, url: str, size: int) -> None:
        self.url, self.size, self.pos = url, size, 0

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = offset if whence == 0 else self.pos + offset if whence == 1 else self.size + offset
        return self.pos

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        count = min(len(buffer), self.size - self.pos)
        if count <= 0:
            return 0
        with _open(self.url, {"Range": f"bytes={self.pos}-{self.pos + count - 1}"}) as reply:
            data = reply.read(count)
        buffer[: len(data)] = data
        self.pos += len(data)
        return len(data)


@dataclass
class Release:
    name: str
    version: str
    wheels: list[str] = field(default_factory=list)
    sdist: bool = False
    uploaded: str | None = None
    metadata_from: str | None = None
    requires_python: str | None = None
    torch: str | None = None
    cuda: str | None = None
    cuda_os: str | None = None


def _open(url: str, headers: dict[str, str]) -> Any:
    """An HTTPS request to PyPI's hosts only (never a file: or other scheme)."""
    if not url.startswith(("https://pypi.org/", "https://files.pythonhosted.org/")):
        raise SystemExit(f"refusing to read {url!r}: not PyPI")
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 - checked just above
    return urllib.request.urlopen(request, timeout=60)  # noqa: S310 - checked just above


def _get(url: str, accept: str | None = None) -> bytes:
    headers = {"Accept": accept} if accept else {}
    with _open(url, headers) as reply:
        data: bytes = reply.read()
    return data


def _metadata(file: dict[str, object]) -> str:
    url, size = str(file["url"]), int(str(file["size"]))
    if file.get("core-metadata") or file.get("data-dist-info-metadata"):
        return _get(url + ".metadata").decode("utf-8")
    with zipfile.ZipFile(io.BufferedReader(_Ranged(url, size), buffer_size=1 << 16)) as wheel:
        member = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
        return wheel.read(member).decode("utf-8")


def _preferred(filename: str) -> tuple[int, str]:
    """Read the metadata of a Linux x86-64 wheel where there is one (the one most users get)."""
    return (0 if "manylinux" in filename and "x86_64" in filename else 1, filename)


def read_release(name: str, version: str) -> Release:
    index = json.loads(_get(SIMPLE.format(name=name), "application/vnd.pypi.simple.v1+json"))
    release = Release(name, version)
    wheels = []
    for file in index["files"]:
        filename = str(file["filename"])
        match = _WHEEL.match(filename)
        if match and match.group("version") == version:
            wheels.append(file)
            release.wheels.append(f"{match.group('py')}-{match.group('abi')}-{match.group('plat')}")
        elif filename.endswith((".tar.gz", ".zip")) and filename.rsplit("-", 1)[-1].startswith(version + "."):
            release.sdist = True
        else:
            continue
        uploaded = str(file.get("upload-time") or "")[:10] or None
        if uploaded and (release.uploaded is None or uploaded < release.uploaded):
            release.uploaded = uploaded
    if not wheels and not release.sdist:
        raise SystemExit(f"{name} {version}: no files on PyPI")
    release.wheels = sorted(set(release.wheels))
    if wheels:
        chosen = min(wheels, key=lambda f: _preferred(str(f["filename"])))
        release.metadata_from = str(chosen["filename"])
        headers = HeaderParser().parsestr(_metadata(chosen))
        release.requires_python = headers.get("Requires-Python")
        requirements = headers.get_all("Requires-Dist") or []
    else:
        # a source archive only: PyPI's JSON API holds the metadata of the newest release's upload
        info = json.loads(_get(f"https://pypi.org/pypi/{name}/json"))["info"]
        if info.get("version") != version:
            return release
        release.metadata_from = "PyPI JSON API (source archive only)"
        release.requires_python = info.get("requires_python") or None
        requirements = info.get("requires_dist") or []
    if requirements:
        for requirement in requirements:
            head, _, marker = requirement.partition(";")
            if re.match(r"^torch\b(?![-_])", head) and "extra ==" not in marker:
                release.torch = head.removeprefix("torch").strip().strip("()")  # "": any torch
            toolkit = _TOOLKIT.match(requirement)
            if name == "torch" and toolkit and release.cuda is None:
                release.cuda = toolkit.group("v")
                os = re.search(r"platform_system\s*==\s*\"(\w+)\"", toolkit.group("rest"))
                release.cuda_os = os.group(1).lower() if os else None
    return release


def wanted() -> list[tuple[str, str]]:
    """What the catalog proposes: each framework's newest release, each torch series' newest patch."""
    sys.path.insert(0, str(ROOT / "desktop"))
    from rigcheck.core.catalog import load_catalog

    catalog = load_catalog(use_overlay=False, use_cache=False)
    found = {
        (DISTRIBUTIONS.get(rule.framework, rule.framework), rule.latest)
        for rule in catalog.frameworks
        if rule.latest
    }
    found |= {
        ("torch", release.latest_patch)
        for release in catalog.torch_releases
        if release.latest_patch and _minor(release.version) >= (2, 12) and not release.prerelease
    }
    named = {n for n, _v in found}
    for name in NEWEST:
        if name not in named:
            found.add((name, json.loads(_get(f"https://pypi.org/pypi/{name}/json"))["info"]["version"]))
    return sorted((n, v) for n, v in found if v)


def _minor(text: str) -> tuple[int, int]:
    major, _, rest = text.partition(".")
    return int(major), int(rest.split(".")[0] or 0)


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def write(releases: list[Release], read: str) -> str:
    lines = [
        "# Generated by tools/read_wheels.py from each release's own PyPI files and wheel METADATA — do",
        "# not edit by hand; rerun the script (docs/compat.md#pins). `platforms` are the wheels'",
        "# python-abi-platform tags; `torch` is the release's Requires-Dist on torch; for torch itself",
        "# `cuda` is the CUDA toolkit its PyPI wheel depends on, and `cuda_os` the OS that dependency is",
        "# marked for (elsewhere the wheel is CPU-only).",
        "",
    ]
    for release in releases:
        lines.append("[[wheel]]")
        fields: dict[str, object] = {
            "package": release.name,
            "version": release.version,
            "read": read,
            "uploaded": release.uploaded,
            "requires_python": release.requires_python,
            "torch": release.torch,
            "cuda": release.cuda,
            "cuda_os": release.cuda_os,
            "platforms": release.wheels,
            "sdist": release.sdist,
            "metadata_from": release.metadata_from,
            "source": PROJECT.format(name=release.name, version=release.version),
        }
        quote = f"Requires-Dist: torch{release.torch}" if release.torch is not None else None
        if release.name == "torch" and release.cuda:
            quote = f'cuda-toolkit=={release.cuda}; platform_system == "{(release.cuda_os or "").title()}"'
        fields["quote"] = quote or f"Requires-Python: {release.requires_python or 'any'}"
        lines += [
            f"{key} = {_toml(value)}"
            for key, value in fields.items()
            if value is not None and value != [] and value is not False
        ]
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="read and print; write nothing")
    parser.add_argument("--also", action="append", default=[], metavar="NAME==VERSION")
    args = parser.parse_args(argv)
    targets = wanted() + [tuple(a.split("==", 1)) for a in args.also]  # type: ignore[misc]
    releases = []
    for name, version in targets:
        release = read_release(name, version)
        cuda = f", CUDA {release.cuda} ({release.cuda_os})" if release.cuda else ""
        print(
            f"{name} {version}: torch {release.torch or '-'}, python {release.requires_python or '-'}, "
            f"{len(release.wheels)} wheels{cuda}"
        )
        releases.append(release)
    if args.check:
        return 0
    read = datetime.now(UTC).date().isoformat()
    OUT.write_text(write(releases, read), encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)} ({len(releases)} releases, read {read})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
