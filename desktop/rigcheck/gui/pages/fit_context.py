"""The Fit page's context row: a slider on a log scale beside the token count, the estimate following
the slider once it rests."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer, Slot
from PySide6.QtWidgets import QSlider, QSpinBox

from rigcheck.core.models.spec import ModelInfo

SLIDER_STEPS = 1000
#: how long the context slider rests before the estimate follows it
SLIDER_DEBOUNCE_MS = 60
MIN_CONTEXT = 256


class ContextSlider:
    """FitPage's context slider (``context``) and the number beside it (``context_value``)."""

    model: ModelInfo | None
    context: QSlider
    context_value: QSpinBox
    _slider_timer: QTimer

    if TYPE_CHECKING:  # FitPage's

        def recompute(self) -> None: ...

    def _max(self) -> int:
        return self.model.arch.max_context if self.model and self.model.arch.max_context else 131072

    def _to_slider(self, tokens: int) -> int:
        span = math.log(self._max() / MIN_CONTEXT) or 1.0
        return round(SLIDER_STEPS * math.log(max(tokens, MIN_CONTEXT) / MIN_CONTEXT) / span)

    def _from_slider(self, value: int) -> int:
        tokens = MIN_CONTEXT * (self._max() / MIN_CONTEXT) ** (value / SLIDER_STEPS)
        step = 256 if tokens < 16384 else 1024
        return min(self._max(), max(MIN_CONTEXT, int(round(tokens / step) * step)))

    def _sync_slider(self) -> None:
        # the arrow keys move the context a quarter of a doubling (8k -> ~9.7k), Page Up/Down one doubling
        doublings = max(math.log2(self._max() / MIN_CONTEXT), 1.0)
        self.context.setPageStep(max(1, round(SLIDER_STEPS / doublings)))
        self.context.setSingleStep(max(1, round(SLIDER_STEPS / doublings / 4)))
        self.context.blockSignals(True)
        self.context.setValue(self._to_slider(self.context_value.value()))
        self.context.blockSignals(False)

    @Slot(int)
    def _slider_moved(self, value: int) -> None:
        """The number follows the slider at once; the estimate once the slider rests (a drag sends a
        value per pixel, each a full recomputation)."""
        self.context_value.blockSignals(True)
        self.context_value.setValue(self._from_slider(value))
        self.context_value.blockSignals(False)
        self._slider_timer.start()

    @Slot(int)
    def _context_typed(self, _value: int) -> None:
        self._sync_slider()
        self.recompute()
