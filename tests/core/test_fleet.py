"""Fleets: many reports read together, drift from the majority, which nodes run a model (core/report/fleet)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.compat import bucket, check_compat
from rigcheck.core.errors import InputError
from rigcheck.core.machine import CPU, Drivers, Host, Machine, Memory, Software, save_machine
from rigcheck.core.report.fleet import (
    FLEET_SCHEMA,
    Fleet,
    Node,
    load_fleet,
    render_fleet_html,
    render_fleet_json,
    render_table,
    version_key,
)
from rigcheck.core.report.report import build_report, redact_report, report_to_dict
from rigcheck.core.whatif import simulate

GIB = 1024**3
RTX_4090 = "nvidia-geforce-rtx-4090"
RTX_3060 = "nvidia-geforce-rtx-3060"
H100 = "nvidia-h100-sxm5"
M2_ULTRA = "apple-m2-ultra"
MI300X = "amd-instinct-mi300x"
#: a small model keeps build_report quick; the fleet's 70B questions go through the estimator
REPORT_MODELS = ["llama-3.2-1b"]


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def node_machine(
    catalog: Catalog,
    name: str | None,
    gpus: list[str],
    *,
    ram_gib: float = 64,
    driver: str | None = "570.124.04",
    cuda: str | None = "12.8",
    torch: str | None = "2.5.1+cu124",
) -> Machine:
    specs = [catalog.gpu(g) for g in gpus]
    assert all(s is not None for s in specs)
    base = Machine(
        cpu=CPU(logical_cores=32, model="Test CPU", arch="x86_64"),
        memory=Memory(total_bytes=64 * GIB),
        gpus=(),
        taken_at="2026-11-29T12:00:00Z",
    )
    machine = simulate(base, specs, ram_gib)  # type: ignore[arg-type]
    vendors = {s.vendor for s in specs if s is not None}
    drivers = Drivers(nvidia=driver, cuda_driver=cuda) if "nvidia" in vendors else Drivers()
    if "amd" in vendors:
        drivers = Drivers(rocm="6.2.4")
    return replace(
        machine,
        host=Host(hostname=name, os="linux", os_version="Ubuntu 22.04.5 LTS"),
        drivers=drivers,
        software=Software(python_packages={"torch": torch} if torch else {}),
    )


def write_report(folder: Path, machine: Machine, catalog: Catalog, stem: str | None = None) -> Path:
    path = folder / f"{stem or machine.host.hostname}.json"
    report = build_report(machine, catalog, models=REPORT_MODELS)
    path.write_text(json.dumps(report_to_dict(report)), encoding="utf-8")
    return path


def node(fleet: Fleet, name: str) -> Node:
    found = fleet.node(name)
    assert found is not None, [n.name for n in fleet.nodes]
    return found


# -- reading --------------------------------------------------------------------------------------


def test_load_fleet_reads_reports_and_snapshots_and_skips_bad_files(tmp_path: Path, catalog: Catalog) -> None:
    audits = tmp_path / "audits"
    (audits / "rack2").mkdir(parents=True)
    write_report(audits, node_machine(catalog, "node01", [RTX_4090, RTX_4090]), catalog)
    write_report(audits / "rack2", node_machine(catalog, "node10", [H100]), catalog)
    write_report(audits, node_machine(catalog, "node2", [RTX_3060], ram_gib=32), catalog)
    # redacted: no hostname, so the node is named after its file
    secret = build_report(node_machine(catalog, "secret-host", [RTX_4090]), catalog, models=REPORT_MODELS)
    (audits / "gpu-box-7.json").write_text(
        json.dumps(report_to_dict(redact_report(secret))), encoding="utf-8"
    )
    # a bare machine snapshot is accepted too
    save_machine(node_machine(catalog, "snap", [RTX_4090]), audits / "snap.json")
    # bad files: each is one problem line, never an exception
    (audits / "broken.json").write_text('{"schema": "rigcheck.report/1", "machine": ', encoding="utf-8")
    (audits / "old.json").write_text(
        json.dumps({"schema": "rigcheck.report/0", "machine": {}}), encoding="utf-8"
    )
    (audits / "alien.json").write_text(json.dumps({"schema": "someone.else/2"}), encoding="utf-8")
    (audits / "list.json").write_text("[1, 2]", encoding="utf-8")
    (audits / "empty.json").write_text("", encoding="utf-8")
    bad_field = report_to_dict(
        build_report(node_machine(catalog, "x", [RTX_4090]), catalog, models=REPORT_MODELS)
    )
    bad_field["machine"]["memory"]["total_bytes"] = -1
    (audits / "badfield.json").write_text(json.dumps(bad_field), encoding="utf-8")
    # left alone in folders: other extensions and hidden half-written files
    (audits / "README.txt").write_text("not a report", encoding="utf-8")
    (audits / ".node03.json.tmp").write_text("{", encoding="utf-8")
    (audits / ".partial.json").write_text("{", encoding="utf-8")

    fleet = load_fleet([audits], catalog)

    assert [n.name for n in fleet.nodes] == ["gpu-box-7", "node01", "node2", "node10", "snap"]
    assert fleet.files == 11
    assert node(fleet, "snap").report is None and node(fleet, "snap").kind == "snapshot"
    assert node(fleet, "node01").report is not None and node(fleet, "node01").kind == "report"
    assert node(fleet, "gpu-box-7").machine.host.hostname is None
    assert node(fleet, "node10").path == str(audits / "rack2" / "node10.json")
    problems = dict(p.split(": ", 1) for p in fleet.problems)
    assert set(problems) == {
        str(audits / n)
        for n in ("broken.json", "old.json", "alien.json", "list.json", "empty.json", "badfield.json")
    }
    assert "not valid JSON" in problems[str(audits / "broken.json")]
    assert "'rigcheck.report/0' is not supported" in problems[str(audits / "old.json")]
    assert "audit that machine again" in problems[str(audits / "old.json")]
    assert "not a RigCheck report" in problems[str(audits / "alien.json")]
    assert "expected a JSON object" in problems[str(audits / "list.json")]
    assert problems[str(audits / "empty.json")] == "empty file"
    assert "total_bytes" in problems[str(audits / "badfield.json")]
    assert all("\n" not in p for p in fleet.problems)


def test_files_named_directly_are_read_whatever_their_name(tmp_path: Path, catalog: Catalog) -> None:
    """parallel-ssh -o writes one file per host, named after the host, without an extension."""
    path = write_report(tmp_path, node_machine(catalog, "gpu01", [RTX_4090]), catalog)
    bare = path.rename(tmp_path / "gpu01")
    fleet = load_fleet([bare, bare], catalog)  # the same file twice counts once
    assert [n.name for n in fleet.nodes] == ["gpu01"] and fleet.problems == ()


def test_no_existing_path_is_an_error_one_missing_path_a_problem(tmp_path: Path, catalog: Catalog) -> None:
    with pytest.raises(InputError, match="no such file or folder"):
        load_fleet([tmp_path / "nope", tmp_path / "nope2"], catalog)
    with pytest.raises(InputError):
        load_fleet([], catalog)
    save_machine(node_machine(catalog, "a", [RTX_4090]), tmp_path / "a.json")
    fleet = load_fleet([tmp_path / "a.json", tmp_path / "nope"], catalog)
    assert [n.name for n in fleet.nodes] == ["a"]
    assert fleet.problems == (f"{tmp_path / 'nope'}: no such file or folder",)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert load_fleet([empty], catalog).nodes == ()


def test_the_same_host_twice_gets_told_apart(tmp_path: Path, catalog: Catalog) -> None:
    for stem in ("gpu01-monday", "gpu01-friday"):
        write_report(tmp_path, node_machine(catalog, "gpu01", [RTX_4090]), catalog, stem=stem)
    names = [n.name for n in load_fleet([tmp_path], catalog).nodes]
    assert names == ["gpu01 (gpu01-friday)", "gpu01 (gpu01-monday)"]


def test_failing_comes_from_the_report_or_from_check_compat(tmp_path: Path, catalog: Catalog) -> None:
    machine = node_machine(catalog, "old-driver", [RTX_4090], driver="470.57.02", cuda="11.4")
    report = build_report(machine, catalog, models=REPORT_MODELS)
    # failing = what is on the machine and fails; software that is not installed and would not work here
    # is not the machine's failure (compat.bucket "not-here")
    expected = sum(1 for f in report.findings if f.status == "fail" and bucket(f) == "problem")
    assert expected > 0
    write_report(tmp_path, machine, catalog)
    save_machine(replace(machine, host=replace(machine.host, hostname="snap")), tmp_path / "snap.json")
    # a report whose findings were left out gets them from check_compat, like a snapshot
    data = report_to_dict(report)
    data["findings"] = []
    data["machine"]["host"]["hostname"] = "nofindings"
    (tmp_path / "nofindings.json").write_text(json.dumps(data), encoding="utf-8")
    fleet = load_fleet([tmp_path])  # no catalog given: loaded when needed
    assert node(fleet, "old-driver").failing == expected
    from_compat = sum(
        1 for f in check_compat(machine, catalog) if f.status == "fail" and bucket(f) == "problem"
    )
    assert node(fleet, "snap").failing == from_compat == expected
    assert node(fleet, "nofindings").failing == expected


def test_row_has_the_table_columns(catalog: Catalog) -> None:
    machines = {
        "two": node_machine(catalog, "two", [RTX_4090, RTX_4090]),
        "mixed": node_machine(catalog, "mixed", [RTX_4090, RTX_3060]),
        "mac": node_machine(catalog, "mac", [M2_ULTRA], torch=None),
        "amd": node_machine(catalog, "amd", [MI300X], torch="2.5.1+rocm6.2"),
        "cpu": node_machine(catalog, "cpu", []),
    }
    fleet = Fleet(tuple(Node(k, f"{k}.json", m, None, 3) for k, m in machines.items()))
    rows = {n.name: fleet.row(n) for n in fleet.nodes}
    assert rows["two"] == {
        "name": "two",
        "gpus": "2 × RTX 4090",
        "vram": "48 GiB",
        "driver": "570.124.04",
        "cuda": "12.8",
        "rocm": "—",
        "torch": "2.5.1+cu124",
        "failing": "3",
    }
    assert rows["mixed"]["gpus"] == "RTX 4090 + RTX 3060" and rows["mixed"]["vram"] == "36 GiB"
    assert rows["mac"]["gpus"] == "M2 Ultra" and rows["mac"]["vram"].endswith("unified")
    assert rows["mac"]["driver"] == rows["mac"]["torch"] == "—"
    assert rows["amd"]["rocm"] == "6.2.4" and rows["amd"]["gpus"] == "Instinct MI300X"
    assert rows["cpu"]["gpus"] == "none" and rows["cpu"]["vram"] == "—"


# -- drift ----------------------------------------------------------------------------------------


def fleet_of(*machines: Machine) -> Fleet:
    return Fleet(tuple(Node(m.host.hostname or "?", "", m, None, 0) for m in machines))


def test_drift_names_the_node_on_an_older_driver(catalog: Catalog) -> None:
    nodes = [node_machine(catalog, f"node{i:02d}", [RTX_4090, RTX_4090]) for i in range(1, 9)]
    nodes[3] = node_machine(catalog, "node04", [RTX_4090, RTX_4090], driver="550.54.14", cuda="12.4")
    nodes[6] = node_machine(catalog, "node07", [RTX_4090, RTX_4090], driver="575.51.02", cuda="12.9")
    # 9 > 10 as strings, but not as versions
    nodes[7] = node_machine(catalog, "node08", [RTX_4090, RTX_4090], driver="570.9.1")
    drift = {d.field: d for d in fleet_of(*nodes).drift()}
    assert set(drift) == {"driver", "cuda_driver"}
    driver = drift["driver"]
    assert driver.majority == "570.124.04" and driver.majority_count == 5 and driver.compared == 8
    assert driver.nodes == ("node04", "node07", "node08")
    assert driver.values == ("550.54.14", "575.51.02", "570.9.1")
    assert driver.relations == ("older", "newer", "older")
    assert driver.older() == ("node04", "node08") and driver.newer() == ("node07",)
    sentence = driver.sentence()
    assert sentence.startswith("driver: 570.124.04 on 5 of 8 nodes")
    assert "older: node04 (550.54.14), node08 (570.9.1)" in sentence
    assert "newer: node07 (575.51.02)" in sentence
    assert drift["cuda_driver"].older() == ("node04",)


def test_drift_torch_ram_gpu_os_and_missing(catalog: Catalog) -> None:
    nodes = [node_machine(catalog, f"n{i}", [H100] * 8, ram_gib=2048) for i in range(6)]
    nodes[1] = node_machine(catalog, "n1", [H100] * 7, ram_gib=2048)  # a GPU fell off the bus
    nodes[2] = node_machine(catalog, "n2", [H100] * 8, ram_gib=1024, torch="2.3.0+cu121")
    nodes[3] = node_machine(catalog, "n3", [H100] * 8, ram_gib=2048, torch=None)
    nodes[4] = replace(nodes[4], host=replace(nodes[4].host, os_version="Ubuntu 24.04.1 LTS"))
    drift = {d.field: d for d in fleet_of(*nodes).drift()}
    assert set(drift) == {"torch", "gpu", "ram_gib", "os"}
    assert drift["gpu"].majority == "8 × H100 SXM5 80GB" and drift["gpu"].values == ("7 × H100 SXM5 80GB",)
    assert drift["ram_gib"].nodes == ("n2",) and drift["ram_gib"].relations == ("smaller",)
    torch = drift["torch"]
    assert torch.majority == "2.5.1"
    assert list(zip(torch.nodes, torch.values, torch.relations, strict=True)) == [
        ("n2", "2.3.0", "older"),
        ("n3", "—", "missing"),
    ]
    assert drift["os"].relations == ("different",)


def test_no_drift_in_a_uniform_or_an_evenly_mixed_fleet(catalog: Catalog) -> None:
    same = [node_machine(catalog, f"n{i}", [RTX_4090]) for i in range(4)]
    assert fleet_of(*same).drift() == ()
    # half 4090 boxes, half H100 servers, NVIDIA and AMD: no majority GPU, and AMD has no NVIDIA driver
    mixed = [
        node_machine(catalog, "a", [RTX_4090]),
        node_machine(catalog, "b", [RTX_4090]),
        node_machine(catalog, "c", [H100], ram_gib=256),
        node_machine(catalog, "d", [H100], ram_gib=256),
        node_machine(catalog, "e", [MI300X], ram_gib=512, torch="2.5.1+rocm6.2"),
    ]
    assert {d.field for d in fleet_of(*mixed).drift()} == set()
    assert fleet_of().drift() == ()


def test_spread_lists_every_version_even_without_a_majority(catalog: Catalog) -> None:
    drivers = ["580.65.06", "470.82.01", "550.54.14", "580.65.06", "550.54.14", "580.65.06"]
    nodes = [node_machine(catalog, f"n{i}", [RTX_4090], driver=d) for i, d in enumerate(drivers)]
    fleet = fleet_of(*nodes)
    assert "driver" not in {d.field for d in fleet.drift()}  # 3 of 6 is no majority
    spread = {s.field: s for s in fleet.spread()}
    assert spread["driver"].values == (("470.82.01", 1), ("550.54.14", 2), ("580.65.06", 3))  # oldest first
    assert spread["driver"].sentence() == "drivers differ: 470.82.01 (1), 550.54.14 (2), 580.65.06 (3)"
    same = [node_machine(catalog, f"n{i}", [RTX_4090]) for i in range(3)]
    assert fleet_of(*same).spread() == ()
    # a GPU mix is not a version spread
    mixed = [node_machine(catalog, "a", [RTX_4090]), node_machine(catalog, "c", [H100], ram_gib=256)]
    assert fleet_of(*mixed).spread() == ()


def test_version_key() -> None:
    assert version_key("550.54.14") < version_key("570.9.1") < version_key("570.124.04")
    assert version_key("2.5.1+cu124") == version_key("2.5.1") == (2, 5, 1)


# -- models ---------------------------------------------------------------------------------------


def test_can_run_a_70b_at_q4_k_m_across_gpus(tmp_path: Path, catalog: Catalog) -> None:
    machines = [
        node_machine(catalog, "one-4090", [RTX_4090], ram_gib=64),
        node_machine(catalog, "two-4090", [RTX_4090, RTX_4090], ram_gib=128),
        node_machine(catalog, "h100", [H100], ram_gib=256),
        node_machine(catalog, "rtx3060", [RTX_3060], ram_gib=32),
        node_machine(catalog, "m2-ultra", [M2_ULTRA], ram_gib=192),
    ]
    for m in machines:
        write_report(tmp_path, m, catalog)
    fleet = load_fleet([tmp_path], catalog)
    results = {n.name: (verdict, speed) for n, verdict, speed in fleet.can_run("llama-3.1-70b", catalog)}
    assert {k: v[0] for k, v in results.items()} == {
        "h100": "fits",
        "m2-ultra": "fits",
        "one-4090": "fits_with_offload",
        "rtx3060": "does_not_fit",
        "two-4090": "fits",
    }
    assert results["rtx3060"][1] is None
    speeds = {k: v[1] for k, v in results.items() if v[1] is not None}
    assert speeds["h100"] > speeds["two-4090"] > speeds["one-4090"] > 0
    column = fleet.column("LLaMA-3.1-70B", catalog, quant="Q4_K_M")
    assert column.model_id == "llama-3.1-70b" and column.quant == "Q4_K_M" and column.label.endswith("Q4_K_M")
    assert {c.source for c in column.cells} == {"estimate"}
    assert column.nodes_with("fits") == ("h100", "m2-ultra", "two-4090")
    # a bigger format on the same fleet: fewer nodes hold it
    q8 = fleet.column("llama-3.1-70b", catalog, quant="q8_0")
    assert len(q8.nodes_with("fits")) < len(column.nodes_with("fits"))


def test_a_verdict_the_report_holds_is_used(tmp_path: Path, catalog: Catalog) -> None:
    machine = node_machine(catalog, "two-4090", [RTX_4090, RTX_4090], ram_gib=128)
    data = report_to_dict(build_report(machine, catalog, models=["llama-3.1-70b"]))
    (held,) = data["fits"]
    assert held["quant"] == "Q4_K_M"
    held["decode_tokens_per_s"] = 123.0
    (tmp_path / "a.json").write_text(json.dumps(data), encoding="utf-8")
    fleet = load_fleet([tmp_path], catalog)
    ((_, verdict, speed),) = fleet.can_run("llama-3.1-70b", catalog)
    assert (verdict, speed) == ("fits", 123.0)
    # another format, or a context of its own, is worked out afresh
    ((_, _, other),) = fleet.can_run("llama-3.1-70b", catalog, quant="q3_k_m")
    assert other != 123.0
    ((_, _, longer),) = fleet.can_run("llama-3.1-70b", catalog, context=4096)
    assert longer != 123.0
    (column,) = fleet.report_matrix()
    assert column.model_id == "llama-3.1-70b" and column.cells[0].source == "report"


def test_unknown_model_or_format_is_one_input_error(catalog: Catalog) -> None:
    fleet = fleet_of(node_machine(catalog, "a", [RTX_4090]))
    with pytest.raises(InputError, match="not a catalog model id"):
        fleet.can_run("llama-9-1t", catalog)
    with pytest.raises(InputError, match="unknown quantization"):
        fleet.can_run("llama-3.1-70b", catalog, quant="q0_banana")


# -- rendering ------------------------------------------------------------------------------------


@pytest.fixture
def small_fleet(tmp_path: Path, catalog: Catalog) -> Fleet:
    write_report(tmp_path, node_machine(catalog, "node01", [RTX_4090, RTX_4090]), catalog)
    write_report(tmp_path, node_machine(catalog, "node02", [RTX_4090, RTX_4090]), catalog)
    write_report(
        tmp_path,
        node_machine(catalog, "node03", [RTX_4090, RTX_4090], driver="550.54.14", cuda="12.4"),
        catalog,
    )
    write_report(tmp_path, node_machine(catalog, "<b>evil</b>", [RTX_3060], ram_gib=32), catalog, stem="evil")
    (tmp_path / "broken.json").write_text("{nope", encoding="utf-8")
    return load_fleet([tmp_path], catalog)


def test_render_table(small_fleet: Fleet, catalog: Catalog) -> None:
    columns = small_fleet.matrix(["llama-3.1-70b"], catalog)
    text = render_table(small_fleet, model_rows=columns)
    assert text.startswith("Fleet: 4 machines from 5 files (1 skipped)")
    assert "node  " in text and "GPUs" in text and "failing" in text
    assert "2 × RTX 4090" in text
    assert "driver: 570.124.04 on 3 of 4 nodes; older: node03 (550.54.14)" in text
    assert "llama-3.1-70b Q4_K_M" in text
    assert "Llama 3.1 70B at Q4_K_M:" in text
    assert "runs on the GPUs: 3 of 4: node01, node02, node03" in text
    assert "Skipped:" in text and "broken.json: not valid JSON" in text
    held = render_table(small_fleet, model_rows=small_fleet.report_matrix())
    assert "Models judged on every machine" in held and "llama-3.2-1b" in held


def test_render_json(small_fleet: Fleet, catalog: Catalog) -> None:
    data = json.loads(
        render_fleet_json(small_fleet, model_rows=small_fleet.matrix(["llama-3.1-70b"], catalog))
    )
    assert data["schema"] == FLEET_SCHEMA
    assert [n["name"] for n in data["nodes"]] == ["<b>evil</b>", "node01", "node02", "node03"]
    first = data["nodes"][1]
    assert first["gpus"] == "2 × RTX 4090" and first["failing"] == small_fleet.nodes[1].failing
    assert first["kind"] == "report" and first["created_at"] and first["app_version"]
    (driver,) = (d for d in data["drift"] if d["field"] == "driver")
    assert driver["nodes"] == [{"name": "node03", "value": "550.54.14", "relation": "older"}]
    (model,) = data["models"]
    assert model["model_id"] == "llama-3.1-70b" and model["quant"] == "Q4_K_M"
    assert {n["verdict"] for n in model["nodes"]} == {"fits", "does_not_fit"}
    assert len(data["problems"]) == 1 and data["files"] == 5


def test_render_html_is_self_contained_and_escaped(small_fleet: Fleet, catalog: Catalog) -> None:
    page = render_fleet_html(small_fleet, model_rows=small_fleet.matrix(["llama-3.1-70b"], catalog))
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<b>evil</b>" not in page and "&lt;b&gt;evil&lt;/b&gt;" in page
    assert "<script" not in page and "http://" not in page and "https://" not in page
    assert 'class="drift"' in page and "older: node03 (550.54.14)" in page
    assert 'class="does_not_fit"' in page and 'class="fits"' in page
    assert "Skipped files" in page
