"""Whether llama.cpp's Vulkan backend multiplies a GPU's prompt matrices on its matrix engines.

llama.cpp's Vulkan backend runs its matrix-matrix shaders on cooperative matrices (VK_KHR_cooperative_matrix,
"matrix cores: KHR_coopmat" in its device line) where the driver exposes the extension, except on Intel,
where ``ggml_vk_khr_cooperative_matrix_support`` allows it only on Xe2 and later ("Only allowing Xe2/Xe3 GPU
and integrated Xe GPUs at the moment since older hardware (ex. Arc A770) has performance regressions";
the integrated Xe1 exception is the Xe-LPG Plus iGPU on Intel's Windows driver only):
ggml-org/llama.cpp ggml/src/ggml-vulkan/ggml-vulkan.cpp@000651caaa5b97364a481345863770c2b898d2e7. The
architecture is told by the driver's minimum subgroup size (16 on Xe2, SIMD8 before it,
``get_device_architecture``). The Intel rule came with ggml-org/llama.cpp PR #14001 (merged June 2025,
commit 669c13e), whose own runs print build 5589 with it and 5583 without: an Arc B580 read a 2B model's
512-token prompt 3.3 times faster on Windows, an Arc A770 no faster.

So on an Intel Xe2 card (Battlemage: Arc B570/B580, Arc Pro B60/B70; Lunar Lake's Arc 130V/140V) the
prompt GEMMs run on its XMX engines, on Alchemist (Arc A-series) on its vector ALUs: the class's prefill
efficiency, fitted against the FP32 peak the catalog lists for Intel cards (its XMX figures, INT8 TOPS where
cited, stand 16-17.6 × FP32 on every Xe2 card: speed/intel_paths.py), is the
shader-core one, and ``SpeedFactor.prefill_coopmat_factor`` (fitted on Xe2 rows, benchmarks/fit_speed.py)
what the matrix engines add. Other vendors' drivers are not ruled on here: their catalog figures are
already the matrix-unit peaks (speed.prefill_peak_tflops).
"""

from __future__ import annotations

from rigcheck.core.catalog import Backend, GpuSpec

#: the first llama.cpp build that enables cooperative matrices on Intel Xe2 (PR #14001: its "after" runs
#: print build 5589, master without it 5583)
INTEL_COOPMAT_BUILD = 5589
#: Intel architectures whose minimum subgroup size is 16 (the catalog's ``architecture`` names them)
INTEL_COOPMAT_ARCHS = ("xe2", "xe3")
COOPMAT_SOURCE = (
    "ggml-org/llama.cpp ggml-vulkan.cpp@000651c, ggml_vk_khr_cooperative_matrix_support (Intel: Xe2 and "
    "later, since PR #14001, build 5589)"
)


def vulkan_matrix_engines(backend: Backend | None, spec: GpuSpec | None, build: int | None = None) -> bool:
    """Whether llama.cpp's Vulkan backend runs this Intel GPU's prompt GEMMs on its matrix engines: an Xe2
    or later GPU on build ``build`` (None: a current one). False for other backends and vendors (their
    catalog peaks already are the matrix-unit rates) and for Intel architectures before Xe2."""
    if backend != "vulkan" or spec is None or spec.vendor != "intel":
        return False
    if build is not None and build < INTEL_COOPMAT_BUILD:
        return False
    arch = (spec.architecture or "").lower().replace(" ", "")
    return any(a in arch for a in INTEL_COOPMAT_ARCHS)
