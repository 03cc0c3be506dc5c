"""The platform a machine runs software on: OS, CPU architecture, C library, Jetson/JetPack, WSL.

Read from the snapshot's own fields where it has them (``host.libc``, ``host.l4t``) and otherwise recognised
from what every snapshot holds, so reports taken before those fields are judged the same way:

- architecture: ``cpu.arch``; else a GPU that exists only on Arm boards (Jetson Orin CC 8.7, Thor CC
  11.0/10.1, GB10 CC 12.1) or an Apple GPU;
- Jetson: the L4T release, a kernel built for Tegra ("5.15.148-tegra"), "L4T"/"JetPack"/"Jetson" in the OS
  version, or a Jetson GPU;
- JetPack: "JetPack 6.2" in the OS version, else from the L4T major (JetPack 5 = L4T 35, 6 = 36, 7 = 38,
  NVIDIA's JetPack archive);
- WSL: ``host.container == "wsl"`` or "microsoft"/"WSL" in the kernel string;
- glibc: ``host.libc``, else the Ubuntu release's glibc (20.04: 2.31, 22.04: 2.35, 24.04: 2.39).

``tags`` are what [[framework]] ``applies_to`` is matched against: the OS, the architecture, "wsl",
"jetson", "jetpack6"/"jetpack7".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rigcheck.core.compat._base import Check, Facts
from rigcheck.core.i18n import tr
from rigcheck.core.machine import Machine

#: NVIDIA compute capabilities only Jetson modules have: Xavier 7.2, Orin 8.7, Thor 11.0 (10.1 under CUDA 12)
JETSON_CC = frozenset({"5.3", "6.2", "7.2", "8.7", "10.1", "11.0"})
#: GPUs only on Arm systems (GB10 = DGX Spark, CC 12.1)
_ARM_GPU = re.compile(r"\b(orin|thor|jetson|gb10|gh200|gb200)\b", re.IGNORECASE)
_JETSON_GPU = re.compile(r"\b(orin|thor|jetson|xavier)\b", re.IGNORECASE)
_L4T = re.compile(r"\bL4T\s*R?(\d+(?:\.\d+)*)", re.IGNORECASE)
_JETPACK = re.compile(r"\bJetPack\s*(\d+)(?:\.(\d+))?", re.IGNORECASE)
#: JetPack major per L4T (Jetson Linux) major: https://developer.nvidia.com/embedded/jetpack-archive
JETPACK_OF_L4T = {32: 4, 34: 5, 35: 5, 36: 6, 38: 7}
#: glibc of Ubuntu releases: 22.04/24.04 from ROCm 7.0's system requirements (glibc 2.35 / 2.39), 20.04 from
#: https://packages.ubuntu.com/focal/libc6 (2.31)
UBUNTU_GLIBC = {"20.04": (2, 31), "22.04": (2, 35), "24.04": (2, 39)}
_UBUNTU = re.compile(r"Ubuntu (\d\d\.\d\d)")
_GLIBC = re.compile(r"glibc\s*(\d+)\.(\d+)", re.IGNORECASE)


@dataclass(frozen=True)
class Platform:
    os: str | None
    #: "x86_64" or "aarch64" (Apple's arm64 included); None when nothing says
    arch: str | None
    wsl: bool
    glibc: tuple[int, int] | None
    jetson: bool
    l4t: str | None
    jetpack: tuple[int, int | None] | None
    tags: frozenset[str]

    @property
    def jetpack_text(self) -> str | None:
        if self.jetpack is None:
            return None
        major, minor = self.jetpack
        return f"{major}.{minor}" if minor is not None else str(major)


def _arch(machine: Machine) -> str | None:
    arch = (machine.cpu.arch or "").lower()
    if arch in ("x86_64", "amd64", "x64", "i686", "x86"):
        return "x86_64"
    if arch in ("arm64", "aarch64", "armv8", "arm64e"):
        return "aarch64"
    for gpu in machine.gpus:
        if (
            gpu.vendor == "apple"
            or _ARM_GPU.search(gpu.name)
            or gpu.compute_capability in (*JETSON_CC, "12.1")
        ):
            return "aarch64"
    return None


def _jetpack(machine: Machine, l4t: str | None) -> tuple[int, int | None] | None:
    match = _JETPACK.search(machine.host.os_version or "")
    if match:
        return int(match.group(1)), int(match.group(2)) if match.group(2) else None
    if l4t:
        major = int(l4t.split(".")[0])
        if major in JETPACK_OF_L4T:
            return JETPACK_OF_L4T[major], None
    return None


def platform_of(machine: Machine) -> Platform:
    host = machine.host
    text = f"{host.os_version or ''} {host.kernel or ''}"
    l4t = host.l4t
    if l4t is None and (match := _L4T.search(text)):
        l4t = match.group(1)
    nvidia = [g for g in machine.gpus if g.vendor == "nvidia"]
    jetson = (
        l4t is not None
        or "tegra" in (host.kernel or "").lower()
        or bool(re.search(r"\b(L4T|JetPack|Jetson)\b", host.os_version or "", re.IGNORECASE))
        or any(_JETSON_GPU.search(g.name) or g.compute_capability in JETSON_CC for g in nvidia)
    )
    wsl = host.container == "wsl" or bool(re.search(r"microsoft|\bwsl", host.kernel or "", re.IGNORECASE))
    glibc = None
    if host.libc and (found := _GLIBC.search(host.libc)):
        glibc = (int(found.group(1)), int(found.group(2)))
    elif host.os == "linux" and (ubuntu := _UBUNTU.search(host.os_version or "")):
        glibc = UBUNTU_GLIBC.get(ubuntu.group(1))
    arch = _arch(machine)
    jetpack = _jetpack(machine, l4t) if jetson else None
    tags = {t for t in (host.os, arch) if t}
    if wsl:
        tags.add("wsl")
    if jetson:
        tags.add("jetson")
        if jetpack is not None:
            tags.add(f"jetpack{jetpack[0]}")
    return Platform(host.os, arch, wsl, glibc, jetson, l4t, jetpack, frozenset(tags))


def applies(tags: frozenset[str], wanted: tuple[str, ...]) -> bool:
    """Whether a rule for ``wanted`` platform tags ("jetson", "!jetson", "linux") concerns this platform."""
    if not wanted:
        return True
    positive = [t for t in wanted if not t.startswith("!")]
    negative = [t[1:] for t in wanted if t.startswith("!")]
    return (not positive or any(t in tags for t in positive)) and not any(t in tags for t in negative)


# -- wheels on PyPI ------------------------------------------------------------------------------

_MANYLINUX = re.compile(r"manylinux_(\d+)_(\d+)_(\w+)|manylinux(2014|2010|1)_(\w+)")
_LEGACY = {"2014": (2, 17), "2010": (2, 12), "1": (2, 5)}


def wheel_fits(tag: str, platform: Platform) -> bool | None:
    """Whether a wheel's python-abi-platform tag installs here (None: cannot tell, a fact is missing)."""
    plat = tag.rsplit("-", 1)[-1]
    if plat == "any":
        return True
    if platform.os == "windows":
        return plat.startswith("win_") and (platform.arch is None or plat.endswith(("amd64", "arm64")))
    if platform.os == "macos":
        return plat.startswith("macosx_") and (
            platform.arch != "aarch64" or plat.endswith(("arm64", "universal2"))
        )
    if platform.os != "linux":
        return False
    match = _MANYLINUX.fullmatch(plat)
    if match is None:
        return None if plat.startswith("linux_") else False  # a Windows or macOS wheel on Linux
    if match.group(1):
        need, machine = (int(match.group(1)), int(match.group(2))), match.group(3)
    else:
        need, machine = _LEGACY[match.group(4)], match.group(5)
    if platform.arch is not None and machine != platform.arch:
        return False
    if platform.glibc is None:
        return None
    return platform.glibc >= need


