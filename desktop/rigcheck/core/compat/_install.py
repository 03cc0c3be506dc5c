"""Installing a package together with the torch it requires: which torch pip ends up with, a command that pins
a working pair, and why that torch could not run here — so no command pins a torch that fails.

``pinned_install`` is asked by the framework checks (``_rules``) for each framework's newest release and the
torch requirement its own metadata records (catalog/compat/wheels.toml).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from packaging.specifiers import SpecifierSet

from rigcheck.core.catalog import TorchRelease
from rigcheck.core.compat._base import Check, Facts, combine, minor
from rigcheck.core.compat._cuda import driver_supports
from rigcheck.core.compat._torch_builds import (
    INDEX,
    ON_PYTORCH_INDEX,
    arch_check,
    cuda_of_variant,
    parse_build,
    variant_entry,
)
from rigcheck.core.compat._torch_recommend import (
    _best,
    _cuda_candidates,
    _jetson_builds,
    _pin,
    _released,
    recommend,
)
from rigcheck.core.i18n import tr

#: packages that use whichever CUDA build of torch is installed (pure Python, or shipping their own CUDA
#: libraries): the torch they pin may come from the download.pytorch.org variant that fits this GPU and
#: driver.
#: Others (vLLM, SGLang, FlashAttention, TensorRT-LLM) are compiled against one torch build: PyPI's, or the
#: variant their docs name.
ANY_VARIANT = frozenset({"unsloth", "deepspeed", "bitsandbytes", "exllamav2"})


@dataclass(frozen=True)
class InstallPlan:
    """Installing a package with the torch it needs: the torch it replaces the installed one with (None: the
    installed one fits), a pip command pinning both, and why that torch cannot run here (None: it can)."""

    replaced: str | None
    command: str | None
    problem: Check | None = None


def _variant_runs(facts: Facts, release: TorchRelease, variant: str) -> Check:
    """Whether ``variant`` of ``release`` has kernels for every NVIDIA GPU here and runs on this driver."""
    entry = variant_entry(facts, release.version, variant)
    cuda = cuda_of_variant(variant)
    if entry is None or cuda is None:
        return Check("ok", tr("{variant} (not catalogued)", variant=variant))
    gpus = [g for _, g in facts.gpus_of("nvidia")]
    return combine([*(arch_check(entry, g) for g in gpus), driver_supports(facts, cuda, f"torch +{variant}")])


def pinned_install(
    facts: Facts, package: str, latest: str, spec: str, variant_of_docs: str | None = None
) -> InstallPlan | None:
    """Installing ``package`` ``latest``, whose torch requirement is ``spec`` (None: no catalogued release
    fits it).

    Packages built against PyPI's torch get PyPI's torch (or the variant their docs name); packages that
    download.pytorch.org builds per variant (xformers), or that use any torch build (:data:`ANY_VARIANT`), get
    the variant that fits this GPU and driver. A torch that could not run here is never pinned: the plan says
    why instead, and carries no command."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    if _jetson_builds(facts):
        return None  # torch and its extensions come from Jetson's own builds there, not PyPI's
    try:
        wanted = SpecifierSet(spec)
    except InvalidSpecifier:
        return None
    build = parse_build(facts.torch_text or "")
    docs_variant_ok = variant_of_docs is None or (build is not None and build.variant == variant_of_docs)
    if facts.torch is not None and wanted.contains(facts.torch.public, prereleases=True) and docs_variant_ok:
        pin = f"torch=={facts.torch_text}" if build else ""
        return InstallPlan(None, f"pip install {package}=={latest} {pin}".strip())
    found = [(r, p) for r in _released(facts) if (p := _pin_in(r, wanted)) is not None]
    if not found:
        return None
    release, pin = found[0]
    variant = variant_of_docs
    nvidia = bool(facts.gpus_of("nvidia")) and facts.os in ("linux", "windows")
    # PyPI's Windows torch is CPU-only: a CUDA torch on Windows always comes from download.pytorch.org
    windows = facts.os == "windows" and nvidia
    choose = package in ON_PYTORCH_INDEX or package in ANY_VARIANT or windows
    if variant is None and choose and nvidia:
        ready = [
            (combine([k, d]), name, cuda)
            for k, d, name, cuda in _cuda_candidates(facts, release)
            if d.status != "fail"
        ]
        best = _best(ready, release.default_variant)
        variant = best[1] if best else None
        if variant is None and not any(variant_entry(facts, release.version, n) for n in release.variants):
            machine = "aarch64" if facts.arm else "x86_64"
            missing = Check(
                "unknown",
                tr(
                    "the catalog has no arch list of torch {pin}'s {machine} CUDA wheels, so whether "
                    "the torch it "
                    "installs runs here cannot be told",
                    pin=pin,
                    machine=machine,
                ),
                cause="missing-fact",
            )
            return InstallPlan(f"torch {pin}", None, missing)
        if variant is None:
            return InstallPlan(f"torch {pin}", None, _no_build(facts, release, pin))
    shown = variant or release.default_variant
    if nvidia and shown and shown.startswith("cu"):
        runs = _variant_runs(facts, release, shown)
        if runs.status == "fail":
            return InstallPlan(f"torch {pin}+{shown}", None, _no_build(facts, release, pin, runs))
    if variant is None or (variant == release.default_variant and not windows):
        return InstallPlan(f"torch {pin}", f"pip install {package}=={latest} torch=={pin}")
    if package in ON_PYTORCH_INDEX and not _source_only(facts, package):
        return InstallPlan(
            f"torch {pin}+{variant}",
            f"pip install {package}=={latest} torch=={pin} --index-url {INDEX}/{variant}",
        )
    return InstallPlan(
        f"torch {pin}+{variant}",
        f"pip install {package}=={latest} torch=={pin}+{variant} --extra-index-url {INDEX}/{variant}",
    )


def _source_only(facts: Facts, package: str) -> bool:
    """Whether PyPI has only the package's source archive for this platform (xformers on aarch64): then the
    PyTorch index, which has no source archives, cannot be the only index the command names."""
    from rigcheck.core.compat._platform import no_wheel

    found = no_wheel(facts, package, (package,))
    return found is not None and found.status == "warn"


def _pin_in(release: TorchRelease, wanted: SpecifierSet) -> str | None:
    """The release of this series that ``wanted`` admits: its newest patch, else the patch ``wanted`` pins
    exactly ("==2.14.0" when 2.14.1 is out)."""
    if wanted.contains(_pin(release), prereleases=True):
        return _pin(release)
    for spec in wanted:
        if spec.operator in ("==", "===") and minor(spec.version) == minor(release.version):
            return spec.version
    return None


def _no_build(facts: Facts, release: TorchRelease, pin: str, runs: Check | None = None) -> Check:
    """The torch a package would install cannot run here: fail, with the fix that makes it run."""
    wheel = recommend(facts)
    why = (
        runs.reason if runs is not None else tr("no catalogued CUDA build of it runs on this driver and GPU")
    )
    check = Check(
        "fail",
        tr("the torch {pin} it installs cannot run here: {why}", pin=pin, why=why),
        cause=runs.cause if runs is not None and runs.cause else "driver-too-old",
    )
    if wheel is not None and wheel.driver_advice:
        return replace(check, fix=wheel.driver_advice, actions=(f"driver:{wheel.driver}",))
    return check
