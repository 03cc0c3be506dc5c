"""Which linear modules LoRA wraps in each layer, by layer kind, and what they train.

PEFT picks modules by NAME: a ``target_modules`` entry ``q_proj`` wraps every module whose name ends in
``.q_proj`` (peft src/peft/tuners/tuners_utils.py@5d602fd ``check_target_module_exists``), and
``"all-linear"`` wraps every ``nn.Linear`` / transformers ``Conv1D`` but the output head
(``_maybe_include_all_linear_layers``: ``model.get_output_embeddings()`` excluded). LLaMA-Factory's
``lora_target: all`` does the same by suffix (``find_all_linear_modules``: every Linear but ``lm_head``).
So a name list and ``all-linear`` differ wherever a layer is not plain attention + MLP:

- Gated DeltaNet layers (Qwen3-Next, Qwen3.5) have no q/k/v/o_proj: Qwen3-Next's in_proj_qkvz (hidden →
  2·key_dim + 2·value_dim), in_proj_ba (hidden → 2·H_v), out_proj (value_dim → hidden)
  (transformers models/qwen3_next/modeling_qwen3_next.py@7515843 Qwen3NextGatedDeltaNet); Qwen3.5's
  in_proj_qkv (→ 2·key_dim + value_dim), in_proj_z (→ value_dim), in_proj_b and in_proj_a (→ H_v each),
  out_proj (models/qwen3_5/modeling_qwen3_5.py@d8c1e28 Qwen3_5GatedDeltaNet). The depthwise conv1d is an
  ``nn.Conv1d``, which all-linear does not take. Their full-attention q_proj is hidden → 2·heads·head_dim
  (the output gate, Qwen3_5Attention).
- MLA layers (DeepSeek-V2/V3, Kimi): q_a_proj + q_b_proj (or one q_proj without q_lora_rank),
  kv_a_proj_with_mqa (hidden → kv_lora_rank + qk_rope_head_dim), kv_b_proj (kv_lora_rank →
  heads·(qk_nope + v_head_dim)), o_proj: ``q,k,v,o`` finds only o_proj (and q_proj where there is one).
- Mixture-of-experts layers, in transformers 5's layout: routed experts are fused 3-D ``nn.Parameter``\\ s
  (gate_up_proj, down_proj) and the router a parameter too (models/qwen3_5_moe/modeling_qwen3_5_moe.py@5fd974e
  Qwen3_5MoeExperts, Qwen3_5MoeTopKRouter), which neither names nor all-linear match -- PEFT trains them
  only through ``target_parameters`` (peft src/peft/tuners/lora/config.py@5d602fd; axolotl
  examples/qwen3.5/35b-a3b-moe-qlora.yaml@85e5912: "3D nn.Parameter tensors, not nn.Linear — use
  lora_target_parameters"). gate/up/down_proj name the shared expert(s) only, and all-linear adds
  Qwen's 1-wide shared_expert_gate. (transformers 4.x held experts as an ``nn.ModuleList`` of MLPs, where
  gate/up/down_proj would wrap every expert; that layout is not counted: Qwen3.5 needs transformers 5.2,
  unslothai/unsloth unsloth/models/loader.py@015bdef.)

A layer kind whose modules are not known here (a linear mixer without Gated DeltaNet widths, an MLA
layer without its ranks) takes the attention layers' q/k/v/o shapes, and the plan says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from rigcheck.core.estimate.training_mixers import ffn_width, gated_mlp
from rigcheck.core.models.spec import ArchConfig, LayerKind

#: the target that wraps every linear module but the head (PEFT "all-linear", LLaMA-Factory "all")
ALL_LINEAR = "all-linear"
#: the seven projections of a llama-style layer by their short names (q → q_proj)
SHORT = ("q", "k", "v", "o", "gate", "up", "down")
SOURCE = (
    "peft src/peft/tuners/tuners_utils.py@5d602fd (target names matched by suffix; all-linear: every "
    "nn.Linear but get_output_embeddings()); transformers modeling_qwen3_next.py@7515843, "
    "modeling_qwen3_5.py@d8c1e28, modeling_qwen3_5_moe.py@5fd974e (fused experts), "
    "models/deepseek_v3 (MLA projections)"
)
#: module names a target list may give beyond the short ones (the real names of the mixers above)
MIXER_NAMES = (
    "in_proj_qkvz", "in_proj_ba", "in_proj_qkv", "in_proj_z", "in_proj_a", "in_proj_b", "out_proj",
    "q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "shared_expert_gate",
)  # fmt: skip


@dataclass(frozen=True)
class Wrapped:
    """One kind of linear module LoRA wraps: its name, shape and how many layers hold it."""

    module: str
    fan_in: int
    fan_out: int
    layers: int

    def params(self, rank: int) -> int:
        """LoRA's A (rank × in) and B (out × rank) in every layer that holds it."""
        return rank * (self.fan_in + self.fan_out) * self.layers


