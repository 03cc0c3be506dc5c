"""Where llama.cpp's Vulkan backend multiplies BF16 prompt weights on its FP32 scalar shaders instead of
BF16 cooperative matrices, by vendor, driver and whether it runs cooperative matrices on the GPU at all."""

from __future__ import annotations

import re

from rigcheck.core.catalog import Backend, GpuSpec
from rigcheck.core.estimate.speed.coopmat import vulkan_matrix_engines

#: llama.cpp's Vulkan backend multiplies BF16 weights in a prompt on matrix cores only where the driver
#: exposes BF16 cooperative matrices (VK_KHR_shader_bfloat16: ``device->coopmat_bf16_support``,
#: ggml-org/llama.cpp PR #12554); elsewhere its scalar matmul shaders promote BF16 to FP32 ("scalar path
#: promotes to float": ggml/src/ggml-vulkan/vulkan-shaders/vulkan-shaders-gen.cpp@0098fe6, FLOAT_TYPE for
#: bf16), so the multiply runs at the FP32 vector rate where every other weight type gets the FP16 rate of
#: its matrix-core or packed-FP16 shaders; the class's prefill efficiency is taken to hold on either path.
#: AMD: Mesa RADV and AMDVLK print ``bf16: 0`` on Strix Halo in every llama-bench log through build 9193
#: (kyuz0/amd-strix-halo-toolboxes benchmark/results/*vulkan*@d1a34be), AMD's Windows driver too
#: (llama.cpp PR #28155, Radeon 890M).
#: NVIDIA: drivers from R580 expose the extension (nihui/vkpeak issue #26, 580.88; llama.cpp PR #14707: the
#: game-ready driver before it printed 0, the Vulkan developer beta 1).
#: Intel: its Windows driver prints ``bf16: 0`` on every Arc in llama.cpp's logs through 2026 (Arc Pro B70 on
#: 32.0.101.8737, llama.cpp issue #22413; Arc B580 on 32.0.101.8425, issue #18402; Arc B390, PR #23056 at
#: build 9093 and PR #24407 at b9490), so on Windows its BF16 prompt GEMMs run the scalar FP32 shaders, off
#: the XMX engines; Mesa's ANV printed ``bf16: 0`` on Battlemage and Alchemist at build 6715
#: (geerlingguy/ai-benchmarks issues #27 and #29, October 2025) but ``bf16: 1`` on Lunar Lake at build 8997
#: (llama.cpp PR #22461: "For Linux we see no change since BF16 is already enabled by default"), and on
#: two Arc Pro B60 under Mesa 26.1.3 (PR #25051), so on Linux it depends on the Mesa release, which the
#: estimate is not told: not known. Mesa 25.2.0 (2025-08-06) is the first with it ("VK_KHR_shader_bfloat16
#: on anv/gfx125+", bminor/mesa-mesa docs/relnotes/25.2.0.rst@22194d5), where ANV reports
#: ``shaderBFloat16CooperativeMatrix = has_bfloat16 && has_cooperative_matrix``
#: (chaotic-cx/mesa-mirror src/intel/vulkan/anv_physical_device.c@c745bf3; Xe2 inherits ``has_bfloat16 =
#: true`` from XEHP_FEATURES, sailfishos-mirror/mesa src/intel/dev/intel_device_info.c@0cc89ca).
#: Whatever the driver, an Intel GPU on which llama.cpp runs no cooperative matrices (Alchemist, Xe2 before
#: build 5589: speed/coopmat.py) has no BF16 matrix path: ``ggml_vk_get_device`` looks for BF16 matrix shapes
#: only inside ``if (device->coopmat_support)`` (ggml-org/ggml src/ggml-vulkan/ggml-vulkan.cpp@d99724f), so
#: its BF16 prompts always run the scalar shaders. Other vendors: not known.
VULKAN_BF16_NVIDIA_DRIVER = 580
VULKAN_BF16_SOURCE = "ggml-org/llama.cpp vulkan-shaders-gen.cpp@0098fe6, 'scalar path promotes to float'"

