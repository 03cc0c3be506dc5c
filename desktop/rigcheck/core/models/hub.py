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
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.errors import InputError, NetworkError
from rigcheck.core.models.files import (
    _check_split,
    _first_line,
    _gguf_model,
    _Header,
    _show,
    summarise_safetensors,
)
from rigcheck.core.models.files import _read_json_object as _read_local_json
from rigcheck.core.models.hub_gguf import (
    GgufRef,
    is_model_file,
    pick_gguf_files,
    read_gguf_header,
    split_gguf_id,
)
from rigcheck.core.models.resolve import released_format
from rigcheck.core.models.spec import ArchConfig, ModelInfo, WeightsInfo
from rigcheck.core.untrusted import ENCODINGS, BoundedDecoder, ByteBudget, CapExceededError

if TYPE_CHECKING:
    from huggingface_hub import HfApi
    from huggingface_hub.utils._safetensors import SafetensorsFileMetadata

#: seconds to wait for the hub on each request (the API call, the HEAD of config.json, each header)
TIMEOUT_S = 10.0
#: safetensors headers fetched at once for sharded repos
MAX_PARALLEL = 8
#: the most one look-up may take, all requests together: a server dripping a byte every few seconds
#: never trips the per-read TIMEOUT_S
DEADLINE_S = 60.0
#: the largest body accepted, announced or streamed, counted in DECODED bytes (a gzip reply is
#: inflated under the cap): the index is kilobytes to ~10 MB, the API's file list of a huge repository a
#: few MB, a safetensors header at most 25 MB (the library's SAFETENSORS_MAX_HEADER_LENGTH)
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
#: all the replies of one look-up together (many shards or GGUF parts): the largest real repositories'
#: headers total ~15 MB (DeepSeek-V3's 163 shards), so this is four times that
MAX_LOOKUP_BYTES = 64 * 1024 * 1024
#: config.json itself: real ones are 1-100 kB (files.MAX_CONFIG_BYTES, the same cap as a local file)
MAX_CONFIG_BYTES = 4 * 1024 * 1024

CONFIG_FILE = "config.json"
#: the id forms load_hub_model takes, for messages and help texts
ID_FORMS = "org/name, org/name:TAG or org/name/file.gguf"
SAFETENSORS_FILE = "model.safetensors"
SAFETENSORS_INDEX = "model.safetensors.index.json"

# The hub's rule (huggingface_hub.utils.validate_repo_id) for each half of "org/name", in ASCII.
_ID_PART = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?")
_MAX_LISTED = 8
#: the data size passed to the files package's tensor check: remote files are never measured
_NO_LIMIT = 1 << 62


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
    budget = _Budget(time.monotonic() + DEADLINE_S, MAX_RESPONSE_BYTES, ByteBudget(MAX_LOOKUP_BYTES))
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
    pool = ThreadPoolExecutor(max_workers=min(MAX_PARALLEL, total), thread_name_prefix="rigcheck-hub")
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


def _file_url(api: HfApi, repo_id: str, filename: str, *, revision: str | None) -> str:
    from huggingface_hub import hf_hub_url

    return hf_hub_url(repo_id, filename, revision=revision, endpoint=api.endpoint)


def _get_range(url: str, name: str, revision: str | None, start: int, end: int) -> bytes:
    """Bytes ``start..end`` (inclusive) of a file, through the library's (guarded) client."""
    from huggingface_hub import get_session
    from huggingface_hub.utils._headers import build_hf_headers
    from huggingface_hub.utils._http import hf_raise_for_status

    try:
        response = get_session().get(
            url, headers={**build_hf_headers(), "range": f"bytes={start}-{end}"}, timeout=TIMEOUT_S
        )
        hf_raise_for_status(response)
    except Exception as error:  # classified; anything unexpected is re-raised
        raise _failed(_SOURCE.get(), _classify(error, name, revision)) from error
    if response.status_code != 206:
        status = response.status_code
        raise InputError(
            _SOURCE.get(), f"the hub ignored the byte range asked for {_show(name, 160)} (HTTP {status})"
        )
    # a 206 names the bytes it holds (RFC 9110 §14.4); bytes from elsewhere in the file must not be
    # stitched into a header as if they were the ones asked for
    told = _CONTENT_RANGE.fullmatch(response.headers.get("content-range", "").strip())
    if told is None or int(told[1]) != start:
        raise InputError(
            _SOURCE.get(), f"the hub sent other bytes of {_show(name, 160)} than the range asked for"
        )
    return bytes(response.content)


