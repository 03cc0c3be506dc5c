"""NVIDIA GPUs as NVML describes them, written from real ``nvidia-smi`` captures.

The facts (names, ids, memory, power limits, PCIe links, MIG, driver model) were read from the
captures cited above each GPU; the Python is our own. nvidia-smi prints memory in MiB: the
totals below are exact (MiB x 1048576). Where nvidia-smi prints "N/A" the field is ``None``, which
the fake answers with NVML's Not Supported, as the driver does. Compute capabilities that the
XML captures do not carry come from NVIDIA's CUDA GPU table (https://developer.nvidia.com/cuda-gpus).

Sources (see /work/shared/fixtures/SOURCES.md; not read at test time):

- ``telegraf``: influxdata/telegraf plugins/inputs/nvidia_smi/testdata/<file>
  @b27263146617cefe16c0b300107b58b111a7fa57 (MIT)
- ``netdata``: netdata/netdata src/go/plugin/go.d/collector/nvidia_smi/testdata/<file>
  @04b1cf54270c4e21c02e322e577e7e96d547c9ee (GPL-3.0: facts only, nothing copied)
- ``exporter``: utkuozdemir/nvidia_gpu_exporter internal/captures/<file>
  @e656cd81a180e7e0e7862b53c9acd4c2fb0f590b (MIT)
"""

from __future__ import annotations

import pynvml

from fakes.fake_nvml import MIB, FakeGPU

# influxdata/telegraf plugins/inputs/nvidia_smi/testdata/quadro-p400.xml@b27263146617cefe16c0b300107b58b111a7fa57
# Driver 418.43, CUDA 10.1. Every power reading is "N/A": this is the card without power readings.
QUADRO_P400 = FakeGPU(
    name="Quadro P400",
    uuid="GPU-8f750be4-dfbc-23b9-b33f-da729a536494",
    serial="0424418054852",
    pci_bus_id="00000000:43:00.0",
    pci_device_id=0x1CB310DE,
    memory_total=1998 * MIB,
    memory_free=1998 * MIB,
    compute_capability=(6, 1),
    pcie_gen=1,
    pcie_width=16,
    pcie_max_gen=3,
    pcie_max_width=16,
)

# influxdata/telegraf plugins/inputs/nvidia_smi/testdata/a100-sxm4-v12.xml@b27263146617cefe16c0b300107b58b111a7fa57
# Driver 535.54.03, CUDA 12.2. MIG enabled (current and pending); NVLink cannot be queried in MIG
# mode ("Nvlink queries are not supported for Devices in MIG mode", exporter h100-mig capture).
A100_SXM4_80GB_MIG = FakeGPU(
    name="NVIDIA A100-SXM4-80GB",
    uuid="GPU-513536b6-7d19-9063-b049-1e69664bb298",
    serial="1650522003820",
    pci_bus_id="00000000:01:00.0",
    pci_device_id=0x20B210DE,
    memory_total=81920 * MIB,
    memory_free=80999 * MIB,
    compute_capability=(8, 0),
    power_limit_mw=500_000,
    power_default_limit_mw=500_000,
    power_min_limit_mw=100_000,
    power_max_limit_mw=500_000,
    pcie_gen=4,
    pcie_width=16,
    pcie_max_gen=4,
    pcie_max_width=16,
    mig_enabled=True,
)

# influxdata/telegraf plugins/inputs/nvidia_smi/testdata/rtx-3090-v12.xml@b27263146617cefe16c0b300107b58b111a7fa57
# Driver 525.147.05, CUDA 12.0. The owner lowered the power limit to 200 W (default 350 W).
# The capture redacts the PCI device id; 0x2204 is the RTX 3090's id in the PCI ID database.
RTX_3090 = FakeGPU(
    name="NVIDIA GeForce RTX 3090",
    uuid="GPU-12345678-aaaa-bbbb-cccc-0123456789ab",
    serial=None,
    pci_bus_id="00000000:00:10.0",
    pci_device_id=0x220410DE,
    memory_total=24576 * MIB,
    memory_free=24258 * MIB,
    compute_capability=(8, 6),
    power_limit_mw=200_000,
    power_default_limit_mw=350_000,
    power_min_limit_mw=100_000,
    power_max_limit_mw=375_000,
    pcie_gen=1,
    pcie_width=16,
    pcie_max_gen=4,
    pcie_max_width=16,
    temp_slowdown_c=95,  # <gpu_temp_slow_threshold>95 C</gpu_temp_slow_threshold>
)

