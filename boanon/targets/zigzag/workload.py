"""The workload: a slice of conv layers from one of the ONNX models that ship with ZigZag."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

MODELS = ("resnet18", "alexnet", "mobilenetv2")
"""ONNX models under ``zigzag/inputs/workload`` (shapes inferred, weights left out)."""

DEFAULT_LAYERS = {"resnet18": (1, 11), "alexnet": (2, 4), "mobilenetv2": (5, 20, 35)}
"""Conv layers (0-based index among the model's Conv nodes) evaluated by default. For ResNet-18 the
first 3x3 convs of stages 1 and 3: 56x56 pixels x 64 channels and 14x14 x 256, two shapes that
favour different dataflows. Each 3x3 layer costs ZigZag's mapper 6! = 720 loop orders."""


def model_path(model: str) -> Path:
    """The ONNX file of ``model`` inside the installed ZigZag package."""
    import zigzag

    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}; expected one of {', '.join(MODELS)}")
    return Path(zigzag.__file__).parent / "inputs" / "workload" / f"{model}.onnx"


def conv_slice(model: str, layers: Sequence[int]):
    """The ONNX model reduced to the chosen Conv nodes, each read from and written to DRAM.

    Only the nodes are dropped: tensor shapes (``value_info``) stay, which is all ZigZag's ONNX
    parser needs. Returns an ``onnx.ModelProto``.
    """
    import onnx

    proto = onnx.load(str(model_path(model)), load_external_data=False)
    convs = [n for n in proto.graph.node if n.op_type == "Conv"]
    bad = [i for i in layers if not 0 <= i < len(convs)]
    if bad or not layers:
        raise ValueError(f"{model} has Conv layers 0..{len(convs) - 1}; got {list(layers)}")
    chosen = [convs[i] for i in layers]
    del proto.graph.node[:]
    proto.graph.node.extend(chosen)
    return proto
