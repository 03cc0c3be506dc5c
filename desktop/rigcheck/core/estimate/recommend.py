"""The one answer to "will MODEL run here, and what is the best way?": a recommendation and its ladder.

Every surface asks this module — ``rigcheck fit`` without ``--quant``, reports, ``upgrade`` before and
after, ``fleet --model``, the Overview cards, the Models page's fit column and the Fit page's defaults —
so the same model on the same machine gets the same answer everywhere. It calls
:func:`rigcheck.core.estimate.fit.fit` once per candidate format and picks by a rule users can predict
(docs/recommendation.md):

Candidates are the formats that run here at Q4_K_M quality or better (llama.cpp's quantize tool: "below
4-bit causes measurable quality loss"); lower formats only when none of those runs. Then:

``prefer="quality"`` (the default)
    1. the highest-quality candidate that runs entirely on the GPUs at :data:`USABLE_DECODE_TOKENS_PER_S`
       or faster;
    2. else the highest-quality candidate that runs at that speed with part of it in RAM (expert or layer
       offload, whichever ``fit`` finds faster) or on the CPU;
    3. else, none being that fast, the fastest candidate (and the answer says it is slow).

``prefer="speed"``
    the fastest candidate that reaches that speed; when none does, the fastest format that runs at all,
    whatever its quality.

The candidates, best quality first: the format the model is released in (or its weight files), then the
engine's usual formats below it (:data:`ENGINE_LADDERS`); formats wider than the released one are left
out, since they only widen the same numbers (BF16 of an MXFP4-trained gpt-oss adds nothing).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field, replace
from typing import Literal

from rigcheck.core import verdict_words as _vocabulary
from rigcheck.core.catalog import Catalog, QualityMeasurement
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.exllamav3 import EXL3_FORMATS
from rigcheck.core.estimate.fit import QUANT_LADDER, FitResult, Offload, Split, fit, largest_context
from rigcheck.core.estimate.memory import (
    Engine,
    Request,
    Workload,
    default_context,
    resolve_quant,
)
from rigcheck.core.estimate.mlx import MLX_FORMATS
from rigcheck.core.machine import Machine
from rigcheck.core.models.spec import ModelInfo
from rigcheck.core.said import Bytes, Joined, Num, Shown, Sig, Text, render, render_all, say

#: the verdict in words: it lives with the other words (core/verdict_words.py); callers import it from here
verdict_words = _vocabulary.verdict_words

Prefer = Literal["quality", "speed"]
Where = Literal["gpu", "gpu+ram", "cpu"]
PREFERENCES: tuple[Prefer, ...] = ("quality", "speed")

#: the decode speed below which a format counts as too slow to recommend when a faster one runs: about
#: twice silent reading speed (~238 words/min, Brysbaert 2019, J. Memory and Language 109:104047, is
#: ~5 tokens/s at ~1.3 tokens per word), so text appears faster than it is read; the same floor the
#: upgrade page's "cheapest GPUs for a model" uses (upgrade.cheapest_gpus_for)
USABLE_DECODE_TOKENS_PER_S = 10.0
#: formats below this one are used only when nothing at or above it runs ("Quantization below 4-bit
#: causes measurable quality loss": llama.cpp tools/quantize/README.md, the quantize tool's hint)
QUALITY_FLOOR = "q4_k_m"
#: the formats each engine is usually run with, best quality first (after the released format)
ENGINE_LADDERS: dict[Engine, tuple[str, ...]] = {
    "llama.cpp": QUANT_LADDER,
    "ollama": QUANT_LADDER,
    # vLLM quantizes a 16-bit checkpoint to FP8 as it loads it (--quantization fp8); AWQ and GPTQ need a
    # checkpoint quantized beforehand, which the catalog does not list, so they are not offered
    "vllm": ("bf16", "fp8"),
    # SGLang quantizes a 16-bit checkpoint to FP8 as it loads it too (--quantization fp8)
    "sglang": ("bf16", "fp8"),
    "transformers": ("bf16", "int8", "nf4"),
    # mlx_lm.convert -q --q-bits 8/6/4 (group 64), beside the 16-bit checkpoint (core/estimate/mlx.py)
    "mlx": MLX_FORMATS,
    # convert.py -b 6.0/5.0/4.0/3.0 (core/estimate/exllamav3.py)
    "exllamav3": EXL3_FORMATS,
    # ktransformers reads GGUF experts through its CPUInfer operators on llamafile's sgemm, benchmarked on
    # q8_0, q6_k, q5_k_m, q4_k_m, q3_k_m and q2_k (kvcache-ai/ktransformers
    # doc/en/operators/llamafile.md@b244f25)
    "ktransformers": ("q8_0", "q6_k", "q5_k_m", "q4_k_m", "q3_k_m", "q2_k"),
}


@dataclass(frozen=True)
class Rung:
    """One candidate format on the machine: ``fit``'s answer and what it means in words."""

    #: the format's name as users read it ("Q4_K_M", "MXFP4", "bf16", or the file's own)
    quant: str
    #: the quant id asked for (None: the model's own weight files)
    quant_id: str | None
    result: FitResult
    #: gpu, gpu+ram or cpu; None when it does not run here
    where: Where | None
    #: the measured quality change where one is cited (catalog/quality.toml), else None
    quality: QualityMeasurement | None = None
    #: the released format (or the weight files the user gave)
    native: bool = False

    @property
    def runs(self) -> bool:
        return self.where is not None

    @property
    def decode_tokens_per_s(self) -> float | None:
        return self.result.speed.decode_tokens_per_s

    @property
    def tokens_per_s(self) -> float | None:
        s = self.result.speed
        return s.decode_tokens_per_s if self.result.estimate.workload == "inference" else s.train_tokens_per_s

    @property
    def words(self) -> str:
        return verdict_words(self.result)

    def quality_note(self) -> str:
        q = self.quality
        if q is None:
            return ""
        # signed, with the locale's decimal mark ("-0,0050" in Italian, not "-0.0050")
        delta = Joined("", ("+" if q.ppl_delta >= 0 else "", Num(q.ppl_delta, 4, group=False)))
        return render(say("{delta} perplexity on {model}", delta=delta, model=q.measured_on))


