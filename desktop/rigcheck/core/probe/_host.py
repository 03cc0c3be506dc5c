"""The operating system, container and the disks where models live."""

from __future__ import annotations

import platform
import re
import socket
from pathlib import Path

import psutil

from rigcheck.core.machine import OS, Container, Disk, Host, Note
from rigcheck.core.probe._common import Notes, ProbeContext, read_text


def _os_name(platform_id: str) -> OS:
    if platform_id.startswith("linux"):
        return "linux"
    if platform_id == "win32":
        return "windows"
    if platform_id == "darwin":
        return "macos"
    return "other"


def _linux_os_version(ctx: ProbeContext) -> str | None:
    """PRETTY_NAME from os-release, as systemd documents it (/etc first, then /usr/lib)."""
    for candidate in ("/etc/os-release", "/usr/lib/os-release"):
        text = read_text(ctx.path(candidate))
        if text is None:
            continue
        for line in text.splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "PRETTY_NAME":
                return value.strip().strip('"').strip("'") or None
    return None


def detect_container(ctx: ProbeContext) -> Container | None:
    """docker, podman, wsl, lxc, kubernetes or a generic container; ``None`` on bare metal or a VM."""
    if not ctx.platform.startswith("linux"):
        return None
    version = (read_text(ctx.path("/proc/version")) or "").lower()
    if "microsoft" in version or "WSL_DISTRO_NAME" in ctx.env:
        return "wsl"
    if ctx.path("/run/.containerenv").exists():
        return "podman"
    if ctx.path("/.dockerenv").exists():
        return "docker"
    if "KUBERNETES_SERVICE_HOST" in ctx.env:
        return "kubernetes"
    cgroup = read_text(ctx.path("/proc/1/cgroup")) or ""
    markers: tuple[tuple[str, Container], ...] = (
        ("docker", "docker"),
        ("kubepods", "kubernetes"),
        ("lxc", "lxc"),
        ("libpod", "podman"),
    )
    for marker, name in markers:
        if marker in cgroup:
            return name
    container_env = read_text(ctx.path("/proc/1/environ")) or ""
    if "container=" in container_env:
        return "container"
    return None


def _libc() -> str | None:
    """ "glibc 2.35" — what manylinux wheels are matched against; None for musl or when unreadable."""
    name, release = platform.libc_ver()
    return f"{name} {release}" if name == "glibc" and release else None


_TEGRA = re.compile(r"#\s*R(\d+)\s*\(release\),\s*REVISION:\s*(\d+(?:\.\d+)*)")


def _l4t(ctx: ProbeContext) -> str | None:
    """A Jetson's L4T release from /etc/nv_tegra_release ("# R36 (release), REVISION: 4.3" -> "36.4.3")."""
    match = _TEGRA.search(read_text(ctx.path("/etc/nv_tegra_release")) or "")
    return f"{match.group(1)}.{match.group(2)}" if match else None


def probe_host(ctx: ProbeContext) -> tuple[Host, tuple[Note, ...]]:
    notes = Notes("host")
    os_name = _os_name(ctx.platform)
    if os_name == "linux":
        os_version = _linux_os_version(ctx)
        kernel: str | None = platform.release() or None
    elif os_name == "macos":
        os_version = platform.mac_ver()[0] or None
        kernel = platform.release() or None
    elif os_name == "windows":
        release, build, _csd, _ptype = platform.win32_ver()
        os_version = f"Windows {release} ({build})" if release else None
        kernel = build or None
    else:
        os_version = kernel = None
    if os_version is None:
        notes.info("operating system version not readable")
    container = detect_container(ctx)
    if container == "wsl":
        notes.info("running under WSL: GPUs are reached through the Windows driver (/usr/lib/wsl/lib)")
    elif container is not None:
        notes.info(
            f"running inside a {container} container: GPUs and RAM seen here may be a subset of the host's"
        )
    host = Host(
        hostname=socket.gethostname() or None,
        os=os_name,
        os_version=os_version,
        kernel=kernel,
        python=platform.python_version(),
        container=container,
        libc=_libc() if os_name == "linux" else None,
        l4t=_l4t(ctx) if os_name == "linux" else None,
    )
    return host, notes.collected()


def model_folders(ctx: ProbeContext) -> list[tuple[str, Path, bool]]:
    """(purpose, folder, always) for the places model weights are usually kept.

    ``always`` folders are reported even before they exist (downloads would land there); the others
    only when the tool is installed and the folder exists.
    """
    home = Path(ctx.env.get("HOME") or ctx.env.get("USERPROFILE") or Path.home())
    env = ctx.env
    if env.get("HF_HUB_CACHE"):
        hf = Path(env["HF_HUB_CACHE"])
    elif env.get("HF_HOME"):
        hf = Path(env["HF_HOME"]) / "hub"
    else:
        cache_home = Path(env["XDG_CACHE_HOME"]) if env.get("XDG_CACHE_HOME") else home / ".cache"
        hf = cache_home / "huggingface" / "hub"
    folders: list[tuple[str, Path, bool]] = [("home", home, True), ("huggingface", hf, True)]
    ollama = [Path(env["OLLAMA_MODELS"])] if env.get("OLLAMA_MODELS") else [home / ".ollama" / "models"]
    if ctx.platform.startswith("linux"):
        ollama.append(Path("/usr/share/ollama/.ollama/models"))  # the systemd service's home
    folders += [("ollama", p, False) for p in ollama]
    folders += [("lmstudio", home / ".lmstudio" / "models", False)]
    folders += [("lmstudio", home / ".cache" / "lm-studio" / "models", False)]
    return folders


def _nearest_existing(path: Path) -> Path | None:
    for candidate in (path, *path.parents):
        try:
            if candidate.exists():
                return candidate
        except OSError:
            return None
    return None


def probe_disks(ctx: ProbeContext) -> tuple[tuple[Disk, ...], tuple[Note, ...]]:
    notes = Notes("disk")
    disks: list[Disk] = []
    seen: set[str] = set()
    for purpose, folder, always in model_folders(ctx):
        try:
            exists = folder.is_dir()
        except OSError:
            exists = False
        if not exists and not always:
            continue
        key = str(folder)
        if key in seen:
            continue
        seen.add(key)
        measured = folder if exists else _nearest_existing(folder)
        if measured is None:
            disks.append(Disk(path=key, purpose=purpose))
            notes.warning(f"{key}: no existing parent folder to measure free space on")
            continue
        try:
            usage = psutil.disk_usage(str(measured))
        except (OSError, PermissionError) as exc:
            notes.warning(f"cannot measure free space at {measured}: {exc}")
            disks.append(Disk(path=key, purpose=purpose))
            continue
        disks.append(Disk(path=key, total_bytes=usage.total, free_bytes=usage.free, purpose=purpose))
    return tuple(disks), notes.collected()