_CONTENT_RANGE = re.compile(r"bytes (\d{1,19})-\d{1,19}/(?:\d{1,19}|\*)")


def _remote_size(url: str, name: str, revision: str | None) -> int:
    """A file's size when the listing does not say: huggingface_hub's HEAD (get_hf_file_metadata)."""
    from huggingface_hub import get_hf_file_metadata

    try:
        size = get_hf_file_metadata(url, timeout=TIMEOUT_S).size
    except Exception as error:  # classified; anything unexpected is re-raised
        raise _failed(_SOURCE.get(), _classify(error, name, revision)) from error
    if size is None:
        raise InputError(_SOURCE.get(), f"the hub does not say how large {_show(name, 160)} is")
    return size


# -- steps, ids ----------------------------------------------------------------------------------


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


# -- hub requests --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Listing:
    commit: str | None
    files: frozenset[str]
    #: bytes of each file, where the listing says (``files_metadata=True``)
    sizes: Mapping[str, int] = field(default_factory=dict)


def _failed(source: str, failure: _Failure) -> InputError:
    """The error for a classified failure: a hub that cannot be reached is a NetworkError (exit 3)."""
    if failure.kind in ("offline", "unreachable"):
        return NetworkError(source, failure.message)
    return InputError(source, failure.message)


def _list_repo(api: HfApi, repo_id: str, revision: str | None, source: str) -> tuple[_Listing | None, str]:
    """The repository's files and commit; (None, why) when offline or the hub cannot be reached."""
    try:
        info = api.model_info(repo_id, revision=revision, timeout=TIMEOUT_S, files_metadata=True)
    except Exception as error:  # classified; anything unexpected is re-raised
        failure = _classify(error, "repository files", revision)
        if failure.kind in ("offline", "unreachable"):
            return None, failure.message
        raise InputError(source, failure.message) from error
    return _checked_listing(info, source), ""


_COMMIT = re.compile(r"[0-9a-f]{40}")


def _checked_listing(info: Any, source: str) -> _Listing:
    """The listing of a model-info reply, checked: a commit id that is a git hash, file names that
    are relative paths in the repository, sizes that are counts. Anything else is one line."""
    commit = getattr(info, "sha", None)
    if commit is not None and not (isinstance(commit, str) and _COMMIT.fullmatch(commit)):
        raise InputError(
            source, f"malformed model info from the hub: the commit id {_show(str(commit))} is no git hash"
        )
    siblings = getattr(info, "siblings", None) or ()
    if not isinstance(siblings, list | tuple):
        raise InputError(source, "malformed model info from the hub: the file list is not a list")
    files: set[str] = set()
    sizes: dict[str, int] = {}
    for sibling in siblings:
        name = getattr(sibling, "rfilename", None)
        if not isinstance(name, str) or not name or name.startswith("/") or ".." in name.split("/"):
            raise InputError(source, f"malformed model info from the hub: a file named {_show(repr(name))}")
        files.add(name)
        size = getattr(sibling, "size", None)
        if isinstance(size, int) and not isinstance(size, bool) and 0 <= size < 1 << 62:
            sizes[name] = size
    return _Listing(commit=commit, files=frozenset(files), sizes=sizes)


def _download(repo_id: str, filename: str, revision: str | None, source: str, *, local_only: str) -> Path:
    """A small file through the library's cache; ``local_only`` (a reason) keeps it off the network.

    Once the API call has failed we look in the cache only: ``hf_hub_download`` would otherwise
    retry an unreachable hub with back-off for a minute or more before giving up.
    """
    from huggingface_hub import hf_hub_download

    cap = _REPLY_CAP.set(MAX_CONFIG_BYTES if filename == CONFIG_FILE else None)
    try:
        path = hf_hub_download(
            repo_id, filename, revision=revision, etag_timeout=TIMEOUT_S, local_files_only=bool(local_only)
        )
    except Exception as error:  # classified; anything unexpected is re-raised
        _drop_incomplete(repo_id)
        failure = _classify(error, filename, revision)
        if failure.kind == "not_cached" and local_only:
            message = f"{local_only}, and {filename} is not in the local cache"
        elif failure.kind == "not_cached":
            message = f"cannot reach the hub for {filename}, and it is not in the local cache"
        else:
            message = failure.message
        network = failure.kind in ("offline", "unreachable") or (failure.kind == "not_cached" and local_only)
        raise (NetworkError if network else InputError)(source, message) from error
    finally:
        _REPLY_CAP.reset(cap)
    return Path(path)


