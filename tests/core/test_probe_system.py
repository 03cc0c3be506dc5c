"""Host, CPU and software probes against files and command output we control."""

from __future__ import annotations

import stat
from collections.abc import Sequence
from pathlib import Path

import pytest

from rigcheck.core.probe import _cpu, _host, _software
from rigcheck.core.probe._common import ProbeContext

# First processor block of /proc/cpuinfo on a Sapphire Rapids server (flags shortened to the ones we
# keep plus a few others), in the kernel's format.
SAPPHIRE_RAPIDS = """processor\t: 0
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 143
model name\t: Intel(R) Xeon(R) Platinum 8480+
flags\t\t: fpu vme sse4_2 avx f16c fma avx2 avx512f avx512bw avx512vl avx512_vnni avx512_bf16 amx_bf16 avx512_fp16 amx_tile amx_int8 avx_vnni

processor\t: 1
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8480+
flags\t\t: fpu
"""

# An Arm server's block: no "model name" on many kernels, features instead of flags.
GRAVITON = """processor\t: 0
BogoMIPS\t: 243.75
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs sb paca pacg dcpodp sve2 sveaes svepmull svebitperm svesha3 svesm4 flagm2 frint svei8mm svebf16 i8mm bf16 dgh rng
CPU implementer\t: 0x41
"""


def fake_root(tmp_path: Path, files: dict[str, str]) -> ProbeContext:
    for name, text in files.items():
        path = tmp_path / name.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return ProbeContext(root=tmp_path, platform="linux", env={"HOME": str(tmp_path / "home")})


def test_cpu_flags_from_proc_cpuinfo(tmp_path: Path) -> None:
    ctx = fake_root(tmp_path, {"/proc/cpuinfo": SAPPHIRE_RAPIDS})
    cpu, memory, _notes = _cpu.probe_cpu(ctx)
    assert cpu.model == "Intel(R) Xeon(R) Platinum 8480+"
    assert cpu.vendor == "GenuineIntel"
    assert cpu.flags == (
        "sse4_2", "avx", "avx2", "fma", "f16c", "avx_vnni", "avx512f", "avx512bw", "avx512vl",
        "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8",
    )  # fmt: skip
    assert cpu.logical_cores >= 1
    assert memory.total_bytes > 0


def test_arm_features_become_neon_and_friends() -> None:
    model, vendor, flags = _cpu._parse_proc_cpuinfo(GRAVITON)
    assert model is None and vendor is None  # no model name: the library fallback takes over
    assert _cpu.normalise_flags(flags) == ("neon", "asimddp", "sve", "sve2", "i8mm", "bf16")


def test_cpuinfo_library_spellings_are_normalised() -> None:
    assert _cpu.normalise_flags(["AVX512BF16", "avx512vnni", "avx2", "sse4.2"]) == (
        "sse4_2", "avx2", "avx512_vnni", "avx512_bf16",
    )  # fmt: skip


def test_unreadable_cpuinfo_falls_back_without_raising(tmp_path: Path) -> None:
    (tmp_path / "proc" / "cpuinfo").mkdir(parents=True)  # reading a folder fails like a bad file
    cpu, _memory, notes = _cpu.probe_cpu(ProbeContext(root=tmp_path, platform="linux"))
    assert cpu.logical_cores >= 1
    assert any("cannot read" in n.message for n in notes)


