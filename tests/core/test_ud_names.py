"""Unsloth Dynamic and QAT format names the catalog has no entry for (core/estimate/ud_names.py): how each
resolves, how it is sized against the published files, and the note a rule-less UD name carries."""

from __future__ import annotations

import pytest

from rigcheck.core.catalog import load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.memory import Request, estimate_memory, resolve_quant
from rigcheck.core.estimate.ud_names import qat_key, qat_variant, strip_qat, ud_base
from rigcheck.core.models.resolve import from_catalog

CATALOG = load_catalog(use_overlay=False)
GIB = 2**30


def _weights(model_id: str, quant: str) -> int:
    spec = CATALOG.model(model_id)
    assert spec is not None
    return estimate_memory(from_catalog(spec), Request(quant=quant, context=512), CATALOG).total("weights")


@pytest.mark.parametrize(
    ("name", "base"),
    [
        ("ud-q4_k_m", "q4_k_m"),
        ("ud-iq2_m", "iq2_m"),
        ("ud-iq4_xs", "iq4_xs"),
        ("ud-q6_k_xl", "q6_k"),
        ("ud-q5_k_xl", "q5_k_m"),
        ("ud-q8_k_xl", "q8_0"),
        ("q4_k_m", None),
        ("ud-", None),
        ("ud-q7_k_xl", None),
    ],
)
def test_a_ud_name_starts_from_its_llama_cpp_type(name: str, base: str | None) -> None:
    assert ud_base(name) == base


def test_ud_names_the_catalog_lacks_resolve_over_their_base() -> None:
    for name in ("UD-Q4_K_M", "UD-IQ2_M", "UD-IQ3_XXS", "UD-IQ4_XS", "UD-IQ4_NL", "UD-Q6_K_XL", "UD-Q4_K_S"):
        quant = resolve_quant(CATALOG, name)
        assert quant.id == name.lower()
        assert quant.name == name
        assert quant.kind == "gguf"


def test_catalog_entries_win_over_the_name_rule() -> None:
    assert resolve_quant(CATALOG, "UD-Q4_K_XL") is CATALOG.quant("ud-q4_k_xl")
    assert resolve_quant(CATALOG, "UD-IQ1_S") is CATALOG.quant("ud-iq1_s")


def test_a_ud_name_over_no_gguf_type_is_still_refused() -> None:
    with pytest.raises(InputError, match="UD-<type>"):
        resolve_quant(CATALOG, "UD-Q2_K_L")
    with pytest.raises(InputError):
        resolve_quant(CATALOG, "UD-BF16X")


def test_ud_q4_k_m_takes_the_ud_q4_k_xl_rule_and_meets_its_published_file() -> None:
    """PMZFX/intel-arc-pro-b70-benchmarks data/llm/intel-arc-pro-b70-qwen3-6-35b-a3b-ud-q4-k-m-sycl.json@90f6948:
    file_size_gib 20.61; plain Q4_K_M lands 5.6% under it. The XL rule stands for the M file (assumed), so
    it lands over it: +2.9%, +3.2% since the 40 routers (256 × 2048) count at the F32 the file holds them in
    (core/estimate/router_bytes.py)."""
    ud = _weights("qwen3.6-35b-a3b", "UD-Q4_K_M")
    assert ud == _weights("qwen3.6-35b-a3b", "UD-Q4_K_XL")
    assert abs(ud / (20.61 * GIB) - 1) < 0.035
    assert _weights("qwen3.6-35b-a3b", "Q4_K_M") / (20.61 * GIB) - 1 < -0.05


def test_a_rule_less_ud_name_is_sized_as_its_base_with_an_assumed_note() -> None:
    spec = CATALOG.model("gemma-4-26b-a4b")
    assert spec is not None
    est = estimate_memory(from_catalog(spec), Request(quant="UD-IQ4_XS", context=512), CATALOG)
    plain = estimate_memory(from_catalog(spec), Request(quant="IQ4_XS", context=512), CATALOG)
    assert est.total("weights") == plain.total("weights")
    assert any("UD-IQ4_XS" in n and "(assumed)" in n for n in est.notes)
    assert not any("(assumed)" in n for n in plain.notes)
    ruled = estimate_memory(from_catalog(spec), Request(quant="UD-Q4_K_M", context=512), CATALOG)
    assert not any("(assumed)" in n for n in ruled.notes)
    assert "UD-Q4_K_XL per-role rule" in (ruled.terms[0].source or "")


