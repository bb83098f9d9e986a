"""Device profiles: the resources and memories of a target board, from a YAML file.

Profiles shipped with hlsgen live in hlsgen/schedule/devices/NAME.yaml (`hlsgen devices`);
a user may pass the path of their own file instead of a name. Every number carries its source
in the file's `sources` map.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List

import yaml

from ..errors import HlsgenError

DEVICE_DIR = Path(__file__).parent / "devices"
DSP_TYPES = ("DSP48E2", "DSP58")
RESOURCES = ("dsp", "bram18", "uram", "lut", "ff")
PORT_BITS = 512          # a device file's port_bits where it gives none


@dataclass(frozen=True)
class Memory:
    kind: str
    channels: int
    bandwidth_gbs: float
    capacity_gb: float


@dataclass(frozen=True)
class Device:
    name: str
    description: str
    part: str
    family: str
    dsp: int
    dsp_type: str
    bram18: int
    uram: int
    lut: int
    ff: int
    slr: int
    memories: List[Memory]
    clock_mhz: float
    platform: str
    sources: Dict[str, str] = field(default_factory=dict)
    path: str = ""
    # the width of the AXI ports the kernel's off-chip reads and writes and its streams run on
    # (the schedule's port_bits unless --port-bits says otherwise): 512 on Alveo cards, 128 on
    # the Zynq UltraScale+ boards (their PL-to-PS S_AXI_HP ports)
    port_bits: int = PORT_BITS

    def resource(self, kind: str) -> int:
        return getattr(self, kind)

    @property
    def bandwidth_gbs(self) -> float:
        """The fastest off-chip memory: where hlsgen places off-chip tensors and weights."""
        return max(m.bandwidth_gbs for m in self.memories)

    @property
    def main_memory(self) -> Memory:
        return max(self.memories, key=lambda m: m.bandwidth_gbs)

    def summary(self) -> Dict:
        return {"name": self.name, "part": self.part, "dsp": self.dsp, "dsp_type": self.dsp_type,
                "bram18": self.bram18, "uram": self.uram, "lut": self.lut, "ff": self.ff, "slr": self.slr,
                "memories": [m.__dict__ for m in self.memories], "clock_mhz": self.clock_mhz,
                "platform": self.platform, "port_bits": self.port_bits}


def port_bits_ok(bits: int) -> bool:
    """Whether an AXI port of `bits` is one hlsgen builds: a multiple of 8 from 8 to 1024."""
    return bits % 8 == 0 and 8 <= bits <= 1024


def device_names() -> List[str]:
    return sorted(p.stem for p in DEVICE_DIR.glob("*.yaml"))


def _require(d: Dict, key: str, kind, where: str):
    if key not in d:
        raise HlsgenError(f"device file {where}: missing field '{key}'; see hlsgen/schedule/devices/u280.yaml for the format")
    v = d[key]
    if kind is int and not (isinstance(v, int) and not isinstance(v, bool) and v >= 0):
        raise HlsgenError(f"device file {where}: field '{key}' must be a non-negative integer, got {v!r}")
    if kind is float and not (isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0):
        raise HlsgenError(f"device file {where}: field '{key}' must be a positive number, got {v!r}")
    if kind is str and not isinstance(v, str):
        raise HlsgenError(f"device file {where}: field '{key}' must be a string, got {v!r}")
    return v


def parse_device(data, where: str) -> Device:
    if not isinstance(data, dict):
        raise HlsgenError(f"device file {where}: expected a YAML mapping of fields; see hlsgen/schedule/devices/u280.yaml")
    dsp = _require(data, "dsp", dict, where) if isinstance(data.get("dsp"), dict) else None
    if dsp is None:
        raise HlsgenError(f"device file {where}: field 'dsp' must be a mapping {{count: N, type: DSP48E2|DSP58}}")
    count = _require(dsp, "count", int, where + " dsp")
    dsp_type = _require(dsp, "type", str, where + " dsp")
    if dsp_type not in DSP_TYPES:
        raise HlsgenError(f"device file {where}: dsp type {dsp_type!r} is not one of {', '.join(DSP_TYPES)}")
    mems = data.get("memories")
    if not isinstance(mems, list) or not mems:
        raise HlsgenError(f"device file {where}: field 'memories' must be a non-empty list of {{kind, channels, bandwidth_gbs, capacity_gb}}")
    memories = []
    for i, m in enumerate(mems):
        if not isinstance(m, dict):
            raise HlsgenError(f"device file {where}: memories[{i}] must be a mapping")
        memories.append(Memory(kind=str(_require(m, "kind", str, f"{where} memories[{i}]")),
                               channels=_require(m, "channels", int, f"{where} memories[{i}]"),
                               bandwidth_gbs=float(_require(m, "bandwidth_gbs", float, f"{where} memories[{i}]")),
                               capacity_gb=float(_require(m, "capacity_gb", float, f"{where} memories[{i}]"))))
    sources = data.get("sources", {})
    if not isinstance(sources, dict):
        raise HlsgenError(f"device file {where}: field 'sources' must map field names to where each number comes from")
    dev = Device(name=_require(data, "name", str, where), description=str(data.get("description", "")),
                 part=_require(data, "part", str, where), family=str(data.get("family", "")),
                 dsp=count, dsp_type=dsp_type, bram18=_require(data, "bram18", int, where),
                 uram=_require(data, "uram", int, where), lut=_require(data, "lut", int, where),
                 ff=_require(data, "ff", int, where), slr=max(1, _require(data, "slr", int, where)),
                 memories=memories, clock_mhz=float(_require(data, "clock_mhz", float, where)),
                 platform=_require(data, "platform", str, where), sources={str(k): str(v) for k, v in sources.items()},
                 path=where, port_bits=_require(data, "port_bits", int, where) if "port_bits" in data else PORT_BITS)
    if not port_bits_ok(dev.port_bits):
        raise HlsgenError(f"device file {where}: port_bits {dev.port_bits} must be a multiple of 8 from 8 to 1024")
    if dev.dsp == 0 or dev.lut == 0:
        raise HlsgenError(f"device file {where}: a device needs DSPs and LUTs (dsp count {dev.dsp}, lut {dev.lut})")
    return dev


def load_device(name_or_path: str) -> Device:
    """A shipped profile by name (u280, ...) or a user's YAML file by path."""
    if name_or_path in device_names():
        path = DEVICE_DIR / f"{name_or_path}.yaml"
    elif name_or_path.endswith((".yaml", ".yml")) or os.sep in name_or_path:
        path = Path(name_or_path)
        if not path.is_file():
            raise HlsgenError(f"device file {name_or_path}: not found")
    else:
        raise HlsgenError(f"unknown device {name_or_path!r}; choose one of {', '.join(device_names())} or pass a YAML file")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise HlsgenError(f"device file {path}: not valid YAML ({first})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise HlsgenError(f"device file {path}: cannot read ({exc.__class__.__name__})") from None
    return parse_device(data, str(path))
