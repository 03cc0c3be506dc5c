"""The Hugging Face hub as a live catalog: search it, and answer each result with its fit on a machine.

The catalog is what is known offline; the hub is what exists today. :func:`search_hub` asks the hub's own
model search through ``huggingface_hub`` (``HfApi.list_models``: text-generation models, or GGUF / MLX
repositories by their library tag, sorted by trending score or downloads), which honours ``HF_ENDPOINT``,
``HF_TOKEN`` and ``HF_HUB_OFFLINE``. Results are cached on disk for an hour, by query and sort.
:func:`answer_hits` looks each result up with :func:`rigcheck.core.models.hub.load_hub_model` (config.json
and weight headers only, never a weight) and asks :func:`rigcheck.core.estimate.recommend.recommend`
for the best way to run it here: progress per result, a cancel check between results and inside each
look-up, and a result that cannot be read answered with its one-line reason instead of stopping the rest.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from rigcheck.core.catalog import Catalog
from rigcheck.core.errors import InputError, NetworkError
from rigcheck.core.machine import Machine
from rigcheck.core.models.spec import ModelInfo

Sort = Literal["trending", "downloads"]
Kind = Literal["any", "gguf", "mlx"]
SORTS: tuple[Sort, ...] = ("trending", "downloads")
KINDS: tuple[Kind, ...] = ("any", "gguf", "mlx")
#: huggingface_hub's sort keys (ModelSort_T)
_SORT_KEYS = {"trending": "trending_score", "downloads": "downloads"}
#: the fields asked of the hub for each result (list_models ``expand``)
_EXPAND = ["downloads", "likes", "trendingScore", "lastModified", "tags", "gated", "pipeline_tag"]
#: how long a search stays fresh in the cache
CACHE_TTL_S = 3600.0
#: the most results one search returns
MAX_LIMIT = 100
#: seconds to wait for the hub's answer to a search (as hub.py's look-ups do)
TIMEOUT_S = 10.0
SOURCE = "hf:search"


@dataclass(frozen=True)
class HubHit:
    """One search result as the hub lists it."""

    id: str
    downloads: int | None = None
    likes: int | None = None
    trending: float | None = None
    last_modified: str | None = None
    tags: tuple[str, ...] = ()
    gated: bool = False

    @property
    def kind(self) -> Kind:
        tags = {t.lower() for t in self.tags}
        return "gguf" if "gguf" in tags else "mlx" if "mlx" in tags else "any"


@dataclass(frozen=True)
class HubAnswer:
    """A result and how it runs on the machine: its best format, where it runs and its decode speed, or
    why it could not be answered (``problem``, one line)."""

    hit: HubHit
    model: ModelInfo | None = None
    quant: str | None = None
    #: gpu, gpu+ram or cpu; None: it does not run here (or could not be read)
    where: str | None = None
    decode_tokens_per_s: float | None = None
    problem: str | None = None


def search_hub(
    query: str,
    *,
    sort: Sort = "trending",
    kind: Kind = "any",
    limit: int = 20,
    cache_dir: Path | None = None,
    now: Callable[[], float] = time.time,
) -> list[HubHit]:
    """Text-generation models (or GGUF / MLX repositories) on the hub matching ``query``, best first.

    Raises :class:`InputError` with one line when the hub cannot be asked (offline, unreachable, an error
    reply) and no fresh cached answer exists.
    """
    if sort not in SORTS:
        raise InputError("--sort", f"expected one of {', '.join(SORTS)}, got {sort!r}")
    if kind not in KINDS:
        raise InputError("--format", f"expected one of {', '.join(KINDS)}, got {kind!r}")
    limit = max(1, min(limit, MAX_LIMIT))
    cache = _cache_file(cache_dir, query, sort, kind, limit)
    cached = _read_cache(cache, now())
    if cached is not None:
        return cached
    hits = _ask_hub(query.strip(), sort, kind, limit)
    _write_cache(cache, hits, now())
    return hits


def answer_hits(
    hits: Iterable[HubHit],
    machine: Machine,
    catalog: Catalog,
    *,
    progress: Callable[[str], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    look_up: Callable[..., ModelInfo] | None = None,
) -> Iterator[HubAnswer]:
    """Each hit with its fit on ``machine``, from headers only; stops (raising ``hub.Cancelled``) when
    ``cancel()`` says so."""
    from rigcheck.core.estimate.recommend import recommend
    from rigcheck.core.models import hub

    load = look_up or hub.load_hub_model
    todo = list(hits)
    for number, hit in enumerate(todo, 1):
        if cancel is not None and cancel():
            raise hub.Cancelled()

        def step(message: str, number: int = number, hit: HubHit = hit) -> None:
            if progress is not None:
                progress(f"{number}/{len(todo)} {hit.id}: {message}")

        step("looking up")
        try:
            model = load(hit.id, progress=step, cancel=cancel, catalog=catalog)
            rec = recommend(model, machine, "inference", catalog)
        except InputError as error:
            yield HubAnswer(hit, problem=error.problem)
            continue
        best = rec.best
        if best is None or not best.runs:
            yield HubAnswer(hit, model, quant=rec.ladder[-1].quant if rec.ladder else None)
            continue
        yield HubAnswer(hit, model, best.quant, best.where, best.decode_tokens_per_s)


# -- the hub --------------------------------------------------------------------------------------


def _ask_hub(query: str, sort: Sort, kind: Kind, limit: int) -> list[HubHit]:
    from huggingface_hub import HfApi

    options: dict[str, Any] = {"sort": _SORT_KEYS[sort], "limit": limit, "expand": _EXPAND}
    if query:
        options["search"] = query
    if kind == "any":
        options["pipeline_tag"] = "text-generation"
    else:
        options["filter"] = kind
    from rigcheck.core.models.hub import quiet_library

    try:
        with _one_try(), quiet_library():
            return [_hit(info) for info in HfApi().list_models(**options)]
    except Exception as error:  # noqa: BLE001 -- classified below; anything else is re-raised there
        why, network = _why(error)
        raise (NetworkError if network else InputError)(SOURCE, why) from None


_RETRY_LOCK = threading.Lock()


@contextlib.contextmanager
def _one_try() -> Iterator[None]:
    """list_models pages through ``http_backoff`` with its default five retries (1+2+4+8+8 s of waiting
    before an unreachable hub is reported: huggingface_hub utils/_pagination.py); a search asks once, with
    a timeout, so offline is one line at once. The page fetch is wrapped for the call's duration only."""
    from huggingface_hub.utils import _pagination

    with _RETRY_LOCK:
        original = getattr(_pagination, "http_backoff")  # noqa: B009 -- not re-exported by the module

        def once(method: Any, url: str, **options: Any) -> Any:
            options["max_retries"] = 0
            options["timeout"] = options.get("timeout") or TIMEOUT_S
            return original(method, url, **options)

        setattr(_pagination, "http_backoff", once)  # noqa: B010
        try:
            yield
        finally:
            setattr(_pagination, "http_backoff", original)  # noqa: B010


