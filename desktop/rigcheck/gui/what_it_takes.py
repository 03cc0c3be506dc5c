"""The "What would it take?" action every does-not-fit verdict offers (Fit, Overview cards, Models rows).

One button, made here so that it reads and behaves the same everywhere: pressed, it asks the window
(:meth:`rigcheck.gui.state.AppState.ask_upgrade`) to open Upgrade with the model, workload and context
filled in and the answer worked out.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QPushButton

from rigcheck.gui.i18n import tr
from rigcheck.gui.state import AppState

#: what the ask is: (model id, workload, context or None); None when there is nothing to ask about
Ask = Callable[[], tuple[str, str, int | None] | None]


def take_button(state: AppState, ask: Ask, *, flat: bool = False) -> QPushButton:
    """A "What would it take?" button that opens Upgrade for what ``ask`` returns when pressed."""
    button = QPushButton(tr("What would it take?"))
    button.setAccessibleName(tr("What would it take?"))
    button.setToolTip(tr("Open Upgrade with this model filled in: the GPUs or machines that would run it"))
    button.setFlat(flat)

    def pressed() -> None:
        question = ask()
        if question is not None:
            state.ask_upgrade(*question)

    button.clicked.connect(pressed)
    return button


__all__ = ["Ask", "take_button"]
