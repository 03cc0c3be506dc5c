"""What an estimate assumed where a hardware class × backend has no prompt measurements of its own.

benchmarks/prefill_fallback.py gives such a class × backend the median prefill share of its backend's
classes that have prompt rows and writes the rule, in words, to catalog/speed.toml (``prefill_rule``): the
product's rule is to fall back to a cited generic rule and say what was assumed, not to refuse.
"""

from __future__ import annotations

from collections.abc import Iterable

from rigcheck.core.catalog import SpeedFactor
from rigcheck.core.said import Percent, Text, say


def assumed_share(factors: Iterable[SpeedFactor | None]) -> list[Text]:
    """What was assumed where a class × backend has no prompt measurements of its own: the generic rule its
    prefill share comes from (``SpeedFactor.prefill_rule``, benchmarks/prefill_fallback.py), once each."""
    said: list[Text] = []
    for factor in factors:
        if factor is None or not factor.prefill_rule:
            continue
        words = say(
            "prefill assumed: no prompt-processing measurements for {hw_class} on {backend}; its share of "
            "the peak ({share}) is {rule}",
            hw_class=factor.hw_class,
            backend=factor.backend,
            share=Percent(factor.prefill_compute_efficiency or 0.0),
            rule=factor.prefill_rule,
        )
        if words not in said:
            said.append(words)
    return said
