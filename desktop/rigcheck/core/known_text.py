"""Sentences stored in English (probe notes inside a snapshot, error lines from files and the hub) shown in
the user's language at the edge where they are shown.

A snapshot keeps the notes its probes wrote, in English, whatever language the app runs in later; an error
is raised as one English line (``InputError``: "source: problem"). :func:`in_language` recognises the
sentences RigCheck itself writes (the templates below, the same words as the probes' and readers' f-strings)
and gives them through ``tr``, with the values taken from the stored text. A sentence that is no known
template (another tool's output, a library's exception text) is left as written and, outside English,
labelled as such, never passed off as a translation.
"""

from __future__ import annotations

import re
from functools import cache

from rigcheck.core.i18n import LANGUAGES, language, tr, translations

#: the probes' notes (core/probe, core/whatif), as their f-strings write them, values as {names}
NOTE_TEMPLATES: tuple[str, ...] = (
    "GPU probing is not implemented for platform {platform}",
    "no GPU found; models would run on the CPU only",
    "memory bandwidth not measured: {reason}",
    "memory copy test: {rate} GB/s",
    "catalog not loaded: {reason}",
    "{gpu} is not in the catalog: its specifications are unknown",
    "GPUs replaced by {names} (from the catalog)",
    "RAM set to {ram} GiB",
    "added {names} (from the catalog)",
    "PSU set to {watts} W",
    "system_profiler listed no GPU",
    "system_profiler did not report the GPU core count",
    "free GPU memory is not reported on Apple Silicon: the GPU shares RAM with the CPU, so what is free is "
    "the system's available memory",
    "iogpu.wired_limit_mb is not readable (macOS before 14 has no such setting)",
    "GPU memory limit {limit} MiB set by iogpu.wired_limit_mb",
    "total RAM is unknown, so the GPU memory limit is unknown too",
    "GPU memory limit estimated as {share} of {ram} GiB unified memory (macOS default wired limit; set "
    "iogpu.wired_limit_mb to change it)",
    "skipped {name}: unknown GPU vendor",
    "{name} shares system RAM; its memory figure is the dynamic maximum macOS reports",
    "system_profiler gave no VRAM size for {name}",
    "Python packages are those of the interpreter running RigCheck; pass --python PATH to inspect the "
    "environment you train or serve from",
    "Python packages are those of {pythons}",
    "could not list packages of {python}",
    "the registry does not say how much GPU memory is free",
    "Windows is using the Microsoft Basic Display Adapter: a GPU may be installed without its driver",
    "{label}: Windows driver version {version}",
    "{label}: the registry gives no memory size",
    "operating system version not readable",
    "running under WSL: GPUs are reached through the Windows driver (/usr/lib/wsl/lib)",
    "running inside a {container} container: GPUs and RAM seen here may be a subset of the host's",
    "CPU frequency not readable: {reason}",
    "CPU maximum clock not readable (no cpufreq driver, as in many virtual machines): the current {mhz} "
    "MHz is used, so CPU compute estimates may be low",
    "CPU model not readable",
    "swap size not readable: {reason}",
    "AMX and AVX512-BF16 are not detected on Windows (py-cpuinfo does not read those CPUID bits)",
    "{name}: integrated GPU shares system RAM",
    "{name}: AMD GPU with {driver}, not amdgpu",
    "amdgpu is the kernel's in-tree driver (no separate driver version)",
    "{name}: VRAM size unknown (no readable mem_info_vram_total)",
    "{name}: APU: VRAM is the BIOS carve-out; the GPU can also use up to {gtt} GiB of system RAM (GTT)",
    "amdsmi failed ({reason}); using the sysfs values",
    "NVML could not count the NVIDIA GPUs",
    "{label}: NVML did not report the GPU's name",
    "{label}: unified memory shared with the CPU; NVML reports no separate VRAM size",
    "{label}: memory size not reported by NVML",
    "{label}: power limit not supported on this GPU",
    "{label}: power limit could not be read",
    "{label}: MIG is enabled; memory shown is the whole GPU, a MIG instance sees only its slice",
    "{label} fell off the bus while probing (GPU is lost)",
    "NVIDIA driver installed but not loaded (nvmlInit: Driver Not Loaded); is the kernel module loaded?",
)

