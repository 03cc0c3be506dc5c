"""What a speed estimate returns: tokens per second and what bounds them, with the working in words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rigcheck.core.said import Text, render_all

Bound = Literal["memory_bandwidth", "compute", "pcie", "ram_bandwidth", "cpu_optimizer"]


@dataclass(frozen=True, init=False)
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

    def __init__(  # noqa: PLR0917 - the fields in order, as the generated __init__ took them
        self,
        decode_tokens_per_s: float | None = None,
        prefill_tokens_per_s: float | None = None,
        train_tokens_per_s: float | None = None,
        bound_by: Bound | None = None,
        explanation_said: tuple[Text, ...] = (),
        estimated_decode_tokens_per_s: float | None = None,
        estimated_prefill_tokens_per_s: float | None = None,
        measured_from: str | None = None,
        *,
        explanation: tuple[Text, ...] | None = None,
    ) -> None:
        """The generated ``__init__``, also taking ``explanation=`` for ``explanation_said=``: the name
        speed/training.py passes until it is moved to said values (issue 28, Build 5)."""
        said = explanation_said if explanation is None else explanation
        for name, value in (
            ("decode_tokens_per_s", decode_tokens_per_s),
            ("prefill_tokens_per_s", prefill_tokens_per_s),
            ("train_tokens_per_s", train_tokens_per_s),
            ("bound_by", bound_by),
            ("explanation_said", said),
            ("estimated_decode_tokens_per_s", estimated_decode_tokens_per_s),
            ("estimated_prefill_tokens_per_s", estimated_prefill_tokens_per_s),
            ("measured_from", measured_from),
        ):
            object.__setattr__(self, name, value)

    @property
    def explanation(self) -> tuple[str, ...]:
        """How each figure was worked out, in words (the current language)."""
        return render_all(self.explanation_said)
