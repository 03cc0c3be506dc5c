"""The hub requests of a look-up: the repository listing, small files through the cache, headers, ranges."""

from __future__ import annotations

import contextlib
import contextvars
import re
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rigcheck.core.errors import InputError, NetworkError
from rigcheck.core.models import hub_limits as limits
from rigcheck.core.models.files import _show
from rigcheck.core.models.hub_errors import _classify, _failed, _listed
from rigcheck.core.models.hub_guards import _REPLY_CAP, _SOURCE
from rigcheck.core.models.hub_limits import CONFIG_FILE, SAFETENSORS_FILE, SAFETENSORS_INDEX
from rigcheck.core.models.hub_replies import _read_json_object

if TYPE_CHECKING:
    from huggingface_hub import HfApi
    from huggingface_hub.utils._safetensors import SafetensorsFileMetadata

    from rigcheck.core.models.hub import _Steps


@dataclass(frozen=True)
class _Listing:
    commit: str | None
    files: frozenset[str]
    #: bytes of each file, where the listing says (``files_metadata=True``)
    sizes: Mapping[str, int] = field(default_factory=dict)


def _list_repo(api: HfApi, repo_id: str, revision: str | None, source: str) -> tuple[_Listing | None, str]:
    """The repository's files and commit; (None, why) when offline or the hub cannot be reached."""
    try:
        info = api.model_info(repo_id, revision=revision, timeout=limits.TIMEOUT_S, files_metadata=True)
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

    cap = _REPLY_CAP.set(limits.MAX_CONFIG_BYTES if filename == CONFIG_FILE else None)
    try:
        path = hf_hub_download(
            repo_id,
            filename,
            revision=revision,
            etag_timeout=limits.TIMEOUT_S,
            local_files_only=bool(local_only),
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
    pool = ThreadPoolExecutor(max_workers=min(limits.MAX_PARALLEL, total), thread_name_prefix="rigcheck-hub")
    try:
        futures: dict[Future[SafetensorsFileMetadata], str] = {
            pool.submit(  # each in a copy of this context: the look-up's deadline and size cap go along
                contextvars.copy_context().run,
                api.parse_safetensors_file_metadata,
                repo_id,
                shard,
                revision=revision,
                timeout=limits.TIMEOUT_S,
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
            url, headers={**build_hf_headers(), "range": f"bytes={start}-{end}"}, timeout=limits.TIMEOUT_S
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
        size = get_hf_file_metadata(url, timeout=limits.TIMEOUT_S).size
    except Exception as error:  # classified; anything unexpected is re-raised
        raise _failed(_SOURCE.get(), _classify(error, name, revision)) from error
    if size is None:
        raise InputError(_SOURCE.get(), f"the hub does not say how large {_show(name, 160)} is")
    return size
