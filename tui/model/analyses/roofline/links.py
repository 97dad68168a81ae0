"""The links copies cross: host-device copies the GPU's host link (PCIe, NVLink-C2C), peer copies its peer links.

A copy between host and device moves its bytes once over the host link, never at HBM speed: a 384 MB pinned H2D copy
at 55 GB/s on an H200 is 86% of PCIe 5.0 x16 (64 GB/s each way), not "2.3% of the 4,800 GB/s". The links of a GPU
come from the GPU table (gpus.toml: host_link, host_gbps, peer_link, peer_gbps), found from the trace's
deviceProperties; a device without them (a --peaks file, an entry that does not say) is given the stated default,
PCIe 4.0 x16, and the roofline says so. Rates are each way, as the vendors' "x GB/s bidirectional" halved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..device_work import direction
from .peaks import Device

PCIE_GBPS = {"3.0": 16.0, "4.0": 32.0, "5.0": 64.0, "6.0": 128.0}  # x16, each way
DEFAULT_HOST = "PCIe 4.0 x16"
HOST_KINDS = frozenset({"H2D", "D2H"})
PEER_KINDS = frozenset({"P2P"})


@dataclass(frozen=True)
class Link:
    """A link and its rate each way (GB/s); default: the device does not say, so DEFAULT_HOST is assumed."""

    name: str
    gbps: float
    default: bool = False


def host_link(device: Device) -> Link:
    """How the GPU reaches the host."""
    if device.host_link:
        rate = device.host_gbps or pcie_gbps(device.host_link)
        if rate:
            return Link(device.host_link, rate)
    return Link(DEFAULT_HOST, PCIE_GBPS["4.0"], default=True)


def peer_link(device: Device) -> Link:
    """How the GPU reaches its peers: its NVLink or Infinity Fabric, else the host link (PCIe peer-to-peer)."""
    if device.peer_link and device.peer_gbps:
        return Link(device.peer_link, device.peer_gbps)
    return host_link(device)


def pcie_gbps(name: str) -> float | None:
    """PCIe x16's rate each way from its generation ("PCIe 5.0 x16": 64 GB/s); scaled by a narrower width."""
    m = re.search(r"PCIe\s*(?:Gen\s*)?(\d)(?:\.0)?(?:\s*x(\d+))?", name, re.IGNORECASE)
    if not m or f"{m.group(1)}.0" not in PCIE_GBPS:
        return None
    width = int(m.group(2) or 16)
    return PCIE_GBPS[f"{m.group(1)}.0"] * width / 16


def link_kind(name: str) -> str:
    """ "host" for a host-device copy, "peer" for a peer copy, "" for anything else (a DtoD copy stays in HBM)."""
    kind = direction(name)
    return "host" if kind in HOST_KINDS else "peer" if kind in PEER_KINDS else ""


def link_of(device: Device, kind: str) -> Link | None:
    return host_link(device) if kind == "host" else peer_link(device) if kind == "peer" else None
