"""Which Intel × Vulkan decode rows measured the mat-vec kernel a current llama.cpp build runs (issue 28).

llama.cpp's Vulkan backend decodes a quantised weight through one of two mat-vec shaders: the dequantising
float one (DMMV) or the integer-dot one (MMVQ: the activations quantised to Q8_1, 4×8-bit dot products).
``ggml_vk_should_use_mmvq`` picks per vendor and driver (ggml-org/llama.cpp
ggml/src/ggml-vulkan/ggml-vulkan.cpp@000651caaa5b97364a481345863770c2b898d2e7): on Intel, Mesa's ANV driver
takes MMVQ for every type but Q4_0 and Q5_1 once a row is at least 2,048 wide ("From tests on A770 Linux"),
while Intel's Windows driver (``vk::DriverId::eIntelProprietaryWindows``) keeps the float shader for all
but Q2/Q3/Q6 on Xe2 ("Intel Windows proprietary driver MMVQ performance for !Q2/Q3/Q6 is worse than fp16",
citing issue #17628 and PR #23056).

The K-quant MMVQ shaders came with PR #16900 ("Vulkan: MMVQ Integer Dot K-Quant and MUL_MAT_ID support",
https://github.com/ggml-org/llama.cpp/pull/16900, November 2025); issue #17628
(https://github.com/ggml-org/llama.cpp/issues/17628) places its arrival between builds 7189 and 7209 (an
Arc A770's decode on Windows fell from 53 to 42 t/s between them, "from b7189") and still reproduces it on
build 8051 (February 2026), so Intel's Windows driver ran MMVQ from b7190 through at least b8051, a path
current builds no longer take there. Two kinds of row therefore measure a kernel the estimator (which
models current builds) does not:

* Mesa rows at build 7189 or earlier: K-quants on the float shader, not MMVQ;
* Windows rows from build 7190 to 8051: K-quants on MMVQ, not the float shader.

They are kept out of the intel × vulkan decode fit (benchmarks/fit_points.py points_by_key). A row whose
build or driver its source does not name is taken to be current, as ``fit_speed.llama_cpp_build`` does.

Mesa itself moved Intel's compute speed under llama.cpp: on an Arc A770, Mesa 24.3 "fixed the low
performance" of 24.0 (0cc4m, https://github.com/ggml-org/llama.cpp/pull/10721, 2024-12-08; easyfab's
tables there: Llama 7B Q4_0 pp512 70 t/s on Mesa 24.0.9 against 373 on 24.3.1, same build). Rows on a Mesa
release before 24.3, as their source names it ("Mesa 24.2.8"), measure a driver no current distribution
ships, and are kept out of the intel × vulkan fits of both decode and prefill (``old_mesa``).

The prompt GEMMs on Xe2's XMX engines took their current tiles with PR #18178 ("vulkan: Warptile tuning for
Intel Xe2/Xe3", https://github.com/ggml-org/llama.cpp/pull/18178, opened 2025-12-18: 4× the workgroup size,
2× BM and BN "for Intel Xe2+ GPUs that support coopmat extension"). Build 7209 is the last one known to
precede it (issue #17628 runs it on 2025-11-30); a prompt row on cooperative matrices at that build or
earlier measured the old tiles and stays out of the fit (``old_xe2_tiles``); one between b7209 and the merge
is taken to be after it.
The driver is read from the row's host and build columns, else its locator and notes ("Windows"; "Mesa",
"Ubuntu", "Linux").
"""

from __future__ import annotations

import re

from measurements import Measurement

#: the last build before K-quant MMVQ (PR #16900): issue #17628, "from b7189"
LAST_FLOAT_MATVEC_BUILD = 7189
#: the last build issue #17628 reports MMVQ's slowdown on Intel's Windows driver on (b8051, 2026-02-14)
LAST_WINDOWS_MMVQ_BUILD = 8051
#: the last build known to precede PR #18178's Xe2 cooperative-matrix tiles (issue #17628, 2025-11-30)
LAST_PRE_XE2_TILES_BUILD = 7209
#: the Mesa release that fixed the A770's compute performance under llama.cpp (PR #10721's thread)
MESA_COMPUTE_FIX = (24, 3)
_MESA_VERSION = re.compile(r"\bmesa (\d+)\.(\d+)", re.IGNORECASE)

_WINDOWS = re.compile(r"\bwindows\b|\bwin ?1[01]\b", re.IGNORECASE)
_MESA = re.compile(r"\bmesa\b|\bubuntu\b|\blinux\b|\bfedora\b|\barch linux\b|\bdebian\b", re.IGNORECASE)


def intel_vulkan_driver(row: Measurement) -> str | None:
    """ "windows" or "mesa" as the row's host and build columns name the system, else its locator and notes;
    None where they name neither (or both)."""
    for text in (f"{row.host} {row.build}", f"{row.locator} {row.notes}"):
        windows, mesa = bool(_WINDOWS.search(text)), bool(_MESA.search(text))
        if windows != mesa:
            return "windows" if windows else "mesa"
    return None


def old_intel_matvec(row: Measurement, build: int | None) -> bool:
    """Whether an Intel × Vulkan decode row ran a mat-vec kernel current builds do not run on its driver
    (see the module docstring); False for other rows and where the build or the driver is not known."""
    if row.backend != "vulkan" or row.device_class != "intel-discrete" or row.metric != "decode_tokens_per_s":
        return False
    if build is None:
        return False
    driver = intel_vulkan_driver(row)
    if driver == "mesa":
        return build <= LAST_FLOAT_MATVEC_BUILD
    if driver == "windows":
        return LAST_FLOAT_MATVEC_BUILD < build <= LAST_WINDOWS_MMVQ_BUILD
    return False


def old_mesa(row: Measurement) -> bool:
    """Whether an Intel × Vulkan speed row ran on a Mesa release before MESA_COMPUTE_FIX, as its host or
    build column names it; False for other rows and where no Mesa release is named."""
    if row.backend != "vulkan" or row.device_class != "intel-discrete" or not row.speed:
        return False
    found = _MESA_VERSION.search(f"{row.host} {row.build}")
    return found is not None and (int(found.group(1)), int(found.group(2))) < MESA_COMPUTE_FIX


def old_xe2_tiles(row: Measurement, build: int | None, coopmat: bool) -> bool:
    """Whether an Intel × Vulkan prompt row on cooperative matrices (``coopmat``: an Xe2 GPU on a build that
    enables them) ran before PR #18178's tiles; False where the build is not known."""
    if (
        row.backend != "vulkan"
        or row.device_class != "intel-discrete"
        or row.metric != "prefill_tokens_per_s"
    ):
        return False
    return coopmat and build is not None and build <= LAST_PRE_XE2_TILES_BUILD


def old_intel_vulkan_path(row: Measurement, build: int | None, coopmat: bool = False) -> bool:
    """Whether a row stays out of the intel × vulkan fits: an old mat-vec kernel, an old Mesa, or prompt
    GEMMs on the Xe2 tiles before PR #18178."""
    return old_intel_matvec(row, build) or old_mesa(row) or old_xe2_tiles(row, build, coopmat)
