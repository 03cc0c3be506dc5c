"""The software stack: Python packages, CUDA toolkits and the LLM runtimes on PATH.

Nothing heavy is imported: package versions come from ``importlib.metadata`` (or from another
interpreter, asked the same question in a subprocess), toolkit versions from ``version.json`` /
``version.txt`` or ``nvcc --version``, and executables are asked ``--version`` with a short timeout,
all at once on a small thread pool.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

from rigcheck.core.machine import CudaToolkit, Drivers, Executable, Note, Software
from rigcheck.core.probe._common import Notes, ProbeContext, read_text

#: distribution names whose versions matter to compatibility checks (name as on PyPI, normalised)
PACKAGES = (
    "torch", "torchvision", "transformers", "accelerate", "peft", "trl", "vllm", "sglang",
    "flash-attn", "flash-attn-3", "xformers", "bitsandbytes", "triton", "llama-cpp-python",
    "deepspeed", "unsloth", "exllamav2", "tensorrt-llm", "jax", "jaxlib", "mlx", "mlx-lm",
    "onnxruntime-gpu", "auto-gptq", "autoawq", "optimum", "huggingface-hub", "safetensors",
)  # fmt: skip

#: executable -> arguments that print its version
EXECUTABLES: dict[str, tuple[str, ...]] = {
    "ollama": ("--version",),
    "llama-server": ("--version",),
    "llama-cli": ("--version",),
    "nvcc": ("--version",),
    "nvidia-smi": ("--version",),
    "rocm-smi": ("--version",),
    "amd-smi": ("version",),
}

_VERSION = re.compile(r"\d+(?:\.\d+)+")


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _local_packages() -> dict[str, str]:
    found: dict[str, str] = {}
    wanted = set(PACKAGES)
    for dist in metadata.distributions():
        name = dist.name
        if name and _normalise(name) in wanted:
            found.setdefault(_normalise(name), dist.version)
    return dict(sorted(found.items()))


_REMOTE_SCRIPT = (
    "import json,re\n"
    "from importlib import metadata\n"
    "print(json.dumps({re.sub(r'[-_.]+','-',d.name or '').lower(): d.version"
    " for d in metadata.distributions()}))\n"
)


def _interpreter_packages(ctx: ProbeContext, python: str, notes: Notes) -> dict[str, str]:
    out = ctx.run([python, "-I", "-c", _REMOTE_SCRIPT], 10.0)
    if out is None:
        notes.warning(f"could not list packages of {python}")
        return {}
    try:
        everything = json.loads(out)
    except json.JSONDecodeError:
        notes.warning(f"{python} printed something other than a package list")
        return {}
    if not isinstance(everything, dict):
        return {}
    return {k: str(v) for k, v in sorted(everything.items()) if k in PACKAGES}


def parse_executable_version(name: str, output: str) -> str | None:
    """The version an executable printed, in each tool's own format."""
    text = output.strip()
    if name == "ollama":
        # "ollama version is 0.5.7", or with no server: "Warning: client version is 0.5.7"
        match = re.search(r"version is\s+(\S+)", text)
        return match.group(1) if match else None
    if name.startswith("llama-"):
        # "version: 4410 (6e1531ad)" then "built with cc ... for x86_64-linux-gnu"
        match = re.search(r"version:\s*(\d+)\s*\((\w+)\)", text)
        return f"b{match.group(1)} ({match.group(2)})" if match else None
    if name == "nvcc":
        match = re.search(r"release\s+[\d.]+,\s*V(\d+(?:\.\d+)+)", text)
        return match.group(1) if match else None
    if name == "nvidia-smi":
        match = re.search(r"NVIDIA-SMI version\s*:\s*(\S+)", text)
        return match.group(1) if match else None
    match = _VERSION.search(text)
    return match.group(0) if match else None


def _executable(ctx: ProbeContext, name: str) -> tuple[str, Executable] | None:
    path = ctx.which(name)
    if path is None:
        return None
    output = ctx.run([path, *EXECUTABLES[name]], 3.0)
    return name, Executable(path=path, version=parse_executable_version(name, output or ""))


def _toolkit_version(root: Path) -> str | None:
    raw = read_text(root / "version.json")
    if raw:
        try:
            data = json.loads(raw)
            version = data.get("cuda", {}).get("version") or data.get("cuda_nvcc", {}).get("version")
            if isinstance(version, str):
                return version
        except (json.JSONDecodeError, AttributeError):
            pass
    raw = read_text(root / "version.txt")  # CUDA <= 11.0: "CUDA Version 10.2.89"
    if raw:
        match = _VERSION.search(raw)
        if match:
            return match.group(0)
    match = re.search(r"(\d+\.\d+(?:\.\d+)?)$", root.name)  # cuda-12.4, v12.4
    return match.group(1) if match else None