def _drop_incomplete(repo_id: str) -> None:
    """Remove what a refused download left in the cache (the library resumes ``*.incomplete`` files
    on its next call, so a cut-off bomb would otherwise be picked up again)."""
    from huggingface_hub import constants
    from huggingface_hub.file_download import repo_folder_name

    blobs = Path(constants.HF_HUB_CACHE) / repo_folder_name(repo_id=repo_id, repo_type="model") / "blobs"
    with contextlib.suppress(OSError):
        for partial in blobs.glob("*.incomplete"):
            with contextlib.suppress(OSError):
                partial.unlink()


def _weight_files(
    repo_id: str, listing: _Listing, *, revision: str | None, step: _Steps
) -> tuple[list[str], str]:
    """The safetensors files to read headers from (the index's shards), or none and a note why."""
    source = f"hf:{repo_id}"
    if SAFETENSORS_FILE in listing.files:
        return [SAFETENSORS_FILE], ""
    if SAFETENSORS_INDEX in listing.files:
        step(SAFETENSORS_INDEX)
        index_path = _download(repo_id, SAFETENSORS_INDEX, revision, source, local_only="")
        return _index_shards(_read_json_object(index_path, SAFETENSORS_INDEX, source), listing, source), ""
    ggufs = sorted(name for name in listing.files if name.lower().endswith(".gguf"))
    also = f"; the repository has GGUF files ({_listed(ggufs)}): name one as {repo_id}:TAG" if ggufs else ""
    return [], f"no model.safetensors or model.safetensors.index.json: weight sizes not read{also}"


def _index_shards(index: Mapping[str, Any], listing: _Listing, source: str) -> list[str]:
    weight_map = index.get("weight_map")
    if not isinstance(weight_map, Mapping) or not weight_map:
        raise InputError(source, f"{SAFETENSORS_INDEX} has no weight_map")
    for shard in weight_map.values():
        if not isinstance(shard, str) or not shard.endswith(".safetensors") or ".." in shard.split("/"):
            raise InputError(source, f"{SAFETENSORS_INDEX} names an odd shard {shard!r}")
    shards = sorted(set(weight_map.values()))
    for shard in shards:
        if shard not in listing.files:
            raise InputError(
                source, f"{SAFETENSORS_INDEX} names {_show(shard)}, which is not in the repository"
            )
    return shards


def _fetch_headers(
    api: HfApi, repo_id: str, shards: list[str], *, revision: str | None, step: _Steps
) -> dict[str, SafetensorsFileMetadata]:
    source = f"hf:{repo_id}"
    total = len(shards)
    step(f"safetensors headers 0/{total}")
    pool = ThreadPoolExecutor(max_workers=min(MAX_PARALLEL, total), thread_name_prefix="rigcheck-hub")
    try:
        futures: dict[Future[SafetensorsFileMetadata], str] = {
            pool.submit(  # each in a copy of this context: the look-up's deadline and size cap go along
                contextvars.copy_context().run,
                api.parse_safetensors_file_metadata,
                repo_id,
                shard,
                revision=revision,
                timeout=TIMEOUT_S,
            ): shard
            for shard in shards
        }
        headers: dict[str, SafetensorsFileMetadata] = {}
        for future in as_completed(futures):
            shard = futures[future]
            try:
                headers[shard] = future.result()
            except (TypeError, AttributeError, ValueError) as error:
                # The library indexes the decoded JSON blindly: a header of the wrong shape lands here.
                raise InputError(source, f"malformed safetensors header in {shard}") from error
            except Exception as error:  # classified; anything unexpected is re-raised
                raise _failed(source, _classify(error, shard, revision)) from error
            step(f"safetensors headers {len(headers)}/{total}")
        return headers
    finally:
        # On an error or a cancel, don't wait for the other shards (each is bounded by TIMEOUT_S).
        pool.shutdown(wait=False, cancel_futures=True)


