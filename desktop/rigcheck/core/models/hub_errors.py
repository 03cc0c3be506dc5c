"""What a failed hub request means for the user, in one line: classified, and the errors raised for it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from rigcheck.core.errors import InputError, NetworkError
from rigcheck.core.models import hub_limits as limits
from rigcheck.core.models.files import _first_line, _show
from rigcheck.core.models.hub_guards import _RefusedError
from rigcheck.core.models.hub_limits import _MAX_LISTED


def _failed(source: str, failure: _Failure) -> InputError:
    """The error for a classified failure: a hub that cannot be reached is a NetworkError (exit 3)."""
    if failure.kind in ("offline", "unreachable"):
        return NetworkError(source, failure.message)
    return InputError(source, failure.message)


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
            return _Failure("unreachable", f"no answer from the hub within {limits.TIMEOUT_S:g} s ({what})")
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
