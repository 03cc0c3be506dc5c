"""Which matrix path llama.cpp runs an Intel Arc GPU's prompt GEMMs through, by backend, Xe generation and
weight type.

Read from ggml's own sources as ggml-org/ggml syncs them from llama.cpp (GGML_SOURCE, August 2026):

Vulkan (``src/ggml-vulkan/ggml-vulkan.cpp``). ``ggml_vk_load_shaders`` builds one family of matmul pipelines
per device: the NVIDIA-only VK_NV_cooperative_matrix2 family (``device->coopmat2``; no Intel driver exposes
the extension), else the VK_KHR_cooperative_matrix family (``device->coopmat_support``), else the FP16 one.
``ggml_vk_khr_cooperative_matrix_support`` leaves coopmat on for Intel only on Xe2 and later (Battlemage,
Lunar Lake; speed/coopmat.py). Its coopmat family dequantises every weight type (legacy, K-, IQ- and FP4
quants, F16) inside the shader and multiplies FP16 tiles on the XMX engines; it builds no integer-dot MMQ
pipelines (``pipeline_dequant_mul_mat_mat_q8_1`` stays empty), so ``ggml_vk_mul_mat_q_f16`` finds no Q8_1
pipeline and takes the FP16 one. BF16 joins it only where the driver has BF16 cooperative matrices
(``coopmat_bf16_support``; speed.bf16_on_scalar_shaders): the BF16 family (``matmul_bf16`` cm1, BF16 tiles)
where the driver lists a BF16 × BF16 → FP32 matrix shape, else the scalar shaders that promote BF16 to FP32,
with scalar tile sizes. Mesa's ANV lists one from Mesa 25.2 on Xe-HPG and later (MESA_BF16_SOURCE); Intel's
Windows driver lists none. The BF16 family has FP32 accumulators only, where the others take the
FP16-accumulate pipelines the XMX factor is fitted on, so BF16 keeps the shader-core share on either path
(speed/vulkan_bf16.py, VULKAN_BF16_FAMILY_SOURCE). On Alchemist (Xe-HPG, coopmat off) the FP16
family runs on the vector engines: integer-dot MMQ (activations quantised to Q8_1, 4×8-bit dot products) for
Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, MXFP4, Q2_K-Q6_K (and IQ3_S since PR #28822) where the driver reports
accelerated int8 dot products (``int dot: 1`` in llama-bench's device line; Intel's Windows driver printed 0
on an A770 in ggml-org/llama.cpp PR #14001), and FP16 dequantising shaders for the rest (other IQ types,
F16) and where it does not. Both run on the shader cores, so one fitted share (the class's prefill
efficiency against the FP32 peak) stands for both: no measured Alchemist row runs an IQ type to fit another,
though PR #28822 measured the FP16 path about 1.5× slower on short prompts (FP16_SHADER_SOURCE), which the
explanation says.

A prompt's routed-expert GEMMs (MUL_MAT_ID, ``ggml_vk_mul_mat_id_q_f16``) take the same family: on Xe2 the
cooperative-matrix ``matmul_id_subgroup_<type>_f16`` shaders, which gather each expert's tokens inside one
dispatch (subgroup ballots), with no Q8_1 integer-dot ID pipelines; on Alchemist the integer-dot ones where
the driver has int8 dot products. ``ggml_vk_guess_matmul_id_pipeline`` picks the tile from the expert's rows
and the micro-batch's token count (``nei1``, not the tokens per expert), so a 512-token prompt on Xe2 runs the
large 128 × 128 tile (``mul_mat_id_l`` is on for Intel only with cooperative matrices), each tile covering up
to 128 of one expert's tokens (micro-batch × k / E: 16-64 for current MoE models), and Alchemist the 64 × 64
one. The MoE share is fitted (speed.prefill_path), not derived from these tiles: tile fill explains neither
generation's rows (Xe2's one MoE row runs above it, Alchemist's below). It is a ratio within one kernel
family, so Xe2 takes ``prefill_coopmat_moe_factor`` (the dense coopmat tiles are the 512-invocation ones tuned
for Intel, the matmul_id ones the generic 128-invocation ``l_warptile_mmqid``), not the Alchemist rows'
``prefill_moe_factor``; with no fitted Xe2 MoE rows it is borrowed from the class whose Vulkan MoE rows run
the same KHR_coopmat matmul_id shaders (benchmarks/prefill_fit.py BORROWED_COOPMAT_MOE).

SYCL (``src/ggml-sycl/ggml-sycl.cpp``). ``ggml_sycl_supports_mmq`` returns false for every type ("TODO:
accuracy issues in MMQ"), so a prompt micro-batch (too wide for the DMMV/MMVQ mat-vec kernels) reaches
``ggml_sycl_op_mul_mat_sycl``: F16 and quantised weights are converted to FP16 (``to_fp16_sycl``) and
multiplied by oneDNN or oneMKL in FP16, on the XMX engines of Alchemist and Battlemage alike, in a build with
GGML_SYCL_F16 (off by default: then they are converted to FP32 for an FP32 GEMM; the fitted rows are F16
builds, SYCL_F16_SOURCE); BF16 runs oneDNN's BF16 GEMM in place from b8888 on, the FP32 way before
(speed/sycl_bf16.py). A mixture of experts' prompt runs each routed expert through that same call, one at
a time (speed/sycl_experts.py).

XMX peaks: Intel lists INT8 TOPS per card (the catalog's ``int8_tops``, where a readable source gives it);
on every Xe2 card that has one it is 16-17.6 × the FP32 figure (Arc Pro B70 367 / 22.94, Arc Pro B60
197 / 12.29, Arc B580 233 / 13.67, Arc B570 203 / 11.52), so the fitted matrix-engine factor over the
shader-core share (``SpeedFactor.prefill_coopmat_factor``) is one share of the XMX peak for all of them to
within about 10%.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rigcheck.core.catalog import Backend, GpuSpec
from rigcheck.core.estimate.speed.coopmat import vulkan_matrix_engines
from rigcheck.core.estimate.speed.kernels import ggml_type
from rigcheck.core.estimate.speed.vulkan_bf16 import VULKAN_BF16_FAMILY_SOURCE
from rigcheck.core.said import Text, say

GGML_SOURCE = "ggml-org/ggml@d99724f"
VULKAN_SOURCE = (
    f"{GGML_SOURCE} src/ggml-vulkan/ggml-vulkan.cpp, ggml_vk_load_shaders and ggml_vk_mul_mat_q_f16"
)
SYCL_SOURCE = (
    f"{GGML_SOURCE} src/ggml-sycl/ggml-sycl.cpp, ggml_sycl_supports_mmq and ggml_sycl_op_mul_mat_sycl"
)

#: ``ggml_sycl_op_mul_mat_sycl`` takes its FP16 (XMX) GEMM only when built with GGML_SYCL_F16 (``use_fp16``),
#: an option that is OFF unless the build turns it on; the fitted SYCL rows name builds with it on
#: (PMZFX/intel-arc-pro-b70-benchmarks llm-benchmarks.md: "F16 accumulation (-DGGML_SYCL_F16=ON)")
SYCL_F16_SOURCE = f"{GGML_SOURCE} CMakeLists.txt, option(GGML_SYCL_F16 ... OFF)"

#: the weight types whose integer-dot MMQ pipelines the Vulkan FP16 family builds (CREATE_MMQ ... q8_1 at
#: GGML_SOURCE), and IQ3_S since ggml-org/llama.cpp PR #28822 ("vulkan: add IQ3_S MMQ matmul kernels",
#: merged September 2026, after GGML_SOURCE's sync)
VULKAN_MMQ_TYPES = frozenset(
    {"Q2_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "MXFP4", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ3_S"}
)
#: PR #28822 on an Arc A770 (Mesa 26.0.8): the FP16 dequantising path it replaced for IQ3_S ran a 64-token
#: prompt 1.51× and a 128-token one 1.47× slower than the new MMQ kernels (its pp512 cell was not read)
FP16_SHADER_SOURCE = "https://github.com/ggml-org/llama.cpp/pull/28822"

#: Mesa's ANV offers BF16 cooperative matrices from release 25.2.0 (2025-08-06) on gfx12.5 and later, Xe2
#: included: "VK_KHR_shader_bfloat16 on anv/gfx125+" (bminor/mesa-mesa docs/relnotes/25.2.0.rst@22194d5), with
#: ``shaderBFloat16CooperativeMatrix = has_bfloat16 && has_cooperative_matrix``
#: (chaotic-cx/mesa-mirror src/intel/vulkan/anv_physical_device.c@c745bf3)
MESA_BF16_RELEASE = "25.2"
MESA_BF16_SOURCE = "Mesa 25.2.0 release notes, 'VK_KHR_shader_bfloat16 on anv/gfx125+'"

#: coopmat: Vulkan cooperative matrices (XMX); bf16-coopmat: Vulkan's BF16 cooperative matrices (FP32
#: accumulators, estimated at the shader-core share: vulkan_bf16.VULKAN_BF16_FAMILY_SOURCE); mmq: Vulkan
#: integer-dot MMQ; fp16-shader: Vulkan FP16 dequantising shaders; sycl-fp16-gemm / sycl-fp32-gemm: SYCL's
#: dequantise + oneDNN/oneMKL GEMM
PathKind = Literal["coopmat", "bf16-coopmat", "mmq", "fp16-shader", "sycl-fp16-gemm", "sycl-fp32-gemm"]


@dataclass(frozen=True)
class IntelPromptPath:
    """The path one Intel GPU's prompt GEMMs take for one weight type, and whether it is on XMX."""

    kind: PathKind
    #: the GEMMs run on the XMX matrix engines
    on_xmx: bool
    why_said: Text