@pytest.mark.parametrize(
    ("name", "qat_id"),
    [
        ("UD-Q4_K_XL-QAT", "ud-qat-q4_0"),
        ("qat-UD-Q4_K_XL", "ud-qat-q4_0"),
        ("ud-q4_k_xl_qat", "ud-qat-q4_0"),
        ("Q4_0-QAT", "q4_0-qat"),
        ("qat", "q4_0-qat"),
        ("qat-q4_0", "q4_0-qat"),
    ],
)
def test_a_qat_release_is_said_by_its_format_name(name: str, qat_id: str) -> None:
    assert resolve_quant(CATALOG, name).id == qat_id


def test_qat_words_are_whole_words() -> None:
    assert strip_qat("ud-q4_k_xl-qat") == ("ud-q4_k_xl", True)
    assert strip_qat("q4_k_m") == ("q4_k_m", False)
    assert qat_key("q8_0-qat") is None


def test_a_model_name_that_says_qat_makes_its_q4_file_the_qat_layout() -> None:
    assert qat_variant("UD-Q4_K_XL", "unsloth/gemma-4-26B-A4B-it-qat-GGUF") == "UD-Q4_K_XL-QAT"
    assert qat_variant("Q4_0", "ggml-org/gemma-3-4b-it-qat-GGUF") == "Q4_0-QAT"
    assert qat_variant("Q8_0", "gemma-4-26B-A4B-it-qat") == "Q8_0"
    assert qat_variant("UD-Q4_K_XL", "gemma-4-26B-A4B-it") == "UD-Q4_K_XL"
    assert qat_variant("UD-Q4_K_XL-QAT", "gemma-4-31B-it-qat") == "UD-Q4_K_XL-QAT"


@pytest.mark.parametrize(
    ("model_id", "published", "where"),
    [
        # https://unsloth.ai/docs/models/gemma-4/qat: "26B A4B | 14.2 GB" (decimal GB, three figures)
        ("gemma-4-26b-a4b", 14.2e9, "Unsloth Gemma 4 QAT page"),
        # https://www.antonkrug.eu/posts/blog/gemma4-qat.html: "gemma4 31B Q4_0 | 16.09 GiB | 30.70 B"
        ("gemma-4-31b", 16.09 * GIB, "llama-bench -hf unsloth/gemma-4-31B-it-qat-GGUF:UD-Q4_K_XL"),
    ],
)
def test_qat_ud_files_are_q4_0_throughout(model_id: str, published: float, where: str) -> None:
    qat = _weights(model_id, "UD-Q4_K_XL-QAT")
    assert abs(qat / published - 1) < 0.01, where
    # sized as the K-quant mix its name says, the file would be 7-18% larger than it is
    assert _weights(model_id, "UD-Q4_K_XL") / published - 1 > 0.05


def test_the_rx_9070_xt_runs_the_qat_file_of_gemma_4_26b_on_its_gpu() -> None:
    from rigcheck.core.estimate.fit import fit
    from rigcheck.core.machine import CPU, Machine, Memory
    from rigcheck.core.whatif import simulate

    spec = CATALOG.model("gemma-4-26b-a4b")
    gpu = CATALOG.gpu("amd-radeon-rx-9070-xt")
    assert spec is not None and gpu is not None
    machine = simulate(
        Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * GIB), gpus=()), [gpu], 64
    )
    model = from_catalog(spec)
    for context in (640, None):  # llama-bench's pp512 + tg128, and the default context
        qat = fit(model, machine, Request(quant="UD-Q4_K_XL-QAT", context=context), CATALOG, live=False)
        assert qat.verdict != "does_not_fit", context
        assert qat.placement is not None
        assert qat.placement.offload == "none" and qat.placement.cpu_expert_layers == 0, context