# netdata/netdata src/go/plugin/go.d/collector/nvidia_smi/testdata/rtx-4090-driver-535.xml@04b1cf54270c4e21c02e322e577e7e96d547c9ee
# Driver 535.86.05, CUDA 12.2. No NVLink on the RTX 4090.
RTX_4090 = FakeGPU(
    name="NVIDIA GeForce RTX 4090",
    uuid="GPU-71d1acc2-662d-2166-bf9f-65272d2fc437",
    serial=None,
    pci_bus_id="00000000:84:00.0",
    pci_device_id=0x268410DE,
    memory_total=24564 * MIB,
    memory_free=24214 * MIB,
    compute_capability=(8, 9),
    power_limit_mw=450_000,
    power_default_limit_mw=450_000,
    power_min_limit_mw=10_000,
    power_max_limit_mw=600_000,
    pcie_gen=1,
    pcie_width=16,
    pcie_max_gen=3,
    pcie_max_width=16,
)

# influxdata/telegraf plugins/inputs/nvidia_smi/testdata/tesla-t4.xml@b27263146617cefe16c0b300107b58b111a7fa57
# Driver 515.105.01, CUDA 11.7 (a cloud instance: placeholder serial as captured).
TESLA_T4 = FakeGPU(
    name="Tesla T4",
    uuid="GPU-d37e67a5-91dd-3774-a5cb-99096249601a",
    serial="0000000000000",
    pci_bus_id="00000000:00:1E.0",
    pci_device_id=0x1EB810DE,
    memory_total=15360 * MIB,
    memory_free=13939 * MIB,
    compute_capability=(7, 5),
    power_limit_mw=70_000,
    power_default_limit_mw=70_000,
    power_min_limit_mw=60_000,
    power_max_limit_mw=70_000,
    pcie_gen=3,
    pcie_width=8,
    pcie_max_gen=3,
    pcie_max_width=16,
)

# utkuozdemir/nvidia_gpu_exporter internal/captures/linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt@e656cd81a180e7e0e7862b53c9acd4c2fb0f590b
# Driver 590.48.01, CUDA 13.1. MIG disabled; `nvidia-smi nvlink -s` lists 18 active links.
# UUID and serial are masked in the capture.
H100_80GB_HBM3 = FakeGPU(
    name="NVIDIA H100 80GB HBM3",
    uuid="GPU-00000000-0000-0000-0000-000000000000",
    serial="0000000000000",
    pci_bus_id="00000000:00:09.0",
    pci_device_id=0x233010DE,
    memory_total=81559 * MIB,
    memory_free=81081 * MIB,
    compute_capability=(9, 0),
    power_limit_mw=700_000,
    power_default_limit_mw=700_000,
    power_min_limit_mw=200_000,
    power_max_limit_mw=700_000,
    pcie_gen=5,
    pcie_width=16,
    pcie_max_gen=5,
    pcie_max_width=16,
    nvlink=(True,) * 18,
    mig_enabled=False,
)

