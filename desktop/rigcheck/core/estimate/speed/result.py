"""What a speed estimate returns: tokens per second and what bounds them, with the working in words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rigcheck.core.estimate.speed.engine_build import BuildTerm
from rigcheck.core.said import Text, render_all

Bound = Literal["memory_bandwidth", "compute", "pcie", "ram_bandwidth", "cpu_optimizer"]


@dataclass(frozen=True)
class Speed:
    decode_tokens_per_s: float | None = None
    prefill_tokens_per_s: float | None = None
    train_tokens_per_s: float | None = None
    bound_by: Bound | None = None
    #: how each figure was worked out, as said (core/said.py): :attr:`explanation` in words
    explanation_said: tuple[Text, ...] = ()
    #: with measurements (``fit --measured``): the estimates they replaced, and where they came from
    estimated_decode_tokens_per_s: float | None = None
    estimated_prefill_tokens_per_s: float | None = None
    measured_from: str | None = None
    #: an older engine build (Request.engine_build): each later milestone's ratio divided out, and the
    #: advice to update (speed/engine_build.py)
    build_terms: tuple[BuildTerm, ...] = ()
    build_advice_said: tuple[Text, ...] = ()

    @property
    def explanation(self) -> tuple[str, ...]:
        """How each figure was worked out, in words (the current language)."""
        return render_all(self.explanation_said)
