"""Design files (designs/NAME.yaml): a model, a device and the schedule options, in one place.

    name: demo-cnn-ultra96            # default output folder: build/<name>
    model: models/net.onnx            # a path (relative to this file), or a zoo/test-net spec:
    # model: {zoo: intar-mlp, config: default, format: qonnx, seed: 0}
    # model: {testnet: demo_cnn, format: qcdq, seed: 0}
    device: ultra96v2                 # a shipped profile or a YAML file (relative to this file)
    mode: auto                        # auto | dataflow | sequential
    clock: 200                        # MHz (default: the device's)
    resource_cap: 0.8
    weights: auto                     # auto | onchip | offchip
    io: auto                          # the graph's inputs and outputs: auto | onchip | offchip | offchip-inputs | offchip-outputs | offchip:in1,out0
    objective: latency
    seed: 0                           # the seeded random input the golden data is made from
    output: build/demo                # relative to the current folder
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Optional

import yaml

from .errors import HlsgenError

KEYS = {"name", "model", "device", "mode", "clock", "resource_cap", "weights", "objective", "seed", "output",
        "port_bits", "max_segment", "batch", "description", "stages", "io", "max_lanes", "max_beat_lanes"}
MODEL_KEYS = {"zoo", "testnet", "config", "format", "seed", "act_bits", "weight_bits"}


@dataclass
class Design:
    name: str
    path: Path
    model: object                    # Path or a dict spec
    device: str
    options: Dict = field(default_factory=dict)
    seed: int = 0
    output: Optional[str] = None


def load_design(path) -> Design:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise HlsgenError(f"design file {path}: not found") from None
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise HlsgenError(f"design file {path}: not valid YAML ({first})") from None
    if not isinstance(data, dict):
        raise HlsgenError(f"design file {path}: expected a mapping with at least 'model' and 'device' (see designs/README.md)")
    unknown = sorted(set(map(str, data)) - KEYS)
    if unknown:
        raise HlsgenError(f"design file {path}: unknown field {unknown[0]!r}; fields are {', '.join(sorted(KEYS))}")
    for key in ("model", "device"):
        if key not in data:
            raise HlsgenError(f"design file {path}: field {key!r} is missing")
    name = str(data.get("name", path.stem))
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name):
        raise HlsgenError(f"design file {path}: name {name!r} must be letters, digits, '_', '.', '-' (it names a folder)")
    model = data["model"]
    if isinstance(model, str):
        model = (path.parent / model)
    elif isinstance(model, dict):
        bad = sorted(set(map(str, model)) - MODEL_KEYS)
        if bad:
            raise HlsgenError(f"design file {path}: model field {bad[0]!r} is unknown; use {', '.join(sorted(MODEL_KEYS))}")
        if ("zoo" in model) == ("testnet" in model):
            raise HlsgenError(f"design file {path}: model needs exactly one of 'zoo: NAME' or 'testnet: NAME'")
    else:
        raise HlsgenError(f"design file {path}: model must be a path or a mapping like {{zoo: intar-mlp}}")
    device = str(data["device"])
    if device.endswith((".yaml", ".yml")):
        device = str(path.parent / device)
    opts = {}
    for key, typ in (("mode", str), ("clock", float), ("resource_cap", float), ("weights", str), ("objective", str),
                     ("port_bits", int), ("max_segment", int), ("batch", int), ("stages", str), ("io", str), ("max_lanes", int),
                     ("max_beat_lanes", int)):
        if key in data:
            v = data[key]
            if typ is float and isinstance(v, int) and not isinstance(v, bool):
                v = float(v)
            if not isinstance(v, typ) or isinstance(v, bool):
                raise HlsgenError(f"design file {path}: field {key!r} must be "
                                  f"{ {int: 'a whole number', float: 'a number', str: 'a string'}[typ]}, got {v!r}")
            opts[key] = v
    seed = data.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise HlsgenError(f"design file {path}: field 'seed' must be an integer")
    return Design(name=name, path=path, model=model, device=device, options=opts, seed=seed,
                  output=str(data["output"]) if "output" in data else None)


def materialize_model(design: Design, workdir: Path) -> Path:
    """The design's ONNX file: the path itself, or a zoo / test-net export written to workdir."""
    m = design.model
    if isinstance(m, Path):
        if not m.is_file():
            raise HlsgenError(f"design file {design.path}: model {m} not found")
        return m
    try:
        if "testnet" in m:
            from .zoo import testnets
            if m["testnet"] not in testnets.NETS:
                raise HlsgenError(f"design file {design.path}: unknown test net {m['testnet']!r}; "
                                  f"choose one of {', '.join(sorted(testnets.NETS))}")
            return testnets.export(m["testnet"], workdir / "model.onnx", m.get("format", "qonnx"), False,
                                   int(m.get("seed", 0)))
        from .zoo import models
        if m["zoo"] not in models.MODELS:
            raise HlsgenError(f"design file {design.path}: unknown zoo model {m['zoo']!r}; choose one of {', '.join(models.MODELS)}")
        return models.export(m["zoo"], str(m.get("config", "default")), workdir / "model.onnx", m.get("format", "qonnx"),
                             int(m.get("seed", 0)), m.get("act_bits"), m.get("weight_bits"))
    except ImportError as exc:
        raise HlsgenError(f"design file {design.path}: building a zoo model needs torch and brevitas "
                          f"({exc.name} is missing); pip install 'hlsgen[zoo]'") from None
