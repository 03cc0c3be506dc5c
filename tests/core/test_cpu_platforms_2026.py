"""CPU hosts of the last five years: the model strings their probes report find the right platform, whose
channels × rate give the peak host bandwidth the CPU paths read weights at."""

from __future__ import annotations

from pathlib import Path

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.speed import cpu_platform, host_bandwidth
from rigcheck.core.machine import CPU, Host, Machine, Memory
from rigcheck.core.probe import _cpu
from rigcheck.core.probe._common import ProbeContext

GIB = 1024**3


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


# Model strings as /proc/cpuinfo "model name", macOS machdep.cpu.brand_string or lscpu's Arm core name give them
BRAND_STRINGS = [
    ("AMD Ryzen 9 3950X 16-Core Processor", "amd-ryzen-3000-desktop", 51.2),
    ("AMD Ryzen 9 5950X 16-Core Processor", "amd-ryzen-5000-desktop", 51.2),
    ("AMD Ryzen 7 5800X3D 8-Core Processor", "amd-ryzen-5000-desktop", 51.2),
    ("AMD Ryzen 7 7700 8-Core Processor", "amd-ryzen-7000-desktop", 83.2),
    ("AMD Ryzen 7 7800X3D 8-Core Processor", "amd-ryzen-7000-desktop", 83.2),
    ("AMD Ryzen 9 9950X 16-Core Processor", "amd-ryzen-9000-desktop", 89.6),
    ("AMD Ryzen 5 9600 6-Core Processor", "amd-ryzen-9000-desktop", 89.6),
    ("AMD RYZEN AI MAX+ 395 w/ Radeon 8060S", "amd-ryzen-ai-max-300", 256.0),
    ("AMD Ryzen AI 9 HX 370 w/ Radeon 890M", "amd-ryzen-ai-300", 120.0),
    ("AMD Ryzen AI 7 350 w/ Radeon 860M", "amd-ryzen-ai-300", 120.0),
    ("AMD Ryzen AI 9 HX PRO 370 w/ Radeon 890M", "amd-ryzen-ai-300", 120.0),
    ("AMD Ryzen Threadripper PRO 5995WX 64-Cores", "amd-threadripper-pro-3000-5000wx", 204.8),
    ("AMD Ryzen Threadripper PRO 3995WX 64-Cores", "amd-threadripper-pro-3000-5000wx", 204.8),
    ("AMD Ryzen Threadripper 3970X 32-Core Processor", "amd-threadripper-3000", 102.4),
    ("Intel(R) Core(TM) i5-4278U CPU @ 2.60GHz", "intel-core-4th-gen-mobile", 25.6),
    ("AMD EPYC 7763 64-Core Processor", "amd-epyc-7002-7003", 204.8),
    ("AMD EPYC 9654 96-Core Processor", "amd-epyc-9004", 460.8),
    ("AMD EPYC 9755 128-Core Processor", "amd-epyc-9005", 576.0),
    ("AMD EPYC 9965 192-Core Processor", "amd-epyc-9005", 576.0),
    ("Intel(R) Core(TM) Ultra 7 155H", "intel-core-ultra-100", 120.0),
    ("Intel(R) Core(TM) Ultra 7 258V", "intel-core-ultra-200v", 136.5),
    ("Intel(R) Core(TM) Ultra 9 285H", "intel-core-ultra-200h", 134.4),
    ("Intel(R) Core(TM) Ultra 9 285K", "intel-core-ultra-200s", 102.4),
    ("Intel(R) Core(TM) Ultra 7 265", "intel-core-ultra-200s", 102.4),
    ("13th Gen Intel(R) Core(TM) i9-13900K", "intel-core-13-14-desktop", 89.6),
    ("Intel(R) Xeon(R) Platinum 8480+", "intel-xeon-4th-gen", 307.2),
    ("INTEL(R) XEON(R) PLATINUM 8592+", "intel-xeon-5th-gen", 358.4),
    ("Intel(R) Xeon(R) 6980P", "intel-xeon-6900", 614.4),
    ("Intel(R) Xeon(R) 6767P", "intel-xeon-6700", 409.6),
    ("Intel(R) Xeon(R) 6780E", "intel-xeon-6700", 409.6),
    ("Neoverse-N1", "ampere-altra-graviton2", 204.8),
    ("Neoverse-V1", "aws-graviton3", 307.2),
    ("Neoverse-V2", "nvidia-grace", 499.2),
    ("Ampere-1a", "ampere-ampereone", 332.8),
    ("Apple M1", "apple-m1", 68.3),
    ("Apple M1 Max", "apple-m1-m3-max", 409.6),
    ("Apple M2 Ultra", "apple-m1-m3-ultra", 819.2),
    ("Apple M2 Pro", "apple-m1-m2-pro", 204.8),
    ("Apple M3", "apple-m2-m3", 102.4),
    ("Apple M3 Pro", "apple-m3-pro", 153.6),
    ("Apple M4", "apple-m4", 120.0),
    ("Apple M4 Pro", "apple-m4-pro", 273.1),
    ("Apple M4 Max", "apple-m4-max", 546.1),
    ("Apple M5", "apple-m5", 153.6),
    ("Apple M5 Pro", "apple-m5-pro", 307.2),
    ("Apple M5 Max", "apple-m5-max", 614.4),
    # 28-cpu: laptop and SBC platforms (a Phoenix laptop is not the AM5 desktop's memory, and a Raptor Lake-P
    # laptop not the LGA 1700 desktop's)
    ("AMD Ryzen 7 7840HS w/ Radeon 780M Graphics", "amd-ryzen-7040-8040-mobile", 120.0),
    ("AMD Ryzen 7 8840U w/ Radeon 780M Graphics", "amd-ryzen-7040-8040-mobile", 120.0),
    ("Intel(R) Core(TM) i7-1360P", "intel-core-13-14-mobile", 83.2),
    ("13th Gen Intel(R) Core(TM) i3-1315U", "intel-core-13-14-mobile", 83.2),
    ("13th Gen Intel(R) Core(TM) i9-13900HX", "intel-core-13-14-mobile", 83.2),
    ("13th Gen Intel(R) Core(TM) i5-13400F", "intel-core-13-14-desktop-4800", 76.8),
    ("intel core i5 13400F", "intel-core-13-14-desktop-4800", 76.8),  # typed by hand, with a space
    ("Intel(R) Core(TM) i7-7820HQ CPU @ 2.90GHz", "intel-core-7th-gen-mobile-h", 38.4),
    ("Intel(R) Core(TM) i5-9500 CPU @ 3.00GHz", "intel-core-8-9-desktop", 42.7),
    ("11th Gen Intel(R) Core(TM) i5-1135G7 @ 2.40GHz", "intel-core-11-mobile", 68.3),
    ("Rockchip RK3566", "rockchip-rk3566-rk3568", 12.8),
    ("Rockchip RK3588", "rockchip-rk3588", 33.8),
    ("Cix CP8180", "cix-p1", 96.0),
    ("Raspberry Pi 5 Model B Rev 1.0", "broadcom-bcm2712", 17.1),
]


