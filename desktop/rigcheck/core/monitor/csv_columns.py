"""The stable CSV columns of a sample, with their units, and a sample's row under them."""

from __future__ import annotations

from operator import attrgetter

from rigcheck.core.monitor.records import Sample

#: per-GPU columns: (column suffix with its unit, GpuSample field)
GPU_COLUMNS: tuple[tuple[str, str], ...] = (
    ("util_percent", "utilization_percent"),
    ("mem_used_bytes", "memory_used_bytes"),
    ("power_w", "power_watts"),
    ("power_limit_w", "power_limit_watts"),
    ("temp_c", "temperature_c"),
    ("sm_clock_mhz", "sm_clock_mhz"),
    ("mem_clock_mhz", "memory_clock_mhz"),
    ("fan_percent", "fan_percent"),
    ("pcie_rx_bytes_per_s", "pcie_rx_bytes_per_s"),
    ("pcie_tx_bytes_per_s", "pcie_tx_bytes_per_s"),
    # added after the first release: new columns go at the end of each GPU's group
    ("mem_total_bytes", "memory_total_bytes"),
    ("temp_slowdown_c", "temperature_slowdown_c"),
)
_gpu_values = attrgetter(*(field for _suffix, field in GPU_COLUMNS))


def gpu_columns(index: int) -> list[str]:
    return [f"gpu{index}_{suffix}" for suffix, _field in GPU_COLUMNS]


def columns(sample: Sample) -> list[str]:
    """Stable column names with their units: "time", "wall", then CPU/RAM, then each GPU's."""
    names = ["time", "wall", "cpu_percent", "ram_used_bytes"]
    for gpu in sample.gpus:
        names += gpu_columns(gpu.index)
    return names


def row(sample: Sample) -> dict[str, float | None]:
    """The sample's values under :func:`columns`; ``None`` where a value is not available."""
    values: dict[str, float | None] = {
        "time": sample.t,
        "wall": sample.wall,
        "cpu_percent": sample.cpu_percent,
        "ram_used_bytes": sample.ram_used_bytes,
    }
    for gpu in sample.gpus:
        values.update(zip(gpu_columns(gpu.index), _gpu_values(gpu), strict=True))
    return values