# utkuozdemir/nvidia_gpu_exporter internal/captures/linux-x86_64__nvidia-h200__590.48.01.txt@e656cd81a180e7e0e7862b53c9acd4c2fb0f590b
# Driver 590.48.01, CUDA 13.1. MIG disabled; 18 active NVLink links. UUID and serial masked.
H200 = FakeGPU(
    name="NVIDIA H200",
    uuid="GPU-00000000-0000-0000-0000-000000000000",
    serial="0000000000000",
    pci_bus_id="00000000:83:00.0",
    pci_device_id=0x233510DE,
    memory_total=143771 * MIB,
    memory_free=143158 * MIB,
    compute_capability=(9, 0),
    power_limit_mw=700_000,
    power_default_limit_mw=700_000,
    power_min_limit_mw=200_000,
    power_max_limit_mw=700_000,
    pcie_gen=5,
    pcie_width=16,
    pcie_max_gen=5,
    pcie_max_width=16,
    nvlink=(True,) * 18,
    mig_enabled=False,
)

# influxdata/telegraf plugins/inputs/nvidia_smi/testdata/rtx-3080-v12.xml@b27263146617cefe16c0b300107b58b111a7fa57
# Windows, driver 536.40, CUDA 12.2, driver model WDDM. Power limit raised to 336 W (default 320 W).
RTX_3080_WINDOWS = FakeGPU(
    name="NVIDIA GeForce RTX 3080",
    uuid="GPU-19d6d965-2acc-f646-00f8-4c76979aabb4",
    serial=None,
    pci_bus_id="00000000:04:00.0",
    pci_device_id=0x221610DE,
    memory_total=10240 * MIB,
    memory_free=8938 * MIB,
    compute_capability=(8, 6),
    power_limit_mw=336_000,
    power_default_limit_mw=320_000,
    power_min_limit_mw=100_000,
    power_max_limit_mw=336_000,
    pcie_gen=4,
    pcie_width=16,
    pcie_max_gen=4,
    pcie_max_width=16,
    driver_model=pynvml.NVML_DRIVER_WDDM,
)

# utkuozdemir/nvidia_gpu_exporter internal/captures/linux-x86_64__nvidia-l40s__595.80.txt@e656cd81a180e7e0e7862b53c9acd4c2fb0f590b
# Driver 595.80, CUDA 13.2. "Device does not have or support Nvlink"; MIG mode N/A. Masked ids.
L40S = FakeGPU(
    name="NVIDIA L40S",
    uuid="GPU-00000000-0000-0000-0000-000000000000",
    serial="0000000000000",
    pci_bus_id="00000000:01:00.0",
    pci_device_id=0x26B910DE,
    memory_total=46068 * MIB,
    memory_free=45460 * MIB,
    compute_capability=(8, 9),
    power_limit_mw=350_000,
    power_default_limit_mw=350_000,
    power_min_limit_mw=100_000,
    power_max_limit_mw=350_000,
    pcie_gen=4,
    pcie_width=16,
    pcie_max_gen=4,
    pcie_max_width=16,
)

# utkuozdemir/nvidia_gpu_exporter internal/captures/linux-x86_64__nvidia-geforce-rtx-2080-super__595.71.05.txt@e656cd81a180e7e0e7862b53c9acd4c2fb0f590b
# Driver 595.71.05, CUDA 13.2. Has an NVLink connector but "all links are inActive" (no bridge):
# the link query works and counts 0 active links. The number of links is not in the capture.
RTX_2080_SUPER = FakeGPU(
    name="NVIDIA GeForce RTX 2080 SUPER",
    uuid="GPU-00000000-0000-0000-0000-000000000000",
    serial=None,
    pci_bus_id="00000000:0C:00.0",
    pci_device_id=0x1E8110DE,
    memory_total=8192 * MIB,
    memory_free=7571 * MIB,
    compute_capability=(7, 5),
    power_limit_mw=250_000,
    power_default_limit_mw=250_000,
    power_min_limit_mw=105_000,
    power_max_limit_mw=350_000,
    pcie_gen=1,
    pcie_width=16,
    pcie_max_gen=3,
    pcie_max_width=16,
    nvlink=(False,),
)

ALL = (
    QUADRO_P400,
    A100_SXM4_80GB_MIG,
    RTX_3090,
    RTX_4090,
    TESLA_T4,
    H100_80GB_HBM3,
    H200,
    RTX_3080_WINDOWS,
    L40S,
    RTX_2080_SUPER,
)
