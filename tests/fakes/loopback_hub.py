"""A loopback HTTP server that huggingface_hub is aimed at, for the fuzz suites' fake hubs.

:class:`QuietHandler` answers HEAD and GET through one ``serve(head=...)`` and logs nothing;
:func:`aimed_hub` serves a handler on 127.0.0.1, points the library's endpoint, cache and environment
at it, and puts every one of them back afterwards.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

_CONSTANTS = ("ENDPOINT", "HUGGINGFACE_CO_URL_TEMPLATE", "HF_HOME", "HF_HUB_CACHE", "HF_HUB_OFFLINE")
_ENVIRON = ("HF_ENDPOINT", "HF_HUB_OFFLINE", "HF_TOKEN")


class QuietHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_HEAD(self) -> None:
        self.serve(head=True)

    def do_GET(self) -> None:
        self.serve(head=False)

    def serve(self, *, head: bool) -> None:
        raise NotImplementedError


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hangs up on a hostile reply is what the fuzz wants; socketserver would print
        a traceback onto the stderr the check reads (this server runs in the test's process)."""


@contextmanager
def aimed_hub(handler: type[BaseHTTPRequestHandler], home: Path) -> Iterator[str]:
    """Serve ``handler`` and aim huggingface_hub at it, its cache under ``home``; yields the endpoint."""
    from huggingface_hub import close_session, constants

    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    saved = {name: getattr(constants, name) for name in _CONSTANTS}
    environ = {key: os.environ.get(key) for key in _ENVIRON}
    os.environ["HF_ENDPOINT"] = endpoint
    os.environ.pop("HF_HUB_OFFLINE", None)
    os.environ.pop("HF_TOKEN", None)
    constants.ENDPOINT = endpoint
    constants.HUGGINGFACE_CO_URL_TEMPLATE = endpoint + "/{repo_id}/resolve/{revision}/{filename}"
    constants.HF_HOME, constants.HF_HUB_CACHE = str(home), str(home / "hub")
    constants.HF_HUB_OFFLINE = False
    try:
        yield endpoint
    finally:
        for name, value in saved.items():
            setattr(constants, name, value)
        for key, value in environ.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        close_session()
        server.shutdown()
        server.server_close()