# -- errors --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Failure:
    kind: Literal["fatal", "offline", "unreachable", "not_cached"]
    message: str


def _classify(error: Exception, what: str, revision: str | None) -> _Failure:
    """What a huggingface_hub or HTTP-client exception means for the user, in one line.

    Each caller wraps one library call, so a ValueError, TypeError, KeyError, AttributeError or
    RecursionError (JSON nested too deeply) is the library tripping over a malformed reply. Anything
    else that is neither a hub error nor a network error is a bug and is re-raised.
    """
    from huggingface_hub.errors import (
        DisabledRepoError,
        EntryNotFoundError,
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
        SafetensorsParsingError,
    )

    if isinstance(error, _RefusedError):
        return _Failure(error.kind, f"{error.reason} ({what})")
    # Order matters: GatedRepoError is a RepositoryNotFoundError, the HTTP errors are OSErrors.
    if isinstance(error, GatedRepoError):
        return _Failure("fatal", "gated: accept the licence on the model page and set HF_TOKEN")
    if isinstance(error, RepositoryNotFoundError):
        return _Failure("fatal", "repository not found on the hub (a private one needs HF_TOKEN)")
    if isinstance(error, RevisionNotFoundError):
        return _Failure("fatal", f"revision {revision or 'main'!r} not found in the repository")
    if isinstance(error, DisabledRepoError):
        return _Failure("fatal", "repository disabled on the hub")
    if isinstance(error, LocalEntryNotFoundError):
        return _Failure("not_cached", f"{what} is not in the local cache")
    if isinstance(error, EntryNotFoundError):
        return _Failure("fatal", f"{what} not found in the repository")
    if isinstance(error, OfflineModeIsEnabled):
        return _Failure("offline", "offline (HF_HUB_OFFLINE is set)")
    if isinstance(error, SafetensorsParsingError):
        return _Failure("fatal", f"malformed safetensors header in {what}: {_reason(str(error))}")
    if isinstance(error, HfHubHTTPError):
        status = error.response.status_code if error.response is not None else None
        kind: Literal["fatal", "unreachable"] = (
            "unreachable" if status is None or status == 429 or status >= 500 else "fatal"
        )
        return _Failure(kind, f"the hub answered HTTP {status} for {what}")
    if type(error).__name__ == "TooManyRedirects":
        return _Failure("fatal", f"the hub redirected in a loop ({what})")
    if isinstance(error, ValueError | TypeError | KeyError | AttributeError | RecursionError):
        # The library decodes replies blindly: truncated JSON, null or a list for an object, a commit
        # id with "../" ("Invalid pointer path") end here instead of as an internal error.
        return _Failure("fatal", f"malformed reply from the hub ({what}: {_first_line(error)})")
    if isinstance(error, _network_errors()):
        if isinstance(error, TimeoutError) or "Timeout" in type(error).__name__:
            return _Failure("unreachable", f"no answer from the hub within {TIMEOUT_S:g} s ({what})")
        return _Failure("unreachable", f"cannot reach the hub ({type(error).__name__}: {_first_line(error)})")
    raise error


def _network_errors() -> tuple[type[BaseException], ...]:
    """The HTTP client's transport errors: httpx2's (huggingface_hub 2), httpx's (1), OSError (0.x)."""
    import importlib

    found: list[type[BaseException]] = [OSError]
    for module_name in ("httpx2", "httpx"):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        found.append(module.TransportError)
    return tuple(found)


def _reason(message: str) -> str:
    """The reason in the library's "Failed to parse ... for 'f' (repo ...): reason. Please ..." messages."""
    tail = message.split("): ", 1)[-1]
    return _first_line(ValueError(tail.split(". ", 1)[0].rstrip(".")))


def _no_config(source: str, repo_id: str, files: Iterable[str]) -> InputError:
    ggufs = sorted(name for name in files if name.lower().endswith(".gguf"))
    if not ggufs:
        return InputError(source, "no config.json in the repository (and no GGUF files)")
    return InputError(source, f"no config.json, and no GGUF model among its GGUF files ({_listed(ggufs)})")