@pytest.mark.parametrize(
    ("quant", "file_type"),
    [("UD-Q4_K_XL", "q4_k_m"), ("UD-Q8_K_XL", "q8_0"), ("UD-Q4_K_XL-QAT", "q4_0"), ("UD-IQ2_M", "iq2_m")],
)
def test_a_ud_or_qat_name_over_the_files_own_type_takes_the_header(quant: str, file_type: str) -> None:
    """A UD file's header says its base file type (general.file_type: 15 for UD-Q4_K_XL, 2 for the QAT
    files): asked by its UD or QAT name, the file's tensor bytes size it, not the role rule, and no
    'assumed' note is added."""
    from dataclasses import replace

    from rigcheck.core.models.spec import WeightsInfo

    spec = CATALOG.model("gemma-4-26b-a4b")
    assert spec is not None
    header = WeightsInfo(total_bytes=14_198_000_000, quant_id=file_type, files=("gemma-4-26B-A4B.gguf",))
    model = replace(from_catalog(spec), weights=header)
    est = estimate_memory(model, Request(quant=quant, context=512), CATALOG)
    weights = next(t for t in est.terms if t.category == "weights")
    assert weights.provenance == "file" and weights.bytes == 14_198_000_000
    assert not any("(assumed)" in n for n in est.notes)
    other = estimate_memory(model, Request(quant="Q8_0" if file_type != "q8_0" else "Q4_K_M"), CATALOG)
    assert next(t for t in other.terms if t.category == "weights").provenance != "file"


@pytest.mark.parametrize(
    ("quant", "ref"),
    [
        ("UD-Q4_K_XL-QAT", "unsloth/gemma-4-26B-A4B-it-qat-GGUF:UD-Q4_K_XL"),
        ("UD-Q4_K_M", "unsloth/gemma-4-26B-A4B-it-GGUF:UD-Q4_K_M"),
        ("UD-Q4_K_XL", "unsloth/gemma-4-26B-A4B-it-GGUF:UD-Q4_K_XL"),
        ("Q4_K_M", "ggml-org/gemma-4-26B-A4B-it-GGUF:Q4_K_M"),
    ],
)
def test_run_it_names_the_repository_and_file_that_hold_the_format(quant: str, ref: str) -> None:
    from fakes.cli import run_cli

    code, out = run_cli(
        "fit", "gemma-4-26b-a4b", "--quant", quant, "--gpu", "nvidia-h100-sxm5", "--ram-gb", "64"
    )
    assert code == 0, out
    assert f"-hf {ref} " in out, out


def test_ud_names_pick_unsloths_repository_only() -> None:
    from rigcheck.core.estimate.ud_names import file_tag, gguf_repo

    repos = ("ggml-org/x-GGUF", "unsloth/x-GGUF", "unsloth/x-it-qat-GGUF")
    assert gguf_repo("ud-q4_k_m", repos) == "unsloth/x-GGUF"
    assert gguf_repo("ud-qat-q4_0", repos) == "unsloth/x-it-qat-GGUF"
    assert gguf_repo("q4_k_m", repos) is None
    assert gguf_repo("ud-q4_k_m", ("ggml-org/x-GGUF",)) is None
    assert file_tag("ud-qat-q4_0", "UD-Q4_K_XL-QAT") == "UD-Q4_K_XL"
    assert file_tag("ud-q4_k_m", "UD-Q4_K_M") == "UD-Q4_K_M"


@pytest.mark.parametrize(
    ("typed", "qat"),
    [
        ("unsloth/gemma-4-26B-A4B-it-qat-GGUF:UD-Q4_K_XL", True),
        ("unsloth/gemma-4-26B-A4B-it-GGUF:UD-Q4_K_XL", False),
    ],
)
def test_an_unreachable_qat_repository_says_how_to_ask_for_its_files(
    monkeypatch: pytest.MonkeyPatch, typed: str, qat: bool
) -> None:
    from rigcheck.core.models import hub
    from rigcheck.core.models.resolve import resolve_model

    def unreachable(text: str, **_: object) -> object:
        raise InputError(text, "cannot reach the Hugging Face hub")

    monkeypatch.setattr(hub, "load_hub_model", unreachable)
    with pytest.raises(InputError) as err:
        resolve_model(typed, CATALOG)
    message = str(err.value)
    assert "offline as 'gemma-4-26b-a4b'" in message
    assert ("--quant UD-Q4_K_XL-QAT" in message) == qat
