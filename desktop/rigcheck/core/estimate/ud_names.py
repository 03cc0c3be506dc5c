"""What an Unsloth Dynamic ("UD-") or QAT GGUF format name means when the catalog has no entry of that name.

Unsloth names its dynamic files ``UD-<llama.cpp type>``: the llama.cpp file type the mix starts from, with
the tensors it measured as sensitive kept wider ("Some tensors are very sensitive to quantization",
https://unsloth.ai/docs/models/qwen3.5/gguf-benchmarks). ``_XL`` over a K type names no llama.cpp type: the
headers name the base, Q4_K_M (file type 15) for UD-Q4_K_XL and Q8_0 (file type 7) for UD-Q8_K_XL
(core/estimate/ud_mix.py), so ``UD-Q<n>_K_XL`` starts from that type's M mix (Q8's: Q8_0).

Three answers, each named in the estimate:

- a per-role rule (``ud_mix.RULES``): UD-Q4_K_XL, UD-Q8_K_XL, and UD-Q4_K_M, which is the UD-Q4_K_XL rule:
  that rule starts from Q4_K_M and raises only the roles Unsloth names, and Unsloth's UD-Q4_K_M of
  Qwen3.6-35B-A3B (20.61 GiB, PMZFX/intel-arc-pro-b70-benchmarks
  data/llm/intel-arc-pro-b70-qwen3-6-35b-a3b-ud-q4-k-m-sycl.json@90f6948) is within 1% of its UD-Q4_K_XL
  (20.81 GiB, docs/architectures.md), 6% over llama.cpp's plain Q4_K_M of it;
- a catalog entry sized from a published file (UD-Q5_K_XL, UD-Q3_K_XL, UD-Q2_K_XL, UD-IQ1_S, ...);
- for any other UD name, its base type's own mix, with a note that the sensitive roles' widths are
  assumed to be the base's (so a UD file is somewhat larger than the estimate), rather than a refusal.

QAT: Google's quantization-aware-trained Gemma checkpoints are trained for Q4_0 blocks. Unsloth's Gemma 4
QAT GGUFs are named UD-Q4_K_XL ("We name our Gemma 4 QAT GGUFs as UD-Q4_K_XL as we found q4_0 to degrade
accuracy despite being bigger", https://unsloth.ai/docs/models/gemma-4/qat) and llama-bench names their
type Q4_0 ("gemma4 31B Q4_0 | 16.09 GiB | 30.70 B" for unsloth/gemma-4-31B-it-qat-GGUF:UD-Q4_K_XL,
https://www.antonkrug.eu/posts/blog/gemma4-qat.html). 16.09 GiB over 30.70B weights is 4.50 bits, Q4_0's
18 bytes per 32, so every tensor, the tied embedding too, is Q4_0: catalog ``ud-qat-q4_0``. Google's
own Gemma 3 QAT files keep the embedding at Q8_0: catalog ``q4_0-qat``. A QAT release is said by the
format name (``UD-Q4_K_XL-QAT``, ``Q4_0-QAT``, ``qat``) or found in a model's name by ``qat_variant``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Final

from rigcheck.core.catalog import QuantFormat
from rigcheck.core.estimate.ud_mix import RULES
from rigcheck.core.said import Said, say

UD_PREFIX: Final = "ud-"
#: the llama.cpp type an ``_XL`` name starts from (its M mix; Q8's is Q8_0): the headers of UD-Q4_K_XL
#: (file type 15, Q4_K_M) and UD-Q8_K_XL (7, Q8_0) show the rule; the other sizes follow it by analogy
XL_BASE: Final = {
    "q2_k": "q2_k",
    "q3_k": "q3_k_m",
    "q4_k": "q4_k_m",
    "q5_k": "q5_k_m",
    "q6_k": "q6_k",
    "q8_k": "q8_0",
}
UNSLOTH_SOURCE: Final = "https://unsloth.ai/docs/basics/unsloth-dynamic-2.0-ggufs"
QAT_SOURCE: Final = (
    "https://unsloth.ai/docs/models/gemma-4/qat (UD-Q4_K_XL names the QAT GGUFs); "
    "https://www.antonkrug.eu/posts/blog/gemma4-qat.html (llama-bench: 'gemma4 31B Q4_0 | 16.09 GiB')"
)
#: the formats whose QAT release has its own layout: the QAT format's catalog id
QAT_OF: Final = {"q4_0": "q4_0-qat", "ud-q4_k_xl": "ud-qat-q4_0"}
_QAT_WORD = re.compile(r"(?:^|[-_. ])qat(?=$|[-_. ])")


def strip_qat(key: str) -> tuple[str, bool]:
    """The format name without its "qat" word (``ud-q4_k_xl-qat`` -> ``ud-q4_k_xl``), and whether it had
    one."""
    found = _QAT_WORD.search(key)
    if found is None:
        return key, False
    return (key[: found.start()] + key[found.end() :]).strip("-_. "), True


def qat_key(key: str) -> str | None:
    """The catalog id of a QAT format name (``UD-Q4_K_XL-QAT``, ``qat-ud-q4_k_xl``, ``Q4_0_QAT``), else
    None."""
    base, had = strip_qat(key.strip().lower())
    return QAT_OF.get(base) if had else None


def qat_variant(quant: str, model_text: str) -> str:
    """``quant`` as a QAT release's format when the model's name says QAT (``gemma-4-26B-A4B-it-qat``) and
    the format is one whose QAT file has its own layout (Q4_0, UD-Q4_K_XL); else ``quant`` unchanged."""
    key = quant.strip().lower()
    if _QAT_WORD.search(model_text.lower()) is None or strip_qat(key)[1]:
        return quant
    return f"{quant}-QAT" if key in QAT_OF else quant


def ud_base(key: str) -> str | None:
    """The llama.cpp type a UD name starts from (``ud-iq2_m`` -> ``iq2_m``, ``ud-q6_k_xl`` -> ``q6_k``), else
    None for a name that is not a UD name."""
    if not key.startswith(UD_PREFIX) or len(key) <= len(UD_PREFIX):
        return None
    rest = key.removeprefix(UD_PREFIX)
    if rest.endswith("_xl"):
        return XL_BASE.get(rest.removesuffix("_xl"))
    return rest


#: llama.cpp file types whose RigCheck id is not the type's name (core/models/files/limits.py _FTYPE_IDS)
_MIX_IDS: Final = {"q2_k": "q2_k-mix", "q6_k": "q6_k-mix"}
#: QAT formats: the file type their files carry (Q4_0, general.file_type 2)
_QAT_FILE_TYPE: Final = {"q4_0-qat": "q4_0", "ud-qat-q4_0": "q4_0"}


def file_type_of(quant_id: str) -> str | None:
    """The file type (RigCheck's id) a UD or QAT format's files carry in ``general.file_type``: a file read
    with that type is the format's own file, so its header sizes it (``ud-q4_k_xl`` -> ``q4_k_m``)."""
    base = _QAT_FILE_TYPE.get(quant_id) or ud_base(quant_id)
    return _MIX_IDS.get(base, base) if base else None


def names_file(quant_id: str, file_quant_id: str | None) -> bool:
    """Whether ``--quant`` names the file's own format: the same id, or a UD / QAT name over its type."""
    return file_quant_id is not None and file_quant_id in (quant_id, file_type_of(quant_id))


#: the tag a QAT format's file has in its repository (llama.cpp -hf REPO:TAG): Unsloth's QAT files are
#: named UD-Q4_K_XL (https://unsloth.ai/docs/models/gemma-4/qat), Google's Q4_0
_QAT_TAG: Final = {"ud-qat-q4_0": "UD-Q4_K_XL", "q4_0-qat": "Q4_0"}
UNSLOTH: Final = "unsloth"


def file_tag(quant_id: str, shown: str) -> str:
    """The -hf tag of a format's file: a QAT format's own file name (``UD-Q4_K_XL``), else ``shown``."""
    return _QAT_TAG.get(quant_id, shown)


def gguf_repo(quant_id: str, repos: tuple[str, ...]) -> str | None:
    """The repository among ``repos`` that holds a UD format's file: Unsloth's, its QAT one for the QAT
    format (unsloth/<model>-qat-GGUF); None for any other format, or when none of ``repos`` is Unsloth's."""
    if not quant_id.startswith(UD_PREFIX):
        return None
    qat = quant_id in _QAT_FILE_TYPE
    for repo in repos:
        owner, _, name = repo.lower().partition("/")
        if owner == UNSLOTH and (_QAT_WORD.search(name) is not None) == qat:
            return repo
    return None


def needs_qat_repository(quant_id: str) -> bool:
    """Whether a format's files are only in a QAT repository (Unsloth's UD QAT files): without one listed,
    the same tag elsewhere is another file (the ordinary UD-Q4_K_XL mix), so none is named."""
    return quant_id.startswith(UD_PREFIX) and quant_id in _QAT_FILE_TYPE


def ud_format(key: str, base: QuantFormat) -> QuantFormat:
    """The format of UD name ``key`` (not in the catalog) over its base type's catalog entry: sized by the
    per-role rule where ``ud_mix.RULES`` has one, else as the base type's own mix (``assumed_note``)."""
    name = key.upper()  # as Unsloth writes it: ud-q4_k_m -> UD-Q4_K_M
    if key in RULES:
        return QuantFormat(
            id=key,
            name=name,
            kind="gguf",
            bits_per_weight=base.bits_per_weight,
            source=UNSLOTH_SOURCE,
            layer_bpw=base.bits_per_weight,
            layer_bpw_source=f"{base.name} base + the roles Unsloth keeps wider (core/estimate/ud_mix.py)",
            ggml_type=base.ggml_type,
            block_size=base.block_size,
            confidence="secondary",
            notes=f"Unsloth Dynamic {name}: {base.name} with the sensitive roles raised (per-role rule)",
        )
    return replace(
        base,
        id=key,
        name=name,
        confidence="uncertain",
        notes=f"Unsloth Dynamic {name}: no per-role rule known; sized as {base.name}, its base type",
    )


def assumed_note(quant: QuantFormat, catalog_has: bool) -> Said | None:
    """The note an estimate carries when a UD name was sized as its base type, no rule being known."""
    base = ud_base(quant.id)
    if catalog_has or base is None or quant.id in RULES:
        return None
    return say(
        "{quant}: no per-tensor rule is known for this Unsloth Dynamic format, so it is sized as its base "
        "type {base} (assumed); the tensors Unsloth keeps wider make the file somewhat larger",
        quant=quant.name,
        base=base.upper(),
    )
