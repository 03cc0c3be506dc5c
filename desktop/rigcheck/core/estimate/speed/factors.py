"""Which class of hardware a device is, which backend it runs, and its fitted factors
(``catalog/speed.toml``): a class × backend's speed factors, an engine's own rows, and engine maturities."""

from __future__ import annotations

from dataclasses import replace

from rigcheck.core.catalog import Backend, Catalog, GpuSpec, Maturity, SpeedFactor
from rigcheck.core.machine import GPU

CPU_CLASS = "cpu"
_DEFAULT_BACKEND: dict[str, Backend] = {"nvidia": "cuda", "amd": "rocm", "apple": "metal", "intel": "vulkan"}
#: the vendors whose usual backend is known
DEFAULT_BACKENDS = frozenset(_DEFAULT_BACKEND)


def hardware_class(vendor: str, name: str, spec: GpuSpec | None, unified: bool | None = None) -> str:
    """The class whose factors apply: vendor × market segment, and for Apple the chip tier."""
    if vendor == "apple":
        words = name.lower()
        if "max" in words or "ultra" in words:
            return "apple-max"
        return "apple-pro" if "pro" in words else "apple-base"
    segment = spec.segment if spec else None
    if vendor == "nvidia":
        if segment == "soc":
            return "nvidia-soc"
        return "nvidia-datacenter" if segment == "datacenter" else "nvidia-consumer"
    if vendor == "amd":
        if segment in ("soc", "integrated") or unified:
            return "amd-apu"
        if spec is not None and (spec.architecture or "").upper().startswith("GCN"):
            # Vega-era GCN (gfx906: MI50/MI60, Radeon VII): no matrix units, prompt GEMMs on dot-product ALUs
            return "amd-gcn"
        return "amd-datacenter" if segment == "datacenter" else "amd-consumer"
    return "intel"


def default_backend(vendor: str) -> Backend:
    return _DEFAULT_BACKEND.get(vendor, "cpu")


def speed_factor(catalog: Catalog, hw_class: str, backend: Backend | None) -> SpeedFactor | None:
    """The factors for this class and backend; the class's default backend when that one is not fitted."""
    rows = [f for f in catalog.speed_factors if f.hw_class == hw_class]
    if backend is not None:
        exact = next((f for f in rows if f.backend == backend), None)
        if exact is not None:
            return exact
    return next((f for f in rows if f.default), rows[0] if rows else None)


#: the speed_factor backend that holds ktransformers' CPU expert factors (hw_class "cpu")
KTRANSFORMERS = "ktransformers"
#: the speed_factor backend that holds MLX's own factors per Apple class (catalog/speed_engines.toml)
MLX: Backend = "mlx"


def engine_cpu_factor(catalog: Catalog, engine: str) -> SpeedFactor | None:
    """The CPU class's factors for an engine with CPU kernels of its own (ktransformers): its exact row only,
    never llama.cpp's CPU row in its place (another engine's kernels); None when none is fitted."""
    return next((f for f in catalog.speed_factors if f.hw_class == CPU_CLASS and f.backend == engine), None)


def maturity(catalog: Catalog, engine: str, model_type: str) -> Maturity | None:
    return next((m for m in catalog.maturities if m.engine == engine and m.model_type == model_type), None)


def engine_maturity(catalog: Catalog, engine: str, model_type: str) -> Maturity | None:
    """The maturity an estimate for ``engine`` applies to ``model_type``. Ollama runs llama.cpp's kernels, so
    llama.cpp's maturity for the architecture holds for it, times Ollama's own where its fit rows show one
    (catalog/speed.toml engine "ollama", fitted by benchmarks/fit_speed.py --maturity against estimates that
    already carry llama.cpp's): Ollama builds some architectures' graphs itself (in Go, on a pinned ggml) and
    runs them below llama.cpp's own, e.g. Qwen3-Next/Qwen3.5's Gated DeltaNet without llama.cpp's fused op
    (ollama/ollama PR #16150). Either alone is returned as it is; both as one Maturity, product of the
    factors, naming both sources."""
    if engine != "ollama":
        return maturity(catalog, engine, model_type)
    upstream = maturity(catalog, "llama.cpp", model_type)
    own = maturity(catalog, "ollama", model_type)
    if upstream is None or own is None:
        return upstream or own
    return replace(
        own,
        decode_factor=upstream.decode_factor * own.decode_factor,
        prefill_factor=upstream.prefill_factor * own.prefill_factor,
        source=f"{upstream.source}; {own.source}",
        sources=(*upstream.sources, *own.sources),
    )


def gpu_factor(
    catalog: Catalog, gpu: GPU, spec: GpuSpec | None, backend: Backend | None
) -> SpeedFactor | None:
    cls = hardware_class(gpu.vendor, gpu.name, spec, gpu.unified_memory)
    return speed_factor(catalog, cls, backend or default_backend(gpu.vendor))


#: engines with GPU kernels of their own whose factors are a speed_factor row keyed by the engine's name
#: (hw_class × "mlx"): mlx-lm's Metal kernels are not llama.cpp's Metal backend
ENGINE_GPU_BACKENDS: frozenset[str] = frozenset({"mlx"})


def engine_gpu_factor(
    catalog: Catalog, gpu: GPU, spec: GpuSpec | None, engine: str, backend: Backend | None
) -> tuple[SpeedFactor | None, bool]:
    """The GPU's factors for ``engine``, and whether they are the engine's own: its exact class × engine row
    (for what that row was fitted on; the prefill shares it lacks come from the backend's row), else the
    class × backend row llama.cpp's kernels use."""
    base = gpu_factor(catalog, gpu, spec, backend)
    if engine not in ENGINE_GPU_BACKENDS:
        return base, False
    cls = hardware_class(gpu.vendor, gpu.name, spec, gpu.unified_memory)
    own = next((f for f in catalog.speed_factors if f.hw_class == cls and f.backend == engine), None)
    if own is None:
        return base, False
    if own.prefill_compute_efficiency is None and base is not None:
        own = replace(
            base,
            id=own.id,
            backend=own.backend,
            decode_bandwidth_efficiency=own.decode_bandwidth_efficiency,
            decode_compute_efficiency=own.decode_compute_efficiency,
            per_layer_us=own.per_layer_us,
            per_gpu_us=own.per_gpu_us,
            source=own.source,
        )
    return own, True
