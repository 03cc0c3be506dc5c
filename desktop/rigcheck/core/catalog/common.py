"""What every catalog record shares: how far to trust it, where a GPU sits, the overlay's variable."""

from __future__ import annotations

from typing import Literal

Confidence = Literal["primary", "secondary", "uncertain"]
Segment = Literal["desktop", "laptop", "workstation", "datacenter", "integrated", "soc"]
#: how a GPU is built into a machine: a PCIe card, an SXM (NVIDIA) or OAM (OCP) module on a server
#: baseboard, part of a system-on-chip (Apple M, Strix Halo, Grace Hopper, MI300A), or soldered into a laptop
FormFactor = Literal["pcie", "sxm", "oam", "soc", "laptop"]
OVERLAY_ENV = "RIGCHECK_CATALOG_OVERLAY"