@dataclass(frozen=True)
class LoraPlan:
    wrapped: tuple[Wrapped, ...]
    #: layers or modules the targets leave untouched, in words ("48 Gated DeltaNet layers: no q/k/v/o_proj")
    left: tuple[str, ...] = ()
    #: what the plan had to assume about a layer kind it does not know
    assumed: tuple[str, ...] = ()

    def params(self, rank: int) -> int:
        return sum(w.params(rank) for w in self.wrapped)

    def words(self) -> str:
        """The formula's words: each wrapped module, its shape and its layers; what was left and assumed."""
        parts = [f"{w.module} ({w.fan_in:,}→{w.fan_out:,}) × {w.layers}" for w in self.wrapped]
        text = "; ".join(parts) or "nothing"
        if self.left:
            text += "; not wrapped: " + "; ".join(self.left)
        if self.assumed:
            text += "; assumed: " + "; ".join(self.assumed)
        return text


def _leaf_matches(leaf: str, targets: tuple[str, ...]) -> bool:
    return ALL_LINEAR in targets or any(leaf in (t, f"{t}_proj") for t in targets)


def _attention(arch: ArchConfig) -> list[tuple[str, int, int]]:
    h, hd = arch.hidden_size, arch.head_dim
    vd = arch.v_head_dim or hd
    gate = 2 if arch.attn_output_gate else 1
    return [
        ("q_proj", h, arch.num_heads * hd * gate),
        ("k_proj", h, arch.num_kv_heads * hd),
        ("v_proj", h, arch.num_kv_heads * vd),
        ("o_proj", arch.num_heads * vd, h),
    ]


def _mla(arch: ArchConfig) -> list[tuple[str, int, int]]:
    h, heads, qk_head = arch.hidden_size, arch.num_heads, arch.head_dim
    rope, latent = arch.qk_rope_head_dim or 0, arch.kv_lora_rank or 0
    vd = arch.v_head_dim or qk_head
    if arch.q_lora_rank:
        q = [("q_a_proj", h, arch.q_lora_rank), ("q_b_proj", arch.q_lora_rank, heads * qk_head)]
    else:
        q = [("q_proj", h, heads * qk_head)]
    return [
        *q,
        ("kv_a_proj_with_mqa", h, latent + rope),
        ("kv_b_proj", latent, heads * (qk_head - rope + vd)),
        ("o_proj", heads * vd, h),
    ]


def _gdn(arch: ArchConfig) -> list[tuple[str, int, int]]:
    m, h = arch.linear_mixer, arch.hidden_size
    assert m is not None
    if arch.model_type.startswith(("qwen3_next", "qwen3next")):  # a config's or a GGUF's name for it
        inputs = [("in_proj_qkvz", h, m.conv_dim + m.value_dim), ("in_proj_ba", h, 2 * m.value_heads)]
    else:  # Qwen3.5's split projections (and the generic rule's Gated DeltaNet layers)
        inputs = [
            ("in_proj_qkv", h, m.conv_dim),
            ("in_proj_z", h, m.value_dim),
            ("in_proj_b", h, m.value_heads),
            ("in_proj_a", h, m.value_heads),
        ]
    return [*inputs, ("out_proj", m.value_dim, h)]


def _mixer(arch: ArchConfig, kind: LayerKind, assumed: set[str]) -> tuple[str, list[tuple[str, int, int]]]:
    """The layer kind's name in words and its linear modules."""
    if kind == "none":
        return "MLP-only", []
    if kind == "linear" and arch.linear_mixer is not None:
        return "Gated DeltaNet", _gdn(arch)
    if kind == "mla" and arch.kv_lora_rank:
        return "MLA", _mla(arch)
    if kind in ("linear", "mla"):
        assumed.add(f"{kind} layers' projections not known: counted as q/k/v/o_proj of the attention shapes")
    return {"sliding": "sliding-window", "linear": "linear", "mla": "MLA"}.get(kind, "attention"), _attention(
        arch
    )


