"""Classes × backends without rows of their own: a neighbour's factors, printed as speed.toml rows marked
uncertain (benchmarks/fit_speed.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from fit_points import Point
from per_hop_fit import HopFit
from prefill_fallback import GenericPrefill
from prefill_fit import PrefillFit, prefill_lines
from scan_fit import ScanFit

DEFAULT_BACKEND = {"nvidia": "cuda", "amd": "rocm", "apple": "metal", "intel": "vulkan", "cpu": "cpu"}


def printed_per_layer_us(
    key: tuple[str, str], decode_fits: Mapping[tuple[str, str], tuple[float, ...]]
) -> float:
    """The per-layer µs speed.toml gives a class × backend: its own decode fit's, else the neighbour's it
    borrows (BORROWED, BORROWED_BACKEND), else 0 (a class the fit gives no decode factors)."""
    if key in decode_fits:
        return float(decode_fits[key][1])
    for cls, backend, neighbour, _why in BORROWED:
        if (cls, backend) == key and (neighbour, backend) in decode_fits:
            return float(decode_fits[(neighbour, backend)][1])
    for cls, backend, neighbour, _why in BORROWED_BACKEND:
        if (cls, backend) == key and (neighbour, backend) in decode_fits:
            return float(decode_fits[(neighbour, backend)][1])
    return 0.0


#: classes with no measurement yet borrow a neighbour's factors, marked uncertain
BORROWED = (
    (
        "apple-pro",
        "metal",
        "apple-base",
        "No measured M-Pro row yet: the base chips' factors (the issue's premise puts Pro between base and Max/Ultra).",
    ),
    (
        "amd-datacenter",
        "rocm",
        "amd-consumer",
        "No Instinct (CDNA) llama.cpp decode row in the fit split yet: the Radeon ROCm decode factors.",
    ),
)


#: a class × backend with no rows of its own that runs the same backend's kernels as a fitted class of its
#: vendor: that row's decode factors (the share of the bandwidth the backend's weight reads reach, and its
#: per-layer launch cost), not the class's default backend's (speed.speed_factor falls back to the default
#: backend, so a Radeon on Vulkan otherwise got the ROCm ones). RDNA dGPUs and the RDNA APUs run llama.cpp's
#: one Vulkan backend (ggml/src/ggml-vulkan) through the same RADV/AMDVLK drivers. Prefill is compute-bound
#: and rides the chip's own matrix path (RDNA 4's WMMA is not RDNA 3.5's), so its shares stay the class's
#: default backend's, as before.
BORROWED_BACKEND = (
    (
        "amd-consumer",
        "vulkan",
        "amd-apu",
        "No fitted Radeon Vulkan row: decode from the Radeon APUs' Vulkan factors (the same ggml-vulkan kernels and drivers), not the Radeon ROCm ones; prefill stays the class's ROCm shares.",
    ),
)


DECODE_FIELDS = ("decode_bandwidth_efficiency", "per_layer_us", "moe_layer_us")


def print_borrowed_backend(
    printed: dict[tuple[str, str], list[str]], generic: dict[str, GenericPrefill]
) -> None:
    for cls, backend, neighbour, why in BORROWED_BACKEND:
        decode = printed.get((neighbour, backend))
        own = printed.get((cls, DEFAULT_BACKEND.get(cls.split("-")[0], "cpu")), [])
        if (cls, backend) in printed or decode is None:
            continue
        lines = [line for line in decode if line.startswith(DECODE_FIELDS)]
        lines += [line for line in own if line.startswith("prefill_")]
        if not any(line.startswith("prefill_compute_efficiency") for line in lines) and backend in generic:
            lines += generic[backend].lines()  # no prompt rows for the class: its backend's rule
        print("[[speed_factor]]")
        print(f'id = "{cls}-{backend}"')
        print(f'hw_class = "{cls}"')
        print(f'backend = "{backend}"')
        print("\n".join(lines))
        print(
            f'source = "benchmarks/data/measurements.csv (no rows of this class and backend): the {neighbour}-{backend} factors"'
        )
        print('confidence = "uncertain"')
        print(f'notes = "{why}"')
        print()


def print_borrowed(
    fitted: dict[tuple[str, str], tuple[float, float]],
    hops: dict[tuple[str, str], HopFit],
    generic: dict[str, GenericPrefill],
    *,
    prefill_fits: dict[tuple[str, str], PrefillFit] | None = None,
    prefill: dict[tuple[str, str], list[Point]] | None = None,
    scan: ScanFit | None = None,
) -> None:
    """Classes without decode rows of their own: a neighbour's decode factors, marked uncertain; their own
    prefill shares where they have prompt rows, else their backend's generic rule (prefill_fallback)."""
    print("# ---- classes without measurements of their own: a neighbour's factors, marked uncertain ----\n")
    for cls, backend, neighbour, why in BORROWED:
        # the neighbour's factors on this backend (not whichever of its backends was fitted last)
        if (neighbour, backend) not in fitted or any(c == cls for c, _b in fitted):
            continue
        eff, tau = fitted[(neighbour, backend)]
        own = (prefill_fits or {}).get((cls, backend))
        print("[[speed_factor]]")
        print(f'id = "{cls}-{backend}"')
        print(f'hw_class = "{cls}"')
        print(f'backend = "{backend}"')
        print("default = true")
        print(f"decode_bandwidth_efficiency = {eff:.2f}")
        print(f"per_layer_us = {tau:g}")
        hop = hops.get((cls, backend))
        if hop is not None and hop.us:
            print(f"per_gpu_us = {hop.us:g}")
        if own is not None:
            print("\n".join(prefill_lines(own)))
        elif backend in generic:
            # no prompt rows either: the backend's generic share, said as assumed (prefill_fallback)
            print("\n".join(generic[backend].lines()))
        if scan is not None and (own is not None or backend in generic):
            # the recurrent-scan share is one figure pooled over every GPU class and backend (scan_fit)
            print(f"prefill_scan_efficiency = {scan.efficiency:.3f}")
        if own is not None:
            print(
                f'source = "benchmarks/data/measurements.csv: decode from the {neighbour} factors (no decode '
                'rows of this class in the fit split); prefill fitted on its own rows"'
            )
        else:
            print(
                f'source = "benchmarks/data/measurements.csv (no rows of this class): the {neighbour} factors"'
            )
        measured = [f"prefill: {own.said}"] if own is not None else []
        if hop is not None and hop.us:
            measured.append(f"per further GPU: {hop.said}")
        if measured:
            print(f'measured = "{"; ".join(measured)}"')
        if own is not None:
            print("sources = [")
            for url in sorted({p.row.source_url for p in (prefill or {}).get((cls, backend), [])}):
                print(f'  "{url}",')
            print("]")
        print('confidence = "uncertain"')
        print(f'notes = "{why}"')
        print()
