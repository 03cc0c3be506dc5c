"""The fourth audit pass (docs/compat-audit.md, "Debatable, settled"): one regression test per class of finding
that was debatable on the 22 machines and is now decided by a primary source the catalog row quotes.

Each test asserts what the user reads on the machine where the debatable finding was seen, and a neighbour that
must stay as it was (a Turing card keeps xformers' wheel, an MI300X keeps the ROCm wheel, a DGX Spark is not
given Jetson's routes).
"""

from __future__ import annotations

from datetime import date

import pytest

from fakes.machines import audit_machine
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.compat import Finding, check_compat

TODAY = date(2026, 12, 1)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


machine = audit_machine


def find(name: str, framework: str, catalog: Catalog) -> Finding:
    matches = [f for f in check_compat(machine(name), catalog, TODAY) if f.framework == framework]
    matches = [f for f in matches if f.gpu_index in (0, None)]
    assert len(matches) == 1, (name, framework, matches)
    return matches[0]


@pytest.mark.parametrize("name", ["pascal", "gtx1060-cu128"])
def test_xformers_wheels_have_no_pascal_kernels(catalog: Catalog, name: str) -> None:
    """xformers 0.0.35's wheels are built with TORCH_CUDA_ARCH_LIST '7.5 8.0+PTX' (+8.0 9.0a on CUDA 12)."""
    found = find(name, "xformers", catalog)
    assert found.status == "fail" and "7.5" in found.reason
    assert "wheels_build.yml@" in (found.source or "")
    assert "TORCH_CUDA_ARCH_LIST=6.1" in (found.fix or "") and "sdpa" in (found.fix or "")


def test_xformers_wheel_still_fits_a_turing_card(catalog: Catalog) -> None:
    assert find("turing", "xformers", catalog).status in ("ok", "warn")
    assert "7.5" in find("ada", "xformers", catalog).reason


@pytest.mark.parametrize(("name", "gfx"), [("rdna3", "gfx1100"), ("strix-halo-rocm7", "gfx1151")])
def test_xformers_rocm_wheel_is_built_for_mi200_mi300_only(catalog: Catalog, name: str, gfx: str) -> None:
    """HIP_ARCHITECTURES 'gfx90a gfx942' at v0.0.35: no kernel for another gfx target."""
    found = find(name, "xformers", catalog)
    assert found.status == "fail" and gfx in found.reason
    assert "gfx90a" in (found.fix or "") and "gfx942" in (found.fix or "")
    mi300x = find("mi300x", "xformers", catalog)
    assert mi300x.status == "warn" and "experimental" in mi300x.reason


def test_flash_attention_on_rdna35_says_what_is_untested(catalog: Catalog) -> None:
    found = find("strix-halo-rocm7", "flash-attn-2", catalog)
    assert found.status == "fail" and "gfx1151" in found.reason
    assert "ROCm/flash-attention#165" in (found.fix or "") and "untested" in (found.fix or "")
    assert "sdpa" in (found.fix or "")


@pytest.mark.parametrize("framework", ["flash-attn-2", "transformer-engine", "exllamav2", "unsloth"])
def test_source_builds_on_jetson_orin_warn_and_name_the_jetson_build(
    catalog: Catalog, framework: str
) -> None:
    """No L4T wheel upstream; jetson-containers builds each for the device."""
    found = find("jetson-agx-orin-jp62", framework, catalog)
    assert found.status == "warn", found
    assert "jetson-containers" in (found.fix or "")
    assert "jetson-containers" in (found.source or "") or "exllamav2" in (found.source or "")


@pytest.mark.parametrize("framework", ["flash-attn-2", "transformer-engine", "exllamav2", "unsloth"])
def test_dgx_spark_is_not_given_jetson_routes(catalog: Catalog, framework: str) -> None:
    found = find("dgx-spark", framework, catalog)
    assert "jetson-containers" not in (found.fix or "") + (found.side_effect or "")


def test_thor_routes_name_what_nvidia_documents(catalog: Catalog) -> None:
    fa4 = find("jetson-thor-jp7", "flash-attn-4", catalog)
    assert fa4.status == "warn" and "sm_110" in (fa4.fix or "") and "jetson-containers" in (fa4.fix or "")
    sglang = find("jetson-thor-jp7", "sglang", catalog)
    assert sglang.status == "warn" and "nvcr.io/nvidia/sglang:26.01-py3" in (sglang.fix or "")
    assert sglang.command and "sglang==" in sglang.command  # the second route stays copyable
    trt = find("jetson-thor-jp7", "tensorrt-llm", catalog)
    assert trt.status == "warn" and "roadmap" in trt.reason


def test_vllm_on_an_older_driver_names_both_routes_precisely(catalog: Catalog) -> None:
    """vLLM 0.33.0 pins torch 2.14.0 (CUDA 13 on PyPI); its install page's CUDA 12.9 default has no torch 2.14."""
    for name in ("turing", "ada", "rtx5090-driver570-cu124"):
        found = find(name, "vllm", catalog)
        assert found.status == "fail"
        fix = found.fix or ""
        assert "R580" in fix and "cu126, cu130, cu132" in fix and "+cu129" in fix
        assert "ships a working set" not in fix  # a container does not bring the driver


def test_vllm_on_jetpack6_marks_its_secondary_source(catalog: Catalog) -> None:
    found = find("jetson-agx-orin-jp62", "vllm", catalog)
    note = found.side_effect or ""
    assert "jetson-containers" in note and "secondary" in note


def test_deepspeed_on_a_mac_uses_its_mps_accelerator(catalog: Catalog) -> None:
    found = find("m4-max", "deepspeed", catalog)
    assert found.status == "warn"
    assert found.source == "https://github.com/deepspeedai/DeepSpeed/pull/8293"
    assert "on the CPU, not the Apple GPU" not in found.reason
    assert "ZeRO" in (found.fix or "")


def test_containers_on_windows_name_the_wsl2_backend(catalog: Catalog) -> None:
    found = find("rtx5060ti-windows", "containers", catalog)
    assert found.status == "ok" and "WSL 2 backend" in (found.side_effect or "")
    linux = find("ada", "containers", catalog)
    assert "WSL 2" not in (linux.side_effect or "")


def test_tensorrt_llm_under_wsl_says_what_its_release_notes_name(catalog: Catalog) -> None:
    found = find("wsl2-rtx4070", "tensorrt-llm", catalog)
    assert found.status == "warn" and "WSL" in found.reason and "RTX 50" in found.reason
    assert "WSL" not in find("ada", "tensorrt-llm", catalog).reason


def test_bitsandbytes_rocm_wheel_falls_back_within_the_major_version(catalog: Catalog) -> None:
    """cextension.get_cuda_bnb_library_path: exact, else nearest same-major library with a warning."""
    for name in ("rdna3", "mi300x"):  # ROCm 6.2 / 6.3: the wheel's 6.4 library, with a warning
        found = find(name, "bitsandbytes", catalog)
        assert found.status == "warn" and "6.4" in found.reason
        assert "cextension.py@" in (found.source or "") and "loading ROCm 6.4 instead" in (found.fix or "")
    for name in ("rx9070xt-rocm64", "strix-halo-rocm7"):  # an exact library
        assert find(name, "bitsandbytes", catalog).status == "ok"