def _weight_type(quant_id: str | None) -> str | None:
    if quant_id is None:
        return None
    if quant_id.lower() in ("f16", "bf16", "f32"):
        return quant_id.upper()
    return ggml_type(quant_id)


def intel_prompt_path(
    backend: Backend | None,
    spec: GpuSpec | None,
    quant_id: str | None,
    build: int | None = None,
    bf16_scalar: bool | None = False,
) -> IntelPromptPath | None:
    """The path llama.cpp's Vulkan or SYCL backend multiplies this Intel GPU's prompt weights of ``quant_id``
    through (module docstring), on build ``build`` (None: a current one). None for other vendors and
    backends, an unknown weight type, F32 on Vulkan, and BF16 (speed.bf16_on_scalar_shaders and
    speed/sycl_bf16.py say where it runs), except BF16 on Vulkan on an Xe2 GPU whose driver is not known
    (``bf16_scalar`` None): the BF16 cooperative-matrix path, with the Mesa release it needs."""
    if spec is None or spec.vendor != "intel" or backend not in ("vulkan", "sycl"):
        return None
    kind = _weight_type(quant_id)
    if (
        kind == "BF16"
        and backend == "vulkan"
        and bf16_scalar is None
        and vulkan_matrix_engines(backend, spec, build)
    ):
        return IntelPromptPath(
            "bf16-coopmat",
            True,
            say(
                "BF16 on Vulkan: BF16 tiles on the XMX engines where the driver offers BF16 "
                "cooperative matrices, as Mesa's ANV does from Mesa {release} ({source}); an older Mesa, or "
                "Intel's Windows driver, runs the scalar FP32 shaders instead ({vulkan}). These BF16 "
                "shaders have FP32 accumulators only, not the FP16-accumulate ones the XMX factor is "
                "fitted on, and the one cited Linux run reads at the shader-core rate, so this estimate "
                "takes the class's shader-core share ({family})",
                release=MESA_BF16_RELEASE,
                source=MESA_BF16_SOURCE,
                vulkan=VULKAN_SOURCE,
                family=VULKAN_BF16_FAMILY_SOURCE,
            ),
        )
    if kind is None or kind == "BF16":
        return None
    if backend == "sycl":
        if kind == "F32":
            return IntelPromptPath(
                "sycl-fp32-gemm",
                False,
                say(
                    "F32 weights on SYCL: an FP32 oneDNN/oneMKL GEMM on the vector engines ({source})",
                    source=SYCL_SOURCE,
                ),
            )
        return IntelPromptPath(
            "sycl-fp16-gemm",
            True,
            say(
                "{kind} weights on SYCL: dequantised to FP16, then a oneDNN/oneMKL FP16 GEMM on the XMX "
                "engines (its MMQ kernels are off: {source}); this assumes a build with GGML_SYCL_F16=ON, "
                "which is off by default ({cmake}): without it they are dequantised to FP32 for a GEMM on "
                "the vector engines, slower than this estimate",
                kind=kind,
                source=SYCL_SOURCE,
                cmake=SYCL_F16_SOURCE,
            ),
        )
    if kind == "F32":
        return None  # F32 weights take Vulkan's FP32 matmul pipelines, not ruled on here
    if vulkan_matrix_engines(backend, spec, build):
        return IntelPromptPath(
            "coopmat",
            True,
            say(
                "{kind} weights on Vulkan: dequantised inside cooperative-matrix shaders, FP16 tiles on the "
                "XMX engines; no integer-dot MMQ on this path ({source})",
                kind=kind,
                source=VULKAN_SOURCE,
            ),
        )
    if kind in VULKAN_MMQ_TYPES:
        return IntelPromptPath(
            "mmq",
            False,
            say(
                "{kind} weights on Vulkan with KHR_coopmat off on this GPU: integer-dot MMQ shaders on the "
                "vector engines where the driver reports int8 dot products, else FP16 dequantising shaders; "
                "the XMX engines stay idle ({source})",
                kind=kind,
                source=VULKAN_SOURCE,
            ),
        )
    return IntelPromptPath(
        "fp16-shader",
        False,
        say(
            "{kind} weights on Vulkan with KHR_coopmat off on this GPU: FP16 dequantising shaders on the "
            "vector engines (no MMQ kernel for this type); the XMX engines stay idle ({source}); this path "
            "is slower than MMQ ({measured}: about 1.5× on an Arc A770's short prompts), which the one "
            "shader-core share of this estimate does not tell apart",
            kind=kind,
            source=VULKAN_SOURCE,
            measured=FP16_SHADER_SOURCE,
        ),
    )