def _listed(names: list[str]) -> str:
    more = f" (+{len(names) - _MAX_LISTED} more)" if len(names) > _MAX_LISTED else ""
    return ", ".join(_show(name) for name in names[:_MAX_LISTED]) + more


# -- files ---------------------------------------------------------------------------------------


def _read_json_object(path: Path, name: str, source: str) -> dict[str, Any]:
    from rigcheck.core.models import files

    try:
        return _read_local_json(path, files.MAX_CONFIG_BYTES if name == CONFIG_FILE else files.MAX_JSON_BYTES)
    except InputError as error:  # it names the cache path; the user asked for hf:org/name
        raise InputError(source, f"{name}: {error.problem}") from error


def _snapshot_commit(path: Path) -> str | None:
    """The commit of a cached file: the cache stores it under ``snapshots/<commit>/``."""
    parts = path.parts
    if len(parts) >= 3 and parts[-3] == "snapshots":
        return parts[-2]
    return None


def _parse_config(config: Mapping[str, Any], source: str) -> ArchConfig:
    from rigcheck.core.models.config import parse_config

    try:
        return parse_config(config, source)
    except InputError as error:
        if error.problem.startswith(CONFIG_FILE):
            raise
        raise InputError(source, f"{CONFIG_FILE}: {error.problem}") from error


def _summarise(
    headers: Mapping[str, SafetensorsFileMetadata],
    shards: list[str],
    *,
    config: Mapping[str, Any],
    arch: ArchConfig,
    catalog: Catalog,
    source: str,
) -> tuple[WeightsInfo, list[str], ArchConfig]:
    """The hub's parsed headers back in the header's own JSON shape, summarised as a local folder is."""
    as_json = {
        shard: {
            name: {"dtype": t.dtype, "shape": list(t.shape), "data_offsets": list(t.data_offsets)}
            for name, t in headers[shard].tensors.items()
        }
        for shard in shards
    }
    try:
        return summarise_safetensors(as_json, config, arch, catalog, source=source)
    except InputError as error:
        if error.source == source:
            raise
        raise InputError(
            source, f"malformed safetensors header in {error.source}: {error.problem}"
        ) from error


# -- guards: an overall deadline and a size cap on every request of a look-up ----------------------


@dataclass(frozen=True)
class _Budget:
    deadline: float
    max_bytes: int
    #: decoded bytes of every reply of the look-up together (shards, parts, retries)
    lookup: ByteBudget = field(default_factory=lambda: ByteBudget(MAX_LOOKUP_BYTES))

    def remaining(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _RefusedError("unreachable", f"the hub took longer than {DEADLINE_S:g} s in all")
        return left


#: a lower per-reply cap for the request being made in this context (config.json's), else None
_REPLY_CAP: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "rigcheck_hub_reply_cap", default=None
)


def _reply_cap(budget: _Budget) -> int:
    cap = _REPLY_CAP.get()
    return budget.max_bytes if cap is None else min(cap, budget.max_bytes)


#: the budget of the look-up running in this context (None outside load_hub_model)
_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("rigcheck_hub_budget", default=None)
_GUARDED = False
#: "hf:org/name" of the look-up running in this context, for errors raised deep in a request
_SOURCE: contextvars.ContextVar[str] = contextvars.ContextVar("rigcheck_hub_source", default="hf:?")


