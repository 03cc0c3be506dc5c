"""GGUF files on the Hugging Face hub: which file an id names, and its header read by growing ranges.

The ids are llama.cpp's: ``org/name:TAG`` (``llama-cli -hf org/name:TAG``) and ``org/name`` alone for
a repository of GGUF files only; and ``org/name/path/file.gguf`` for one file (``--hf-file``).

:func:`pick_gguf_files` follows llama.cpp's own rule, read in ggml-org/llama.cpp
``common/download.cpp@0216dab364b886a4638020856333c07044453dd9`` (``find_best_model``,
``gguf_filename_is_model``, ``get_gguf_split_info``, ``get_split_files``,
``common_download_get_hf_plan``):

* a tag matches a file whose path contains ``TAG`` followed by ``.`` or ``-``, case-insensitively
  (``std::regex(t + "[.-]", std::regex::icase)``, searched anywhere in the path); without a tag,
  ``Q4_K_M`` is tried, then ``Q8_0``, then the first model file of the repository;
* only model files count: names ending in ``.gguf`` without ``mmproj``, ``imatrix``, ``mtp-``,
  ``eagle3-``, ``dflash-`` or ``dspark-`` in the file name;
* of a split model (``stem-0000k-of-0000N.gguf``) only the first part is a candidate, and the model is
  every file with the same stem and part count;
* an explicit file is matched case-insensitively against the repository's paths.

Where llama.cpp silently takes the first of several matching models, RigCheck refuses and lists them
(the user then names the file), and the tag is matched literally (llama.cpp puts it into a regex
unescaped).

:func:`read_gguf_header` fetches a prefix of the file (:data:`FIRST_RANGE`), parses it with the
bounds-checked parser in :mod:`rigcheck.core.models.files.gguf_header` against the file's real size, and
asks for more, doubling, only when the header runs past the bytes at hand; past :data:`MAX_HEADER` it
refuses.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from rigcheck.core.errors import InputError
from rigcheck.core.models.files import NeedMoreBytesError, _Header, _show, parse_gguf_prefix

#: the first range asked for: the whole header of most models (a 152k-token vocabulary with its
#: merges is ~4-6 MB, so big vocabularies take one or two more requests)
FIRST_RANGE = 2 * 1024 * 1024
#: the largest header read. Real headers are a few MB (a 262k-token vocabulary with scores and token
#: types ~8 MB); the guard's MAX_RESPONSE_BYTES is 32 MB per response.
MAX_HEADER = 32 * 1024 * 1024
#: the tags llama.cpp tries, in order, when none is given (find_best_model)
DEFAULT_TAGS = ("Q4_K_M", "Q8_0")
_NOT_MODEL = ("mmproj", "imatrix", "mtp-", "eagle3-", "dflash-", "dspark-")
_SPLIT_NAME = re.compile(r"(?P<prefix>.+)-(?P<no>[0-9]{5})-of-(?P<count>[0-9]{5})\.gguf", re.IGNORECASE)
_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}")
_MAX_LISTED = 6


@dataclass(frozen=True)
class GgufRef:
    """What an id names besides the repository: a tag, a file, or neither."""

    repo: str
    tag: str | None = None
    file: str | None = None


def split_gguf_id(text: str) -> GgufRef | None:
    """``org/name:TAG`` or ``org/name/path/file.gguf`` split up; None when ``text`` is neither.

    The repository half is checked by the caller; a bad tag or path is an :class:`InputError`.
    """
    source = f"hf:{text}"
    if ":" in text:
        repo, _, tag = text.partition(":")
        if not _TAG.fullmatch(tag):
            raise InputError(source, f"not a GGUF tag: {_shown(tag)} (expected e.g. Q4_K_M or UD-Q4_K_XL)")
        return GgufRef(repo, tag=tag)
    parts = text.split("/")
    if len(parts) > 2 and parts[-1].lower().endswith(".gguf"):
        file = "/".join(parts[2:])
        if any(not part or part in (".", "..") for part in parts[2:]) or any(
            ord(char) < 32 or char in '\\"<>|?*' for char in file
        ):
            raise InputError(f"hf:{'/'.join(parts[:2])}", f"not a file path in a repository: {_shown(file)}")
        return GgufRef("/".join(parts[:2]), file=file)
    return None


def is_model_file(path: str) -> bool:
    """llama.cpp's gguf_filename_is_model: a .gguf that is no projector, imatrix or draft model."""
    name = path.rsplit("/", 1)[-1]
    return path.endswith(".gguf") and not any(word in name for word in _NOT_MODEL)


def _first_part(path: str) -> bool:
    match = _SPLIT_NAME.fullmatch(path)
    return match is None or int(match["count"]) <= 1 or int(match["no"]) == 1


