"""Foreign text made safe for our rich-text labels (Qt-free, so the window's first frame can use it
without importing the widgets module and the ``Qt`` namespace)."""

from __future__ import annotations

import re

_UNBROKEN = re.compile(r"\S{200,}")
_ZERO_WIDTH_SPACE = "\u200b"
#: what html.escape(text, quote=True) replaces, in its order (the html package, with its 2,000-entry
#: entity table, costs ~2 ms to import before the first frame)
_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("'", "&#x27;"))


def breakable(text: str) -> str:
    """``text`` with a zero-width space every 40 characters inside runs of 200 or more without a space, so a
    word-wrapped label can wrap them instead of widening its window (issue 30 #14); ordinary words, paths
    and links (all shorter) are untouched."""
    return _UNBROKEN.sub(
        lambda m: _ZERO_WIDTH_SPACE.join(m.group(0)[i : i + 40] for i in range(0, len(m.group(0)), 40)), text
    )


def esc(value: object) -> str:
    """Text that is not ours (a hostname, a GPU or model name, a note) for one of our rich-text labels.

    Snapshots, reports, GGUF files and the hub are anyone's text: inside our own markup it is escaped,
    so it can neither style text, nor load an image, nor add a link (issue 17 #5).
    """
    text = breakable(str(value))
    for char, entity in _ESCAPES:
        text = text.replace(char, entity)
    return text