class _RefusedError(Exception):
    """A guard stopped a request; ``kind`` says whether the local cache may stand in."""

    def __init__(self, kind: Literal["fatal", "unreachable"], reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


def _install_guards() -> None:
    """Make huggingface_hub's client (its own factory, event hooks added) enforce the budgets."""
    global _GUARDED  # noqa: PLW0603 - once per process: the library keeps one shared client
    if _GUARDED:
        return
    from huggingface_hub import set_client_factory
    from huggingface_hub.utils._http import default_client_factory

    def factory() -> Any:
        return _guard_client(default_client_factory())

    set_client_factory(factory)
    _GUARDED = True


def _guard_client(client: Any) -> Any:
    hooks = client.event_hooks
    client.event_hooks = {
        "request": [*hooks.get("request", []), _on_request],
        "response": [*hooks.get("response", []), _on_response],
    }
    return client


def _on_request(request: Any) -> None:
    """Before each request (each redirect too): no per-phase timeout may run past the deadline."""
    budget = _BUDGET.get()
    if budget is None:
        return
    left = budget.remaining()
    if request.headers.get("accept-encoding", "").strip().lower() != "identity":
        # only what BoundedDecoder inflates under the cap (httpx2 would also offer br and zstd)
        request.headers["accept-encoding"] = "gzip, deflate"
    timeout = dict(request.extensions.get("timeout") or {})
    for phase in ("connect", "read", "write", "pool"):
        current = timeout.get(phase)
        timeout[phase] = left if current is None else min(current, left)
    request.extensions["timeout"] = timeout


def _on_response(response: Any) -> None:
    """After the headers, before the body: refuse a too-large or non-JSON reply; bound the stream.

    The cap counts decoded bytes: a compressed body is inflated here, a bounded piece at a time, and
    the client is told the body is plain (so it does not inflate it again, unbounded).
    """
    budget = _BUDGET.get()
    if budget is None:
        return
    cap = _reply_cap(budget)
    # X-Linked-Size is the whole file's size: what a ranged GET gets is its Content-Length
    ranged = "range" in response.request.headers
    for header in ("content-length",) if ranged else ("content-length", "x-linked-size"):
        announced = response.headers.get(header)
        if announced is not None and announced.strip().isdigit() and int(announced) > cap:
            response.close()
            raise _RefusedError(
                "fatal", f"the hub offers {int(announced):,} bytes, more than the {cap:,} RigCheck reads"
            )
    kind = response.headers.get("content-type", "")
    if response.request.url.path.startswith("/api/") and response.status_code == 200 and "json" not in kind:
        response.close()
        raise _RefusedError(
            "unreachable", f"the hub answered with {_show(kind or 'no content type')}, not JSON"
        )
    encodings = [
        value.strip().lower()
        for value in response.headers.get_list("content-encoding", split_commas=True)
        if value.strip().lower() not in ("", "identity")
    ]
    if len(encodings) > 1 or (encodings and encodings[0] not in ENCODINGS):
        response.close()
        raise _RefusedError(
            "fatal",
            f"the hub sent a reply encoded as {_show(', '.join(encodings))}, which RigCheck does not read",
        )
    decoder = BoundedDecoder(encodings[0], cap) if encodings else None
    if decoder is not None:
        # the body is inflated by the stream below; its lengths no longer describe what is read
        for header in ("content-encoding", "content-length"):
            if header in response.headers:
                del response.headers[header]
    stream_class = _bounded_stream_class(type(response).__module__.split(".")[0])
    response.stream = stream_class(response.stream, budget, cap, decoder)


@functools.cache
def _bounded_stream_class(client_module: str) -> type[Any]:
    """A response body that stops at the size caps and at the deadline, checked between chunks.

    The caps count decoded bytes, per reply (``cap``) and per look-up (``budget.lookup``). It must
    subclass the HTTP client's own ``SyncByteStream`` (httpx2 for huggingface_hub 2, httpx for 1),
    which the client checks before it iterates a body.
    """
    import importlib
    import zlib

    base = importlib.import_module(client_module).SyncByteStream

    class BoundedStream(base):  # type: ignore[misc,valid-type]
        def __init__(self, inner: Any, budget: _Budget, cap: int, decoder: BoundedDecoder | None) -> None:
            self._inner = inner
            self._budget = budget
            self._cap = cap
            self._decoder = decoder

        def __iter__(self) -> Iterator[bytes]:
            seen = 0
            try:
                for chunk in self._inner:
                    pieces = [chunk] if self._decoder is None else self._decoder.feed(chunk)
                    for piece in pieces:
                        seen += len(piece)
                        if seen > self._cap:
                            raise CapExceededError(self._cap, "in one reply")
                        self._budget.lookup.take(len(piece))
                        self._budget.remaining()
                        yield piece
            except CapExceededError as error:
                raise _RefusedError("fatal", f"the hub sent {error}") from None
            except zlib.error:
                raise _RefusedError(
                    "fatal", "the hub sent a compressed reply that does not inflate"
                ) from None

        def close(self) -> None:
            self._inner.close()

    return BoundedStream