def pick_gguf_files(ref: GgufRef, files: Iterable[str]) -> list[str]:
    """The files of the model ``ref`` names (one, or every part of a split one, in order)."""
    source = f"hf:{ref.repo}"
    listing = sorted(files)
    ggufs = [path for path in listing if path.lower().endswith(".gguf")]
    if ref.file is not None:
        exact = [path for path in listing if path == ref.file]
        found = exact or [path for path in listing if path.lower() == ref.file.lower()]
        if not found:
            raise InputError(source, f"{_shown(ref.file)} is not in the repository{_available(ggufs)}")
        return split_parts(found[0], listing, source)
    models = [path for path in listing if is_model_file(path) and _first_part(path)]
    matches: list[str] = []
    for tag in (ref.tag,) if ref.tag else DEFAULT_TAGS:
        pattern = re.compile(re.escape(tag) + "[.-]", re.IGNORECASE)
        matches = [path for path in models if pattern.search(path)]
        if matches:
            break
    if not matches and ref.tag is None:
        matches = models[:1]
    if not matches:
        what = f"no GGUF model file matches the tag {_shown(ref.tag)}" if ref.tag else "no GGUF model files"
        raise InputError(source, f"{what}{_available(ggufs)}")
    if len(matches) > 1:
        said = f"the tag {_shown(ref.tag)}" if ref.tag else f"the default tag ({' or '.join(DEFAULT_TAGS)})"
        raise InputError(
            source,
            f"{said} matches {len(matches)} models: {_listed(matches)}; name one as "
            f"{ref.repo}/FILE (llama.cpp -hf would take the first)",
        )
    return split_parts(matches[0], listing, source)


def split_parts(path: str, listing: Iterable[str], source: str) -> list[str]:
    """Every part of the split model ``path`` belongs to (just ``path`` when it is not split)."""
    match = _SPLIT_NAME.fullmatch(path)
    if match is None or int(match["count"]) <= 1:
        return [path]
    count = int(match["count"])
    if not 1 <= int(match["no"]) <= count:
        raise InputError(source, f"{_shown(path)}: the name says part {int(match['no'])} of {count}")
    suffix = path[-len(".gguf") :]
    names = [f"{match['prefix']}-{n:05d}-of-{match['count']}{suffix}" for n in range(1, count + 1)]
    present = set(listing)
    missing = [name for name in names if name not in present]
    if missing:
        raise InputError(source, f"split GGUF of {count} parts: {_listed(missing)} not in the repository")
    return names


def read_gguf_header(
    name: str,
    size: int,
    get_range: Callable[[int, int], bytes],
    *,
    source: str,
    first: int | None = None,
    limit: int | None = None,
) -> _Header:
    """The parsed header of the ``size``-byte file ``name``, from ``get_range(start, end)`` (inclusive).

    Asks for ``first`` bytes, then doubles (at least to what the parse needs) while the header runs
    past the bytes at hand; each request asks only for the bytes not yet fetched. A header that
    would need more than ``limit`` bytes is refused in one line.
    """
    first = FIRST_RANGE if first is None else first
    limit = MAX_HEADER if limit is None else limit
    path = Path(name)
    data = b""
    want = min(first, size)
    while True:
        if want > len(data):
            chunk = get_range(len(data), want - 1)
            if len(chunk) != want - len(data):
                raise InputError(
                    source,
                    f"{_shown(name)}: asked the hub for bytes {len(data):,}-{want - 1:,}, got {len(chunk):,}",
                )
            data += chunk
        try:
            return parse_gguf_prefix(data, size, path)
        except NeedMoreBytesError as more:
            if more.upto > limit:
                raise InputError(
                    source,
                    f"{_shown(name)}: the GGUF header runs past {limit / 2**20:g} MiB "
                    f"(at least {more.upto:,} bytes), more than RigCheck reads from the hub",
                ) from None
            want = min(max(2 * len(data), more.upto), limit, size)
        except InputError as error:
            raise InputError(source, f"{_shown(name)}: {error.problem}") from error


def _listed(names: list[str]) -> str:
    more = f" (+{len(names) - _MAX_LISTED} more)" if len(names) > _MAX_LISTED else ""
    return ", ".join(_shown(name) for name in names[:_MAX_LISTED]) + more


def _available(ggufs: list[str]) -> str:
    models = [path for path in ggufs if is_model_file(path) and _first_part(path)]
    return f"; GGUF models there: {_listed(models)}" if models else "; the repository has no GGUF models"


def _shown(name: str) -> str:
    """A path from the repository, on one line (longer than the files package's default: folders and
    split names)."""
    return _show(name, 160)
