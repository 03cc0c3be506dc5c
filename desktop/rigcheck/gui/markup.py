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


#: a unit with a slash between letters or digits ("GB/s", "token/s", "0.68/h"), alone in its word (a
#: path's parts, "ggml/src/mmq.cu", are not units)
_SLASHED_UNIT = re.compile(r"(?<![\w/\-])(\w+)/(\w+)(?![\w/\-]|\.\w)")
#: U+2060 WORD JOINER: no line break here, nothing drawn
_WORD_JOINER = "\u2060"


def units_whole(text: str) -> str:
    """``text`` (plain or escaped markup) with a word joiner after each slashed unit's slash: a word-wrapped
    label or table cell broke "77 GB/s" after its slash ("GB/" over "s"); a nowrap span only holds spaces."""
    return _SLASHED_UNIT.sub(lambda m: f"{m.group(1)}/{_WORD_JOINER}{m.group(2)}", text)