def describe(platform: Platform) -> str:
    """ "Linux aarch64 (Jetson, JetPack 6.2)", "Windows x86_64", "Linux x86_64 (WSL2, glibc 2.35)"."""
    names = {"linux": "Linux", "windows": "Windows", "macos": "macOS"}
    parts = [names.get(platform.os or "", platform.os or "?")]
    if platform.arch:
        parts.append(platform.arch)
    extra = []
    if platform.jetson:
        extra.append("Jetson" + (f", JetPack {platform.jetpack_text}" if platform.jetpack else ""))
    if platform.wsl:
        extra.append("WSL2")
    if platform.glibc:
        extra.append(f"glibc {platform.glibc[0]}.{platform.glibc[1]}")
    return " ".join(parts) + (f" ({', '.join(extra)})" if extra else "")


def no_wheel(facts: Facts, framework: str, names: tuple[str, ...]) -> Check | None:
    """A package (``names``: its distributions) with no PyPI wheel for this platform (wheels.toml: its newest
    release's own files): "fail", not applicable here; "warn" where PyPI has a source archive pip would build.
    None when a wheel fits or a fact needed to tell (glibc) is missing."""
    rows = [w for w in facts.catalog.wheels if w.package in names]
    latest = next((r.latest for r in facts.catalog.frameworks if r.framework == framework and r.latest), None)
    row = next((w for w in rows if w.version == latest), rows[0] if len(rows) == 1 else None)
    if row is None or not row.platforms:
        return None
    fits = [wheel_fits(tag, facts.platform) for tag in row.platforms]
    if any(f is not False for f in fits):
        return None
    source_build = row.sdist and framework not in _WHEEL_ONLY
    kinds = sorted({tag.rsplit("-", 1)[-1] for tag in row.platforms})
    where = describe(facts.platform)
    if facts.platform.os == "windows":
        fix = tr("There is no Windows build: run it under WSL2 (Linux) or in a Linux container.")
    elif facts.platform.os == "macos":
        fix = tr("There is no macOS build: on a Mac use MLX, llama.cpp or Ollama.")
    elif facts.platform.glibc is not None and any("manylinux" in k for k in kinds):
        fix = tr(
            "Its wheels need a newer C library (manylinux tags: {kinds}); use a newer Linux "
            "distribution or a "
            "container.",
            kinds=", ".join(kinds),
        )
    else:
        fix = tr("There is no prebuilt wheel for this architecture: build it from source.")
    if source_build:
        return Check(
            "warn",
            tr(
                "PyPI has no {package} {version} wheel for {platform} (its wheels: {kinds}; read "
                "{read}): pip "
                "builds it from source, which needs a compiler and the CUDA toolkit",
                package=row.package,
                version=row.version,
                platform=where,
                kinds=", ".join(kinds),
                read=row.read,
            ),
            fix=tr(
                "No prebuilt wheel for this platform: expect a source build (or use a container that has it)."
            ),
            source=row.source,
            cause="limited",
        )
    return Check(
        "fail",
        tr(
            "PyPI has no {package} {version} wheel for {platform} (its wheels: {kinds}; read {read})",
            package=row.package,
            version=row.version,
            platform=where,
            kinds=", ".join(kinds),
            read=row.read,
        ),
        fix=fix,
        source=row.source,
        cause="os-unsupported",
    )


#: packages whose source archive on PyPI is not a route to a working install (vLLM builds CUDA kernels for
#: hours and documents wheels or containers): judged by their wheels alone
_WHEEL_ONLY = frozenset({"vllm", "sglang"})
