"""Which mat-vec kernel llama.cpp's SYCL backend decodes an Intel GPU's weights through, by weight type and
build, and the share of the read rate a kernel without the reordered layout gets.

``ggml_sycl_mul_mat`` (ggml-org/ggml src/ggml-sycl/ggml-sycl.cpp@d99724f, synced from llama.cpp in August
2026) tries, for a one-token batch, DMMV (``ggml_sycl_supports_dmmv``: Q1_0, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
Q2_K-Q6_K, F16, BF16) before MMVQ (every quantised type). On an Intel GPU with the reorder optimisation on
(``GGML_SYCL_ENABLE_OPT``, default 1 at that commit; earlier builds spelled it ``GGML_SYCL_DISABLE_OPT``, off
by default since llama.cpp PR #13973, June 2025) a type in ``ggml_sycl_supports_reorder_mmvq`` (Q1_0, Q4_0,
Q8_0, Q3_K, Q4_K, Q5_K, Q6_K) skips DMMV for MMVQ (or an ESIMD DMMV kernel for Q3_K-Q6_K; Q4_0 on an A770
keeps the reordered DMMV) and, on first use, has its weights rewritten structure-of-arrays (quants apart
from scales: ``reorder_qw``) so the kernel's loads coalesce. Every other type runs a kernel on the
array-of-blocks layout: DMMV for Q4_1, Q5_0, Q5_1 (and Q2_K, reordered for DMMV only since PR #25064), the
plain MMVQ for the IQ types and MXFP4.

The reordered layout came one type at a time, each a llama.cpp PR (REORDER_SINCE): Q4_0 (PR #12858), Q4_K
(PR #13109), Q6_K (PR #13885), all in 2025 and older than every SYCL row measured here; Q8_0 (PR #21527,
"~3x token generation speedup": B70, Qwen3.5-27B Q8_0 tg 4.88 → 15.24 t/s, "Memory bandwidth utilization
improves from 21% to 66%"), in release b8724 (PMZFX's b8724 runs read Q8_0 at Q4_K_M's rate); Q5_K (PR
#22152, opened 2026-04-20, ggml sync fbea4a9a of 2026-05-08), after b8840 (2026-04-21); Q3_K (PR #23725,
ggml sync 2b9bcd4f of 2026-06-01), after b8840 too. A build before a type's reorder decodes it on the
array-of-blocks kernels.

On an Arc Pro B70 (PMZFX/intel-arc-pro-b70-benchmarks llm-benchmarks.md@7157020, Qwen3.5-27B, one build) the
reordered types read at 48-57% of the bandwidth, the others at 39-44% (IQ4_XS, Q4_1, Q5_K before PR #22152),
and Q4_K_M forced onto DMMV (``GGML_SYCL_PRIORITIZE_DMMV=1``) at 0.60 × its reordered rate. The estimator
reads a type without the reordered layout at the class's efficiency × ``decode_unreordered_factor``
(catalog/speed.toml, fitted by benchmarks/fit_speed.py on such rows: benchmarks/sycl_matvec_fit.py); 1 where
nothing was fitted.

Array-of-blocks types whose block is not a multiple of 4 bytes (Q4_0 18, Q5_0 22, Q8_0 34, IQ4_NL 18,
Q3_K 110, Q6_K 210, the IQ2/IQ3/IQ1_S types, MXFP4 17: ggml's block structs) cannot load their quants as
32-bit words: vecdotq.hpp's ``get_int_from_int8`` / ``get_int_from_uint8`` ("assume at least 2 byte
alignment") read two 16-bit halves, ``vec_dot_iq4_nl_q8_1`` reads ``uint16_t`` pairs, where Q4_1, Q5_1,
Q2_K, Q5_K and IQ4_XS use the ``_aligned`` 32-bit loads. Measured on the B70 such kernels ran far slower:
Q8_0 before PR #21527 at 21% of the bandwidth ("34-byte blocks (not power-of-2) cause poor cache line
utilization and non-coalesced memory access patterns"), IQ4_NL at b8840 6.28 t/s on Qwen3.5-27B against
IQ4_XS's 17.52 at about the same size. They read at ``decode_unaligned_factor`` × the class's rate, fitted
apart.

Dense models only: a mixture of experts' expert weights take MUL_MAT_ID, whose kernels and reorder rule are
others (``opt_for_reorder_id`` reorders Q4_K/Q5_K/Q6_K experts only, since PR #24452; the fused one-token
MoE mat-vec of PR #21920), so an MoE model keeps the class's rate and its per-MoE-layer cost (speed/fixed.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from rigcheck.core.catalog import GpuSpec, SpeedFactor
from rigcheck.core.estimate.speed.kernels import ggml_type
from rigcheck.core.said import Num, Text, say

SYCL_MATVEC_SOURCE = (
    "ggml-org/ggml src/ggml-sycl/ggml-sycl.cpp@d99724f, ggml_sycl_mul_mat and ggml_sycl_supports_reorder_mmvq"
)

#: type → (PR that gave it the reordered MMVQ, first build known to have it; 0: older than every build
#: a row or a user names here). Q5_K and Q3_K: the first build after b8840 that has them is not known, so a
#: build after b8840 is taken to have them.
REORDER_SINCE: dict[str, tuple[int, int]] = {
    "Q4_0": (12858, 0),
    "Q4_K": (13109, 0),
    "Q6_K": (13885, 0),
    "Q8_0": (21527, 8724),
    "Q5_K": (22152, 8841),
    "Q3_K": (23725, 8841),
}


#: ggml block sizes in bytes that are not a multiple of 4 (ggml-common.h block structs): the array-of-blocks
#: kernels read these types' quants as 16-bit halves
TWO_BYTE_BLOCKS: dict[str, int] = {
    "Q4_0": 18,
    "Q5_0": 22,
    "Q8_0": 34,
    "IQ4_NL": 18,
    "Q3_K": 110,
    "Q6_K": 210,
    "IQ2_XXS": 66,
    "IQ2_XS": 74,
    "IQ2_S": 82,
    "IQ3_XXS": 98,
    "IQ3_S": 110,
    "IQ1_S": 50,
    "MXFP4": 17,
}


@dataclass(frozen=True)
class SyclMatvec:
    """The mat-vec kernel one weight type decodes through on SYCL, at one build."""

    ggml_type: str
    #: the reordered (structure-of-arrays) MMVQ path
    reordered: bool
    why_said: Text
    #: an array-of-blocks kernel on blocks that are not a multiple of 4 bytes (16-bit loads)
    unaligned: bool = False


def sycl_matvec(spec: GpuSpec | None, quant_id: str | None, build: int | None = None) -> SyclMatvec | None:
    """The decode kernel llama.cpp's SYCL backend runs weights of ``quant_id`` through on this Intel GPU at
    ``build`` (None: a current one); None for other vendors, unquantised weights and unknown types."""
    if spec is None or spec.vendor != "intel" or not quant_id:
        return None
    kind = ggml_type(quant_id)
    if kind is None:
        return None
    since = REORDER_SINCE.get(kind)
    if since is not None and (build is None or build >= since[1]):
        return SyclMatvec(
            kind,
            True,
            say(
                "{kind} weights on SYCL: the reordered MMVQ mat-vec (PR #{pr}; {source})",
                kind=kind,
                pr=since[0],
                source=SYCL_MATVEC_SOURCE,
            ),
        )
    if since is not None:
        why = say(
            "{kind} weights on SYCL at b{build}: before PR #{pr} gave them the reordered layout, a DMMV/MMVQ "
            "mat-vec on the array-of-blocks layout ({source})",
            kind=kind,
            build=build or 0,
            pr=since[0],
            source=SYCL_MATVEC_SOURCE,
        )
    else:
        why = say(
            "{kind} weights on SYCL: no reordered layout for this type, a DMMV/MMVQ mat-vec on the "
            "array-of-blocks layout ({source})",
            kind=kind,
            source=SYCL_MATVEC_SOURCE,
        )
    unaligned = kind in TWO_BYTE_BLOCKS
    if unaligned:
        why = say(
            "{why}, its {size}-byte blocks read as 16-bit halves",
            why=why,
            size=TWO_BYTE_BLOCKS[kind],
        )
    return SyclMatvec(kind, False, why, unaligned)


def unreordered_read_factor(
    factor: SpeedFactor,
    spec: GpuSpec | None,
    quant_id: str | None,
    build: int | None = None,
    *,
    moe: bool = False,
) -> tuple[float, Text] | None:
    """The share of the class's read rate weights of ``quant_id`` get on SYCL where their mat-vec lacks the
    reordered layout, with its reason; None where they have it, for other backends, for a mixture of experts
    (``moe``: module docstring), or where nothing was fitted."""
    if factor.backend != "sycl" or quant_id == "bf16" or moe:
        return None
    path = sycl_matvec(spec, quant_id, build)
    if path is None or path.reordered:
        return None
    share = factor.decode_unaligned_factor if path.unaligned else factor.decode_unreordered_factor
    if share == 1.0:
        return None
    return share, say(
        "{why}: read at {share} × the reordered kernels' rate",
        why=path.why_said,
        share=Num(share, 2),
    )