def _mlp(arch: ArchConfig, moe: bool, assumed: set[str]) -> list[tuple[str, int, int]]:
    h = arch.hidden_size
    if not moe:
        ffn = ffn_width(arch)
        if not gated_mlp(arch):
            return [("up_proj", h, ffn), ("down_proj", ffn, h)]
        return [("gate_proj", h, ffn), ("up_proj", h, ffn), ("down_proj", ffn, h)]
    shared = arch.shared_expert_width
    if not shared:
        assumed.add("no shared expert known in the MoE layers: only their routed experts, which LoRA leaves")
        return []
    # Qwen's one shared_expert beside its gate; DeepSeek's shared_experts (n_shared_experts wide)
    where = "shared_expert" if arch.shared_expert_gate else "shared_experts"
    out = [
        (f"{where}.gate_proj", h, shared),
        (f"{where}.up_proj", h, shared),
        (f"{where}.down_proj", shared, h),
    ]
    if arch.shared_expert_gate:
        out.append(("shared_expert_gate", h, 1))
    return out


def known_names(arch: ArchConfig | None = None) -> tuple[str, ...]:
    return (*SHORT, *MIXER_NAMES, ALL_LINEAR)


def lora_plan(arch: ArchConfig, targets: tuple[str, ...]) -> LoraPlan:
    """The modules ``targets`` (short names, real module names or ``all-linear``) wrap in ``arch``.

    Raises ValueError for a name RigCheck does not know, or a list that matches no module of this model
    (PEFT's "Target modules ... not found in the base model")."""
    unknown = [t for t in targets if t not in known_names()]
    if unknown:
        raise ValueError(f"unknown LoRA target {unknown[0]!r} (known: {', '.join(known_names())})")
    full: LayerKind = "full"
    kinds: tuple[LayerKind, ...] = arch.layer_kinds or (full,) * arch.num_layers
    moes = arch.moe_layers or (False,) * arch.num_layers
    assumed: set[str] = set()
    counts: dict[tuple[str, int, int], int] = {}
    left: dict[str, int] = {}
    for kind, moe in zip(kinds, moes, strict=False):
        what, mixer = _mixer(arch, kind, assumed)
        mixer_hit = False
        for name, fan_in, fan_out in mixer + _mlp(arch, moe, assumed):
            leaf = name.rsplit(".", 1)[-1]
            if _leaf_matches(leaf, targets) or _leaf_matches(name, targets):
                counts[(name, fan_in, fan_out)] = counts.get((name, fan_in, fan_out), 0) + 1
                mixer_hit = mixer_hit or (name, fan_in, fan_out) in mixer
        if mixer and not mixer_hit:
            names = "/".join(n for n, _, _ in mixer)
            left[f"{what} layers (their {names} not named)"] = (
                left.get(f"{what} layers (their {names} not named)", 0) + 1
            )
    experts = sum(moes) if arch.is_moe else 0
    notes = [f"{n} {text}" for text, n in left.items()]
    hit = {name.rsplit(".", 1)[-1] for name, _, _ in counts}
    for t in targets:
        if t != ALL_LINEAR and not any(_leaf_matches(leaf, (t,)) for leaf in hit):
            notes.append(f"{t}: no module named {t if t in MIXER_NAMES else t + '_proj'} in this model")
    if experts and any(t in targets for t in (ALL_LINEAR, "gate", "up", "down")):
        notes.append(
            f"the {arch.num_experts} routed experts of {experts} MoE layers (fused gate_up_proj/down_proj "
            "parameters: PEFT's target_parameters only)"
        )
    wrapped = tuple(Wrapped(name, i, o, n) for (name, i, o), n in counts.items())
    if not wrapped:
        raise ValueError(
            f"LoRA targets {','.join(targets)} match no module of this model (PEFT: 'Target modules not "
            "found in the base model'); try all-linear"
        )
    return LoraPlan(wrapped, tuple(notes), tuple(sorted(assumed)))


def lora_param_count(arch: ArchConfig, rank: int, targets: tuple[str, ...]) -> int:
    """Trainable LoRA parameters: rank × (in + out) of every module :func:`lora_plan` wraps."""
    return lora_plan(arch, targets).params(rank)
