"""A model on the Hugging Face hub, read from ``config.json`` and safetensors headers only.

:func:`load_hub_model` turns ``org/name`` into a :class:`ModelInfo` without downloading a single
weight and without running any code from the repository:

1. the repository's file list and commit (``HfApi.model_info``, one API request, no retries, so an
   unreachable hub is noticed at once and the local cache is used instead);
2. ``config.json`` through ``hf_hub_download``, which honours ``HF_ENDPOINT``, ``HF_TOKEN``,
   ``HF_HUB_OFFLINE`` and the local cache (we never reimplement any of that). Parameter counts
   always come from here, through :func:`rigcheck.core.models.config.parse_config`;
3. the safetensors headers, each with HTTP Range requests (``HfApi.parse_safetensors_file_metadata``:
   the first 100 kB, and a second range only when a header is longer): exact bytes per dtype, per
   layer and in total. A sharded repo's ``model.safetensors.index.json`` names the shards.

Headers are fetched shard by shard (a few at a time) rather than with
``HfApi.get_safetensors_metadata``: the same ranged requests, but one progress step per shard, a
cancel check between shards, no "Parse safetensors files" tqdm bar on stderr, and no HEAD probes
for ``model.safetensors`` and the index (the file list already says which one the repo has). The
bytes are counted with the helpers in :mod:`rigcheck.core.models.files`, exactly as for a local folder.

Every request of one look-up goes through the library's own HTTP client with two guards added as
client event hooks (:func:`_guard_client`): an overall deadline (:data:`DEADLINE_S`, however slowly a
server drips its bytes) and a size cap (:data:`MAX_RESPONSE_BYTES`) checked on the announced length
before a body is read, and again while it streams, so an oversized file is refused before the
library writes anything to its cache. A reply to an API call that is not JSON (a captive portal's
login page) counts as an unreachable hub; a redirect loop is one line too.

GGUF models are named as llama.cpp names them, ``org/name:TAG`` or ``org/name/path/file.gguf`` (and
``org/name`` alone for a repository of GGUF files only); :mod:`rigcheck.core.models.hub_gguf` says which
file that is (llama.cpp's own rule) and reads its header, and each part's of a split model, with
ranged GETs through the same guarded client: the first 2 MiB, doubled only while the header runs
past the bytes at hand, at most 32 MiB. The file sizes come from the repository listing
(``files_metadata=True``). The header is parsed by the local reader's parser
(:mod:`rigcheck.core.models.files`), so the ModelInfo is the one a local copy of the file gives (its
source is ``hf:org/name@commit``).

Offline (``HF_HUB_OFFLINE=1``) or with the hub unreachable, a cached ``config.json`` still gives the
architecture; the weight headers are not cached by the library, so ``weights`` is then None and a
note says why. Every failure is a one-line :class:`InputError` whose source is ``hf:<org/name>``.

Modules: ``hub_limits`` (the bounds and file names; set them there in tests), ``hub_requests``,
``hub_errors``, ``hub_guards``, ``hub_replies``; :func:`load_hub_model` and :func:`quiet_library` live here.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.errors import InputError, NetworkError
from rigcheck.core.models import hub_limits as limits
from rigcheck.core.models.files import (
    _check_split,
    _gguf_model,
    _Header,
    _show,
)
from rigcheck.core.models.hub_errors import _no_config
from rigcheck.core.models.hub_gguf import (
    GgufRef,
    is_model_file,
    pick_gguf_files,
    read_gguf_header,
    split_gguf_id,
)
from rigcheck.core.models.hub_guards import _BUDGET, _SOURCE, _Budget, _install_guards
from rigcheck.core.models.hub_limits import (
    _ID_PART,
    CONFIG_FILE,
    DEADLINE_S,
    ID_FORMS,
    MAX_CONFIG_BYTES,
    MAX_LOOKUP_BYTES,
    MAX_PARALLEL,
    MAX_RESPONSE_BYTES,
    SAFETENSORS_FILE,
    SAFETENSORS_INDEX,
    TIMEOUT_S,
)
from rigcheck.core.models.hub_replies import _parse_config, _read_json_object, _snapshot_commit, _summarise
from rigcheck.core.models.hub_requests import (
    _download,
    _fetch_headers,
    _file_url,
    _get_range,
    _list_repo,
    _Listing,
    _remote_size,
    _weight_files,
)
from rigcheck.core.models.resolve import released_format
from rigcheck.core.models.spec import ModelInfo, WeightsInfo
from rigcheck.core.untrusted import ByteBudget

if TYPE_CHECKING:
    from huggingface_hub import HfApi


class Cancelled(Exception):  # noqa: N818 -- it is not an error: the user asked to stop
    """``cancel()`` returned True between two steps of :func:`load_hub_model`."""


def load_hub_model(
    repo_id: str,
    *,
    revision: str | None = None,
    progress: Callable[[str], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    catalog: Catalog | None = None,
) -> ModelInfo:
    """The architecture and exact weight bytes of a hub model, from ``config.json`` and headers only.

    ``repo_id`` is ``org/name``, or a GGUF as llama.cpp's ``-hf`` names it: ``org/name:TAG`` or
    ``org/name/path/file.gguf`` (see :mod:`rigcheck.core.models.hub_gguf`).
    ``progress(message)`` is called before each step ("config.json", "safetensors headers 2/5",
    "GGUF headers 1/3");
    ``cancel()`` is asked before each step and after each header, and :class:`Cancelled` is raised
    when it says so. Raises :class:`InputError` for a bad id, a missing or gated repository, an
    unknown revision, no network and no cache, or a malformed file. ``catalog`` (default: the
    shipped one) says which quant ids RigCheck knows, as for local folders.
    """
    ref = _check_repo_id(repo_id)
    source = f"hf:{ref.repo}"
    if revision is not None and (not revision.strip() or revision != revision.strip()):
        raise InputError(source, f"invalid revision {revision!r}")
    step = _Steps(progress, cancel)

    # Imported here: huggingface_hub (and its HTTP client) cost ~0.2 s, paid only when used.
    from huggingface_hub import HfApi

    _install_guards()
    budget = _Budget(
        time.monotonic() + limits.DEADLINE_S, limits.MAX_RESPONSE_BYTES, ByteBudget(limits.MAX_LOOKUP_BYTES)
    )
    token = _BUDGET.set(budget)
    source_token = _SOURCE.set(source)
    try:
        with quiet_library():
            if ref.tag is not None or ref.file is not None:
                return _load_gguf(HfApi(), ref, repo_id, revision, step, catalog=catalog)
            return _load(HfApi(), repo_id, revision, source, step, catalog=catalog)
    finally:
        _SOURCE.reset(source_token)
        _BUDGET.reset(token)


#: set by the CLI's --debug: the hub library's own warnings (its retries) reach stderr
SHOW_LIBRARY_LOG = False


@contextlib.contextmanager
def quiet_library() -> Iterator[None]:
    """The library's retry warnings ("'...' thrown while requesting GET ...") stay off the terminal:
    the look-up ends in one line of its own. ``SHOW_LIBRARY_LOG`` (--debug) lets them through."""
    import logging

    logger = logging.getLogger("huggingface_hub")
    if SHOW_LIBRARY_LOG:
        yield
        return
    saved = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(saved)


def _load(
    api: HfApi, repo_id: str, revision: str | None, source: str, step: _Steps, *, catalog: Catalog | None
) -> ModelInfo:
    step("repository files")
    listing, unreachable = _list_repo(api, repo_id, revision, source)
    if listing is not None and CONFIG_FILE not in listing.files:
        if any(is_model_file(name) for name in listing.files):  # GGUF files only: llama.cpp's default tag
            ref = GgufRef(repo_id)
            return _gguf_from_listing(
                api, ref, repo_id, listing, revision=revision, step=step, catalog=catalog
            )
        raise _no_config(source, repo_id, listing.files)

    step(CONFIG_FILE)
    config_path = _download(repo_id, CONFIG_FILE, revision, source, local_only=unreachable)
    config = _read_json_object(config_path, CONFIG_FILE, source)
    commit = listing.commit if listing is not None and listing.commit else _snapshot_commit(config_path)
    arch = _parse_config(config, source)
    catalog = catalog if catalog is not None else load_catalog()
    notes: list[str] = []
    weights: WeightsInfo | None = None
    if listing is None:
        notes.append(f"{unreachable}: config.json from the local cache, weight file headers not read")
    else:
        shards, note = _weight_files(repo_id, listing, revision=commit or revision, step=step)
        if shards:
            headers = _fetch_headers(api, repo_id, shards, revision=commit or revision, step=step)
            weights, weight_notes, arch = _summarise(
                headers, shards, config=config, arch=arch, catalog=catalog, source=source
            )
            notes.extend(weight_notes)
        if note:
            notes.append(note)
    step("done")
    return ModelInfo(
        id=repo_id,
        name=repo_id.split("/", 1)[1],
        arch=arch,
        source_kind="config",
        source=f"{source}@{commit or revision or 'main'}",
        weights=weights,
        native_quant=released_format(config),
        notes=tuple(notes),
    )


def _load_gguf(
    api: HfApi, ref: GgufRef, repo_id: str, revision: str | None, step: _Steps, *, catalog: Catalog | None
) -> ModelInfo:
    """A GGUF model named by tag or path: it needs the hub (ranged reads are not cached)."""
    source = f"hf:{ref.repo}"
    step("repository files")
    listing, unreachable = _list_repo(api, ref.repo, revision, source)
    if listing is None:
        raise NetworkError(
            source,
            f"{unreachable}: GGUF headers are read from the hub with ranged requests, which "
            "huggingface_hub does not cache, so they cannot be read offline",
        )
    return _gguf_from_listing(api, ref, repo_id, listing, revision=revision, step=step, catalog=catalog)


def _gguf_from_listing(
    api: HfApi,
    ref: GgufRef,
    repo_id: str,
    listing: _Listing,
    *,
    revision: str | None,
    step: _Steps,
    catalog: Catalog | None,
) -> ModelInfo:
    source = f"hf:{ref.repo}"
    names = pick_gguf_files(ref, listing.files)
    commit = listing.commit or revision
    url_of = functools.partial(_file_url, api, ref.repo, revision=commit)

    def header(name: str) -> _Header:
        size = listing.sizes.get(name)
        if size is None:
            size = _remote_size(url_of(name), name, revision)
        return read_gguf_header(
            name, size, functools.partial(_get_range, url_of(name), name, revision), source=source
        )

    # A split model's parts are read a few at a time, as safetensors shards are (_fetch_headers): a
    # 13-part model is one round trip's wait, not thirteen, within the look-up's one deadline.
    total = len(names)
    step(f"GGUF headers 0/{total}")
    read: dict[str, _Header] = {}
    pool = ThreadPoolExecutor(max_workers=min(limits.MAX_PARALLEL, total), thread_name_prefix="rigcheck-hub")
    try:
        futures = {pool.submit(contextvars.copy_context().run, header, name): name for name in names}
        for future in as_completed(futures):
            read[futures[future]] = future.result()  # an InputError of its own, source hf:org/name
            step(f"GGUF headers {len(read)}/{total}")
    finally:
        # on an error or a cancel, don't wait for the other parts (each request is bounded by TIMEOUT_S)
        pool.shutdown(wait=False, cancel_futures=True)
    headers = [read[name] for name in names]
    parts = [Path(name) for name in names]
    catalog = catalog if catalog is not None else load_catalog()
    try:
        _check_split(parts, headers)
        info = _gguf_model(parts, headers, catalog)
    except InputError as error:
        shown = error.source if error.source != str(parts[0]) else names[0]
        raise InputError(source, f"{_show(shown, 160)}: {error.problem}") from error
    step("done")
    # The numbers are the local file's; where they came from is the hub. Not "file": a run command
    # must not offer "-m hf:org/name@commit" as a path.
    return replace(info, id=repo_id, source_kind="config", source=f"{source}@{commit or 'main'}")


class _Steps:
    def __init__(self, progress: Callable[[str], None] | None, cancel: Callable[[], bool] | None) -> None:
        self._progress = progress
        self._cancel = cancel

    def __call__(self, message: str) -> None:
        if self._cancel is not None and self._cancel():
            raise Cancelled(message)
        if self._progress is not None:
            self._progress(message)


def _check_repo_id(repo_id: str) -> GgufRef:
    """The repository, and the GGUF tag or file, an id names; an :class:`InputError` for a bad one."""
    source = f"hf:{repo_id}"
    ref = split_gguf_id(repo_id) or GgufRef(repo_id)
    parts = ref.repo.split("/")
    if (
        len(parts) != 2
        or not all(_ID_PART.fullmatch(part) for part in parts)
        or "--" in ref.repo
        or ".." in ref.repo
        or ref.repo.endswith(".git")
    ):
        raise InputError(source, f"not a Hugging Face model id (expected {ID_FORMS})")
    return ref


__all__ = [
    "CONFIG_FILE",
    "DEADLINE_S",
    "ID_FORMS",
    "MAX_CONFIG_BYTES",
    "MAX_LOOKUP_BYTES",
    "MAX_PARALLEL",
    "MAX_RESPONSE_BYTES",
    "SAFETENSORS_FILE",
    "SAFETENSORS_INDEX",
    "SHOW_LIBRARY_LOG",
    "TIMEOUT_S",
    "Cancelled",
    "load_hub_model",
    "quiet_library",
]
