"""The hub as a live catalog, end to end against a local fake hub (loopback only): search through
huggingface_hub's own list_models, each result answered with its fit from headers only, cached,
cancellable, with progress, and one clear line when offline."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from huggingface_hub import close_session
from test_model_hub import (  # the fake hub of the hub look-up tests, with a search route added below
    FakeHub,
    Handler,
    Server,
    assert_headers_only,
    build_repos,
    go_offline,
    point_client_at,
)

from fakes.cli import run_cli
from fakes.machines import full_machine
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.errors import InputError, NetworkError
from rigcheck.core.models import hub as hub_module
from rigcheck.core.models.hub_search import answer_hits, search_hub

LISTING = [
    {"id": "org/llama", "downloads": 1200, "likes": 3, "trendingScore": 9, "tags": ["safetensors"]},
    {"id": "org/gguf-only", "downloads": 54000, "likes": 12, "trendingScore": 4, "tags": ["gguf"]},
    {"id": "org/gated", "downloads": 10, "likes": 0, "trendingScore": 1, "tags": [], "gated": "manual"},
]


@dataclass
class Searches:
    queries: list[dict[str, list[str]]]


class SearchHandler(Handler):
    searches: Searches

    def route(self, *, head_only: bool) -> None:
        url = urlsplit(self.path)
        if url.path.rstrip("/") == "/api/models":
            query = parse_qs(url.query)
            self.searches.queries.append(query)
            text = query.get("search", [""])[0].lower()
            rows = [r for r in LISTING if text in r["id"]]
            if query.get("filter") == ["gguf"]:
                rows = [r for r in rows if "gguf" in r["tags"]]
            key = "downloads" if query.get("sort") == ["downloads"] else "trendingScore"
            rows = sorted(rows, key=lambda r: -float(r[key]))  # type: ignore[arg-type]
            self.reply(200, json.dumps(rows).encode(), {"Content-Type": "application/json"})
            return
        super().route(head_only=head_only)


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeHub, Searches]]:
    server = Server(("127.0.0.1", 0), SearchHandler)
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    hub = FakeHub(endpoint, build_repos())
    searches = Searches([])
    SearchHandler.hub = hub
    SearchHandler.searches = searches
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    point_client_at(monkeypatch, endpoint, tmp_path / "hf")
    monkeypatch.setenv("RIGCHECK_CACHE_DIR", str(tmp_path / "cache"))
    try:
        yield hub, searches
    finally:
        hub.release.set()
        close_session()
        server.shutdown()
        server.server_close()
        thread.join(5)
    assert_headers_only(hub)  # no weight was ever downloaded


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def test_search_asks_the_hub_through_list_models(fake: tuple[FakeHub, Searches]) -> None:
    _, searches = fake
    hits = search_hub("org", sort="downloads", limit=5)
    assert [h.id for h in hits] == ["org/gguf-only", "org/llama", "org/gated"]
    assert hits[0].kind == "gguf" and hits[0].downloads == 54000 and hits[2].gated
    (query,) = searches.queries
    assert query["search"] == ["org"] and query["sort"] == ["downloads"] and query["limit"] == ["5"]
    assert query["pipeline_tag"] == ["text-generation"]
    by_trend = search_hub("org", sort="trending", limit=5)
    assert by_trend[0].id == "org/llama"
    assert searches.queries[-1]["sort"] == ["trendingScore"]
    gguf = search_hub("org", kind="gguf", limit=5)
    assert [h.id for h in gguf] == ["org/gguf-only"] and searches.queries[-1]["filter"] == ["gguf"]


def test_a_search_is_cached_and_refreshed_after_an_hour(fake: tuple[FakeHub, Searches]) -> None:
    _, searches = fake
    clock = [1000.0]
    first = search_hub("llama", now=lambda: clock[0])
    again = search_hub("llama", now=lambda: clock[0] + 60)
    assert again == first and len(searches.queries) == 1
    search_hub("llama", now=lambda: clock[0] + 3601)
    assert len(searches.queries) == 2


def test_each_result_is_answered_from_headers_with_progress(
    fake: tuple[FakeHub, Searches], catalog: Catalog
) -> None:
    steps: list[str] = []
    hits = search_hub("org", sort="downloads")
    answers = list(answer_hits(hits, full_machine(), catalog, progress=steps.append))
    by_id = {a.hit.id: a for a in answers}
    llama, gguf, gated = by_id["org/llama"], by_id["org/gguf-only"], by_id["org/gated"]
    assert llama.problem is None and llama.where == "gpu" and llama.decode_tokens_per_s
    assert llama.model is not None and llama.model.weights is not None  # exact bytes from the header
    assert gguf.problem is None and gguf.quant and gguf.where is not None
    assert gated.problem is not None and "gated" in gated.problem and gated.where is None
    assert steps[0].startswith("1/3 org/gguf-only: ") and any(s.startswith("3/3 org/gated") for s in steps)


def test_answering_stops_when_cancelled(fake: tuple[FakeHub, Searches], catalog: Catalog) -> None:
    hits = search_hub("org")
    seen: list[str] = []
    answers = answer_hits(hits, full_machine(), catalog, cancel=lambda: len(seen) >= 1)
    with pytest.raises(hub_module.Cancelled):
        for answer in answers:
            seen.append(answer.hit.id)
    assert len(seen) == 1


def test_offline_is_one_clear_line(fake: tuple[FakeHub, Searches], monkeypatch: pytest.MonkeyPatch) -> None:
    go_offline(monkeypatch)
    with pytest.raises(InputError) as err:
        search_hub("qwen")
    message = str(err.value)
    assert "\n" not in message and "offline" in message and "rigcheck models" in message
    assert isinstance(err.value, NetworkError)


def test_an_unreachable_hub_is_one_clear_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub.utils import _pagination

    library_backoff = _pagination.http_backoff
    point_client_at(monkeypatch, "http://127.0.0.1:9", tmp_path / "hf")  # nothing listens on port 9
    monkeypatch.setenv("RIGCHECK_CACHE_DIR", str(tmp_path / "cache"))
    started = time.monotonic()
    with pytest.raises(InputError) as err:
        search_hub("qwen")
    assert "\n" not in str(err.value) and "cannot reach the Hugging Face hub" in str(err.value)
    assert isinstance(err.value, NetworkError)  # the CLI's exit 3: try again later, not bad input
    assert time.monotonic() - started < 5  # asked once: not the library's five retries (23 s of waiting)
    assert _pagination.http_backoff is library_backoff  # the library is left as it was
    close_session()


def test_cli_models_hub_prints_each_result_with_its_fit(
    fake: tuple[FakeHub, Searches], tmp_path: Path
) -> None:
    snapshot = tmp_path / "box.json"
    snapshot.write_text(full_machine().to_json())
    code, out = run_cli("models", "--hub", "org", "--sort", "downloads", "--machine", str(snapshot))
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["repository", "format"]
    assert any(line.startswith("org/llama") and "tok/s" in line for line in lines)
    assert any(line.startswith("org/gated") and "not read: gated" in line for line in lines)
    assert "3 results for 'org' on the Hugging Face hub, by downloads" in out
    code, out = run_cli("models", "--hub", "org", "--json", "--machine", str(snapshot))
    data = json.loads(out)
    assert code == 0 and {row["id"] for row in data["hub"]} == {"org/llama", "org/gguf-only", "org/gated"}


def test_cli_models_hub_offline_exits_3_with_one_line(
    fake: tuple[FakeHub, Searches], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from rigcheck import cli

    go_offline(monkeypatch)
    assert cli.main(["models", "--hub", "qwen"]) == 3  # a network failure (README: exit codes), not bad input
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("rigcheck: error: hf:search: offline")


def test_cli_hub_search_unreachable_is_one_line_and_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """Nothing but RigCheck's own line reaches the terminal (no "... thrown while requesting" from the
    library), and scripts can tell a network failure from bad input."""
    point_client_at(monkeypatch, "http://127.0.0.1:9", tmp_path / "hf")
    monkeypatch.setenv("RIGCHECK_CACHE_DIR", str(tmp_path / "cache"))
    from rigcheck.cli import main

    code = main(["models", "--hub", "qwen"])
    err = capfd.readouterr().err
    assert code == 3
    assert err.count("\n") == 1 and "cannot reach the Hugging Face hub" in err, err
    close_session()