@dataclass(frozen=True)
class Recommendation:
    model: ModelInfo
    workload: Workload
    engine: Engine
    prefer: Prefer
    context: int
    #: every candidate, best quality first
    ladder: tuple[Rung, ...]
    #: the recommended rung; None when nothing runs on this machine
    best: Rung | None
    #: why this one and not the next candidate, as said: :attr:`why` in sentences
    why_said: tuple[Text, ...]
    #: the settings every rung was sized with (``quant`` None: each rung has its own)
    request: Request = field(default_factory=Request)

    @property
    def why(self) -> tuple[str, ...]:
        return render_all(self.why_said)

    @property
    def result(self) -> FitResult:
        """The recommended rung's fit, or the smallest candidate's (saying why it does not fit)."""
        return self.best.result if self.best is not None else self.ladder[-1].result

    @property
    def where(self) -> Where | None:
        return self.best.where if self.best is not None else None


# -- words ----------------------------------------------------------------------------------------


def where_of(result: FitResult) -> Where | None:
    """gpu: everything on the GPUs; gpu+ram: part of it in RAM; cpu: no GPU used; None: does not run."""
    if result.verdict == "does_not_fit":
        return None
    p = result.placement
    if not any(p.gpu_bytes):
        return "cpu"
    return "gpu+ram" if p.cpu_bytes or p.offload != "none" else "gpu"


def _rung_name(result: FitResult, catalog: Catalog) -> str:
    """The format's name; a weight file's own format by its catalog name ("q8_0" → "Q8_0")."""
    name = result.estimate.quant_name
    if result.estimate.quant is None:
        with suppress(InputError):  # a file format the catalog has no entry for keeps its own name
            name = resolve_quant(catalog, name).name
    return display_quant(name)


def display_quant(name: str) -> str:
    """A format's name as users type it: the catalog's "Q6_K (file mix)" is llama.cpp's Q6_K."""
    return name.removesuffix(" (file mix)")


# -- context --------------------------------------------------------------------------------------


def check_context(model: ModelInfo, context: int | None, *, rope_scaling: bool = False) -> None:
    """Refuse a context beyond what the model was trained for unless RoPE scaling is asked for."""
    limit = model.arch.max_context
    if context is None or limit is None or context <= limit:
        return
    if not rope_scaling:
        raise InputError(
            "--context",
            f"{context:,} tokens is beyond {model.name}'s trained maximum of {limit:,} "
            "(pass --rope-scaling to size it anyway, as with YaRN or linear RoPE scaling)",
        )


