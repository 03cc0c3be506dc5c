"""A core sentence's source citation moved out of the sentence, for the Fit page's verdict and speed cards.

The core writes a sentence with its source in brackets ("… less 12.8 GiB the system keeps (https://blog…
(GB10 unified memory: …))"), as the CLI and the reports print it. On a card the citation is an English
URL or kernel path in the middle of an Italian sentence; there the sentence is read without it and the
source sits in the card's tooltip and in the "Why?" table, where every number's source is listed.
Qt-free: tests read the same split the page shows.
"""

from __future__ import annotations

import re

from rigcheck.core.unified import AMD_GTT_SOURCE, GB10_SOURCE, INTEL_SOURCE

#: the sources the core cites inside its sentences, longest first (one may contain another's words)
KNOWN_SOURCES = tuple(sorted((AMD_GTT_SOURCE, GB10_SOURCE, INTEL_SOURCE), key=len, reverse=True))
#: any other bracketed citation that opens with a URL: "(https://…)", one level of brackets inside
_URL_BRACKET = re.compile(r"\s*\((?:https?://)[^()]*(?:\([^()]*\)[^()]*)*\)")


def split_sources(text: str) -> tuple[str, list[str]]:
    """``text`` without its bracketed (or bare) source citations, and the citations it carried."""
    found: list[str] = []
    for source in KNOWN_SOURCES:
        if source in text:
            found.append(source)
            text = text.replace(f" ({source})", "").replace(f"({source})", "")
            text = text.replace(f" {source}", "").replace(source, "")
    for match in _URL_BRACKET.finditer(text):
        found.append(match.group().strip()[1:-1])
    text = _URL_BRACKET.sub("", text)
    return re.sub(r"\s+([,;.:])", r"\1", text).strip(), found