@pytest.mark.parametrize(("model", "platform_id", "gbs"), BRAND_STRINGS)
def test_real_model_strings_find_their_platform(
    catalog: Catalog, model: str, platform_id: str, gbs: float
) -> None:
    found = cpu_platform(catalog, model)
    assert found is not None and found.id == platform_id
    assert found.bandwidth_bytes_per_s / 1e9 == pytest.approx(gbs, abs=0.1)


@pytest.mark.parametrize(
    "model",
    [
        "AMD Ryzen 7 5800H with Radeon Graphics",
        "AMD Ryzen 9 7945HX with Radeon Graphics",
        "Intel(R) Core(TM) i7-4790K CPU @ 4.00GHz",  # Haswell desktop: not the U/Y parts' entry
        "Cortex-A72",  # a Raspberry Pi is not a server
    ],
)
def test_other_families_are_not_taken_for_a_listed_one(catalog: Catalog, model: str) -> None:
    assert cpu_platform(catalog, model) is None


def test_every_platform_is_reachable_by_one_of_the_strings(catalog: Catalog) -> None:
    # an entry shadowed by an earlier, broader pattern would never answer
    reached = {cpu_platform(catalog, model).id for model, _, _ in BRAND_STRINGS}  # type: ignore[union-attr]
    new = [
        p.id for p in catalog.cpu_platforms if p.id not in ("amd-threadripper-3000", "intel-core-12-desktop")
    ]
    missing = [
        pid for pid in new if pid not in reached and pid not in ("intel-alder-lake-n", "aws-graviton4")
    ]
    assert missing == []
    assert cpu_platform(catalog, "AWS Graviton4 Processor").id == "aws-graviton4"  # type: ignore[union-attr]


def test_every_platform_cites_a_source_and_a_plausible_rate(catalog: Catalog) -> None:
    for platform in catalog.cpu_platforms:
        assert platform.source and platform.notes, platform.id
        assert 1 <= platform.channels <= 16 and 1600 <= platform.mt_per_s <= 10000, platform.id


GRACE_CPUINFO = """processor\t: 0
BogoMIPS\t: 2000.00
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs sb paca pacg dcpodp sve2 sveaes svepmull svebitperm svesha3 svesm4 flagm2 frint svei8mm svebf16 i8mm bf16 dgh bti
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x0
CPU part\t: 0xd4f
CPU revision\t: 0

processor\t: 1
CPU implementer\t: 0x41
CPU part\t: 0xd4f
"""


def test_an_arm_server_is_named_by_its_core_as_lscpu_names_it(tmp_path: Path, catalog: Catalog) -> None:
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "cpuinfo").write_text(GRACE_CPUINFO)
    cpu, _memory, _notes = _cpu.probe_cpu(ProbeContext(root=tmp_path, platform="linux", env={}))
    assert cpu.model == "Neoverse-V2"
    machine = Machine(
        cpu=cpu,
        memory=Memory(total_bytes=480 * GIB),
        gpus=(),
        host=Host("grace"),
        taken_at="2026-12-01T00:00:00Z",
    )
    found = host_bandwidth(machine, catalog)
    assert found.source == "catalog" and found.bytes_per_s == pytest.approx(499.2e9)
    # an unknown part stays unnamed rather than guessed
    unknown = GRACE_CPUINFO.replace("0xd4f", "0xfff")
    assert _cpu._parse_proc_cpuinfo(unknown)[0] is None


def test_a_cpu_only_host_reads_its_platform_not_the_default(catalog: Catalog) -> None:
    machine = Machine(
        cpu=CPU(logical_cores=192, model="AMD EPYC 9755 128-Core Processor"),
        memory=Memory(total_bytes=768 * GIB),
        gpus=(),
        host=Host("turin"),
        taken_at="2026-12-01T00:00:00Z",
    )
    found = host_bandwidth(machine, catalog)
    assert found.source == "catalog" and found.bytes_per_s == 12 * 6000 * 10**6 * 8
    assert "EPYC 9005" in found.why