def _toolkit_roots(ctx: ProbeContext, nvcc: str | None) -> list[Path]:
    roots: list[Path] = []
    for var in ("CUDA_PATH", "CUDA_HOME"):
        if ctx.env.get(var):
            roots.append(Path(ctx.env[var]))
    roots += [Path(v) for k, v in sorted(ctx.env.items()) if k.startswith("CUDA_PATH_V")]  # Windows
    if nvcc:
        roots.append(Path(nvcc).resolve().parent.parent)
    for parent, pattern in (
        ("/usr/local", "cuda*"),
        ("/opt", "cuda*"),
        ("C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA", "v*"),
    ):
        folder = ctx.path(parent) if parent.startswith("/") else Path(parent)
        try:
            roots += sorted(p for p in folder.glob(pattern) if p.is_dir())
        except OSError:
            continue
    return roots


def _is_toolkit(root: Path) -> bool:
    """A CUDA toolkit has nvcc *and* the runtime headers; /usr/local with a wrapper script has not."""
    has_nvcc = (root / "bin" / "nvcc").exists() or (root / "bin" / "nvcc.exe").exists()
    return has_nvcc and any((root / "include" / h).exists() for h in ("cuda_runtime.h", "cuda.h"))


def probe_toolkits(ctx: ProbeContext) -> tuple[CudaToolkit, ...]:
    """Every CUDA toolkit in the usual places, by version; symlinked duplicates counted once."""
    toolkits: dict[str, CudaToolkit] = {}
    nvcc = ctx.which("nvcc")
    for root in _toolkit_roots(ctx, nvcc):
        try:
            resolved = root.resolve()
            if str(resolved) in toolkits or not _is_toolkit(resolved):
                continue
        except OSError:
            continue
        version = _toolkit_version(resolved)
        if version is None or version.count(".") < 2:
            # No version file (pip-installed toolkits, some distributions): ask this toolkit's nvcc.
            output = ctx.run([str(resolved / "bin" / "nvcc"), "--version"], 3.0)
            version = parse_executable_version("nvcc", output or "") or version
        if version is not None:
            toolkits[str(resolved)] = CudaToolkit(version=version, path=str(resolved))
    return tuple(sorted(toolkits.values(), key=lambda t: _version_key(t.version)))


def _version_key(version: str) -> tuple[int, ...]:
    match = _VERSION.search(version)
    return tuple(int(x) for x in match.group(0).split(".")) if match else ()


def _nvidia_kernel_module(ctx: ProbeContext) -> str | None:
    """The loaded kernel module's version: "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14 …"."""
    text = read_text(ctx.path("/proc/driver/nvidia/version"))
    match = re.search(r"Kernel Module(?: for \w+)?\s+(\d+(?:\.\d+)+)", text or "")
    return match.group(1) if match else None


def probe_software(
    ctx: ProbeContext, pythons: tuple[str, ...] = ()
) -> tuple[Software, Drivers, tuple[Note, ...]]:
    """Packages of this interpreter (or only of ``pythons``), toolkits, executables, driver fallbacks."""
    notes = Notes("software")
    with ThreadPoolExecutor(max_workers=len(EXECUTABLES)) as pool:
        found = [r for r in pool.map(lambda n: _executable(ctx, n), EXECUTABLES) if r is not None]
    executables = dict(found)

    if pythons:
        # The target environments' own importlib.metadata is the only source: RigCheck's interpreter
        # may hold other versions of the same packages (huggingface-hub, packaging, …).
        packages: dict[str, str] = {}
        for python in pythons:
            for name, version in _interpreter_packages(ctx, python, notes).items():
                packages.setdefault(name, version)
        notes.info(f"Python packages are those of {', '.join(pythons)}")
    else:
        packages = _local_packages()
        notes.info(
            "Python packages are those of the interpreter running RigCheck; "
            "pass --python PATH to inspect the environment you train or serve from"
        )

    drivers = Drivers(nvidia=_nvidia_kernel_module(ctx)) if ctx.platform.startswith("linux") else Drivers()
    software = Software(
        cuda_toolkits=probe_toolkits(ctx),
        python_packages=packages,
        executables=executables,
    )
    return software, drivers, notes.collected()