def longest_running_context(
    model: ModelInfo,
    machine: Machine,
    req: Request,
    catalog: Catalog,
    *,
    offload: Offload = "auto",
    live: bool = False,
) -> int | None:
    """The longest context, up to the model's trained maximum, that runs with ``offload`` (on the GPU,
    GPU + RAM or the CPU); None if not even 512 tokens do. ``fit.max_context`` is the GPU-only one."""
    upper = model.arch.max_context or 131072

    def runs(context: int) -> bool:
        trial = replace(req, context=context)
        return fit(model, machine, trial, catalog, offload=offload, live=live, advise=False).verdict != (
            "does_not_fit"
        )

    return largest_context(runs, upper)


# -- the ladder -----------------------------------------------------------------------------------


#: why a model released quantized gets no narrower rungs
QUANTIZED_RELEASE_SOURCE = (
    "https://huggingface.co/bartowski/openai_gpt-oss-120b-GGUF (model card: Q6_K 63.28 GB, Q4_K_L 63.06 GB, "
    "Q2_K_L 63.00 GB, 'all FFN kept at MXFP4_MOE'); ggml-org/gpt-oss-120b-GGUF holds MXFP4 only"
)


def _bits(catalog: Catalog, quant_id: str) -> float:
    quant = resolve_quant(catalog, quant_id)
    return quant.file_bpw or quant.bits_per_weight


def _shown_context(context: int | None, model: ModelInfo, rungs: Sequence[Rung]) -> int:
    """The context asked for, else the one the fits used (Ollama picks its own), else the default."""
    if context is not None:
        return context
    if rungs:
        return rungs[0].result.estimate.context
    return default_context(model.arch)


def candidates(model: ModelInfo, engine: Engine, catalog: Catalog) -> list[tuple[str | None, bool]]:
    """(quant id or None for the model's own files, released?) best quality first."""
    ladder = ENGINE_LADDERS[engine]
    weights = model.weights
    if weights is not None:
        if any(f.lower().endswith(".gguf") for f in weights.files):
            return [(None, True)]  # a GGUF file is one format: converting it is not what users do
        native_id = weights.quant_id
        first: list[tuple[str | None, bool]] = [(None, True)]
    else:
        native_id = model.native_quant or "bf16"
        first = [(resolve_quant(catalog, native_id).id, True)]
    if engine == "exllamav3":
        # ExLlamaV3 runs EXL3: the released checkpoint is what convert.py quantizes, not a rung of its own
        first = [(q, released) for q, released in first if q is not None and q.startswith("exl3-")]
    out = list(first)
    seen = {resolve_quant(catalog, native_id).id} if native_id else set()
    top = _bits(catalog, native_id) if native_id else None
    # Only formats that exist: released weights that are already quantized (MXFP4, NVFP4, INT4, ...)
    # are not requantized narrower; the published lower "K-quants" of gpt-oss keep the MXFP4 experts
    # and are all ~63 GB (QUANTIZED_RELEASE_SOURCE), so such rungs would repeat the released size.
    quantized = native_id is not None and resolve_quant(catalog, native_id).kind not in ("float", "gguf")
    for name in ladder:
        quant = resolve_quant(catalog, name)
        if quant.id in seen:
            continue
        if top is not None and (quant.file_bpw or quant.bits_per_weight) > top + 1e-9:
            continue  # wider than the released weights: the same numbers, more bytes
        if quantized:
            continue  # narrower than quantized released weights: not a file anyone publishes
        seen.add(quant.id)
        out.append((quant.id, False))
    if not out:  # only ExLlamaV3 empties the list: a quantized release is not requantized to EXL3 here
        raise InputError(
            "--engine exllamav3",
            render(
                say(
                    "ExLlamaV3 runs EXL3 made from a 16-bit checkpoint; {model} is released as {quant}",
                    model=model.id,
                    quant=native_id or "?",
                )
            ),
        )
    return out


def _quality(catalog: Catalog, quant_id: str | None) -> QualityMeasurement | None:
    if quant_id is None:
        return None
    for row in catalog.qualities:
        try:
            if resolve_quant(catalog, row.quant).id == quant_id:
                return row
        except InputError:
            continue
    return None


def _below_floor(catalog: Catalog, rung: Rung) -> bool:
    if rung.quant_id is None or rung.native:
        return False
    ladder = [resolve_quant(catalog, q).id for q in QUANT_LADDER]
    floor = resolve_quant(catalog, QUALITY_FLOOR).id
    return rung.quant_id in ladder and ladder.index(rung.quant_id) > ladder.index(floor)