#: Where an Intel GPU does run BF16 cooperative matrices (Xe2 under a Mesa with them), they are another
#: kernel family from the one ``SpeedFactor.prefill_coopmat_factor`` is fitted on.
#: ``ggml_vk_get_mul_mat_mat_pipeline`` gives F16 weights and every quantised type the FP16-accumulate
#: pipelines (``.f16acc``) for a default-precision op wherever the driver lists an FP16-accumulate matrix
#: shape; BF16 takes ``pipeline_matmul_bf16``, which ``ggml_vk_load_shaders`` builds with FP32 accumulators
#: only (``CREATE_MM(GGML_TYPE_BF16, pipeline_matmul_bf16, matmul_bf16, , ...)``: no f16acc variant) and
#: for BF16 activations only, so ``ggml_vk_mul_mat_q_f16`` first converts the micro-batch to BF16.
#: ``device->coopmat_bf16_support`` needs a BF16 × BF16 → FP32 shape equal to the FP16 one, while the
#: ``bf16: 1`` of llama-bench's device line is ``shaderBFloat16Type`` alone (``ggml_vk_print_gpu_info``): a
#: log does not tell which BF16 kernel ran. The one cited Intel BF16 prompt run on Linux (Lunar Lake,
#: ``bf16: 1``, ggml-org/llama.cpp PR #22461, build 8997) reads at the class's shader-core share, not the XMX
#: one, so these prompts are estimated at that share: no fitted matrix-engine factor for a family no cited
#: row shows faster. Read at ggml-org/ggml@6976b27 (its llama.cpp sync of 2026-05-01) and @d99724f
#: (2026-08-21), the same in both.
VULKAN_BF16_FAMILY_SOURCE = (
    "ggml-org/ggml@d99724f src/ggml-vulkan/ggml-vulkan.cpp, ggml_vk_get_mul_mat_mat_pipeline: "
    "pipeline_matmul_bf16 has FP32 accumulators only"
)


def bf16_on_scalar_shaders(
    backend: Backend | None,
    quant_id: str | None,
    vendor: str,
    nvidia_driver: str | None = None,
    os: str | None = None,
    *,
    matrix_engines: bool | None = None,
) -> bool | None:
    """Whether llama.cpp's Vulkan backend multiplies this GPU's BF16 prompt GEMMs on its FP32 scalar shaders
    (VULKAN_BF16_NVIDIA_DRIVER; ``os`` the machine's, which picks Intel's driver; ``matrix_engines`` whether
    the backend runs cooperative matrices on this Intel GPU at all, coopmat.vulkan_matrix_engines): False
    where it does not (another backend, another format, a driver with BF16 matrices), None where the
    driver's support is not known."""
    if backend != "vulkan" or quant_id != "bf16":
        return False
    if vendor == "amd":
        return True
    if vendor == "intel":
        return True if os == "windows" or matrix_engines is False else None
    if vendor == "nvidia":
        major = re.match(r"(\d+)", nvidia_driver or "")
        return None if major is None else int(major.group(1)) < VULKAN_BF16_NVIDIA_DRIVER
    return None


def intel_bf16_matrices(
    backend: Backend | None, quant_id: str | None, spec: GpuSpec | None, build: int | None
) -> bool:
    """Whether these prompt weights are BF16 on an Intel GPU whose Vulkan backend runs cooperative matrices
    (coopmat.vulkan_matrix_engines, build ``build``; None: a current one): the FP32-accumulate BF16 family
    where the driver offers BF16 matrices, the scalar shaders where it does not, both estimated at the class's
    shader-core share without the XMX factor (VULKAN_BF16_FAMILY_SOURCE)."""
    if quant_id is None or quant_id.lower() != "bf16":
        return False
    return vulkan_matrix_engines(backend, spec, build)
