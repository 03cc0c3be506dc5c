"""Guards on every request of a look-up: an overall deadline and size caps, as client event hooks."""

from __future__ import annotations

import contextvars
import functools
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from rigcheck.core.models import hub_limits as limits
from rigcheck.core.models.files import _show
from rigcheck.core.untrusted import ENCODINGS, BoundedDecoder, ByteBudget, CapExceededError


@dataclass(frozen=True)
class _Budget:
    deadline: float
    max_bytes: int
    #: decoded bytes of every reply of the look-up together (shards, parts, retries)
    lookup: ByteBudget = field(default_factory=lambda: ByteBudget(limits.MAX_LOOKUP_BYTES))

    def remaining(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _RefusedError("unreachable", f"the hub took longer than {limits.DEADLINE_S:g} s in all")
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