def _usable(rung: Rung) -> bool:
    speed = rung.tokens_per_s
    if rung.result.estimate.workload != "inference":
        return rung.runs
    if speed is None:
        return rung.where == "gpu"  # a GPU the catalog has no bandwidth for: not slower than the floor
    return speed >= USABLE_DECODE_TOKENS_PER_S


def choose(rungs: Sequence[Rung], prefer: Prefer, catalog: Catalog) -> Rung | None:
    """The rule in the module docstring, applied to a ladder (best quality first)."""
    runs = [r for r in rungs if r.runs]
    if not runs:
        return None
    pool = [r for r in runs if not _below_floor(catalog, r)] or runs

    def fastest(among: Sequence[Rung]) -> Rung:
        return max(among, key=lambda r: (r.tokens_per_s or 0.0, -rungs.index(r)))

    usable = [r for r in pool if _usable(r)]
    if prefer == "speed":
        return fastest(usable) if usable else fastest(runs)
    on_gpu = [r for r in usable if r.where == "gpu"]
    if on_gpu:
        return on_gpu[0]
    if usable:
        return usable[0]
    return fastest(pool)


def _speed_text(rung: Rung) -> Text:
    """The rung's speed to two significant figures, as the headline shows it (~28,000, not ~28,159.3)."""
    if rung.tokens_per_s is None:
        return say("speed unknown")
    shown = _vocabulary.rounded_speed(rung.tokens_per_s)
    return say("~{speed} tokens/s", speed=Num(shown, 1 if shown < 10 else 0))


def _words(rung: Rung) -> Shown:
    """The rung's verdict, put into words when shown (:func:`rigcheck.core.verdict_words.verdict_words`)."""
    return Shown(verdict_words, rung.result)


def _why(rungs: Sequence[Rung], best: Rung | None, prefer: Prefer, catalog: Catalog) -> list[Text]:
    floor = say("{speed} tokens/s", speed=Sig(USABLE_DECODE_TOKENS_PER_S, 6))
    if best is None:
        smallest = rungs[-1]
        first = smallest.result.reasons_said[0] if smallest.result.reasons_said else ""
        return [
            say("no format runs on this machine; even {quant}: {reason}", quant=smallest.quant, reason=first)
        ]
    out: list[Text] = []
    index = rungs.index(best)
    if best.result.estimate.workload != "inference":
        return [Joined("", (best.quant, ": ", _words(best), ", ", _speed_text(best)))]
    if prefer == "speed":
        out.append(
            say(
                "{quant} is the fastest format that runs here at ≥ {floor}, Q4_K_M or better where one does",
                quant=best.quant,
                floor=floor,
            )
        )
    elif best.where == "gpu" and _usable(best):
        out.append(
            say(
                "{quant} is the highest-quality format that runs entirely on the GPU at ≥ {floor}",
                quant=best.quant,
                floor=floor,
            )
        )
    elif _usable(best):
        out.append(
            say(
                "{quant} is the highest-quality format that runs at ≥ {floor}: it {words}",
                quant=best.quant,
                floor=floor,
                words=_words(best),
            )
        )
    else:
        out.append(
            say(
                "no format of Q4_K_M quality or better reaches {floor} here: {quant} is the fastest of them",
                quant=best.quant,
                floor=floor,
            )
        )
    better = rungs[:index]
    if better:
        nxt = better[-1]
        if not nxt.runs:
            reason = nxt.result.reasons_said[0] if nxt.result.reasons_said else say("does not fit")
            out.append(say("not {quant}: it does not fit ({reason})", quant=nxt.quant, reason=reason))
        elif prefer == "speed":
            out.append(
                say(
                    "not {quant}: slower ({speed}, {words})",
                    quant=nxt.quant,
                    speed=_speed_text(nxt),
                    words=_words(nxt),
                )
            )
        elif nxt.where != "gpu" and best.where == "gpu":
            out.append(
                say(
                    "not {quant}: it {words}, at {speed}",
                    quant=nxt.quant,
                    words=_words(nxt),
                    speed=_speed_text(nxt),
                )
            )
        else:
            out.append(
                say(
                    "not {quant}: {speed} is below {floor} (it {words})",
                    quant=nxt.quant,
                    speed=_speed_text(nxt),
                    floor=floor,
                    words=_words(nxt),
                )
            )
    quick = choose(rungs, "speed", catalog) if prefer == "quality" else None
    if quick is not None and quick is not best and (quick.tokens_per_s or 0.0) > (best.tokens_per_s or 0.0):
        out.append(
            say(
                "--prefer speed would pick {quant} ({speed}, {words})",
                quant=quick.quant,
                speed=_speed_text(quick),
                words=_words(quick),
            )
        )
    return out


