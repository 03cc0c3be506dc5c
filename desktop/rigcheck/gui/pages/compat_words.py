"""What the Compatibility page says: the coloured counts header, each bucket's count, a finding's title,
the first sentences of a long fix, and the order of a GPU's rows."""

from __future__ import annotations

from rigcheck.core.compat import DISPLAY_RANK, Finding, bucket
from rigcheck.gui.i18n import tr
from rigcheck.gui.widgets import STATUS, esc

#: the order of a GPU's rows: what needs doing first, what works next; "not-here" is folded away below them
ROW_ORDER = ("problem", "unknown", "limited", "ok")
#: the counts header: (buckets counted, words, colour); not-applicable is muted, never red
HEADER_COUNTS = (
    (("problem",), ("1 problem", "{n} problems"), "#c8433a"),
    (("unknown",), ("1 unknown", "{n} unknown"), "#c98a12"),
    (("ok", "limited"), ("1 OK", "{n} OK"), "#2e9d57"),
    (("not-here",), ("1 not applicable", "{n} not applicable"), "#7a7f87"),
)
#: what the counts line calls each display bucket
BUCKET_WORDS = {
    "problem": "need attention",
    "unknown": "unknown",
    "not-here": "would not work here",
    "limited": "would work with limits",
    "ok": "OK",
}


def _bucket_count(bucket: str, n: int) -> str:
    """'3 unknown': Italian agrees the adjective with the count ('1 sconosciuto', '3 sconosciuti')."""
    if bucket == "unknown" and n != 1:
        return tr("{n} unknown", n=n)
    return f"{n} {tr(BUCKET_WORDS[bucket])}"


def ordered(findings: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """A GPU's rows in ROW_ORDER (problems, unknowns, limited, OK; the worst status first within each),
    and apart from them the "would not work here" ones, which the page folds into one collapsed line."""
    rank = lambda f: (ROW_ORDER.index(bucket(f)), DISPLAY_RANK.get(f.status, 9))  # noqa: E731
    rows = sorted((f for f in findings if bucket(f) != "not-here"), key=rank)
    return rows, [f for f in findings if bucket(f) == "not-here"]


def counts_header(counts: dict[str, int], *, failing: bool = True) -> str:
    """ "2 problems · 5 OK · 8 not applicable", each count in its colour ("0 problems" in green: the
    answer to "is anything wrong?" is always there; problems that are all warnings in the warning's
    amber, as their rows)."""
    parts = []
    for buckets, words, colour in HEADER_COUNTS:
        n = sum(counts.get(b, 0) for b in buckets)
        if n == 0 and buckets != ("problem",):
            continue
        shown = colour if n or buckets != ("problem",) else STATUS["ok"][2]
        if buckets == ("problem",) and n and not failing:
            shown = STATUS["warn"][2]
        text = tr(words[0]) if n == 1 else tr(words[1], n=n)
        parts.append(f'<span style="color:{shown}">{esc(text)}</span>')
    return " · ".join(parts)


def finding_title(framework: str, subject: str) -> str:
    """ "nvidia-driver · NVIDIA driver 570.124.04"; the subject alone when it names the framework."""

    def words(text: str) -> str:
        return text.casefold().replace("-", " ").replace("_", " ")

    first = words(subject).split()[0] if subject.split() else ""
    if not framework or words(framework) in words(subject) or (first and first in words(framework)):
        return subject
    return f"{subject} · {framework}"


#: a fix longer than this shows its first sentences in the row, whole in the tooltip and the details line
FIX_SHOWN = 180


def first_sentences(text: str, limit: int = FIX_SHOWN) -> str:
    """``text``'s first sentences up to ``limit`` characters, "…" where more follows (a fix of five
    sentences made its row twelve lines tall); one long sentence is cut at a word."""
    if len(text) <= limit:
        return text
    shown, rest = "", text
    while rest:
        cut = rest.find(". ")
        sentence, rest = (rest, "") if cut < 0 else (rest[: cut + 1], rest[cut + 2 :])
        if shown and len(shown) + len(sentence) + 1 > limit:
            break
        shown = f"{shown} {sentence}".strip()
    if len(shown) > limit + 40:  # one long sentence: cut at a word
        shown, rest = shown[: shown.rfind(" ", 0, limit) if " " in shown[:limit] else limit], "…"
    return shown + (" …" if rest else "")