@pytest.mark.parametrize(
    ("files", "env", "expected"),
    [
        ({"/proc/version": "Linux version 5.15.153.1-microsoft-standard-WSL2"}, {}, "wsl"),
        ({"/run/.containerenv": ""}, {}, "podman"),
        ({"/.dockerenv": ""}, {}, "docker"),
        ({"/proc/1/cgroup": "0::/kubepods/besteffort/pod1"}, {}, "kubernetes"),
        ({}, {"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, "kubernetes"),
        ({"/proc/1/cgroup": "0::/init.scope", "/proc/version": "Linux version 6.1.0"}, {}, None),
    ],
)
def test_container_detection(
    tmp_path: Path, files: dict[str, str], env: dict[str, str], expected: str
) -> None:
    ctx = fake_root(tmp_path, files)
    ctx = ProbeContext(root=ctx.root, platform="linux", env=env)
    assert _host.detect_container(ctx) == expected


def test_host_reads_os_release(tmp_path: Path) -> None:
    ctx = fake_root(tmp_path, {"/etc/os-release": 'NAME="Ubuntu"\nPRETTY_NAME="Ubuntu 22.04.4 LTS"\n'})
    host, _notes = _host.probe_host(ctx)
    assert host.os == "linux"
    assert host.os_version == "Ubuntu 22.04.4 LTS"
    assert host.python


def test_disks_cover_home_hf_cache_and_existing_model_folders(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ollama" / "models").mkdir(parents=True)
    ctx = ProbeContext(
        root=tmp_path, platform="linux", env={"HOME": str(home), "HF_HOME": str(tmp_path / "hf")}
    )
    disks, _notes = _host.probe_disks(ctx)
    by_purpose = {d.purpose: d for d in disks}
    assert by_purpose["home"].path == str(home)
    # The HF cache does not exist yet: it is still reported (downloads land there), measured on its parent.
    assert by_purpose["huggingface"].path == str(tmp_path / "hf" / "hub")
    assert by_purpose["huggingface"].free_bytes is not None
    assert by_purpose["ollama"].path == str(home / ".ollama" / "models")
    assert "lmstudio" not in by_purpose  # not installed: not reported
    assert all(d.total_bytes and d.total_bytes >= (d.free_bytes or 0) for d in disks)


class Commands:
    """Recorded command output, keyed by the executable's base name."""

    def __init__(self, outputs: dict[str, str | None]) -> None:
        self.outputs = outputs
        self.calls: list[list[str]] = []

    def run(self, args: Sequence[str], timeout: float) -> str | None:
        self.calls.append(list(args))
        assert timeout <= 10
        return self.outputs.get(Path(args[0]).name)

    def which(self, name: str) -> str | None:
        return f"/usr/bin/{name}" if name in self.outputs else None


@pytest.mark.parametrize(
    ("name", "output", "expected"),
    [
        ("ollama", "ollama version is 0.5.7\n", "0.5.7"),
        (
            "ollama",
            "Warning: could not connect to a running Ollama instance\nWarning: client version is 0.12.3\n",
            "0.12.3",
        ),
        (
            "llama-server",
            "version: 4410 (6e1531ad)\nbuilt with cc (GCC) 13.2.0 for x86_64-linux-gnu\n",
            "b4410 (6e1531ad)",
        ),
        (
            "nvcc",
            "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.4, V12.4.131\n",
            "12.4.131",
        ),
        (
            "nvidia-smi",
            "NVIDIA-SMI version  : 590.48.01\nNVML version        : 590.48\nDRIVER version      : 590.48.01\nCUDA Version        : 13.1\n",
            "590.48.01",
        ),
        ("rocm-smi", "ROCM-SMI version: 2.3.0+bd5a2fe\nROCM-SMI-LIB version: 7.3.0\n", "2.3.0"),
        ("ollama", "garbage", None),
    ],
)
def test_executable_versions(name: str, output: str, expected: str | None) -> None:
    assert _software.parse_executable_version(name, output) == expected


def test_software_finds_toolkits_executables_and_driver(tmp_path: Path) -> None:
    for version, folder in (("12.4.1", "cuda-12.4"), ("11.8.0", "cuda-11.8")):
        bin_dir = tmp_path / "usr/local" / folder / "bin"
        bin_dir.mkdir(parents=True)
        (bin_dir / "nvcc").write_text("")
        (bin_dir / "nvcc").chmod(stat.S_IRWXU)
        (bin_dir.parent / "include").mkdir()
        (bin_dir.parent / "include" / "cuda_runtime.h").write_text("")
        (tmp_path / "usr/local" / folder / "version.json").write_text(
            f'{{"cuda": {{"version": "{version}"}}}}'
        )
    (tmp_path / "usr/local/cuda").symlink_to(tmp_path / "usr/local/cuda-12.4")  # deduplicated
    (tmp_path / "usr/local/cuda-empty").mkdir()  # no nvcc: not a toolkit
    # A pip-installed toolkit without version.json: its own nvcc says which release it is.
    (tmp_path / "opt/cuda-13.0/bin").mkdir(parents=True)
    (tmp_path / "opt/cuda-13.0/bin/nvcc").write_text("")
    (tmp_path / "opt/cuda-13.0/include").mkdir()
    (tmp_path / "opt/cuda-13.0/include/cuda.h").write_text("")
    # A wrapper script on PATH in /usr/local/bin: /usr/local is not a toolkit.
    (tmp_path / "usr/local/bin").mkdir(parents=True)
    (tmp_path / "usr/local/bin/nvcc").write_text('#!/bin/sh\nexec /opt/cuda-13.0/bin/nvcc "$@"\n')
    (tmp_path / "proc/driver/nvidia").mkdir(parents=True)
    (tmp_path / "proc/driver/nvidia/version").write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024\n"
    )
    nvcc_13 = "Cuda compilation tools, release 13.0, V13.0.88\n"
    commands = Commands({"ollama": "ollama version is 0.5.7", "llama-cli": None, "nvcc": nvcc_13})

    def which(name: str) -> str | None:
        return str(tmp_path / "usr/local/bin/nvcc") if name == "nvcc" else commands.which(name)

    ctx = ProbeContext(root=tmp_path, platform="linux", env={}, run=commands.run, which=which)
    software, drivers, notes = _software.probe_software(ctx)
    assert [(t.version, Path(t.path or "").name) for t in software.cuda_toolkits] == [
        ("11.8.0", "cuda-11.8"),
        ("12.4.1", "cuda-12.4"),
        ("13.0.88", "cuda-13.0"),
    ]
    assert software.executables["ollama"].version == "0.5.7"
    assert software.executables["llama-cli"].version is None  # present, version not readable
    assert software.executables["nvcc"].version == "13.0.88"
    assert drivers.nvidia == "550.54.14"
    assert any("--python" in n.message for n in notes)
    assert "pytest" not in software.python_packages  # only the LLM stack is listed


def test_other_interpreters_packages(tmp_path: Path) -> None:
    listing = '{"torch": "2.5.1+cu124", "numpy": "2.1.0", "flash-attn": "2.7.0.post2"}'
    commands = Commands({"python3.12": listing})
    ctx = ProbeContext(root=tmp_path, platform="linux", env={}, run=commands.run, which=lambda _n: None)
    software, _drivers, _notes = _software.probe_software(ctx, pythons=("/opt/conda/bin/python3.12",))
    assert software.python_packages["torch"] == "2.5.1+cu124"
    assert software.python_packages["flash-attn"] == "2.7.0.post2"
    assert "numpy" not in software.python_packages
    # only the target's packages: RigCheck's own huggingface-hub must not stand in for a missing one
    assert "huggingface-hub" not in software.python_packages


def test_target_interpreter_versions_win_over_rigchecks_own(tmp_path: Path) -> None:
    commands = Commands({"python3.12": '{"huggingface-hub": "0.20.0"}'})
    ctx = ProbeContext(root=tmp_path, platform="linux", env={}, run=commands.run, which=lambda _n: None)
    software, _drivers, notes = _software.probe_software(ctx, pythons=("/envs/old/bin/python3.12",))
    assert software.python_packages == {"huggingface-hub": "0.20.0"}
    assert any("those of /envs/old/bin/python3.12" in n.message for n in notes)


def test_interpreter_that_fails_is_a_note(tmp_path: Path) -> None:
    commands = Commands({})
    ctx = ProbeContext(root=tmp_path, platform="linux", env={}, run=commands.run, which=lambda _n: None)
    _sw, _drivers, notes = _software.probe_software(ctx, pythons=("/nope/python",))
    assert any("could not list packages of /nope/python" in n.message for n in notes)


@pytest.mark.parametrize(
    ("freq", "expected", "noted"),
    [
        ((3500.0, 400.0, 5200.0), 5200.0, False),  # a cpufreq driver: the maximum, no note
        ((2445.4, 0.0, 0.0), 2445.4, True),  # a VM without cpufreq: the boot clock, said to be a floor
        ((0.0, 0.0, 0.0), None, False),  # nothing known
    ],
)
def test_the_cpu_clock_falls_back_to_the_current_clock_without_cpufreq(
    monkeypatch: pytest.MonkeyPatch, freq: tuple[float, float, float], expected: float | None, noted: bool
) -> None:
    from collections import namedtuple

    import psutil

    from rigcheck.core.probe._common import Notes

    scpufreq = namedtuple("scpufreq", "current min max")  # psutil's own shape
    monkeypatch.setattr(psutil, "cpu_freq", lambda: scpufreq(*freq))
    notes = Notes("cpu")
    assert _cpu._max_mhz(notes) == expected
    said = [n.message for n in notes.collected()]
    assert any("may be low" in m for m in said) == noted