def recommend(
    model: ModelInfo,
    machine: Machine,
    workload: Workload,
    catalog: Catalog,
    *,
    context: int | None = None,
    engine: Engine | None = None,
    prefer: Prefer = "quality",
    live: bool = False,
    request: Request | None = None,
    rope_scaling: bool = False,
    split: Split = "layer",
) -> Recommendation:
    """The best way to run ``model`` on ``machine`` for ``workload``, with the ladder it was chosen from.

    ``request`` carries the other settings (batch, KV-cache type, LoRA rank); its ``quant`` is ignored
    (the ladder chooses), ``context``, ``engine`` and ``workload`` override it. Training workloads have
    one format (their own: bf16, or NF4 for QLoRA), so their ladder is that one rung.
    """
    if prefer not in PREFERENCES:
        raise InputError("--prefer", f"expected one of {', '.join(PREFERENCES)}, got {prefer!r}")
    check_context(model, context, rope_scaling=rope_scaling)
    # training runs on a training stack whatever inference engine was asked (the CLI's default is llama.cpp)
    chosen_engine: Engine = (engine or "llama.cpp") if workload == "inference" else "transformers"
    base = replace(request or Request(), quant=None, context=context, workload=workload, engine=chosen_engine)
    rungs: list[Rung] = []
    if workload == "inference":
        for quant_id, native in candidates(model, chosen_engine, catalog):
            req = replace(base, quant=quant_id)
            result = fit(model, machine, req, catalog, live=live, split=split, advise=False)
            rungs.append(
                Rung(
                    _rung_name(result, catalog),
                    quant_id,
                    result,
                    where_of(result),
                    _quality(catalog, quant_id),
                    native,
                )
            )
    else:
        result = fit(model, machine, base, catalog, live=live, advise=False)
        rungs.append(
            Rung(display_quant(result.estimate.quant_name), None, result, where_of(result), None, True)
        )
    best = choose(rungs, prefer, catalog)
    return Recommendation(
        model=model,
        workload=workload,
        engine=chosen_engine,
        prefer=prefer,
        context=_shown_context(context, model, rungs),
        ladder=tuple(rungs),
        best=best,
        why_said=tuple(_why(rungs, best, prefer, catalog)),
        request=base,
    )


def rung_json(rung: Rung) -> dict[str, object]:
    """A ladder row as the CLI, reports and the GUI give it."""
    r = rung.result
    return {
        "quant": rung.quant,
        "verdict": r.verdict,
        "where": rung.where,
        "words": rung.words,
        "total_bytes": r.estimate.total_bytes,
        "decode_tokens_per_s": _round(r.speed.decode_tokens_per_s),
        "prefill_tokens_per_s": _round(r.speed.prefill_tokens_per_s),
        "placement": placement_json(r),
        "native": rung.native,
        "quality": (
            {
                "ppl_delta": rung.quality.ppl_delta,
                "measured_on": rung.quality.measured_on,
                "source": rung.quality.source,
            }
            if rung.quality
            else None
        ),
    }


def placement_json(result: FitResult) -> dict[str, object]:
    p = result.placement
    return {
        "where": where_of(result),
        "gpu_bytes": list(p.gpu_bytes),
        "cpu_bytes": p.cpu_bytes,
        "gpu_layers": p.gpu_layers,
        "total_layers": p.total_layers,
        "offload": p.offload,
        "split": p.split,
        "cpu_expert_layers": p.cpu_expert_layers,
        # training: the PyTorch allocator's peak per GPU (torch.cuda.max_memory_allocated); gpu_bytes is the
        # process total with the CUDA context (what nvidia-smi shows)
        "gpu_peak_bytes": list(p.gpu_peak_bytes),
    }


def summary_line(rec: Recommendation) -> str:
    """One line: "Q4_K_M · runs on the GPU · ~95.3 tokens/s" or "does not fit"."""
    best = rec.best
    if best is None:
        return "does not fit"
    return render(
        Joined(" · ", (best.quant, best.words, _speed_text(best), Bytes(best.result.estimate.total_bytes)))
    )


def _round(value: float | None) -> float | None:
    return round(value, 1) if value is not None else None