def _hit(info: Any) -> HubHit:
    modified = getattr(info, "last_modified", None)
    trending = getattr(info, "trending_score", None)
    return HubHit(
        id=str(info.id),
        downloads=getattr(info, "downloads", None),
        likes=getattr(info, "likes", None),
        trending=float(trending) if trending is not None else None,
        last_modified=modified.isoformat()
        if modified is not None and hasattr(modified, "isoformat")
        else None,
        tags=tuple(str(t) for t in (getattr(info, "tags", None) or ())),
        gated=bool(getattr(info, "gated", False)),
    )


def _why(error: Exception) -> tuple[str, bool]:
    """One line for a failed search, and whether it is the network (offline, unreachable; exit 3) rather
    than the hub's own answer."""
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    if isinstance(error, OfflineModeIsEnabled):
        why = "offline (HF_HUB_OFFLINE is set): the hub cannot be searched; 'rigcheck models' works offline"
        return why, True
    if isinstance(error, HfHubHTTPError):
        status = error.response.status_code if error.response is not None else None
        return f"the hub answered HTTP {status} to the search", False
    if isinstance(error, (OSError, ValueError)) or "Error" in type(error).__name__:
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        detail = f"{type(error).__name__}: {first}" if first else type(error).__name__
        return f"cannot reach the Hugging Face hub ({detail[:160]}); 'rigcheck models' works offline", True
    raise error


# -- the cache ------------------------------------------------------------------------------------


def _cache_file(folder: Path | None, query: str, sort: str, kind: str, limit: int) -> Path:
    if folder is None:
        env = os.environ.get("RIGCHECK_CACHE_DIR")
        if env:
            folder = Path(env)
        else:
            from platformdirs import user_cache_path

            folder = user_cache_path("rigcheck")
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    key = json.dumps([endpoint, query.strip().lower(), sort, kind, limit])
    return folder / "hub-search" / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"


def _read_cache(path: Path, now: float) -> list[HubHit] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or now - float(data["saved_at"]) > CACHE_TTL_S:
            return None
        return [
            HubHit(**{**row, "tags": tuple(row.get("tags", ()))})
            for row in data["hits"]
            if isinstance(row, dict)
        ]
    except (OSError, ValueError, KeyError, TypeError):
        return None  # no cache, or one we cannot read: ask the hub


def _write_cache(path: Path, hits: list[HubHit], now: float) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"saved_at": now, "hits": [asdict(h) for h in hits]}), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # a read-only cache folder only costs the next search a round trip