#: the problems InputError and NetworkError name after "source: " (core/fileio, core/machine, the hub)
ERROR_TEMPLATES: tuple[str, ...] = (
    "no such file",
    "is a folder, not a {what} file",
    "cannot read ({reason})",
    "larger than {size} MiB: not a {what} file",
    "not a text file (invalid UTF-8)",
    "empty file",
    "not valid JSON (nested more than {depth} levels deep)",
    "not valid JSON ({reason})",
    "not a RigCheck machine snapshot (expected a JSON object)",
    "machine: expected the report's machine snapshot (an object)",
    "{value} is outside the sane range {low} to {high}",
    "gated: accept the licence on the model page and set HF_TOKEN",
    "repository not found on the hub (a private one needs HF_TOKEN)",
    "revision {revision} not found in the repository",
    "repository disabled on the hub",
    "{what} is not in the local cache",
    "{what} not found in the repository",
    "offline (HF_HUB_OFFLINE is set)",
    "the hub answered HTTP {status} for {what}",
    "no answer from the hub within {seconds} s ({what})",
    "cannot reach the hub ({reason})",
    "the hub took longer than {seconds} s in all",
    "not a Hugging Face model id (expected {forms})",
    "malformed reply from the hub ({what})",
    # core/estimate/lora_targets.py: the Fit page's "LoRA targets" on a model without such modules
    "LoRA targets {targets} match no module of this model (PEFT: 'Target modules not found in the base "
    "model'); try all-linear",
)

#: how deep "source: source: problem" is unpicked looking for a known problem
_DEPTH = 4


@cache
def _patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    """Each template as an anchored pattern whose named groups are its {values}."""
    compiled = []
    for template in (*NOTE_TEMPLATES, *ERROR_TEMPLATES):
        parts = re.split(r"\{(\w+)\}", template)
        pattern = "".join(
            re.escape(part) if n % 2 == 0 else f"(?P<{part}>.+?)" for n, part in enumerate(parts)
        )
        compiled.append((re.compile(f"^{pattern}$", re.DOTALL), template))
    return tuple(compiled)


def preload() -> None:
    """Compile the templates' patterns and each language's translation starts now (the GUI does this on
    a pool thread at start-up): made on first use, they landed in the first Overview of a machine with
    probe notes, on the GUI thread (a Fleet double-click: over 100 ms while the pool was busy)."""
    _patterns()
    for code in LANGUAGES:
        if code != "en":
            _translation_starts(code)


def translated(text: str) -> str | None:
    """``text`` in the current language when it is one of RigCheck's own sentences (a template above,
    after any number of "source: " prefixes, which stay as they are), else None."""
    for pattern, template in _patterns():
        match = pattern.match(text)
        if match:
            return tr(template, **match.groupdict())
    return _after_source(text, _DEPTH)


def _after_source(text: str, depth: int) -> str | None:
    if depth <= 0:
        return None
    start = 0
    while (cut := text.find(": ", start)) >= 0:
        rest = text[cut + 2 :]
        for pattern, template in _patterns():
            match = pattern.match(rest)
            if match:
                return f"{text[:cut]}: {tr(template, **match.groupdict())}"
        start = cut + 2
    return None


#: a translation's fixed start shorter than this could match by chance: not taken as a sign
_SIGN_CHARS = 14


@cache
def _translation_starts(code: str) -> tuple[str, ...]:
    """The fixed starts (up to the first {value}) of the language's translations."""
    starts = {value.split("{", 1)[0].strip() for value in translations(code).values()}
    return tuple(start for start in starts if len(start) >= _SIGN_CHARS)


def _already_translated(text: str) -> bool:
    """``text`` holds one of the current language's translations (a core error raised through ``tr``)."""
    return any(start in text for start in _translation_starts(language()))


def in_language(text: str, *, probe_note: bool = False) -> str:
    """What to show for a stored English sentence: its translation when it is a known one; else, outside
    English, the text as written with a label saying so (a probe's note, or a message from elsewhere)."""
    known = translated(text)
    if known is not None:
        return known
    if language() == "en" or not text.strip() or _already_translated(text):
        return text
    label = tr("(as the probe wrote it)") if probe_note else tr("(message in English)")
    return f"{text} {label}"


__all__ = ["ERROR_TEMPLATES", "NOTE_TEMPLATES", "in_language", "preload", "translated"]
