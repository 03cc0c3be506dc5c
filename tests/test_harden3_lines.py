"""Issue 30 class 9: a line separator (LF, CR, NEL, U+2028, U+2029) in an untrusted string never forges a
line on the terminal, in every output path that shows such strings.

The strings come from files anyone can hand over: a GGUF file's name, folder, ``general.architecture``
and ``general.name``; a ``config.json``'s ``model_type``, ``architectures`` and folder; llama-bench JSON
for ``--measured``; a snapshot's notes (the one snapshot field that may hold line breaks); fleet file
names; a path that does not exist. Each goes through each command that prints it (text, JSON, Markdown
and HTML on stdout, warnings and errors on stderr): 36 cases, enumerated below.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from fakes.cli import run_cli
from fakes.gguf_files import write_gguf

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "machines"
BOX = FIXTURES / "rtx4090-64gb.json"
#: every line separator a terminal or a viewer may break a line at, each followed by a forged line
SEPARATORS = ("\n", "\r", "\x85", "\u2028", "\u2029", "\r\n")
FORGED = "".join(f"{sep}FORGED verdict: fits" for sep in SEPARATORS)
#: for names that become file or folder names (a file name cannot hold every separator on every OS,
#: but Linux takes all of these)
FORGED_NAME = "".join(f"{sep}FORGED" for sep in SEPARATORS)


def lines_of(text: str) -> list[str]:
    for sep in SEPARATORS:
        text = text.replace(sep, "\n")
    return text.split("\n")


def no_forged_line(text: str, where: str) -> None:
    forged = [line for line in lines_of(text) if line.lstrip().startswith("FORGED")]
    assert not forged, f"{where}: {forged[:3]}"


# -- the untrusted inputs ------------------------------------------------------------------------


def gguf_named(tmp: Path) -> str:
    path = tmp / f"model{FORGED_NAME}.gguf"
    write_gguf(path)
    return str(path)


def gguf_in_folder(tmp: Path) -> str:
    folder = tmp / f"folder{FORGED_NAME}"
    folder.mkdir()
    write_gguf(folder / "model.gguf")
    return str(folder / "model.gguf")


def gguf_architecture(tmp: Path) -> str:
    path = tmp / "arch.gguf"
    write_gguf(path, arch=f"llama{FORGED}")
    return str(path)


def gguf_general_name(tmp: Path) -> str:
    path = tmp / "named.gguf"
    write_gguf(path, meta=lambda writer: writer.add_string("general.basename", f"tiny{FORGED}"))
    return str(path)


def _config(tmp: Path, folder: str, **fields: object) -> str:
    target = tmp / folder
    target.mkdir()
    config: dict[str, object] = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128}
    config |= {"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100}
    config |= fields
    (target / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return str(target / "config.json")


def config_model_type(tmp: Path) -> str:
    return _config(tmp, "typed", model_type=f"llama{FORGED}")


def config_architectures(tmp: Path) -> str:
    return _config(tmp, "archs", architectures=[f"LlamaForCausalLM{FORGED}"])


def config_folder(tmp: Path) -> str:
    return _config(tmp, f"cfg{FORGED_NAME}")


MODELS: dict[str, Callable[[Path], str]] = {
    "GGUF file name": gguf_named,
    "GGUF folder name": gguf_in_folder,
    "GGUF general.architecture": gguf_architecture,
    "GGUF general.basename": gguf_general_name,
    "config.json model_type": config_model_type,
    "config.json architectures": config_architectures,
    "config.json folder name": config_folder,
}
MODEL_COMMANDS: dict[str, tuple[str, ...]] = {
    "fit": ("fit", "{model}", "--machine", str(BOX)),
    "fit --json": ("fit", "{model}", "--machine", str(BOX), "--json"),
    "estimate": ("estimate", "{model}"),
    "estimate --json": ("estimate", "{model}", "--json"),
}


def noted_snapshot(tmp: Path) -> str:
    data = json.loads(BOX.read_text(encoding="utf-8"))
    # a note may hold line breaks (LF, tab); the loader refuses CR, NEL and U+2028/2029 in it
    data["notes"] = [{"probe": "gpu", "level": "warning", "message": "hello\nFORGED verdict: fits\nFORGED"}]
    path = tmp / "noted.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


SNAPSHOT_COMMANDS: dict[str, tuple[str, ...]] = {
    "audit": ("audit", "--machine", "{snapshot}"),
    "audit --format markdown": ("audit", "--machine", "{snapshot}", "--format", "markdown"),
    "audit --format html": ("audit", "--machine", "{snapshot}", "--format", "html"),
    "audit --format json": ("audit", "--machine", "{snapshot}", "--format", "json"),
    "audit --json": ("audit", "--machine", "{snapshot}", "--json"),
    "fit --machine": ("fit", "llama-3.1-8b", "--machine", "{snapshot}"),
    "compat --machine": ("compat", "--machine", "{snapshot}"),
    "upgrade --machine": ("upgrade", "--machine", "{snapshot}", "--models", "llama-3.1-8b"),
    "fleet (a snapshot's notes)": ("fleet", "{snapshot}"),
}


def unnamed_fleet(tmp: Path) -> str:
    folder = tmp / "fleet"
    folder.mkdir()
    data = json.loads(BOX.read_text(encoding="utf-8"))
    data["host"]["hostname"] = None  # the node is named after its file
    (folder / f"node{FORGED_NAME}.json").write_text(json.dumps(data), encoding="utf-8")
    (folder / f"broken{FORGED_NAME}.json").write_text("{ not json", encoding="utf-8")  # a warning line
    return str(folder)


FLEET_COMMANDS: dict[str, tuple[str, ...]] = {
    "fleet": ("fleet", "{fleet}"),
    "fleet --format json": ("fleet", "{fleet}", "--format", "json"),
    "fleet --format html": ("fleet", "{fleet}", "--format", "html"),
    "fleet --models": ("fleet", "{fleet}", "--models", "llama-3.1-8b"),
}


def measured(tmp: Path) -> str:
    path = tmp / "bench.json"
    row = {"model_type": f"llama 8B Q4_K - Medium{FORGED}", "avg_ts": 120.0, "gpu_info": f"RTX{FORGED}"}
    row |= {"model_n_params": 8_030_261_248, "backends": f"CUDA{FORGED}", "n_prompt": 0, "n_gen": 128}
    path.write_text(json.dumps([row]), encoding="utf-8")
    return str(path)


OTHER: dict[str, Callable[[Path], tuple[str, ...]]] = {
    "fit --measured": lambda tmp: ("fit", "llama-3.1-8b", "--machine", str(BOX), "--measured", measured(tmp)),
    "a missing model path": lambda tmp: ("fit", str(tmp / f"missing{FORGED_NAME}.gguf")),
    "a missing snapshot": lambda tmp: ("audit", "--machine", str(tmp / f"gone{FORGED_NAME}.json")),
}


def _filled(
    argv: tuple[str, ...], key: str, make: Callable[[Path], str]
) -> Callable[[Path], tuple[str, ...]]:
    def build(tmp: Path) -> tuple[str, ...]:
        value = make(tmp)  # once: it writes the input
        return tuple(part.replace("{" + key + "}", value) for part in argv)

    return build


CASES: list[tuple[str, Callable[[Path], tuple[str, ...]]]] = []
for source, make in MODELS.items():
    for command, argv in MODEL_COMMANDS.items():
        CASES.append((f"{source} / {command}", _filled(argv, "model", make)))
for command, argv in SNAPSHOT_COMMANDS.items():
    CASES.append((f"snapshot notes / {command}", _filled(argv, "snapshot", noted_snapshot)))
for command, argv in FLEET_COMMANDS.items():
    CASES.append((f"fleet file names / {command}", _filled(argv, "fleet", unnamed_fleet)))
CASES += list(OTHER.items())


def test_the_cases_cover_every_source_and_path() -> None:
    assert len(CASES) == 7 * 4 + 9 + 4 + 3 == 44


@pytest.mark.parametrize(("name", "make"), CASES, ids=[name for name, _ in CASES])
def test_a_line_separator_never_forges_a_terminal_line(
    name: str, make: Callable[[Path], tuple[str, ...]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = make(tmp_path)
    code, out = run_cli(*argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err and code in (0, 1, 2), (code, err)
    if name.startswith(("snapshot notes", "fleet file names")) or "GGUF" in name or "config" in name:
        assert code == 0, f"{name}: the input was refused, so nothing was tested: {err}"
    no_forged_line(out, f"{name}: stdout")
    no_forged_line(err, f"{name}: stderr")
    if code == 0 and ("--json" in argv or argv[-2:] == ("--format", "json")):
        json.loads(out)  # still valid JSON, the separators escaped inside its strings
